//! Rolling files under load and under faults: every record exactly once
//! across all files and in per-thread order, retention (with and without
//! gzip), restarts, and rotations that fail (read-only mount, no inode
//! left on a full tmpfs, the directory replaced by a file).
#![cfg(not(miri))] // Miri cannot do file I/O at this scale.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use nowait_core::format::Plain;
use nowait_core::sink::Rolling;
use nowait_core::stats::Stats;
use nowait_core::{Builder, FullPolicy, Level, Logger, Sink};

/// The files of `Rolling::never(dir, "app.log")`, oldest first: `app.log`,
/// `app.log.1`, ... (each possibly `.gz`). Fails on a stray temporary.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = Vec::new();
    for e in fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().into_string().unwrap();
        let stem = name.strip_suffix(".gz").unwrap_or(&name);
        let index = match stem.strip_prefix("app.log") {
            Some("") => 0,
            Some(rest) => match rest.strip_prefix('.').and_then(|n| n.parse().ok()) {
                Some(n) => n,
                None => continue,
            },
            None => continue,
        };
        found.push((index, e.path()));
    }
    found.sort();
    found.into_iter().map(|(_, p)| p).collect()
}

fn read(path: &Path) -> String {
    let bytes = fs::read(path).unwrap();
    if path.extension().is_some_and(|e| e == "gz") {
        let mut s = String::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_string(&mut s)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        s
    } else {
        String::from_utf8(bytes).unwrap()
    }
}

/// Checks the records `t{thread} {seq}` of `files`: each thread's in
/// order without gaps or duplicates from its first one found. Returns the
/// next expected sequence number per thread and the notices.
fn check_records(files: &[PathBuf], threads: usize) -> (Vec<u64>, Vec<String>) {
    let mut next: Vec<Option<u64>> = vec![None; threads];
    let mut notices = Vec::new();
    for path in files {
        let text = read(path);
        assert!(
            text.is_empty() || text.ends_with('\n'),
            "{}: a record split across files",
            path.display()
        );
        for line in text.lines() {
            if line.starts_with("nowait: ") {
                notices.push(line.to_owned());
                continue;
            }
            let (t, seq) = line
                .strip_prefix('t')
                .and_then(|l| l.split_once(' '))
                .unwrap_or_else(|| panic!("{}: bad line {line:?}", path.display()));
            let (t, seq): (usize, u64) = (t.parse().unwrap(), seq.parse().unwrap());
            if let Some(n) = next[t] {
                assert_eq!(
                    seq,
                    n,
                    "{}: thread {t} out of order or duplicated",
                    path.display()
                );
            }
            next[t] = Some(seq + 1);
        }
    }
    (next.into_iter().map(|n| n.unwrap_or(0)).collect(), notices)
}

fn start(rolling: Rolling) -> (Logger, nowait_core::Guard) {
    Builder::new()
        .capacity(4 << 20)
        .full_policy(FullPolicy::Block)
        .format(Plain)
        .sink(Sink::rolling(rolling))
        .build()
        .unwrap()
}

fn log_from_threads(logger: &Logger, threads: usize, per: u64) {
    std::thread::scope(|s| {
        for t in 0..threads {
            let logger = logger.clone();
            s.spawn(move || {
                for i in 0..per {
                    logger.log(Level::Info, &format!("t{t} {i}")).unwrap();
                }
            });
        }
    });
}

