//! The crash-durable ring on Windows: a child process logs
//! 10,000 records into a logger built with `crash_durable` and ends at
//! once with `std::process::abort` (`__fastfail`: no handler runs, as with
//! `TerminateProcess`). The next `build()` with the same path writes what
//! it had accepted and not written: every record exactly once, and a
//! second recovery writes nothing. (The Linux suite, with SIGKILL at 200
//! random points: `tests/durable.rs`.)
#![cfg(all(windows, not(miri)))] // Miri cannot spawn processes.

use std::collections::BTreeMap;
use std::path::Path;

use nowait_testkit::child::{self, Child};

use nowait_core::format::Plain;
use nowait_core::{Builder, FullPolicy, Level, Sink};

const N: u64 = 10_000;

fn builder(log: &Path, ring: &Path) -> Builder {
    Builder::new()
        .format(Plain)
        .full_policy(FullPolicy::Block)
        .catch_panics(false)
        .drain_on_crash(false)
        .sink(Sink::file(log))
        .crash_durable(ring)
}

#[test]
fn child_entry() {
    if !child::is_child() {
        return;
    }
    let log = std::env::var_os("NOWAIT_LOG").unwrap();
    let ring = std::env::var_os("NOWAIT_RING").unwrap();
    let (logger, guard) = builder(log.as_ref(), ring.as_ref()).build().unwrap();
    for i in 0..N {
        logger.log(Level::Info, &format!("line {i}")).unwrap();
    }
    std::mem::forget(guard);
    std::process::abort();
}

fn read_log(log: &Path) -> (BTreeMap<u64, u32>, Vec<String>) {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let (mut seen, mut other) = (BTreeMap::new(), Vec::new());
    for line in text.lines() {
        match line
            .rsplit_once("line ")
            .and_then(|(_, n)| n.parse::<u64>().ok())
        {
            Some(n) => *seen.entry(n).or_insert(0) += 1,
            None => other.push(line.to_owned()),
        }
    }
    (seen, other)
}

#[test]
fn an_abrupt_end_loses_nothing_accepted() {
    let dir = tempfile::tempdir().unwrap();
    let (log, ring) = (dir.path().join("app.log"), dir.path().join("app.nowait"));
    let status = Child::new("child_entry", "abort")
        .env("NOWAIT_LOG", &log)
        .env("NOWAIT_RING", &ring)
        .spawn()
        .wait();
    assert!(!status.success(), "{status:?}");
    let (before, _) = read_log(&log);
    let (logger, guard) = builder(&log, &ring).build().unwrap();
    drop((logger, guard));
    let (after, notices) = read_log(&log);
    eprintln!(
        "windows: {} of {N} on disk after the abrupt end, {} after recovery; {notices:?}",
        before.len(),
        after.len()
    );
    assert_eq!(after.len() as u64, N, "{notices:?}");
    assert!(after.values().all(|&c| c == 1), "a record written twice");
    if (before.len() as u64) < N {
        assert!(
            notices.iter().any(|l| l.contains("written by pid")),
            "{notices:?}"
        );
    }
    let (logger, guard) = builder(&log, &ring).build().unwrap();
    drop((logger, guard));
    assert_eq!(read_log(&log).0, after, "the second recovery wrote again");
}

#[test]
fn a_path_in_use_by_a_live_logger_is_a_build_error() {
    let dir = tempfile::tempdir().unwrap();
    let (log, ring) = (dir.path().join("a.log"), dir.path().join("app.nowait"));
    let (_logger, guard) = builder(&log, &ring).build().unwrap();
    let err = builder(&log, &ring).build().unwrap_err();
    assert!(err.to_string().contains("crash-durable"), "{err}");
    drop(guard);
}
