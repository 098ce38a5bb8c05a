//! A crash on Windows: a child process logs 10,000 records,
//! then writes through a null pointer. The top-level exception filter
//! drains the ring before the process ends with the exception's code:
//! every record is in the file, and the last line names the exception.
#![cfg(all(windows, not(miri)))] // Miri cannot spawn processes.

use std::time::{Duration, Instant};

use nowait_testkit::child::{self, Child};

use nowait_core::format::Plain;
use nowait_core::{Builder, FullPolicy, Level, Sink};

const N: usize = 10_000;

#[test]
fn child_entry() {
    if !child::is_child() {
        return;
    }
    let path = std::env::var_os("NOWAIT_CRASH_FILE").unwrap();
    let (logger, guard) = Builder::new()
        .format(Plain)
        .full_policy(FullPolicy::Block)
        .catch_panics(false)
        .sink(Sink::file(path))
        .build()
        .unwrap();
    for i in 0..N {
        logger.log(Level::Info, &format!("line {i}")).unwrap();
    }
    std::mem::forget(guard);
    // SAFETY: none: the crash is the point.
    unsafe { std::ptr::write_volatile(std::ptr::null_mut::<u64>(), 1) };
    unreachable!("the crash did not happen");
}

#[test]
fn an_access_violation_drains_the_ring_then_ends_the_process() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("crash.log");
    let start = Instant::now();
    let status = Child::new("child_entry", "access-violation")
        .env("NOWAIT_CRASH_FILE", &file)
        .timeout(Duration::from_secs(60))
        .spawn()
        .wait();
    // The process ends with the exception's code, as without nowait.
    assert_eq!(status.code(), Some(0xC000_0005_u32 as i32), "{status:?}");
    let text = std::fs::read_to_string(&file).unwrap();
    let records: Vec<&str> = text.lines().filter(|l| l.contains("line ")).collect();
    assert_eq!(records.len(), N, "records on disk");
    for (i, l) in records.iter().enumerate() {
        assert!(l.ends_with(&format!("line {i}")), "{l}");
    }
    let last = text.lines().last().unwrap_or("");
    assert!(
        last.contains("fatal signal EXCEPTION_ACCESS_VIOLATION on thread '"),
        "{last}"
    );
    assert!(last.ends_with(" 0 lost"), "{last}");
    eprintln!(
        "CRASH windows access violation: {N} of {N} on disk, {status:?}, {:?}; {last}",
        start.elapsed()
    );
}
