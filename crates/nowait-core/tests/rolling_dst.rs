//! Rolling files by local time across daylight-saving changes, in
//! America/New_York, Europe/Berlin and Australia/Lord_Howe (a half-hour
//! change), each run in a child process started with `TZ` set: the local
//! offset is read from the process's time zone, which a test must not
//! change under the other tests' feet.
//!
//! The fake clock steps 15 minutes from 3 hours before each change to 25
//! hours after it, one record per step, into an hourly and a daily sink.
//! The expected files were computed independently from the IANA data
//! (Python's `zoneinfo`): a file per stretch of time in which the local
//! period text does not change; a text that comes back gets the next
//! index. So the spring hour that does not exist has no file and does
//! not stall the rotation (`-01` is followed by `-03`), the autumn hour
//! that repeats stays in its hour's file after its first pass, nothing is
//! overwritten, and each day's file starts at local midnight, not an hour
//! off.
#![cfg(all(unix, not(miri), feature = "local-time"))]

use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use nowait_core::format::Plain;
use nowait_core::sink::Rolling;
use nowait_core::{Builder, FullPolicy, Level, Sink};
use nowait_testkit::child::{self, Child};

/// Seconds between records.
const STEP: i64 = 900;
/// Records per case: 28 hours.
const RECORDS: i64 = 28 * 4;

