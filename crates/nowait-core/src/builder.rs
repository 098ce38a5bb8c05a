//! [`Builder`]: configures and starts a logger.

use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use crate::accounting::policy::FullPolicy;
use crate::accounting::stats::SinkCounters;
use crate::durable::DurableFile;
use crate::error::BuildError;
use crate::format::MakeFormat;
use crate::level::Level;
use crate::logger::Logger;
use crate::process::guard::Guard;
use crate::process::live::HookOptions;
use crate::ring::{Ring, MAX_CAPACITY};
use crate::shared::lanes::DEFAULT_LANES;
use crate::shared::{Config, Shared, Start};
use crate::sink::{OpenSinks, Sink};
use crate::writer;

/// The most lanes a logger may have ([`Builder::lanes`]).
const MAX_LANES: usize = 4096;

/// Configures and starts a logger.
///
/// # Examples
///
/// ```
/// use std::time::Duration;
/// use nowait_core::{Builder, FullPolicy, Level, Sink};
///
/// let dir = tempfile::tempdir().unwrap();
/// let (logger, guard) = Builder::new()
///     .capacity(4 << 20)
///     .batch_size(128 << 10)
///     .flush_interval(Duration::from_millis(2))
///     .full_policy(FullPolicy::Drop)
///     .protect(Level::Warn, 0.8)
///     .sink(Sink::stdout())
///     .sink(Sink::file(dir.path().join("app.log")))
///     .build()
///     .unwrap();
/// # drop(guard);
/// ```
pub struct Builder {
    capacity: usize,
    batch_size: usize,
    flush_interval: Duration,
    policy: Option<FullPolicy>,
    protect: Level,
    high_water: f64,
    sinks: Vec<Sink>,
    format: Arc<dyn MakeFormat>,
    shutdown_timeout: Duration,
    flush_timeout: Option<Duration>,
    panic_timeout: Duration,
    crash_timeout: Duration,
    idle_interval: Duration,
    write_through: Option<Level>,
    fsync: bool,
    catch_panics: bool,
    flush_on_exit: bool,
    drain_on_signals: bool,
    reopen_on_sighup: bool,
    dump_recent_on_signal: bool,
    drain_on_crash: bool,
    crash_durable: Option<PathBuf>,
    thread_name: String,
    writer_cpu: Option<usize>,
    lanes: usize,
    lane_capacity: Option<usize>,
}

impl fmt::Debug for Builder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("capacity", &self.capacity)
            .field("batch_size", &self.batch_size)
            .field("flush_interval", &self.flush_interval)
            .field("policy", &self.policy)
            .field("protect", &self.protect)
            .field("high_water", &self.high_water)
            .field("sinks", &self.sinks)
            .finish_non_exhaustive()
    }
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

/// The default bound on a fatal signal's drain ([`Builder::crash_timeout`]).
pub(crate) const DEFAULT_CRASH_TIMEOUT: Duration = Duration::from_secs(1);

impl Builder {
    /// The ring's capacity unless [`capacity`](Self::capacity) says
    /// otherwise: 1 MiB.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(nowait_core::Builder::DEFAULT_CAPACITY, 1 << 20);
    /// ```
    pub const DEFAULT_CAPACITY: usize = 1 << 20;
    /// The batch size unless [`batch_size`](Self::batch_size) says
    /// otherwise: the writer writes a sink once this much is formatted
    /// (64 KiB).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(nowait_core::Builder::DEFAULT_BATCH_SIZE, 64 << 10);
    /// ```
    pub const DEFAULT_BATCH_SIZE: usize = 64 << 10;
    /// The writer's wake-up interval while records flow, unless
    /// [`flush_interval`](Self::flush_interval) says otherwise (3 ms).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// assert_eq!(nowait_core::Builder::DEFAULT_FLUSH_INTERVAL, Duration::from_millis(3));
    /// ```
    pub const DEFAULT_FLUSH_INTERVAL: Duration = Duration::from_millis(3);
    /// The writer's longest sleep while no records come, unless
    /// [`idle_interval`](Self::idle_interval) says otherwise (50 ms).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// assert_eq!(nowait_core::Builder::DEFAULT_IDLE_INTERVAL, Duration::from_millis(50));
    /// ```
    pub const DEFAULT_IDLE_INTERVAL: Duration = Duration::from_millis(50);

