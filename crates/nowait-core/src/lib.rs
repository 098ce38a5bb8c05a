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
//!   (claim with one compare-and-swap, write the record in place, commit
//!   with one release store),
//!   allocated once: memory is bounded by [`Builder::capacity`] whatever the
//!   number of threads. See [`docs::design`] for the algorithm and why one
//!   shared ring rather than one per thread.
//! * **Writer thread.** Wakes every [`Builder::flush_interval`] (3 ms) while
//!   records flow and doubles its sleep up to [`Builder::idle_interval`]
//!   (50 ms) while none come. Producers never wake it: a push is never a
//!   system call. Each sink has its own buffer; a sink is written once
//!   [`Builder::batch_size`] (64 KiB) is pending or at the end of a round.
//! * **Isolation.** stdout and stderr are reopened with `O_NONBLOCK` on a
//!   private open file description when they are terminals or pipes (sockets
//!   use `MSG_DONTWAIT`), so a stalled reader cannot block the writer thread;
//!   where the system cannot give such a description (a pipe on macOS, the
//!   Windows console), the sink gets an I/O thread of its own, which alone
//!   waits.
//!   Each sink's pending bytes are bounded ([`Sink::buffer_size`], 1 MiB);
//!   past that, that sink alone drops and counts records. Network sinks
//!   ([`Sink::tcp`], [`Sink::unix`], syslog with [`Sink::syslog`]) connect
//!   and write without blocking and reconnect with back-off when the
//!   receiver goes away.
//! * **Errors.** The writer never panics on I/O errors. A failing sink keeps
//!   its records (bounded), retries with back-off, and on recovery writes
//!   what happened into the output, the failed sink included, where the gap
//!   is (`... dropped (sink file:/var/log/app.log write failed: No space left
//!   on device) ...`); a sink that fails for good (broken pipe) is reported
//!   in the other sinks.
//! * **Faults.** Every wait the library does for the caller has a bound
//!   (see *Flushing and shutdown*), every accepted record ends in exactly
//!   one counted outcome ([`Stats`](stats::Stats)), and `fork()` gives the child a working
//!   logger of its own (see [`docs::design`]).
//!
//! # Events, formats and macros
//!
//! Front ends push structured events ([`kind::EVENT`](record::kind::EVENT)) in a compact binary
//! form ([`event`](mod@event)): a TSC timestamp, the address of a `'static` call-site
//! description, and the typed values, copied as they are. The writer thread
//! looks names up in the call-site registry and renders each event per sink
//! with [`Text`](format::Text) (the layout of `tracing-subscriber`'s default format) or
//! [`Json`](format::Json) (one object per line). The macros ([`info!`] and friends) defer
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
//! # Filtering and per-sink levels
//!
//! Each sink takes its own level ([`Sink::level`]) and format; a record
//! below every sink's level ([`Logger::min_level`]) is never pushed by the
//! front ends, and one below a sink's level is skipped for that sink and
//! counted in [`SinkStats::filtered`](stats::SinkStats::filtered) (or kept, and written before the
//! next error, by the sink's [`BacktraceBuffer`](sink::BacktraceBuffer)). Targets are filtered with
//! `RUST_LOG`-style directives ([`Filter`](filter::Filter), installed with [`set_filter`](filter::set_filter),
//! reloaded with [`FilterHandle`](filter::FilterHandle)); each macro call site caches its
//! decision, so a disabled call is one relaxed load and a branch (see
//! [`Filter`](filter::Filter)). A sink can also take its own targets
//! ([`Sink::filter`], reloaded with [`Logger::reload_sink_filter`]),
//! applied on the writer thread; the front ends then reject on the request
//! thread what no sink wants (the union of the sinks' filters and levels,
//! [`Logger::enabled_for`]).
//!
//! ```
//! use nowait_core::{Builder, Level, Sink};
//! use nowait_core::filter::{Filter, FilterHandle};
//!
//! let (logger, _guard) = Builder::new()
//!     .sink(Sink::writer(std::io::sink()).level(Level::Debug))
//!     .build()?;
//! nowait_core::set_global(logger)?;
//! nowait_core::filter::set_filter(Filter::parse("info,my_app::db=debug")?);
//! nowait_core::debug!(target: "my_app::db", "kept");
//! nowait_core::debug!(target: "my_app::http", "one relaxed load, nothing else");
//! FilterHandle::new().reload("debug")?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Full ring
//!
//! [`FullPolicy::Drop`] drops and counts; [`FullPolicy::BlockTimeout`] parks
//! the producer until there is room, at most its timeout, then drops and
//! counts; [`FullPolicy::Block`] waits without a bound (only if asked for).
//! The default is `BlockTimeout(100 ms)` when a file or custom writer is
//! among the sinks (that output should be complete, and a hung disk must
//! not park the request threads for long) and `Drop` for loggers that write
//! only to terminals, pipes or sockets. Under `Drop`, records
//! below WARN are shed once the ring is 80 % full so that warnings and errors
//! keep the headroom ([`Builder::protect`]). Every loss appears in the output
//! as a notice such as
//! `2026-11-22T12:00:03.120000Z  WARN nowait: 1234 records dropped (ring full) between 2026-11-22T12:00:01.002000Z and 2026-11-22T12:00:03.117000Z`
//! and in [`Stats`](stats::Stats).
//!
//! # Flushing and shutdown
//!
//! Every wait on the caller's behalf ends within a documented bound,
//! whatever the sinks do (a stalled terminal, a full disk, a custom writer
//! that blocks for a minute):
//!
//! | wait | bound |
//! |---|---|
//! | [`Logger::flush`] | [`Builder::flush_timeout`] (default: the shutdown timeout) |
//! | [`Logger::flush_async`] (a future; no runtime needed, the task's thread never blocks) | the flush timeout |
//! | [`Logger::dump_recent`], [`Builder::dump_recent_on_signal`] | the flush timeout |
//! | dropping the [`Guard`], `process::exit` (`atexit`) | [`Builder::shutdown_timeout`] (5 s) |
//! | SIGTERM/SIGINT with [`Builder::drain_on_signals`] | the shutdown timeout; a second signal kills at once |
//! | panic hook | [`Builder::panic_timeout`] (500 ms), durable sinks only |
//! | fatal signal (Unix) | [`Builder::crash_timeout`] (1 s) + 100 ms |
//! | a push under [`FullPolicy::BlockTimeout`] | its timeout (100 ms by default) |
//! | write-through ([`Builder::write_through`]) | the flush timeout |
//!
//! A flush or shutdown does not wait for a sink that failed, is failing,
//! or is stalled (pending bytes and none taken for 100 ms: a terminal or
//! pipe nobody reads). When the guard's timeout runs out with the writer
//! stuck in a blocking write, the dropping thread counts what is left
//! itself, so [`Stats`](stats::Stats) are final when `drop` returns.
//!
//! Services should turn [`Builder::drain_on_signals`] on: `docker stop` and
//! Kubernetes stop a process with SIGTERM, whose default action kills it
//! with the records still in the ring.
//!
//! Crashes ([`Builder::drain_on_crash`], on by default): a segfault,
//! `abort()`, a stack overflow, a double panic or `panic = "abort"`, a bus
//! error drain the ring before the process dies of its signal, within
//! [`Builder::crash_timeout`] (1 s) plus 100 ms for a last line such as
//! `fatal signal SIGSEGV on thread 'worker-3': 10000 records drained in 3
//! ms, 0 lost`. Measured (the `crash` integration tests, the logging thread pinned to
//! one CPU): 10,000 of 10,000 records on disk after each of those crashes;
//! without the drain, the records a held writer had not written die with
//! the process. On
//! Windows an access violation, an illegal instruction, a division by zero
//! or an in-page error drain the same way (the `crash_windows` integration tests, under
//! Wine: 10,000 of 10,000, exit code `0xC0000005`); `abort()`,
//! `panic = "abort"` and a stack overflow end a Windows process without
//! running any handler.
//!
//! `SIGKILL` (the OOM killer) runs no handler: with
//! [`Builder::crash_durable`] the ring, the files' unwritten bytes and a
//! catalog of call sites live in a shared mapping of a file (on tmpfs),
//! and the next `build()` with the same path writes what the dead process
//! had accepted, each record once, with a notice; records it was still
//! copying are counted. Measured: 0 of 10,000 on disk after a `SIGKILL`,
//! 10,000 of 10,000 after recovery; 200 kills at random points, every
//! accepted record exactly once (the `durable` integration tests). Without it, `SIGKILL`,
//! a crash of the writer thread itself, `abort()` on Windows, and a drain
//! that needs a lock the crashed thread holds (it ends at the bound) lose
//! the records still in the ring and in the sinks' buffers (at most the
//! ring's capacity plus each sink's [`Sink::buffer_size`]); with
//! [`Builder::write_through`], records at or above its level are on disk
//! before the call returns.
//!
//! # Features
//!
//! * `signals` (default): [`Builder::drain_on_signals`],
//!   [`Builder::reopen_on_sighup`] and [`Builder::dump_recent_on_signal`],
//!   through `signal-hook`.
//! * `gzip` (default): [`Rolling::compress`](sink::Rolling::compress), through `flate2`.
//! * `zstd`: [`Compression::Zstd`](sink::Compression::Zstd) for [`Rolling::compress_with`](sink::Rolling::compress_with), through
//!   the `zstd` crate, which compiles the reference C library (libzstd)
//!   with the target's C compiler.
//! * `otlp`: `Sink::otlp`, OTLP/HTTP with protobuf to an OpenTelemetry
//!   receiver, sent by the writer thread without waiting (Unix).
//! * `otlp-tls` (implies `otlp`): `https://` receivers, through rustls
//!   (crypto by *ring*) driven by the writer thread without an async
//!   runtime; the platform's trust store (`rustls-native-certs`), a custom
//!   CA, and client certificates for mTLS.
//! * `metrics`: the [`Stats`](stats::Stats) counters published through the
//!   [`metrics`](https://docs.rs/metrics) facade once a second by the writer
//!   thread, and finally when the guard is dropped, so a Prometheus exporter
//!   shows them; names and labels in `METRIC_NAMES`, which also lists them
//!   (see `Stats::record_metrics`).
//! * `local-time`: `Timer::Local` and [`Rolling::local_time`](sink::Rolling::local_time), through
//!   `chrono`.
//!
//! # Platforms and MSRV
//!
//! Linux, macOS, the BSDs and Windows, with the same guarantees: the
//! request thread never waits on a sink, a stalled terminal or pipe never
//! delays another sink, every loss is counted and reported. What differs:
//!
//! | | Linux | macOS, BSDs | Windows |
//! |---|---|---|---|
//! | stdout/stderr terminal | own non-blocking description | own non-blocking description (reopened by name) | I/O thread (console) |
//! | stdout/stderr pipe | own non-blocking description | I/O thread | I/O thread |
//! | final notices into a full pipe | a reserve kept in the pipe | no reserve (room unknown) | no reserve |
//! | [`Builder::drain_on_signals`] | SIGTERM, SIGINT | SIGTERM, SIGINT | Ctrl-C, Ctrl-Break, console close, logoff, shutdown |
//! | [`Builder::reopen_on_sighup`] | SIGHUP | SIGHUP | no SIGHUP: does nothing; call [`Logger::reopen`] |
//! | [`Builder::dump_recent_on_signal`] | SIGUSR1 | SIGUSR1 | no SIGUSR1: does nothing; call [`Logger::dump_recent`] |
//! | [`Sink::unix`], [`Sink::unix_datagram`], `/dev/log` | yes | yes | build error |
//! | `fork()` | handled | handled | no fork |
//!
//! See [`docs::design`] ("Platforms") for how, and for what CI runs on
//! which system. Rust 1.81 or later.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(unsafe_code)]
#![warn(
    missing_docs,
    missing_debug_implementations,
    unreachable_pub,
    unsafe_op_in_unsafe_fn,
    clippy::undocumented_unsafe_blocks
)]

