//! A crash with the `tracing` front end: a child process logs
//! 10,000 events through `NowaitLayer`, pinned to one CPU so that the
//! writer has written none of them, then writes through a null pointer.
//! Every event is on disk, the last line names the signal, and the child
//! dies of SIGSEGV. (The engine's own cases: nowait-core's `tests/crash.rs`.)
#![cfg(all(unix, not(miri)))] // fatal signals are Unix's; Miri cannot spawn processes.

use std::os::unix::process::ExitStatusExt;
use std::time::Duration;

use nowait_testkit::child::{self, Child};

use nowait_core::format::Text;
use nowait_core::{Builder, FullPolicy, Sink};
use tracing_subscriber::prelude::*;

const N: usize = 10_000;

#[test]
fn child_entry() {
    if !child::is_child() {
        return;
    }
    let path = std::env::var_os("NOWAIT_CRASH_FILE").unwrap();
    let (logger, guard) = Builder::new()
        .format(Text::new().with_ansi(false))
        .full_policy(FullPolicy::Block)
        .catch_panics(false)
        .sink(Sink::file(&path))
        .build()
        .unwrap();
    tracing_subscriber::registry()
        .with(nowait_tracing::NowaitLayer::new(logger))
        .init();
    #[cfg(target_os = "linux")]
    nowait_testkit::pin_to_cpu0();
    let span = tracing::info_span!("request", id = 7u64);
    let _e = span.enter();
    for i in 0..N {
        tracing::info!(status = 200u16, "line {}", i);
    }
    std::mem::forget(guard);
    // SAFETY: none: the crash is the point.
    unsafe { std::ptr::write_volatile(std::ptr::null_mut::<u64>(), 1) };
    unreachable!("the crash did not happen");
}

#[test]
fn a_segfault_after_logging_through_the_layer_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("crash.log");
    let status = Child::new("child_entry", "segfault")
        .env("NOWAIT_CRASH_FILE", &file)
        .timeout(Duration::from_secs(60))
        .spawn()
        .wait();
    assert_eq!(status.signal(), Some(libc::SIGSEGV), "{status:?}");
    let text = std::fs::read_to_string(&file).unwrap();
    let records: Vec<&str> = text.lines().filter(|l| l.contains("line ")).collect();
    assert_eq!(records.len(), N);
    for (i, l) in records.iter().enumerate() {
        assert!(l.contains(&format!("line {i} status=200")), "{l}");
        assert!(l.contains("request{id=7}"), "{l}");
    }
    let last = text.lines().last().unwrap();
    assert!(last.contains("fatal signal SIGSEGV on thread '"), "{last}");
    assert!(last.ends_with(" 0 lost"), "{last}");
}
