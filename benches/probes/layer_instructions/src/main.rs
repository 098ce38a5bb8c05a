//! Instructions per `tracing::info!` on the calling thread, through
//! `NowaitLayer` (a file sink in a temporary directory) and through
//! `tracing`'s floor (`Registry` and a layer that visits the fields into
//! nothing, as `benches/benches/latency_load/fronts.rs` has it). Counted
//! with callgrind, which is deterministic, so the machine's load does not
//! matter; `measure.sh` next to this file runs it.
//!
//! ```text
//! layer-instructions MODE SHAPE N
//!   MODE   layer | floor | macro (nowait::info!, global logger; SHAPE req only)
//!          | otel (tracing-opentelemetry's layer with an SDK tracer, then
//!          ours; built with feature otel-layer or opentelemetry)
//!   SHAPE  req      path, status, latency_us and "served" (the latency_load call)
//!          fmt      target "app", a, b and "request {} done" with one argument
//!          spanreq  req inside an entered span with two fields
//! ```
//!
//! Only the `emit_*` functions are meant to be collected
//! (`--toggle-collect='layer_instructions::emit_*'`); each first logs one
//! event outside the count's difference (registration, thread set-up).

use std::hint::black_box;

use tracing_subscriber::prelude::*;

/// The latency_load workload's call through `tracing`
/// ([`nowait_benches::tracing_request`], the same function the benches time).
#[inline(never)]
fn emit_req(n: u64) {
    req_loop(n);
}

/// Not an `emit_*` function: callgrind's `--toggle-collect` toggles on
/// each entry, so `emit_spanreq` must not call `emit_req`.
#[inline(always)]
fn req_loop(n: u64) {
    for i in 0..n {
        nowait_benches::tracing_request(black_box(i));
    }
}

/// The same call through nowait's own macro (mode `macro`;
/// [`nowait_benches::macro_request`]).
#[inline(never)]
fn emit_mreq(n: u64) {
    for i in 0..n {
        nowait_benches::macro_request(black_box(i));
    }
}

/// A formatted message with one argument, an explicit target.
#[inline(never)]
fn emit_fmt(n: u64) {
    for i in 0..n {
        let i = black_box(i);
        tracing::info!(target: "app", a = 1u64, b = "two", "request {} done", i);
    }
}

/// The workload's call inside an entered span.
#[inline(never)]
fn emit_spanreq(n: u64) {
    let span = tracing::info_span!("request", method = "GET", id = 7u64);
    let _entered = span.enter();
    req_loop(n);
}

/// `tracing`'s floor: visits every field of an event into nothing.
struct Floor;

struct NoVisit;

impl tracing::field::Visit for NoVisit {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        black_box((field, value));
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Floor {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        event.record(&mut NoVisit);
    }
}

/// The probe's file sink; `NOWAIT_PROBE_SINK_FILTER=DIRECTIVES` gives it
/// target directives (`Sink::filter`): with `app=info`, no sink wants the
/// workload's target (`nowait_benches`), and the count is that of a call
/// rejected on the request thread.
fn sink() -> nowait_core::Sink {
    let dir = std::env::temp_dir().join(format!("layer-instructions-{}", std::process::id()));
    let sink = nowait_core::Sink::file(dir.join("app.log"));
    match std::env::var("NOWAIT_PROBE_SINK_FILTER") {
        Ok(directives) => sink.filter(&directives),
        Err(_) => sink,
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: layer-instructions layer|floor|macro|otel|otelmacro req|fmt|spanreq N";
    let (Some(mode), Some(shape), Some(n)) = (args.get(1), args.get(2), args.get(3)) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let n: u64 = n.parse().expect("N is a number");
    let emit: fn(u64) = match shape.as_str() {
        "req" if mode == "macro" || mode == "otelmacro" => emit_mreq,
        "req" => emit_req,
        "fmt" => emit_fmt,
        "spanreq" => emit_spanreq,
        _ => panic!("{usage}"),
    };
    let run = || {
        emit(1);
        emit(n);
    };
    let dir = std::env::temp_dir().join(format!("layer-instructions-{}", std::process::id()));
    // A ring large enough for every event: none dropped, no wait.
    let builder = || {
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        nowait_core::Builder::new()
            .capacity(256 << 20)
            // NOWAIT_PROBE_LANES=0: without per-thread lanes.
            .lanes(
                std::env::var("NOWAIT_PROBE_LANES")
                    .ok()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(16),
            )
            .lane_capacity(64 << 20)
            .sink(sink())
    };
    let report = |logger: &nowait_core::Logger| {
        let stats = logger.stats();
        eprintln!(
            "dropped {} discarded {} taken {}",
            stats.dropped(),
            stats.discarded,
            stats.records_written
        );
        let _ = std::fs::remove_dir_all(&dir);
    };
    match mode.as_str() {
        "layer" => {
            let (layer, guard) = nowait_tracing::layer(builder()).expect("a logger");
            let logger = layer.logger().clone();
            tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), run);
            drop(guard);
            report(&logger);
        }
        "macro" => {
            let (logger, guard) = builder().build().expect("a logger");
            nowait::set_global(logger.clone()).expect("the first global logger");
            run();
            drop(guard);
            report(&logger);
        }
        #[cfg(feature = "otel-layer")]
        "otel" | "otelmacro" => {
            use opentelemetry::trace::TracerProvider as _;
            let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
            let otel = tracing_opentelemetry::layer().with_tracer(provider.tracer("probe"));
            let (layer, guard) = nowait_tracing::layer(builder()).expect("a logger");
            let logger = layer.logger().clone();
            if mode == "otelmacro" {
                // As `nowait::init` sets up: the global logger first, then
                // the layer (with its trace source for the macros) joins
                // the subscriber.
                nowait::set_global(logger.clone()).expect("the first global logger");
            }
            let subscriber = tracing_subscriber::registry().with(otel).with(layer);
            tracing::subscriber::with_default(subscriber, run);
            drop(guard);
            report(&logger);
        }
        "floor" => {
            tracing::subscriber::with_default(tracing_subscriber::registry().with(Floor), run);
        }
        _ => panic!("{usage}"),
    }
}
