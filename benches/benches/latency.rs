//! What it models: the distribution of the time one logging call takes on
//! a request thread (p50, p99, p99.9), which criterion's means hide. The
//! writer thread (or the peer's worker) drains into a null sink.
//!
//! Each call is timed alone with the TSC (`quanta`); the median cost of an
//! empty timed region is measured in the same run and subtracted. Results:
//! a table on stdout and `benches/latency.json`.
//!
//! Run: `cargo bench -p nowait-benches --bench latency` (pin it for stable
//! numbers: `taskset -c 0 cargo bench ...` leaves the writer thread on the
//! other CPU only if you pin the process to both; see the README).

use std::hint::black_box;
use std::time::Duration;

use nowait_benches::{macro_request, null_logger, request, tracing_request};
use tracing_subscriber::prelude::*;

const CALLS: usize = 200_000;
const WARMUP: usize = 20_000;

struct Row {
    name: &'static str,
    p50: f64,
    p99: f64,
    p999: f64,
}

fn measure(clock: &quanta::Clock, overhead: f64, mut call: impl FnMut(u64)) -> (f64, f64, f64) {
    for i in 0..WARMUP {
        call(i as u64);
    }
    let mut samples = Vec::with_capacity(CALLS);
    for i in 0..CALLS {
        let start = clock.raw();
        call(i as u64);
        let end = clock.raw();
        samples.push(clock.delta_as_nanos(start, end) as f64);
        if i % 4096 == 4095 {
            // Let the writer keep up without this thread outrunning a
            // realistic request rate by orders of magnitude.
            std::thread::sleep(Duration::from_micros(200));
        }
    }
    samples.sort_by(f64::total_cmp);
    let q = |p: f64| (samples[((CALLS as f64 - 1.0) * p) as usize] - overhead).max(0.0);
    (q(0.5), q(0.99), q(0.999))
}

/// [`measure`] of the shared `tracing` call with `subscriber` as the default.
fn measure_tracing(
    clock: &quanta::Clock,
    overhead: f64,
    subscriber: impl tracing::Subscriber + Send + Sync + 'static,
) -> (f64, f64, f64) {
    let _default = tracing::subscriber::set_default(subscriber);
    measure(clock, overhead, tracing_request)
}

fn main() {
    if std::env::args().any(|a| a == "--list" || a == "--test") {
        return; // `cargo test --benches` / `cargo bench --no-run` probes.
    }
    if cfg!(debug_assertions) {
        // `cargo test --all-targets` runs bench targets unoptimised and
        // with no arguments: nothing worth timing.
        eprintln!("latency: debug build, nothing run (use `cargo bench`)");
        return;
    }
    let clock = quanta::Clock::new();
    let (overhead, _, _) = measure(&clock, 0.0, |i| {
        black_box(i);
    });
    let mut rows = Vec::new();
    let mut add = |name, (p50, p99, p999)| {
        rows.push(Row {
            name,
            p50,
            p99,
            p999,
        })
    };

    // nowait macros (global logger).
    let (macro_logger, _macro_guard) = null_logger();
    nowait::set_global(macro_logger.clone()).expect("first global logger");
    add(
        "nowait::info!(3 deferred args)",
        measure(&clock, overhead, |i| {
            let r = request(i);
            nowait::info!("served {} {} {}", r.path, r.status, r.latency_us);
        }),
    );
    add(
        "nowait::info!(3 fields)",
        measure(&clock, overhead, macro_request),
    );
    nowait::filter::set_max_level(nowait::Level::Warn);
    add(
        "nowait::info! disabled",
        measure(&clock, overhead, |i| {
            let r = request(i);
            nowait::info!("served {} {} {}", r.path, r.status, r.latency_us);
        }),
    );
    nowait::filter::set_max_level(nowait::Level::Trace);

    // The tracing layer, then peers on the same call.
    let (layer_logger, layer_guard) = null_logger();
    let sub = tracing_subscriber::registry().with(nowait::NowaitLayer::new(layer_logger.clone()));
    add(
        "tracing + NowaitLayer (3 fields)",
        measure_tracing(&clock, overhead, sub),
    );
    drop(layer_guard);

    let (writer, appender_guard) = tracing_appender::non_blocking(std::io::sink());
    let sub = tracing_subscriber::fmt()
        .with_writer(writer)
        .with_ansi(false)
        .finish();
    add(
        "tracing fmt + tracing-appender",
        measure_tracing(&clock, overhead, sub),
    );
    drop(appender_guard);

    let sub = tracing_subscriber::fmt()
        .with_writer(std::io::sink)
        .with_ansi(false)
        .finish();
    add(
        "tracing fmt (blocking, null writer)",
        measure_tracing(&clock, overhead, sub),
    );

    println!("timer overhead subtracted: {overhead:.1} ns; {CALLS} calls each");
    println!(
        "{:<38} {:>8} {:>8} {:>9}",
        "front end", "p50 ns", "p99 ns", "p99.9 ns"
    );
    for r in &rows {
        println!(
            "{:<38} {:>8.1} {:>8.1} {:>9.1}",
            r.name, r.p50, r.p99, r.p999
        );
    }
    let json: Vec<String> = rows
        .iter()
        .map(|r| {
            format!(
                "{{\"front_end\":{:?},\"p50_ns\":{:.1},\"p99_ns\":{:.1},\"p999_ns\":{:.1}}}",
                r.name, r.p50, r.p99, r.p999
            )
        })
        .collect();
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/latency.json");
    let body = format!(
        "{{\"calls\":{CALLS},\"timer_overhead_ns\":{overhead:.1},\"results\":[{}]}}\n",
        json.join(",")
    );
    if let Err(e) = std::fs::write(path, body) {
        eprintln!("cannot write {path}: {e}");
    }
    let s = macro_logger.stats();
    eprintln!(
        "macro logger: written {} dropped {}",
        s.records_written,
        s.dropped()
    );
}
