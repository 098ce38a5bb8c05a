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
//! # Filtering
//!
//! Records are filtered by target and level with `RUST_LOG`-style
//! directives (a [`Filter`], shared with nowait's own macros): [`init`]
//! reads `RUST_LOG` and defaults to `info`, [`init_with_filter`] takes
//! one. `log`'s global maximum level is kept at the filter's most verbose
//! level, so a disabled `log::debug!` costs `log`'s one relaxed load; a
//! record at an enabled level is then checked against the directives on
//! its target (a few prefix compares, no lock, no allocation) and against
//! the sinks' levels. [`FilterHandle::reload`](nowait_core::filter::FilterHandle::reload)
//! changes the directives at run time:
//!
//! ```
//! use nowait_core::{Builder, Sink};
//! use nowait_core::filter::{Filter, FilterHandle};
//!
//! let (logger, _guard) = Builder::new().sink(Sink::writer(std::io::sink())).build()?;
//! nowait_log::init_with_filter(logger, Filter::parse("info")?)?;
//! assert_eq!(log::max_level(), log::LevelFilter::Info);
//! FilterHandle::new().reload("info,my_app::db=trace")?;
//! assert_eq!(log::max_level(), log::LevelFilter::Trace);
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
//! [`Stats::discarded`](nowait_core::stats::Stats::discarded) and reported in the
//! output) instead of unwinding into the caller.
//!
//! A record larger than the logger's
//! [`max_record_len`](nowait_core::Logger::max_record_len) (half the ring)
//! is written shortened rather than dropped: its longest message and
//! values are cut and end in `… [truncated]`, as the other front ends
//! cut theirs.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};

use log::kv::{Error as KvError, Key, Value, VisitSource};
use log::{LevelFilter, Log, Metadata, Record, SetLoggerError};
use nowait_core::__private::event::{
    timestamp, with_event_buf, EventBuf, LOCATION_FILE, LOCATION_LINE,
};
use nowait_core::__private::filter;
use nowait_core::event::FieldName;
use nowait_core::filter::Filter;
use nowait_core::record::kind;
use nowait_core::{Level, Logger};

/// Installs a [`NowaitLogger`] for `logger` as the `log` facade's logger,
/// filtered by the process [`Filter`]: if none is installed yet, the one in
/// `RUST_LOG`, or `info` when it is unset (so a dependency's DEBUG and
/// TRACE output does not fill the ring unless asked for).
///
/// An invalid `RUST_LOG` directive is not fatal here: the valid ones
/// apply, and the error is written to the logger as a WARN line naming the
/// directive. To fail instead, use
/// `init_with_filter(logger, Filter::from_env()?)`.
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
    NowaitLogger::new(logger).install()
}

/// Installs a [`NowaitLogger`] for `logger` as the `log` facade's logger,
/// with records less severe than `level` filtered out (by `log`'s macros
/// themselves, at the cost of one relaxed load). If no process [`Filter`]
/// is installed yet, installs `level` for every target (`RUST_LOG` is not
/// read).
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
    let filter = match level.to_level() {
        Some(l) => Filter::level(level_of(l)),
        None => Filter::parse("off").unwrap_or_default(),
    };
    filter::install_default(filter);
    NowaitLogger::new(logger).max_level(level).install()
}