    /// A builder with the defaults: 1 MiB ring, 64 KiB batches, a 3 ms
    /// writer interval (50 ms when idle), WARN protected above 80 %, 5 s
    /// shutdown timeout, panics logged and flushed to the files (500 ms at
    /// most), `process::exit` drained, the [`Text`](crate::format::Text) format,
    /// and stdout if no sink is added.
    ///
    /// # Examples
    ///
    /// ```
    /// let builder = nowait_core::Builder::new();
    /// # let _ = builder;
    /// ```
    pub fn new() -> Builder {
        Builder {
            capacity: Self::DEFAULT_CAPACITY,
            batch_size: Self::DEFAULT_BATCH_SIZE,
            flush_interval: Self::DEFAULT_FLUSH_INTERVAL,
            policy: None,
            protect: Level::Warn,
            high_water: 0.8,
            sinks: Vec::new(),
            format: Arc::new(crate::format::Text::new()),
            shutdown_timeout: Duration::from_secs(5),
            flush_timeout: None,
            panic_timeout: Duration::from_millis(500),
            crash_timeout: DEFAULT_CRASH_TIMEOUT,
            idle_interval: Self::DEFAULT_IDLE_INTERVAL,
            write_through: None,
            fsync: false,
            catch_panics: true,
            flush_on_exit: true,
            drain_on_signals: false,
            reopen_on_sighup: false,
            dump_recent_on_signal: false,
            drain_on_crash: true,
            crash_durable: None,
            thread_name: "nowait-writer".into(),
            writer_cpu: None,
            lanes: DEFAULT_LANES,
            lane_capacity: None,
        }
    }

    /// The ring's capacity in bytes (rounded up to a power of two; default
    /// 1 MiB). Each record takes 8 bytes of header plus its payload rounded
    /// up to 8, and the largest record is half the ring. Memory is this plus
    /// 1/8 for state bytes, allocated once, whatever the number of threads.
    ///
    /// # Examples
    ///
    /// ```
    /// let builder = nowait_core::Builder::new().capacity(8 << 20);
    /// # let _ = builder;
    /// ```
    ///
    /// At most 1 GiB ([`build`](Builder::build) says so otherwise).
    pub fn capacity(mut self, bytes: usize) -> Builder {
        self.capacity = bytes;
        self
    }

    /// How many threads get a lane of their own (default 0: off; at most
    /// 4096, else [`build`](Builder::build) fails). Opt in where several
    /// threads log at once: lanes lower the per-call latency of threads
    /// that log at the same time and cost saturated throughput to a file
    /// (the writer merges the lanes by timestamp); the measured trade-off
    /// is in the repository's benchmark notes.
    ///
    /// A lane is a small ring that one thread fills without sharing a
    /// cache line with other producers; the writer moves lane records into
    /// the ring, merged by timestamp. The first `count` threads that log
    /// take one each and give it back when they exit; later threads claim
    /// in the shared ring directly. Memory is `count ×`
    /// [`lane_capacity`](Builder::lane_capacity) (plus 1/8), allocated at
    /// build, whatever the number of threads. A crash-durable logger has no
    /// lanes (its records must be in the file from the start). See
    /// `docs::design`, "Lanes".
    ///
    /// # Examples
    ///
    /// ```
    /// // A server with 64 worker threads that all log.
    /// let builder = nowait_core::Builder::new().lanes(64);
    /// # let _ = builder;
    /// ```
    pub fn lanes(mut self, count: usize) -> Builder {
        self.lanes = count;
        self
    }

    /// Pins the writer thread to CPU `cpu` (default: not pinned; the
    /// system places it). CPUs are numbered from 0 as the system numbers
    /// them: the numbers `taskset -c` takes on Linux, `cpuset -l` on
    /// FreeBSD; on Windows a CPU of the thread's processor group, 0 to 63.
    ///
    /// Give the writer a CPU the request threads do not use (and keep
    /// them off it, with `taskset` or your runtime's own pinning): the
    /// writer then never takes a request thread's CPU, or its caches,
    /// when it wakes. This is the setup quill's latency benchmark uses.
    /// Measure what it is worth on your machine (`latency_load` in
    /// the repository's latency benchmark takes the writer's CPU as a knob): on a virtual machine,
    /// whose CPUs are not the host's cores, it may not help at all.
    ///
    /// [`build`](Builder::build) fails if the system cannot pin a thread
    /// (macOS, whose thread affinity is only a hint; NetBSD; OpenBSD) or
    /// refuses this CPU (it does not exist, or lies outside the process's
    /// cgroup, cpuset or affinity mask). A child process after `fork()`
    /// pins its own writer to the same CPU.
    ///
    /// # Examples
    ///
    /// ```
    /// let builder = nowait_core::Builder::new().writer_cpu(0);
    /// # let _ = builder;
    /// ```
    pub fn writer_cpu(mut self, cpu: usize) -> Builder {
        self.writer_cpu = Some(cpu);
        self
    }

