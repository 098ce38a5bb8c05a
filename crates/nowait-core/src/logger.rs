//! The producer side: [`Builder`], [`Logger`], [`Guard`].

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::thread::{self, JoinHandle, ThreadId};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, TrySendError};

use crate::error::{BuildError, FlushError, PushError, SetGlobalError};
use crate::hooks;
use crate::policy::FullPolicy;
use crate::record::{MakeFormat, SinkInfo};
use crate::ring::{self, Ring};
use crate::sink::{Output, Sink};
use crate::stats::{Counters, SinkCounters, Stats};
use crate::writer::{Control, SinkState, Writer};
use crate::Level;

/// State shared by every [`Logger`] clone, the [`Guard`] and the writer
/// thread.
pub(crate) struct Shared {
    pub(crate) ring: Ring,
    pub(crate) policy: FullPolicy,
    /// Records below this level are shed above `shed_above` bytes.
    pub(crate) protect: Level,
    pub(crate) shed_above: usize,
    /// Past this many bytes in use, a producer wakes the writer early.
    pub(crate) wake_above: usize,
    pub(crate) counters: Counters,
    pub(crate) sink_counters: Box<[SinkCounters]>,
    /// Set by the writer before it blocks without a timeout; a producer
    /// that sees it after its claim wakes the writer (once per idle period).
    pub(crate) writer_sleeping: AtomicBool,
    /// Set by a producer that asked for an early wake, cleared by the writer.
    pub(crate) wake_requested: AtomicBool,
    pub(crate) wake_tx: Sender<()>,
    pub(crate) ctl_tx: Sender<Control>,
    /// Producers waiting for room (block policy).
    pub(crate) blocked: AtomicUsize,
    pub(crate) space_lock: Mutex<()>,
    pub(crate) space_cv: Condvar,
    /// Set once shutdown starts: pushes are refused from then on.
    pub(crate) closed: AtomicBool,
    pub(crate) writer_thread: OnceLock<ThreadId>,
    pub(crate) flush_timeout: Duration,
}

impl Shared {
    /// Wakes the writer thread if it is not already being woken.
    pub(crate) fn wake_writer(&self) {
        match self.wake_tx.try_send(()) {
            Ok(()) | Err(TrySendError::Full(())) | Err(TrySendError::Disconnected(())) => {}
        }
    }

    pub(crate) fn on_writer_thread(&self) -> bool {
        self.writer_thread.get() == Some(&thread::current().id())
    }

    /// Called by the writer after it released space.
    pub(crate) fn notify_space(&self) {
        if self.blocked.load(Ordering::SeqCst) > 0 {
            let _guard = self.space_lock.lock();
            self.space_cv.notify_all();
        }
    }
}

/// A handle to push records, cheap to clone and share between threads.
///
/// Pushing never allocates, never takes a lock and makes no system call in
/// steady state: a record is one compare-and-swap to claim room in the ring,
/// a copy, and one release store. The writer thread is not woken per record;
/// it wakes on a short timer (see [`Builder::flush_interval`]), or early when
/// the ring passes half full.
///
/// # Examples
///
/// ```
/// use nowait_core::{Builder, Level, Sink};
///
/// let dir = tempfile::tempdir().unwrap();
/// let path = dir.path().join("app.log");
/// let (logger, guard) = Builder::new().sink(Sink::file(&path)).build().unwrap();
/// logger.log(Level::Info, "GET /index.html 200").unwrap();
/// drop(guard); // drains and closes
/// assert_eq!(std::fs::read_to_string(&path).unwrap(), "GET /index.html 200\n");
/// ```
#[derive(Clone)]
pub struct Logger {
    pub(crate) shared: Arc<Shared>,
}

impl fmt::Debug for Logger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Logger")
            .field("ring", &self.shared.ring)
            .field("policy", &self.shared.policy)
            .finish_non_exhaustive()
    }
}

