//! Test support shared by nowait's crates (unpublished):
//!
//! - writers: [`MemoryWriter`], an in-memory sink the test reads back,
//!   and the faulty devices around it ([`Slow`], [`Flaky`], [`Sluggish`]);
//! - [`child`]: this test binary re-run as a child process, bounded in
//!   time and killed with whatever it started;
//! - [`Counting`], a global allocator that counts allocations made on
//!   opted-in threads, and (feature `core`) [`wait_once_for_room`];
//! - [`Rng`], a seeded generator so that randomised tests replay;
//! - [`read_rolled`] and [`read_log`], the text a log file or a rolling
//!   sink's directory holds; [`debian_tool`] and [`skip_missing_tool`]
//!   for tests that drive an outside program;
//! - (feature `tls`) [`ca::Ca`], certificates made in the test;
//! - [`receiver::Receiver`], nowait-core's OTLP test receiver run on
//!   loopback.
//!
//! # Dependencies
//!
//! nowait-core dev-depends on this crate, so this crate depends on
//! nowait-core only behind the `core` feature. In an integration test
//! both are the same nowait-core (one library, one set of types). In
//! nowait-core's own unit tests (`--lib`) the crate under test is a
//! second copy: they use only the helpers that do not name nowait-core's
//! types (`Rng`, `Counting`, the writers).
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::{self, Write};
use std::sync::{Arc, Mutex};

#[cfg(feature = "tls")]
pub mod ca;
pub mod child;
pub mod receiver;

/// An in-memory `io::Write` sink: every clone appends to one shared
/// buffer, which the test reads back ([`text`](Self::text),
/// [`lines`](Self::lines)) or drains ([`take`](Self::take)). Writes always
/// succeed in full; a poisoned lock is ignored (a panicking writer thread
/// does not hide what was written before it).
///
/// # Examples
///
/// ```
/// use std::io::Write;
///
/// let out = nowait_testkit::MemoryWriter::default();
/// out.clone().write_all(b"line\n").unwrap();
/// assert_eq!(out.text(), "line\n");
/// assert_eq!(out.take(), "line\n");
/// assert_eq!(out.text(), "");
/// ```
#[derive(Clone, Debug, Default)]
pub struct MemoryWriter(Arc<Mutex<Vec<u8>>>);

impl MemoryWriter {
    fn bytes(&self) -> std::sync::MutexGuard<'_, Vec<u8>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes what was written so far, leaving the buffer empty.
    ///
    /// # Panics
    ///
    /// If the output is not UTF-8 (nowait's formats always write UTF-8).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(nowait_testkit::MemoryWriter::default().take(), "");
    /// ```
    pub fn take(&self) -> String {
        let bytes = std::mem::take(&mut *self.bytes());
        String::from_utf8(bytes).expect("sink output is UTF-8")
    }

    /// A copy of what was written so far; the buffer keeps it.
    ///
    /// # Panics
    ///
    /// If the output is not UTF-8.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(nowait_testkit::MemoryWriter::default().text(), "");
    /// ```
    pub fn text(&self) -> String {
        String::from_utf8(self.bytes().clone()).expect("sink output is UTF-8")
    }

    /// [`text`](Self::text), one string a line (without line breaks).
    ///
    /// # Panics
    ///
    /// If the output is not UTF-8.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::io::Write;
    ///
    /// let out = nowait_testkit::MemoryWriter::default();
    /// out.clone().write_all(b"a\nb\n").unwrap();
    /// assert_eq!(out.lines(), ["a", "b"]);
    /// ```
    pub fn lines(&self) -> Vec<String> {
        self.text().lines().map(str::to_owned).collect()
    }
}

impl Write for MemoryWriter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.bytes().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A [`MemoryWriter`] behind a slow device: each write call first sleeps
/// `delay`, then takes at most `chunk` bytes (a short write).
///
/// # Examples
///
/// ```
/// use std::io::Write;
/// use std::time::Duration;
///
/// let inner = nowait_testkit::MemoryWriter::default();
/// let mut slow = nowait_testkit::Slow { inner: inner.clone(), delay: Duration::ZERO, chunk: 2 };
/// assert_eq!(slow.write(b"abc").unwrap(), 2);
/// assert_eq!(inner.text(), "ab");
/// ```
#[derive(Clone, Debug)]
pub struct Slow {
    /// Where the bytes go.
    pub inner: MemoryWriter,
    /// How long each write call sleeps first.
    pub delay: std::time::Duration,
    /// The most bytes one write call takes.
    pub chunk: usize,
}