    /// Bytes of each lane (rounded up to a power of two; default 1/16 of
    /// the [`capacity`](Builder::capacity), at least 256 bytes and at most
    /// 64 KiB, and never more than the capacity). A lane is a thread's
    /// room between two wake-ups of the writer: what a thread logs beyond
    /// it in one [`flush_interval`](Builder::flush_interval) goes to the
    /// shared ring, where the [`FullPolicy`] applies, as does a record
    /// larger than half a lane.
    ///
    /// # Examples
    ///
    /// ```
    /// let builder = nowait_core::Builder::new().lane_capacity(256 << 10);
    /// # let _ = builder;
    /// ```
    pub fn lane_capacity(mut self, bytes: usize) -> Builder {
        self.lane_capacity = Some(bytes);
        self
    }

    /// Bytes formatted per sink before the writer issues a `write` (default
    /// 64 KiB; between 1 byte and 1 GiB, else [`build`](Builder::build)
    /// fails). At the end of each wake-up whatever is formatted is written
    /// too, so this bounds batch size, not latency.
    ///
    /// # Examples
    ///
    /// ```
    /// let builder = nowait_core::Builder::new().batch_size(256 << 10);
    /// # let _ = builder;
    /// ```
    pub fn batch_size(mut self, bytes: usize) -> Builder {
        self.batch_size = bytes;
        self
    }

    /// How often the writer wakes while records flow (default 3 ms). A
    /// record waits at most about this long before it is written while
    /// records flow. Producers never wake the writer: while none come, the
    /// writer doubles its sleep up to [`idle_interval`](Builder::idle_interval);
    /// while they come fast enough to fill an eighth of the ring within
    /// the interval, it wakes sooner (every 100 us at the most), so that
    /// a ring too small for the interval does not make them drop.
    ///
    /// # Examples
    ///
    /// ```
    /// let builder = nowait_core::Builder::new().flush_interval(std::time::Duration::from_millis(1));
    /// # let _ = builder;
    /// ```
    pub fn flush_interval(mut self, interval: Duration) -> Builder {
        self.flush_interval = interval;
        self
    }

    /// What a full ring does. Default:
    /// [`FullPolicy::BlockTimeout`]`(`[`FullPolicy::DEFAULT_TIMEOUT`]`)` (100 ms)
    /// if any sink is a regular file or a custom writer (such output should
    /// be complete, but a hung disk must not park the request threads for
    /// longer than that), [`FullPolicy::Drop`] if all sinks are terminals,
    /// pipes or sockets. [`FullPolicy::Block`] (no bound) only if asked for.
    ///
    /// # Examples
    ///
    /// ```
    /// let builder = nowait_core::Builder::new().full_policy(nowait_core::FullPolicy::Drop);
    /// # let _ = builder;
    /// ```
    pub fn full_policy(mut self, policy: FullPolicy) -> Builder {
        self.policy = Some(policy);
        self
    }

    /// Level protection under the drop policy: once more than `high_water`
    /// (a fraction of the capacity, default 0.8) is in use, records below
    /// `level` (default WARN) are dropped so that `level` and above keep the
    /// headroom.
    ///
    /// # Examples
    ///
    /// ```
    /// let builder = nowait_core::Builder::new().protect(nowait_core::Level::Error, 0.9);
    /// # let _ = builder;
    /// ```
    pub fn protect(mut self, level: Level, high_water: f64) -> Builder {
        self.protect = level;
        self.high_water = high_water;
        self
    }

    /// Adds a sink. With none, records go to stdout.
    ///
    /// # Examples
    ///
    /// ```
    /// let builder = nowait_core::Builder::new().sink(nowait_core::Sink::stderr());
    /// # let _ = builder;
    /// ```
    pub fn sink(mut self, sink: Sink) -> Builder {
        self.sinks.push(sink);
        self
    }

    /// The format for sinks that do not set their own (default [`Text`](crate::format::Text)).
    ///
    /// # Examples
    ///
    /// ```
    /// let builder = nowait_core::Builder::new().format(nowait_core::format::Plain);
    /// # let _ = builder;
    /// ```
    pub fn format(mut self, format: impl MakeFormat) -> Builder {
        self.format = Arc::new(format);
        self
    }

