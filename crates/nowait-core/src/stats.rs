//! Counters, and the [`Stats`] snapshot that exposes them.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;

/// Counters updated by producers (on their slow paths only) and by the
/// writer thread. All are monotonic.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) dropped_full: AtomicU64,
    pub(crate) dropped_shed: AtomicU64,
    pub(crate) dropped_too_large: AtomicU64,
    pub(crate) dropped_closed: AtomicU64,
    pub(crate) discarded: AtomicU64,
    pub(crate) blocked_waits: AtomicU64,
    pub(crate) truncated: AtomicU64,
    // Written by the writer thread only.
    pub(crate) records_written: AtomicU64,
    pub(crate) abandoned: AtomicU64,
    pub(crate) ring_high_water: AtomicU64,
}

/// Per-sink counters, written by the writer thread only.
#[derive(Debug, Default)]
pub(crate) struct SinkCounters {
    pub(crate) name: String,
    pub(crate) records_written: AtomicU64,
    pub(crate) bytes_written: AtomicU64,
    pub(crate) write_calls: AtomicU64,
    pub(crate) dropped_overflow: AtomicU64,
    pub(crate) dropped_failed: AtomicU64,
    pub(crate) write_errors: AtomicU64,
    pub(crate) pending_bytes: AtomicU64,
    pub(crate) last_error: Mutex<Option<String>>,
}

impl SinkCounters {
    pub(crate) fn new(name: String) -> Self {
        SinkCounters {
            name,
            ..Default::default()
        }
    }
}

/// A snapshot of a logger's counters.
///
/// Each field is read with a relaxed load: the snapshot is consistent per
/// field, not across fields, and goes stale at once while records flow.
/// After [`Logger::flush`](crate::Logger::flush) returns, or after the
/// guard is dropped, the counters of everything accepted before are final.
///
/// Every record accepted by [`Logger::push`](crate::Logger::push) ends in
/// exactly one of: [`records_written`](Stats::records_written) (taken by the
/// writer thread; per sink it then counts as written, dropped for overflow,
/// dropped after a failure, or pending) or [`abandoned`](Stats::abandoned).
/// Records refused at push time are counted in the `dropped_*` fields.
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
    /// Records refused because the logger was already shut down.
    pub dropped_closed: u64,
    /// Records a front end gave up on (for example a `Display` that
    /// panicked), reported through [`Logger::discarded`](crate::Logger::discarded).
    pub discarded: u64,
    /// Text records cut to fit in the ring (still written, marked `[truncated]`).
    pub truncated: u64,
    /// Times a producer had to wait for room (block policy).
    pub blocked_waits: u64,
    /// Records still in the ring or in a sink's buffer when the shutdown
    /// timeout ran out.
    pub abandoned: u64,
    /// The ring's capacity in bytes.
    pub ring_capacity: u64,
    /// The most bytes the writer thread ever found in the ring.
    pub ring_high_water: u64,
    /// One entry per sink, in the order they were added.
    pub sinks: Vec<SinkStats>,
}

impl Stats {
    /// All records refused at push time or given up on by a front end.
    ///
    /// # Examples
    ///
    /// ```
    /// let stats = nowait_core::Stats::default();
    /// assert_eq!(stats.dropped(), 0);
    /// ```
    pub fn dropped(&self) -> u64 {
        self.dropped_full
            + self.dropped_shed
            + self.dropped_too_large
            + self.dropped_closed
            + self.discarded
    }
}

/// Counters of one sink. See [`Stats`].
///
/// # Examples
///
/// ```
/// let s = nowait_core::SinkStats::default();
/// assert_eq!(s.dropped(), 0);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SinkStats {
    /// The sink's name (`stdout`, `stderr`, `file:PATH`, `writer`).
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
    /// or an error that outlasted its buffer).
    pub dropped_failed: u64,
    /// Write errors (each retry that failed counts).
    pub write_errors: u64,
    /// Bytes formatted but not yet written.
    pub pending_bytes: u64,
    /// The last write error, if any.
    pub last_error: Option<String>,
}

impl SinkStats {
    /// Records this sink dropped, for any reason.
    ///
    /// # Examples
    ///
    /// ```
    /// let s = nowait_core::SinkStats::default();
    /// assert_eq!(s.dropped(), s.dropped_overflow + s.dropped_failed);
    /// ```
    pub fn dropped(&self) -> u64 {
        self.dropped_overflow + self.dropped_failed
    }
}

impl Counters {
    pub(crate) fn snapshot(&self, ring_capacity: usize, sinks: &[SinkCounters]) -> Stats {
        Stats {
            records_written: self.records_written.load(Relaxed),
            dropped_full: self.dropped_full.load(Relaxed),
            dropped_shed: self.dropped_shed.load(Relaxed),
            dropped_too_large: self.dropped_too_large.load(Relaxed),
            dropped_closed: self.dropped_closed.load(Relaxed),
            discarded: self.discarded.load(Relaxed),
            truncated: self.truncated.load(Relaxed),
            blocked_waits: self.blocked_waits.load(Relaxed),
            abandoned: self.abandoned.load(Relaxed),
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
                    write_errors: s.write_errors.load(Relaxed),
                    pending_bytes: s.pending_bytes.load(Relaxed),
                    last_error: s.last_error.lock().map(|e| e.clone()).unwrap_or(None),
                })
                .collect(),
        }
    }
}