impl Logger {
    /// Pushes one record made of the concatenation of `parts`, without ever
    /// waiting. A record that finds no room is dropped and counted, and the
    /// writer reports the loss in the output.
    ///
    /// `kind` tells the sink's [`Format`](crate::Format) how to read the
    /// payload ([`kind::TEXT`](crate::kind::TEXT) for a line of text).
    ///
    /// # Errors
    ///
    /// [`PushError`] says why the record was dropped; it has already been
    /// counted.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::{kind, Builder, Level, Sink};
    ///
    /// let (logger, _guard) = Builder::new().sink(Sink::writer(std::io::sink())).build().unwrap();
    /// logger.try_push(Level::Warn, kind::TEXT, &[b"disk ", b"90% full"]).unwrap();
    /// ```
    pub fn try_push(&self, level: Level, kind: u8, parts: &[&[u8]]) -> Result<(), PushError> {
        self.push_inner(level, kind, parts, false)
    }

    /// Pushes one record like [`try_push`](Logger::try_push), but under
    /// [`FullPolicy::Block`] waits for room instead of dropping (parked, not
    /// spinning). On the writer thread itself it never waits.
    ///
    /// # Errors
    ///
    /// As [`try_push`](Logger::try_push); under the block policy only
    /// [`PushError::TooLarge`] and [`PushError::Closed`].
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::{kind, Builder, FullPolicy, Level, Sink};
    ///
    /// let (logger, _guard) = Builder::new()
    ///     .sink(Sink::writer(std::io::sink()))
    ///     .full_policy(FullPolicy::Block)
    ///     .build()
    ///     .unwrap();
    /// logger.push(Level::Info, kind::TEXT, &[b"never lost"]).unwrap();
    /// ```
    pub fn push(&self, level: Level, kind: u8, parts: &[&[u8]]) -> Result<(), PushError> {
        self.push_inner(level, kind, parts, self.shared.policy == FullPolicy::Block)
    }

    /// Pushes a line of text ([`kind::TEXT`](crate::kind::TEXT)) without
    /// waiting. A line longer than the ring allows is cut and marked
    /// `[truncated]`.
    ///
    /// # Errors
    ///
    /// As [`try_push`](Logger::try_push).
    ///
    /// # Examples
    ///
    /// ```
    /// # let (logger, _guard) = nowait_core::Builder::new().sink(nowait_core::Sink::writer(std::io::sink())).build().unwrap();
    /// logger.try_log(nowait_core::Level::Debug, "cache miss").unwrap();
    /// ```
    pub fn try_log(&self, level: Level, line: &str) -> Result<(), PushError> {
        self.log_inner(level, line, false)
    }

    /// Pushes a line of text, waiting for room under the block policy.
    ///
    /// # Errors
    ///
    /// As [`push`](Logger::push).
    ///
    /// # Examples
    ///
    /// ```
    /// # let (logger, _guard) = nowait_core::Builder::new().sink(nowait_core::Sink::writer(std::io::sink())).build().unwrap();
    /// logger.log(nowait_core::Level::Info, "started").unwrap();
    /// ```
    pub fn log(&self, level: Level, line: &str) -> Result<(), PushError> {
        self.log_inner(level, line, self.shared.policy == FullPolicy::Block)
    }

    fn log_inner(&self, level: Level, line: &str, wait: bool) -> Result<(), PushError> {
        let max = self.shared.ring.max_payload();
        if line.len() <= max {
            return self.push_inner(level, crate::kind::TEXT, &[line.as_bytes()], wait);
        }
        const MARK: &str = " [truncated]";
        let mut cut = max.saturating_sub(MARK.len());
        while !line.is_char_boundary(cut) {
            cut -= 1;
        }
        self.shared
            .counters
            .truncated
            .fetch_add(1, Ordering::Relaxed);
        self.push_inner(
            level,
            crate::kind::TEXT,
            &[&line.as_bytes()[..cut], MARK.as_bytes()],
            wait,
        )
    }

