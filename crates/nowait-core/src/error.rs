//! Error types.

use std::fmt;
use std::io;

/// Why a record was not accepted. Every such record is counted in
/// `Stats` and reported in the output by the writer thread, so
/// callers may ignore this error.
///
/// # Examples
///
/// ```
/// use nowait_core::{Builder, FullPolicy, Level, PushError, Sink};
///
/// let (logger, guard) = Builder::new()
///     .sink(Sink::writer(std::io::sink()))
///     .full_policy(FullPolicy::Drop)
///     .build()
///     .unwrap();
/// drop(guard); // the logger is closed: later records are refused and counted
/// assert_eq!(logger.try_log(Level::Info, "too late"), Err(PushError::Closed));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PushError {
    /// The ring had no room (drop policy, or a `try_` call). Counted as
    /// "ring full".
    Full,
    /// The ring was above its high-water mark and the record's level is below
    /// the protected level. Counted as "shed".
    Shed,
    /// The record is larger than half the ring and can never fit. Counted as
    /// "too large". Text records are truncated instead.
    TooLarge,
    /// The logger's guard was dropped: the writer thread is gone. Counted as
    /// "after shutdown".
    Closed,
    /// The ring stayed full for the whole deadline of
    /// `FullPolicy::BlockTimeout`. Counted
    /// as "block timeout".
    TimedOut,
}

impl fmt::Display for PushError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            PushError::Full => "record dropped: the nowait ring is full",
            PushError::Shed => "record dropped: the nowait ring is above its high-water mark and the record's level is not protected",
            PushError::TooLarge => "record dropped: larger than half the nowait ring",
            PushError::Closed => "record dropped: the nowait logger was shut down",
            PushError::TimedOut => "record dropped: the nowait ring stayed full for the whole block timeout",
        })
    }
}

impl std::error::Error for PushError {}

/// Why `Logger::flush` did not complete.
///
/// # Examples
///
/// ```
/// use nowait_core::{Builder, FlushError, Sink};
///
/// let (logger, guard) = Builder::new().sink(Sink::writer(std::io::sink())).build().unwrap();
/// drop(guard);
/// assert!(matches!(logger.flush(), Err(FlushError::Closed)));
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum FlushError {
    /// A sink failed to write or flush; the records stay pending and are
    /// retried, or are counted as lost if the sink cannot take them.
    Sink {
        /// The sink's name (`stdout`, `file:/path`, ...).
        sink: String,
        /// The sink's last error.
        source: io::Error,
    },
    /// The records were not all written before the timeout; they stay
    /// pending (for example behind a slow disk).
    TimedOut,
    /// A sink has bytes pending and took none for a while (a terminal or
    /// pipe nobody reads): the flush did not wait for it. Its records stay
    /// pending, and are dropped and counted if its buffer fills.
    Stalled {
        /// The sink's name.
        sink: String,
    },
    /// The logger was shut down (its guard dropped) or its writer thread died.
    Closed,
}

impl fmt::Display for FlushError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FlushError::Sink { sink, source } => write!(f, "nowait sink {sink} failed: {source}"),
            FlushError::TimedOut => f.write_str("nowait flush timed out: records still pending"),
            FlushError::Stalled { sink } => {
                write!(
                    f,
                    "nowait sink {sink} is stalled (its reader takes nothing); not waited for"
                )
            }
            FlushError::Closed => f.write_str("nowait logger is shut down"),
        }
    }
}

impl std::error::Error for FlushError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FlushError::Sink { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// A logger could not be built: an invalid setting, or a sink (or the
/// writer thread) that could not be had.
///
/// An invalid setting displays as `invalid nowait configuration: ...`; an
/// I/O failure names what failed and why, e.g. `nowait: cannot open
/// file:/var/log/app.log: Permission denied (os error 13)`, and
/// [`io_error`](BuildError::io_error) gives the error itself.
///
/// # Examples
///
/// ```
/// let err = nowait_core::Builder::new().capacity(0).build().unwrap_err();
/// assert!(err.to_string().starts_with("invalid nowait configuration: capacity"));
/// assert!(err.io_error().is_none());
/// ```
#[derive(Debug)]
pub struct BuildError {
    context: String,
    source: Option<io::Error>,
}

impl BuildError {
    pub(crate) fn config(context: impl Into<String>) -> Self {
        BuildError {
            context: context.into(),
            source: None,
        }
    }

    pub(crate) fn io(context: impl Into<String>, source: io::Error) -> Self {
        BuildError {
            context: context.into(),
            source: Some(source),
        }
    }

    /// The underlying I/O error, if a sink could not be opened.
    ///
    /// # Examples
    ///
    /// ```
    /// let err = nowait_core::Builder::new()
    ///     .sink(nowait_core::Sink::file("/proc/nowait-cannot-create/x.log"))
    ///     .build()
    ///     .unwrap_err();
    /// assert!(err.io_error().is_some());
    /// ```
    pub fn io_error(&self) -> Option<&io::Error> {
        self.source.as_ref()
    }
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source {
            // What failed and why, e.g. "nowait: cannot open file:/x/app.log:
            // Permission denied (os error 13)".
            Some(source) => write!(f, "nowait: {}: {source}", self.context),
            None => write!(f, "invalid nowait configuration: {}", self.context),
        }
    }
}

impl std::error::Error for BuildError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_ref().map(|e| e as _)
    }
}

/// `set_global` was called when a global logger was
/// already set.
///
/// # Examples
///
/// ```
/// # let (a, _ga) = nowait_core::Builder::new().sink(nowait_core::Sink::writer(std::io::sink())).build().unwrap();
/// # let (b, _gb) = nowait_core::Builder::new().sink(nowait_core::Sink::writer(std::io::sink())).build().unwrap();
/// let _ = nowait_core::set_global(a);
/// assert!(nowait_core::set_global(b).is_err());
/// ```
#[derive(Debug)]
pub struct SetGlobalError(pub(crate) ());

impl fmt::Display for SetGlobalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a global nowait logger is already set")
    }
}

impl std::error::Error for SetGlobalError {}