    /// How long dropping the [`Guard`] (and the exit and signal hooks) may
    /// take (default 5 s): the bound on every shutdown, whatever the sinks
    /// do. Sinks that fail or are stalled are not waited for at all. A
    /// writer thread found past the timeout running its own code rather
    /// than blocked in a sink's write (descheduled on a loaded machine,
    /// doing the final count) gets up to 100 ms more to finish, so that
    /// [`Stats`](crate::accounting::stats::Stats) are final when the drop returns; only a
    /// custom [`Format`](crate::format::Format) that blocks can make the drop return
    /// with the counts not yet final.
    ///
    /// # Examples
    ///
    /// ```
    /// let builder = nowait_core::Builder::new().shutdown_timeout(std::time::Duration::from_secs(1));
    /// # let _ = builder;
    /// ```
    pub fn shutdown_timeout(mut self, timeout: Duration) -> Builder {
        self.shutdown_timeout = timeout;
        self
    }

    /// How long [`Logger::flush`] waits (default: the shutdown timeout).
    ///
    /// # Examples
    ///
    /// ```
    /// let builder = nowait_core::Builder::new().flush_timeout(std::time::Duration::from_secs(1));
    /// # let _ = builder;
    /// ```
    pub fn flush_timeout(mut self, timeout: Duration) -> Builder {
        self.flush_timeout = Some(timeout);
        self
    }

    /// Whether a panic on any thread is logged (ERROR, with location) and
    /// flushed to the durable sinks (at most
    /// [`panic_timeout`](Builder::panic_timeout)) before the previously
    /// installed panic hook runs (default on).
    ///
    /// # Examples
    ///
    /// ```
    /// let builder = nowait_core::Builder::new().catch_panics(false);
    /// # let _ = builder;
    /// ```
    pub fn catch_panics(mut self, on: bool) -> Builder {
        self.catch_panics = on;
        self
    }

    /// Whether `std::process::exit` (and returning from `main`) shuts the
    /// logger down through an `atexit` hook, like dropping the guard
    /// (default on).
    ///
    /// # Examples
    ///
    /// ```
    /// let builder = nowait_core::Builder::new().flush_on_exit(false);
    /// # let _ = builder;
    /// ```
    pub fn flush_on_exit(mut self, on: bool) -> Builder {
        self.flush_on_exit = on;
        self
    }

    /// Opt-in: on SIGTERM or SIGINT, shut every such logger down (within its
    /// shutdown timeout), then let the signal take its default action (the
    /// process dies of it); a second signal during the drain kills at once.
    /// Turn it on in services: `docker stop` and Kubernetes stop a process
    /// with SIGTERM, and without it (or a handler of the program's own that
    /// drops the guard) the records still in the ring die with the process,
    /// uncounted. Leave it off if the program handles these signals itself.
    /// On Windows the same drain runs on Ctrl-C, Ctrl-Break, closing the
    /// console, logoff and shutdown (`SetConsoleCtrlHandler`), then the
    /// default handling ends the process. Needs the `signals` feature (on
    /// by default).
    ///
    /// # Examples
    ///
    /// ```
    /// let builder = nowait_core::Builder::new().drain_on_signals(true);
    /// # let _ = builder;
    /// ```
    pub fn drain_on_signals(mut self, on: bool) -> Builder {
        self.drain_on_signals = on;
        self
    }

    /// Opt-in: on SIGHUP, reopen the file sinks, as
    /// [`Logger::reopen`](crate::logger::Logger::reopen) does; for `logrotate` in
    /// rename (`create`) mode with `postrotate kill -HUP <pid>`:
    ///
    /// ```text
    /// /var/log/app/app.log {
    ///     daily
    ///     rotate 7
    ///     compress
    ///     delaycompress
    ///     postrotate
    ///         kill -HUP $(cat /run/app.pid)
    ///     endscript
    /// }
    /// ```
    ///
    /// Every record then lands exactly once, in the renamed file or the new
    /// one. Even without the signal the writer notices a renamed or deleted
    /// file within a second and reopens the path; the signal makes it
    /// immediate. Prefer this to `copytruncate`: that mode copies the file
    /// and then truncates it, and whatever is written between the copy and
    /// the truncation is lost (logrotate(8) says so); nowait's `O_APPEND`
    /// writes at least never leave a hole of NUL bytes after the
    /// truncation. The signal is handled on a thread of nowait's own
    /// (`nowait-sighup`, through `signal-hook`), which waits for the reopen
    /// at most the flush timeout. Leave it off if the program handles
    /// SIGHUP itself (call [`Logger::reopen`](crate::logger::Logger::reopen)
    /// there). Needs the `signals` feature (on by default). Windows has no
    /// SIGHUP: there the option does nothing (files are renamed and deleted
    /// while open there, and the writer notices within a second).
    ///
    /// # Examples
    ///
    /// ```
    /// let builder = nowait_core::Builder::new().reopen_on_sighup(true);
    /// # let _ = builder;
    /// ```
    pub fn reopen_on_sighup(mut self, on: bool) -> Builder {
        self.reopen_on_sighup = on;
        self
    }

