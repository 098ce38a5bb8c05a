//! Zero allocations per event on the calling thread after warm-up: events
//! with typed fields, a `Debug` field and a formatted message, inside two
//! spans; also when the sink's format prints threads, so that each event
//! records its thread.
#![cfg(not(miri))] // Miri's allocator is not the global one under test.

use nowait_core::format::Text;
use nowait_core::{Builder, FullPolicy, Sink};
use tracing_subscriber::prelude::*;

#[global_allocator]
static ALLOC: nowait_testkit::Counting = nowait_testkit::Counting;

#[test]
fn events_do_not_allocate() {
    run(Text::new());
}

#[test]
fn events_that_record_their_thread_do_not_allocate() {
    run(Text::new().with_thread_names(true).with_thread_ids(true));
}

fn run(format: Text) {
    let threads = nowait_core::format::MakeFormat::needs_thread(&format);
    let (logger, guard) = Builder::new()
        .full_policy(FullPolicy::Block)
        .sink(Sink::writer(std::io::sink()).format(format))
        .build()
        .unwrap();
    assert_eq!(
        nowait_core::__private::logger::records_thread(&logger),
        threads
    );
    let layer = nowait_tracing::NowaitLayer::new(logger.clone());
    let subscriber = tracing_subscriber::registry()
        .with(tracing_subscriber::filter::LevelFilter::INFO)
        .with(layer);
    // The measured phase must not be this thread's first wait for room.
    nowait_testkit::wait_once_for_room();
    let allocs = tracing::subscriber::with_default(subscriber, || {
        let conn = tracing::info_span!("conn", peer = "10.0.0.7");
        let _c = conn.enter();
        let req = tracing::info_span!("request", id = 42u64);
        let _r = req.enter();
        let emit = |i: u64| {
            tracing::info!(
                status = 200u64,
                micros = 41.5,
                path = "/index.html",
                "GET {}",
                i
            );
            tracing::warn!(peer = ?("10.0.0.7", 4431), "slow");
            tracing::debug!("disabled");
        };
        for i in 0..1000 {
            emit(i);
        }
        nowait_testkit::count(|| {
            for i in 0..50_000 {
                emit(i);
            }
        })
    });
    drop(guard);
    assert_eq!(allocs, 0, "allocations on the calling thread per event");
    assert_eq!(logger.stats().records_written, 102_000);
}
