//! Logging that never makes a request wait.
//!
//! Request threads hand records to a lock-free ring; a dedicated writer
//! thread drains it and writes large batches to files and the terminal. A
//! slow or stalled terminal never blocks a request and never delays the file;
//! every record that cannot be written is counted and reported in the output.
//!
//! This crate is the facade: it re-exports the engine ([`nowait_core`]) and,
//! behind features, the front ends.
//!
//! # Quick start
//!
//! ```
//! use nowait::{Builder, Level, Sink};
//!
//! # let dir = tempfile::tempdir().unwrap();
//! let (logger, guard) = Builder::new()
//!     .sink(Sink::file(dir.path().join("app.log")))
//!     .build()?;
//! logger.log(Level::Info, "listening on 127.0.0.1:8080")?;
//! drop(guard); // drains and flushes
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Front ends
//!
//! * `tracing`: [`layer`](fn@layer) / [`NowaitLayer`], a
//!   `tracing-subscriber` layer.
//! * nowait's own macros, [`info!`] and friends, with deferred formatting
//!   (after [`set_global`]).
//! * the `log` facade: [`log::init`].
//!
//! [`init`] sets the macros and the `log` front end up in one call, with a
//! [`Filter`]; [`init_from_env`] reads it from `RUST_LOG`.
//!
//! # Filtering and per-sink levels
//!
//! Each sink has its own level ([`Sink::level`]) and format; records below
//! every sink's level are never pushed. The targets are filtered with
//! `RUST_LOG`-style directives ([`Filter`]) for the macros and `log`, and
//! with `tracing_subscriber::EnvFilter` for `tracing`; [`FilterHandle`](filter::FilterHandle)
//! reloads the directives at run time.
//!
//! ```
//! use nowait::{Builder, Level, Sink};
//! use nowait::filter::{Filter, FilterHandle};
//! use nowait::format::Json;
//!
//! # let dir = tempfile::tempdir().unwrap();
//! let (logger, guard) = nowait::init(
//!     Builder::new()
//!         .sink(Sink::stderr().level(Level::Warn))
//!         .sink(Sink::file(dir.path().join("app.json")).level(Level::Debug).format(Json::new())),
//!     Filter::parse("info,my_app::db=debug")?,
//! )?;
//! nowait::debug!(target: "my_app::db", "to the file only");
//! nowait::debug!(target: "my_app::http", "off");
//! FilterHandle::new().reload("debug")?;
//! nowait::debug!(target: "my_app::http", "to the file now");
//! # drop((logger, guard));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Features
//!
//! * `tracing` (default): the `tracing-subscriber` layer from
//!   `nowait-tracing`, re-exported here.
//! * `opentelemetry`: the `tracing` layer records, with each event, the
//!   OpenTelemetry span it is logged in as `tracing-opentelemetry` keeps
//!   it; the OTLP sink sends its trace and span ids, JSON writes them
//!   (see `nowait_tracing`'s docs).
//! * `log` (default): the `log` facade front end from `nowait-log`,
//!   re-exported as [`log`].
//! * `signals` (default): SIGTERM/SIGINT draining
//!   ([`Builder::drain_on_signals`]).
//! * `gzip` (default): gzip of rotated files (`Rolling::compress`).
//! * `zstd`: Zstandard for rotated files
//!   (`Rolling::compress_with(Compression::Zstd)`), through the `zstd`
//!   crate, which compiles libzstd's C.
//! * `otlp`: `Sink::otlp`, OTLP/HTTP protobuf to an OpenTelemetry receiver.
//! * `otlp-tls` (implies `otlp`): `https://` OTLP receivers through rustls.
//! * `metrics`: the [`stats`] counters published through the `metrics`
//!   facade.
//! * `local-time`: local time in formats and file names (`Timer::Local`,
//!   `Rolling::local_time`), through `chrono`.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

pub use nowait_core::{binary, filter, format, record, sink, stats};
pub use nowait_core::{
    debug, error, event, global, info, set_global, trace, warn, BuildError, Builder, FlushError,
    FullPolicy, Guard, Level, Logger, ParseLevelError, PushError, SetGlobalError, Sink,
};