    /// On SIGUSR1, writes what each sink's backtrace keeps
    /// ([`Logger::dump_recent`](crate::logger::Logger::dump_recent)): the
    /// last DEBUG records of a process that misbehaves without an error,
    /// on demand (`kill -USR1 PID`), without restarting it at a more
    /// verbose level. The records stay kept for the next error. Default
    /// off.
    ///
    /// The signal is handled on a thread of nowait's own
    /// (`nowait-sigusr1`, through `signal-hook`), which waits for the dump
    /// at most the flush timeout; signals that arrive meanwhile make one
    /// more dump. Leave it off if the program uses SIGUSR1 itself (call
    /// `Logger::dump_recent` there). Needs the `signals` feature (on by
    /// default; without it `build` fails). Windows has no such signal:
    /// there the option does nothing, and a program dumps from a trigger
    /// of its own (an admin endpoint, a named event) with
    /// `Logger::dump_recent`.
    ///
    /// # Examples
    ///
    /// ```
    /// let builder = nowait_core::Builder::new().dump_recent_on_signal(true);
    /// # let _ = builder;
    /// ```
    pub fn dump_recent_on_signal(mut self, on: bool) -> Builder {
        self.dump_recent_on_signal = on;
        self
    }

    /// The longest the writer sleeps while no records come (default
    /// 50 ms): the longest an isolated record waits before it is written,
    /// and the writer's idle cost (about 1 s / this wake-ups per second).
    /// Producers never wake the writer, so no request pays a system call
    /// for it.
    ///
    /// # Examples
    ///
    /// ```
    /// let builder = nowait_core::Builder::new().idle_interval(std::time::Duration::from_millis(20));
    /// # let _ = builder;
    /// ```
    pub fn idle_interval(mut self, interval: Duration) -> Builder {
        self.idle_interval = interval;
        self
    }

    /// How long the panic hook waits for the panic record to reach the
    /// durable sinks (files and custom writers; default 500 ms). It never
    /// waits for a terminal or pipe, so a stalled terminal cannot hold a
    /// panicking thread.
    ///
    /// # Examples
    ///
    /// ```
    /// let builder = nowait_core::Builder::new().panic_timeout(std::time::Duration::from_millis(100));
    /// # let _ = builder;
    /// ```
    pub fn panic_timeout(mut self, timeout: Duration) -> Builder {
        self.panic_timeout = timeout;
        self
    }

    /// On by default: on a fatal signal (SIGSEGV, SIGBUS, SIGILL,
    /// SIGFPE, SIGABRT, SIGTRAP: a segfault in a C dependency, `abort()`, a
    /// double panic, `panic = "abort"`, an allocation failure), the thread
    /// that crashed asks the writer to write every record accepted so far,
    /// waits for it at most [`crash_timeout`](Builder::crash_timeout),
    /// writes a last line saying so (`fatal signal SIGSEGV on thread
    /// 'worker-3': 10000 records drained in 3 ms, 0 lost`), then lets the
    /// signal take the action it had before nowait (the exit status, core
    /// dumps, Rust's stack-overflow message and crash reporters installed
    /// earlier behave as without nowait). A crash of the writer thread
    /// itself, or a second fatal signal during the drain, goes straight to
    /// that action. `SIGKILL` (the OOM killer) runs no handler: see
    /// [`crash_durable`](Builder::crash_durable). On Windows a top-level
    /// exception filter does the same for an access violation, an illegal
    /// instruction, a division by zero or an in-page error (the process
    /// ends with the exception's code); `abort()`, `panic = "abort"` (both
    /// `__fastfail`) and a stack overflow run no handler there. See
    /// `docs::design` ("Crashes").
    /// Turn it off in a program that uses SIGSEGV itself (an embedded JVM):
    /// its first one would be taken for a crash and drained (then the
    /// handler steps aside for good).
    ///
    /// # Examples
    ///
    /// ```
    /// let builder = nowait_core::Builder::new().drain_on_crash(false);
    /// # let _ = builder;
    /// ```
    pub fn drain_on_crash(mut self, on: bool) -> Builder {
        self.drain_on_crash = on;
        self
    }