    #[inline]
    fn push_inner(
        &self,
        level: Level,
        kind: u8,
        parts: &[&[u8]],
        wait: bool,
    ) -> Result<(), PushError> {
        let s = &*self.shared;
        let limit = if level >= s.protect || s.policy == FullPolicy::Block {
            usize::MAX
        } else {
            s.shed_above
        };
        loop {
            if s.closed.load(Ordering::Relaxed) {
                s.counters.dropped_closed.fetch_add(1, Ordering::Relaxed);
                return Err(PushError::Closed);
            }
            match s.ring.try_push_below(level as u8, kind, parts, limit) {
                Ok(used) => {
                    // SeqCst load: pairs with the writer's SeqCst store of the
                    // flag and our SeqCst claim (see `writer::Writer::idle_wait`).
                    let asleep = s.writer_sleeping.load(Ordering::SeqCst)
                        && s.writer_sleeping.swap(false, Ordering::SeqCst);
                    let high = used > s.wake_above
                        && !s.wake_requested.load(Ordering::Relaxed)
                        && !s.wake_requested.swap(true, Ordering::Relaxed);
                    if asleep || high {
                        s.wake_writer();
                    }
                    return Ok(());
                }
                Err(ring::PushError::Full) if wait && !s.on_writer_thread() => self.wait_for_room(),
                Err(ring::PushError::Full) => {
                    s.counters.dropped_full.fetch_add(1, Ordering::Relaxed);
                    s.wake_writer_if_idle();
                    return Err(PushError::Full);
                }
                Err(ring::PushError::Shed) => {
                    s.counters.dropped_shed.fetch_add(1, Ordering::Relaxed);
                    s.wake_writer_if_idle();
                    return Err(PushError::Shed);
                }
                Err(ring::PushError::TooLarge) => {
                    s.counters.dropped_too_large.fetch_add(1, Ordering::Relaxed);
                    return Err(PushError::TooLarge);
                }
            }
        }
    }

    #[cold]
    fn wait_for_room(&self) {
        let s = &*self.shared;
        s.counters.blocked_waits.fetch_add(1, Ordering::Relaxed);
        s.blocked.fetch_add(1, Ordering::SeqCst);
        s.wake_writer();
        if let Ok(guard) = s.space_lock.lock() {
            // The timeout covers a notification that raced ahead of our wait;
            // the writer notifies after every batch it releases.
            let _ = s.space_cv.wait_timeout(guard, Duration::from_millis(5));
        }
        s.blocked.fetch_sub(1, Ordering::SeqCst);
    }

    /// Counts a record that a front end gave up on (for example because a
    /// `Display` implementation panicked while it was being rendered). The
    /// writer reports it in the output like any other loss.
    ///
    /// # Examples
    ///
    /// ```
    /// # let (logger, _guard) = nowait_core::Builder::new().sink(nowait_core::Sink::writer(std::io::sink())).build().unwrap();
    /// logger.discarded();
    /// assert_eq!(logger.stats().discarded, 1);
    /// ```
    pub fn discarded(&self) {
        self.shared
            .counters
            .discarded
            .fetch_add(1, Ordering::Relaxed);
    }

    /// Waits until every record pushed before the call is written to every
    /// sink (or counted as dropped there) and custom writers are flushed.
    /// Records lost in the ring before the call (full, shed, discarded) are
    /// reported in the output before it returns, not at the end of their
    /// reporting window.
    ///
    /// Waits at most the flush timeout (see [`Builder::flush_timeout`],
    /// default 5 s). Records behind a stalled terminal stay pending.
    ///
    /// # Errors
    ///
    /// [`FlushError::Sink`] with the first sink error met since the last
    /// flush, [`FlushError::TimedOut`], or [`FlushError::Closed`] after
    /// shutdown. Called on the writer thread (from a sink or format), it
    /// returns [`FlushError::TimedOut`] at once rather than deadlock.
    ///
    /// # Examples
    ///
    /// ```
    /// # let (logger, _guard) = nowait_core::Builder::new().sink(nowait_core::Sink::writer(std::io::sink())).build().unwrap();
    /// logger.log(nowait_core::Level::Info, "checkpoint").unwrap();
    /// logger.flush().unwrap();
    /// ```
    pub fn flush(&self) -> Result<(), FlushError> {
        self.flush_timeout(self.shared.flush_timeout)
    }