/// Waits (bounded) for the housekeeping thread to settle on `want` files.
fn settle(dir: &Path, want: impl Fn(&[PathBuf]) -> bool) -> Vec<PathBuf> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let f = files(dir);
        let tmp = fs::read_dir(dir)
            .unwrap()
            .any(|e| e.unwrap().file_name().to_string_lossy().ends_with(".tmp"));
        if want(&f) && !tmp {
            return f;
        }
        assert!(
            Instant::now() < deadline,
            "housekeeping did not settle: {f:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn four_threads_100k_each_across_many_rotations_exactly_once_in_order() {
    const THREADS: usize = 4;
    const PER: u64 = 100_000;
    const MAX: u64 = 64 << 10;
    let dir = tempfile::tempdir().unwrap();
    let (logger, guard) = start(Rolling::never(dir.path(), "app.log").max_size(MAX));
    log_from_threads(&logger, THREADS, PER);
    drop(guard);
    let stats: Stats = logger.stats();
    let files = files(dir.path());
    assert!(files.len() > 50, "only {} files", files.len());
    for f in &files {
        let len = fs::metadata(f).unwrap().len();
        assert!(len > 0 && len <= MAX, "{}: {len} bytes", f.display());
    }
    let (next, notices) = check_records(&files, THREADS);
    assert_eq!(next, vec![PER; THREADS], "records lost");
    assert!(notices.is_empty(), "{notices:?}");
    let s = &stats.sinks[0];
    assert_eq!(s.records_written, THREADS as u64 * PER);
    assert_eq!(s.rotations, files.len() as u64 - 1);
    assert_eq!(s.rotation_errors, 0);
    assert_eq!(s.dropped(), 0);
}

#[cfg(feature = "gzip")]
#[test]
fn retention_with_gzip_keeps_the_newest_files_compressed_and_complete() {
    const N: u64 = 30_000;
    let dir = tempfile::tempdir().unwrap();
    let (logger, guard) = start(
        Rolling::never(dir.path(), "app.log")
            .max_size(16 << 10)
            .max_log_files(4)
            .compress(true),
    );
    log_from_threads(&logger, 1, N);
    drop(guard);
    let stats = logger.stats();
    assert!(stats.sinks[0].rotations > 10, "{stats:?}");
    let files = settle(dir.path(), |f| {
        f.len() == 4
            && f[..3]
                .iter()
                .all(|p| p.extension().is_some_and(|e| e == "gz"))
    });
    // The newest records, contiguous through the last one: nothing lost in
    // the compressed files, nothing kept beyond the count.
    let (next, notices) = check_records(&files, 1);
    assert_eq!(next, vec![N]);
    assert!(notices.is_empty(), "{notices:?}");
    assert!(
        !files[3].to_string_lossy().ends_with(".gz"),
        "the current file is not compressed"
    );
    assert_eq!(logger.stats().sinks[0].rotation_errors, 0);
}

#[test]
fn retention_without_gzip_and_restart_appends_to_the_newest_file() {
    let dir = tempfile::tempdir().unwrap();
    let rolling = Rolling::never(dir.path(), "app.log")
        .max_size(8 << 10)
        .max_log_files(3);
    // A file of another pattern in the same directory is never touched.
    fs::write(dir.path().join("other.log"), "keep me\n").unwrap();
    let (logger, guard) = start(rolling.clone());
    log_from_threads(&logger, 1, 5_000);
    drop(guard);
    let before = settle(dir.path(), |f| f.len() == 3);
    let newest = before.last().unwrap().clone();
    let len = fs::metadata(&newest).unwrap().len();
    assert!(len < 8 << 10);
    // A new run continues the newest file of the period.
    let (logger2, guard2) = start(rolling);
    logger2.log(Level::Info, "t0 5000").unwrap();
    drop(guard2);
    assert_eq!(logger2.stats().sinks[0].rotations, 0);
    assert!(fs::metadata(&newest).unwrap().len() > len);
    let (next, _) = check_records(&files(dir.path()), 1);
    assert_eq!(next, vec![5_001]);
    assert_eq!(
        fs::read_to_string(dir.path().join("other.log")).unwrap(),
        "keep me\n"
    );
}

#[test]
fn bad_settings_are_build_errors() {
    let dir = tempfile::tempdir().unwrap();
    for (rolling, says) in [
        (Rolling::new(dir.path()), "filename_prefix"),
        (
            Rolling::never(dir.path(), "a").max_log_files(0),
            "max_log_files",
        ),
        (Rolling::never(dir.path(), "a").max_size(0), "max_size"),
        (Rolling::daily(dir.path(), "a/b"), "'/'"),
    ] {
        let err = Builder::new()
            .sink(Sink::rolling(rolling))
            .build()
            .unwrap_err();
        assert!(err.to_string().contains(says), "{err}");
    }
    // A directory that cannot be created: an I/O error naming the sink.
    let file = dir.path().join("file");
    fs::write(&file, "").unwrap();
    let err = Builder::new()
        .sink(Sink::rolling(Rolling::daily(file.join("sub"), "app")))
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("rolling:"), "{err}");
}