    /// Keeps the ring in a shared mapping of the file at `path`, so that
    /// what was accepted survives the process however it dies: `SIGKILL`,
    /// the OOM killer, a crash whose drain ran out of time. The next
    /// `build()` with the same path (in the next run of the program)
    /// writes what the dead process had accepted and not written, each
    /// record once, before any new record, with a notice saying how many
    /// and from which process; records it was still copying when it died
    /// are counted, never written as garbage.
    ///
    /// Put the file on tmpfs (`/dev/shm`, `/run`, a Kubernetes `emptyDir`
    /// with `medium: Memory`) or the log volume; on tmpfs the hot path
    /// takes no page faults. Costs the writer one more copy of each file
    /// sink's bytes; the request thread's cost is unchanged (see
    /// `docs::design`, "The crash-durable ring"). One live logger per
    /// file: a second `build()` with a path in use fails (once a logger's
    /// guard is dropped, its path can be built again). A full file system
    /// is a `build()` error, never a fault on a push. `nowait recover FILE`
    /// (the `nowait` command: `cargo install nowait-cli`) recovers a file
    /// without starting the program.
    /// On Windows the file is a view of a file mapping, which the system
    /// keeps when the process ends (`TerminateProcess`, `abort()`); put it
    /// on a local disk.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// let (logger, guard) = nowait_core::Builder::new()
    ///     .sink(nowait_core::Sink::file("app.log"))
    ///     .crash_durable("/dev/shm/app.nowait")
    ///     .build()
    ///     .unwrap();
    /// # drop((logger, guard));
    /// ```
    pub fn crash_durable(mut self, path: impl Into<PathBuf>) -> Builder {
        self.crash_durable = Some(path.into());
        self
    }

    /// The bound on a fatal signal's drain ([`drain_on_crash`](Builder::drain_on_crash); default 1 s).
    ///
    /// # Examples
    ///
    /// ```
    /// let builder = nowait_core::Builder::new().crash_timeout(std::time::Duration::from_millis(200));
    /// # let _ = builder;
    /// ```
    pub fn crash_timeout(mut self, timeout: Duration) -> Builder {
        self.crash_timeout = timeout;
        self
    }

    /// Write-through: a record at `level` or above returns to the caller
    /// only once it is written to the durable sinks (files and custom
    /// writers), or the flush timeout passed. For audit trails and the last
    /// error before a crash, at the price of a wait on the request thread
    /// for those records only: a round trip to the writer thread and one
    /// `write(2)` per such record, and an `fsync` with
    /// [`fsync_write_through`](Builder::fsync_write_through): microseconds
    /// where a plain push takes nanoseconds
    /// (the repository's `fault_numbers` example measures both).
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// use nowait_core::{Builder, Level, Sink};
    ///
    /// let path = dir.path().join("app.log");
    /// let (logger, _guard) = Builder::new()
    ///     .sink(Sink::file(&path))
    ///     .write_through(Level::Error)
    ///     .build()
    ///     .unwrap();
    /// logger.log(Level::Error, "payment failed").unwrap();
    /// // Already in the file:
    /// assert!(std::fs::read_to_string(&path).unwrap().contains("payment failed"));
    /// ```
    pub fn write_through(mut self, level: Level) -> Builder {
        self.write_through = Some(level);
        self
    }

    /// With [`write_through`](Builder::write_through): also `fdatasync`
    /// the files before returning, so the record survives a power loss
    /// (default off).
    ///
    /// # Examples
    ///
    /// ```
    /// let builder = nowait_core::Builder::new()
    ///     .write_through(nowait_core::Level::Error)
    ///     .fsync_write_through(true);
    /// # let _ = builder;
    /// ```
    pub fn fsync_write_through(mut self, on: bool) -> Builder {
        self.fsync = on;
        self
    }

