//! Whole-process behaviour, each case in a child process: `process::exit`,
//! a panic, SIGTERM, a stalled pipe, a closed pipe. The child is this test
//! binary re-run by `nowait_testkit::child`; the parent reads back the
//! output.
#![cfg(not(miri))] // Miri cannot spawn processes.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use nowait_testkit::child::{self, Child};

use nowait_core::{Builder, Level, Sink};

const N: usize = 10_000;

/// Runs in the child only.
#[test]
fn child_entry() {
    let Some(case) = child::role() else {
        return;
    };
    let path = PathBuf::from(std::env::var("NOWAIT_FILE").unwrap());
    let n: usize = std::env::var("NOWAIT_N").unwrap().parse().unwrap();
    // The panic case tests the panic hook alone: the fatal-signal drain
    // of its `abort()` is `tests/crash.rs`'s.
    let mut builder = Builder::new()
        .sink(Sink::file(&path))
        .drain_on_crash(case != "panic");
    if case.starts_with("pipe") {
        builder = builder
            .sink(Sink::stdout().buffer_size(64 << 10))
            .shutdown_timeout(Duration::from_millis(500));
    }
    if case == "sigterm" {
        builder = builder.drain_on_signals(true);
    }
    if case == "pipe-closed" {
        // Tell the parent we are past the test harness's own output, then
        // wait for it to close the pipe (it closes our stdin too).
        println!("ready");
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
    }
    let (logger, guard) = builder.build().unwrap();
    for i in 0..n {
        logger.log(Level::Info, &format!("line {i}")).unwrap();
    }
    match case.as_str() {
        "exit" => {
            std::mem::forget(guard);
            std::process::exit(3);
        }
        "return" => {
            // The test harness's `main` returns: the C runtime's `exit`
            // runs the `atexit` drain.
            std::mem::forget(guard);
        }
        "panic" => {
            std::mem::forget(guard);
            let _ = std::thread::spawn(|| panic!("boom on a worker")).join();
            // Die without unwinding or atexit: only the panic hook can have
            // written the lines.
            std::process::abort();
        }
        "sigterm" => {
            std::mem::forget(guard);
            println!("ready");
            std::thread::sleep(Duration::from_secs(30));
            std::process::exit(9);
        }
        "pipe" | "pipe-closed" => {
            let started = Instant::now();
            drop(guard);
            let stats = logger.stats();
            let out = &stats.sinks[1];
            eprintln!(
                "STATS {} {} {} {} {} {}",
                stats.sinks[0].records_written,
                out.records_written,
                out.dropped_overflow,
                out.dropped_failed,
                started.elapsed().as_millis(),
                out.abandoned,
            );
            // Skip the harness's closing lines: they would block on the
            // stalled pipe (or fail on the closed one), as any println would.
            std::process::exit(0);
        }
        other => panic!("unknown case {other}"),
    }
}

fn child(case: &str, file: &Path, n: usize) -> Child {
    Child::new("child_entry", case)
        .env("NOWAIT_FILE", file)
        .env("NOWAIT_N", n.to_string())
}

fn assert_all_lines(file: &Path, n: usize) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    let records: Vec<&String> = lines.iter().filter(|l| l.starts_with("line ")).collect();
    assert_eq!(records.len(), n, "expected {n} lines");
    for (i, l) in records.iter().enumerate() {
        assert_eq!(**l, format!("line {i}"));
    }
    lines
}

/// Windows: `std::process::exit` is `ExitProcess`, which ends every other
/// thread (the writer) before anything registered can run, so this drain
/// cannot exist there (documented); returning from `main` does drain
/// (`return_from_main_drains_through_atexit`).
#[cfg(unix)]
#[test]
fn process_exit_drains_through_atexit() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("out.log");
    let status = child("exit", &file, N)
        .timeout(Duration::from_secs(30))
        .spawn()
        .wait();
    assert_eq!(status.code(), Some(3));
    assert_all_lines(&file, N);
}

#[test]
fn return_from_main_drains_through_atexit() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("out.log");
    let status = child("return", &file, N)
        .timeout(Duration::from_secs(30))
        .spawn()
        .wait();
    assert!(status.success(), "{status:?}");
    assert_all_lines(&file, N);
}

#[test]
fn panic_is_logged_and_flushed_before_the_previous_hook() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("out.log");
    let status = child("panic", &file, N)
        .timeout(Duration::from_secs(30))
        .spawn()
        .wait();
    assert!(!status.success());
    let lines = assert_all_lines(&file, N);
    let last = lines.last().unwrap();
    assert!(
        last.starts_with("thread '<unnamed>' panicked at ") && last.ends_with(": boom on a worker"),
        "{last}"
    );
}

