//! Counters, and the [`Stats`] snapshot that exposes them.

use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Counters updated by producers (on their slow paths only) and by the
/// writer thread. All are monotonic.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) dropped_full: AtomicU64,
    pub(crate) dropped_shed: AtomicU64,
    pub(crate) dropped_too_large: AtomicU64,
    pub(crate) dropped_closed: AtomicU64,
    pub(crate) dropped_timeout: AtomicU64,
    pub(crate) discarded: AtomicU64,
    pub(crate) blocked_waits: AtomicU64,
    pub(crate) truncated: AtomicU64,
    // Written by the writer thread only.
    pub(crate) records_written: AtomicU64,
    pub(crate) abandoned: AtomicU64,
    pub(crate) abandoned_unknown_bytes: AtomicU64,
    pub(crate) ring_high_water: AtomicU64,
    /// The limited call sites whose suppressed calls this logger reports
    /// (their counters are their own; [`Stats`] sums them). Taken only
    /// through [`Counters::lock_limits`], under the process-wide
    /// [`limits_gate`].
    pub(crate) limits: Mutex<Vec<&'static crate::limit::SiteLimit>>,
    /// How many sites `limits` holds, stored (under its lock) after each
    /// push: the writer takes the lock only when it grew.
    pub(crate) limits_len: AtomicUsize,
}

impl Counters {
    /// Zeroes every counter (in a forked child: its counters start afresh).
    /// Only atomic stores, so it may run in an `atfork` handler.
    pub(crate) fn reset(&self) {
        for c in [
            &self.dropped_full,
            &self.dropped_shed,
            &self.dropped_too_large,
            &self.dropped_closed,
            &self.dropped_timeout,
            &self.discarded,
            &self.blocked_waits,
            &self.truncated,
            &self.records_written,
            &self.abandoned,
            &self.abandoned_unknown_bytes,
            &self.ring_high_water,
        ] {
            c.store(0, Relaxed);
        }
        // The limited call sites' counts so far are the parent's. In a
        // forked child the list is free: whoever holds it holds the
        // `limits_gate`, which the fork's prepare handler held from before
        // the fork (see `process::fork`). Elsewhere (no fork) a busy list
        // is left as it is: no wait here.
        if let Ok(list) = self.limits.try_lock() {
            for site in list.iter() {
                site.forget_before_fork();
            }
        }
    }
}

/// Per-sink counters, written by the writer thread (or, after a shutdown
/// timed out with the writer stuck in a write, by the thread that took over
/// the counting).
///
/// The two mutexes are only ever taken with `try_lock`, on both sides: a
/// lock held by a thread that vanished in `fork()` can cost a stale error
/// message, never a hang.
#[derive(Debug, Default)]
pub(crate) struct SinkCounters {
    pub(crate) name: String,
    /// Whether completeness is wanted (files, custom writers): the sinks a
    /// durable flush (panic hook, write-through) waits for.
    pub(crate) durable: bool,
    pub(crate) records_written: AtomicU64,
    pub(crate) bytes_written: AtomicU64,
    pub(crate) write_calls: AtomicU64,
    pub(crate) dropped_overflow: AtomicU64,
    pub(crate) dropped_failed: AtomicU64,
    pub(crate) dropped_format: AtomicU64,
    /// Records below the sink's level (see `Sink::level`).
    pub(crate) filtered: AtomicU64,
    /// Records a backtrace's trigger released (see `Sink::backtrace`).
    pub(crate) backtrace_released: AtomicU64,
    /// Records a backtrace keeps now, counted nowhere else yet (what a
    /// takeover counts as filtered).
    pub(crate) backtrace_kept: AtomicU64,
    pub(crate) abandoned: AtomicU64,
    pub(crate) write_errors: AtomicU64,
    /// Part of `dropped_failed`: refused by the receiver for good.
    pub(crate) dropped_rejected: AtomicU64,
    pub(crate) rotations: AtomicU64,
    pub(crate) rotation_errors: AtomicU64,
    pub(crate) pending_bytes: AtomicU64,
    /// Records formatted for this sink and not yet written, as of the last
    /// publication (what a takeover counts as abandoned for it).
    pub(crate) pending_records: AtomicU64,
    pub(crate) non_blocking: AtomicBool,
    pub(crate) stalled: AtomicBool,
    pub(crate) last_error: Mutex<Option<String>>,
    /// The first error since the last flush, taken by the next flush.
    pub(crate) flush_error: Mutex<Option<io::Error>>,
}

impl SinkCounters {
    pub(crate) fn new(name: String, durable: bool) -> Self {
        SinkCounters {
            name,
            durable,
            ..Default::default()
        }
    }

