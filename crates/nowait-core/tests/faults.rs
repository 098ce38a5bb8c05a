//! Trust under faults: one test per fault the engine must survive, each
//! asserting the bound or the accounting that the fault could break.
//!
//! Cases that need a process of their own (a stalled stdout, `fork()`,
//! signals) run in a child: this test binary re-run by
//! `nowait_testkit::child`, in its own process group so that a hung child
//! (and any grandchild) is killed as a whole. The other cases run
//! in-process on a thread of their own, so that a call that never returns
//! fails the test instead of hanging it; a writer thread stuck in a sink
//! is leaked on purpose.
//!
//! Every test prints its measurements as `FAULTS <name>: ...` (visible with
//! `--nocapture`).
#![cfg(not(miri))] // Miri cannot spawn processes.
                   // Per test: fork, /dev/stdout and tmpfs cases are Linux's, signals Unix's;
                   // the others run everywhere, Windows (under Wine) included.

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use nowait_testkit::child::{self, Child};
use nowait_testkit::MemoryWriter;

use nowait_core::format::{escape_into, Format, SinkInfo};
use nowait_core::record::{Notice, Record};
use nowait_core::{Builder, FlushError, FullPolicy, Level, PushError, Sink};

// ---------------------------------------------------------------------------
// Harness
// ---------------------------------------------------------------------------

/// Runs in the child only (`child::role()` is the case); a no-op otherwise.
#[test]
fn child_entry() {
    let Some(case) = child::role() else {
        return;
    };
    let file = std::env::var("NOWAIT_FILE").map(PathBuf::from);
    match case.as_str() {
        "panic-stalled-stdout" => child_panic_stalled_stdout(&file.unwrap()),
        #[cfg(target_os = "linux")]
        "fork-exit" | "fork-drop" | "fork-block" => child_fork(&case, &file.unwrap()),
        #[cfg(target_os = "linux")]
        "fork-during-stats" => child_fork_during_stats(),
        #[cfg(target_os = "linux")]
        "dev-stdout" => child_dev_stdout(),
        "slow-reader-notices" => child_slow_reader_notices(),
        #[cfg(all(feature = "signals", unix))]
        "sigterm-twice" => child_sigterm_twice(),
        other => panic!("unknown case {other}"),
    }
}

/// This binary re-run as the child for `case`.
fn child(case: &str) -> Child {
    Child::new("child_entry", case)
}

