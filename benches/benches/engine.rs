//! What it models: the cost on a request thread of handing one record to
//! nowait's engine (claim, copy, commit), with the writer thread draining
//! into a null sink so that only our overhead is measured.
//!
//! Run: `cargo bench -p nowait-benches --bench engine`.

use std::hint::black_box;
use std::io;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use nowait::{Builder, FullPolicy, Level, Sink};

fn line(len: usize) -> String {
    "GET /api/v1/items?id=12345 200 OK 1834us "
        .chars()
        .cycle()
        .take(len)
        .collect()
}

fn push(c: &mut Criterion) {
    let mut group = c.benchmark_group("engine/push");
    for len in [64usize, 256] {
        let text = line(len);
        for (name, policy) in [("drop", FullPolicy::Drop), ("block", FullPolicy::Block)] {
            let (logger, guard) = Builder::new()
                .capacity(8 << 20)
                .full_policy(policy)
                .sink(Sink::writer(io::sink()))
                .build()
                .expect("logger");
            group.throughput(Throughput::Elements(1));
            group.bench_with_input(BenchmarkId::new(name, len), &text, |b, text| {
                b.iter(|| logger.log(Level::Info, black_box(text)))
            });
            drop(guard);
            let stats = logger.stats();
            eprintln!(
                "  [{name}/{len}] written {} dropped {} ring high-water {} B",
                stats.records_written,
                stats.dropped(),
                stats.ring_high_water
            );
        }
    }
    group.finish();
}

criterion_group!(benches, push);
criterion_main!(benches);