impl Write for Slow {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        std::thread::sleep(self.delay);
        let n = buf.len().min(self.chunk);
        self.inner.write(&buf[..n])
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A [`MemoryWriter`] whose first `fail_calls` write calls fail with
/// [`disk_full`]; the calls after them succeed.
///
/// # Examples
///
/// ```
/// use std::io::Write;
///
/// let mut w = nowait_testkit::Flaky { inner: Default::default(), fail_calls: 1 };
/// assert!(w.write(b"a").is_err());
/// assert_eq!(w.write(b"a").unwrap(), 1);
/// ```
#[derive(Clone, Debug)]
pub struct Flaky {
    /// Where the bytes go once writes succeed.
    pub inner: MemoryWriter,
    /// How many write calls are still to fail.
    pub fail_calls: usize,
}

impl Write for Flaky {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.fail_calls > 0 {
            self.fail_calls -= 1;
            return Err(disk_full());
        }
        self.inner.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A full disk, as every platform spells it (the raw codes differ:
/// `ENOSPC` is 28 on Unix, where Windows' 28 is "the printer is out of
/// paper").
///
/// # Examples
///
/// ```
/// assert!(nowait_testkit::disk_full().to_string().contains("No space left"));
/// ```
pub fn disk_full() -> io::Error {
    io::Error::other("No space left on device (injected)")
}

/// A reader that went away, as every platform spells it.
///
/// # Examples
///
/// ```
/// let e = nowait_testkit::broken_pipe();
/// assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe);
/// ```
pub fn broken_pipe() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "Broken pipe (injected)")
}

/// A global allocator that forwards to the system allocator and counts the
/// allocations (and reallocations) made on threads inside [`count`].
///
/// # Examples
///
/// ```
/// #[global_allocator]
/// static ALLOC: nowait_testkit::Counting = nowait_testkit::Counting;
///
/// let n = nowait_testkit::count(|| {
///     let v: Vec<u8> = Vec::with_capacity(8);
///     drop(v);
/// });
/// assert_eq!(n, 1);
/// ```
#[derive(Debug)]
pub struct Counting;

thread_local! {
    /// `Some(n)` while this thread counts: `n` allocations so far.
    static COUNTED: Cell<Option<u64>> = const { Cell::new(None) };
}

fn note() {
    let _ = COUNTED.try_with(|c| {
        if let Some(n) = c.get() {
            c.set(Some(n + 1));
        }
    });
}

/// Runs `f` and returns how many allocations it made on this thread
/// (other threads are not counted; only meaningful with [`Counting`]
/// installed as the global allocator).
///
/// # Examples
///
/// ```
/// assert_eq!(nowait_testkit::count(|| {}), 0);
/// ```
pub fn count(f: impl FnOnce()) -> u64 {
    COUNTED.with(|c| c.set(Some(0)));
    f();
    COUNTED.with(|c| c.take()).unwrap_or(0)
}

// SAFETY: forwards every call to the system allocator unchanged; it only
// counts, without allocating itself.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, which
        // is the system allocator's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System` with `layout` (we forward all).
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        // SAFETY: as for `dealloc`, and the caller upholds `realloc`'s
        // contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// A small deterministic generator (xorshift64*), so that a randomised test
/// that fails names a seed that replays it.
///
/// # Examples
///
/// ```
/// let mut rng = nowait_testkit::Rng::new(7);
/// assert!(rng.below(10) < 10);
/// ```
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed` (any value; zero is mapped to a non-zero state).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    /// The next 64 random bits.
    #[allow(clippy::should_implement_trait)]
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// The marker nowait writes after a field value it cut to fit the ring.
pub const CUT_MARK: &str = "… [truncated]";

/// For the oversized-record tests of every front end: `text` holds one
/// 10 KiB value of `x`s cut to fit a 4 KiB ring; checks how much was kept
/// and returns the cut value as it must appear (`xx…x` then `marker`).
///
/// # Panics
///
/// If fewer than 1900 or more than 2039 `x`s were kept.
///
/// # Examples
///
/// ```
/// let line = format!("body={}[cut]", "x".repeat(2000));
/// assert_eq!(nowait_testkit::expect_cut(&line, "[cut]"), line["body=".len()..]);
/// ```
pub fn expect_cut(text: &str, marker: &str) -> String {
    let kept = text.matches('x').count();
    assert!((1900..2040).contains(&kept), "{kept} bytes kept");
    format!("{}{marker}", "x".repeat(kept))
}

/// A test that needs a tool it cannot find: prints why and returns (the
/// caller skips), unless `NOWAIT_REQUIRE_TEST_TOOLS=1` (set by CI once it
/// installed the tools), where a missing tool is a failure, so that a test
/// cannot pass by skipping.
///
/// # Panics
///
/// Under `NOWAIT_REQUIRE_TEST_TOOLS=1`, always.
///
/// # Examples
///
/// ```no_run
/// if std::process::Command::new("rotel-agent").arg("--help").status().is_err() {
///     return nowait_testkit::skip_missing_tool("rotel-agent is not installed");
/// }
/// ```
pub fn skip_missing_tool(why: &str) {
    let required = std::env::var_os("NOWAIT_REQUIRE_TEST_TOOLS").is_some_and(|v| v == "1");
    assert!(!required, "NOWAIT_REQUIRE_TEST_TOOLS=1 but {why}");
    eprintln!("skipping: {why}");
}

/// Finds a program from a Debian package that an integration test drives
/// (`rsyslogd`, `logrotate`), installing the package with `apt-get` first
/// when it is missing and the test runs as root, so that `cargo test` on a
/// fresh machine runs these tests rather than skipping them.
///
/// Returns `None`, after printing why and how to install it by hand, when
/// the program cannot be had; the caller then skips its test. Concurrent
/// callers are serialised by a lock file, since `apt-get` allows one run at
/// a time.
///
/// # Examples
///
/// ```no_run
/// if let Some(logrotate) = nowait_testkit::debian_tool("logrotate", "logrotate") {
///     std::process::Command::new(logrotate).arg("--version").status().unwrap();
/// }
/// ```
pub fn debian_tool(program: &str, package: &str) -> Option<std::path::PathBuf> {
    use std::path::PathBuf;
    use std::process::{Command, Stdio};

    fn find(program: &str) -> Option<PathBuf> {
        let path = std::env::var_os("PATH").unwrap_or_default();
        std::env::split_paths(&path)
            .chain(["/usr/sbin", "/sbin", "/usr/bin"].map(PathBuf::from))
            .map(|dir| dir.join(program))
            .find(|p| p.is_file())
    }

    if let Some(p) = find(program) {
        return Some(p);
    }
    static LOCK: Mutex<()> = Mutex::new(());
    let _guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = find(program) {
        return Some(p);
    }
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"));
    // `flock` serialises with apt-get runs of other test binaries.
    let apt = |args: &[&str]| {
        Command::new("flock")
            .arg("/tmp/nowait-apt.lock")
            .arg("apt-get")
            .args(args)
            .env("DEBIAN_FRONTEND", "noninteractive")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    let install = ["install", "-y", "-q", "--no-install-recommends", package];
    // The package lists may be missing on a fresh machine: update once.
    if root && find("apt-get").is_some() && !apt(&install) && apt(&["update", "-q"]) {
        apt(&install);
    }
    let found = find(program);
    if found.is_none() {
        eprintln!(
            "SKIPPED: `{program}` is not installed and could not be installed \
             (run `sudo apt-get install {package}` and re-run the tests)"
        );
    }
    found
}

/// Pins the calling thread, and the threads it starts afterwards, to
/// CPU 0 (`sched_setaffinity` on this thread alone): a logging thread
/// pinned so shares its CPU with any thread on it, as on a loaded
/// machine.
///
/// # Panics
///
/// If `sched_setaffinity` fails (CPU 0 not allowed to this process).
///
/// # Examples
///
/// ```no_run
/// nowait_testkit::pin_to_cpu0();
/// ```
#[cfg(target_os = "linux")]
pub fn pin_to_cpu0() {
    // SAFETY: a zeroed cpu_set_t is empty; the calls only read and write
    // the set they are given.
    let r = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(0, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set)
    };
    assert_eq!(r, 0, "sched_setaffinity: {}", io::Error::last_os_error());
}

/// A small tmpfs mounted on a temporary directory of its own, for tests
/// of a full file system; unmounted when dropped (retried for a second
/// while busy, then lazily), then the directory is removed.
///
/// # Examples
///
/// ```no_run
/// let Some(fs) = nowait_testkit::Tmpfs::mount("1m") else {
///     return; // not root: skipped, and said so
/// };
/// std::fs::write(fs.path().join("a"), "x").unwrap();
/// ```
#[cfg(target_os = "linux")]
#[derive(Debug)]
pub struct Tmpfs(tempfile::TempDir);

#[cfg(target_os = "linux")]
impl Tmpfs {
    /// Mounts a tmpfs of `size` (`mount -o size=`, such as `1m`), or
    /// returns `None` after printing why (`SKIPPED <test>: ...`; mounting
    /// needs root or `CAP_SYS_ADMIN`), and the caller skips its test.
    ///
    /// # Panics
    ///
    /// If no temporary directory can be made.
    pub fn mount(size: &str) -> Option<Tmpfs> {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .output();
        match &mounted {
            Ok(o) if o.status.success() => Some(Tmpfs(dir)),
            other => {
                let why = match other {
                    Ok(o) => String::from_utf8_lossy(&o.stderr).trim().to_owned(),
                    Err(e) => e.to_string(),
                };
                let test = std::thread::current().name().unwrap_or("test").to_owned();
                eprintln!(
                    "SKIPPED {test}: cannot mount a {size} tmpfs \
                     (needs root or CAP_SYS_ADMIN): {why}"
                );
                None
            }
        }
    }