// ---------------------------------------------------------------------------
// Rotations that fail
// ---------------------------------------------------------------------------

/// Unmounts on drop (lazily if busy).
struct Mounted(PathBuf);

impl Drop for Mounted {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(&self.0)
            .stderr(Stdio::null())
            .status();
    }
}

/// Runs `mount ARGS... PATH`; `None` (with a message) if it is not allowed.
fn mount(args: &[&str], path: &Path, test: &str) -> Option<Mounted> {
    let out = Command::new("mount").args(args).arg(path).output();
    match out {
        Ok(o) if o.status.success() => Some(Mounted(path.to_owned())),
        other => {
            let why = match other {
                Ok(o) => String::from_utf8_lossy(&o.stderr).trim().to_owned(),
                Err(e) => e.to_string(),
            };
            eprintln!("SKIPPED {test}: cannot mount (needs root or CAP_SYS_ADMIN): {why}");
            None
        }
    }
}

fn log_range(logger: &Logger, range: std::ops::Range<u64>) {
    for i in range {
        logger.log(Level::Info, &format!("t0 {i}")).unwrap();
    }
    logger.flush().unwrap();
}

/// The directory becomes read-only (a read-only bind mount over it): new
/// files cannot be created, the open one still takes writes. Logging goes
/// on into it, the failure is in the file and in the stats, and rotation
/// resumes once the directory is writable again.
#[test]
fn rotation_failing_on_a_read_only_mount_keeps_writing_the_old_file() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    let (logger, guard) = start(Rolling::never(&logs, "app.log").max_size(8 << 10));
    log_range(&logger, 0..1_000);
    let test = "rotation_failing_on_a_read_only_mount_keeps_writing_the_old_file";
    let Some(bind) = mount(&["--bind"], &logs, test) else {
        return;
    };
    if mount(&["-o", "remount,ro,bind"], &logs, test).is_none() {
        return;
    }
    let rotations = logger.stats().sinks[0].rotations;
    log_range(&logger, 1_000..4_000);
    let during = logger.stats();
    assert!(during.sinks[0].rotation_errors >= 1, "{during:?}");
    assert_eq!(during.sinks[0].rotations, rotations, "{during:?}");
    drop(bind);
    // The next try is a second after the failure.
    std::thread::sleep(Duration::from_millis(1_100));
    log_range(&logger, 4_000..6_000);
    drop(guard);
    let stats = logger.stats();
    assert!(stats.sinks[0].rotations > rotations, "{stats:?}");
    let (next, notices) = check_records(&files(&logs), 1);
    assert_eq!(next, vec![6_000], "records lost");
    assert!(
        notices
            .iter()
            .any(|n| n.contains("rotation failed") && n.contains("Read-only file system")),
        "{notices:?}"
    );
    assert!(
        notices.iter().any(|n| n.contains("rolled over to")),
        "{notices:?}"
    );
    assert_eq!(stats.sinks[0].dropped(), 0);
}