/// The numbers after `KEY ` on the child's line starting with it.
fn numbers(output: &str, key: &str) -> Vec<u64> {
    let prefix = format!("{key} ");
    let line = output
        .lines()
        .find(|l| l.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no {key} line in:\n{output}"));
    line[prefix.len()..]
        .split(' ')
        .map(|x| {
            x.parse()
                .unwrap_or_else(|_| panic!("bad {key} line: {line}"))
        })
        .collect()
}

/// Runs `f` on a thread of its own and fails if it does not return within
/// `limit` (the thread is leaked then: whatever it waits on never returned).
fn bounded<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    let handle = std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(limit) {
        Ok(v) => {
            let _ = handle.join();
            v
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => match handle.join() {
            Err(p) => std::panic::resume_unwind(p),
            Ok(()) => unreachable!(),
        },
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("did not return within {limit:?}"),
    }
}

/// `_exit(code)`: no atexit hooks, no unwinding, no stdout flush.
fn hard_exit(code: i32) -> ! {
    // SAFETY: terminates the process.
    unsafe { libc::_exit(code) }
}

/// A custom writer whose every `write` sleeps `delay` (a hung device), and
/// says when it was first entered.
struct Stuck {
    delay: Duration,
    entered: Arc<AtomicBool>,
}

impl Write for Stuck {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.entered.store(true, Ordering::SeqCst);
        std::thread::sleep(self.delay);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn wait_for(flag: &AtomicBool, limit: Duration) -> bool {
    let until = Instant::now() + limit;
    while !flag.load(Ordering::SeqCst) {
        if Instant::now() > until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}

// ---------------------------------------------------------------------------
// 1. A panic in a spawned thread while stdout is a stalled pipe
// ---------------------------------------------------------------------------

fn child_panic_stalled_stdout(path: &Path) {
    let (logger, guard) = Builder::new()
        .sink(Sink::file(path))
        .sink(Sink::stdout())
        // Defaults otherwise: a panic hook that waited for every sink would
        // wait up to the flush timeout, which defaults to 5 s.
        .build()
        .unwrap();
    // ~230 KB: far more than the pipe holds.
    for i in 0..20_000 {
        let _ = logger.log(Level::Info, &format!("line {i}"));
    }
    // The parent never reads: wait until the writer finds stdout stalled.
    let until = Instant::now() + Duration::from_secs(10);
    while !logger.stats().sinks[1].stalled {
        if Instant::now() > until {
            eprintln!("stdout never stalled: {:?}", logger.stats());
            hard_exit(2);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    std::mem::forget(guard);
    let started = Instant::now();
    let _ = std::thread::spawn(|| panic!("boom in a spawned thread")).join();
    eprintln!("JOIN_MS {}", started.elapsed().as_millis());
    // No atexit, no unwinding: only the panic hook can have written the line.
    hard_exit(0);
}

/// Guards against a panic hook that flushes every sink, the stalled stdout
/// included: the join would take the whole 5 s flush timeout.
#[test]
fn panic_in_spawned_thread_with_stalled_stdout_pipe_is_not_held() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("out.log");
    let mut c = child("panic-stalled-stdout")
        .env("NOWAIT_FILE", &file)
        .stdout(Stdio::piped()) // never read
        .capture_stderr()
        .timeout(Duration::from_secs(30))
        .spawn();
    let stdout = c.stdout(); // keep the read end open, unread
    let status = c.wait();
    drop(stdout);
    let err = c.output().stderr;
    assert!(status.success(), "{status:?}\n{err}");
    let join_ms = numbers(&err, "JOIN_MS")[0];
    eprintln!("FAULTS panic/stalled stdout: join {join_ms} ms");
    assert!(join_ms < 1000, "the panicking thread was held {join_ms} ms");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.lines()
            .any(|l| l.starts_with("thread '<unnamed>' panicked at ")
                && l.ends_with(": boom in a spawned thread")),
        "no panic line in the file:\n{}",
        &text[text.len().saturating_sub(500)..]
    );
}

// ---------------------------------------------------------------------------
// 2. fork()
// ---------------------------------------------------------------------------

#[cfg(target_os = "linux")] // fork, /dev/stdout or tmpfs (see the note at the top)
const FORK_PARENT_N: usize = 1000;
#[cfg(target_os = "linux")] // fork, /dev/stdout or tmpfs (see the note at the top)
const FORK_CHILD_N: usize = 100;

#[cfg(target_os = "linux")] // fork, /dev/stdout or tmpfs (see the note at the top)
fn child_fork(case: &str, path: &Path) {
    let mut builder = Builder::new()
        .sink(Sink::file(path))
        .shutdown_timeout(Duration::from_secs(5));
    if case == "fork-block" {
        builder = builder.full_policy(FullPolicy::Block).capacity(1024);
    }
    let (logger, guard) = builder.build().unwrap();
    // A rate-limited call site (what `limit = 1 per 1h` expands to): 3
    // calls suppressed before the fork, 2 in the child; each process
    // reports its own. The writer takes the site in before the fork (a
    // fork while it holds the list of sites leaves the child unable to
    // read that list).
    static LIMIT: nowait_core::__private::SiteLimit =
        nowait_core::__private::SiteLimit::rate(1, 3_600_000_000_000, "src/forked.rs", 1);
    let suppress = |n| (0..n).filter(|_| !LIMIT.admit_watched()).count();
    nowait_core::__private::watch_limit(&LIMIT, &logger);
    logger.flush().unwrap();
    // Not flushed: some of these are still in the ring at the fork.
    for i in 0..FORK_PARENT_N {
        logger.log(Level::Info, &format!("parent {i}")).unwrap();
    }
    assert_eq!(suppress(4), 3);
    let started = Instant::now();
    // SAFETY: the forked child only logs through nowait (whose atfork
    // handlers prepare it) and exits.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        // Suppressed before the child's first push starts its writer: they
        // are the child's, however late that writer starts.
        if suppress(2) != 2 {
            hard_exit(4);
        }
        for i in 0..FORK_CHILD_N {
            if let Err(e) = logger.log(Level::Info, &format!("child {i}")) {
                eprintln!("grandchild log {i}: {e}");
                hard_exit(3);
            }
        }
        if case == "fork-exit" {
            std::mem::forget(guard);
            std::process::exit(0);
        }
        drop(guard);
        let s = logger.stats();
        eprintln!(
            "GRANDCHILD {} {} {} {} {}",
            s.records_written,
            s.sinks[0].records_written,
            s.dropped(),
            s.abandoned,
            s.sinks[0].dropped()
        );
        hard_exit(0);
    }
    // The fork's parent: wait for the grandchild, bounded.
    let limit = Duration::from_secs(5);
    let mut status = 0;
    let code = loop {
        // SAFETY: waitpid on our own child.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            break if libc::WIFEXITED(status) {
                i64::from(libc::WEXITSTATUS(status))
            } else {
                -1
            };
        }
        if started.elapsed() > limit {
            // SAFETY: killing and reaping our own child.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            break -2;
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    let ms = started.elapsed().as_millis();
    eprintln!("FORK_MS {ms}");
    eprintln!("FORK_CODE {}", code + 10); // numbers() parses unsigned
    for i in FORK_PARENT_N..2 * FORK_PARENT_N {
        logger.log(Level::Info, &format!("parent {i}")).unwrap();
    }
    drop(guard);
    let s = logger.stats();
    eprintln!(
        "PARENT {} {}",
        s.records_written, s.sinks[0].records_written
    );
    hard_exit(0);
}

#[cfg(target_os = "linux")] // fork, /dev/stdout or tmpfs (see the note at the top)
fn count_lines(text: &str, prefix: &str, n: usize) -> Vec<usize> {
    let mut seen = vec![0usize; n];
    for l in text.lines() {
        if let Some(i) = l.strip_prefix(prefix).and_then(|x| x.parse::<usize>().ok()) {
            assert!(i < n, "unexpected line {l}");
            seen[i] += 1;
        }
    }
    seen
}

/// Guards against a forked child without a writer thread: `exit` and
/// dropping the guard would wait the whole shutdown timeout (5 s), and
/// under `Block` the child's first full ring would wait forever.
#[cfg(target_os = "linux")] // fork, /dev/stdout or tmpfs (see the note at the top)
#[test]
fn fork_child_logs_exits_promptly_and_counts_only_its_own_records() {
    for case in ["fork-exit", "fork-drop", "fork-block"] {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("out.log");
        let out = child(case)
            .env("NOWAIT_FILE", &file)
            .capture_stderr()
            .timeout(Duration::from_secs(30))
            .spawn()
            .output();
        let (status, err) = (out.status, out.stderr);
        assert!(status.success(), "{case}: {status:?}\n{err}");
        let ms = numbers(&err, "FORK_MS")[0];
        let code = numbers(&err, "FORK_CODE")[0] as i64 - 10;
        eprintln!("FAULTS fork {case}: grandchild done in {ms} ms (exit code {code})");
        assert_eq!(
            code, 0,
            "{case}: the grandchild did not exit cleanly\n{err}"
        );
        assert!(ms < 1000, "{case}: the grandchild took {ms} ms\n{err}");
        let text = std::fs::read_to_string(&file).unwrap();
        let child_seen = count_lines(&text, "child ", FORK_CHILD_N);
        assert!(
            child_seen.iter().all(|&k| k == 1),
            "{case}: child records not exactly once: {child_seen:?}"
        );
        let parent_seen = count_lines(&text, "parent ", 2 * FORK_PARENT_N);
        let wrong: Vec<(usize, usize)> = parent_seen
            .iter()
            .enumerate()
            .filter(|&(_, &k)| k != 1)
            .map(|(i, &k)| (i, k))
            .take(10)
            .collect();
        assert!(
            wrong.is_empty(),
            "{case}: parent records not exactly once (record, times): {wrong:?}"
        );
        if case != "fork-exit" {
            let suppressed: Vec<u64> = text
                .lines()
                .filter_map(|l| l.split_once("INFO nowait: suppressed "))
                .filter(|(_, t)| t.contains(" from src/forked.rs:1 "))
                .map(|(_, t)| t.split(' ').next().unwrap().parse().unwrap())
                .collect();
            assert_eq!(
                suppressed.iter().sum::<u64>(),
                5,
                "{case}: each process reports its own suppressed calls: {suppressed:?}\n{}",
                text.lines()
                    .filter(|l| l.contains(" nowait: "))
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
        let parent = numbers(&err, "PARENT");
        assert_eq!(parent, [2 * FORK_PARENT_N as u64; 2], "{case}: {err}");
        if case != "fork-exit" {
            // written, sink written, refused, abandoned, sink lost
            let g = numbers(&err, "GRANDCHILD");
            assert_eq!(
                g,
                [FORK_CHILD_N as u64, FORK_CHILD_N as u64, 0, 0, 0],
                "{case}: the grandchild's stats count exactly its own records"
            );
        }
    }
}

/// The forks of `fork_while_another_thread_reads_stats…`.
#[cfg(target_os = "linux")]
const FORKS_DURING_STATS: usize = 40;

/// Forks again and again while another thread reads the stats (which
/// holds the list of limited call sites for a moment): each child must
/// count its own suppressed calls, and only those.
#[cfg(target_os = "linux")]
fn child_fork_during_stats() {
    let (logger, guard) = Builder::new()
        .sink(Sink::writer(std::io::sink()))
        .build()
        .unwrap();
    static LIMIT: nowait_core::__private::SiteLimit =
        nowait_core::__private::SiteLimit::rate(1, 3_600_000_000_000, "src/forked.rs", 2);
    let suppress = |n| (0..n).filter(|_| !LIMIT.admit_watched()).count();
    nowait_core::__private::watch_limit(&LIMIT, &logger);
    logger.flush().unwrap();
    assert_eq!(suppress(4), 3);
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let (logger, stop) = (logger.clone(), Arc::clone(&stop));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                std::hint::black_box(logger.stats());
            }
        })
    };
    let mut failed = 0;
    for _ in 0..FORKS_DURING_STATS {
        // SAFETY: the forked child only reads nowait's stats, logs through
        // nowait (whose atfork handlers prepare it) and exits.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            if suppress(2) != 2 {
                hard_exit(4);
            }
            let seen = logger.stats().suppressed_rate_limit;
            hard_exit(if seen == 2 {
                0
            } else {
                10 + seen.min(50) as i32
            });
        }
        let mut status = 0;
        // SAFETY: waiting for our own child.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        assert_eq!(r, pid);
        if !(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0) {
            failed += 1;
            eprintln!("FORK_DURING_STATS status {status:#x}");
        }
    }
    stop.store(true, Ordering::Relaxed);
    reader.join().unwrap();
    drop(guard);
    eprintln!("FORK_DURING_STATS_FAILED {failed}");
    hard_exit(0);
}

