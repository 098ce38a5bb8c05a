//! Latency at real request rates, the span path, and end-to-end throughput
//! of nowait against its peers, checked against the project's latency and
//! throughput goals (see `report.rs`).
//!
//! # Run
//!
//! ```text
//! cargo bench -p nowait-benches --bench latency_load             # ~3.5 min
//! cargo bench -p nowait-benches --bench latency_load -- --quick  # ~25 s, smoke test only
//! ```
//!
//! Options after `--`: `--quick` (or `NOWAIT_BENCH_QUICK=1`) divides every
//! sample count by about 20 — its numbers are not results, and it writes
//! `benches/results/latency-quick.json` instead; `--only SUBSTR[,SUBSTR...]`
//! runs the cases whose id (`lat/ftlog`, `tput/nowait-layer/2`, ...)
//! contains one of them; `--durable DIR` builds nowait's loggers with
//! `Builder::crash_durable` on a file in DIR (its cost: see
//! `benches/durable_ab.py`); `--sink null` discards bytes instead of writing a file;
//! `--out PATH` writes the JSON elsewhere; `NOWAIT_BENCH_SPACINGS=q20x2ms,b2b`
//! times only those spacings in the latency cases (`NOWAIT_BENCH_BATCHES=N`: N
//! batches of quill's method instead of 10,000); `NOWAIT_BENCH_LANES=COUNT[,BYTES]`
//! , `NOWAIT_BENCH_CAPACITY=BYTES`, `NOWAIT_BENCH_INTERVAL_MS=MS` and
//! `NOWAIT_BENCH_WRITER_CPU=CPU` set nowait's per-thread lanes, ring
//! capacity, flush interval and writer CPU (default: no lanes, 1 MiB, 3 ms,
//! not pinned); `--dry-run` lists the cases
//! and their expected durations without running them. `NOWAIT_BENCH_DIR` chooses where
//! the temporary log files go (default: the system temp dir, which must be
//! a real disk or tmpfs, not a network file system). The expected duration
//! is printed before the first case.
//!
//! Pinning: each case runs in its own child process started as
//! `taskset -c 0,1 <this binary> --child ...` (`NOWAIT_BENCH_CPUS` sets the
//! CPU list; `none` turns pinning off). Producer threads, the logger's
//! background thread and nothing else share those two CPUs; run it on a
//! quiet machine. With two producer threads that spin (1 µs, 10 µs) the
//! logger's thread has no CPU of its own on two CPUs, as on a loaded
//! 2-core server; on a bigger machine `NOWAIT_BENCH_CPUS=0-2` gives it one.
//!
//! # What it models
//!
//! A request thread that logs one line (a message, a `u64`, a `&str` and
//! an `f64` — [`nowait_benches::request`]) per request, into a file in a
//! temporary directory (the issue measures against a file sink). Every
//! logger is set up as a service would set it up: the process-global
//! logger of its front end; that is why every case is its own process,
//! which also makes peak RSS per logger.
//!
//! 1. **Spaced latency** (`lat/<front>`): each call is timed alone with the
//!    TSC (`quanta`), net of the timer's own cost (the median of an empty
//!    timed region, measured in the same process and printed beside).
//!    Calls come back to back (bursts of 1000, then a 1 ms sleep and 10
//!    untimed calls, so that no "first call after a pause" is timed), or
//!    spaced 1 µs and 10 µs apart (spinning on the TSC: the thread never
//!    sleeps), or 100 µs and 1 ms apart (`thread::sleep`: the thread really
//!    sleeps, so caches and branch predictors cool down; the real period,
//!    longer by the timer slack, is reported). One producer thread, then
//!    two that time their own calls at the same spacing, samples merged.
//!    Then "first call after idle": one call after 50 ms of silence and
//!    one after 150 ms, interleaved, p50 over 40 trials each.
//! 2. **Span case** (`span/<stack>`): tower-http's TraceLayer shape — an
//!    INFO span `request` with `method`, `uri`, `version`, entered for the
//!    request, two INFO events inside, then exit and close — one request
//!    every 10 µs (spinning), each part timed: span lifecycle
//!    (new + enter + exit + close) and each event. `Registry` +
//!    `EnvFilter("info")` alone is the baseline the others add to.
//! 3. **End-to-end throughput** (`tput/<front>/<threads>`): 2M records
//!    from 1 or 2 threads as fast as they go, in each logger's lossless
//!    mode; the clock stops when the guard drop / final flush returns. The
//!    lines in the file are counted afterwards; a logger without a lossless
//!    mode reports its drop share. **Paced** (`paced/<front>/<rate>`): one
//!    thread at 50k and 500k records/s for 1 s; bytes per `write()` is the
//!    delta of `wchar` over the delta of `syscw` in `/proc/self/io`, the
//!    write-family syscalls of the whole process (the child writes nothing
//!    else until it prints its result). Peak RSS is `VmHWM`
//!    (= `ru_maxrss`) of the child at the end.
//!
//! Output: tables on stdout, then the goals with met / missed by how much,
//! and `benches/results/latency.json` with machine, rustc, commit and date.

