//! nowait on the shared workload (see `benches/src/lib.rs`), through each of
//! its front ends. The writer thread drains into `io::sink()`.
//!
//! * `nowait-core-text`: the line formatted on the caller into a reused
//!   buffer and pushed as a text record (the engine alone).
//! * `nowait-layer`: `tracing::info!` with three fields through
//!   `NowaitLayer` (raw values copied, formatted on the writer thread).
//! * `nowait-macro`: `nowait::info!` with the same three fields.
//! * `nowait-macro-args`: `nowait::info!("served {} {} {}", ...)`: a message
//!   with three deferred arguments.

use std::fmt::Write;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use nowait::Level;
use nowait_benches::{macro_request, null_logger, request, tracing_request, GROUP};
use tracing_subscriber::prelude::*;

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group(GROUP);
    group.throughput(Throughput::Elements(1));

    let (text_logger, text_guard) = null_logger();
    let mut line = String::with_capacity(256);
    let mut i = 0u64;
    group.bench_function(BenchmarkId::new("nowait-core-text", 3), |b| {
        b.iter(|| {
            i += 1;
            let r = request(i);
            line.clear();
            let _ = write!(
                line,
                "served path={} status={} latency_us={}",
                r.path, r.status, r.latency_us
            );
            text_logger.log(Level::Info, &line)
        })
    });
    drop(text_guard);

    let (layer_logger, layer_guard) = null_logger();
    let subscriber =
        tracing_subscriber::registry().with(nowait::NowaitLayer::new(layer_logger.clone()));
    let default = tracing::subscriber::set_default(subscriber);
    group.bench_function(BenchmarkId::new("nowait-layer", 3), |b| {
        b.iter(|| {
            i += 1;
            tracing_request(i);
        })
    });
    drop(default);
    drop(layer_guard);

    let (macro_logger, _macro_guard) = null_logger();
    nowait::set_global(macro_logger.clone()).expect("first global logger");
    group.bench_function(BenchmarkId::new("nowait-macro", 3), |b| {
        b.iter(|| {
            i += 1;
            macro_request(i);
        })
    });
    group.bench_function(BenchmarkId::new("nowait-macro-args", 3), |b| {
        b.iter(|| {
            i += 1;
            let r = request(i);
            nowait::info!("served {} {} {}", r.path, r.status, r.latency_us);
        })
    });
    group.finish();
    macro_logger.flush().expect("flush");
    for (name, l) in [
        ("text", &text_logger),
        ("layer", &layer_logger),
        ("macro", &macro_logger),
    ] {
        let s = l.stats();
        eprintln!(
            "nowait {name}: written {} dropped {} discarded {}",
            s.records_written,
            s.dropped(),
            s.discarded
        );
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
