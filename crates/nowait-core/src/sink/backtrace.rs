//! Backtrace on error: the records a sink's level filters out, kept for a
//! while in case an error follows.
//!
//! # Design
//!
//! 1. The writer thread sees every record a front end pushed, before any
//!    sink's level (see `SinkState::add_record`). A record below a sink's
//!    level and at or above the backtrace's [`lowest`](BacktraceBuffer::lowest)
//!    level is copied, as the ring holds it (level, kind, payload), into
//!    the sink's backtrace: a circle of bytes reserved once, at the first
//!    record kept, to its byte bound. When the bound in records or bytes
//!    is reached the oldest record is forgotten (and counted as filtered,
//!    which is what it would have been without a backtrace).
//! 2. Raw bytes, not formatted ones: keeping a record costs a copy of its
//!    payload (tens of nanoseconds on the writer thread), formatting it
//!    would cost the whole format; most kept records are never written,
//!    so only the few a trigger releases are formatted, then.
//! 3. A record at or above the [`trigger`](BacktraceBuffer::trigger) level that
//!    the sink takes releases the kept records into the sink, oldest first,
//!    before itself, each formatted with
//!    [`Format::format_kept`](crate::format::Format::format_kept) between two lines
//!    of [`Format::kept_notice`](crate::format::Format::kept_notice). From there
//!    they are the sink's records like any other: written, or shed and
//!    counted, mirrored by a crash-durable ring.
//! 4. What no trigger released by the shutdown is counted as filtered.
//!
//! Nothing of this runs on the request thread: a record costs its caller
//! the push it would cost anyway, provided it passes the logger's level
//! and the process filter (see [`BacktraceBuffer`]).

use crate::level::Level;

/// Default byte bound of a backtrace made with [`BacktraceBuffer::records`].
const DEFAULT_BYTES: usize = 256 << 10;

/// Bytes a kept record costs besides its payload (its level, kind and
/// length).
pub(crate) const RECORD_OVERHEAD: usize = 6;