/// Guards against a fork while another thread holds a logger's list of
/// limited call sites (`stats()` reads it): the child could then neither
/// forget the parent's suppressed calls nor read the list, and counted
/// its own as none (or as the parent's plus its own).
#[cfg(target_os = "linux")]
#[test]
fn fork_while_another_thread_reads_stats_leaves_the_child_its_own_suppressed_calls() {
    let out = child("fork-during-stats")
        .capture_stderr()
        .timeout(Duration::from_secs(60))
        .spawn()
        .output();
    assert!(out.status.success(), "{:?}\n{}", out.status, out.stderr);
    let failed = numbers(&out.stderr, "FORK_DURING_STATS_FAILED");
    assert_eq!(
        failed,
        [0],
        "children that miscounted their suppressed calls, of {FORKS_DURING_STATS}:\n{}",
        out.stderr
    );
}

// ---------------------------------------------------------------------------
// 3. Flush and shutdown with a writer stuck in a write
// ---------------------------------------------------------------------------

/// Guards against timed-out flushes that leave their requests in a
/// bounded channel: once it is full the next flush blocks forever, and the
/// counts after shutdown read 0/0.
#[test]
fn flush_and_shutdown_with_stuck_writer_are_bounded_and_counted() {
    bounded(Duration::from_secs(20), || {
        let entered = Arc::new(AtomicBool::new(false));
        let (logger, guard) = Builder::new()
            .sink(Sink::writer(Stuck {
                delay: Duration::from_secs(60),
                entered: Arc::clone(&entered),
            }))
            .shutdown_timeout(Duration::from_millis(300))
            .catch_panics(false)
            .flush_on_exit(false)
            .build()
            .unwrap();
        let mut accepted = 0u64;
        accepted += u64::from(logger.log(Level::Info, "first").is_ok());
        assert!(wait_for(&entered, Duration::from_secs(5)), "never written");
        let mut worst = Duration::ZERO;
        for i in 0..100 {
            accepted += u64::from(logger.log(Level::Info, &format!("record {i}")).is_ok());
            let t = Instant::now();
            let r = logger.flush_within(Duration::from_millis(10));
            let took = t.elapsed();
            assert!(matches!(r, Err(FlushError::TimedOut)), "flush {i}: {r:?}");
            // The bound is the 10 ms timeout; the slack is the scheduler's
            // on a loaded machine (the failure this guards against is a
            // flush that never returns).
            assert!(took < Duration::from_millis(500), "flush {i} took {took:?}");
            worst = worst.max(took);
        }
        let t = Instant::now();
        drop(guard);
        let shutdown = t.elapsed();
        let s = logger.stats();
        eprintln!(
            "FAULTS stuck writer: worst flush {} ms, shutdown {} ms, accepted {accepted}, \
             written {} + abandoned {}, sink {:?}",
            worst.as_millis(),
            shutdown.as_millis(),
            s.records_written,
            s.abandoned,
            s.sinks[0]
        );
        assert!(
            shutdown < Duration::from_secs(1),
            "shutdown took {shutdown:?}"
        );
        assert_eq!(accepted, 101);
        assert_eq!(s.records_written + s.abandoned, accepted, "{s:?}");
        let k = &s.sinks[0];
        assert_eq!(
            k.records_written
                + k.dropped_failed
                + k.dropped_overflow
                + k.dropped_format
                + k.abandoned,
            s.records_written,
            "{s:?}"
        );
        // The record stuck in the write is counted, not forgotten.
        assert!(s.records_written >= 1 && k.abandoned >= 1, "{s:?}");
    });
}

