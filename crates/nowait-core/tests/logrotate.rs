//! A real `logrotate` rotating the file of a process that logs without a
//! pause, several times: rename (`create`) mode with `postrotate kill -HUP`
//! ([`Builder::reopen_on_sighup`]), rename mode with no signal (the
//! writer's own check notices the rename within a second), and
//! `copytruncate`. The logging process is this test binary re-run as a
//! child. Skipped (with a message) where logrotate is not installed.
#![cfg(not(miri))]
// Miri cannot spawn processes.
// logrotate and SIGHUP are Unix's; Windows renames an open log file itself
// (`tests/rolling.rs`, `renamed_while_open_...`).
#![cfg(unix)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use nowait_testkit::child::{self, Child};

use nowait_core::format::Plain;
use nowait_core::{Builder, FullPolicy, Level, Sink};

/// Runs in the child only: logs `seq N` until the stop file appears, then
/// prints how many it logged.
#[test]
fn child_entry() {
    if !child::is_child() {
        return;
    }
    let path = PathBuf::from(std::env::var_os("NOWAIT_LOG").unwrap());
    let stop = PathBuf::from(std::env::var("NOWAIT_STOP").unwrap());
    let hup = std::env::var("NOWAIT_HUP").is_ok_and(|v| v == "1");
    let builder = Builder::new()
        .format(Plain)
        .full_policy(FullPolicy::Block)
        .sink(Sink::file(&path));
    #[cfg(feature = "signals")]
    let builder = builder.reopen_on_sighup(hup);
    #[cfg(not(feature = "signals"))]
    assert!(!hup);
    let (logger, guard) = builder.build().unwrap();
    std::fs::write(stop.with_file_name("ready"), "").unwrap();
    let mut n: u64 = 0;
    loop {
        for _ in 0..50 {
            logger.log(Level::Info, &format!("seq {n}")).unwrap();
            n += 1;
        }
        std::thread::sleep(Duration::from_millis(1));
        if n % 1000 == 0 && stop.exists() {
            break;
        }
    }
    drop(guard);
    let s = &logger.stats().sinks[0];
    let report = format!(
        "count {n} written {} dropped {} errors {}\n",
        s.records_written,
        s.dropped(),
        s.write_errors
    );
    std::fs::write(stop.with_file_name("count"), report).unwrap();
}

fn logrotate_missing() -> bool {
    match Command::new("logrotate").arg("--version").output() {
        Ok(o) if o.status.success() => false,
        _ => {
            eprintln!(
                "SKIPPED logrotate tests: logrotate is not installed \
                 (apt-get install logrotate)"
            );
            true
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    /// `create` + `postrotate kill -HUP`.
    RenameHup,
    /// `create`, no signal: the writer's inode check.
    RenameCheck,
    /// `copytruncate`.
    CopyTruncate,
}

struct Outcome {
    /// Records the child logged (all written: its stats say so).
    logged: u64,
    /// Every `seq` found, in file order (oldest file first).
    found: Vec<u64>,
    /// Lines that are not whole records.
    bad: Vec<String>,
    files: usize,
}

const ROTATIONS: usize = 5;

fn run(mode: Mode) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("app.log");
    let stop = dir.path().join("stop");
    let mut child = Child::new("child_entry", "logger")
        .env("NOWAIT_LOG", &log)
        .env("NOWAIT_STOP", &stop)
        .env(
            "NOWAIT_HUP",
            if mode == Mode::RenameHup { "1" } else { "0" },
        )
        .timeout(Duration::from_secs(20))
        .spawn();
    // The child is ready (its SIGHUP handler installed) once it says so.
    let deadline = Instant::now() + Duration::from_secs(20);
    while !dir.path().join("ready").exists() {
        if Instant::now() > deadline {
            child.kill();
            panic!("the child never started");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let how = match mode {
        Mode::RenameHup => format!(
            "    create 0644\n    postrotate\n        kill -HUP {}\n    endscript\n",
            child.id()
        ),
        Mode::RenameCheck => "    create 0644\n".to_owned(),
        Mode::CopyTruncate => "    copytruncate\n".to_owned(),
    };
    let conf = dir.path().join("logrotate.conf");
    std::fs::write(
        &conf,
        format!(
            "{} {{\n    rotate 100\n    missingok\n{how}}}\n",
            log.display()
        ),
    )
    .unwrap();
    let state = dir.path().join("state");
    for _ in 0..ROTATIONS {
        std::thread::sleep(Duration::from_millis(150));
        let r = Command::new("logrotate")
            .arg("-f")
            .arg("-s")
            .arg(&state)
            .arg(&conf)
            .output()
            .unwrap();
        if !r.status.success() {
            child.kill();
            panic!("logrotate failed: {}", String::from_utf8_lossy(&r.stderr));
        }
    }
    // Rename without a signal: give the writer's check (once a second)
    // time to find the last rename while the child still logs.
    let settle = if mode == Mode::RenameCheck {
        1_200
    } else {
        150
    };
    std::thread::sleep(Duration::from_millis(settle));
    std::fs::write(&stop, "").unwrap();
    let status = child.wait();
    assert!(status.success(), "{status:?}");
    let rest = std::fs::read_to_string(dir.path().join("count")).unwrap();
    let counts: Vec<u64> = rest
        .lines()
        .find_map(|l| l.strip_prefix("count "))
        .unwrap_or_else(|| panic!("no count in {rest:?}"))
        .split(' ')
        .filter_map(|w| w.parse().ok())
        .collect();
    let (logged, written, dropped) = (counts[0], counts[1], counts[2]);
    assert_eq!((written, dropped), (logged, 0), "{rest}");
    read_back(dir.path(), &log, logged)
}

/// Reads `app.log.N` (oldest, highest N) down to `app.log.1`, then `app.log`.
fn read_back(dir: &Path, log: &Path, logged: u64) -> Outcome {
    let mut paths: Vec<(u32, PathBuf)> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let e = e.unwrap();
            let name = e.file_name().into_string().ok()?;
            let n: u32 = name.strip_prefix("app.log.")?.parse().ok()?;
            Some((n, e.path()))
        })
        .collect();
    paths.sort_by_key(|p| std::cmp::Reverse(p.0));
    let mut files: Vec<PathBuf> = paths.into_iter().map(|(_, p)| p).collect();
    files.push(log.to_owned());
    let mut found = Vec::new();
    let mut bad = Vec::new();
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        assert!(!bytes.contains(&0), "{}: NUL bytes", f.display());
        let text = String::from_utf8(bytes).unwrap();
        for line in text.split_inclusive('\n') {
            match line
                .strip_prefix("seq ")
                .and_then(|l| l.strip_suffix('\n'))
                .and_then(|n| n.parse().ok())
            {
                Some(n) => found.push(n),
                None => bad.push(line.to_owned()),
            }
        }
    }
    Outcome {
        logged,
        found,
        bad,
        files: files.len(),
    }
}

