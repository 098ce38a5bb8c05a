//! The crash-durable ring with the `tracing` front end: a child
//! process logs events with fields inside a span through `NowaitLayer`
//! into a logger built with `crash_durable`, and dies of SIGKILL (no
//! handler runs). The next `build()` with the same path, in this process,
//! writes every event the child accepted, exactly once, with its span,
//! fields and call-site names decoded from the file's catalog, whatever
//! format the recovering logger uses. (The engine's own cases, with 200
//! seeded kills: nowait-core's `tests/durable.rs`.)
#![cfg(all(target_os = "linux", not(miri)))] // SIGKILL, sched_setaffinity; Miri cannot spawn.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::time::Duration;

use nowait_testkit::child::{self, Child};

use nowait_core::format::{Json, Text};
use nowait_core::{Builder, FullPolicy, Sink};
use tracing_subscriber::prelude::*;

fn builder(log: &Path, ring: &Path, json: bool) -> Builder {
    let b = Builder::new()
        .full_policy(FullPolicy::Block)
        .catch_panics(false)
        .drain_on_crash(false)
        .sink(Sink::file(log))
        .crash_durable(ring);
    if json {
        b.format(Json::new())
    } else {
        b.format(Text::new().with_ansi(false))
    }
}

#[test]
fn child_entry() {
    let Some(mode) = child::role() else {
        return;
    };
    let log = std::env::var_os("NOWAIT_LOG").unwrap();
    let ring = std::env::var_os("NOWAIT_RING").unwrap();
    if mode == "timeout" {
        timeout_child(log.as_ref(), ring.as_ref());
    }
    let (logger, guard) = builder(log.as_ref(), ring.as_ref(), false).build().unwrap();
    tracing_subscriber::registry()
        .with(nowait_tracing::NowaitLayer::new(logger))
        .init();
    if mode == "pinned" {
        // One CPU: the writer thread has had no chance to run when the
        // kill comes, as on a loaded machine.
        nowait_testkit::pin_to_cpu0();
    }
    let count: u64 = if mode == "pinned" { 10_000 } else { 2_000_000 };
    let mut out = std::io::stdout().lock();
    let span = tracing::info_span!("request", id = 7u64);
    let _e = span.enter();
    for i in 0..count {
        tracing::info!(status = 200u16, user = "ann", "line {}", i);
        if i % 256 == 0 || i + 1 == count {
            writeln!(out, "acked {i}").unwrap();
            out.flush().unwrap();
        }
    }
    std::mem::forget(guard);
    // SAFETY: sends SIGKILL to this process; nothing runs after it.
    unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
    std::thread::sleep(Duration::from_secs(60));
}

/// A sink that never returns from its first write: the writer is stuck.
struct Stuck;