mod fronts;
mod measure;
mod report;

use std::process::Command;
use std::sync::Barrier;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use fronts::{Front, Job, Out, Stack, Teardown};
use measure::{round1, Io, Quantiles, Spacing, Timer};

/// Sample counts: the full run, or the quick smoke run (about 1/20).
#[derive(Clone, Copy, Debug)]
struct Scale {
    quick: bool,
}

impl Scale {
    fn from_env() -> Scale {
        Scale {
            quick: std::env::var_os("NOWAIT_BENCH_QUICK").is_some_and(|v| v != "0"),
        }
    }

    fn div(self, n: usize) -> usize {
        if self.quick {
            (n / 20).max(20)
        } else {
            n
        }
    }

    /// Timed calls (over all threads) at `spacing`; batches for
    /// [`Spacing::Batch`], `NOWAIT_BENCH_BATCHES` of them if set.
    fn spaced_n(self, spacing: Spacing) -> usize {
        if spacing == Spacing::Batch {
            if let Some(n) = std::env::var("NOWAIT_BENCH_BATCHES")
                .ok()
                .and_then(|v| v.parse().ok())
            {
                return n;
            }
        }
        self.div(match spacing {
            Spacing::BackToBack | Spacing::Spin(1_000) => 200_000,
            Spacing::Spin(_) => 100_000,
            Spacing::Sleep(ns) if ns < 1_000_000 => 20_000,
            Spacing::Sleep(_) => 3_000,
            // Batches of 20, as quill's 10,000 (about 21 s on one thread).
            Spacing::Batch => 10_000,
        })
    }

    fn idle_trials(self) -> usize {
        if self.quick {
            3
        } else {
            40
        }
    }

    fn span_requests(self) -> usize {
        self.div(50_000)
    }

    fn tput_records(self) -> usize {
        self.div(2_000_000)
    }

    fn paced_for(self) -> Duration {
        if self.quick {
            Duration::from_millis(150)
        } else {
            Duration::from_secs(1)
        }
    }
}

/// The spacings of the latency runs.
const SPACINGS: [Spacing; 6] = [
    Spacing::Batch,
    Spacing::BackToBack,
    Spacing::Spin(1_000),
    Spacing::Spin(10_000),
    Spacing::Sleep(100_000),
    Spacing::Sleep(1_000_000),
];

/// Front ends timed per call.
const LAT_FRONTS: [Front; 12] = [
    Front::MacroDrop,
    Front::MacroBlock,
    Front::DebugKept,
    Front::DebugOff,
    Front::Layer,
    Front::TracingFloor,
    Front::Log,
    Front::Appender,
    Front::Slog,
    Front::Ftlog,
    Front::FastLog,
    Front::Ticklog,
];

