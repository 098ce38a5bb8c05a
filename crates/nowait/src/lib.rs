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
//! # Features
//!
//! * `tracing` (default): the `tracing-subscriber` layer from
//!   `nowait-tracing`, re-exported here.
//! * `log` (default): the `log` facade front end from `nowait-log`,
//!   re-exported as [`log`].
//! * `signals` (default): SIGTERM/SIGINT draining
//!   ([`Builder::drain_on_signals`]).
#![deny(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

pub use nowait_core::*;

/// The `tracing` front end (`nowait-tracing`): [`NowaitLayer`] and
/// [`layer`](fn@layer).
#[cfg(feature = "tracing")]
pub use nowait_tracing::{layer, NowaitLayer};

/// The `log` facade front end (`nowait-log`).
#[cfg(feature = "log")]
pub mod log {
    pub use nowait_log::*;
}
