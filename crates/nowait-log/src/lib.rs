//! A [`log::Log`] implementation that hands records to
//! [nowait](https://docs.rs/nowait)'s lock-free ring, so that the libraries
//! of a program that log through the `log` facade (hyper, reqwest, rustls…)
//! never make a request wait either.
//!
//! # Quick start
//!
//! ```
//! use nowait_core::{Builder, Sink};
//!
//! # let dir = tempfile::tempdir().unwrap();
//! let (logger, guard) = Builder::new().sink(Sink::file(dir.path().join("app.log"))).build()?;
//! nowait_log::init(logger)?;
//! log::info!(target: "hyper::proto", peer = "10.0.0.7", bytes = 512; "connection closed");
//! drop(guard); // drains and flushes
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What is copied on the calling thread
//!
//! The target (as text: `log` records have no `'static` description), the
//! message (copied as is when it has no arguments, rendered otherwise) and
//! the key-values, typed when `log` can say what they are (integers,
//! floats, booleans, strings) and rendered with `Display` otherwise. The
//! writer thread lays the line out like the other front ends:
//!
//! ```text
//! 2026-11-23T10:00:00.123456Z  INFO hyper::proto: connection closed peer="10.0.0.7" bytes=512
//! ```
//!
//! A `Display` implementation that panics discards its record (counted in
//! [`Stats::discarded`](nowait_core::Stats::discarded) and reported in the
//! output) instead of unwinding into the caller.
//!
//! A record larger than the logger's
//! [`max_record_len`](nowait_core::Logger::max_record_len) (half the ring)
//! is written shortened rather than dropped: its longest message and
//! values are cut and end in `… [truncated]` (see
//! [`EventBuf::truncate_to`](nowait_core::event::EventBuf::truncate_to)).
#![deny(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

use std::fmt;

use log::kv::{Error as KvError, Key, Value, VisitSource};
use log::{LevelFilter, Log, Metadata, Record, SetLoggerError};
use nowait_core::event::{
    timestamp, with_event_buf, EventBuf, FieldName, LOCATION_FILE, LOCATION_LINE,
};
use nowait_core::{kind, Level, Logger};

/// Installs a [`NowaitLogger`] for `logger` as the `log` facade's logger,
/// with every level enabled.
///
/// # Errors
///
/// [`SetLoggerError`] if a `log` logger is already installed.
///
/// # Examples
///
/// ```
/// let (logger, _guard) = nowait_core::Builder::new().sink(nowait_core::Sink::writer(std::io::sink())).build()?;
/// nowait_log::init(logger)?;
/// log::warn!("disk 90% full");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn init(logger: Logger) -> Result<(), SetLoggerError> {
    init_with_level(logger, LevelFilter::Trace)
}

/// Installs a [`NowaitLogger`] for `logger` as the `log` facade's logger,
/// with records above `level` filtered out (by `log`'s macros themselves,
/// at the cost of one relaxed load).
///
/// # Errors
///
/// [`SetLoggerError`] if a `log` logger is already installed.
///
/// # Examples
///
/// ```
/// let (logger, _guard) = nowait_core::Builder::new().sink(nowait_core::Sink::writer(std::io::sink())).build()?;
/// nowait_log::init_with_level(logger, log::LevelFilter::Info)?;
/// log::debug!("not even formatted");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn init_with_level(logger: Logger, level: LevelFilter) -> Result<(), SetLoggerError> {
    NowaitLogger::new(logger).max_level(level).install()
}

/// The `log::Log` implementation: encodes each record into a [`Logger`]'s
/// ring.
///
/// # Examples
///
/// ```
/// use log::Log;
///
/// let (logger, _guard) = nowait_core::Builder::new().sink(nowait_core::Sink::writer(std::io::sink())).build()?;
/// let log = nowait_log::NowaitLogger::new(logger);
/// log.log(&log::Record::builder().args(format_args!("direct")).build());
/// # Ok::<(), nowait_core::BuildError>(())
/// ```
#[derive(Clone, Debug)]
pub struct NowaitLogger {
    logger: Logger,
    level: LevelFilter,
}

impl NowaitLogger {
    /// A logger feeding `logger`, every level enabled.
    ///
    /// # Examples
    ///
    /// ```
    /// # let (logger, _guard) = nowait_core::Builder::new().sink(nowait_core::Sink::writer(std::io::sink())).build().unwrap();
    /// let _log = nowait_log::NowaitLogger::new(logger);
    /// ```
    pub fn new(logger: Logger) -> NowaitLogger {
        NowaitLogger {
            logger,
            level: LevelFilter::Trace,
        }
    }