    /// [`flush`](Logger::flush) with an explicit timeout.
    ///
    /// # Errors
    ///
    /// As [`flush`](Logger::flush).
    ///
    /// # Examples
    ///
    /// ```
    /// # let (logger, _guard) = nowait_core::Builder::new().sink(nowait_core::Sink::writer(std::io::sink())).build().unwrap();
    /// logger.flush_timeout(std::time::Duration::from_millis(500)).unwrap();
    /// ```
    pub fn flush_timeout(&self, timeout: Duration) -> Result<(), FlushError> {
        let s = &*self.shared;
        if s.on_writer_thread() {
            return Err(FlushError::TimedOut);
        }
        if s.closed.load(Ordering::SeqCst) {
            return Err(FlushError::Closed);
        }
        let deadline = Instant::now() + timeout;
        let (ack, done) = crossbeam_channel::bounded(1);
        let target = s.ring.claimed();
        s.ctl_tx
            .send(Control::Flush {
                target,
                deadline,
                ack,
            })
            .map_err(|_| FlushError::Closed)?;
        match done.recv_timeout(timeout + Duration::from_millis(100)) {
            Ok(result) => result,
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => Err(FlushError::TimedOut),
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => Err(FlushError::Closed),
        }
    }

    /// Reopens file sinks now (after log rotation by rename) and returns once
    /// done: records pushed after this returns go to the new files. The
    /// writer also notices a renamed or deleted file by itself within about
    /// a second.
    ///
    /// # Errors
    ///
    /// [`FlushError::Sink`] if a file could not be reopened (the writer
    /// retries), [`FlushError::Closed`] after shutdown, [`FlushError::TimedOut`]
    /// if the writer did not answer within the flush timeout.
    ///
    /// # Examples
    ///
    /// ```
    /// # let (logger, _guard) = nowait_core::Builder::new().sink(nowait_core::Sink::writer(std::io::sink())).build().unwrap();
    /// logger.reopen().unwrap();
    /// ```
    pub fn reopen(&self) -> Result<(), FlushError> {
        let s = &*self.shared;
        if s.on_writer_thread() {
            return Err(FlushError::TimedOut);
        }
        let (ack, done) = crossbeam_channel::bounded(1);
        s.ctl_tx
            .send(Control::Reopen { ack })
            .map_err(|_| FlushError::Closed)?;
        match done.recv_timeout(s.flush_timeout) {
            Ok(result) => result,
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => Err(FlushError::TimedOut),
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => Err(FlushError::Closed),
        }
    }

    /// Changes the writer's wake-up interval and batch size at run time
    /// (see [`Builder::flush_interval`] and [`Builder::batch_size`]); `None`
    /// keeps the current value. Takes effect at the writer's next round.
    ///
    /// # Errors
    ///
    /// [`BuildError`] for a zero interval or batch size;
    /// [`FlushError::Closed`] is not reported: after shutdown this does
    /// nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// # let (logger, _guard) = nowait_core::Builder::new().sink(nowait_core::Sink::writer(std::io::sink())).build().unwrap();
    /// use std::time::Duration;
    /// logger.reconfigure(Some(Duration::from_millis(10)), Some(256 << 10)).unwrap();
    /// ```
    pub fn reconfigure(
        &self,
        flush_interval: Option<Duration>,
        batch_size: Option<usize>,
    ) -> Result<(), BuildError> {
        if flush_interval.is_some_and(|i| i.is_zero()) {
            return Err(BuildError::config("flush_interval must not be zero"));
        }
        if batch_size == Some(0) {
            return Err(BuildError::config("batch_size must not be zero"));
        }
        let _ = self.shared.ctl_tx.send(Control::Reconfigure {
            interval: flush_interval,
            batch: batch_size,
        });
        self.shared.wake_writer();
        Ok(())
    }