// ---------------------------------------------------------------------------
// 4. Sink::file("/dev/stdout") on a pipe whose reader stops
// ---------------------------------------------------------------------------

#[cfg(target_os = "linux")] // fork, /dev/stdout or tmpfs (see the note at the top)
const DEV_STDOUT_N: u64 = 200_000;

#[cfg(target_os = "linux")] // fork, /dev/stdout or tmpfs (see the note at the top)
fn child_dev_stdout() {
    let started = Instant::now();
    // Defaults otherwise (1 MiB ring, the default policy).
    let (logger, guard) = Builder::new()
        .sink(Sink::file("/dev/stdout"))
        .shutdown_timeout(Duration::from_millis(500))
        .build()
        .unwrap();
    let mut accepted = 0u64;
    let mut tried = 0u64;
    for i in 0..DEV_STDOUT_N {
        accepted += u64::from(logger.log(Level::Info, &format!("line {i}")).is_ok());
        tried += 1;
    }
    // How far the burst gets before the pipe fills depends on how fast the
    // writer formats and how busy the machine is. Keep logging, paced,
    // until the stalled sink has had to shed (or 10 s pass, which fails
    // the test): a reader that stopped must make the sink overflow, never
    // make the logger wait.
    while logger.stats().sinks[0].dropped_overflow == 0
        && started.elapsed() < Duration::from_secs(10)
    {
        for _ in 0..1000 {
            accepted += u64::from(logger.log(Level::Info, &format!("line {tried}")).is_ok());
            tried += 1;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    drop(guard);
    let s = logger.stats();
    let k = &s.sinks[0];
    eprintln!(
        "DEVSTDOUT {accepted} {} {} {} {} {} {} {} {} {} {} {}",
        u64::from(k.non_blocking),
        s.dropped(),
        s.records_written,
        s.abandoned,
        k.records_written,
        k.dropped_overflow,
        k.abandoned,
        k.dropped_failed,
        k.dropped_format,
        started.elapsed().as_millis(),
        tried
    );
    hard_exit(0);
}

/// Guards against `/dev/stdout` counted as a file and written with
/// blocking calls under the block policy: the logger would stop for good
/// once the reader stopped.
#[cfg(target_os = "linux")] // fork, /dev/stdout or tmpfs (see the note at the top)
#[test]
fn file_sink_on_dev_stdout_pipe_with_stopped_reader_never_hangs() {
    let mut c = child("dev-stdout")
        .stdout(Stdio::piped())
        .capture_stderr()
        .timeout(Duration::from_secs(30))
        .spawn();
    // The reader takes the first 16 KiB, then stops (keeping the pipe open).
    let mut out = c.stdout();
    let reader = std::thread::spawn(move || {
        let mut first = vec![0u8; 16 << 10];
        let _ = out.read_exact(&mut first);
        out
    });
    let status = c.wait();
    drop(reader.join());
    let err = c.output().stderr;
    assert!(status.success(), "{status:?}\n{err}");
    let v = numbers(&err, "DEVSTDOUT");
    let [accepted, non_blocking, refused, taken, ring_abandoned, written, overflow, abandoned, failed, format, ms, tried] =
        v[..]
    else {
        panic!("bad DEVSTDOUT line: {v:?}");
    };
    eprintln!(
        "FAULTS /dev/stdout pipe: {ms} ms, tried {tried}, accepted {accepted} (refused {refused}), \
         written {written}, overflow {overflow}, abandoned {abandoned} + {ring_abandoned} \
         in the ring, failed {failed}"
    );
    assert_eq!(
        non_blocking, 1,
        "/dev/stdout on a pipe must be non-blocking"
    );
    // Every record is accounted for: refused by the ring (the default
    // policy for a pipe drops), or accepted and then written, dropped for
    // the stalled sink, or abandoned at shutdown.
    assert!(tried >= DEV_STDOUT_N, "{v:?}");
    assert_eq!(accepted + refused, tried, "{v:?}");
    assert_eq!(taken + ring_abandoned, accepted, "{v:?}");
    assert_eq!((failed, format), (0, 0), "{v:?}");
    assert!(
        overflow > 0,
        "the stopped reader should have overflowed: {v:?}"
    );
    assert_eq!(
        written + overflow + abandoned + ring_abandoned,
        accepted,
        "{v:?}"
    );
}

// ---------------------------------------------------------------------------
// 5. A full ring under the default policy waits with a bound
// ---------------------------------------------------------------------------

/// Guards against an unbounded `Block` default for files: a stuck sink
/// would park the request threads for as long as it was stuck.
#[test]
fn block_timeout_default_bounds_wait_on_full_ring() {
    bounded(Duration::from_secs(20), || {
        let dir = tempfile::tempdir().unwrap();
        let (only_file, g) = Builder::new()
            .sink(Sink::file(dir.path().join("only.log")))
            .catch_panics(false)
            .flush_on_exit(false)
            .build()
            .unwrap();
        let debug = format!("{only_file:?}");
        assert!(debug.contains("BlockTimeout(100ms)"), "{debug}");
        drop(g);

        let (logger, guard) = Builder::new()
            .sink(Sink::file(dir.path().join("app.log")))
            .sink(Sink::writer(Stuck {
                delay: Duration::from_secs(5),
                entered: Arc::default(),
            }))
            .capacity(1024)
            .shutdown_timeout(Duration::from_millis(300))
            .catch_panics(false)
            .flush_on_exit(false)
            .build()
            .unwrap();
        let mut worst = Duration::ZERO;
        let mut timed_out = None;
        for i in 0..1000 {
            let t = Instant::now();
            let r = logger.log(Level::Info, &format!("record {i:04} with some padding"));
            let took = t.elapsed();
            worst = worst.max(took);
            assert!(took < Duration::from_millis(300), "log {i} took {took:?}");
            match r {
                Ok(()) => {}
                Err(PushError::TimedOut) => {
                    timed_out = Some((i, took));
                    break;
                }
                Err(e) => panic!("log {i}: {e:?}"),
            }
        }
        let (i, took) = timed_out.expect("the ring never stayed full");
        let s = logger.stats();
        eprintln!(
            "FAULTS block timeout: log {i} timed out after {} ms (worst {} ms), \
             dropped_timeout {}",
            took.as_millis(),
            worst.as_millis(),
            s.dropped_timeout
        );
        assert!(took >= Duration::from_millis(90), "did not wait: {took:?}");
        assert!(s.dropped_timeout > 0, "{s:?}");
        drop(guard);
    });
}

// ---------------------------------------------------------------------------
// 6. A second SIGTERM during the drain kills at once
// ---------------------------------------------------------------------------

#[cfg(unix)] // signals
#[cfg(feature = "signals")]
fn child_sigterm_twice() {
    let entered = Arc::new(AtomicBool::new(false));
    let (logger, guard) = Builder::new()
        .sink(Sink::writer(Stuck {
            delay: Duration::from_secs(10),
            entered: Arc::clone(&entered),
        }))
        .drain_on_signals(true)
        .shutdown_timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    logger.log(Level::Info, "stuck in the writer").unwrap();
    assert!(wait_for(&entered, Duration::from_secs(5)));
    std::mem::forget(guard);
    println!("ready");
    std::thread::sleep(Duration::from_secs(30));
    hard_exit(9);
}

/// Guards against a handler that swallows the second SIGTERM: the process
/// would live on until the drain's 5 s timeout ran out.
#[cfg(unix)] // signals
#[cfg(feature = "signals")]
#[test]
fn sigterm_twice_during_drain_kills_at_once() {
    use std::os::unix::process::ExitStatusExt;

    let mut c = child("sigterm-twice")
        .stdout(Stdio::piped())
        .timeout(Duration::from_secs(10))
        .spawn();
    let _out = c.wait_for_line("ready");
    c.signal(libc::SIGTERM);
    std::thread::sleep(Duration::from_millis(200));
    if let Some(status) = c.try_wait() {
        panic!("the first SIGTERM did not drain (the writer is stuck): {status:?}");
    }
    let second = Instant::now();
    c.signal(libc::SIGTERM);
    let status = c.wait();
    let ms = second.elapsed().as_millis();
    eprintln!("FAULTS sigterm twice: died {ms} ms after the second signal ({status:?})");
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status:?}");
    assert!(ms < 1000, "died {ms} ms after the second SIGTERM");
}

// ---------------------------------------------------------------------------
// 7. Disk full
// ---------------------------------------------------------------------------

#[cfg(target_os = "linux")] // fork, /dev/stdout or tmpfs (see the note at the top)
fn is_enospc(e: &FlushError) -> bool {
    matches!(e, FlushError::Sink { source, .. } if source.raw_os_error() == Some(libc::ENOSPC))
}

/// Guards against counting the records lost while the disk is full as
/// overflow, with a gap notice that blames a slow sink ("too slow, its
/// buffer was full") instead of the full disk.
#[cfg(target_os = "linux")] // fork, /dev/stdout or tmpfs (see the note at the top)
#[test]
fn disk_full_on_tmpfs_keeps_whole_lines_and_names_enospc() {
    let Some(dir) = nowait_testkit::Tmpfs::mount("1m") else {
        return;
    };
    let root = dir.path().to_owned();
    bounded(Duration::from_secs(30), move || disk_full(&root));
}

#[cfg(target_os = "linux")] // fork, /dev/stdout or tmpfs (see the note at the top)
fn disk_full(root: &Path) {
    // Fill the file system, then leave 24 KiB free for the log.
    let filler = root.join("filler");
    {
        let mut f = std::fs::File::create(&filler).unwrap();
        let chunk = vec![b'x'; 4096];
        while f.write_all(&chunk).is_ok() {}
        let len = f.metadata().unwrap().len();
        f.set_len(len.saturating_sub(24 << 10)).unwrap();
    }
    let path = root.join("app.log");
    let (logger, guard) = Builder::new()
        .sink(Sink::file(&path).buffer_size(16 << 10))
        .shutdown_timeout(Duration::from_secs(2))
        .flush_timeout(Duration::from_secs(2))
        .catch_panics(false)
        .flush_on_exit(false)
        .build()
        .unwrap();
    // Log until the disk is full.
    let mut n = 0u64;
    let mut hit = None;
    while hit.is_none() && n < 200_000 {
        for _ in 0..200 {
            let _ = logger.log(Level::Info, &format!("rec {n}"));
            n += 1;
        }
        match logger.flush() {
            Err(e) if is_enospc(&e) => hit = Some(format!("flush: {e}")),
            _ if logger.stats().sinks[0].write_errors > 0 => {
                hit = Some(format!("write_errors: {:?}", logger.stats().sinks[0]))
            }
            _ => {}
        }
    }
    let hit = hit.expect("the disk never filled up");
    // Keep logging while it is full: the sink's 16 KiB fill up and it sheds.
    for _ in 0..4000 {
        let _ = logger.log(Level::Info, &format!("rec {n}"));
        n += 1;
    }
    let _ = logger.flush();
    let full = logger.stats();
    // Free the space, log a few more, shut down.
    std::fs::remove_file(&filler).unwrap();
    for i in 0..10 {
        let _ = logger.log(Level::Info, &format!("after {i}"));
    }
    drop(guard);
    let s = logger.stats();
    let text = std::fs::read_to_string(&path).unwrap();
    eprintln!(
        "FAULTS disk full: ENOSPC after {n} records ({hit}); while full {:?}; final {:?}",
        full.sinks[0], s.sinks[0]
    );
    assert!(full.sinks[0].dropped_failed > 0, "never shed: {full:?}");
    assert!(text.ends_with('\n'), "torn end: {:?}", tail(&text));
    let mut last = None;
    for l in text.lines() {
        if l.contains(" nowait: ") {
            continue; // a notice
        }
        let rec = l.strip_prefix("rec ").and_then(|x| x.parse::<u64>().ok());
        let after = l.strip_prefix("after ").and_then(|x| x.parse::<u64>().ok());
        assert!(rec.is_some() || after.is_some(), "torn line {l:?}");
        if let Some(r) = rec {
            assert!(
                last < Some(r),
                "out of order or repeated: {l:?} after {last:?}"
            );
            last = Some(r);
        }
    }
    assert!(
        text.lines()
            .any(|l| l.contains("dropped (sink file:") && l.contains("No space left on device")),
        "no notice naming the cause in the failed sink itself:\n{}",
        text.lines()
            .filter(|l| l.contains(" nowait: "))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[cfg(target_os = "linux")] // fork, /dev/stdout or tmpfs (see the note at the top)
fn tail(s: &str) -> &str {
    let mut at = s.len().saturating_sub(200);
    while !s.is_char_boundary(at) {
        at += 1;
    }
    &s[at..]
}

// ---------------------------------------------------------------------------
// 8. A panicking Format
// ---------------------------------------------------------------------------

/// Panics on any record containing "boom", after writing part of a line.
struct Boom;

impl Format for Boom {
    fn format(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
        out.extend_from_slice(b"partial ");
        if record.payload().windows(4).any(|w| w == b"boom") {
            panic!("format boom");
        }
        escape_into(record.payload(), out);
        out.push(b'\n');
    }

    fn notice(&mut self, notice: &Notice<'_>, out: &mut Vec<u8>) {
        out.extend_from_slice(b"notice: ");
        escape_into(notice.message().as_bytes(), out);
        out.push(b'\n');
    }
}

/// Guards against a panicking format discarding the record for the whole
/// logger (every sink losing it), with no notice of why.
#[test]
fn format_panic_is_counted_on_its_sink_only() {
    bounded(Duration::from_secs(20), || {
        let (a, b) = (MemoryWriter::default(), MemoryWriter::default());
        let make = |_: &SinkInfo| -> Box<dyn Format> { Box::new(Boom) };
        let (logger, guard) = Builder::new()
            .sink(Sink::writer(a.clone()).format(make))
            .sink(Sink::writer(b.clone()))
            .flush_on_exit(false)
            .build()
            .unwrap();
        for line in ["before", "a boom here", "after"] {
            logger.log(Level::Info, line).unwrap();
        }
        logger.flush().unwrap();
        let s = logger.stats();
        eprintln!(
            "FAULTS format panic: discarded {}, sink 0 {:?}, sink 1 {:?}",
            s.discarded, s.sinks[0], s.sinks[1]
        );
        assert_eq!(s.discarded, 0, "{s:?}");
        assert_eq!(s.records_written, 3, "{s:?}");
        assert_eq!(
            (s.sinks[0].dropped_format, s.sinks[0].records_written),
            (1, 2),
            "{s:?}"
        );
        assert_eq!(
            (s.sinks[1].dropped_format, s.sinks[1].records_written),
            (0, 3),
            "{s:?}"
        );
        drop(guard);
        let (a, b) = (a.text(), b.text());
        assert!(b.lines().any(|l| l == "a boom here"), "{b}");
        let a_lines: Vec<&str> = a.lines().collect();
        assert!(a_lines.contains(&"partial before") && a_lines.contains(&"partial after"));
        assert!(
            !a_lines.iter().any(|l| l.starts_with("partial a boom")
                || l.starts_with("partial partial")
                || *l == "partial "),
            "the partial line was kept: {a}"
        );
        assert!(
            a_lines
                .iter()
                .any(|l| l.starts_with("notice: ") && l.contains("panicked")),
            "no in-band notice of the panic in the sink: {a}"
        );
    });
}

// ---------------------------------------------------------------------------
// 9. A slow reader: every drop is said in the output, even the ones whose
//    notice was still queued behind records a shutdown abandoned
// ---------------------------------------------------------------------------

const SLOW_READER_BURST: u64 = 150_000;

fn child_slow_reader_notices() {
    let (logger, guard) = Builder::new()
        .format(nowait_core::format::Plain)
        .full_policy(FullPolicy::Drop)
        .sink(Sink::stdout())
        .shutdown_timeout(Duration::from_millis(100))
        .build()
        .unwrap();
    let mut n = 0u64;
    // Burst 1 fills the sink's buffer (1 MiB) and sheds; once the reader
    // has drained it below half, the first episode's notice is queued
    // where its gap is, behind records still pending.
    // Burst 2 fills the buffer again behind that notice, and the shutdown
    // cannot drain it: those records are abandoned, not the notice.
    for burst in 0..2 {
        for _ in 0..SLOW_READER_BURST {
            let _ = logger.log(Level::Info, &format!("line {n}"));
            n += 1;
            if n % 1000 == 0 {
                // Paced so that the ring keeps up: the losses are the
                // sink's (its buffer full), not the ring's.
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        // On a loaded machine the paced burst can come slower than the
        // reader takes it: go on until the sink has shed.
        let start = Instant::now();
        while burst == 0 && logger.stats().sinks[0].dropped_overflow == 0 {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "the sink never shed"
            );
            for _ in 0..1000 {
                let _ = logger.log(Level::Info, &format!("line {n}"));
                n += 1;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        if burst == 0 {
            // Until the buffer has drained below half: the first episode's
            // notice is then queued at the gap, about 512 KiB deep.
            let start = Instant::now();
            loop {
                let k = &logger.stats().sinks[0];
                if k.dropped_overflow > 0 && k.pending_bytes < 512 << 10 {
                    break;
                }
                assert!(start.elapsed() < Duration::from_secs(10), "{k:?}");
                std::thread::sleep(Duration::from_millis(2));
            }
        }
    }
    drop(guard);
    let s = logger.stats();
    eprintln!(
        "SLOWREADER {n} {} {} {}",
        s.sinks[0].records_written,
        s.dropped(),
        s.sinks[0].abandoned
    );
    hard_exit(0);
}

/// Into a slow terminal, every loss must be said: a notice queued at a
/// shedding episode's gap must not be abandoned at shutdown with the
/// records around it, nor the last notices get only one write attempt. Here a reader takes 4 KiB every 5 ms (~800
/// KB/s) until the end: every line the child tried to log is either in
/// the output or counted in a notice in the output.
#[test]
fn slow_reader_gets_every_loss_said_in_the_output() {
    let mut c = child("slow-reader-notices")
        .stdout(Stdio::piped())
        .capture_stderr()
        .timeout(Duration::from_secs(30))
        .spawn();
    let mut out = c.stdout();
    let reader = std::thread::spawn(move || {
        let mut all = Vec::new();
        let mut chunk = vec![0u8; 4096];
        loop {
            match out.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(k) => all.extend_from_slice(&chunk[..k]),
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        String::from_utf8_lossy(&all).into_owned()
    });
    let status = c.wait();
    let text = reader.join().unwrap();
    let err = c.output().stderr;
    assert!(status.success(), "{status:?}\n{err}");
    let v = numbers(&err, "SLOWREADER");
    let [tried, written, dropped, abandoned] = v[..] else {
        panic!("bad SLOWREADER line: {v:?}");
    };
    // The first line may follow the test harness's own "test ... " on
    // stdout; records are "line N" at the end of a line.
    let record = |l: &str| {
        l.rfind("line ")
            .and_then(|at| l[at + 5..].parse::<usize>().ok())
    };
    let lines = text.lines().filter_map(record).count() as u64;
    let mut said = 0u64;
    let mut notices = Vec::new();
    for l in text.lines().filter(|l| l.starts_with("nowait: ")) {
        notices.push(l.to_owned());
        let words: Vec<&str> = l.split([' ', ';', ',']).filter(|w| !w.is_empty()).collect();
        for (i, w) in words.iter().enumerate() {
            let next = words.get(i + 1).copied().unwrap_or("");
            let after = words.get(i + 2).copied().unwrap_or("");
            if let Ok(k) = w.parse::<u64>() {
                let counted = (next.starts_with("record")
                    && (after == "dropped" || after == "abandoned"))
                    || next == "pending";
                if counted {
                    said += k;
                }
            }
        }
    }
    eprintln!(
        "FAULTS slow reader: tried {tried}, in the output {lines}, said dropped or abandoned {said}; \
         stats: written {written}, dropped {dropped}, abandoned {abandoned}; notices: {notices:#?}"
    );
    // A record cut by a short write when the shutdown gave up is counted
    // as abandoned, and its tail still goes out afterwards (so that what
    // follows starts a line): the one line that can be both in the output
    // and in the count.
    assert!(
        (written..=written + 1).contains(&lines),
        "every line the sink wrote was read: {lines} read, {written} written"
    );
    assert!(
        dropped + abandoned > 0,
        "the reader was meant to be too slow"
    );
    assert!(
        (tried..=tried + 1).contains(&(lines + said)),
        "every line is in the output or counted in a notice there: {lines} + {said} != {tried}"
    );
}
