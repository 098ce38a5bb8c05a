//! Measures the engine's numbers quoted in the README: the delay from a
//! push to its `write()` when the writer is idle or polling, and the bytes
//! per `write()` under a steady load.
//!
//! Run: `cargo run --release -p nowait-examples --example engine_numbers`
//! (prints a table and one JSON line).

use std::io::{self, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use nowait::{Builder, FullPolicy, Level, Sink};

/// A sink that notes, for each record, how long after its push it was written.
struct Clocked {
    base: Instant,
    delays: Arc<Mutex<Vec<u64>>>,
}

impl Write for Clocked {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let now = self.base.elapsed().as_nanos() as u64;
        let mut delays = self.delays.lock().unwrap();
        for line in buf.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
            if let Some(sent) = std::str::from_utf8(line)
                .ok()
                .and_then(|s| s.strip_prefix("t="))
                .and_then(|s| s.parse::<u64>().ok())
            {
                delays.push(now - sent);
            }
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn percentile(sorted: &[u64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i] as f64 / 1e6
}

/// Pushes one record every `gap`, `count` times; returns sorted delays (ns).
fn delays(gap: Duration, count: usize) -> Vec<u64> {
    let base = Instant::now();
    let delays = Arc::new(Mutex::new(Vec::new()));
    let (logger, guard) = Builder::new()
        .sink(Sink::writer(Clocked {
            base,
            delays: Arc::clone(&delays),
        }))
        .build()
        .unwrap();
    for _ in 0..count {
        std::thread::sleep(gap);
        let t = base.elapsed().as_nanos();
        logger.log(Level::Info, &format!("t={t}")).unwrap();
    }
    drop(guard);
    let mut d = delays.lock().unwrap().clone();
    d.sort_unstable();
    d
}

fn main() {
    // Idle: records far apart, so the writer is asleep for each.
    let idle = delays(Duration::from_millis(150), 40);
    // Polling: records 1 ms apart, so the writer is on its 3 ms timer.
    let polling = delays(Duration::from_millis(1), 2000);

    // Load: 1M records of ~100 bytes as fast as one thread can push them.
    let (logger, guard) = Builder::new()
        .full_policy(FullPolicy::Block)
        .sink(Sink::writer(io::sink()))
        .build()
        .unwrap();
    let line = "x".repeat(100);
    let started = Instant::now();
    for _ in 0..1_000_000 {
        logger.log(Level::Info, &line).unwrap();
    }
    let pushed = started.elapsed();
    drop(guard);
    let s = logger.stats();
    let sink = &s.sinks[0];
    let per_write = sink.bytes_written as f64 / sink.write_calls.max(1) as f64;

    println!(
        "idle delay     p50 {:.2} ms  p99 {:.2} ms  max {:.2} ms  (n={})",
        percentile(&idle, 0.5),
        percentile(&idle, 0.99),
        percentile(&idle, 1.0),
        idle.len()
    );
    println!(
        "polling delay  p50 {:.2} ms  p99 {:.2} ms  max {:.2} ms  (n={})",
        percentile(&polling, 0.5),
        percentile(&polling, 0.99),
        percentile(&polling, 1.0),
        polling.len()
    );
    println!("load           {:.1} ns/record pushed, {:.0} bytes per write() over {} writes, blocked waits {}",
        pushed.as_nanos() as f64 / 1e6, per_write, sink.write_calls, s.blocked_waits);
    println!(
        "{{\"idle_p50_ms\":{:.3},\"idle_p99_ms\":{:.3},\"polling_p50_ms\":{:.3},\"polling_p99_ms\":{:.3},\"load_ns_per_record\":{:.1},\"bytes_per_write\":{:.0},\"writes\":{}}}",
        percentile(&idle, 0.5), percentile(&idle, 0.99), percentile(&polling, 0.5), percentile(&polling, 0.99),
        pushed.as_nanos() as f64 / 1e6, per_write, sink.write_calls
    );
}