    /// A snapshot of the counters. See [`Stats`] for what can be stale.
    ///
    /// # Examples
    ///
    /// ```
    /// # let (logger, _guard) = nowait_core::Builder::new().sink(nowait_core::Sink::writer(std::io::sink())).build().unwrap();
    /// assert_eq!(logger.stats().sinks.len(), 1);
    /// ```
    pub fn stats(&self) -> Stats {
        let s = &*self.shared;
        s.counters
            .snapshot(s.ring.capacity_bytes(), &s.sink_counters)
    }

    /// The largest payload a record may have (half the ring, less a header).
    ///
    /// # Examples
    ///
    /// ```
    /// # let (logger, _guard) = nowait_core::Builder::new().capacity(4096).sink(nowait_core::Sink::writer(std::io::sink())).build().unwrap();
    /// assert_eq!(logger.max_record_len(), 2040);
    /// ```
    pub fn max_record_len(&self) -> usize {
        self.shared.ring.max_payload()
    }
}

impl Shared {
    #[cold]
    fn wake_writer_if_idle(&self) {
        if !self.wake_requested.swap(true, Ordering::Relaxed) {
            self.wake_writer();
        }
    }
}

/// Shuts the writer down when dropped: drains everything accepted, writes
/// it, flushes the sinks and joins the thread, waiting at most the shutdown
/// timeout ([`Builder::shutdown_timeout`], default 5 s). Records still
/// unwritten then are counted as abandoned and the output says so.
///
/// Keep it alive for as long as you log, typically in `main`.
///
/// # Examples
///
/// ```
/// let (logger, guard) = nowait_core::Builder::new()
///     .sink(nowait_core::Sink::writer(std::io::sink()))
///     .build()
///     .unwrap();
/// logger.log(nowait_core::Level::Info, "bye").unwrap();
/// drop(guard);
/// assert_eq!(logger.stats().records_written, 1);
/// ```
#[must_use = "dropping the guard shuts the logger down at once"]
pub struct Guard {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
    timeout: Duration,
}

impl fmt::Debug for Guard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Guard")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        let finished = shutdown(&self.shared, self.timeout);
        if let Some(thread) = self.thread.take() {
            // A writer stuck in a blocking custom writer is left behind
            // rather than hanging the caller.
            if finished || thread.is_finished() {
                let _ = thread.join();
            }
        }
    }
}

/// Stops the writer: drains and writes what it can before `timeout`.
/// Returns whether the writer acknowledged.
pub(crate) fn shutdown(shared: &Shared, timeout: Duration) -> bool {
    if shared.closed.swap(true, Ordering::SeqCst) {
        return true;
    }
    let deadline = Instant::now() + timeout;
    let (ack, done) = crossbeam_channel::bounded(1);
    if shared
        .ctl_tx
        .send(Control::Shutdown { deadline, ack })
        .is_err()
    {
        return false;
    }
    shared.wake_writer();
    {
        let _guard = shared.space_lock.lock();
        shared.space_cv.notify_all();
    }
    done.recv_timeout(timeout + Duration::from_millis(200))
        .is_ok()
}

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
    format: Box<dyn MakeFormat>,
    shutdown_timeout: Duration,
    flush_timeout: Option<Duration>,
    catch_panics: bool,
    flush_on_exit: bool,
    drain_on_signals: bool,
    thread_name: String,
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