/// A 1 MiB tmpfs with 4 inodes: rotations fail for want of an inode, then
/// the disk fills. Every record is written at most once and in order, and
/// the written plus the counted losses are all the records.
#[test]
fn rotation_failing_on_a_full_tmpfs_is_reported_and_nothing_is_lost_silently() {
    let dir = tempfile::tempdir().unwrap();
    let test = "rotation_failing_on_a_full_tmpfs_is_reported_and_nothing_is_lost_silently";
    let Some(_tmpfs) = mount(
        &["-t", "tmpfs", "-o", "size=1m,nr_inodes=4", "tmpfs"],
        dir.path(),
        test,
    ) else {
        return;
    };
    const N: u64 = 60_000;
    let (logger, guard) = Builder::new()
        .format(Plain)
        .full_policy(FullPolicy::Drop)
        .shutdown_timeout(Duration::from_secs(2))
        .sink(Sink::rolling(
            Rolling::never(dir.path(), "app.log").max_size(64 << 10),
        ))
        .build()
        .unwrap();
    for i in 0..N {
        let _ = logger.log(Level::Info, &format!("t0 {i} padding-padding"));
    }
    drop(guard);
    let stats = logger.stats();
    let s = &stats.sinks[0];
    assert!(s.rotation_errors >= 1, "{stats:?}");
    let mut found = 0;
    let mut last: Option<u64> = None;
    let mut notices = Vec::new();
    for f in files(dir.path()) {
        let text = String::from_utf8_lossy(&fs::read(&f).unwrap()).into_owned();
        for line in text.split_inclusive('\n') {
            if line.starts_with("nowait: ") {
                notices.push(line.to_owned());
                continue;
            }
            // A write cut short by the full disk leaves the start of a
            // record (counted as dropped, not written): skip it.
            let Some(seq) = line
                .strip_prefix("t0 ")
                .and_then(|l| l.strip_suffix(" padding-padding\n"))
            else {
                continue;
            };
            let seq: u64 = seq.parse().unwrap();
            assert!(
                last.map_or(true, |l| seq > l),
                "duplicate or out of order at {seq}"
            );
            last = Some(seq);
            found += 1;
        }
    }
    assert!(
        notices
            .iter()
            .any(|n| n.contains("rotation failed") && n.contains("No space left")),
        "{notices:?}"
    );
    eprintln!(
        "ROLLING full tmpfs: {found} written, {} refused at push, {} dropped by the sink, {} rotation errors",
        stats.dropped(),
        s.dropped(),
        s.rotation_errors
    );
    assert_eq!(s.records_written, found, "{stats:?}");
    assert_eq!(found + stats.dropped() + s.dropped(), N, "{stats:?}");
}

/// No mount needed: the directory is removed and a file takes its name.
/// The rotation fails (ENOTDIR), the other sink hears of it, and the
/// counters say so.
// Windows cannot remove a directory while a file in it is open (the file is
// only "delete pending"), so the scenario cannot happen there.
#[cfg(unix)]
#[test]
fn directory_replaced_by_a_file_is_reported_in_the_other_sinks() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    let memory = nowait_testkit::MemoryWriter::default();
    let (logger, guard) = Builder::new()
        .format(Plain)
        .full_policy(FullPolicy::Block)
        .sink(Sink::rolling(
            Rolling::never(&logs, "app.log").max_size(4 << 10),
        ))
        .sink(Sink::writer(memory.clone()))
        .build()
        .unwrap();
    log_range(&logger, 0..100);
    fs::remove_dir_all(&logs).unwrap();
    fs::write(&logs, "not a directory\n").unwrap();
    // Rotations fail at once; the inode check (within a second) fails too.
    log_range(&logger, 100..2_000);
    std::thread::sleep(Duration::from_millis(1_200));
    log_range(&logger, 2_000..2_100);
    drop(guard);
    let stats = logger.stats();
    assert!(stats.sinks[0].rotation_errors >= 2, "{stats:?}");
    let text = memory.text();
    assert!(
        text.contains("cannot reopen") && text.contains("Not a directory"),
        "{text}"
    );
    assert_eq!(stats.sinks[0].records_written, 2_100, "{stats:?}\n{text}");
}

// ---------------------------------------------------------------------------
// A directory others can write
// ---------------------------------------------------------------------------

#[cfg(all(unix, feature = "gzip"))]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    fs::symlink_metadata(path).unwrap().permissions().mode() & 0o777
}