    /// Starts the writer thread and returns the logger and its guard.
    ///
    /// # Errors
    ///
    /// [`BuildError`] for a capacity below 1 KiB, a zero batch size or
    /// interval, a high-water mark outside (0, 1], a sink that cannot be
    /// opened, or a thread that cannot be spawned.
    ///
    /// # Examples
    ///
    /// ```
    /// let (logger, guard) = nowait_core::Builder::new()
    ///     .sink(nowait_core::Sink::writer(std::io::sink()))
    ///     .build()
    ///     .unwrap();
    /// # drop((logger, guard));
    /// ```
    pub fn build(mut self) -> Result<(Logger, Guard), BuildError> {
        crate::record::clock::init();
        // 1. The settings.
        self.validate()?;
        // 2. The crash-durable file: what a dead process left is recovered
        //    into its files before any sink opens them.
        let files = crate::sink::durable_files(&self.sinks);
        let durable =
            crate::durable::open_for(self.crash_durable.as_deref(), self.capacity, &files)?;
        // 3. The sinks, each checked and opened in turn.
        let sinks = crate::sink::open_all(std::mem::take(&mut self.sinks), &self.format)?;
        // 4. The shared state and the writer, started once what was
        //    recovered is in the ring.
        let config = self.config(&sinks);
        let (needs_thread, needs_location) = (sinks.needs_thread, sinks.needs_location);
        let start = writer::starter(sinks.plans, sinks.opened, sinks.startup, self.settings());
        let (file, recovered) = durable.unzip();
        let shared = self.shared(file, sinks.counters, config, start)?;
        crate::durable::hand_over(
            shared.durable.as_deref(),
            recovered,
            &mut |level, kind, payload, deadline| {
                shared.push_recovered(level, kind, payload, deadline)
            },
            || writer::start(&shared),
            self.shutdown_timeout,
        )?;
        // 5. The process-wide hooks.
        crate::process::hooks::register(&shared, self.hook_options());
        Ok((
            Logger {
                shared: Arc::clone(&shared),
                thread: needs_thread,
                location: needs_location,
            },
            Guard {
                shared,
                timeout: self.shutdown_timeout,
            },
        ))
    }

    /// Checks the settings, and gives a logger without sinks stdout.
    fn validate(&mut self) -> Result<(), BuildError> {
        if self.capacity < 1024 || self.capacity > MAX_CAPACITY {
            return Err(BuildError::config(format!(
                "capacity must be between 1024 bytes and 1 GiB, got {}",
                self.capacity
            )));
        }
        crate::shared::check_batch_size(self.batch_size)?;
        if self.lanes > MAX_LANES {
            return Err(BuildError::config(format!(
                "lanes must be at most {MAX_LANES}, got {}",
                self.lanes
            )));
        }
        if let Some(bytes) = self.lane_capacity {
            if !(64..=MAX_CAPACITY).contains(&bytes) {
                return Err(BuildError::config(format!(
                    "lane capacity must be between 64 bytes and 1 GiB, got {bytes}"
                )));
            }
        }
        if self.flush_interval.is_zero() || self.idle_interval.is_zero() {
            return Err(BuildError::config(
                "flush_interval and idle_interval must not be zero",
            ));
        }
        if !(self.high_water > 0.0 && self.high_water <= 1.0) {
            return Err(BuildError::config(format!(
                "high-water mark must be in (0, 1], got {}",
                self.high_water
            )));
        }
        if self.sinks.is_empty() {
            self.sinks.push(Sink::stdout());
        }
        crate::sink::check(&self.sinks)?;
        if let (Some(cpu), false) = (self.writer_cpu, crate::sys::CAN_PIN_THREADS) {
            return Err(BuildError::config(format!(
                "writer_cpu({cpu}): {} cannot pin a thread to a CPU",
                std::env::consts::OS
            )));
        }
        #[cfg(not(feature = "signals"))]
        if self.drain_on_signals {
            return Err(BuildError::config(
                "drain_on_signals needs nowait-core's `signals` feature",
            ));
        }
        #[cfg(not(feature = "signals"))]
        if self.dump_recent_on_signal {
            return Err(BuildError::config(
                "dump_recent_on_signal needs nowait-core's `signals` feature",
            ));
        }
        #[cfg(not(feature = "signals"))]
        if self.reopen_on_sighup {
            return Err(BuildError::config(
                "reopen_on_sighup needs nowait-core's `signals` feature",
            ));
        }
        Ok(())
    }

    /// What the logger's shared state is configured with, for `sinks`.
    fn config(&self, sinks: &OpenSinks) -> Config {
        let policy = self.policy.unwrap_or(if sinks.any_durable() {
            FullPolicy::BlockTimeout(FullPolicy::DEFAULT_TIMEOUT)
        } else {
            FullPolicy::Drop
        });
        Config {
            min_level: sinks.min_level(),
            policy,
            protect: self.protect,
            high_water: self.high_water,
            write_through: self.write_through,
            flush_timeout: self.flush_timeout.unwrap_or(self.shutdown_timeout),
            shutdown_timeout: self.shutdown_timeout,
            panic_timeout: self.panic_timeout,
            crash_timeout: self.crash_timeout,
            flush_interval: self.flush_interval,
            batch_size: self.batch_size,
            lanes: if self.crash_durable.is_some() {
                (0, 0)
            } else {
                let bytes = self
                    .lane_capacity
                    .unwrap_or((self.capacity / 16).clamp(256, 64 << 10));
                (self.lanes, bytes)
            },
            routes: Arc::new(crate::filter::routes::Routes::new(sinks.rules())),
        }
    }

