//! What it models: a request thread's push latency (p50, p99, p99.9) while
//! the writer thread rotates a rolling file every 64 KiB (many rotations,
//! with and without gzip), against the same file sink that never rotates.
//! Rotation happens on the writer thread between batches; this shows
//! whether a request thread ever pays for it.
//!
//! Each push is timed alone with the TSC (`quanta`); files go to a temp
//! dir. Run: `cargo bench -p nowait-benches --bench rolling`.

use std::time::Duration;

use nowait::{Builder, FullPolicy, Level, Logger, Plain, Rolling, Sink};

const CALLS: usize = 300_000;
const WARMUP: usize = 20_000;

fn measure(clock: &quanta::Clock, logger: &Logger) -> (f64, f64, f64) {
    let line = "GET /api/v1/items/12345 200 41us user=alice request_id=7f3c9a";
    for _ in 0..WARMUP {
        let _ = logger.log(Level::Info, line);
    }
    let mut samples = Vec::with_capacity(CALLS);
    for i in 0..CALLS {
        let start = clock.raw();
        let _ = logger.log(Level::Info, line);
        let end = clock.raw();
        samples.push(clock.delta_as_nanos(start, end) as f64);
        if i % 4096 == 4095 {
            std::thread::sleep(Duration::from_micros(200));
        }
    }
    samples.sort_by(f64::total_cmp);
    let q = |p: f64| samples[((CALLS as f64 - 1.0) * p) as usize];
    (q(0.5), q(0.99), q(0.999))
}

fn main() {
    let clock = quanta::Clock::new();
    println!(
        "{:<28} {:>9} {:>9} {:>9} {:>10}",
        "sink", "p50 ns", "p99 ns", "p99.9 ns", "rotations"
    );
    for (name, gzip, rolling) in [
        ("file (no rotation)", false, false),
        ("rolling 64 KiB", false, true),
        ("rolling 64 KiB + gzip", true, true),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let sink = if rolling {
            Sink::rolling(
                Rolling::never(dir.path(), "app.log")
                    .max_size(64 << 10)
                    .max_log_files(20)
                    .compress(gzip),
            )
        } else {
            Sink::file(dir.path().join("app.log"))
        };
        let (logger, guard) = Builder::new()
            .format(Plain)
            .full_policy(FullPolicy::Drop)
            .sink(sink)
            .build()
            .unwrap();
        let (p50, p99, p999) = measure(&clock, &logger);
        drop(guard);
        let s = logger.stats();
        println!(
            "{name:<28} {p50:>9.0} {p99:>9.0} {p999:>9.0} {:>10}  (dropped {})",
            s.sinks[0].rotations,
            s.dropped()
        );
    }
}
