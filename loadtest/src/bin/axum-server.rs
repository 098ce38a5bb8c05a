//! The common async server shape: axum over hyper on a current-thread tokio
//! runtime, with tower-http's `TraceLayer`: a span per request (method, URI,
//! version) and two events in it, one when the request arrives
//! ("started processing request") and one when the response is ready
//! ("finished processing request", with latency and status), all at INFO.
//!
//! `axum-server --port P --log MODE --sink SINK [--cpu N]`, the same protocol
//! as `server`: `READY P` on stderr once listening; on SIGTERM or SIGINT it
//! stops accepting, lets open connections finish, shuts the logger down and
//! prints `RESULT {json}` to stderr (`requests` served, the logger's drop
//! counters, and `events_per_request`: 2, the lines each request should
//! produce).
//!
//! `--log` takes the shared modes; those that make sense here are `none` (no
//! subscriber: the spans are disabled at the call site), `tracing-envfilter`
//! (Registry + `EnvFilter`, no output), `tracing-fmt`, `tracing-appender`
//! and `nowait` (`NowaitLayer`). The modes that log by calling their own API
//! (`println`, `nowait-core`, `nowait-macro`, `nowait-log`) are refused:
//! this server's lines come from `TraceLayer` alone.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use nowait_loadtest::{arg, Logging, Mode, SinkSpec};
use tower_http::trace::{DefaultMakeSpan, DefaultOnRequest, DefaultOnResponse, TraceLayer};
use tracing::Level;

/// The lines `TraceLayer` writes per request (on request, on response).
const EVENTS_PER_REQUEST: u32 = 2;

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let port = arg(&args, "--port").unwrap_or_else(|| "8080".into());
    let mode_name = arg(&args, "--log").unwrap_or_else(|| "none".into());
    let mode = Mode::parse(&mode_name)
        .filter(|m| {
            matches!(
                m,
                Mode::None
                    | Mode::TracingEnvFilter
                    | Mode::TracingFmt
                    | Mode::TracingAppender
                    | Mode::TracingAppenderLossless
                    | Mode::Nowait
            )
        })
        .ok_or_else(|| std::io::Error::other(format!("--log {mode_name}: not a tracing mode")))?;
    let sink_name = arg(&args, "--sink").unwrap_or_else(|| "stdout".into());
    let sink = SinkSpec::parse(&sink_name)
        .ok_or_else(|| std::io::Error::other(format!("bad --sink {sink_name}")))?;

    let stop = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGTERM, Arc::clone(&stop))?;
    signal_hook::flag::register(signal_hook::consts::SIGINT, Arc::clone(&stop))?;

    // Loggers start their threads before the request thread is pinned, so
    // those threads stay free to run on another CPU.
    let logging = Logging::new(mode, &sink)?;
    if let Some(cpu) = arg(&args, "--cpu") {
        nowait_loadtest::pin_to_cpu(&cpu)?;
    }
    let requests = Arc::new(AtomicU64::new(0));
    let counter = Arc::clone(&requests);
    let app = Router::new()
        .fallback(move || {
            let counter = Arc::clone(&counter);
            async move {
                counter.fetch_add(1, Ordering::Relaxed);
                "Hello World!"
            }
        })
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(DefaultMakeSpan::new().level(Level::INFO))
                .on_request(DefaultOnRequest::new().level(Level::INFO))
                .on_response(DefaultOnResponse::new().level(Level::INFO)),
        );

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(format!("127.0.0.1:{port}")).await?;
        eprintln!("READY {port}");
        let stopped = async move {
            while !stop.load(Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        };
        axum::serve(listener, app)
            .with_graceful_shutdown(stopped)
            .await
    })?;
    drop(runtime);
    let counters = logging.finish();
    eprintln!(
        "RESULT {{\"requests\":{},\"events_per_request\":{EVENTS_PER_REQUEST},{counters}}}",
        requests.load(Ordering::Relaxed)
    );
    Ok(())
}