    /// Zeroes the counters (forked child); see [`Counters::reset`].
    pub(crate) fn reset(&self) {
        for c in [
            &self.records_written,
            &self.bytes_written,
            &self.write_calls,
            &self.dropped_overflow,
            &self.dropped_failed,
            &self.dropped_format,
            &self.filtered,
            &self.backtrace_released,
            &self.backtrace_kept,
            &self.abandoned,
            &self.write_errors,
            &self.dropped_rejected,
            &self.rotations,
            &self.rotation_errors,
            &self.pending_bytes,
            &self.pending_records,
        ] {
            c.store(0, Relaxed);
        }
        self.stalled.store(false, Relaxed);
    }
}

/// A snapshot of a logger's counters.
///
/// Each field is read with a relaxed load: the snapshot is consistent per
/// field, not across fields, and goes stale at once while records flow.
/// After `Logger::flush` returns, or after the
/// guard is dropped, the counters of everything accepted before are final.
///
/// # Accounting
///
/// Every record accepted by `Logger::push` (an `Ok`
/// return) ends in exactly one of [`records_written`](Stats::records_written)
/// (taken from the ring by the writer thread) or
/// [`abandoned`](Stats::abandoned) (left in the ring when the shutdown
/// timeout ran out). Each record taken ends, per sink, in exactly one of
/// [`SinkStats::records_written`], [`SinkStats::dropped_overflow`],
/// [`SinkStats::dropped_failed`], [`SinkStats::dropped_format`],
/// [`SinkStats::filtered`] (below the sink's level) and
/// [`SinkStats::abandoned`], or is still pending (or kept by the sink's
/// backtrace: [`SinkStats::backtrace_kept`]) while the logger runs.
/// Records refused at push time (an `Err` return) are counted in the
/// `dropped_*` fields and [`discarded`](Stats::discarded). Once the guard
/// has been dropped these equations hold exactly.
///
/// # Examples
///
/// ```
/// use nowait_core::{Builder, Level, Sink};
///
/// let (logger, _guard) = Builder::new().sink(Sink::writer(std::io::sink())).build().unwrap();
/// logger.log(Level::Info, "hello").unwrap();
/// logger.flush().unwrap();
/// let stats = logger.stats();
/// assert_eq!(stats.records_written, 1);
/// assert_eq!(stats.sinks[0].records_written, 1);
/// assert_eq!(stats.dropped(), 0);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Stats {
    /// Records the writer thread took from the ring and formatted.
    pub records_written: u64,
    /// Records refused because the ring was full.
    pub dropped_full: u64,
    /// Records below the protected level refused because the ring was above
    /// its high-water mark.
    pub dropped_shed: u64,
    /// Records refused because they could never fit in the ring.
    pub dropped_too_large: u64,
    /// Records refused because the logger was already shut down (or was
    /// shutting down).
    pub dropped_closed: u64,
    /// Records dropped under [`FullPolicy::BlockTimeout`](crate::accounting::policy::FullPolicy::BlockTimeout)
    /// after waiting the whole timeout for room.
    pub dropped_timeout: u64,
    /// Records a front end gave up on (for example a `Display` that
    /// panicked), reported through `Logger::discarded`.
    pub discarded: u64,
    /// Records cut to fit in the ring (text lines and structured events;
    /// still written, marked `[truncated]`).
    pub truncated: u64,
    /// Times a producer had to wait for room (block policy).
    pub blocked_waits: u64,
    /// Records still in the ring when the shutdown timeout ran out (records
    /// pending in a sink's buffer then are in [`SinkStats::abandoned`]).
    pub abandoned: u64,
    /// Bytes of the ring held by records whose producer had claimed room
    /// but not finished copying when the shutdown timeout (plus a short
    /// grace) ran out: their number is unknown. Zero unless a producer
    /// thread was stopped in the middle of a push.
    pub abandoned_unknown_bytes: u64,
    /// The ring's capacity in bytes.
    pub ring_capacity: u64,
    /// The most bytes the writer thread took from the ring in one drain:
    /// about the most the ring ever held (it never reads the producers'
    /// claim position to know exactly, which would slow their next claim).
    pub ring_high_water: u64,
    /// Calls of rate-limited call sites that were not logged (`limit = N
    /// per PERIOD` on the macros, rate directives of the `tracing` layer):
    /// counted, never pushed, so not in [`dropped`](Stats::dropped); the
    /// output reports them as `suppressed N records from FILE:LINE ...`
    /// notices.
    pub suppressed_rate_limit: u64,
    /// Calls of sampled call sites that were not kept (`sample = 1 in N`).
    pub suppressed_sampled: u64,
    /// One entry per sink, in the order they were added.
    pub sinks: Vec<SinkStats>,
}