#[cfg(feature = "signals")] // drain_on_signals needs the feature
#[cfg(unix)] // a signal; Windows' console control events cannot be sent to a process under Wine's test runner
#[test]
fn sigterm_drains_then_dies_of_the_signal() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("out.log");
    let mut c = child("sigterm", &file, N)
        .stdout(Stdio::piped())
        .timeout(Duration::from_secs(30))
        .spawn();
    let _out = c.wait_for_line("ready");
    c.signal(libc::SIGTERM);
    let status = c.wait();
    assert_eq!(status.signal(), Some(15), "{status:?}");
    assert_all_lines(&file, N);
}

fn parse_stats(stderr: &str) -> Vec<u64> {
    let line = stderr
        .lines()
        .find(|l| l.starts_with("STATS "))
        .unwrap_or_else(|| panic!("no STATS in {stderr}"));
    line[6..].split(' ').map(|x| x.parse().unwrap()).collect()
}

/// A pipe whose reader never reads: the file still gets every line, the
/// writer never blocks, the pipe's losses add up exactly, the shutdown does
/// not wait for the stalled pipe, and what the pipe holds ends with whole
/// lines and the notice of what it missed.
#[test]
fn stalled_pipe_never_delays_the_file() {
    let n = 200_000; // ~2.3 MB: far more than the pipe and the sink buffer hold
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("out.log");
    let mut c = child("pipe", &file, n)
        .stdout(Stdio::piped()) // never read until the child exits
        .capture_stderr()
        .timeout(Duration::from_secs(60))
        .spawn();
    let status = c.wait();
    assert!(status.success());
    let mut piped = Vec::new();
    c.stdout().read_to_end(&mut piped).unwrap();
    let err = c.output().stderr;
    let s = parse_stats(&err);
    let (file_written, out_written, overflow, failed, millis, abandoned) =
        (s[0], s[1], s[2], s[3], s[4], s[5]);
    assert_eq!(file_written, n as u64);
    assert!(overflow > 0, "the stalled pipe should have overflowed");
    assert_eq!(
        out_written + overflow + failed + abandoned,
        n as u64,
        "{s:?}"
    );
    // The shutdown timeout is 500 ms; a stalled pipe is not waited for.
    assert!(millis < 400, "shutdown took {millis} ms");
    let lines = assert_all_lines(&file, n);
    assert!(
        lines.iter().any(|l| l.contains("pending for sink stdout")),
        "the shutdown notice names the stalled sink"
    );
    assert!(lines
        .iter()
        .any(|l| l.contains("dropped (sink stdout too slow")));
    if cfg!(any(nowait_portable, not(target_os = "linux"))) {
        // Without /proc the pipe is written by a relay thread, and where a
        // pipe's room is unknown no reserve is kept in it: the notice goes
        // to the file only, and the relay's last write may be cut when the
        // process exits (documented in `docs::design`, "Platforms").
        return;
    }
    let piped = String::from_utf8_lossy(&piped);
    assert!(
        piped.ends_with('\n'),
        "torn last line: {:?}",
        &piped[piped.len().saturating_sub(200)..]
    );
    let last = piped.lines().last().unwrap();
    assert!(
        last.contains("pending for sink stdout") || last.contains("dropped (sink stdout too slow"),
        "the pipe ends with the notice of its loss: {last} {s:?} {err}"
    );
}

/// A pipe whose reader is gone (EPIPE): counted, reported, the file intact.
#[test]
fn closed_pipe_is_counted_and_the_file_is_complete() {
    let n = 50_000;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("out.log");
    let mut c = child("pipe-closed", &file, n)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .capture_stderr()
        .timeout(Duration::from_secs(60))
        .spawn();
    let stdin = c.stdin();
    let out = c.wait_for_line("ready");
    drop(out); // close the read end: writes fail with EPIPE
    drop(stdin); // and let the child start
    let status = c.wait();
    assert!(status.success());
    let err = c.output().stderr;
    let s = parse_stats(&err);
    assert_eq!(s[0], n as u64);
    assert_eq!(s[1] + s[2] + s[3] + s[5], n as u64, "{s:?}");
    assert!(s[3] > 0, "records after the failure count as failed");
    let lines = assert_all_lines(&file, n);
    // "(Broken pipe (os error 32))" on Unix; Windows words it its own way.
    assert!(lines
        .iter()
        .any(|l| l.contains("sink stdout failed for good (")));
}