/// A sink's backtrace of records (not of the stack, as
/// `std::backtrace::Backtrace`): a bounded buffer of the last records below
/// the sink's level, kept on the writer thread and written only when an
/// error (or the [`trigger`](BacktraceBuffer::trigger) level) reaches the
/// sink, before it.
///
/// Set with [`Sink::backtrace`](crate::sink::Sink::backtrace). A file at INFO
/// with a backtrace of 100 records shows, before each ERROR, the DEBUG
/// records that led to it, and nothing of them otherwise.
///
/// # What is kept
///
/// Records below the sink's [`level`](crate::sink::Sink::level) and at or above
/// [`lowest`](BacktraceBuffer::lowest) (default DEBUG). The logger's
/// `min_level` goes down to `lowest` so that the
/// front ends push them; a process filter ([`set_filter`](crate::filter::set_filter),
/// `RUST_LOG`, or a `tracing_subscriber::EnvFilter` in front of the
/// `tracing` layer) must let them through too: a DEBUG call that a filter
/// stops never reaches the writer, and no backtrace can show it. Each such
/// call then costs its thread a push (tens of nanoseconds, measured in
/// the `backtrace` benchmark results) where it cost a load and a branch.
///
/// # Bounds
///
/// At most [`max_records`](BacktraceBuffer::max_records) records and
/// [`max_bytes`](BacktraceBuffer::max_bytes) bytes (each record counting its
/// payload, as the front end encoded it, plus 6 bytes), the older ones
/// forgotten first. Both, because records are what a reader counts, and
/// bytes are what memory is: a record may be as large as
/// `Logger::max_record_len`. The bytes are
/// reserved once, at the first record kept, and never grow. A record larger
/// than the whole byte bound is not kept.
///
/// # Output
///
/// With [`Text`](crate::format::Text) (and [`Plain`](crate::format::Plain), syslog, or any
/// format that does not say otherwise), the released records come between
/// two notices of target `nowait`, at INFO:
///
/// ```text
/// 2026-11-22T12:00:01.000100Z  INFO nowait: --- 2 earlier records below INFO, kept for this ERROR ---
/// 2026-11-22T12:00:00.990000Z DEBUG app::db: connecting host="db1"
/// 2026-11-22T12:00:00.995000Z DEBUG app::db: retrying attempt=2
/// 2026-11-22T12:00:01.000100Z  INFO nowait: --- end of the 2 earlier records ---
/// 2026-11-22T12:00:01.000000Z ERROR app::db: query failed
/// ```
///
/// With [`Json`](crate::format::Json) there is no prose line: each released record
/// is its usual line with the key `"backtrace":true` added last, so every
/// line stays one JSON object. When older records were forgotten since the
/// last trigger, the first notice says how many (`..., kept for this ERROR;
/// 40 older ones were not kept ---`).
///
/// A second trigger releases only what was kept since the first. Notices
/// of loss are never held back: they are written when the loss is
/// reported, so a gap notice can come before a block of earlier records
/// whose time it overlaps. Plain text records
/// (`Logger::log`) carry no time of their own: JSON
/// stamps a released one with the time it is formatted.
///
/// # Accounting
///
/// A kept record is counted once, when its fate is known: in
/// [`SinkStats::filtered`](crate::accounting::stats::SinkStats::filtered) when it is
/// forgotten or still kept at shutdown, or, once a trigger released it,
/// as the sink's other records are (written, dropped, abandoned); those
/// are also counted in
/// [`SinkStats::backtrace_released`](crate::accounting::stats::SinkStats::backtrace_released).
/// While it is kept it is in [`SinkStats::backtrace_kept`](crate::accounting::stats::SinkStats::backtrace_kept),
/// so at any time, per sink,
/// `records_written + dropped() + filtered + backtrace_kept + pending ==`
/// [`Stats::records_written`](crate::accounting::stats::Stats::records_written), and with
/// nothing pending once the guard is dropped.
///
/// # Examples
///
/// ```
/// use nowait_core::{Builder, Level, Sink};
/// use nowait_core::format::Text;
/// use nowait_core::sink::BacktraceBuffer;
///
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("app.log");
/// let (logger, guard) = Builder::new()
///     .sink(
///         Sink::file(&path)
///             .format(Text::new().without_time())
///             .level(Level::Info)
///             .backtrace(BacktraceBuffer::records(100)),
///     )
///     .build()?;
/// logger.log(Level::Debug, "connecting to db1")?;
/// logger.log(Level::Info, "request /a")?;
/// logger.log(Level::Error, "query failed")?;
/// logger.log(Level::Debug, "never shown: no error follows")?;
/// drop(guard);
/// assert_eq!(
///     std::fs::read_to_string(&path)?,
///     "request /a\n\
///      \x20INFO nowait: --- 1 earlier record below INFO, kept for this ERROR ---\n\
///      connecting to db1\n\
///      \x20INFO nowait: --- end of the 1 earlier record ---\n\
///      query failed\n"
/// );
/// assert_eq!(logger.stats().sinks[0].filtered, 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BacktraceBuffer {
    pub(crate) records: usize,
    pub(crate) bytes: usize,
    pub(crate) trigger: Level,
    pub(crate) lowest: Level,
}

impl BacktraceBuffer {
    /// Keeps the last `n` records (and at most 256 KiB of them).
    ///
    /// # Examples
    ///
    /// ```
    /// let bt = nowait_core::sink::BacktraceBuffer::records(100);
    /// assert_eq!(bt.max_record_count(), 100);
    /// assert_eq!(bt.max_byte_count(), 256 << 10);
    /// ```
    pub fn records(n: usize) -> BacktraceBuffer {
        BacktraceBuffer {
            records: n,
            bytes: DEFAULT_BYTES,
            trigger: Level::Error,
            lowest: Level::Debug,
        }
    }

    /// Keeps as many of the last records as fit in `bytes` (each counting
    /// its payload plus 6 bytes), whatever their number.
    ///
    /// # Examples
    ///
    /// ```
    /// let bt = nowait_core::sink::BacktraceBuffer::bytes(1 << 20);
    /// assert_eq!(bt.max_byte_count(), 1 << 20);
    /// assert_eq!(bt.max_record_count(), usize::MAX);
    /// ```
    pub fn bytes(bytes: usize) -> BacktraceBuffer {
        BacktraceBuffer {
            bytes,
            ..BacktraceBuffer::records(usize::MAX)
        }
    }