    /// Filters out records less severe than `level`.
    ///
    /// # Examples
    ///
    /// ```
    /// # let (logger, _guard) = nowait_core::Builder::new().sink(nowait_core::Sink::writer(std::io::sink())).build().unwrap();
    /// let _log = nowait_log::NowaitLogger::new(logger).max_level(log::LevelFilter::Warn);
    /// ```
    pub fn max_level(mut self, level: LevelFilter) -> NowaitLogger {
        self.level = level;
        self
    }

    /// Installs this logger as the `log` facade's logger and sets `log`'s
    /// global maximum level to this logger's.
    ///
    /// # Errors
    ///
    /// [`SetLoggerError`] if a `log` logger is already installed.
    ///
    /// # Examples
    ///
    /// ```
    /// # let (logger, _guard) = nowait_core::Builder::new().sink(nowait_core::Sink::writer(std::io::sink())).build().unwrap();
    /// nowait_log::NowaitLogger::new(logger).install()?;
    /// # Ok::<(), log::SetLoggerError>(())
    /// ```
    pub fn install(self) -> Result<(), SetLoggerError> {
        let level = self.level;
        log::set_boxed_logger(Box::new(self))?;
        log::set_max_level(level);
        Ok(())
    }

    /// The nowait logger records go to (for [`Logger::flush`] and
    /// [`Logger::stats`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # let (logger, _guard) = nowait_core::Builder::new().sink(nowait_core::Sink::writer(std::io::sink())).build().unwrap();
    /// let log = nowait_log::NowaitLogger::new(logger);
    /// assert_eq!(log.logger().stats().records_written, 0);
    /// ```
    pub fn logger(&self) -> &Logger {
        &self.logger
    }
}

fn level_of(level: log::Level) -> Level {
    match level {
        log::Level::Error => Level::Error,
        log::Level::Warn => Level::Warn,
        log::Level::Info => Level::Info,
        log::Level::Debug => Level::Debug,
        log::Level::Trace => Level::Trace,
    }
}

impl Log for NowaitLogger {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.level() <= self.level
    }

    fn log(&self, record: &Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let logger = &self.logger;
        with_event_buf(|buf| {
            buf.begin_inline(timestamp(), record.target());
            if logger.records_thread() {
                buf.thread();
            }
            if logger.records_location() {
                if let Some(file) = record.file() {
                    buf.str(FieldName::Inline(LOCATION_FILE), file);
                }
                if let Some(line) = record.line() {
                    buf.u64(FieldName::Inline(LOCATION_LINE), u64::from(line));
                }
            }
            let message = FieldName::Inline("message");
            let ok = match record.args().as_str() {
                Some(s) => {
                    buf.str(message, s);
                    true
                }
                None => buf.rendered(message, *record.args()).is_ok(),
            };
            let mut fields = Fields { buf, ok };
            // A visitor error only comes from our own `Err` after a failed
            // value, already recorded in `ok`.
            let _ = record.key_values().visit(&mut fields);
            if !fields.ok {
                logger.discarded();
                return;
            }
            if buf.truncate_to(logger.max_record_len()) {
                logger.truncated();
            }
            let _ = logger.push(level_of(record.level()), kind::EVENT, &[buf.as_bytes()]);
        });
    }

    fn flush(&self) {
        let _ = self.logger.flush();
    }
}

/// Copies key-values into the event, typed where `log` can tell.
struct Fields<'a> {
    buf: &'a mut EventBuf,
    ok: bool,
}

impl<'kvs> VisitSource<'kvs> for Fields<'_> {
    fn visit_pair(&mut self, key: Key<'kvs>, value: Value<'kvs>) -> Result<(), KvError> {
        let name = FieldName::Inline(key.as_str());
        if let Some(s) = value.to_borrowed_str() {
            self.buf.str(name, s);
        } else if let Some(b) = value.to_bool() {
            self.buf.bool(name, b);
        } else if let Some(n) = value.to_u64() {
            self.buf.u64(name, n);
        } else if let Some(n) = value.to_i64() {
            self.buf.i64(name, n);
        } else if let Some(x) = value.to_f64() {
            self.buf.f64(name, x);
        } else if let Some(c) = value.to_char() {
            self.buf.char(name, c);
        } else if self
            .buf
            .rendered(name, format_args!("{}", DisplayValue(&value)))
            .is_err()
        {
            self.ok = false;
            return Err(KvError::msg("value failed to format"));
        }
        Ok(())
    }
}

struct DisplayValue<'a, 'v>(&'a Value<'v>);

impl fmt::Display for DisplayValue<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.0, f)
    }
}