/// The `tracing` front end (`nowait-tracing`): [`NowaitLayer`] and
/// [`layer`](fn@layer).
#[cfg(feature = "tracing")]
#[cfg_attr(docsrs, doc(cfg(feature = "tracing")))]
pub use nowait_tracing::{layer, LimitsError, NowaitLayer};

/// The `log` facade front end (`nowait-log`).
#[cfg(feature = "log")]
#[cfg_attr(docsrs, doc(cfg(feature = "log")))]
pub mod log {
    pub use nowait_log::*;
}

use std::fmt;

use nowait_core::filter::{set_filter, Filter, FilterError};

/// Builds a logger from `builder` and installs it for the whole process:
/// as the global logger of the macros ([`set_global`]), with `filter` as
/// the process filter ([`set_filter`]), and, with the `log` feature, as
/// the `log` facade's logger (`log::max_level` follows the filter). The
/// `tracing` layer is separate: see `NowaitLayer` (feature `tracing`).
///
/// # Errors
///
/// [`InitError`]: the logger cannot be built (nothing is installed then),
/// or a global logger (nowait's or `log`'s) is already set, usually
/// because `init` was called twice. In that case `filter` is installed
/// anyway and the new logger is shut down (its guard is dropped).
///
/// # Examples
///
/// ```
/// use nowait::{Builder, Sink};
/// use nowait::filter::Filter;
///
/// let (_logger, guard) = nowait::init(
///     Builder::new().sink(Sink::writer(std::io::sink())),
///     Filter::parse("warn,my_app=debug")?,
/// )?;
/// nowait::debug!(target: "my_app::db", rows = 3u32, "query done");
/// drop(guard);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn init(builder: Builder, filter: Filter) -> Result<(Logger, Guard), InitError> {
    let (logger, guard) = builder.build().map_err(InitError::Build)?;
    set_filter(filter);
    set_global(logger.clone()).map_err(InitError::SetGlobal)?;
    #[cfg(feature = "log")]
    nowait_log::NowaitLogger::new(logger.clone())
        .install()
        .map_err(InitError::SetLogger)?;
    Ok((logger, guard))
}

/// [`init`] with the filter in `RUST_LOG` (`info` when it is unset).
///
/// # Errors
///
/// [`InitError::Filter`] naming an invalid directive (nothing is built or
/// installed then; [`init`] with [`Filter::from_env_lossy`] ignores it
/// instead), or as [`init`].
///
/// # Examples
///
/// ```
/// let (_logger, _guard) = nowait::init_from_env(
///     nowait::Builder::new().sink(nowait::Sink::writer(std::io::sink())),
/// )?;
/// nowait::info!("started");
/// # Ok::<(), nowait::InitError>(())
/// ```
pub fn init_from_env(builder: Builder) -> Result<(Logger, Guard), InitError> {
    init(builder, Filter::from_env().map_err(InitError::Filter)?)
}

/// Why [`init`] failed.
///
/// # Examples
///
/// ```
/// let err = nowait::init(
///     nowait::Builder::new().capacity(1),
///     nowait::filter::Filter::level(nowait::Level::Info),
/// )
/// .unwrap_err();
/// assert!(matches!(err, nowait::InitError::Build(_)));
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum InitError {
    /// The logger could not be built.
    Build(BuildError),
    /// The filter (from `RUST_LOG`) is invalid.
    Filter(FilterError),
    /// A global nowait logger is already set.
    SetGlobal(SetGlobalError),
    /// A `log` logger is already set.
    #[cfg(feature = "log")]
    #[cfg_attr(docsrs, doc(cfg(feature = "log")))]
    SetLogger(::log::SetLoggerError),
}

impl fmt::Display for InitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InitError::Build(e) => write!(f, "cannot build the logger: {e}"),
            InitError::Filter(e) => e.fmt(f),
            InitError::SetGlobal(e) => e.fmt(f),
            #[cfg(feature = "log")]
            InitError::SetLogger(e) => write!(f, "cannot install the log logger: {e}"),
        }
    }
}

impl std::error::Error for InitError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            InitError::Build(e) => Some(e),
            InitError::Filter(e) => Some(e),
            InitError::SetGlobal(e) => Some(e),
            #[cfg(feature = "log")]
            InitError::SetLogger(e) => Some(e),
        }
    }
}