impl Stats {
    /// All records refused at push time or given up on by a front end.
    ///
    /// # Examples
    ///
    /// ```
    /// let stats = nowait_core::stats::Stats::default();
    /// assert_eq!(stats.dropped(), 0);
    /// ```
    pub fn dropped(&self) -> u64 {
        self.dropped_full
            + self.dropped_shed
            + self.dropped_too_large
            + self.dropped_closed
            + self.dropped_timeout
            + self.discarded
    }
}

/// Counters of one sink. See [`Stats`].
///
/// # Examples
///
/// ```
/// let s = nowait_core::stats::SinkStats::default();
/// assert_eq!(s.dropped(), 0);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SinkStats {
    /// The sink's name (`stdout`, `stderr`, `file:PATH`, `writer`,
    /// `tcp:ADDR`, `unix:PATH`, `unix-datagram:PATH`, `otlp:URL`).
    pub name: String,
    /// Records completely written to this sink.
    pub records_written: u64,
    /// Bytes written to this sink, notices included.
    pub bytes_written: u64,
    /// `write(2)` calls (or `write` calls on a custom writer) that wrote bytes.
    pub write_calls: u64,
    /// Records dropped for this sink because its pending buffer was full
    /// (a slow or stalled reader).
    pub dropped_overflow: u64,
    /// Records dropped for this sink because it failed (closed, broken pipe,
    /// a disk full for longer than its buffer lasted; the cause is in
    /// [`last_error`](SinkStats::last_error)).
    pub dropped_failed: u64,
    /// Records this sink's format panicked on (the partial line is removed).
    pub dropped_format: u64,
    /// The part of [`dropped_failed`](SinkStats::dropped_failed) that the
    /// receiver refused for good, never retried: a datagram larger than
    /// the socket takes (`Sink::unix_datagram`),
    /// the records of an OTLP request answered 400 (or another status
    /// OTLP says not to retry), and an OTLP partial success's
    /// `rejected_log_records`. Each refusal also counts in
    /// [`write_errors`](SinkStats::write_errors) and sets
    /// [`last_error`](SinkStats::last_error); the other sinks get a notice
    /// at most once a second, the sink itself once its receiver takes a
    /// request again.
    pub dropped_rejected: u64,
    /// Records skipped for this sink because they were below its level
    /// (`Sink::level`). Not a loss: not in
    /// [`dropped`](SinkStats::dropped), never reported as a notice. With a
    /// backtrace (`Sink::backtrace`), a record it
    /// keeps is counted here only once it is forgotten (to make room, or
    /// at shutdown), never if a trigger released it.
    pub filtered: u64,
    /// Records below the sink's level that its backtrace keeps now, to
    /// write if a trigger comes: counted in no other field yet (zero once
    /// the guard is dropped).
    pub backtrace_kept: u64,
    /// Records a backtrace's trigger released into the sink. Each is also
    /// counted once in the outcome it then had
    /// ([`records_written`](SinkStats::records_written), a `dropped_*`
    /// field, [`abandoned`](SinkStats::abandoned)), never in
    /// [`filtered`](SinkStats::filtered).
    pub backtrace_released: u64,
    /// Records still pending for this sink when the shutdown timeout ran
    /// out, or that it could not take at exit because it was stalled (a
    /// terminal or pipe nobody reads) or failing. Includes the records of a
    /// write that had not returned when the timeout ran out: those may still
    /// reach the sink.
    pub abandoned: u64,
    /// Write errors: each retry that failed counts, and each request or
    /// datagram the receiver refused (see
    /// [`dropped_rejected`](SinkStats::dropped_rejected)).
    pub write_errors: u64,
    /// Files a rolling sink (`Sink::rolling`)
    /// rolled over to (zero for other sinks).
    pub rotations: u64,
    /// What a rolling sink could not do: a new file it could not create
    /// (the records went on into the old one), a current file it could not
    /// reopen, a rotated file it could not compress (kept as is) or remove
    /// (retention). Each also appears in the sink as a notice. Zero for
    /// other sinks.
    pub rotation_errors: u64,
    /// Bytes formatted but not yet written.
    pub pending_bytes: u64,
    /// Whether the sink is written without ever blocking the writer thread
    /// (`false` for files and custom writers, which block by nature, and for
    /// a terminal or pipe that could not be reopened non-blocking; see
    /// `Sink::stdout`).
    pub non_blocking: bool,
    /// Whether the sink has pending bytes and has taken none for a while
    /// (a stalled reader). Flushes do not wait for a stalled sink.
    pub stalled: bool,
    /// The last write error, if any (a refusal's answer included).
    pub last_error: Option<String>,
}

