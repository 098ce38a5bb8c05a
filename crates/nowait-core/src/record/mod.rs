//! Records as the writer thread sees them: the [`Record`] taken from the
//! ring, its [`kind`], and the [`Notice`] nowait writes about itself. The
//! `Format` that turns them into bytes is in `format`.

pub(crate) mod clock;

use std::time::SystemTime;

use crate::level::Level;

/// Record kinds understood by nowait's own formats.
///
/// The kind is one byte in every record header. Front ends that encode their
/// records in another form pick a kind and install a `Format` that
/// understands it.
pub mod kind {
    /// The payload is one line of text (UTF-8 expected, not required), without
    /// the trailing newline. Control characters in it are escaped on output.
    pub const TEXT: u8 = 0;
    /// The payload is a structured event in nowait's binary encoding (written
    /// by the `tracing`, `log` and macro front ends).
    pub const EVENT: u8 = 1;
}

/// One record taken from the ring by the writer thread.
///
/// # Examples
///
/// ```
/// use nowait_core::Level;
/// use nowait_core::record::{kind, Record};
///
/// let rec = Record::new(Level::Info, kind::TEXT, b"hello");
/// assert_eq!(rec.level(), Level::Info);
/// assert_eq!(rec.payload(), b"hello");
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Record<'a> {
    level: Level,
    kind: u8,
    payload: &'a [u8],
}

impl<'a> Record<'a> {
    /// A record, as a format test or a custom sink would build one.
    ///
    /// # Examples
    ///
    /// ```
    /// let rec = nowait_core::record::Record::new(nowait_core::Level::Warn, 0, b"x");
    /// assert_eq!(rec.kind(), 0);
    /// ```
    pub const fn new(level: Level, kind: u8, payload: &'a [u8]) -> Self {
        Record {
            level,
            kind,
            payload,
        }
    }

    /// The record's level.
    ///
    /// # Examples
    ///
    /// ```
    /// let rec = nowait_core::record::Record::new(nowait_core::Level::Warn, 0, b"x");
    /// assert_eq!(rec.level(), nowait_core::Level::Warn);
    /// ```
    pub const fn level(&self) -> Level {
        self.level
    }

    /// The record's kind (see [`kind`]).
    ///
    /// # Examples
    ///
    /// ```
    /// let rec = nowait_core::record::Record::new(nowait_core::Level::Warn, 7, b"x");
    /// assert_eq!(rec.kind(), 7);
    /// ```
    pub const fn kind(&self) -> u8 {
        self.kind
    }

    /// The bytes the front end pushed.
    ///
    /// # Examples
    ///
    /// ```
    /// let rec = nowait_core::record::Record::new(nowait_core::Level::Warn, 0, b"x");
    /// assert_eq!(rec.payload(), b"x");
    /// ```
    pub const fn payload(&self) -> &'a [u8] {
        self.payload
    }
}

/// A line that nowait itself writes into the output: drop counts, sink errors,
/// records abandoned at shutdown.
///
/// # Examples
///
/// ```
/// use nowait_core::Level;
/// use nowait_core::record::Notice;
///
/// let n = Notice::new(Level::Warn, std::time::SystemTime::UNIX_EPOCH, "3 records dropped");
/// assert_eq!(n.message(), "3 records dropped");
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Notice<'a> {
    level: Level,
    time: SystemTime,
    message: &'a str,
    suppressed: Option<Suppressed<'a>>,
}

impl<'a> Notice<'a> {
    /// A notice with the given level, time and message.
    ///
    /// # Examples
    ///
    /// ```
    /// let n = nowait_core::record::Notice::new(
    ///     nowait_core::Level::Error,
    ///     std::time::SystemTime::now(),
    ///     "sink failed",
    /// );
    /// assert_eq!(n.level(), nowait_core::Level::Error);
    /// ```
    pub const fn new(level: Level, time: SystemTime, message: &'a str) -> Self {
        Notice {
            level,
            time,
            message,
            suppressed: None,
        }
    }

    /// The notice, reporting the calls a limited call site suppressed
    /// (see [`suppressed`](Self::suppressed)).
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::Level;
    /// use nowait_core::record::{Notice, SuppressReason, Suppressed};
    ///
    /// let info = Suppressed::new(3, "src/db.rs:88", SuppressReason::RateLimit, "1 per 1s");
    /// let n = Notice::new(Level::Info, std::time::SystemTime::UNIX_EPOCH, "suppressed 3 records")
    ///     .with_suppressed(info);
    /// assert_eq!(n.suppressed(), Some(info));
    /// ```
    pub const fn with_suppressed(mut self, info: Suppressed<'a>) -> Self {
        self.suppressed = Some(info);
        self
    }

