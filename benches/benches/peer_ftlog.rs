//! ftlog (its own background thread, `log` facade) writing into
//! `io::sink()`, on the shared workload.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use nowait_benches::{request, GROUP};

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group(GROUP);
    group.throughput(Throughput::Elements(1));
    let guard = ftlog::builder()
        .root(std::io::sink())
        .try_init()
        .expect("ftlog init");
    let mut i = 0u64;
    group.bench_function(BenchmarkId::new("ftlog", 3), |b| {
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
    drop(guard);
}

criterion_group!(benches, bench);
criterion_main!(benches);