    /// Bounds the number of records kept (at least 1, else
    /// `Builder::build` fails).
    ///
    /// # Examples
    ///
    /// ```
    /// let bt = nowait_core::sink::BacktraceBuffer::bytes(64 << 10).max_records(500);
    /// assert_eq!(bt.max_record_count(), 500);
    /// ```
    pub fn max_records(mut self, n: usize) -> BacktraceBuffer {
        self.records = n;
        self
    }

    /// Bounds the bytes kept (between 1 KiB and 1 GiB, else
    /// `Builder::build` fails).
    ///
    /// # Examples
    ///
    /// ```
    /// let bt = nowait_core::sink::BacktraceBuffer::records(1000).max_bytes(1 << 20);
    /// assert_eq!(bt.max_byte_count(), 1 << 20);
    /// ```
    pub fn max_bytes(mut self, bytes: usize) -> BacktraceBuffer {
        self.bytes = bytes;
        self
    }

    /// The level at or above which a record that the sink takes writes the
    /// kept records before itself (default [`Level::Error`]). A trigger
    /// below the sink's level acts as the sink's level: every record the
    /// sink takes is then a trigger.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::Level;
    /// use nowait_core::sink::BacktraceBuffer;
    ///
    /// let bt = BacktraceBuffer::records(100).trigger(Level::Warn);
    /// assert_eq!(bt.trigger_level(), Level::Warn);
    /// ```
    pub fn trigger(mut self, level: Level) -> BacktraceBuffer {
        self.trigger = level;
        self
    }

    /// The least severe level kept (default [`Level::Debug`]; TRACE
    /// records, often many, are then filtered as usual). The logger lets
    /// records from this level through (see [`BacktraceBuffer`]).
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::{Builder, Level, Sink};
    /// use nowait_core::sink::BacktraceBuffer;
    ///
    /// let (logger, _guard) = Builder::new()
    ///     .sink(
    ///         Sink::writer(std::io::sink())
    ///             .level(Level::Info)
    ///             .backtrace(BacktraceBuffer::records(100).lowest(Level::Trace)),
    ///     )
    ///     .build()?;
    /// assert_eq!(logger.min_level(), Level::Trace);
    /// # Ok::<(), nowait_core::BuildError>(())
    /// ```
    pub fn lowest(mut self, level: Level) -> BacktraceBuffer {
        self.lowest = level;
        self
    }

    /// The bound in records.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(nowait_core::sink::BacktraceBuffer::records(7).max_record_count(), 7);
    /// ```
    pub fn max_record_count(&self) -> usize {
        self.records
    }

    /// The bound in bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(nowait_core::sink::BacktraceBuffer::bytes(4096).max_byte_count(), 4096);
    /// ```
    pub fn max_byte_count(&self) -> usize {
        self.bytes
    }

    /// The trigger level.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::Level;
    /// use nowait_core::sink::BacktraceBuffer;
    ///
    /// assert_eq!(BacktraceBuffer::records(1).trigger_level(), Level::Error);
    /// ```
    pub fn trigger_level(&self) -> Level {
        self.trigger
    }

    /// The least severe level kept.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::Level;
    /// use nowait_core::sink::BacktraceBuffer;
    ///
    /// assert_eq!(BacktraceBuffer::records(1).lowest_level(), Level::Debug);
    /// ```
    pub fn lowest_level(&self) -> Level {
        self.lowest
    }

    /// Why this backtrace cannot be used, if it cannot.
    pub(crate) fn check(&self) -> Result<(), String> {
        if self.records == 0 {
            return Err("a backtrace must keep at least 1 record".into());
        }
        if !(1024..=crate::ring::MAX_CAPACITY).contains(&self.bytes) {
            return Err(format!(
                "a backtrace's max_bytes must be between 1024 bytes and 1 GiB, got {}",
                self.bytes
            ));
        }
        Ok(())
    }
}
