//! The engine of [nowait](https://docs.rs/nowait): logging that never makes
//! a request wait.
//!
//! Request threads hand records to a lock-free ring; a dedicated writer
//! thread drains it, formats each record once per sink, and writes large
//! batches. A slow or stalled terminal never blocks the request threads, the
//! writer, or the other sinks, and every record that cannot be written is
//! counted and reported in the output itself.
//!
//! Most programs use this crate through the `nowait` facade and one of its
//! front ends (a `tracing` layer, macros, the `log` facade). This crate is the
//! engine they share, and can be used on its own with text lines.
//!
//! # Quick start
//!
//! ```
//! use nowait_core::{Builder, Level, Sink};
//!
//! # let dir = tempfile::tempdir().unwrap();
//! # let path = dir.path().join("app.log");
//! let (logger, guard) = Builder::new()
//!     .sink(Sink::stdout())
//!     .sink(Sink::file(&path))
//!     .build()?;
//!
//! // On a request thread: no lock, no allocation, no system call.
//! logger.log(Level::Info, "GET /index.html 200 41us")?;
//!
//! // At the end of main: drains, writes, flushes (5 s at most).
//! drop(guard);
//! # assert_eq!(std::fs::read_to_string(&path)?, "GET /index.html 200 41us\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Design
//!
//! * **Ring.** One bounded multi-producer ring of variable-length records
//!   (claim with one compare-and-swap, copy, commit with one release store),
//!   allocated once: memory is bounded by [`Builder::capacity`] whatever the
//!   number of threads. See [`docs::design`] for the algorithm and why one
//!   shared ring rather than one per thread.
//! * **Writer thread.** Wakes every [`Builder::flush_interval`] (3 ms) while
//!   records flow, early when the ring passes half full, and sleeps without
//!   a timer after 100 ms of silence (the next record wakes it with a single
//!   system call). Each sink has its own buffer; a sink is written once
//!   [`Builder::batch_size`] (64 KiB) is pending or at the end of a round.
//! * **Isolation.** stdout and stderr are reopened with `O_NONBLOCK` on a
//!   private open file description when they are terminals or pipes (sockets
//!   use `MSG_DONTWAIT`), so a stalled reader cannot block the writer thread.
//!   Each sink's pending bytes are bounded ([`Sink::buffer_size`], 1 MiB);
//!   past that, that sink alone drops and counts records.
//! * **Errors.** The writer never panics on I/O errors. A failing sink keeps
//!   its records (bounded), retries with back-off, and on recovery writes
//!   what happened into the output; a sink that fails for good (broken pipe)
//!   is reported in the other sinks.
//!
//! # Events, formats and macros
//!
//! Front ends push structured events ([`kind::EVENT`]) in a compact binary
//! form ([`event`](mod@event)): a TSC timestamp, the address of a `'static` call-site
//! description, and the typed values, copied as they are. The writer thread
//! looks names up in the call-site registry and renders each event per sink
//! with [`Text`] (the layout of `tracing-subscriber`'s default format) or
//! [`Json`] (one object per line). The macros ([`info!`] and friends) defer
//! formatting the same way:
//!
//! ```
//! # let (logger, _guard) = nowait_core::Builder::new().sink(nowait_core::Sink::writer(std::io::sink())).build().unwrap();
//! nowait_core::set_global(logger).unwrap();
//! let (path, micros) = ("/index.html", 41u64);
//! // Copies the call site's address, "/index.html" and 41; the writer
//! // thread formats `GET /index.html in 41us status=200`.
//! nowait_core::info!(status = 200u16, "GET {} in {}us", path, micros);
//! ```
//!
//! # Full ring
//!
//! [`FullPolicy::Drop`] drops and counts; [`FullPolicy::Block`] parks the
//! producer until there is room (no loss). The default is `Block` when a
//! file or custom writer is among the sinks (that output should be
//! complete) and `Drop` for terminal-only loggers. Under `Drop`, records
//! below WARN are shed once the ring is 80 % full so that warnings and errors
//! keep the headroom ([`Builder::protect`]). Every loss appears in the output
//! as a notice such as
//! `2026-11-22T12:00:03.120000Z  WARN nowait: 1234 records dropped (ring full) between 2026-11-22T12:00:01.002000Z and 2026-11-22T12:00:03.117000Z`
//! and in [`Stats`].
//!
//! # Flushing and shutdown
//!
//! [`Logger::flush`] returns once every record pushed before it is written
//! (or counted as dropped) on every sink. Dropping the [`Guard`] drains with
//! a timeout ([`Builder::shutdown_timeout`], 5 s) and reports what it had to
//! abandon. By default a panic on any thread is logged and flushed before
//! the previous panic hook runs, and `std::process::exit` drains through an
//! `atexit` hook; [`Builder::drain_on_signals`] adds a SIGTERM/SIGINT drain.
//!
//! # Features
//!
//! * `signals` (default): [`Builder::drain_on_signals`], through
//!   `signal-hook`.
//!
//! # Platform and MSRV
//!
//! Linux (and other Unix systems with `/proc/self/fd`; elsewhere stdout falls
//! back to blocking writes). Rust 1.81 or later.
#![deny(unsafe_code)]
#![warn(
    missing_docs,
    missing_debug_implementations,
    unreachable_pub,
    unsafe_op_in_unsafe_fn,
    clippy::undocumented_unsafe_blocks
)]

mod builder;
mod clock;
pub mod docs;
mod error;
pub mod event;
#[allow(unsafe_code)]
mod ffi;
mod fork;
mod format;
mod global;
mod guard;
mod hooks;
mod level;
mod logger;
mod macros;
mod output;
mod policy;
mod record;
mod registry;
#[allow(unsafe_code)]
mod ring;
mod shared;
mod sink;
mod stats;
mod sync;
mod timefmt;
mod writer;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private;
pub use __private::{set_max_level, STATIC_MAX_LEVEL};
pub use builder::{
    Builder, DEFAULT_BATCH_SIZE, DEFAULT_CAPACITY, DEFAULT_FLUSH_INTERVAL, DEFAULT_IDLE_INTERVAL,
};
pub use error::{BuildError, FlushError, PushError, SetGlobalError};
pub use format::{Json, Text};
pub use global::{global, set_global};
pub use guard::Guard;
pub use level::{Level, ParseLevelError};
pub use logger::Logger;
pub use policy::{FullPolicy, DEFAULT_BLOCK_TIMEOUT};
pub use record::{escape_into, kind, Format, MakeFormat, Notice, Plain, Record, SinkInfo};
pub use sink::Sink;
pub use stats::{SinkStats, Stats};

// === front-end support (event encoding, formats, macros) ===
