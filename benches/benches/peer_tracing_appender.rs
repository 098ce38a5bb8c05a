//! tracing-appender's `non_blocking` behind `tracing_subscriber::fmt` (the
//! usual setup), default and lossless, on the shared workload. Its worker
//! writes into `io::sink()`.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use nowait_benches::{tracing_request, GROUP};

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group(GROUP);
    group.throughput(Throughput::Elements(1));
    for lossy in [true, false] {
        let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
            .lossy(lossy)
            .finish(std::io::sink());
        let counter = writer.error_counter();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(writer)
            .with_ansi(false)
            .finish();
        let _default = tracing::subscriber::set_default(subscriber);
        let name = if lossy {
            "tracing-appender"
        } else {
            "tracing-appender-lossless"
        };
        let mut i = 0u64;
        group.bench_function(BenchmarkId::new(name, 3), |b| {
            b.iter(|| {
                i += 1;
                tracing_request(i);
            })
        });
        drop(_default);
        drop(guard);
        eprintln!("{name}: {} lines dropped", counter.dropped_lines());
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