/// Front ends also timed on the first call after idle.
const IDLE_FRONTS: [Front; 3] = [Front::MacroDrop, Front::Layer, Front::Appender];

/// Front ends of the throughput and paced runs (`MacroDrop` is left out:
/// these runs are lossless, and `MacroBlock` is the same call).
const TPUT_FRONTS: [Front; 9] = [
    Front::None,
    Front::MacroBlock,
    Front::Layer,
    Front::Log,
    Front::Appender,
    Front::Slog,
    Front::Ftlog,
    Front::FastLog,
    Front::Ticklog,
];

const PACED_RATES: [u64; 2] = [50_000, 500_000];

/// `ticklog::info!` of request `i`: the same message and three values as
/// the other front ends. At the crate root because ticklog's `configure!`
/// defines the macros its `info!` calls there (`#[macro_export]` from an
/// expansion), where only code of the root module finds them by name.
#[inline]
fn ticklog_request(i: u64) {
    let r = nowait_benches::request(i);
    ticklog::info!(
        "served path={} status={} latency_us={}",
        r.path,
        r.status,
        r.latency_us
    );
}

// === child jobs ===

struct LatJob<'a> {
    timer: &'a Timer,
    scale: Scale,
    idle: bool,
}

impl Job for LatJob<'_> {
    fn run<F: Fn(u64) + Sync>(&self, call: &F, teardown: Teardown<'_>) -> Value {
        let timer = self.timer;
        let mut rows = Vec::new();
        let mut calls = 0;
        let only = std::env::var("NOWAIT_BENCH_SPACINGS").ok();
        let chosen = |s: Spacing| {
            only.as_deref()
                .is_none_or(|list| list.split(',').any(|l| l == s.label()))
        };
        for threads in [1, 2] {
            for spacing in SPACINGS.into_iter().filter(|&s| chosen(s)) {
                let n = self.scale.spaced_n(spacing);
                let (samples, period, made) = measure::spaced(timer, threads, spacing, n, call);
                calls += made;
                let overhead = if spacing == Spacing::Batch {
                    timer.p50 / measure::BATCH as f64
                } else {
                    timer.p50
                };
                let windows = window_p50s(&samples, threads, overhead);
                let extra = measure::take_batch_extra();
                let mut row = Quantiles::of(samples, overhead).to_json();
                if spacing == Spacing::Batch {
                    let steady: Vec<f64> = extra.iter().flat_map(|x| x.steady.clone()).collect();
                    row["steady_p50_ns"] = json!(round1(Quantiles::of(steady, 0.0).p50));
                    row["cpus"] = json!(extra.iter().map(|x| x.cpu).collect::<Vec<_>>());
                    row["tsc_ns_per_1e9_ticks"] = json!(timer.ns(0, 1_000_000_000));
                }
                if let Some(w) = windows {
                    row["window_p50_ns"] = json!(w);
                }
                row["threads"] = json!(threads);
                row["spacing"] = json!(spacing.label());
                row["how"] = json!(spacing.how());
                row["period_ns"] = json!(round1(period));
                rows.push(row);
            }
        }
        let idle = if self.idle {
            let (short, long) = measure::idle(timer, self.scale.idle_trials(), call);
            calls += measure::idle_calls(self.scale.idle_trials());
            json!({
                "after_50ms": Quantiles::of(short, timer.p50).to_json(),
                "after_150ms": Quantiles::of(long, timer.p50).to_json(),
            })
        } else {
            Value::Null
        };
        let dropped = teardown();
        json!({"spaced": rows, "idle": idle, "records": calls, "dropped": dropped})
    }
}

