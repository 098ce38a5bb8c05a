//! nowait on the shared workload (see `benches/src/lib.rs`): the line is
//! formatted on the caller into a reused buffer and pushed as a text record
//! (the core API; the front ends' deferred formatting is measured in their
//! own benches). The writer thread drains into `io::sink()`.

use std::fmt::Write;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use nowait::{Builder, FullPolicy, Level, Sink};
use nowait_benches::{request, GROUP};

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group(GROUP);
    group.throughput(Throughput::Elements(1));
    let (logger, guard) = Builder::new()
        .capacity(8 << 20)
        .full_policy(FullPolicy::Block)
        .sink(Sink::writer(std::io::sink()))
        .build()
        .expect("logger");
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
            logger.log(Level::Info, &line)
        })
    });
    group.finish();
    drop(guard);
    eprintln!("nowait stats: {:?}", logger.stats());
}

criterion_group!(benches, bench);
criterion_main!(benches);