/// Default ring capacity.
pub const DEFAULT_CAPACITY: usize = 1 << 20;
/// Default batch size: the writer writes once this much is formatted.
pub const DEFAULT_BATCH_SIZE: usize = 64 << 10;
/// Default writer wake-up interval while records flow.
pub const DEFAULT_FLUSH_INTERVAL: Duration = Duration::from_millis(3);

impl Builder {
    /// A builder with the defaults: 1 MiB ring, 64 KiB batches, a 3 ms
    /// writer interval, WARN protected above 80 %, 5 s shutdown timeout,
    /// panics logged and flushed, `process::exit` drained, the
    /// [`Text`](crate::Text) format, and stdout if no sink is added.
    ///
    /// # Examples
    ///
    /// ```
    /// let builder = nowait_core::Builder::new();
    /// # let _ = builder;
    /// ```
    pub fn new() -> Builder {
        Builder {
            capacity: DEFAULT_CAPACITY,
            batch_size: DEFAULT_BATCH_SIZE,
            flush_interval: DEFAULT_FLUSH_INTERVAL,
            policy: None,
            protect: Level::Warn,
            high_water: 0.8,
            sinks: Vec::new(),
            format: Box::new(crate::Text::new()),
            shutdown_timeout: Duration::from_secs(5),
            flush_timeout: None,
            catch_panics: true,
            flush_on_exit: true,
            drain_on_signals: false,
            thread_name: "nowait-writer".into(),
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
    pub fn capacity(mut self, bytes: usize) -> Builder {
        self.capacity = bytes;
        self
    }

    /// Bytes formatted per sink before the writer issues a `write` (default
    /// 64 KiB). At the end of each wake-up whatever is formatted is written
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
    /// record waits at most about this long before it is written. After
    /// 100 ms without records the writer sleeps until the next record, which
    /// then wakes it with one system call.
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

    /// What a full ring does. Default: [`FullPolicy::Block`] if any sink is a
    /// file or custom writer (such output should be complete),
    /// [`FullPolicy::Drop`] if all sinks are stdout/stderr.
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

    /// The format for sinks that do not set their own (default [`Text`](crate::Text)).
    ///
    /// # Examples
    ///
    /// ```
    /// let builder = nowait_core::Builder::new().format(nowait_core::Plain);
    /// # let _ = builder;
    /// ```
    pub fn format(mut self, format: impl MakeFormat) -> Builder {
        self.format = Box::new(format);
        self
    }

    /// How long dropping the [`Guard`] (and the exit, panic and signal
    /// hooks) may spend draining (default 5 s).
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
    /// flushed before the previously installed panic hook runs (default on).
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

    /// Whether `std::process::exit` (and returning from `main`) drains the
    /// logger through an `atexit` hook (default on).
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

    /// Opt-in: on SIGTERM or SIGINT, drain every such logger, then let the
    /// signal take its default action (the process dies of it). Leave it off
    /// if the program handles these signals itself and drops the guard.
    /// Needs the `signals` feature (on by default).
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
        crate::clock::init();
        if self.capacity < 1024 {
            return Err(BuildError::config(format!(
                "capacity must be at least 1024 bytes, got {}",
                self.capacity
            )));
        }
        if self.batch_size == 0 {
            return Err(BuildError::config("batch_size must not be zero"));
        }
        if self.flush_interval.is_zero() {
            return Err(BuildError::config("flush_interval must not be zero"));
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
        if let Some(bad) = self.sinks.iter().find(|s| s.buffer_size < 1024) {
            return Err(BuildError::config(format!(
                "sink {} buffer_size must be at least 1024 bytes, got {}",
                bad.target.name(),
                bad.buffer_size
            )));
        }
        #[cfg(not(feature = "signals"))]
        if self.drain_on_signals {
            return Err(BuildError::config(
                "drain_on_signals needs nowait-core's `signals` feature",
            ));
        }
        let policy = self.policy.unwrap_or_else(|| {
            if self.sinks.iter().any(Sink::wants_completeness) {
                FullPolicy::Block
            } else {
                FullPolicy::Drop
            }
        });

        let mut states = Vec::with_capacity(self.sinks.len());
        let mut counters = Vec::with_capacity(self.sinks.len());
        for sink in self.sinks {
            let name = sink.target.name();
            let (output, terminal) = Output::open(sink.target)?;
            let info = SinkInfo::new(name.clone(), terminal);
            let format = match &sink.format {
                Some(f) => f.make_format(&info),
                None => self.format.make_format(&info),
            };
            states.push(SinkState::new(
                name.clone(),
                output,
                format,
                sink.buffer_size,
                self.batch_size,
            ));
            counters.push(SinkCounters::new(name));
        }

        let ring = Ring::new(self.capacity);
        let capacity = ring.capacity_bytes();
        let (wake_tx, wake_rx) = crossbeam_channel::bounded(1);
        let (ctl_tx, ctl_rx) = crossbeam_channel::bounded(64);
        let shared = Arc::new(Shared {
            shed_above: (capacity as f64 * self.high_water) as usize,
            wake_above: capacity / 2,
            ring,
            policy,
            protect: self.protect,
            counters: Counters::default(),
            sink_counters: counters.into_boxed_slice(),
            writer_sleeping: AtomicBool::new(false),
            wake_requested: AtomicBool::new(false),
            wake_tx,
            ctl_tx,
            blocked: AtomicUsize::new(0),
            space_lock: Mutex::new(()),
            space_cv: Condvar::new(),
            closed: AtomicBool::new(false),
            writer_thread: OnceLock::new(),
            flush_timeout: self.flush_timeout.unwrap_or(self.shutdown_timeout),
        });
        let writer = Writer::new(
            Arc::clone(&shared),
            states,
            ctl_rx,
            wake_rx,
            self.batch_size,
            self.flush_interval,
        );
        let thread = thread::Builder::new()
            .name(self.thread_name)
            .spawn(move || writer.run())
            .map_err(|e| BuildError::io("cannot spawn the writer thread", e))?;
        let _ = shared.writer_thread.set(thread.thread().id());

        hooks::register(
            &shared,
            hooks::Options {
                catch_panics: self.catch_panics,
                flush_on_exit: self.flush_on_exit,
                drain_on_signals: self.drain_on_signals,
                timeout: self.shutdown_timeout,
            },
        );

        Ok((
            Logger {
                shared: Arc::clone(&shared),
            },
            Guard {
                shared,
                thread: Some(thread),
                timeout: self.shutdown_timeout,
            },
        ))
    }
}

static GLOBAL: OnceLock<Logger> = OnceLock::new();

/// Sets the process-wide logger used by the macros and the `log` front end.
///
/// # Errors
///
/// [`SetGlobalError`] if one was already set (it stays).
///
/// # Examples
///
/// ```
/// let (logger, _guard) = nowait_core::Builder::new()
///     .sink(nowait_core::Sink::writer(std::io::sink()))
///     .build()
///     .unwrap();
/// nowait_core::set_global(logger).unwrap();
/// assert!(nowait_core::global().is_some());
/// ```
pub fn set_global(logger: Logger) -> Result<(), SetGlobalError> {
    GLOBAL.set(logger).map_err(|_| SetGlobalError(()))?;
    crate::__private::global_installed();
    Ok(())
}

/// The process-wide logger, if [`set_global`] was called.
///
/// # Examples
///
/// ```
/// if let Some(logger) = nowait_core::global() {
///     let _ = logger.try_log(nowait_core::Level::Info, "hello");
/// }
/// ```
#[inline]
pub fn global() -> Option<&'static Logger> {
    GLOBAL.get()
}

/// Internal: the receiving ends the writer uses.
pub(crate) type ControlRx = Receiver<Control>;