    /// Where it is mounted.
    pub fn path(&self) -> &std::path::Path {
        self.0.path()
    }
}

#[cfg(target_os = "linux")]
impl Drop for Tmpfs {
    fn drop(&mut self) {
        use std::process::{Command, Stdio};
        for _ in 0..50 {
            let ok = Command::new("umount")
                .arg(self.path())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success());
            if ok {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let _ = Command::new("umount").arg("-l").arg(self.path()).status();
    }
}

/// A writer that takes every byte but sleeps 1 ms per call: a sink slow
/// enough that a small ring behind it fills, so a producer under the
/// blocking policy has to wait for room.
///
/// # Examples
///
/// ```
/// use std::io::Write;
///
/// let mut w = nowait_testkit::Sluggish;
/// assert_eq!(w.write(b"abc").unwrap(), 3);
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct Sluggish;

impl Write for Sluggish {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        std::thread::sleep(std::time::Duration::from_millis(1));
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The text of every file in a rolling sink's directory `dir`, each file's
/// lines whole (a file a kill cut mid-line gets a line break), archives
/// decompressed. A compression under way (`NAME.gz.TOKEN.tmp`, or
/// `NAME.gz.tmp`) is passed over,
/// and an archive whose source is still there with the same text (the
/// source not yet removed) is read once. Files come in directory order.
///
/// # Panics
///
/// If `dir` cannot be read or an archive does not decompress.
///
/// # Examples
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("app.log"), "one\ntwo").unwrap();
/// assert_eq!(nowait_testkit::read_rolled(dir.path()), "one\ntwo\n");
/// ```
pub fn read_rolled(dir: &std::path::Path) -> String {
    use std::io::Read;
    let mut text = String::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".tmp") && name.contains(".gz.") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap_or_default();
        let part = match name.strip_suffix(".gz") {
            Some(plain) => {
                let mut unpacked = String::new();
                flate2::read::GzDecoder::new(&bytes[..])
                    .read_to_string(&mut unpacked)
                    .unwrap();
                if std::fs::read(dir.join(plain)).is_ok_and(|p| p == unpacked.as_bytes()) {
                    continue;
                }
                unpacked
            }
            None => String::from_utf8_lossy(&bytes).into_owned(),
        };
        text.push_str(&part);
        if !part.is_empty() && !part.ends_with('\n') {
            text.push('\n');
        }
    }
    text
}

