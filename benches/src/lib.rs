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

/// The request-done event (a message, a `u64`, a `&str` and an `f64`
/// field), logged `n` times through nowait's own macros (the global
/// logger): the workload of `benches/benches/format.rs` and
/// `examples/writer_throughput.rs`.
///
/// # Examples
///
/// ```
/// nowait_benches::macro_request_events(3); // no global logger: no-ops
/// ```
pub fn macro_request_events(n: usize) {
    for i in 0..n {
        macro_request_event(i);
    }
}

/// Event number `i` of [`macro_request_events`], alone (for callers that
/// time or space each call).
///
/// # Examples
///
/// ```
/// nowait_benches::macro_request_event(7); // no global logger: a no-op
/// ```
#[inline]
pub fn macro_request_event(i: usize) {
    let path = DONE_PATHS[i % 3];
    nowait::info!(
        id = i as u64,
        path = path,
        secs = i as f64 * 0.001_37,
        "request done"
    );
}

/// [`macro_request_events`]' event through `tracing` (whichever subscriber
/// is the default).
///
/// # Examples
///
/// ```
/// nowait_benches::tracing_request_events(3); // no subscriber: no-ops
/// ```
pub fn tracing_request_events(n: usize) {
    for i in 0..n {
        tracing_request_event(i);
    }
}

/// Event number `i` of [`tracing_request_events`], alone.
///
/// # Examples
///
/// ```
/// nowait_benches::tracing_request_event(7); // no subscriber: a no-op
/// ```
#[inline]
pub fn tracing_request_event(i: usize) {
    let path = DONE_PATHS[i % 3];
    tracing::info!(
        id = i as u64,
        path,
        secs = i as f64 * 0.001_37,
        "request done"
    );
}

/// Paths of the request-done event.
const DONE_PATHS: [&str; 3] = ["/api/v1/items", "/health", "/login"];

/// URIs of [`trace_layer_request`].
const REQUEST_PATHS: [&str; 3] = ["/index.html", "/api/v1/users", "/static/app.js"];

/// HTTP/1.1 as tower-http's `TraceLayer` records it (`?request.version()`).
struct Version;

impl std::fmt::Debug for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HTTP/1.1")
    }
}

/// Request number `i` as tower-http's `TraceLayer` logs it through
/// `tracing`: a span with the method, URI and version, entered, an event
/// on request and one on response (with latency and status), then exit
/// and close.
///
/// # Examples
///
/// ```
/// nowait_benches::trace_layer_request(7); // no subscriber: a no-op
/// ```
#[inline]
pub fn trace_layer_request(i: usize) {
    let path = REQUEST_PATHS[i % 3];
    let span = tracing::info_span!("request", method = %"GET", uri = %path, version = ?Version);
    let _entered = span.enter();
    tracing::info!("started processing request");
    tracing::info!(
        latency_us = i as u64 % 700,
        status = 200u64,
        "finished processing request"
    );
}

/// Records as a sink received them: level, kind and encoded payload.
pub type Kept = std::sync::Arc<std::sync::Mutex<Vec<(nowait::Level, u8, Vec<u8>)>>>;

/// A sink format that formats nothing and keeps each record's encoded
/// bytes in `into`, so that a bench can time formatting alone on records
/// made by the real front ends.
///
/// # Examples
///
/// ```
/// let kept = nowait_benches::Kept::default();
/// let (logger, guard) = nowait::Builder::new()
///     .sink(nowait::Sink::writer(std::io::sink()).format(nowait_benches::keeping(&kept)))
///     .build()
///     .unwrap();
/// logger.log(nowait::Level::Info, "x").unwrap();
/// drop(guard);
/// assert_eq!(kept.lock().unwrap().len(), 1);
/// ```
pub fn keeping(into: &Kept) -> impl nowait::format::MakeFormat {
    let into = std::sync::Arc::clone(into);
    move |_: &nowait::format::SinkInfo| -> Box<dyn nowait::format::Format> {
        Box::new(Keep(std::sync::Arc::clone(&into)))
    }
}

struct Keep(Kept);

impl nowait::format::Format for Keep {
    fn format(&mut self, record: &nowait::record::Record<'_>, _out: &mut Vec<u8>) {
        let kept = (record.level(), record.kind(), record.payload().to_vec());
        self.0.lock().unwrap_or_else(|e| e.into_inner()).push(kept);
    }
    fn notice(&mut self, _notice: &nowait::record::Notice<'_>, _out: &mut Vec<u8>) {}
}
