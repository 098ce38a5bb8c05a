//! What it models: what one request costs in `tracing` calls when a
//! service uses tower-http's `TraceLayer` shape: a span per request with
//! `method`, `uri` and `version` fields, entered, two INFO events inside
//! it (on request, on response with a status and a latency), exited and
//! closed. Baseline: `Registry` with an `EnvFilter` and no output (what a
//! service pays for `tracing` itself); then nowait's layer on top of the
//! same, draining into a null sink; and tracing-subscriber's `fmt` layer
//! into `io::sink` (blocking, but to a sink that takes everything at
//! once). A second shape nests a `handler` and a `db` span inside the
//! request, with an event in each.
//!
//! Run: `taskset -c 0,1 cargo bench -p nowait-benches --bench span`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use tracing_subscriber::prelude::*;
use tracing_subscriber::EnvFilter;

/// The request's span: method, URI and version, as `TraceLayer` makes it.
fn request_span() -> tracing::Span {
    tracing::info_span!(
        "request",
        method = "GET",
        uri = "/api/v1/items/12345",
        version = "HTTP/1.1"
    )
}

fn request(i: u64) {
    let span = request_span();
    let _entered = span.enter();
    tracing::info!("started processing request");
    tracing::info!(
        latency = 41u64,
        status = 200u64 + (i & 1),
        "finished processing request"
    );
}

/// The span alone: created, entered, exited, closed.
fn span_only(_: u64) {
    let span = request_span();
    let _entered = span.enter();
}

/// The two events alone, outside any span.
fn events_only(i: u64) {
    tracing::info!("started processing request");
    tracing::info!(
        latency = 41u64,
        status = 200u64 + (i & 1),
        "finished processing request"
    );
}

/// Nested spans as a handler makes them inside the request span: a
/// `handler` span with a route and a `db` span with a table, one event
/// in each (each inner span's first event needs the chain of three).
fn nested(i: u64) {
    let request = request_span();
    let _request = request.enter();
    let handler = tracing::info_span!("handler", route = "/api/v1/items/{id}");
    let _handler = handler.enter();
    tracing::info!(user = i & 0xff, "authorized");
    let db = tracing::info_span!("db", table = "items");
    let _db = db.enter();
    tracing::info!(rows = 1u64, "query done");
}

/// Each shape, under `name`, with the default subscriber already set.
fn shapes(group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>, name: &str) {
    for (shape, f) in [
        ("span+2 events", request as fn(u64)),
        ("span only", span_only),
        ("2 events only", events_only),
        ("3 nested spans+2 events", nested),
    ] {
        let mut i = 0u64;
        group.bench_function(format!("{name}: {shape}"), |b| {
            b.iter(|| {
                i += 1;
                f(black_box(i))
            })
        });
    }
}

fn spans(c: &mut Criterion) {
    let mut group = c.benchmark_group("tracing");
    {
        let subscriber = tracing_subscriber::registry().with(EnvFilter::new("info"));
        let _default = tracing::subscriber::set_default(subscriber);
        shapes(&mut group, "Registry + EnvFilter (no output)");
    }
    {
        // Drop policy and a format that writes nothing: the writer keeps
        // up, so every timed call is a real push (not a wait for the
        // writer, not the cheaper drop path); checked below.
        let (logger, _guard) = nowait::Builder::new()
            .capacity(8 << 20)
            .full_policy(nowait::FullPolicy::Drop)
            .sink(
                nowait::Sink::writer(std::io::sink()).format(|_: &nowait::format::SinkInfo| {
                    Box::new(Discard) as Box<dyn nowait::format::Format>
                }),
            )
            .build()
            .unwrap();
        let probe = logger.clone();
        let subscriber = tracing_subscriber::registry()
            .with(EnvFilter::new("info"))
            .with(nowait::NowaitLayer::new(logger));
        let _default = tracing::subscriber::set_default(subscriber);
        shapes(&mut group, "nowait layer");
        drop(_default);
        probe.flush().unwrap();
        let stats = probe.stats();
        println!(
            "nowait: {} records written, {} dropped ({:.2} %)",
            stats.records_written,
            stats.dropped(),
            100.0 * stats.dropped() as f64
                / (stats.records_written + stats.dropped()).max(1) as f64
        );
    }
    {
        let subscriber = tracing_subscriber::registry()
            .with(EnvFilter::new("info"))
            .with(tracing_subscriber::fmt::layer().with_writer(std::io::sink));
        let _default = tracing::subscriber::set_default(subscriber);
        shapes(&mut group, "fmt layer into io::sink");
    }
    group.finish();
}

/// Formats nothing: the writer thread's cost stays out of the way.
#[derive(Clone, Copy)]
struct Discard;

impl nowait::format::Format for Discard {
    fn format(&mut self, record: &nowait::record::Record<'_>, _: &mut Vec<u8>) {
        black_box(record);
    }
    fn notice(&mut self, _: &nowait::record::Notice<'_>, _: &mut Vec<u8>) {}
}

criterion_group!(benches, spans);
criterion_main!(benches);