/// Installs a [`NowaitLogger`] for `logger` as the `log` facade's logger
/// and `filter` as the process filter (replacing any; nowait's macros obey
/// it too). Change it later with a [`FilterHandle`](nowait_core::filter::FilterHandle):
/// `log::max_level` follows.
///
/// # Errors
///
/// [`SetLoggerError`] if a `log` logger is already installed (the filter is
/// installed anyway).
///
/// # Examples
///
/// ```
/// use nowait_core::filter::Filter;
///
/// let (logger, _guard) = nowait_core::Builder::new().sink(nowait_core::Sink::writer(std::io::sink())).build()?;
/// nowait_log::init_with_filter(logger, Filter::parse("info,hyper=warn,my_app::db=debug")?)?;
/// log::debug!(target: "my_app::db", "kept");
/// log::info!(target: "hyper::proto", "filtered out");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn init_with_filter(logger: Logger, filter: Filter) -> Result<(), SetLoggerError> {
    nowait_core::filter::set_filter(filter);
    NowaitLogger::new(logger).install()
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

    /// Installs this logger as the `log` facade's logger. If no process
    /// [`Filter`] is installed yet, installs the one in `RUST_LOG` (`info`
    /// when unset; an invalid directive is reported as in [`init`]). Keeps
    /// `log`'s global maximum level at the most verbose level that the
    /// filter, this logger's [`max_level`](NowaitLogger::max_level) and the
    /// sinks' levels ([`Logger::min_level`]) all let through, also after
    /// the filter is reloaded.
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
        let cap = self.cap();
        let reporter = self.clone();
        log::set_boxed_logger(Box::new(self))?;
        CAP.store(cap as usize, Ordering::Relaxed);
        if filter::current().is_none() {
            let (filter, error) = match Filter::from_env() {
                Ok(f) => (f, None),
                Err(e) => (Filter::from_env_lossy(), Some(e)),
            };
            filter::install_default(filter);
            if let Some(e) = error {
                // Whatever the filter says: the user must learn of it.
                reporter.push(
                    &Record::builder()
                        .level(log::Level::Warn)
                        .target("nowait_log")
                        .args(format_args!("{e}; the other RUST_LOG directives apply"))
                        .build(),
                );
            }
        }
        filter::on_change(update_max_level);
        Ok(())
    }

    /// The most verbose level this logger lets through: its own cap and
    /// the sinks' levels.
    fn cap(&self) -> LevelFilter {
        self.level.min(level_filter(Some(self.logger.min_level())))
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

/// The installed logger's [`NowaitLogger::cap`] (as `LevelFilter as
/// usize`), for [`update_max_level`].
static CAP: AtomicUsize = AtomicUsize::new(LevelFilter::Trace as usize);

/// Keeps `log::max_level` at the most verbose level the process filter and
/// the installed logger let through (a hook run on every filter change).
fn update_max_level(filter: Option<&Filter>) {
    let wanted = filter.map_or(LevelFilter::Trace, |f| level_filter(f.max_level()));
    let cap = LevelFilter::iter()
        .find(|l| *l as usize == CAP.load(Ordering::Relaxed))
        .unwrap_or(LevelFilter::Trace);
    log::set_max_level(wanted.min(cap));
}

fn level_filter(level: Option<Level>) -> LevelFilter {
    match level {
        None => LevelFilter::Off,
        Some(Level::Error) => LevelFilter::Error,
        Some(Level::Warn) => LevelFilter::Warn,
        Some(Level::Info) => LevelFilter::Info,
        Some(Level::Debug) => LevelFilter::Debug,
        Some(Level::Trace) => LevelFilter::Trace,
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
    /// The logger's cap, the sinks' levels, then the process filter and
    /// the sinks' filters on the target (a few prefix compares each; no
    /// lock, no allocation).
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        let level = level_of(metadata.level());
        metadata.level() <= self.level
            && self.logger.enabled(level)
            && filter::enabled(metadata.target(), level)
            && self.logger.enabled_for(metadata.target(), level)
    }

    fn log(&self, record: &Record<'_>) {
        if self.enabled(record.metadata()) {
            self.push(record);
        }
    }

    fn flush(&self) {
        let _ = self.logger.flush();
    }
}

impl NowaitLogger {
    /// Encodes `record` and pushes it, whatever the filters say.
    fn push(&self, record: &Record<'_>) {
        let logger = &self.logger;
        with_event_buf(|buf| {
            buf.begin_inline(timestamp(), record.target());
            if nowait_core::__private::logger::records_thread(logger) {
                buf.thread();
            }
            if nowait_core::__private::logger::records_location(logger) {
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
                nowait_core::__private::logger::count_discarded(logger);
                return;
            }
            if buf.truncate_to(logger.max_record_len()) {
                nowait_core::__private::logger::count_truncated(logger);
            }
            let _ = nowait_core::__private::logger::push(
                logger,
                level_of(record.level()),
                kind::EVENT,
                &[buf.as_bytes()],
            );
        });
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