/// A log kept private (`chmod 600`) stays private: the files rotated in
/// after it and the archives of all of them are `0600` too.
#[cfg(all(unix, feature = "gzip"))]
#[test]
fn a_0600_log_rolls_into_0600_files_and_0600_archives() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("app.log");
    fs::write(&first, "").unwrap();
    fs::set_permissions(&first, fs::Permissions::from_mode(0o600)).unwrap();
    let (logger, guard) = start(
        Rolling::never(dir.path(), "app.log")
            .max_size(4 << 10)
            .compress(true),
    );
    log_range(&logger, 0..4_000);
    drop(guard);
    let files = settle(dir.path(), |f| {
        f.len() > 3
            && f[..f.len() - 1]
                .iter()
                .all(|p| p.extension().is_some_and(|e| e == "gz"))
    });
    for f in &files {
        assert_eq!(mode(f), 0o600, "{}", f.display());
    }
    let (next, _) = check_records(&files, 1);
    assert_eq!(next, vec![4_000]);
    assert_eq!(logger.stats().sinks[0].rotation_errors, 0);
}

/// Someone who can write the log directory replaces an old file by a link
/// to a file only the service can read, hoping for a readable archive of
/// it: none is written, the link and its target are left as they are, and
/// the sink says so in its own file and in its counters.
#[cfg(all(unix, feature = "gzip"))]
#[test]
fn a_symlink_among_the_old_files_is_not_archived_and_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let secret = outside.path().join("shadow");
    fs::write(&secret, "root:SECRET:19000::::::\n").unwrap();
    std::os::unix::fs::symlink(&secret, dir.path().join("app.log")).unwrap();
    fs::write(dir.path().join("app.log.1"), "").unwrap();
    let (logger, guard) = start(Rolling::never(dir.path(), "app.log").compress(true));
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut i = 0;
    while logger.stats().sinks[0].rotation_errors == 0 {
        assert!(
            Instant::now() < deadline,
            "never reported; the archive of the secret was written: {}",
            dir.path().join("app.log.gz").exists()
        );
        log_range(&logger, i..i + 1);
        i += 1;
        std::thread::sleep(Duration::from_millis(20));
    }
    log_range(&logger, i..i + 1);
    drop(guard);
    let mut names: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["app.log", "app.log.1"]);
    assert!(fs::symlink_metadata(dir.path().join("app.log"))
        .unwrap()
        .is_symlink());
    assert_eq!(fs::read(&secret).unwrap(), b"root:SECRET:19000::::::\n");
    assert_eq!(logger.stats().sinks[0].rotation_errors, 1);
    let (_, notices) = check_records(&[dir.path().join("app.log.1")], 1);
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(notices[0].contains("symbolic link"), "{notices:?}");
}

/// A sink that keeps no archives at all (`max_total_size(0)`, `max_age`
/// zero) and a link to its current file: after many rotations only the
/// current file remains of its own; a foreign file, a symbolic link named
/// like one of its files, what that link points to, and the sink's own
/// link are all still there.
#[cfg(unix)]
#[test]
fn retention_by_size_and_age_leaves_foreign_files_and_links_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let d = dir.path();
    let target = outside.path().join("target");
    fs::write(&target, "theirs\n").unwrap();
    fs::write(d.join("notes.txt"), "foreign\n").unwrap();
    std::os::unix::fs::symlink(&target, d.join("app.log.500")).unwrap();
    let (logger, guard) = start(
        Rolling::never(d, "app.log")
            .max_size(16)
            .max_total_size(0)
            .max_age(Duration::ZERO)
            .symlink("current"),
    );
    log_range(&logger, 0..100);
    drop(guard);
    let f = settle(d, |f| f.len() == 2);
    assert!(f[1].ends_with("app.log.500"), "{f:?}");
    assert_eq!(fs::read(&target).unwrap(), b"theirs\n");
    assert_eq!(fs::read(d.join("notes.txt")).unwrap(), b"foreign\n");
    let current = fs::read_link(d.join("current")).unwrap();
    assert_eq!(d.join(&current), f[0], "{f:?}");
}

