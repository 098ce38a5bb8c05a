//! What it models: the cost of a rate-limited or sampled macro call on a
//! request thread, next to an unlimited one.
//!
//! * `unlimited`: a plain `nowait::info!` that logs (the baseline);
//! * `limited, logs`: the same call under a limit it never reaches
//!   (`limit = 8000000 per 100ms`): the window check, then the logged
//!   call;
//! * `limited, suppressed`: over its limit (`limit = 1 per 1h`): the clock
//!   read, the window word's load and one striped counter increment; no
//!   encoding, no ring space;
//! * `sampled 1 in 100`: a thread-local draw per call, one call in 100
//!   logged;
//! * `contention/suppressed/{1,2}`: one, then two threads hitting the same
//!   suppressed call site (time per call per thread): the window word is
//!   only read, and each thread counts on its own counter line, so two
//!   threads should cost about what one does.
//!
//! * `layer/…`: `tracing::warn!` through `NowaitLayer`:
//!   `unlimited` (a layer without `with_limits`, the baseline),
//!   `limits, site unlimited` (a layer with limits, at a call site no
//!   directive matches: the table lookup, then the logged call), and
//!   `limited, suppressed` (over its site's limit, `1/1h`: the table
//!   lookup, the window check and one counter increment; no encoding).
//!   `tracing`'s own dispatch runs in all three.
//!
//! The loggers drain into a null sink (a ring of 64 MiB, so that the
//! logged calls rarely find it full; drops are counted and printed).
//!
//! Run: `cargo bench -p nowait-benches --bench ratelimit` (the layer's
//! cases alone: `... --bench ratelimit -- layer/`).

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use nowait::{Builder, Sink};

#[inline(never)]
fn suppressed_site(n: u64) {
    nowait::info!(limit = 1 per 1h, "GET /index.html {}", n);
}

fn calls(c: &mut Criterion) {
    let (logger, _guard) = Builder::new()
        .capacity(64 << 20)
        .sink(Sink::writer(std::io::sink()))
        .build()
        .unwrap();
    nowait::set_global(logger.clone()).unwrap();

    let mut group = c.benchmark_group("ratelimit");
    group.bench_function("unlimited", |b| {
        b.iter(|| nowait::info!("GET /index.html {}", black_box(200u64)))
    });
    group.bench_function("limited, logs", |b| {
        b.iter(|| nowait::info!(limit = 8000000 per 100ms, "GET /index.html {}", black_box(200u64)))
    });
    group.bench_function("limited, suppressed", |b| {
        b.iter(|| nowait::info!(limit = 1 per 1h, "GET /index.html {}", black_box(200u64)))
    });
    group.bench_function("sampled 1 in 100", |b| {
        b.iter(|| nowait::info!(sample = 1 in 100, "GET /index.html {}", black_box(200u64)))
    });
    group.finish();

    let mut group = c.benchmark_group("contention");
    for threads in [1u64, 2] {
        group.bench_with_input(
            BenchmarkId::new("suppressed", threads),
            &threads,
            |b, &threads| {
                b.iter_custom(|iters| {
                    let per_thread: Vec<Duration> = std::thread::scope(|s| {
                        let workers: Vec<_> = (0..threads)
                            .map(|_| {
                                s.spawn(move || {
                                    let t = Instant::now();
                                    for i in 0..iters {
                                        suppressed_site(black_box(i));
                                    }
                                    t.elapsed()
                                })
                            })
                            .collect();
                        workers.into_iter().map(|w| w.join().unwrap()).collect()
                    });
                    // Time per call per thread: the slowest thread's.
                    per_thread.into_iter().max().unwrap_or_default()
                })
            },
        );
    }
    group.finish();

    logger.flush().unwrap();
    let stats = logger.stats();
    eprintln!(
        "suppressed: {} (rate limit), {} (sampling); dropped: {}",
        stats.suppressed_rate_limit,
        stats.suppressed_sampled,
        stats.dropped()
    );
}

fn layer_calls(c: &mut Criterion) {
    use tracing_subscriber::prelude::*;

    let (logger, _guard) = Builder::new()
        .capacity(64 << 20)
        .sink(Sink::writer(std::io::sink()))
        .build()
        .unwrap();
    let plain = tracing_subscriber::registry().with(nowait::NowaitLayer::new(logger.clone()));
    let limited = tracing_subscriber::registry().with(
        nowait::NowaitLayer::new(logger.clone())
            .with_limits("bench::limited=1/1h")
            .unwrap(),
    );

    let mut group = c.benchmark_group("layer");
    tracing::subscriber::with_default(plain, || {
        group.bench_function("unlimited", |b| {
            b.iter(|| tracing::warn!(target: "bench::unlimited", n = black_box(200u64), "GET /index.html"))
        });
    });
    tracing::subscriber::with_default(limited, || {
        group.bench_function("limits, site unlimited", |b| {
            b.iter(|| tracing::warn!(target: "bench::unlimited", n = black_box(200u64), "GET /index.html"))
        });
        group.bench_function("limited, suppressed", |b| {
            b.iter(|| tracing::warn!(target: "bench::limited", n = black_box(200u64), "GET /index.html"))
        });
    });
    group.finish();

    logger.flush().unwrap();
    let stats = logger.stats();
    eprintln!(
        "layer: suppressed {} (rate limit); dropped: {}",
        stats.suppressed_rate_limit,
        stats.dropped()
    );
}

criterion_group!(benches, calls, layer_calls);
criterion_main!(benches);
