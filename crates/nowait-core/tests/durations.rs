//! `Duration::MAX` as every bound, in a test binary of its own: it
//! measures the process's CPU time, which tests running beside it would
//! add to.

use std::time::Duration;

use nowait_core::record::kind;
use nowait_core::{Builder, FullPolicy, Level, Sink};
use nowait_testkit::{MemoryWriter, Slow};

/// CPU time (user and system) this process has used, from /proc.
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let fields: Vec<&str> = stat
        .rsplit(')')
        .next()
        .unwrap()
        .split_whitespace()
        .collect();
    // utime and stime (fields 14 and 15 of the line, 11 and 12 here), in
    // USER_HZ units: 100 a second on Linux.
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    Duration::from_millis(ticks * 10)
}

/// `Duration::MAX` for every interval and timeout means "no bound": no
/// panic on the caller (an `Instant` cannot hold it), no writer thread
/// lost, no writer spinning, nothing lost. Before, a flush with
/// `Duration::MAX` panicked on the caller, `BlockTimeout(Duration::MAX)`
/// panicked on the request thread once the ring filled, and
/// `flush_interval(Duration::MAX)` killed the writer at its first idle
/// round (its sleep doubled past what a `Duration` holds).
#[test]
fn duration_max_everywhere_is_no_bound_not_a_panic() {
    let out = MemoryWriter::default();
    let (logger, guard) = Builder::new()
        .catch_panics(false)
        .format(nowait_core::format::Plain)
        .capacity(1024)
        .flush_interval(Duration::MAX)
        .idle_interval(Duration::MAX)
        .shutdown_timeout(Duration::MAX)
        .flush_timeout(Duration::MAX)
        .panic_timeout(Duration::MAX)
        .full_policy(FullPolicy::BlockTimeout(Duration::MAX))
        .sink(Sink::writer(Slow {
            inner: out.clone(),
            delay: Duration::from_millis(1),
            chunk: usize::MAX,
        }))
        .build()
        .unwrap();
    // Idle: the writer sleeps (the doorbell and the ring fill wake it);
    // it neither died nor spins.
    let before = cpu_time();
    std::thread::sleep(Duration::from_millis(300));
    let used = cpu_time() - before;
    assert!(
        used < Duration::from_millis(150),
        "idle writer used {used:?} of CPU in 300 ms"
    );
    // Far more than the 1 KiB ring holds: producers block (unbounded) and
    // are let through as the writer drains.
    let n = if cfg!(miri) { 20 } else { 2000 };
    for i in 0..n {
        nowait_core::__private::logger::push(
            &logger,
            Level::Info,
            kind::TEXT,
            &[format!("line {i}").as_bytes()],
        )
        .unwrap();
    }
    logger.flush().unwrap();
    logger.flush_within(Duration::MAX).unwrap();
    drop(guard);
    let stats = logger.stats();
    assert_eq!(stats.records_written, n as u64);
    assert_eq!(stats.dropped(), 0);
    assert_eq!(out.lines().len(), n);
}