/// `new_file_on_start`: each run writes a file of its own, the next index
/// after the newest the earlier runs left (also after one planted by
/// someone else, which is skipped and left alone); retention counts the
/// earlier runs' files; the link follows the newest run.
#[test]
fn each_run_starts_a_new_file_counted_for_retention_and_linked() {
    let dir = tempfile::tempdir().unwrap();
    let rolling = Rolling::never(dir.path(), "app.log")
        .new_file_on_start(true)
        .max_log_files(3)
        .symlink("current");
    for run in 0..5u64 {
        if run == 3 {
            // A name the next run would take, not the sink's (a link).
            #[cfg(unix)]
            std::os::unix::fs::symlink("/dev/null", dir.path().join("app.log.3")).unwrap();
        }
        let (logger, guard) = start(rolling.clone());
        logger.log(Level::Info, &format!("t0 {run}")).unwrap();
        drop(guard);
        assert_eq!(logger.stats().sinks[0].rotations, 0);
        let newest = dir.path().join(match run {
            0 => "app.log".to_owned(),
            3 if cfg!(unix) => "app.log.4".to_owned(),
            4 if cfg!(unix) => "app.log.5".to_owned(),
            n => format!("app.log.{n}"),
        });
        // (The housekeeping says, once, in the file, that it left the
        // planted link alone.)
        let text = read(&newest);
        let records: Vec<&str> = text.lines().filter(|l| !l.starts_with("nowait:")).collect();
        assert_eq!(records, [format!("t0 {run}")], "run {run}");
        #[cfg(unix)]
        assert_eq!(
            fs::read_link(dir.path().join("current")).unwrap(),
            newest.file_name().unwrap()
        );
    }
    // The three newest runs' files; the planted link is not counted,
    // removed or followed.
    let kept = settle(dir.path(), |f| {
        f.iter().filter(|p| !p.is_symlink()).count() == 3
    });
    let own: Vec<String> = kept
        .iter()
        .filter(|p| !p.is_symlink())
        .map(|p| {
            let text = read(p);
            let first = text.lines().find(|l| !l.starts_with("nowait:"));
            first.unwrap_or("").to_owned()
        })
        .collect();
    assert_eq!(own, ["t0 2", "t0 3", "t0 4"]);
    #[cfg(unix)]
    assert_eq!(
        fs::read_link(dir.path().join("app.log.3")).unwrap(),
        Path::new("/dev/null")
    );
}

/// Without it, a run continues the newest file; with it, a rotation by
/// size within the run goes on from the run's own file.
#[test]
fn a_new_file_on_start_then_rolls_by_size_from_its_own_index() {
    let dir = tempfile::tempdir().unwrap();
    let (logger, guard) = start(Rolling::never(dir.path(), "app.log"));
    logger.log(Level::Info, "t0 0").unwrap();
    drop(guard);
    let (logger, guard) = start(
        Rolling::never(dir.path(), "app.log")
            .new_file_on_start(true)
            .max_size(64),
    );
    for i in 1..20 {
        logger.log(Level::Info, &format!("t0 {i}")).unwrap();
    }
    drop(guard);
    let files = files(dir.path());
    assert_eq!(
        read(&files[0]),
        "t0 0\n",
        "the first run's file is left as it was"
    );
    assert!(files.len() >= 3, "{files:?}");
    assert_eq!(logger.stats().sinks[0].rotations, files.len() as u64 - 2);
    let (next, notices) = check_records(&files, 1);
    assert_eq!(next, vec![20]);
    assert!(notices.is_empty(), "{notices:?}");
}

/// With time rotation the new file is named in the current period, the
/// next index after the newest of the period.
#[test]
fn a_new_file_on_start_takes_the_next_index_of_the_period() {
    let dir = tempfile::tempdir().unwrap();
    let rolling = Rolling::daily(dir.path(), "app")
        .filename_suffix("log")
        .new_file_on_start(true);
    for run in 0..3 {
        let (logger, guard) = start(rolling.clone());
        logger.log(Level::Info, &format!("t0 {run}")).unwrap();
        drop(guard);
    }
    let mut names: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names.len(), 3, "{names:?}");
    let day = &names[0]["app.".len().."app.YYYY-MM-DD".len()];
    assert_eq!(
        names,
        [
            format!("app.{day}.1.log"),
            format!("app.{day}.2.log"),
            format!("app.{day}.log"),
        ]
    );
}