/// The text of a log: a file's (empty if it does not exist), or every
/// file's of a rolling sink's directory ([`read_rolled`]).
///
/// # Examples
///
/// ```
/// let dir = tempfile::tempdir().unwrap();
/// assert_eq!(nowait_testkit::read_log(&dir.path().join("none.log")), "");
/// ```
pub fn read_log(path: &std::path::Path) -> String {
    if path.is_dir() {
        read_rolled(path)
    } else {
        std::fs::read_to_string(path).unwrap_or_default()
    }
}

/// Makes this thread wait once for room in a full ring, so that a
/// measured phase after it is not this thread's first wait: the portable
/// backend's wait (the parking lot) registers a thread on its first wait,
/// which allocates once (Linux's futex allocates nothing). Builds a logger
/// of its own (1 KiB ring, blocking policy, a [`Sluggish`] sink), logs
/// until its `blocked_waits` counts a wait, and shuts it down.
///
/// # Examples
///
/// ```
/// nowait_testkit::wait_once_for_room();
/// ```
#[cfg(feature = "core")]
pub fn wait_once_for_room() {
    use nowait_core::{Builder, FullPolicy, Level, Sink};
    let (logger, guard) = Builder::new()
        .capacity(1024)
        .full_policy(FullPolicy::Block)
        .sink(Sink::writer(Sluggish))
        .build()
        .unwrap();
    while logger.stats().blocked_waits == 0 {
        let _ = logger.log(Level::Info, &"x".repeat(200));
    }
    drop(guard);
}