/// With `NOWAIT_BENCH_WINDOW=W` and one thread: the p50 of each run of
/// `W` consecutive samples, in time order (does a process change mode
/// while it runs?).
fn window_p50s(samples: &[f64], threads: usize, overhead: f64) -> Option<Vec<f64>> {
    let w: usize = std::env::var("NOWAIT_BENCH_WINDOW").ok()?.parse().ok()?;
    if threads != 1 || w == 0 {
        return None;
    }
    Some(
        samples
            .chunks(w)
            .map(|c| round1(Quantiles::of(c.to_vec(), overhead).p50))
            .collect(),
    )
}

struct TputJob {
    threads: usize,
    records: usize,
}

impl Job for TputJob {
    fn run<F: Fn(u64) + Sync>(&self, call: &F, teardown: Teardown<'_>) -> Value {
        let per = self.records / self.threads;
        let barrier = Barrier::new(self.threads + 1);
        let io0 = Io::now();
        let start = thread::scope(|s| {
            for t in 0..self.threads {
                let barrier = &barrier;
                s.spawn(move || {
                    barrier.wait();
                    let base = (t as u64) << 40;
                    for k in 0..per as u64 {
                        call(base + k);
                    }
                });
            }
            barrier.wait();
            Instant::now()
        });
        let produced = start.elapsed();
        let dropped = teardown();
        let elapsed = start.elapsed();
        let io1 = Io::now();
        let records = per * self.threads;
        json!({
            "threads": self.threads,
            "records": records,
            "produce_s": produced.as_secs_f64(),
            "elapsed_s": elapsed.as_secs_f64(),
            "records_per_s": (records as f64 / elapsed.as_secs_f64()).round(),
            "dropped": dropped,
            "io": io_delta(io0, io1),
        })
    }
}

struct PacedJob<'a> {
    timer: &'a Timer,
    rate: u64,
    duration: Duration,
}

impl Job for PacedJob<'_> {
    fn run<F: Fn(u64) + Sync>(&self, call: &F, teardown: Teardown<'_>) -> Value {
        let io0 = Io::now();
        let calls = measure::paced(self.timer, self.rate, self.duration, call);
        let dropped = teardown();
        let io1 = Io::now();
        json!({
            "rate": self.rate,
            "records": calls,
            "achieved_per_s": (calls as f64 / self.duration.as_secs_f64()).round(),
            "dropped": dropped,
            "io": io_delta(io0, io1),
        })
    }
}

fn io_delta(a: Option<Io>, b: Option<Io>) -> Value {
    match (a, b) {
        (Some(a), Some(b)) => {
            let writes = b.syscw - a.syscw;
            let bytes = b.wchar - a.wchar;
            json!({
                "writes": writes,
                "bytes": bytes,
                "bytes_per_write": if writes > 0 { Some((bytes as f64 / writes as f64).round()) } else { None },
            })
        }
        _ => Value::Null,
    }
}

/// Version of the HTTP request, printed as tower-http's `?request.version()`.
struct Http11;

impl std::fmt::Debug for Http11 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HTTP/1.1")
    }
}

/// One request of the span case; returns the five timestamps around its
/// parts.
#[inline]
fn span_request(timer: &Timer, i: u64) -> [u64; 5] {
    let r = nowait_benches::request(i);
    let t0 = timer.raw();
    let span = tracing::info_span!("request", method = %"GET", uri = %r.path, version = ?Http11);
    let entered = span.enter();
    let t1 = timer.raw();
    tracing::info!("started processing request");
    let t2 = timer.raw();
    tracing::info!(
        latency_us = r.latency_us,
        status = r.status,
        "finished processing request"
    );
    let t3 = timer.raw();
    drop(entered);
    drop(span);
    let t4 = timer.raw();
    [t0, t1, t2, t3, t4]
}