/// Asserts no record twice and all in order; returns how many are missing.
fn no_duplicates_in_order(o: &Outcome) -> u64 {
    for w in o.found.windows(2) {
        assert!(
            w[0] < w[1],
            "duplicated or out of order: {} then {}",
            w[0],
            w[1]
        );
    }
    assert!(o.found.last().is_some_and(|&l| l < o.logged));
    o.logged - o.found.len() as u64
}

fn exactly_once(mode: Mode) {
    let o = run(mode);
    assert_eq!(o.files, ROTATIONS + 1);
    assert!(o.bad.is_empty(), "{:?}", o.bad);
    let lost = no_duplicates_in_order(&o);
    assert_eq!(lost, 0, "{mode:?}: {lost} of {} records lost", o.logged);
    eprintln!(
        "LOGROTATE {mode:?}: {} records across {} files, each exactly once",
        o.logged, o.files
    );
}

#[cfg(feature = "signals")]
#[test]
fn logrotate_rename_with_sighup_loses_and_duplicates_nothing() {
    if logrotate_missing() {
        return;
    }
    exactly_once(Mode::RenameHup);
}

#[test]
fn logrotate_rename_without_signal_is_noticed_and_loses_nothing() {
    if logrotate_missing() {
        return;
    }
    exactly_once(Mode::RenameCheck);
}

/// copytruncate has a window: what is written between logrotate's copy and
/// its truncation is lost (logrotate(8)). Nothing is duplicated, no NUL
/// bytes appear (writes are `O_APPEND`), and the loss is measured.
#[test]
fn logrotate_copytruncate_duplicates_nothing_and_the_loss_is_measured() {
    if logrotate_missing() {
        return;
    }
    let o = run(Mode::CopyTruncate);
    assert_eq!(o.files, ROTATIONS + 1);
    let lost = no_duplicates_in_order(&o);
    eprintln!(
        "LOGROTATE CopyTruncate: {} records, {lost} lost in the copy-to-truncate window \
         over {ROTATIONS} rotations ({:.3} %), {} partial lines: {:?}",
        o.logged,
        lost as f64 * 100.0 / o.logged as f64,
        o.bad.len(),
        o.bad
    );
    // A partial line can only be the end of a copy (a write in flight while
    // logrotate read the file).
    assert!(o.bad.len() <= ROTATIONS, "{:?}", o.bad);
    assert!(o.bad.iter().all(|l| !l.ends_with('\n')), "{:?}", o.bad);
}
