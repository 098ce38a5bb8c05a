//! What it models: a request thread's push latency (p50, p99, p99.9) while
//! the writer thread rotates a rolling file every 64 KiB (many rotations,
//! with and without gzip), against the same file sink that never rotates.
//! Rotation happens on the writer thread between batches; this shows
//! whether a request thread ever pays for it.
//!
//! Each push is timed alone with the TSC (`quanta`), one push per
//! microsecond; files go to a temp dir. The three cases run interleaved
//! in rounds; the table shows medians over rounds and a run that dropped
//! anything is reported (the timed pushes must be real ones). Results:
//! the table and `benches/results/rolling.json`.
//!
//! Run: `taskset -c 0,1 cargo bench -p nowait-benches --bench rolling`.

use std::time::Duration;

use nowait::format::Plain;
use nowait::sink::Rolling;
use nowait::{Builder, FullPolicy, Level, Logger, Sink};

const CALLS: usize = 200_000;
const WARMUP: usize = 20_000;

fn measure(clock: &quanta::Clock, logger: &Logger) -> (f64, f64, f64) {
    let line = "GET /api/v1/items/12345 200 41us user=alice request_id=7f3c9a";
    let mut samples = Vec::with_capacity(CALLS);
    let spacing = clock.now();
    let mut next = spacing;
    for i in 0..WARMUP + CALLS {
        // One call per microsecond (1M records/s, ~60 MB/s, a rotation
        // about every millisecond): the writer keeps up, so every timed
        // push is a real one and not the drop path.
        next += Duration::from_micros(1);
        while clock.now() < next {
            std::hint::spin_loop();
        }
        let start = clock.raw();
        let _ = logger.log(Level::Info, line);
        let end = clock.raw();
        if i >= WARMUP {
            samples.push(clock.delta_as_nanos(start, end) as f64);
        }
    }
    samples.sort_by(f64::total_cmp);
    let q = |p: f64| samples[((CALLS as f64 - 1.0) * p) as usize];
    (q(0.5), q(0.99), q(0.999))
}

/// One configuration: a file sink that never rotates, or a rolling one.
#[derive(Clone, Copy)]
struct Case {
    name: &'static str,
    rolling: bool,
    gzip: bool,
}

const CASES: [Case; 3] = [
    Case {
        name: "file (no rotation)",
        rolling: false,
        gzip: false,
    },
    Case {
        name: "rolling 64 KiB",
        rolling: true,
        gzip: false,
    },
    Case {
        name: "rolling 64 KiB + gzip",
        rolling: true,
        gzip: true,
    },
];

/// Rounds; each round runs every case once (A B C A B C ...), so drift on
/// the machine hits every case alike. The table shows medians.
const ROUNDS: usize = 5;

/// One run: (p50, p99, p99.9), rotations, dropped.
type RunResult = ((f64, f64, f64), u64, u64);

fn run(clock: &quanta::Clock, case: Case) -> RunResult {
    let dir = tempfile::tempdir().unwrap();
    let sink = if case.rolling {
        Sink::rolling(
            Rolling::never(dir.path(), "app.log")
                .max_size(64 << 10)
                .max_log_files(20)
                .compress(case.gzip),
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
    let q = measure(clock, &logger);
    drop(guard);
    let s = logger.stats();
    (q, s.sinks[0].rotations, s.dropped())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let clock = quanta::Clock::new();
    let mut results: Vec<Vec<RunResult>> = vec![Vec::new(); CASES.len()];
    for round in 0..ROUNDS {
        for (i, case) in CASES.iter().enumerate() {
            results[i].push(run(&clock, *case));
        }
        eprintln!("round {}/{ROUNDS} done", round + 1);
    }
    println!(
        "{:<24} {:>8} {:>8} {:>9} {:>10} {:>8}  (medians of {ROUNDS} interleaved rounds)",
        "sink", "p50 ns", "p99 ns", "p99.9 ns", "rotations", "dropped"
    );
    let mut json = Vec::new();
    for (case, runs) in CASES.iter().zip(&results) {
        let p50 = median(runs.iter().map(|r| r.0 .0).collect());
        let p99 = median(runs.iter().map(|r| r.0 .1).collect());
        let p999 = median(runs.iter().map(|r| r.0 .2).collect());
        let rotations = runs.iter().map(|r| r.1).min().unwrap_or(0);
        let dropped = runs.iter().map(|r| r.2).max().unwrap_or(0);
        println!(
            "{:<24} {p50:>8.0} {p99:>8.0} {p999:>9.0} {rotations:>10} {dropped:>8}",
            case.name
        );
        let raw: Vec<String> = runs
            .iter()
            .map(|r| {
                format!(
                    "[{:.1},{:.1},{:.1},{},{}]",
                    r.0 .0, r.0 .1, r.0 .2, r.1, r.2
                )
            })
            .collect();
        json.push(format!(
            "{{\"sink\":\"{}\",\"p50_ns\":{p50:.1},\"p99_ns\":{p99:.1},\"p999_ns\":{p999:.1},\"runs_p50_p99_p999_rotations_dropped\":[{}]}}",
            case.name,
            raw.join(",")
        ));
    }
    let out = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("results/rolling.json");
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    std::fs::write(
        &out,
        format!(
            "{{\"calls_per_run\":{CALLS},\"rounds\":{ROUNDS},\"cases\":[{}]}}\n",
            json.join(",")
        ),
    )
    .unwrap();
    println!("JSON: {}", out.display());
}