fn span_run(timer: &Timer, n: usize, teardown: Teardown<'_>) -> Value {
    let warmup = (n / 10).max(10);
    let mut stamps = Vec::with_capacity(n);
    let mut next = timer.now();
    for k in 0..(warmup + n) {
        timer.spin_until(next);
        next = timer.now().max(next) + Duration::from_micros(10);
        let t = span_request(timer, k as u64);
        if k >= warmup {
            stamps.push(t);
        }
    }
    let dropped = teardown();
    let o = timer.p50;
    let part = |a: usize, b: usize| {
        stamps
            .iter()
            .map(|t| timer.ns(t[a], t[b]))
            .collect::<Vec<_>>()
    };
    let open = part(0, 1);
    let close = part(3, 4);
    let life: Vec<f64> = open.iter().zip(&close).map(|(a, b)| a + b).collect();
    let (plain, fields) = (part(1, 2), part(2, 3));
    let events: Vec<f64> = plain.iter().chain(&fields).copied().collect();
    json!({
        "requests": n,
        "spacing": "10us spin",
        "span_lifecycle": Quantiles::of(life, 2.0 * o).to_json(),
        "span_new_enter": Quantiles::of(open, o).to_json(),
        "span_exit_close": Quantiles::of(close, o).to_json(),
        "event": Quantiles::of(events, o).to_json(),
        "event_plain": Quantiles::of(plain, o).to_json(),
        "event_2_fields": Quantiles::of(fields, o).to_json(),
        "dropped": dropped,
    })
}

/// Runs one case in this (child) process and prints its result as one
/// `@@RESULT {json}` line.
fn child(args: &[String]) {
    let scale = Scale::from_env();
    let kind = args.first().map(String::as_str).unwrap_or("");
    let name = args.get(1).map(String::as_str).unwrap_or("");
    let param = args.get(2).map(String::as_str).unwrap_or("-");
    let dir = match std::env::var_os("NOWAIT_BENCH_DIR") {
        Some(d) => tempfile::tempdir_in(d),
        None => tempfile::tempdir(),
    }
    .expect("a temporary directory");
    let out = if std::env::var("NOWAIT_BENCH_SINK").as_deref() == Ok("null") {
        Out::Null
    } else {
        Out::File(dir.path().join("bench.log"))
    };
    let timer = Timer::new();
    let front = || Front::parse(name).unwrap_or_else(|| panic!("unknown front end {name:?}"));
    let mut result = match kind {
        "lat" => {
            let front = front();
            let job = LatJob {
                timer: &timer,
                scale,
                idle: param == "idle",
            };
            let mut v = fronts::drive(front, &out, false, &job);
            v["setup"] = json!(front.setup(false));
            v
        }
        "span" => {
            let stack = Stack::parse(name).unwrap_or_else(|| panic!("unknown stack {name:?}"));
            fronts::drive_stack(stack, &out, |teardown| {
                span_run(&timer, scale.span_requests(), teardown)
            })
        }
        "tput" => {
            let front = front();
            let job = TputJob {
                threads: param.parse().expect("thread count"),
                records: scale.tput_records(),
            };
            let mut v = fronts::drive(front, &out, true, &job);
            v["setup"] = json!(front.setup(true));
            v
        }
        "paced" => {
            let front = front();
            let job = PacedJob {
                timer: &timer,
                rate: param.parse().expect("records per second"),
                duration: scale.paced_for(),
            };
            let mut v = fronts::drive(front, &out, true, &job);
            v["setup"] = json!(front.setup(true));
            v
        }
        _ => panic!("unknown case kind {kind:?}"),
    };
    result["kind"] = json!(kind);
    result["name"] = json!(name);
    result["param"] = json!(param);
    result["timer"] = json!({"p50_ns": round1(timer.p50), "p999_ns": round1(timer.p999)});
    result["lines"] = json!(out.lines());
    result["file_bytes"] = json!(out.bytes());
    result["peak_rss_kib"] = json!(measure::peak_rss_kib());
    println!("@@RESULT {result}");
}

// === parent ===