/// (case, zone, first record's Unix time, hourly files, daily files):
/// each file as `name:first-last`, the records it holds.
const CASES: &[(&str, &str, i64, &str, &str)] = &[
    ("new_york_spring", "America/New_York", 1772942400, "app.2026-03-07-23:0-3 app.2026-03-08-00:4-7 app.2026-03-08-01:8-11 app.2026-03-08-03:12-15 app.2026-03-08-04:16-19 app.2026-03-08-05:20-23 app.2026-03-08-06:24-27 app.2026-03-08-07:28-31 app.2026-03-08-08:32-35 app.2026-03-08-09:36-39 app.2026-03-08-10:40-43 app.2026-03-08-11:44-47 app.2026-03-08-12:48-51 app.2026-03-08-13:52-55 app.2026-03-08-14:56-59 app.2026-03-08-15:60-63 app.2026-03-08-16:64-67 app.2026-03-08-17:68-71 app.2026-03-08-18:72-75 app.2026-03-08-19:76-79 app.2026-03-08-20:80-83 app.2026-03-08-21:84-87 app.2026-03-08-22:88-91 app.2026-03-08-23:92-95 app.2026-03-09-00:96-99 app.2026-03-09-01:100-103 app.2026-03-09-02:104-107 app.2026-03-09-03:108-111", "app.2026-03-07:0-3 app.2026-03-08:4-95 app.2026-03-09:96-111"),
    ("new_york_autumn", "America/New_York", 1793502000, "app.2026-10-31-23:0-3 app.2026-11-01-00:4-7 app.2026-11-01-01:8-15 app.2026-11-01-02:16-19 app.2026-11-01-03:20-23 app.2026-11-01-04:24-27 app.2026-11-01-05:28-31 app.2026-11-01-06:32-35 app.2026-11-01-07:36-39 app.2026-11-01-08:40-43 app.2026-11-01-09:44-47 app.2026-11-01-10:48-51 app.2026-11-01-11:52-55 app.2026-11-01-12:56-59 app.2026-11-01-13:60-63 app.2026-11-01-14:64-67 app.2026-11-01-15:68-71 app.2026-11-01-16:72-75 app.2026-11-01-17:76-79 app.2026-11-01-18:80-83 app.2026-11-01-19:84-87 app.2026-11-01-20:88-91 app.2026-11-01-21:92-95 app.2026-11-01-22:96-99 app.2026-11-01-23:100-103 app.2026-11-02-00:104-107 app.2026-11-02-01:108-111", "app.2026-10-31:0-3 app.2026-11-01:4-103 app.2026-11-02:104-111"),
    ("berlin_spring", "Europe/Berlin", 1774735200, "app.2026-03-28-23:0-3 app.2026-03-29-00:4-7 app.2026-03-29-01:8-11 app.2026-03-29-03:12-15 app.2026-03-29-04:16-19 app.2026-03-29-05:20-23 app.2026-03-29-06:24-27 app.2026-03-29-07:28-31 app.2026-03-29-08:32-35 app.2026-03-29-09:36-39 app.2026-03-29-10:40-43 app.2026-03-29-11:44-47 app.2026-03-29-12:48-51 app.2026-03-29-13:52-55 app.2026-03-29-14:56-59 app.2026-03-29-15:60-63 app.2026-03-29-16:64-67 app.2026-03-29-17:68-71 app.2026-03-29-18:72-75 app.2026-03-29-19:76-79 app.2026-03-29-20:80-83 app.2026-03-29-21:84-87 app.2026-03-29-22:88-91 app.2026-03-29-23:92-95 app.2026-03-30-00:96-99 app.2026-03-30-01:100-103 app.2026-03-30-02:104-107 app.2026-03-30-03:108-111", "app.2026-03-28:0-3 app.2026-03-29:4-95 app.2026-03-30:96-111"),
    ("berlin_autumn", "Europe/Berlin", 1792879200, "app.2026-10-25-00:0-3 app.2026-10-25-01:4-7 app.2026-10-25-02:8-15 app.2026-10-25-03:16-19 app.2026-10-25-04:20-23 app.2026-10-25-05:24-27 app.2026-10-25-06:28-31 app.2026-10-25-07:32-35 app.2026-10-25-08:36-39 app.2026-10-25-09:40-43 app.2026-10-25-10:44-47 app.2026-10-25-11:48-51 app.2026-10-25-12:52-55 app.2026-10-25-13:56-59 app.2026-10-25-14:60-63 app.2026-10-25-15:64-67 app.2026-10-25-16:68-71 app.2026-10-25-17:72-75 app.2026-10-25-18:76-79 app.2026-10-25-19:80-83 app.2026-10-25-20:84-87 app.2026-10-25-21:88-91 app.2026-10-25-22:92-95 app.2026-10-25-23:96-99 app.2026-10-26-00:100-103 app.2026-10-26-01:104-107 app.2026-10-26-02:108-111", "app.2026-10-25:0-99 app.2026-10-26:100-111"),
    ("lord_howe_spring", "Australia/Lord_Howe", 1791030600, "app.2026-10-03-23:0-3 app.2026-10-04-00:4-7 app.2026-10-04-01:8-11 app.2026-10-04-02:12-13 app.2026-10-04-03:14-17 app.2026-10-04-04:18-21 app.2026-10-04-05:22-25 app.2026-10-04-06:26-29 app.2026-10-04-07:30-33 app.2026-10-04-08:34-37 app.2026-10-04-09:38-41 app.2026-10-04-10:42-45 app.2026-10-04-11:46-49 app.2026-10-04-12:50-53 app.2026-10-04-13:54-57 app.2026-10-04-14:58-61 app.2026-10-04-15:62-65 app.2026-10-04-16:66-69 app.2026-10-04-17:70-73 app.2026-10-04-18:74-77 app.2026-10-04-19:78-81 app.2026-10-04-20:82-85 app.2026-10-04-21:86-89 app.2026-10-04-22:90-93 app.2026-10-04-23:94-97 app.2026-10-05-00:98-101 app.2026-10-05-01:102-105 app.2026-10-05-02:106-109 app.2026-10-05-03:110-111", "app.2026-10-03:0-3 app.2026-10-04:4-97 app.2026-10-05:98-111"),
    ("lord_howe_autumn", "Australia/Lord_Howe", 1775304000, "app.2026-04-04-23:0-3 app.2026-04-05-00:4-7 app.2026-04-05-01:8-13 app.2026-04-05-02:14-17 app.2026-04-05-03:18-21 app.2026-04-05-04:22-25 app.2026-04-05-05:26-29 app.2026-04-05-06:30-33 app.2026-04-05-07:34-37 app.2026-04-05-08:38-41 app.2026-04-05-09:42-45 app.2026-04-05-10:46-49 app.2026-04-05-11:50-53 app.2026-04-05-12:54-57 app.2026-04-05-13:58-61 app.2026-04-05-14:62-65 app.2026-04-05-15:66-69 app.2026-04-05-16:70-73 app.2026-04-05-17:74-77 app.2026-04-05-18:78-81 app.2026-04-05-19:82-85 app.2026-04-05-20:86-89 app.2026-04-05-21:90-93 app.2026-04-05-22:94-97 app.2026-04-05-23:98-101 app.2026-04-06-00:102-105 app.2026-04-06-01:106-109 app.2026-04-06-02:110-111", "app.2026-04-04:0-3 app.2026-04-05:4-101 app.2026-04-06:102-111"),
];

