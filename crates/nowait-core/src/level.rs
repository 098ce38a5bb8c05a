//! Severity levels.

use std::fmt;
use std::str::FromStr;

/// The severity of a record, from least to most severe.
///
/// Levels order as `Trace < Debug < Info < Warn < Error`; the full-ring policy
/// protects records at or above a configurable level (WARN by default).
///
/// # Examples
///
/// ```
/// use nowait_core::Level;
///
/// assert!(Level::Warn > Level::Info);
/// assert_eq!("warn".parse::<Level>(), Ok(Level::Warn));
/// assert_eq!(Level::Error.as_str(), "ERROR");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Level {
    /// Very verbose, usually disabled.
    Trace = 0,
    /// Diagnostic detail.
    Debug = 1,
    /// Normal operation.
    Info = 2,
    /// Something unexpected that the program recovered from.
    Warn = 3,
    /// A failure.
    Error = 4,
}

impl Level {
    /// All levels, least severe first.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(nowait_core::Level::ALL.len(), 5);
    /// ```
    pub const ALL: [Level; 5] = [
        Level::Trace,
        Level::Debug,
        Level::Info,
        Level::Warn,
        Level::Error,
    ];

    /// The upper-case name, as printed in text output (`"INFO"`).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(nowait_core::Level::Info.as_str(), "INFO");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            Level::Trace => "TRACE",
            Level::Debug => "DEBUG",
            Level::Info => "INFO",
            Level::Warn => "WARN",
            Level::Error => "ERROR",
        }
    }

    /// The level stored in a record header, or `None` for a byte that is not
    /// a level.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::Level;
    /// assert_eq!(Level::from_u8(3), Some(Level::Warn));
    /// assert_eq!(Level::from_u8(9), None);
    /// ```
    pub const fn from_u8(v: u8) -> Option<Level> {
        match v {
            0 => Some(Level::Trace),
            1 => Some(Level::Debug),
            2 => Some(Level::Info),
            3 => Some(Level::Warn),
            4 => Some(Level::Error),
            _ => None,
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// The error returned when parsing a [`Level`] from a string fails.
///
/// # Examples
///
/// ```
/// assert!("loud".parse::<nowait_core::Level>().is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseLevelError(());

impl fmt::Display for ParseLevelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("invalid level: expected one of trace, debug, info, warn, error")
    }
}

impl std::error::Error for ParseLevelError {}

impl FromStr for Level {
    type Err = ParseLevelError;

    fn from_str(s: &str) -> Result<Level, ParseLevelError> {
        Level::ALL
            .into_iter()
            .find(|l| l.as_str().eq_ignore_ascii_case(s))
            .or_else(|| s.eq_ignore_ascii_case("warning").then_some(Level::Warn))
            .ok_or(ParseLevelError(()))
    }
}
