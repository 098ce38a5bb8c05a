//! Zero allocations per event on the calling thread after warm-up: events
//! with typed fields, a `Debug` field and a formatted message, inside two
//! spans.
#![cfg(not(miri))] // Miri's allocator is not the global one under test.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

use nowait_core::{Builder, FullPolicy, Sink};
use tracing_subscriber::prelude::*;

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);
thread_local! {
    static COUNT_HERE: Cell<bool> = const { Cell::new(false) };
}

// SAFETY: forwards to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNT_HERE.with(Cell::get) {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: same contract as ours.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as ours.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNT_HERE.with(Cell::get) {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: same contract as ours.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn events_do_not_allocate() {
    let (logger, guard) = Builder::new()
        .full_policy(FullPolicy::Block)
        .sink(Sink::writer(std::io::sink()))
        .build()
        .unwrap();
    let layer = nowait_tracing::NowaitLayer::new(logger.clone());
    let subscriber = tracing_subscriber::registry()
        .with(tracing_subscriber::filter::LevelFilter::INFO)
        .with(layer);
    tracing::subscriber::with_default(subscriber, || {
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
        ALLOCS.store(0, Ordering::SeqCst);
        COUNT_HERE.with(|c| c.set(true));
        for i in 0..50_000 {
            emit(i);
        }
        COUNT_HERE.with(|c| c.set(false));
    });
    let allocs = ALLOCS.load(Ordering::SeqCst);
    drop(guard);
    assert_eq!(allocs, 0, "allocations on the calling thread per event");
    assert_eq!(logger.stats().records_written, 102_000);
}