static NOW: AtomicI64 = AtomicI64::new(0);

fn fake() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(NOW.load(Ordering::Relaxed) as u64)
}

/// The child: records `0..RECORDS`, one per step of the fake clock, into
/// an hourly and a daily sink by local time.
#[test]
fn dst_child() {
    if child::role().is_none() {
        return;
    }
    let var = |k: &str| std::env::var(k).unwrap();
    let dir = var("NOWAIT_DST_DIR");
    let start: i64 = var("NOWAIT_DST_START").parse().unwrap();
    NOW.store(start, Ordering::Relaxed);
    let sink = |rolling: Rolling| Sink::rolling(rolling.local_time(true).clock(fake));
    let (logger, guard) = Builder::new()
        .format(Plain)
        .full_policy(FullPolicy::Block)
        .sink(sink(Rolling::hourly(Path::new(&dir).join("hourly"), "app")))
        .sink(sink(Rolling::daily(Path::new(&dir).join("daily"), "app")))
        .build()
        .unwrap();
    for i in 0..RECORDS {
        NOW.store(start + i * STEP, Ordering::Relaxed);
        logger.log(Level::Info, &i.to_string()).unwrap();
        logger.flush().unwrap();
    }
    drop(guard);
    let stats = logger.stats();
    for s in &stats.sinks {
        assert_eq!(s.rotation_errors, 0, "{stats:?}");
    }
}

/// The files of `dir` as `name:first-last`, oldest first; each file's
/// records consecutive.
fn files(dir: &Path) -> String {
    let mut files: Vec<(i64, i64, String)> = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().into_string().unwrap();
        let text = fs::read_to_string(e.path()).unwrap();
        let records: Vec<i64> = text.lines().filter_map(|l| l.parse().ok()).collect();
        let (first, last) = (records[0], *records.last().unwrap());
        assert_eq!(
            records,
            (first..=last).collect::<Vec<_>>(),
            "{name}: records out of order or missing"
        );
        files.push((first, last, name));
    }
    files.sort();
    let listed: Vec<String> = files
        .iter()
        .map(|(a, b, name)| format!("{name}:{a}-{b}"))
        .collect();
    listed.join(" ")
}

fn run(case: &str) {
    let &(_, zone, start, hourly, daily) = CASES.iter().find(|c| c.0 == case).unwrap();
    if !Path::new("/usr/share/zoneinfo").join(zone).exists() {
        eprintln!("SKIPPED: no /usr/share/zoneinfo/{zone}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let out = Child::new("dst_child", case)
        .env("TZ", zone)
        .env("NOWAIT_DST_DIR", dir.path())
        .env("NOWAIT_DST_START", start.to_string())
        .capture_stderr()
        .run();
    assert!(out.status.success(), "{}", out.stderr);
    assert_eq!(files(&dir.path().join("hourly")), hourly, "hourly, {zone}");
    assert_eq!(files(&dir.path().join("daily")), daily, "daily, {zone}");
}

#[test]
fn new_york_spring_forward() {
    run("new_york_spring");
}

#[test]
fn new_york_fall_back() {
    run("new_york_autumn");
}

#[test]
fn berlin_spring_forward() {
    run("berlin_spring");
}

#[test]
fn berlin_fall_back() {
    run("berlin_autumn");
}

#[test]
fn lord_howe_half_hour_forward() {
    run("lord_howe_spring");
}

#[test]
fn lord_howe_half_hour_back() {
    run("lord_howe_autumn");
}

/// A `TZ` naming a file of garbage (the environment is not ours): the
/// sink neither panics nor stops; it rolls by whatever offset the zone
/// reader settles on (UTC here).
#[test]
fn a_garbage_time_zone_file_is_survived() {
    let dir = tempfile::tempdir().unwrap();
    let tz = dir.path().join("zone");
    let mut junk = b"TZif2".to_vec();
    junk.extend((0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8));
    fs::write(&tz, junk).unwrap();
    let out = Child::new("dst_child", "garbage")
        .env("TZ", format!(":{}", tz.display()))
        .env("NOWAIT_DST_DIR", dir.path())
        .env("NOWAIT_DST_START", "1772942400")
        .capture_stderr()
        .run();
    assert!(out.status.success(), "{}", out.stderr);
    let daily = files(&dir.path().join("daily"));
    assert!(daily.starts_with("app.2026-03-08:0-"), "{daily}");
}