// A reader starts at the root: the builder, the logger, levels, errors
// and the macros. Every other concern is a folder, and imports run down:
// sys and text at the bottom; records, the ring, limits and accounting;
// events, filters and formats; rolling files, the crash-durable file and
// sinks; the producer/writer contract (shared), the writer thread, and
// the process hooks on top.
mod accounting;
pub mod binary;
mod builder;
#[cfg(any(doc, doctest))]
pub mod docs;
mod durable;
mod error;
pub mod event;
pub mod filter;
pub mod format;
mod level;
mod limit;
mod logger;
mod macros;
mod process;
pub mod record;
#[allow(unsafe_code)]
mod ring;
mod rolling;
mod shared;
pub mod sink;
#[allow(unsafe_code)]
mod sys;
mod text;
mod writer;

// What the sibling crates and the macros' expansions name, outside
// semver, and the fuzz targets' entry points.
#[cfg(fuzzing)]
#[path = "private/fuzz_targets.rs"]
mod __fuzz;
#[doc(hidden)]
#[path = "private/mod.rs"]
pub mod __private;

pub use accounting::policy::FullPolicy;
pub use builder::Builder;
pub use error::{BuildError, FlushError, PushError, SetGlobalError};
pub use level::{Level, ParseLevelError};
pub use logger::Logger;
pub use process::global::{global, set_global};
pub use process::guard::Guard;
pub use sink::Sink;

/// What happened to the records a logger accepted: [`Stats`](crate::accounting::stats::Stats), read with
/// [`Logger::stats`].
///
/// Every accepted record ends in exactly one counted outcome: written,
/// dropped (and why), filtered, or lost to a failing sink.
///
/// # Examples
///
/// ```
/// use nowait_core::{Builder, Level, Sink};
///
/// let (logger, guard) = Builder::new().sink(Sink::writer(std::io::sink())).build()?;
/// logger.log(Level::Info, "one line")?;
/// drop(guard);
/// let stats: nowait_core::stats::Stats = logger.stats();
/// assert_eq!(stats.records_written, 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub mod stats {
    #[cfg(feature = "metrics")]
    #[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
    pub use crate::accounting::metrics::METRIC_NAMES;
    pub use crate::accounting::stats::{SinkStats, Stats};
}
