//! `Logger::flush_async` and `Guard::flush_async`: the future completes once
//! everything accepted before the call is written, under tokio's
//! current-thread and multi-thread runtimes and under a plain executor
//! written here; the task's thread is never blocked (another task on a
//! current-thread runtime keeps running while a slow sink is written);
//! the flush timeout bounds it even while the writer is blocked in a
//! write; after shutdown it reports `Closed`.

#![cfg(not(loom))] // tokio builds only without loom

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use nowait_core::format::Plain;
use nowait_core::{Builder, FlushError, Level, Sink};
use nowait_testkit::{MemoryWriter, Slow};

/// The smallest executor: polls on the calling thread, parks between
/// wake-ups.
fn block_on<F: Future>(f: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut f = pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut Context::from_waker(&waker)) {
            return v;
        }
        std::thread::park();
    }
}

/// A sink whose every write call sleeps `delay` first.
fn slow(out: &MemoryWriter, delay: Duration) -> Sink {
    Sink::writer(Slow {
        inner: out.clone(),
        delay,
        chunk: usize::MAX,
    })
    .format(Plain)
}

#[test]
fn a_plain_executor_sees_every_record_written() {
    let out = MemoryWriter::default();
    let (logger, guard) = Builder::new()
        .flush_on_exit(false)
        .sink(slow(&out, Duration::from_millis(20)))
        .build()
        .unwrap();
    for i in 0..100 {
        logger.log(Level::Info, &format!("r{i}")).unwrap();
    }
    block_on(logger.flush_async()).unwrap();
    assert_eq!(out.lines().len(), 100);
    logger.log(Level::Info, "last").unwrap();
    block_on(guard.flush_async()).unwrap();
    assert_eq!(out.lines().last().map(String::as_str), Some("last"));
}

#[test]
fn current_thread_runtime() {
    let out = MemoryWriter::default();
    let (logger, _guard) = Builder::new()
        .flush_on_exit(false)
        .sink(slow(&out, Duration::from_millis(5)))
        .build()
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    rt.block_on(async {
        for round in 0..20 {
            logger.log(Level::Info, &format!("r{round}")).unwrap();
            logger.flush_async().await.unwrap();
            assert_eq!(out.lines().len(), round + 1);
        }
    });
}

#[test]
fn multi_thread_runtime_with_many_tasks() {
    let out = MemoryWriter::default();
    let (logger, _guard) = Builder::new()
        .flush_on_exit(false)
        .sink(slow(&out, Duration::from_millis(2)))
        .build()
        .unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .build()
        .unwrap();
    rt.block_on(async {
        let tasks: Vec<_> = (0..16)
            .map(|t| {
                let logger = logger.clone();
                let out = out.clone();
                tokio::spawn(async move {
                    for i in 0..10 {
                        let line = format!("t{t} n{i}");
                        logger.log(Level::Info, &line).unwrap();
                        logger.flush_async().await.unwrap();
                        assert!(out.lines().contains(&line), "{line} not written");
                    }
                })
            })
            .collect();
        for task in tasks {
            task.await.unwrap();
        }
    });
    assert_eq!(out.lines().len(), 160);
}

/// While a slow sink holds the writer, the flush waits without blocking
/// its thread: a ticking task on the same single-threaded runtime keeps
/// running.
#[test]
fn other_tasks_run_while_a_slow_sink_is_flushed() {
    let out = MemoryWriter::default();
    let (logger, _guard) = Builder::new()
        .flush_on_exit(false)
        .sink(slow(&out, Duration::from_millis(400)))
        .build()
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap();
    let ticks = Arc::new(AtomicU64::new(0));
    let during = rt.block_on(async {
        let t = Arc::clone(&ticks);
        let ticker = tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_millis(10)).await;
                t.fetch_add(1, Ordering::Relaxed);
            }
        });
        logger.log(Level::Info, "slow").unwrap();
        let before = ticks.load(Ordering::Relaxed);
        let started = Instant::now();
        logger.flush_async().await.unwrap();
        let waited = started.elapsed();
        ticker.abort();
        assert!(waited >= Duration::from_millis(300), "{waited:?}");
        assert_eq!(out.text(), "slow\n");
        ticks.load(Ordering::Relaxed) - before
    });
    // 400 ms of waiting, a tick every 10 ms: far more than a handful.
    assert!(during >= 10, "only {during} ticks while the flush waited");
}

/// The flush timeout bounds the future even while the writer is blocked in
/// a write (the timer thread wakes it); dropping futures early is fine.
#[test]
fn the_flush_timeout_bounds_the_future() {
    let out = MemoryWriter::default();
    let (logger, guard) = Builder::new()
        .flush_on_exit(false)
        .flush_timeout(Duration::from_millis(100))
        .shutdown_timeout(Duration::from_millis(100))
        .sink(slow(&out, Duration::from_millis(1500)))
        .build()
        .unwrap();
    logger.log(Level::Info, "stuck").unwrap();
    // Let the writer enter the write.
    std::thread::sleep(Duration::from_millis(150));
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let started = Instant::now();
    let outcome = rt.block_on(logger.flush_async());
    let took = started.elapsed();
    assert!(matches!(outcome, Err(FlushError::TimedOut)), "{outcome:?}");
    assert!(took < Duration::from_millis(1000), "{took:?}");
    for _ in 0..100 {
        drop(logger.flush_async());
    }
    drop(guard);
    assert!(matches!(
        block_on(logger.flush_async()),
        Err(FlushError::Closed)
    ));
}
