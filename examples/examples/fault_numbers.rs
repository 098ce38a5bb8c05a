//! Measures the fault-handling numbers: the writer thread's idle cost (wake-ups and CPU per second)
//! with a healthy idle logger and with a stalled pipe sink, and the cost of
//! write-through (with and without fsync) against a plain push.
//!
//! Run: `cargo run --release -p nowait-examples --example fault_numbers`
//! (prints a table and one JSON line). Uses only API that older versions
//! have too, so the idle figures can be compared across commits.

use std::fs;
use std::os::unix::fs::OpenOptionsExt;
use std::time::{Duration, Instant};

use nowait::{Builder, Level, Sink};

/// (voluntary context switches, CPU ticks) of the thread named `name`.
fn thread_usage(name: &str) -> Option<(u64, u64)> {
    for task in fs::read_dir("/proc/self/task").ok()? {
        let dir = task.ok()?.path();
        let comm = fs::read_to_string(dir.join("comm")).ok()?;
        if comm.trim() != name {
            continue;
        }
        let status = fs::read_to_string(dir.join("status")).ok()?;
        let switches = status
            .lines()
            .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))?
            .trim()
            .parse()
            .ok()?;
        let stat = fs::read_to_string(dir.join("stat")).ok()?;
        let after = &stat[stat.rfind(')')? + 2..];
        let fields: Vec<&str> = after.split(' ').collect();
        let ticks: u64 = fields[11].parse::<u64>().ok()? + fields[12].parse::<u64>().ok()?;
        return Some((switches, ticks));
    }
    None
}

/// Wake-ups and CPU ticks per second of the writer over `secs`.
fn idle_cost(secs: u64) -> (f64, f64) {
    let (s0, t0) = thread_usage("nowait-writer").expect("writer thread");
    std::thread::sleep(Duration::from_secs(secs));
    let (s1, t1) = thread_usage("nowait-writer").expect("writer thread");
    (
        (s1 - s0) as f64 / secs as f64,
        (t1 - t0) as f64 / secs as f64,
    )
}

fn median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v[v.len() / 2]
}

fn push_cost(builder: Builder, n: usize) -> u64 {
    let (logger, guard) = builder.build().unwrap();
    let mut times = Vec::with_capacity(n);
    for i in 0..n {
        let line = format!("payment {i} failed");
        let t = Instant::now();
        logger.log(Level::Error, &line).unwrap();
        times.push(t.elapsed().as_nanos() as u64);
    }
    drop(guard);
    median(times)
}

fn main() {
    let dir = std::env::temp_dir().join(format!("nowait-fault-numbers-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let secs = 3;

    // 1. A healthy logger with nothing to log.
    let (logger, guard) = Builder::new()
        .sink(Sink::file(dir.join("idle.log")))
        .build()
        .unwrap();
    logger.log(Level::Info, "one record").unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let (idle_wakeups, idle_ticks) = idle_cost(secs);
    drop(guard);

    // 2. A stalled pipe: a FIFO whose reader never reads.
    let fifo = dir.join("fifo");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(status.success());
    let _reader = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&fifo)
        .unwrap();
    let (logger, guard) = Builder::new()
        .sink(Sink::file(&fifo).buffer_size(64 << 10))
        .shutdown_timeout(Duration::from_millis(200))
        .build()
        .unwrap();
    for i in 0..50_000 {
        let _ = logger.log(
            Level::Info,
            &format!("line {i} for a reader that never reads"),
        );
    }
    std::thread::sleep(Duration::from_millis(500));
    let (stalled_wakeups, stalled_ticks) = idle_cost(secs);
    let t = Instant::now();
    drop(guard);
    let stalled_shutdown_ms = t.elapsed().as_secs_f64() * 1e3;

    // 3. Write-through.
    let n = 2000;
    let file = |name: &str| Sink::file(dir.join(name));
    let plain = push_cost(Builder::new().sink(file("plain.log")), n);
    let through = push_cost(
        Builder::new()
            .sink(file("through.log"))
            .write_through(Level::Error),
        n,
    );
    let fsynced = push_cost(
        Builder::new()
            .sink(file("fsync.log"))
            .write_through(Level::Error)
            .fsync_write_through(true),
        n / 4,
    );
    let _ = fs::remove_dir_all(&dir);

    println!("| measure | value |");
    println!("|---|---|");
    println!("| idle healthy logger: writer wake-ups/s | {idle_wakeups:.1} |");
    println!("| idle healthy logger: writer CPU ticks/s (1 tick = 10 ms) | {idle_ticks:.2} |");
    println!("| stalled pipe sink: writer wake-ups/s | {stalled_wakeups:.1} |");
    println!("| stalled pipe sink: writer CPU ticks/s | {stalled_ticks:.2} |");
    println!("| stalled pipe sink: guard drop | {stalled_shutdown_ms:.0} ms |");
    println!("| ERROR push, plain (median) | {plain} ns |");
    println!(
        "| ERROR push, write-through (median) | {through} ns ({:.0}x) |",
        through as f64 / plain as f64
    );
    println!(
        "| ERROR push, write-through + fsync (median) | {fsynced} ns ({:.0}x) |",
        fsynced as f64 / plain as f64
    );
    println!(
        "{{\"idle_wakeups_per_s\":{idle_wakeups:.1},\"idle_ticks_per_s\":{idle_ticks:.2},\"stalled_wakeups_per_s\":{stalled_wakeups:.1},\"stalled_ticks_per_s\":{stalled_ticks:.2},\"stalled_shutdown_ms\":{stalled_shutdown_ms:.0},\"push_ns\":{plain},\"write_through_ns\":{through},\"write_through_fsync_ns\":{fsynced}}}"
    );
}
