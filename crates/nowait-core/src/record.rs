//! Records as the writer thread sees them: the [`Record`] taken from the
//! ring, its [`kind`], and the [`Notice`] nowait writes about itself. The
//! [`Format`](crate::Format) that turns them into bytes is in `format`.

use std::time::SystemTime;

use crate::Level;

/// Record kinds understood by nowait's own formats.
///
/// The kind is one byte in every record header. Front ends that encode their
/// records in another form pick a kind and install a [`Format`](crate::Format) that
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
/// use nowait_core::{kind, Level, Record};
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
    /// let rec = nowait_core::Record::new(nowait_core::Level::Warn, 0, b"x");
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
    /// let rec = nowait_core::Record::new(nowait_core::Level::Warn, 0, b"x");
    /// assert_eq!(rec.level(), nowait_core::Level::Warn);
    /// ```
    pub const fn level(&self) -> Level {
        self.level
    }

    /// The record's kind (see [`kind`](crate::kind)).
    ///
    /// # Examples
    ///
    /// ```
    /// let rec = nowait_core::Record::new(nowait_core::Level::Warn, 7, b"x");
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
    /// let rec = nowait_core::Record::new(nowait_core::Level::Warn, 0, b"x");
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
/// use nowait_core::{Level, Notice};
///
/// let n = Notice::new(Level::Warn, std::time::SystemTime::UNIX_EPOCH, "3 records dropped");
/// assert_eq!(n.message(), "3 records dropped");
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Notice<'a> {
    level: Level,
    time: SystemTime,
    message: &'a str,
}

impl<'a> Notice<'a> {
    /// A notice with the given level, time and message.
    ///
    /// # Examples
    ///
    /// ```
    /// let n = nowait_core::Notice::new(
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
        }
    }

    /// The notice's level (WARN for losses, ERROR for sink failures).
    ///
    /// # Examples
    ///
    /// ```
    /// # let n = nowait_core::Notice::new(nowait_core::Level::Warn, std::time::SystemTime::UNIX_EPOCH, "m");
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
    /// # let n = nowait_core::Notice::new(nowait_core::Level::Warn, SystemTime::UNIX_EPOCH, "m");
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
    /// # let n = nowait_core::Notice::new(nowait_core::Level::Warn, std::time::SystemTime::UNIX_EPOCH, "m");
    /// assert_eq!(n.message(), "m");
    /// ```
    pub const fn message(&self) -> &'a str {
        self.message
    }
}
