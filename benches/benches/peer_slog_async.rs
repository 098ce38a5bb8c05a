//! slog with slog-async (default channel size, drop on overflow) in front of
//! slog-term's plain format into `io::sink()`, on the shared workload.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use nowait_benches::{request, GROUP};
use slog::{info, o, Drain};

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group(GROUP);
    group.throughput(Throughput::Elements(1));
    let decorator = slog_term::PlainDecorator::new(std::io::sink());
    let drain = slog_term::FullFormat::new(decorator).build().fuse();
    let (drain, guard) = slog_async::Async::new(drain).build_with_guard();
    let log = slog::Logger::root(drain.fuse(), o!());
    let mut i = 0u64;
    group.bench_function(BenchmarkId::new("slog-async", 3), |b| {
        b.iter(|| {
            i += 1;
            let r = request(i);
            info!(log, "served"; "path" => r.path, "status" => r.status, "latency_us" => r.latency_us);
        })
    });
    group.finish();
    drop(log);
    drop(guard);
}

criterion_group!(benches, bench);
criterion_main!(benches);