impl SinkStats {
    /// Records this sink dropped, for any reason.
    ///
    /// # Examples
    ///
    /// ```
    /// let s = nowait_core::stats::SinkStats::default();
    /// assert_eq!(s.dropped(), s.dropped_overflow + s.dropped_failed + s.dropped_format + s.abandoned);
    /// ```
    pub fn dropped(&self) -> u64 {
        self.dropped_overflow + self.dropped_failed + self.dropped_format + self.abandoned
    }
}

/// Held by whoever holds any logger's list of limited call sites, and by
/// the `fork()` prepare handler from before the fork until after it: no
/// list is then held at the fork by a thread the child will not have, and
/// the child resets and reads every list. Holders keep it for a few
/// instructions (a push, the writer's copy of new entries, the stats' sum).
static LIMITS_GATE: Mutex<()> = Mutex::new(());

/// Takes the gate around every logger's list of limited call sites (see
/// [`LIMITS_GATE`]); the fork's prepare handler holds it across the fork.
pub(crate) fn limits_gate() -> MutexGuard<'static, ()> {
    LIMITS_GATE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A logger's list of limited call sites, locked under the gate. The list's
/// guard is declared first, so it is released before the gate.
pub(crate) struct LimitsGuard<'a> {
    list: MutexGuard<'a, Vec<&'static crate::limit::SiteLimit>>,
    _gate: MutexGuard<'static, ()>,
}

impl std::ops::Deref for LimitsGuard<'_> {
    type Target = Vec<&'static crate::limit::SiteLimit>;
    fn deref(&self) -> &Self::Target {
        &self.list
    }
}

impl std::ops::DerefMut for LimitsGuard<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.list
    }
}

impl Counters {
    /// The limited call sites, under the process-wide gate. Both locks are
    /// held for a few instructions by others, never across a wait, so this
    /// waits as long: a push, a copy, a sum.
    pub(crate) fn lock_limits(&self) -> LimitsGuard<'_> {
        let gate = limits_gate();
        LimitsGuard {
            list: self.limits.lock().unwrap_or_else(PoisonError::into_inner),
            _gate: gate,
        }
    }

    pub(crate) fn snapshot(&self, ring_capacity: usize, sinks: &[SinkCounters]) -> Stats {
        let (mut suppressed_rate_limit, mut suppressed_sampled) = (0, 0);
        for site in self.lock_limits().iter() {
            match site.reason() {
                crate::record::SuppressReason::RateLimit => {
                    suppressed_rate_limit += site.suppressed()
                }
                crate::record::SuppressReason::Sampling => suppressed_sampled += site.suppressed(),
            }
        }
        Stats {
            suppressed_rate_limit,
            suppressed_sampled,
            records_written: self.records_written.load(Relaxed),
            dropped_full: self.dropped_full.load(Relaxed),
            dropped_shed: self.dropped_shed.load(Relaxed),
            dropped_too_large: self.dropped_too_large.load(Relaxed),
            dropped_closed: self.dropped_closed.load(Relaxed),
            dropped_timeout: self.dropped_timeout.load(Relaxed),
            discarded: self.discarded.load(Relaxed),
            truncated: self.truncated.load(Relaxed),
            blocked_waits: self.blocked_waits.load(Relaxed),
            abandoned: self.abandoned.load(Relaxed),
            abandoned_unknown_bytes: self.abandoned_unknown_bytes.load(Relaxed),
            ring_capacity: ring_capacity as u64,
            ring_high_water: self.ring_high_water.load(Relaxed),
            sinks: sinks
                .iter()
                .map(|s| SinkStats {
                    name: s.name.clone(),
                    records_written: s.records_written.load(Relaxed),
                    bytes_written: s.bytes_written.load(Relaxed),
                    write_calls: s.write_calls.load(Relaxed),
                    dropped_overflow: s.dropped_overflow.load(Relaxed),
                    dropped_failed: s.dropped_failed.load(Relaxed),
                    dropped_format: s.dropped_format.load(Relaxed),
                    dropped_rejected: s.dropped_rejected.load(Relaxed),
                    filtered: s.filtered.load(Relaxed),
                    backtrace_kept: s.backtrace_kept.load(Relaxed),
                    backtrace_released: s.backtrace_released.load(Relaxed),
                    abandoned: s.abandoned.load(Relaxed),
                    write_errors: s.write_errors.load(Relaxed),
                    rotations: s.rotations.load(Relaxed),
                    rotation_errors: s.rotation_errors.load(Relaxed),
                    pending_bytes: s.pending_bytes.load(Relaxed),
                    non_blocking: s.non_blocking.load(Relaxed),
                    stalled: s.stalled.load(Relaxed),
                    last_error: s.last_error.try_lock().map(|e| e.clone()).unwrap_or(None),
                })
                .collect(),
        }
    }
}
