//! Crashes: a child process logs records with unique numbers,
//! pinned to one CPU so that the writer thread has had no chance to write
//! them, then dies of a fatal signal. The parent checks that it died of
//! that signal (nowait hands it on), that every record is in the file, and
//! that the last line says what happened, within the drain's bound.
//!
//! The child is this test binary re-run by `nowait_testkit::child`.
#![cfg(all(unix, not(miri)))] // fatal signals are Unix's; Miri cannot spawn processes.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nowait_testkit::child::{self, Child};

use nowait_core::format::{Format, Plain, SinkInfo};
use nowait_core::record::Record;
use nowait_core::{Builder, FullPolicy, Level, Sink};

const N: usize = 10_000;

/// What the writer thread does on reaching a given record.
#[derive(Clone, Copy, Debug)]
enum OnRecord {
    /// Crashes (SIGSEGV) on the record `crash`.
    Crash,
    /// Stops for good on the record [`HOLD`]: every later record stays in
    /// the ring, as behind a writer that has not had its turn yet, however
    /// the machine schedules the two threads.
    Hold,
}

/// The record the writer thread stops at when held (half of [`N`]).
const HOLD: &[u8] = b"line 5000";

/// Plain text, with the writer thread's [`OnRecord`] behaviour.
#[derive(Debug)]
struct Trap(OnRecord);

impl Format for Trap {
    fn format(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
        match self.0 {
            OnRecord::Crash if record.payload() == b"crash" => segfault(),
            OnRecord::Hold if record.payload() == HOLD => loop {
                std::thread::sleep(Duration::from_secs(3600));
            },
            _ => Plain.format(record, out),
        }
    }

    fn notice(&mut self, notice: &nowait_core::record::Notice<'_>, out: &mut Vec<u8>) {
        Plain.notice(notice, out);
    }
}

impl nowait_core::format::MakeFormat for OnRecord {
    fn make_format(&self, _: &SinkInfo) -> Box<dyn Format> {
        Box::new(Trap(*self))
    }
}

/// A writer that never returns: the drain can only end by its bound.
struct Hung;

