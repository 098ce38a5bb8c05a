//! The one workload every peer bench runs, so that the numbers compare.
//!
//! It models a request log line: a message and three fields (a path, a
//! status code, a latency), the call made on a request thread while a
//! background thread of the logger drains into a sink that discards bytes
//! (`io::sink()` or `/dev/null`), so that the figure is the logger's own
//! cost on the caller. Each peer lives in its own bench binary because
//! `log`-facade loggers are process-global.
//!
//! Results of a run are in `target/criterion/log_3_fields/*`; compare the
//! `median` of each peer's `estimates.json`.

use std::hint::black_box;

/// Benchmark group shared by every peer.
pub const GROUP: &str = "log_3_fields";

/// One request's fields: path, status, latency in microseconds.
#[derive(Clone, Copy, Debug)]
pub struct Request {
    /// Request path.
    pub path: &'static str,
    /// HTTP status.
    pub status: u64,
    /// Latency in microseconds.
    pub latency_us: f64,
}

const PATHS: [&str; 4] = ["/", "/index.html", "/api/v1/items", "/static/app.js"];

/// The `i`th request of the workload (cheap, deterministic, not constant so
/// nothing is folded away).
///
/// # Examples
///
/// ```
/// let r = nowait_benches::request(3);
/// assert_eq!(r.status, 200);
/// ```
pub fn request(i: u64) -> Request {
    black_box(Request {
        path: PATHS[(i % 4) as usize],
        status: if i.is_multiple_of(97) { 404 } else { 200 },
        latency_us: 100.0 + (i % 1000) as f64 * 1.5,
    })
}

/// Logs request `i` of the workload through `tracing` (whichever
/// subscriber is the default): a message and three typed fields.
///
/// # Examples
///
/// ```
/// nowait_benches::tracing_request(1); // no subscriber: a no-op
/// ```
#[inline]
pub fn tracing_request(i: u64) {
    let r = request(i);
    tracing::info!(
        path = r.path,
        status = r.status,
        latency_us = r.latency_us,
        "served"
    );
}

/// Logs request `i` of the workload through nowait's own macro (the global
/// logger): the same message and three typed fields as [`tracing_request`].
///
/// # Examples
///
/// ```
/// nowait_benches::macro_request(1); // no global logger: a no-op
/// ```
#[inline]
pub fn macro_request(i: u64) {
    let r = request(i);
    nowait::info!(
        path = r.path,
        status = r.status,
        latency_us = r.latency_us,
        "served"
    );
}

/// A nowait logger for the benches: an 8 MiB ring, the block policy (no
/// loss, so every peer does the same work), and a sink that discards bytes.
///
/// # Panics
///
/// If the logger cannot be built (it always can: no file is opened).
///
/// # Examples
///
/// ```
/// let (logger, _guard) = nowait_benches::null_logger();
/// logger.log(nowait::Level::Info, "x").unwrap();
/// ```
pub fn null_logger() -> (nowait::Logger, nowait::Guard) {
    nowait::Builder::new()
        .capacity(8 << 20)
        .full_policy(nowait::FullPolicy::Block)
        .sink(nowait::Sink::writer(std::io::sink()))
        .build()
        .expect("a logger with a null sink")
}