/// The outcomes a sink counts for the records it took: written, dropped
/// (overflow, failed, format), filtered and abandoned. Each record the
/// writer took ends in exactly one of them, so once the logger is shut
/// down this equals the records it took (a backtrace's kept records
/// aside while it runs).
///
/// # Examples
///
/// ```
/// let (logger, guard) = nowait_core::Builder::new()
///     .sink(nowait_core::Sink::writer(std::io::sink()))
///     .build()
///     .unwrap();
/// logger.log(nowait_core::Level::Info, "one").unwrap();
/// drop(guard);
/// let s = logger.stats();
/// assert_eq!(nowait_testkit::outcomes(&s.sinks[0]), s.records_written);
/// ```
#[cfg(feature = "core")]
pub fn outcomes(s: &nowait_core::stats::SinkStats) -> u64 {
    s.records_written
        + s.dropped_overflow
        + s.dropped_failed
        + s.dropped_format
        + s.filtered
        + s.abandoned
}

/// For the oversized-record tests of every front end: flushes `logger`,
/// checks that it dropped nothing (an oversized record is cut, never
/// dropped), takes what `text` holds and returns it with the cut value
/// it must contain ([`expect_cut`] with [`CUT_MARK`]).
///
/// # Panics
///
/// If the flush fails, a record was dropped, or the cut is off.
///
/// # Examples
///
/// ```
/// use nowait_core::{Builder, Sink};
/// use nowait_core::format::Text;
///
/// let text = nowait_testkit::MemoryWriter::default();
/// let (logger, _guard) = Builder::new()
///     .capacity(4096)
///     .sink(Sink::writer(text.clone()).format(Text::new()))
///     .build()
///     .unwrap();
/// nowait_core::set_global(logger.clone()).unwrap();
/// let body = "x".repeat(10 * 1024);
/// nowait_core::warn!(body = body.as_str(), "upload");
/// let (out, cut) = nowait_testkit::take_cut(&logger, &text);
/// assert!(out.contains(&format!("body=\"{cut}\"")), "{out}");
/// ```
#[cfg(feature = "core")]
pub fn take_cut(logger: &nowait_core::Logger, text: &MemoryWriter) -> (String, String) {
    logger.flush().unwrap();
    assert_eq!(logger.stats().dropped(), 0);
    let text = text.take();
    let cut = expect_cut(&text, CUT_MARK);
    (text, cut)
}

/// A logger that writes to two in-memory sinks, for the tests that read
/// one event in both formats: what [`text_and_json`] gives.
#[cfg(feature = "core")]
#[derive(Debug)]
pub struct TextAndJson {
    /// The logger.
    pub logger: nowait_core::Logger,
    /// Its guard (dropping it shuts the logger down).
    pub guard: nowait_core::Guard,
    /// The Text sink's output: no colour, no time.
    pub text: MemoryWriter,
    /// The JSON sink's output.
    pub json: MemoryWriter,
}

/// Builds `builder` with panics not caught, no flush at exit, and two
/// in-memory sinks: Text (no colour, no time), then `json`.
///
/// # Panics
///
/// If the build fails.
///
/// # Examples
///
/// ```
/// use nowait_core::{Builder, Level};
/// use nowait_core::format::Json;
///
/// let t = nowait_testkit::text_and_json(Builder::new().capacity(4096), Json::new());
/// t.logger.log(Level::Warn, "disk full").unwrap();
/// t.logger.flush().unwrap();
/// assert_eq!(t.text.take(), "disk full\n");
/// assert!(t.json.take().contains("\"disk full\""));
/// ```
#[cfg(feature = "core")]
pub fn text_and_json(
    builder: nowait_core::Builder,
    json: nowait_core::format::Json,
) -> TextAndJson {
    use nowait_core::format::Text;
    use nowait_core::Sink;
    let (text_out, json_out) = (MemoryWriter::default(), MemoryWriter::default());
    let (logger, guard) = builder
        .catch_panics(false)
        .flush_on_exit(false)
        .sink(Sink::writer(text_out.clone()).format(Text::new().ansi(false).with_time(false)))
        .sink(Sink::writer(json_out.clone()).format(json))
        .build()
        .unwrap();
    TextAndJson {
        logger,
        guard,
        text: text_out,
        json: json_out,
    }
}
