//! "No allocation on the hot path": a counting global allocator shows zero
//! allocations on the producer thread across 100k records after warm-up,
//! under both full policies.
#![cfg(not(miri))] // Miri's allocator is not the global one under test.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

use nowait_core::{kind, Builder, FullPolicy, Level, Sink};

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
    ALLOCS.store(0, Ordering::SeqCst);
    COUNT_HERE.with(|c| c.set(true));
    for i in 0..100_000u32 {
        let _ = logger.log(Level::Info, line);
        let _ = logger.try_push(Level::Warn, kind::TEXT, &[b"n=", &i.to_le_bytes()]);
    }
    COUNT_HERE.with(|c| c.set(false));
    let allocs = ALLOCS.load(Ordering::SeqCst);
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
    for i in 0..1000 {
        emit(i);
    }
    ALLOCS.store(0, Ordering::SeqCst);
    COUNT_HERE.with(|c| c.set(true));
    for i in 0..50_000 {
        emit(i);
    }
    COUNT_HERE.with(|c| c.set(false));
    let allocs = ALLOCS.load(Ordering::SeqCst);
    drop(guard);
    assert_eq!(allocs, 0, "allocations on the producer thread (macros)");
    assert_eq!(logger.stats().records_written, 102_000);
}
