//! fast_log (`log` facade, a channel to its appender thread) writing to
//! `/dev/null`, on the shared workload.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use nowait_benches::{request, GROUP};

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group(GROUP);
    group.throughput(Throughput::Elements(1));
    fast_log::init(
        fast_log::Config::new()
            .file("/dev/null")
            .chan_len(Some(100_000)),
    )
    .expect("fast_log init");
    let mut i = 0u64;
    group.bench_function(BenchmarkId::new("fast_log", 3), |b| {
        b.iter(|| {
            i += 1;
            let r = request(i);
            log::info!(
                "served path={} status={} latency_us={}",
                r.path,
                r.status,
                r.latency_us
            );
        })
    });
    group.finish();
    log::logger().flush();
}

criterion_group!(benches, bench);
criterion_main!(benches);
