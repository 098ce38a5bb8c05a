//! What it models: the cost of a logging call that the filter turns off,
//! on a request thread (goal: at most 2 ns).
//!
//! * `nowait::debug!` disabled: the call site's cached interest is one
//!   relaxed load and a branch, whether the level or a directive turns it
//!   off;
//! * `log::debug!` disabled by level: `log`'s own relaxed load of
//!   `log::max_level`, kept at the filter's most verbose level;
//! * `log::debug!` at an enabled level but a target the directives turn
//!   off: the `log` front end evaluates the directives on the target
//!   string (a thread-local cache of the filter, prefix compares).
//!
//! * the floor: the same `log::debug!` handed to a `log::Log` that
//!   rejects everything without looking (the facade's own cost: building
//!   the `Record`, the dynamic call), so the front end's share is the
//!   difference.
//!
//! The logger drains into a null sink and receives nothing.
//!
//! Run: `cargo bench -p nowait-benches --bench filter`.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion};
use nowait::filter::{Filter, FilterHandle};
use nowait::{Builder, Sink};

fn disabled(c: &mut Criterion) {
    let (logger, _guard) = Builder::new()
        .sink(Sink::writer(std::io::sink()))
        .build()
        .unwrap();
    nowait::set_global(logger.clone()).unwrap();
    nowait::log::init_with_filter(logger.clone(), Filter::parse("info").unwrap()).unwrap();

    let mut group = c.benchmark_group("disabled");
    group.bench_function("nowait::debug! (level)", |b| {
        b.iter(|| nowait::debug!("cache miss for {} in {}us", black_box(7u64), 41u64))
    });
    group.bench_function("log::debug! (level)", |b| {
        b.iter(|| log::debug!("cache miss for {} in {}us", black_box(7u64), 41u64))
    });

    // DEBUG is enabled for one target only: the other targets' DEBUG calls
    // pass `log::max_level` and are turned off by the directives.
    FilterHandle::new().reload("info,my_app::db=debug").unwrap();
    group.bench_function("nowait::debug! (target)", |b| {
        b.iter(|| nowait::debug!(target: "hyper::proto::h1", "read {} bytes", black_box(512u64)))
    });
    group.bench_function("log::debug! (target)", |b| {
        b.iter(|| log::debug!(target: "hyper::proto::h1", "read {} bytes", black_box(512u64)))
    });
    let floor: &dyn log::Log = &Reject;
    group.bench_function("log::debug! (floor: a Log that rejects)", |b| {
        b.iter(|| log::debug!(logger: floor, target: "hyper::proto::h1", "read {} bytes", black_box(512u64)))
    });
    group.finish();
    assert_eq!(logger.stats().records_written, 0, "nothing was enabled");
}

/// A `log::Log` that turns everything off without looking at it.
struct Reject;

impl log::Log for Reject {
    fn enabled(&self, _: &log::Metadata<'_>) -> bool {
        false
    }
    fn log(&self, record: &log::Record<'_>) {
        black_box(record);
    }
    fn flush(&self) {}
}

criterion_group!(benches, disabled);
criterion_main!(benches);