    /// How the writer thread runs.
    fn settings(&self) -> writer::WriterSettings {
        writer::WriterSettings {
            interval: self.flush_interval,
            idle: self.idle_interval,
            batch: self.batch_size,
            thread_name: self.thread_name.clone(),
            cpu: self.writer_cpu,
        }
    }

    /// The logger's shared state, its ring in the crash-durable `file` if
    /// there is one.
    fn shared(
        &self,
        file: Option<Arc<DurableFile>>,
        counters: Vec<SinkCounters>,
        config: Config,
        start: Start,
    ) -> Result<Arc<Shared>, BuildError> {
        let ring = match &file {
            Some(file) => file.ring(),
            None => Ring::new(self.capacity),
        };
        let mut shared = Shared::new(ring, counters, config, start)
            .map_err(|e| BuildError::io("cannot create the writer's doorbell", e))?;
        shared.durable = file;
        shared.ctl.fsync.store(self.fsync, Ordering::Relaxed);
        Ok(Arc::new(shared))
    }

    /// Which process-wide hooks the logger asks for.
    fn hook_options(&self) -> HookOptions {
        HookOptions {
            catch_panics: self.catch_panics,
            flush_on_exit: self.flush_on_exit,
            drain_on_signals: self.drain_on_signals,
            reopen_on_sighup: self.reopen_on_sighup,
            dump_on_sigusr1: self.dump_recent_on_signal,
            drain_on_crash: self.drain_on_crash,
        }
    }
}

// The producer/writer contract as a whole logger exercises it: these
// tests build one, so they live here, above `shared`.
#[cfg(all(test, not(loom), not(miri)))]
mod tests {
    use std::sync::atomic::Ordering;

    use crate::shared::state;
    use crate::sink::Sink;

    /// A writer that wakes on its own may see the logger closing at any
    /// moment of a shutdown; the deadline it then reads must already be
    /// there, or it would drain until "no deadline" (at once) and abandon
    /// what a receiver was about to take.
    #[test]
    fn whoever_sees_the_logger_closing_sees_its_deadline() {
        for _ in 0..4000 {
            let (logger, guard) = super::Builder::new()
                .sink(Sink::writer(std::io::sink()))
                .build()
                .unwrap();
            let shared = std::sync::Arc::clone(&logger.shared);
            let watcher = std::thread::spawn(move || {
                while shared.state.load(Ordering::SeqCst) == state::RUNNING {
                    std::hint::spin_loop();
                }
                shared.ctl.deadline().is_some()
            });
            drop(guard);
            assert!(watcher.join().unwrap(), "closing with no deadline");
        }
    }

    /// A flush future dropped while it waits (cancelled) leaves no entry
    /// behind, in its logger's waiters or in the timer; one that completed
    /// neither.
    #[test]
    fn a_cancelled_flush_future_leaves_nothing_registered() {
        use std::future::Future;
        use std::task::{Context, Poll, Waker};
        use std::time::Duration;

        use crate::shared::waiters::Flush;
        use crate::shared::FlushScope;

        /// A sink that takes 300 ms for each write.
        struct Slow;
        impl std::io::Write for Slow {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                std::thread::sleep(Duration::from_millis(300));
                Ok(buf.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let (logger, _guard) = super::Builder::new()
            .flush_on_exit(false)
            .sink(Sink::writer(Slow))
            .build()
            .unwrap();
        let shared = &logger.shared;
        let mut cx = Context::from_waker(Waker::noop());
        for _ in 0..3 {
            logger.log(crate::level::Level::Info, "slow").unwrap();
            let mut futures: Vec<Flush> = (0..50)
                .map(|_| Flush::new(shared, FlushScope::All, Duration::from_secs(5)))
                .collect();
            for f in &mut futures {
                assert!(std::pin::Pin::new(&mut *f).poll(&mut cx).is_pending());
                assert_eq!(f.entries(), (true, true));
            }
            assert_eq!(shared.waiters.len(), 50);
            let kept = futures.pop().unwrap();
            drop(futures);
            assert_eq!(shared.waiters.len(), 1);
            assert_eq!(kept.entries(), (true, true));
            let mut kept = kept;
            let done = loop {
                match std::pin::Pin::new(&mut kept).poll(&mut cx) {
                    Poll::Ready(r) => break r,
                    Poll::Pending => std::thread::sleep(Duration::from_millis(5)),
                }
            };
            done.unwrap();
            assert_eq!(kept.entries(), (false, false));
            assert_eq!(shared.waiters.len(), 0);
        }
    }
}