impl std::io::Write for Hung {
    fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
        loop {
            std::thread::sleep(Duration::from_secs(3600));
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A write through a null pointer: SIGSEGV raised by the kernel for the
/// faulting instruction (a `raise(SIGSEGV)` would not be a fault: Rust's
/// own SIGSEGV handler resets the action and returns, and the program goes
/// on, with or without nowait).
fn segfault() {
    // SAFETY: none: this test crashes on purpose.
    unsafe { std::ptr::write_volatile(std::ptr::null_mut::<u64>(), 1) };
}

/// A read past the end of a mapped file: SIGBUS raised by the kernel.
fn bus_error(dir: &Path) {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(dir.join("empty"))
        .unwrap();
    // SAFETY: none: mapping an empty file and reading it is the fault.
    unsafe {
        let p = libc::mmap(
            std::ptr::null_mut(),
            4096,
            libc::PROT_READ,
            libc::MAP_SHARED,
            std::os::fd::AsRawFd::as_raw_fd(&file),
            0,
        );
        assert_ne!(p, libc::MAP_FAILED);
        std::hint::black_box(std::ptr::read_volatile(p.cast::<u8>()));
    }
}

#[allow(unconditional_recursion)]
fn overflow(depth: u64) -> u64 {
    let pad = [depth; 64];
    std::hint::black_box(&pad);
    overflow(depth + 1) + std::hint::black_box(pad[3])
}

#[test]
fn child_entry() {
    let Some(case) = child::role() else {
        return;
    };
    let path = PathBuf::from(std::env::var("NOWAIT_FILE").unwrap());
    let drain = std::env::var_os("NOWAIT_NO_DRAIN").is_none();
    let mut builder = Builder::new()
        .format(Plain)
        .full_policy(FullPolicy::Block)
        .catch_panics(false)
        .drain_on_crash(drain)
        .sink(Sink::file(&path));
    if !drain {
        // The writer thread may run on another CPU and keep up: held at
        // the record `HOLD`, it leaves every later one in the ring. A
        // drain run despite the setting would wait out its long bound.
        builder = builder
            .format(OnRecord::Hold)
            .crash_timeout(Duration::from_secs(30));
    }
    if case == "writer" {
        builder = builder.format(OnRecord::Crash);
    }
    if case == "hung" {
        builder = builder
            .sink(Sink::writer(Hung))
            .crash_timeout(Duration::from_millis(300));
    }
    if case == "second" {
        builder = builder
            .sink(Sink::writer(Hung))
            .crash_timeout(Duration::from_secs(20));
    }
    let macros = case.ends_with("-macros");
    if macros {
        // The macros' events (a call site, the raw arguments) render
        // through the text format: "<time>  INFO crash: line N".
        builder = builder.format(nowait_core::format::Text::new().with_ansi(false));
    }
    let case = case.trim_end_matches("-macros").to_owned();
    let (logger, guard) = builder.build().unwrap();
    if macros {
        nowait_core::set_global(logger.clone()).unwrap();
    }
    // This thread on one CPU: it only gives way to other threads of the
    // machine there, as on a loaded machine.
    #[cfg(target_os = "linux")]
    nowait_testkit::pin_to_cpu0();
    for i in 0..N {
        if macros {
            nowait_core::info!("line {}", i);
        } else {
            logger.log(Level::Info, &format!("line {i}")).unwrap();
        }
    }
    std::mem::forget(guard);
    eprintln!(
        "CRASHING {}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis()
    );
    match case.as_str() {
        "segv" => segfault(),
        "abort" => std::process::abort(),
        "bus" => bus_error(path.parent().unwrap()),
        "overflow" => {
            std::hint::black_box(overflow(0));
        }
        "double-panic" => {
            struct PanicOnDrop;
            impl Drop for PanicOnDrop {
                fn drop(&mut self) {
                    panic!("second panic while unwinding");
                }
            }
            let _p = PanicOnDrop;
            panic!("first panic");
        }
        "in-handler" => {
            // A crash inside another signal handler (here SIGUSR1's).
            extern "C" fn on_usr1(_: libc::c_int) {
                segfault();
            }
            // SAFETY: installs a handler that only faults; then raises
            // the signal on this thread.
            unsafe {
                libc::signal(libc::SIGUSR1, on_usr1 as *const () as libc::sighandler_t);
                libc::raise(libc::SIGUSR1);
            }
        }
        "writer" => {
            logger.log(Level::Info, "crash").unwrap();
            std::thread::sleep(Duration::from_secs(10));
        }
        "hung" => segfault(),
        "second" => {
            // Another thread crashes while this one waits for the drain
            // (which cannot end: a sink never returns).
            std::thread::spawn(|| {
                std::thread::sleep(Duration::from_millis(200));
                segfault();
            });
            segfault();
        }
        other => panic!("unknown case {other}"),
    }
    unreachable!("the crash did not happen");
}

fn run(case: &str, dir: &Path) -> (std::process::ExitStatus, Vec<String>, Duration, String) {
    run_with(case, dir, false)
}

fn run_with(
    case: &str,
    dir: &Path,
    no_drain: bool,
) -> (std::process::ExitStatus, Vec<String>, Duration, String) {
    let file = dir.join(format!("{case}-{no_drain}.log"));
    let start = Instant::now();
    let mut c = Child::new("child_entry", case);
    if no_drain {
        c = c.env("NOWAIT_NO_DRAIN", "1");
    }
    let mut c = c
        .env("NOWAIT_FILE", &file)
        .env("RUST_BACKTRACE", "0")
        .capture_stderr()
        .timeout(Duration::from_secs(60))
        .spawn();
    let status = c.wait();
    let took = start.elapsed();
    let err = c.output().stderr;
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    (status, text.lines().map(str::to_owned).collect(), took, err)
}

/// Every record, in order: "line N" at the end of its line (plain text
/// or the text format's prefix before it).
fn assert_every_record(lines: &[String], case: &str) {
    let records: Vec<&String> = lines.iter().filter(|l| l.contains("line ")).collect();
    assert_eq!(records.len(), N, "{case}: records on disk");
    for (i, l) in records.iter().enumerate() {
        assert!(l.ends_with(&format!("line {i}")), "{case}: {l}");
    }
}

/// The last line names the signal and the thread, and says nothing was
/// lost; returns the drain's milliseconds.
fn assert_notice(lines: &[String], case: &str, signal: &str) -> u64 {
    let last = lines.last().map(String::as_str).unwrap_or("");
    let want = format!("fatal signal {signal} on thread '");
    assert!(last.contains(&want), "{case}: last line {last:?}");
    assert!(last.ends_with(" ms, 0 lost"), "{case}: {last:?}");
    let ms = last
        .split(" records drained in ")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{case}: {last:?}"));
    assert!(ms < 1000, "{case}: the drain took {ms} ms");
    ms
}

#[test]
fn fatal_signals_drain_the_ring_then_die_of_the_signal() {
    let dir = tempfile::tempdir().unwrap();
    for (case, sig, name) in [
        ("segv", libc::SIGSEGV, "SIGSEGV"),
        ("abort", libc::SIGABRT, "SIGABRT"),
        ("bus", libc::SIGBUS, "SIGBUS"),
        // Rust's own handler prints its message, then aborts.
        ("overflow", libc::SIGABRT, "SIGSEGV"),
        ("double-panic", libc::SIGABRT, "SIGABRT"),
        ("in-handler", libc::SIGSEGV, "SIGSEGV"),
        // The macros' front end: the same ring, other records.
        ("segv-macros", libc::SIGSEGV, "SIGSEGV"),
        ("abort-macros", libc::SIGABRT, "SIGABRT"),
    ] {
        let (status, lines, took, err) = run(case, dir.path());
        assert_eq!(status.signal(), Some(sig), "{case}: {status:?}\n{err}");
        assert_every_record(&lines, case);
        let ms = assert_notice(&lines, case, name);
        eprintln!("CRASH {case}: {N} of {N} on disk, drain {ms} ms, child {took:?}");
        if case == "overflow" {
            assert!(
                err.contains("has overflowed its stack"),
                "{case}: Rust's message: {err}"
            );
        }
    }
}

/// The same crash without the drain: what the writer had not written dies
/// with the process, and nothing says so in the file (the writer is held
/// at `HOLD`, so the records after it are in the ring when the crash hits).
#[test]
fn without_the_drain_the_ring_dies_with_the_process() {
    let dir = tempfile::tempdir().unwrap();
    let (status, lines, took, err) = run_with("segv", dir.path(), true);
    assert_eq!(status.signal(), Some(libc::SIGSEGV), "{status:?}\n{err}");
    let on_disk = lines.iter().filter(|l| l.starts_with("line ")).count();
    eprintln!("CRASH segv without the drain: {on_disk} of {N} on disk, child {took:?}");
    assert!(
        on_disk <= 5000,
        "{on_disk} records on disk past the held writer"
    );
    for (i, l) in lines.iter().filter(|l| l.starts_with("line ")).enumerate() {
        assert_eq!(l, &format!("line {i}"));
    }
    assert!(!lines.iter().any(|l| l.starts_with("fatal signal")));
    // No drain waited for the held writer (it would have, 30 s).
    assert!(took < Duration::from_secs(20), "{took:?}");
}

/// The writer thread itself crashes: nobody can drain, so nothing waits;
/// the process dies of the signal at once.
#[test]
fn a_crash_on_the_writer_thread_dies_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let (status, _lines, took, err) = run("writer", dir.path());
    assert_eq!(status.signal(), Some(libc::SIGSEGV), "{status:?}\n{err}");
    assert!(took < Duration::from_secs(5), "{took:?}");
}

/// A sink that never returns: the drain ends at its bound (300 ms here),
/// and the process still dies of its signal.
#[test]
fn a_hung_sink_cannot_hold_the_crash_past_its_bound() {
    let dir = tempfile::tempdir().unwrap();
    let (status, _lines, took, err) = run("hung", dir.path());
    assert_eq!(status.signal(), Some(libc::SIGSEGV), "{status:?}\n{err}");
    assert!(took >= Duration::from_millis(300), "{took:?}");
    assert!(took < Duration::from_secs(3), "{took:?}");
}

/// A second fatal signal during the drain (another thread crashes while
/// the first waits on a sink that never returns, with a 20 s bound) ends
/// the process at once.
#[test]
fn a_second_crash_during_the_drain_ends_the_process() {
    let dir = tempfile::tempdir().unwrap();
    let (status, _lines, took, err) = run("second", dir.path());
    assert_eq!(status.signal(), Some(libc::SIGSEGV), "{status:?}\n{err}");
    assert!(took < Duration::from_secs(3), "{took:?}");
}

/// A program built with `panic = "abort"` (the `crash_panic_abort`
/// example, built here with the workspace's `panic-abort` profile) panics
/// after logging: with nowait's panic hook (the default) and without it
/// (then the crash handler alone drains), every record is on disk and the
/// process dies of SIGABRT, as it would without nowait.
#[cfg(target_os = "linux")] // the example pins itself to one CPU with sched_setaffinity
#[test]
fn a_panic_abort_build_loses_nothing_and_dies_of_sigabrt() {
    use std::process::{Command, Stdio};

    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let target = root.join("target/panic-abort");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let built = Command::new(cargo)
        .current_dir(&root)
        .args([
            "build",
            "-q",
            "--profile",
            "panic-abort",
            "-p",
            "nowait-core",
        ])
        .args(["--example", "crash_panic_abort"])
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .unwrap();
    assert!(
        built.status.success(),
        "cannot build the example: {}",
        String::from_utf8_lossy(&built.stderr)
    );
    let exe = target.join("panic-abort/examples/crash_panic_abort");
    let dir = tempfile::tempdir().unwrap();
    for hook in [true, false] {
        let file = dir.path().join(format!("hook-{hook}.log"));
        let mut cmd = Command::new(&exe);
        cmd.arg(&file).stdout(Stdio::null()).stderr(Stdio::piped());
        if !hook {
            cmd.env("NOWAIT_NO_PANIC_HOOK", "1");
        }
        let start = Instant::now();
        let out = cmd.output().unwrap();
        let took = start.elapsed();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            out.status.signal(),
            Some(libc::SIGABRT),
            "{:?}: {err}",
            out.status
        );
        assert!(
            err.contains("a panic in a panic = \"abort\" build"),
            "{err}"
        );
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<String> = text.lines().map(str::to_owned).collect();
        assert_every_record(&lines, "panic-abort");
        let case = format!("panic-abort, panic hook {hook}");
        let ms = assert_notice(&lines, &case, "SIGABRT");
        eprintln!("CRASH {case}: {N} of {N} on disk, drain {ms} ms, child {took:?}");
    }
}