/// One child process to run.
struct Case {
    kind: &'static str,
    name: &'static str,
    param: String,
    /// Expected seconds, for the up-front estimate.
    est: f64,
}

impl Case {
    fn id(&self) -> String {
        match self.param.as_str() {
            "-" | "idle" => format!("{}/{}", self.kind, self.name),
            p => format!("{}/{}/{}", self.kind, self.name, p),
        }
    }
}

fn cases(scale: Scale) -> Vec<Case> {
    let mut cases = Vec::new();
    // Rough wall time of one latency child: periods times sample counts.
    let lat_est: f64 = [1.0, 0.5]
        .iter()
        .map(|share| {
            SPACINGS
                .iter()
                .map(|&s| {
                    let n = scale.spaced_n(s) as f64 * share * 1.1;
                    n * match s {
                        Spacing::BackToBack => 1.1e-6,
                        Spacing::Spin(ns) => ns as f64 * 1e-9 + 0.3e-6,
                        Spacing::Sleep(ns) => ns as f64 * 1e-9 + 60e-6,
                        Spacing::Batch => 2.1e-3,
                    }
                })
                .sum::<f64>()
        })
        .sum::<f64>()
        + 0.1;
    for f in LAT_FRONTS {
        let idle = IDLE_FRONTS.contains(&f);
        cases.push(Case {
            kind: "lat",
            name: f.name(),
            param: if idle { "idle" } else { "-" }.into(),
            est: lat_est
                + if idle {
                    scale.idle_trials() as f64 * 0.2
                } else {
                    0.0
                },
        });
    }
    for s in fronts::STACKS {
        cases.push(Case {
            kind: "span",
            name: s.name(),
            param: "-".into(),
            est: scale.span_requests() as f64 * 1.1 * 11e-6 + 0.1,
        });
    }
    for f in TPUT_FRONTS {
        for threads in [1, 2] {
            let per_record = if f.is_nowait() || f == Front::None {
                0.2e-6
            } else {
                1.0e-6
            };
            cases.push(Case {
                kind: "tput",
                name: f.name(),
                param: threads.to_string(),
                est: scale.tput_records() as f64 * per_record + 0.1,
            });
        }
    }
    for f in TPUT_FRONTS {
        for rate in PACED_RATES {
            cases.push(Case {
                kind: "paced",
                name: f.name(),
                param: rate.to_string(),
                est: scale.paced_for().as_secs_f64() + 0.1,
            });
        }
    }
    cases
}

/// Runs `case` in a child process (pinned with taskset unless told not
/// to) and returns its result, or an `error` object.
fn run_child(case: &Case, cpus: Option<&str>) -> Value {
    let exe = std::env::current_exe().expect("own executable");
    let mut cmd = match cpus {
        Some(c) => {
            let mut cmd = Command::new("taskset");
            cmd.arg("-c").arg(c).arg(&exe);
            cmd
        }
        None => Command::new(&exe),
    };
    cmd.args(["--child", case.kind, case.name, &case.param]);
    let output = match cmd.output() {
        Ok(o) => o,
        Err(e) => return json!({"id": case.id(), "error": format!("cannot start: {e}")}),
    };
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let found = stdout
        .lines()
        .find_map(|l| l.strip_prefix("@@RESULT "))
        .and_then(|j| serde_json::from_str::<Value>(j).ok());
    match found {
        Some(mut v) if output.status.success() => {
            v["id"] = json!(case.id());
            if !stderr.trim().is_empty() {
                v["stderr"] = json!(tail(&stderr));
            }
            v
        }
        _ => json!({
            "id": case.id(),
            "error": format!("child failed ({}): {}", output.status, tail(&stderr)),
        }),
    }
}