impl Write for Stuck {
    fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The child of [`block_timeout_drops_through_the_layer_are_announced_after_a_sigkill`]:
/// events through the layer into a small ring whose writer is stuck in a
/// sink, under `FullPolicy::BlockTimeout`, so that pushes time out
/// (counted, never reported by the writer); says how many, then dies.
fn timeout_child(log: &Path, ring: &Path) -> ! {
    let (logger, guard) = builder(log, ring, false)
        .capacity(16 << 10)
        .full_policy(FullPolicy::BlockTimeout(Duration::from_millis(1)))
        .sink(Sink::writer(Stuck))
        .build()
        .unwrap();
    tracing_subscriber::registry()
        .with(nowait_tracing::NowaitLayer::new(logger.clone()))
        .init();
    let span = tracing::info_span!("request", id = 7u64);
    let _e = span.enter();
    for i in 0..3_000u64 {
        tracing::info!(status = 200u16, user = "ann", "line {}", i);
    }
    let mut out = std::io::stdout().lock();
    writeln!(out, "\ntimeouts {}", logger.stats().dropped_timeout).unwrap();
    out.flush().unwrap();
    std::mem::forget(guard);
    // SAFETY: sends SIGKILL to this process; nothing runs after it.
    unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
    std::thread::sleep(Duration::from_secs(60));
    unreachable!("killed")
}

/// Runs the child; returns the last record it said was accepted.
fn run(mode: &str, log: &Path, ring: &Path, kill_after: Option<Duration>) -> Option<u64> {
    let out = Child::new("child_entry", mode)
        .env("NOWAIT_LOG", log)
        .env("NOWAIT_RING", ring)
        .capture_stdout()
        .kill_after(kill_after)
        .spawn()
        .output();
    assert_eq!(out.status.signal(), Some(libc::SIGKILL), "{:?}", out.status);
    child::last_number(&out.stdout, "acked ")
}

fn recover(log: &Path, ring: &Path, json: bool) {
    let (logger, guard) = builder(log, ring, json).build().unwrap();
    drop((logger, guard));
}

/// Each "line N" event with how often it appears, checking that every one
/// carries its span, fields and target; and the other lines. Every line
/// must be whole (end with a newline).
fn read_log(log: &Path) -> (BTreeMap<u64, u32>, Vec<String>) {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    assert!(
        text.is_empty() || text.ends_with('\n'),
        "a torn last line: {:?}",
        &text[text.len().saturating_sub(200)..]
    );
    lines_of(&text)
}

/// [`read_log`] of a file a SIGKILL may have cut in the middle of a write,
/// before recovery completes it: the torn end, if any, is left out.
fn read_log_before_recovery(log: &Path) -> (BTreeMap<u64, u32>, Vec<String>) {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let whole = text.rfind('\n').map_or("", |end| &text[..=end]);
    lines_of(whole)
}

fn lines_of(text: &str) -> (BTreeMap<u64, u32>, Vec<String>) {
    let (mut seen, mut other) = (BTreeMap::new(), Vec::new());
    for line in text.lines() {
        let Some((_, rest)) = line.split_once("line ") else {
            other.push(line.to_owned());
            continue;
        };
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let n: u64 = digits.parse().unwrap_or_else(|_| panic!("{line}"));
        *seen.entry(n).or_insert(0) += 1;
        if line.starts_with('{') {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            assert_eq!(v["fields"]["status"], 200, "{line}");
            assert_eq!(v["fields"]["user"], "ann", "{line}");
            assert_eq!(v["span"]["name"], "request", "{line}");
            assert_eq!(v["span"]["id"], 7, "{line}");
            assert_eq!(v["target"], "durable", "{line}");
        } else {
            assert!(line.contains("status=200 user=\"ann\""), "{line}");
            assert!(line.contains("request{id=7}"), "{line}");
            assert!(line.contains(" durable:"), "{line}");
        }
    }
    (seen, other)
}

fn check(seen: &BTreeMap<u64, u32>, acked: Option<u64>, what: &str) {
    assert!(
        seen.values().all(|&c| c == 1),
        "{what}: an event written twice"
    );
    let n = seen.len() as u64;
    if let Some(last) = seen.keys().next_back() {
        assert_eq!(*last + 1, n, "{what}: a gap in 0..={last}");
    }
    if let Some(acked) = acked {
        assert!(n > acked, "{what}: accepted up to {acked}, {n} in the log");
    }
}

#[test]
fn sigkill_after_logging_through_the_layer_loses_nothing() {
    for json in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let (log, ring) = (dir.path().join("app.log"), dir.path().join("ring"));
        let acked = run("pinned", &log, &ring, None);
        assert_eq!(acked, Some(9_999));
        let (before, _) = read_log_before_recovery(&log);
        recover(&log, &ring, json);
        let (after, other) = read_log(&log);
        eprintln!(
            "tracing, recovered as {}: {} of 10000 on disk after SIGKILL, {} after recovery; {other:?}",
            if json { "JSON" } else { "text" },
            before.len(),
            after.len()
        );
        check(&after, acked, "pinned");
        assert_eq!(after.len(), 10_000);
        if before.len() < 10_000 {
            assert!(
                other.iter().any(|l| l.contains("written by pid")),
                "{other:?}"
            );
        }
        recover(&log, &ring, !json);
        assert_eq!(read_log(&log).0, after, "the second recovery wrote again");
    }
}

#[test]
fn sigkill_while_logging_through_the_layer_each_event_once() {
    let dir = tempfile::tempdir().unwrap();
    for seed in 0..20u64 {
        let (log, ring) = (
            dir.path().join(format!("{seed}.log")),
            dir.path().join(format!("{seed}.ring")),
        );
        let delay = Duration::from_micros(10_000 + seed * 3_700);
        let acked = run("free", &log, &ring, Some(delay));
        recover(&log, &ring, seed % 2 == 1);
        let (after, other) = read_log(&log);
        check(&after, acked, &format!("run {seed}: {other:?}"));
        recover(&log, &ring, seed % 2 == 0);
        assert_eq!(read_log(&log).0, after, "run {seed}: written again");
    }
}

/// Events the layer dropped under `FullPolicy::BlockTimeout` while the
/// writer was stuck (so it never reported them), then a SIGKILL: the next
/// start announces exactly how many, once, and has every event the child
/// accepted.
#[test]
fn block_timeout_drops_through_the_layer_are_announced_after_a_sigkill() {
    let dir = tempfile::tempdir().unwrap();
    let (log, ring) = (dir.path().join("app.log"), dir.path().join("ring"));
    let out = Child::new("child_entry", "timeout")
        .env("NOWAIT_LOG", &log)
        .env("NOWAIT_RING", &ring)
        .capture_stdout()
        .spawn()
        .output();
    assert_eq!(out.status.signal(), Some(libc::SIGKILL), "{:?}", out.status);
    let dropped = child::last_number(&out.stdout, "timeouts ")
        .unwrap_or_else(|| panic!("the child said {:?}", out.stdout));
    assert!(dropped > 0, "{}", out.stdout);
    recover(&log, &ring, false);
    let (seen, other) = read_log(&log);
    let announced: Vec<&String> = other
        .iter()
        .filter(|l| l.contains("ring full for the whole block timeout"))
        .collect();
    assert_eq!(announced.len(), 1, "{other:?}");
    assert!(
        announced[0].contains(&format!("{dropped} records dropped")),
        "{dropped}: {other:?}"
    );
    // Each accepted event once (not a prefix: the writer may free room
    // between drops before it gets stuck), and the drops were the rest.
    assert!(seen.values().all(|&c| c == 1), "an event written twice");
    assert_eq!(seen.len() as u64 + dropped, 3_000, "{other:?}");
    recover(&log, &ring, false);
    assert_eq!(read_log(&log).1.len(), other.len(), "announced again");
}
