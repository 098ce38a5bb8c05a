//! "No allocation on the hot path": a counting global allocator shows zero
//! allocations on the producer thread across 100k records after warm-up,
//! under both full policies.
#![cfg(not(miri))] // Miri's allocator is not the global one under test.

use nowait_core::record::kind;
use nowait_core::{Builder, FullPolicy, Level, Sink};

#[global_allocator]
static ALLOC: nowait_testkit::Counting = nowait_testkit::Counting;

fn run(policy: FullPolicy) {
    let (logger, guard) = Builder::new()
        .full_policy(policy)
        .sink(Sink::writer(std::io::sink()))
        .build()
        .unwrap();
    let line = "GET /index.html 200 1234us";
    for _ in 0..1000 {
        logger.log(Level::Info, line).unwrap();
    }
    // The measured phase must not be this thread's first wait for room.
    nowait_testkit::wait_once_for_room();
    let allocs = nowait_testkit::count(|| {
        for i in 0..100_000u32 {
            let _ = logger.log(Level::Info, line);
            let _ = nowait_core::__private::logger::try_push(
                &logger,
                Level::Warn,
                kind::TEXT,
                &[b"n=", &i.to_le_bytes()],
            );
        }
    });
    drop(guard);
    let stats = logger.stats();
    assert_eq!(allocs, 0, "allocations on the producer thread ({policy:?})");
    assert_eq!(stats.records_written + stats.dropped(), 201_000);
}

#[test]
fn producer_thread_does_not_allocate() {
    run(FullPolicy::Drop);
    run(FullPolicy::Block);
}

/// The macros: deferred arguments, a caller-rendered argument, fields.
#[test]
fn macros_do_not_allocate() {
    let (logger, guard) = Builder::new()
        .full_policy(FullPolicy::Block)
        .sink(Sink::writer(std::io::sink()))
        .build()
        .unwrap();
    nowait_core::set_global(logger.clone()).unwrap();
    let path = String::from("/index.html");
    let emit = |i: u64| {
        nowait_core::info!(
            status = 200u16,
            cached = true,
            "GET {} {} {}us",
            path,
            i,
            41.5
        );
        nowait_core::warn!(peer = ?("10.0.0.7", 4431), "slow {:?}", [i, i + 1]);
    };
    // Warm up with the longest values too: the thread's buffer grows to
    // the largest event it has seen (the `warn!` below renders "[i, i+1]",
    // which gets longer as `i` does), then never again.
    for i in (0..1000).chain(49_000..50_000) {
        emit(i);
    }
    // The measured phase must not be this thread's first wait for room.
    nowait_testkit::wait_once_for_room();
    let allocs = nowait_testkit::count(|| {
        for i in 0..50_000 {
            emit(i);
        }
    });
    drop(guard);
    assert_eq!(allocs, 0, "allocations on the producer thread (macros)");
    assert_eq!(logger.stats().records_written, 104_000);
}