    /// For a notice about suppressed calls (`suppressed N records from
    /// FILE:LINE (limit RULE) between T1 and T2`), what it counts, for
    /// formats that carry it as fields (JSON's `fields`, OTLP's
    /// attributes); `None` for other notices.
    ///
    /// # Examples
    ///
    /// ```
    /// # let n = nowait_core::record::Notice::new(nowait_core::Level::Warn, std::time::SystemTime::UNIX_EPOCH, "m");
    /// assert_eq!(n.suppressed(), None);
    /// ```
    pub const fn suppressed(&self) -> Option<Suppressed<'a>> {
        self.suppressed
    }

    /// The notice's level (WARN for losses, ERROR for sink failures).
    ///
    /// # Examples
    ///
    /// ```
    /// # let n = nowait_core::record::Notice::new(nowait_core::Level::Warn, std::time::SystemTime::UNIX_EPOCH, "m");
    /// assert_eq!(n.level(), nowait_core::Level::Warn);
    /// ```
    pub const fn level(&self) -> Level {
        self.level
    }

    /// When the writer thread produced the notice.
    ///
    /// # Examples
    ///
    /// ```
    /// # use std::time::SystemTime;
    /// # let n = nowait_core::record::Notice::new(nowait_core::Level::Warn, SystemTime::UNIX_EPOCH, "m");
    /// assert_eq!(n.time(), SystemTime::UNIX_EPOCH);
    /// ```
    pub const fn time(&self) -> SystemTime {
        self.time
    }

    /// The human-readable message, without prefix or newline. It names the
    /// component (`nowait`) itself, e.g. `"1234 records dropped (ring full)
    /// between ... and ..."`.
    ///
    /// # Examples
    ///
    /// ```
    /// # let n = nowait_core::record::Notice::new(nowait_core::Level::Warn, std::time::SystemTime::UNIX_EPOCH, "m");
    /// assert_eq!(n.message(), "m");
    /// ```
    pub const fn message(&self) -> &'a str {
        self.message
    }
}

/// Why calls of a call site were not logged (see [`Suppressed`]).
///
/// # Examples
///
/// ```
/// assert_eq!(nowait_core::record::SuppressReason::Sampling.as_str(), "sampling");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SuppressReason {
    /// Over the call site's rate limit (`limit = N per PERIOD`).
    RateLimit,
    /// Not kept by the call site's sampling (`sample = 1 in N`).
    Sampling,
}

impl SuppressReason {
    /// `rate_limit` or `sampling`: the value of the notice's `reason`
    /// field and of the `metrics` label.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(nowait_core::record::SuppressReason::RateLimit.as_str(), "rate_limit");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            SuppressReason::RateLimit => "rate_limit",
            SuppressReason::Sampling => "sampling",
        }
    }
}

/// What a notice about suppressed calls counts: how many, from which call
/// site, why, under which rule.
///
/// # Examples
///
/// ```
/// use nowait_core::record::{SuppressReason, Suppressed};
///
/// let s = Suppressed::new(41230, "src/db.rs:88", SuppressReason::RateLimit, "1 per 1s");
/// assert_eq!(s.count(), 41230);
/// assert_eq!(s.site(), "src/db.rs:88");
/// assert_eq!(s.reason(), SuppressReason::RateLimit);
/// assert_eq!(s.rule(), "1 per 1s");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Suppressed<'a> {
    count: u64,
    site: &'a str,
    reason: SuppressReason,
    rule: &'a str,
}

impl<'a> Suppressed<'a> {
    /// `count` calls of the call site at `site` (`file:line`) suppressed
    /// for `reason` under `rule` (`100 per 1s`, `1 in 100`).
    ///
    /// # Examples
    ///
    /// ```
    /// let s = nowait_core::record::Suppressed::new(1, "a.rs:1", nowait_core::record::SuppressReason::Sampling, "1 in 10");
    /// assert_eq!(s.count(), 1);
    /// ```
    pub const fn new(count: u64, site: &'a str, reason: SuppressReason, rule: &'a str) -> Self {
        Suppressed {
            count,
            site,
            reason,
            rule,
        }
    }

    /// The number of calls suppressed in the notice's window.
    ///
    /// # Examples
    ///
    /// ```
    /// # let s = nowait_core::record::Suppressed::new(7, "a.rs:1", nowait_core::record::SuppressReason::Sampling, "1 in 10");
    /// assert_eq!(s.count(), 7);
    /// ```
    pub const fn count(&self) -> u64 {
        self.count
    }

    /// The call site, `file:line`.
    ///
    /// # Examples
    ///
    /// ```
    /// # let s = nowait_core::record::Suppressed::new(7, "a.rs:1", nowait_core::record::SuppressReason::Sampling, "1 in 10");
    /// assert_eq!(s.site(), "a.rs:1");
    /// ```
    pub const fn site(&self) -> &'a str {
        self.site
    }

    /// Why the calls were suppressed.
    ///
    /// # Examples
    ///
    /// ```
    /// # let s = nowait_core::record::Suppressed::new(7, "a.rs:1", nowait_core::record::SuppressReason::Sampling, "1 in 10");
    /// assert_eq!(s.reason(), nowait_core::record::SuppressReason::Sampling);
    /// ```
    pub const fn reason(&self) -> SuppressReason {
        self.reason
    }

    /// The call site's rule, as the macros spell it: `100 per 1s`,
    /// `1 in 100`.
    ///
    /// # Examples
    ///
    /// ```
    /// # let s = nowait_core::record::Suppressed::new(7, "a.rs:1", nowait_core::record::SuppressReason::Sampling, "1 in 10");
    /// assert_eq!(s.rule(), "1 in 10");
    /// ```
    pub const fn rule(&self) -> &'a str {
        self.rule
    }
}
