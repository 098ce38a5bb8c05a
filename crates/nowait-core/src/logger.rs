//! [`Logger`]: the handle request threads push records with.

use std::fmt;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use crate::accounting::stats::Stats;
use crate::error::{BuildError, FlushError, PushError};
use crate::event::EventBuf;
use crate::level::Level;
use crate::shared::{FlushScope, Shared};

/// A handle to push records, cheap to clone and share between threads.
///
/// Pushing never allocates, never takes a lock and makes no system call: a
/// record is one compare-and-swap to claim room in the ring, a copy, and
/// one release store. The writer thread is never woken by a push; it finds
/// the records by itself (see `Builder::flush_interval`).
/// The only exceptions are the ones the user chose: waiting for room under
/// [`FullPolicy::Block`](crate::accounting::policy::FullPolicy::Block) or
/// [`BlockTimeout`](crate::accounting::policy::FullPolicy::BlockTimeout) (bounded by its
/// timeout), write-through (`Builder::write_through`),
/// and the first push in a forked child, which starts the child's writer.
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
    /// Whether a sink's format prints threads (fixed at build time).
    pub(crate) thread: bool,
    /// Whether a sink's format prints source locations (likewise).
    pub(crate) location: bool,
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
    /// waiting; `kind` tells the sinks' formats how to read it. A record
    /// that finds no room is dropped and counted.
    pub(crate) fn try_push(
        &self,
        level: Level,
        kind: u8,
        parts: &[&[u8]],
    ) -> Result<(), PushError> {
        self.shared.push(level, kind, parts, false)
    }

    /// As [`try_push`](Logger::try_push), but waits for room as the full
    /// policy says (never on a writer thread).
    pub(crate) fn push(&self, level: Level, kind: u8, parts: &[&[u8]]) -> Result<(), PushError> {
        self.shared.push(level, kind, parts, true)
    }

    /// Pushes an encoded event ([`kind::EVENT`](crate::record::kind::EVENT)) like
    /// [`push`](Logger::push), after cutting it to
    /// [`max_record_len`](Logger::max_record_len) with
    /// [`EventBuf::truncate_to`] (counted in
    /// [`Stats::truncated`](crate::accounting::stats::Stats::truncated)). The front ends call
    /// it through `__private::push_event`.
    #[inline]
    pub(crate) fn push_event(&self, level: Level, event: &mut EventBuf) -> Result<(), PushError> {
        if event.truncate_to(self.max_record_len()) {
            self.truncated();
        }
        self.shared.push_payload(
            level,
            crate::record::kind::EVENT,
            &Bytes(event.as_bytes()),
            true,
        )
    }

    /// [`push`](Logger::push) of a payload that writes itself into the
    /// ring (the macros' direct encoding), waiting under the block policy.
    #[inline]
    pub(crate) fn push_payload<P: crate::ring::Payload>(
        &self,
        level: Level,
        kind: u8,
        payload: &P,
    ) -> Result<(), PushError> {
        self.shared.push_payload(level, kind, payload, true)
    }

    /// Pushes a line of text ([`kind::TEXT`](crate::record::kind::TEXT)) without
    /// waiting. A line longer than the ring allows is cut and marked
    /// `[truncated]`.
    ///
    /// # Errors
    ///
    /// [`PushError`] says why the line was dropped (the ring is full, or the
    /// logger is closed); it has already been counted.
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
    /// As [`try_log`](Logger::try_log); under
    /// [`FullPolicy::Block`](crate::accounting::policy::FullPolicy::Block) only
    /// [`PushError::Closed`], under `BlockTimeout` also
    /// [`PushError::TimedOut`].
    ///
    /// # Examples
    ///
    /// ```
    /// # let (logger, _guard) = nowait_core::Builder::new().sink(nowait_core::Sink::writer(std::io::sink())).build().unwrap();
    /// logger.log(nowait_core::Level::Info, "started").unwrap();
    /// ```
    pub fn log(&self, level: Level, line: &str) -> Result<(), PushError> {
        self.log_inner(level, line, true)
    }

    fn log_inner(&self, level: Level, line: &str, wait: bool) -> Result<(), PushError> {
        let max = self.shared.max_payload();
        if line.len() <= max {
            return self
                .shared
                .push(level, crate::record::kind::TEXT, &[line.as_bytes()], wait);
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
        self.shared.push(
            level,
            crate::record::kind::TEXT,
            &[&line.as_bytes()[..cut], MARK.as_bytes()],
            wait,
        )
    }

    /// Counts a record that a front end gave up on (a `Display` that
    /// panicked while it was rendered); the writer reports it like any loss.
    pub(crate) fn discarded(&self) {
        let shared = &self.shared;
        shared.count_loss(
            &shared.counters.discarded,
            crate::accounting::loss::ring_loss::DISCARDED,
        );
    }

    /// Hands a limited call site to this logger's writer thread, which
    /// reports its suppressed calls from then on.
    pub(crate) fn watch_limit(&self, site: &'static crate::limit::SiteLimit) {
        let mut list = self.shared.counters.lock_limits();
        list.push(site);
        self.shared
            .counters
            .limits_len
            .store(list.len(), Ordering::Release);
    }

    /// Counts a record that a front end cut to fit in the ring.
    pub(crate) fn truncated(&self) {
        self.shared
            .counters
            .truncated
            .fetch_add(1, Ordering::Relaxed);
    }

    /// Waits until every record pushed before the call is written to every
    /// sink (or counted as dropped there) and custom writers are flushed.
    /// Records lost in the ring before the call (full, shed, discarded) are
    /// reported in the output before it returns, not at the end of their
    /// reporting window.
    ///
    /// Waits at most the flush timeout (see
    /// `Builder::flush_timeout`, default
    /// 5 s), whatever the sinks do: the request is a number the writer
    /// answers when it can, so a flush that timed out leaves nothing queued
    /// behind it. It does not wait for a sink that is failing, shedding, or
    /// stalled (pending bytes and none taken for 100 ms: a terminal or pipe
    /// nobody reads); those records stay pending.
    ///
    /// # Errors
    ///
    /// [`FlushError::Sink`] with the first sink error met since the last
    /// flush, [`FlushError::Stalled`] naming a stalled sink,
    /// [`FlushError::TimedOut`], or [`FlushError::Closed`] after shutdown.
    /// Called on a writer thread (from a sink or format), it returns
    /// [`FlushError::TimedOut`] at once rather than deadlock.
    ///
    /// # Examples
    ///
    /// ```
    /// # let (logger, _guard) = nowait_core::Builder::new().sink(nowait_core::Sink::writer(std::io::sink())).build().unwrap();
    /// logger.log(nowait_core::Level::Info, "checkpoint").unwrap();
    /// logger.flush().unwrap();
    /// ```
    pub fn flush(&self) -> Result<(), FlushError> {
        self.flush_within(self.shared.flush_timeout)
    }

    /// [`flush`](Logger::flush) as a future, for async code: it completes
    /// when every record pushed before the call is written to every sink
    /// (or counted as dropped there) and custom writers are flushed, with
    /// the same outcome as `flush` (`Ok`, or [`FlushError::Sink`],
    /// [`FlushError::Stalled`], [`FlushError::TimedOut`] once the flush
    /// timeout has passed, [`FlushError::Closed`]). The request is made
    /// when this is called, not when the future is first polled.
    ///
    /// It needs no particular runtime: the writer thread wakes the task
    /// when it answers, and a process-wide timer thread (`nowait-timer`,
    /// started by the first flush that waits) wakes it at the deadline,
    /// even while the writer is blocked in a slow sink. The task's thread
    /// is never blocked, so other tasks on a single-threaded runtime keep
    /// running meanwhile.
    ///
    /// Cancel-safe: dropping the future before it completes removes
    /// everything it registered; the request it made is answered by the
    /// writer in its own time and leaves nothing behind (as a blocking
    /// flush that timed out).
    ///
    /// # Errors
    ///
    /// The future's output: as [`flush`](Logger::flush). Created on a
    /// writer thread (in a sink or format), it completes at once with
    /// [`FlushError::TimedOut`].
    ///
    /// # Examples
    ///
    /// ```
    /// # fn block_on<F: std::future::Future>(f: F) -> F::Output {
    /// #     use std::task::{Context, Poll, Wake, Waker};
    /// #     struct Unpark(std::thread::Thread);
    /// #     impl Wake for Unpark { fn wake(self: std::sync::Arc<Self>) { self.0.unpark() } }
    /// #     let waker = Waker::from(std::sync::Arc::new(Unpark(std::thread::current())));
    /// #     let mut f = std::pin::pin!(f);
    /// #     loop {
    /// #         if let Poll::Ready(v) = f.as_mut().poll(&mut Context::from_waker(&waker)) { return v; }
    /// #         std::thread::park();
    /// #     }
    /// # }
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("app.log");
    /// let (logger, _guard) = nowait_core::Builder::new()
    ///     .sink(nowait_core::Sink::file(&path))
    ///     .build()?;
    /// logger.log(nowait_core::Level::Info, "checkpoint")?;
    /// // In an async fn: `logger.flush_async().await?;`
    /// block_on(logger.flush_async())?;
    /// assert_eq!(std::fs::read_to_string(&path)?, "checkpoint\n");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn flush_async(
        &self,
    ) -> impl std::future::Future<Output = Result<(), FlushError>> + Send + Sync + Unpin + 'static
    {
        crate::shared::waiters::Flush::new(&self.shared, FlushScope::All, self.shared.flush_timeout)
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
    /// logger.flush_within(std::time::Duration::from_millis(500)).unwrap();
    /// ```
    pub fn flush_within(&self, timeout: Duration) -> Result<(), FlushError> {
        self.shared.flush(FlushScope::All, timeout)
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
        self.shared.reopen()
    }

    /// Writes the records each sink's backtrace
    /// ([`Sink::backtrace`](crate::sink::Sink::backtrace)) keeps now, marked
    /// as such: a line before them (`--- 3 recent records below INFO,
    /// dumped on request (still kept) ---`), the records formatted as a
    /// released backtrace's are (the JSON format marks each one), and a
    /// line after them (`--- end of the 3 recent records dumped ---`); a
    /// sink whose backtrace keeps nothing gets one line saying so, a sink
    /// without a backtrace nothing. The records stay kept: the next
    /// trigger (an ERROR) still writes them before itself. The copies are
    /// not counted as records (each record keeps its one outcome: written
    /// when a trigger releases it, filtered if none does).
    ///
    /// Records pushed before the call are kept first, and the call returns
    /// once the dump is written (or the sink failed or stalled), within
    /// the flush timeout (`Builder::flush_timeout`) in all. For a dump on
    /// a signal, see `Builder::dump_recent_on_signal`.
    ///
    /// # Errors
    ///
    /// As [`flush`](Logger::flush): [`FlushError::Sink`],
    /// [`FlushError::Stalled`], [`FlushError::TimedOut`],
    /// [`FlushError::Closed`].
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::format::Text;
    /// use nowait_core::sink::BacktraceBuffer;
    /// use nowait_core::{Builder, Level, Sink};
    ///
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("app.log");
    /// let (logger, guard) = Builder::new()
    ///     .sink(
    ///         Sink::file(&path)
    ///             .format(Text::new().without_time())
    ///             .level(Level::Info)
    ///             .backtrace(BacktraceBuffer::records(50)),
    ///     )
    ///     .build()?;
    /// logger.log(Level::Debug, "cache miss")?;
    /// logger.dump_recent()?;
    /// let out = std::fs::read_to_string(&path)?;
    /// assert!(out.contains("1 recent record below INFO, dumped on request"));
    /// assert!(out.contains("cache miss"));
    /// # drop(guard);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn dump_recent(&self) -> Result<(), FlushError> {
        self.shared.dump_recent()
    }

    /// Changes the writer's wake-up interval and batch size at run time
    /// (see `Builder::flush_interval` and
    /// `Builder::batch_size`); `None`
    /// keeps the current value. Takes effect at the writer's next round.
    ///
    /// # Errors
    ///
    /// [`BuildError`] for a zero interval, or a batch size of zero or over
    /// 1 GiB;
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
        if let Some(b) = batch_size {
            crate::shared::check_batch_size(b)?;
        }
        let ctl = &self.shared.ctl;
        if let Some(i) = flush_interval {
            let ns = i.as_nanos().min(u64::MAX as u128) as u64;
            ctl.interval_ns.store(ns, Ordering::Relaxed);
        }
        if let Some(b) = batch_size {
            ctl.batch.store(b, Ordering::Relaxed);
        }
        self.shared.doorbell.ring();
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
        s.counters.snapshot(s.ring.capacity_bytes(), &s.sinks)
    }

    /// Whether front ends should record the calling thread in each event:
    /// a sink's format prints thread names or ids. Fixed at build.
    #[inline]
    pub(crate) fn records_thread(&self) -> bool {
        self.thread
    }

    /// Whether front ends without call sites should add the source file
    /// and line to each event: a sink's format prints them. Fixed at build.
    #[inline]
    pub(crate) fn records_location(&self) -> bool {
        self.location
    }

    /// The least severe level any of the sinks takes (see
    /// [`Sink::level`](crate::sink::Sink::level)): the logger's effective
    /// maximum verbosity. The front ends (macros, `log`, the `tracing`
    /// layer) push nothing below it. Lines logged below it directly with
    /// [`log`](Logger::log) are still accepted, and each sink counts them
    /// in [`SinkStats::filtered`](crate::accounting::stats::SinkStats::filtered).
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::{Builder, Level, Sink};
    ///
    /// let (logger, _guard) = Builder::new()
    ///     .sink(Sink::writer(std::io::sink()).level(Level::Warn))
    ///     .sink(Sink::writer(std::io::sink()).level(Level::Info))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(logger.min_level(), Level::Info);
    /// ```
    #[inline]
    pub fn min_level(&self) -> Level {
        self.shared.min_level
    }

    /// Whether some sink takes records at `level` (`level >=`
    /// [`min_level`](Logger::min_level)). A plain field compare: front ends
    /// call it before encoding anything.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::{Builder, Level, Sink};
    ///
    /// let (logger, _guard) = Builder::new()
    ///     .sink(Sink::writer(std::io::sink()).level(Level::Info))
    ///     .build()
    ///     .unwrap();
    /// assert!(logger.enabled(Level::Warn));
    /// assert!(!logger.enabled(Level::Debug));
    /// ```
    #[inline]
    pub fn enabled(&self, level: Level) -> bool {
        level >= self.shared.min_level
    }

    /// Whether some sink takes records at `level` from `target`: at or
    /// above its level, and let through by its filter
    /// ([`Sink::filter`](crate::sink::Sink::filter)). Front ends with a
    /// target call it before encoding anything (the `log` front end on
    /// every call, the `tracing` layer once per call site; the macros
    /// cache the same answer per call site). A few prefix compares, no
    /// lock and no allocation (after a change of a sink's filter, the
    /// first call on each thread refreshes its copy with a `try_lock`; if
    /// that is busy the answer is `true` and the writer decides).
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::{Builder, Level, Sink};
    ///
    /// let (logger, _guard) = Builder::new()
    ///     .sink(Sink::writer(std::io::sink()).filter("info,hyper=warn"))
    ///     .build()?;
    /// assert!(logger.enabled_for("my_app", Level::Info));
    /// assert!(!logger.enabled_for("hyper::proto", Level::Info));
    /// # Ok::<(), nowait_core::BuildError>(())
    /// ```
    #[inline]
    pub fn enabled_for(&self, target: &str, level: Level) -> bool {
        self.enabled(level) && self.shared.routes.enabled(target, level)
    }

    /// Replaces the filter of sink `sink` (its index, in the order the
    /// sinks were added; `stats().sinks[i].name` names it) with
    /// `directives` (see [`Sink::filter`](crate::sink::Sink::filter)). Records pushed after this
    /// returns are routed by the new filter (records pushed before it that
    /// the writer has not taken yet may be routed by either: flush first
    /// to draw the line exactly), and the request path's union
    /// is recomputed: the macros' call sites (if this is the global
    /// logger) and the `tracing` layer's interest before this returns, the
    /// `log` front end's on each thread's next call. The sink's level and
    /// the logger's [`min_level`](Logger::min_level) stay as built: a
    /// filter can narrow what a sink takes below its level, not widen it.
    ///
    /// # Errors
    ///
    /// [`BuildError`] for invalid directives or a sink index out of range;
    /// the filter in place then stays.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::{Builder, Level, Sink};
    ///
    /// let (logger, _guard) = Builder::new()
    ///     .sink(Sink::writer(std::io::sink()).filter("my_app=info"))
    ///     .build()?;
    /// assert!(!logger.enabled_for("my_app::db", Level::Debug));
    /// let db = logger.stats().sinks.iter().position(|s| s.name == "writer").unwrap();
    /// logger.reload_sink_filter(db, "my_app=info,my_app::db=debug")?;
    /// assert!(logger.enabled_for("my_app::db", Level::Debug));
    /// assert!(logger.reload_sink_filter(db, "my_app=sometimes").is_err());
    /// assert!(logger.reload_sink_filter(7, "info").is_err());
    /// # Ok::<(), nowait_core::BuildError>(())
    /// ```
    pub fn reload_sink_filter(&self, sink: usize, directives: &str) -> Result<(), BuildError> {
        let filter = crate::filter::Filter::parse(directives)
            .map_err(|e| BuildError::config(format!("sink {sink}: filter: {e}")))?;
        self.set_sink_filter(sink, Some(filter))
    }

    /// Sets (`Some`) or removes (`None`: every target) the filter of sink
    /// `sink`, as [`reload_sink_filter`](Logger::reload_sink_filter) does.
    ///
    /// # Errors
    ///
    /// [`BuildError`] for a sink index out of range.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::{Builder, Level, Sink};
    ///
    /// let (logger, _guard) = Builder::new()
    ///     .sink(Sink::writer(std::io::sink()).filter("off"))
    ///     .build()?;
    /// assert!(!logger.enabled_for("app", Level::Error));
    /// logger.set_sink_filter(0, None)?;
    /// assert!(logger.enabled_for("app", Level::Trace));
    /// # Ok::<(), nowait_core::BuildError>(())
    /// ```
    pub fn set_sink_filter(
        &self,
        sink: usize,
        filter: Option<crate::filter::Filter>,
    ) -> Result<(), BuildError> {
        let routes = &self.shared.routes;
        if !routes.set(sink, filter) {
            return Err(BuildError::config(format!(
                "no sink {sink}: the logger has {} sinks",
                routes.len()
            )));
        }
        crate::filter::routes_changed(routes);
        Ok(())
    }

    /// The largest payload a record may have: half the ring, less a header,
    /// and less 8 bytes while `lanes` are on (the
    /// time the writer merges by).
    ///
    /// # Examples
    ///
    /// ```
    /// # let (logger, _guard) = nowait_core::Builder::new().capacity(4096).sink(nowait_core::Sink::writer(std::io::sink())).build().unwrap();
    /// assert_eq!(logger.max_record_len(), 2040);
    /// # let (logger, _guard) = nowait_core::Builder::new().capacity(4096).lanes(16).sink(nowait_core::Sink::writer(std::io::sink())).build().unwrap();
    /// assert_eq!(logger.max_record_len(), 2032);
    /// ```
    pub fn max_record_len(&self) -> usize {
        self.shared.max_payload()
    }
}

/// A payload in one piece (an encoded event): its copy into the ring is one
/// `memcpy`, without the loop over the parts of a `&[&[u8]]`.
struct Bytes<'a>(&'a [u8]);

impl crate::ring::Payload for Bytes<'_> {
    #[inline]
    fn payload_len(&self) -> usize {
        self.0.len()
    }

    #[inline]
    fn write_to(&self, dst: &mut [u8]) {
        dst.copy_from_slice(self.0);
    }
}