/// The last 400 characters of `s`.
fn tail(s: &str) -> String {
    let s = s.trim();
    let cut = s.len().saturating_sub(400);
    let cut = (cut..=s.len())
        .find(|&i| s.is_char_boundary(i))
        .unwrap_or(0);
    s[cut..].to_owned()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.iter().any(|a| a == "--list" || a == "--test") {
        return; // `cargo test --benches` / `cargo bench --no-run` probes.
    }
    if cfg!(debug_assertions) && !args.iter().any(|a| a == "--child" || a == "--force") {
        // `cargo test --all-targets` runs bench targets unoptimised and
        // with no arguments: timing that is meaningless and takes minutes.
        eprintln!("latency_load: debug build, nothing run (use `cargo bench`, or --force)");
        return;
    }
    if let Some(pos) = args.iter().position(|a| a == "--child") {
        child(&args[pos + 1..]);
        return;
    }
    let value_of = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|p| args.get(p + 1))
            .cloned()
    };
    if args.iter().any(|a| a == "--quick") {
        std::env::set_var("NOWAIT_BENCH_QUICK", "1");
    }
    if let Some(dir) = value_of("--durable") {
        std::env::set_var("NOWAIT_BENCH_DURABLE", dir);
    }
    if let Some(sink) = value_of("--sink") {
        std::env::set_var("NOWAIT_BENCH_SINK", sink);
    }
    let scale = Scale::from_env();
    let only = value_of("--only");
    let cpus = std::env::var("NOWAIT_BENCH_CPUS").unwrap_or_else(|_| "0,1".into());
    let taskset_ok = Command::new("taskset").arg("-V").output().is_ok();
    let cpus = (cpus != "none" && taskset_ok).then_some(cpus);
    if cpus.is_none() {
        eprintln!("note: children not pinned (taskset missing or NOWAIT_BENCH_CPUS=none)");
    }
    let cases: Vec<Case> = cases(scale)
        .into_iter()
        .filter(|c| match only.as_deref() {
            Some(o) => o.split(',').any(|o| c.id().contains(o)),
            None => true,
        })
        .collect();
    let total: f64 = cases.iter().map(|c| c.est).sum();
    eprintln!(
        "latency_load: {} cases, about {}:{:02} (m:ss){}; sink: {}; cpus: {}",
        cases.len(),
        total as u64 / 60,
        total as u64 % 60,
        if scale.quick {
            ", QUICK mode: numbers are not results"
        } else {
            ""
        },
        std::env::var("NOWAIT_BENCH_SINK").unwrap_or_else(|_| "file".into()),
        cpus.as_deref().unwrap_or("unpinned"),
    );
    if args.iter().any(|a| a == "--dry-run") {
        for case in &cases {
            println!("{:<34} about {:>5.1} s", case.id(), case.est);
        }
        return;
    }
    let started = Instant::now();
    let mut results = Vec::new();
    let mut left = total;
    for case in &cases {
        eprintln!("  {:<34} (about {:>3.0} s left)", case.id(), left);
        let t = Instant::now();
        let mut v = run_child(case, cpus.as_deref());
        v["wall_s"] = json!(round1(t.elapsed().as_secs_f64()));
        if let Some(e) = v.get("error") {
            eprintln!("    FAILED: {e}");
        }
        results.push(v);
        left -= case.est;
    }
    eprintln!("done in {:.0} s", started.elapsed().as_secs_f64());
    let doc = report::report(&results, scale.quick, cpus.as_deref());
    let default = if scale.quick {
        "results/latency-quick.json"
    } else {
        "results/latency.json"
    };
    let path =
        value_of("--out").unwrap_or_else(|| format!("{}/{default}", env!("CARGO_MANIFEST_DIR")));
    if let Some(parent) = std::path::Path::new(&path).parent() {
        let _ = std::fs::create_dir_all(parent);
    }
    match std::fs::write(
        &path,
        serde_json::to_string_pretty(&doc).expect("json") + "\n",
    ) {
        Ok(()) => println!("\nwrote {path}"),
        Err(e) => eprintln!("cannot write {path}: {e}"),
    }
}
