//! Timing primitives of the child processes: the TSC clock, call spacing,
//! quantiles, and the process counters (`/proc/self/io`, `getrusage`).

use std::hint::black_box;
use std::sync::Barrier;
use std::thread;
use std::time::Duration;

use serde_json::{json, Value};

/// How calls are spaced on each producer thread.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Spacing {
    /// Bursts of [`BURST`] calls with nothing between them, then a 1 ms
    /// sleep so the logger's background thread catches up (a producer that
    /// outruns the consumer for good measures the full-queue policy, not
    /// the call), then [`BURST_REWARM`] untimed calls.
    BackToBack,
    /// Calls start every `ns` nanoseconds; the thread spins on the TSC in
    /// between (it never sleeps). A call that starts late does not make the
    /// next one early: deadlines slip instead of bunching.
    Spin(u64),
    /// `thread::sleep(ns)` between calls, so the thread really leaves the
    /// CPU. The real period is longer (timer slack, wake-up): the measured
    /// mean period is reported beside.
    Sleep(u64),
    /// quill's `hot_path_latency` method: [`BATCH`] calls timed together
    /// (one TSC read before, one after), the sample being the batch's time
    /// over [`BATCH`]; then a pause of 2.0 to 2.2 ms (spinning on the TSC,
    /// the length drawn from a fixed-seed generator), so each batch starts
    /// after the logger's thread went idle.
    Batch,
}

/// Calls per timed batch in [`Spacing::Batch`] (quill uses 20).
pub const BATCH: usize = 20;

/// Calls per burst in [`Spacing::BackToBack`].
pub const BURST: usize = 1000;

impl Spacing {
    /// The label used in tables and JSON (`b2b`, `1us`, `10us`, `100us`,
    /// `1ms`).
    pub fn label(self) -> String {
        match self {
            Spacing::BackToBack => "b2b".into(),
            Spacing::Batch => "q20x2ms".into(),
            Spacing::Spin(ns) | Spacing::Sleep(ns) => {
                if ns >= 1_000_000 {
                    format!("{}ms", ns / 1_000_000)
                } else {
                    format!("{}us", ns / 1_000)
                }
            }
        }
    }

    /// How the gap is made: `burst`, `spin` or `sleep`.
    pub fn how(self) -> &'static str {
        match self {
            Spacing::BackToBack => "burst",
            Spacing::Spin(_) => "spin",
            Spacing::Sleep(_) => "sleep",
            Spacing::Batch => "batch",
        }
    }
}

/// The clock every child uses, and the cost of one empty timed region.
pub struct Timer {
    clock: quanta::Clock,
    /// Median cost of an empty timed region (two raw reads), subtracted
    /// from every sample.
    pub p50: f64,
    /// 99.9th percentile of the empty timed region.
    pub p999: f64,
}

impl Timer {
    /// Calibrates the clock and measures its own cost over 200k empty
    /// regions.
    pub fn new() -> Timer {
        let clock = quanta::Clock::new();
        let mut samples = Vec::with_capacity(200_000);
        for i in 0..200_000u64 {
            let s = clock.raw();
            black_box(i);
            let e = clock.raw();
            samples.push(clock.delta_as_nanos(s, e) as f64);
        }
        samples.sort_by(f64::total_cmp);
        let q = Quantiles::of_sorted(&samples, 0.0);
        Timer {
            clock,
            p50: q.p50,
            p999: q.p999,
        }
    }

    /// A raw TSC reading.
    #[inline(always)]
    pub fn raw(&self) -> u64 {
        self.clock.raw()
    }

    /// Nanoseconds between two raw readings.
    #[inline(always)]
    pub fn ns(&self, start: u64, end: u64) -> f64 {
        self.clock.delta_as_nanos(start, end) as f64
    }

    /// Times `call(i)` once, in nanoseconds (gross: timer cost included).
    #[inline(always)]
    pub fn time(&self, i: u64, call: &impl Fn(u64)) -> f64 {
        let s = self.clock.raw();
        call(i);
        let e = self.clock.raw();
        self.ns(s, e)
    }

    /// Spins until `deadline` (raw units of [`quanta::Clock::now`]).
    #[inline]
    pub fn spin_until(&self, deadline: quanta::Instant) {
        while self.clock.now() < deadline {
            std::hint::spin_loop();
        }
    }

    /// The clock's current instant.
    pub fn now(&self) -> quanta::Instant {
        self.clock.now()
    }
}

/// p50 / p99 / p99.9 / max of a sample, net of the timer's cost.
#[derive(Clone, Copy, Debug, Default)]
pub struct Quantiles {
    pub n: usize,
    pub p50: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
}

impl Quantiles {
    /// Quantiles of `sorted` (ascending) minus `overhead`, floored at 0.
    pub fn of_sorted(sorted: &[f64], overhead: f64) -> Quantiles {
        if sorted.is_empty() {
            return Quantiles::default();
        }
        let q = |p: f64| {
            let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
            (sorted[idx] - overhead).max(0.0)
        };
        Quantiles {
            n: sorted.len(),
            p50: q(0.5),
            p99: q(0.99),
            p999: q(0.999),
            max: q(1.0),
        }
    }

    /// Sorts `samples` and takes [`Quantiles::of_sorted`].
    pub fn of(mut samples: Vec<f64>, overhead: f64) -> Quantiles {
        samples.sort_by(f64::total_cmp);
        Quantiles::of_sorted(&samples, overhead)
    }

    pub fn to_json(self) -> Value {
        json!({"n": self.n, "p50_ns": round1(self.p50), "p99_ns": round1(self.p99),
               "p999_ns": round1(self.p999), "max_ns": round1(self.max)})
    }
}

/// `x` rounded to one decimal, for JSON that reads well.
pub fn round1(x: f64) -> f64 {
    (x * 10.0).round() / 10.0
}

/// One producer thread's run: `n` timed calls (after `warmup` untimed ones
/// at the same spacing), numbered from `first`. Returns the gross samples,
/// the mean start-to-start period in ns, and the calls made in all.
fn spaced_thread(
    timer: &Timer,
    spacing: Spacing,
    first: u64,
    n: usize,
    warmup: usize,
    call: &impl Fn(u64),
) -> (Vec<f64>, f64, usize) {
    if spacing == Spacing::Batch {
        return batched_thread(timer, first, n, warmup, call);
    }
    let mut samples = Vec::with_capacity(n);
    let total = warmup + n;
    let mut extra = 0;
    let mut next = timer.now();
    let mut began = timer.now();
    for k in 0..total {
        if k == warmup {
            began = timer.now();
        }
        let i = first + k as u64;
        match spacing {
            Spacing::BackToBack => {
                if k % BURST == 0 && k > 0 {
                    thread::sleep(Duration::from_millis(1));
                    // The first calls after the pause are "after idle",
                    // one per burst: exactly the p99.9 of the burst. Make
                    // them untimed so back to back means back to back.
                    for j in 0..BURST_REWARM as u64 {
                        call(i | (1 << 39) | j);
                    }
                    extra += BURST_REWARM;
                }
            }
            Spacing::Spin(ns) => {
                timer.spin_until(next);
                // Slip rather than bunch: a late call does not make the
                // next one early.
                next = timer.now().max(next) + Duration::from_nanos(ns);
            }
            Spacing::Sleep(ns) => {
                if k > 0 {
                    thread::sleep(Duration::from_nanos(ns));
                }
            }
            Spacing::Batch => unreachable!("batches are timed by batched_thread"),
        }
        let t = timer.time(i, call);
        if k >= warmup {
            samples.push(t);
        }
    }
    let period = (timer.now() - began).as_nanos() as f64 / n.max(1) as f64;
    (samples, period, total + extra)
}

/// [`Spacing::Batch`] on one thread: `n` batches of [`BATCH`] calls (after
/// `warmup` untimed batches), each followed by a spin of 2.0 to 2.2 ms.
/// Returns the per-call samples (batch time over [`BATCH`], gross: one
/// timed region per batch, so the caller subtracts the timer's cost over
/// [`BATCH`]), the mean period per batch, and the calls made.
fn batched_thread(
    timer: &Timer,
    first: u64,
    n: usize,
    warmup: usize,
    call: &impl Fn(u64),
) -> (Vec<f64>, f64, usize) {
    let mut samples = Vec::with_capacity(n);
    let mut steady = Vec::with_capacity(n);
    // xorshift64 with a fixed seed per thread: the same pauses every run.
    let mut seed = 0x9E37_79B9_7F4A_7C15u64 ^ first;
    let mut began = timer.now();
    let mut i = first;
    for k in 0..warmup + n {
        if k == warmup {
            began = timer.now();
        }
        let outer = std::time::Instant::now();
        let s = timer.raw();
        for _ in 0..BATCH {
            call(i);
            i += 1;
        }
        let e = timer.raw();
        let outer = outer.elapsed();
        if k >= warmup {
            samples.push(timer.ns(s, e) / BATCH as f64);
            steady.push(outer.as_nanos() as f64 / BATCH as f64);
        }
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let pause = 2_000_000 + seed % 200_001;
        timer.spin_until(timer.now() + Duration::from_nanos(pause));
    }
    let period = (timer.now() - began).as_nanos() as f64 / n.max(1) as f64;
    BATCH_EXTRA
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(BatchExtra {
            steady,
            cpu: current_cpu(),
        });
    (samples, period, (warmup + n) * BATCH)
}

/// What a [`Spacing::Batch`] producer thread saw besides its TSC samples:
/// the same batches timed by the OS's steady clock around the TSC region
/// (a check on the TSC's calibration, which is made once per process), and
/// the CPU the thread ran its last batch on.
pub struct BatchExtra {
    /// Per batch, ns per call by `std::time::Instant` (gross).
    pub steady: Vec<f64>,
    /// The thread's CPU at the end (`sched_getcpu`), if known.
    pub cpu: Option<u32>,
}

/// Filled by each batch-spaced producer thread; taken by [`take_batch_extra`].
static BATCH_EXTRA: std::sync::Mutex<Vec<BatchExtra>> = std::sync::Mutex::new(Vec::new());

/// The [`BatchExtra`] of every batch-spaced thread since the last call.
pub fn take_batch_extra() -> Vec<BatchExtra> {
    std::mem::take(&mut *BATCH_EXTRA.lock().unwrap_or_else(|e| e.into_inner()))
}

/// The CPU the calling thread runs on, from `/proc/thread-self/stat`
/// (field 39), where there is one.
fn current_cpu() -> Option<u32> {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    let rest = stat.rsplit_once(')')?.1;
    // `rest` starts at field 3: field 39 is index 36.
    rest.split_whitespace().nth(36)?.parse().ok()
}

/// Untimed calls after each pause between bursts.
const BURST_REWARM: usize = 10;

/// Runs `threads` producer threads that each make `n / threads` timed calls
/// of `call` at `spacing`, started together, and merges their samples.
/// Returns the merged gross samples, the mean period per thread, and the
/// calls made in all (warm-up included).
pub fn spaced(
    timer: &Timer,
    threads: usize,
    spacing: Spacing,
    n: usize,
    call: &(impl Fn(u64) + Sync),
) -> (Vec<f64>, f64, usize) {
    let per = n / threads;
    let warmup = if spacing == Spacing::Batch {
        50
    } else {
        (per / 10).clamp(10, 2000)
    };
    let barrier = Barrier::new(threads);
    let results: Vec<(Vec<f64>, f64, usize)> = thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let barrier = &barrier;
                s.spawn(move || {
                    barrier.wait();
                    spaced_thread(timer, spacing, (t as u64) << 40, per, warmup, call)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("producer thread"))
            .collect()
    });
    let period = results.iter().map(|r| r.1).sum::<f64>() / threads as f64;
    let calls = results.iter().map(|r| r.2).sum();
    let samples = results.into_iter().flat_map(|r| r.0).collect();
    (samples, period, calls)
}

/// Calls [`idle`] makes in all (warm-up included).
pub fn idle_calls(trials: usize) -> usize {
    IDLE_WARMUP + 2 * trials
}

/// Untimed calls before the idle trials.
const IDLE_WARMUP: usize = 1000;

/// First call after silence: `trials` rounds, each sleeping 50 ms then
/// timing one call, then sleeping 150 ms and timing one call (interleaved so
/// that drift hits both alike). Returns the gross samples after 50 ms and
/// after 150 ms.
pub fn idle(timer: &Timer, trials: usize, call: &impl Fn(u64)) -> (Vec<f64>, Vec<f64>) {
    for i in 0..IDLE_WARMUP as u64 {
        call(i);
    }
    let (mut short, mut long) = (Vec::new(), Vec::new());
    for t in 0..trials as u64 {
        thread::sleep(Duration::from_millis(50));
        short.push(timer.time(2 * t, call));
        thread::sleep(Duration::from_millis(150));
        long.push(timer.time(2 * t + 1, call));
    }
    (short, long)
}

/// Write counters of the whole process from `/proc/self/io`: write-family
/// syscalls (`syscw`) and bytes passed to them (`wchar`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Io {
    pub syscw: u64,
    pub wchar: u64,
}

impl Io {
    /// Reads `/proc/self/io`; `None` if the kernel lacks task I/O
    /// accounting.
    pub fn now() -> Option<Io> {
        let text = std::fs::read_to_string("/proc/self/io").ok()?;
        let field = |name: &str| {
            text.lines()
                .find_map(|l| l.strip_prefix(name)?.trim().parse::<u64>().ok())
        };
        Some(Io {
            syscw: field("syscw:")?,
            wchar: field("wchar:")?,
        })
    }
}

/// Peak resident set size of this process in KiB: `VmHWM` of
/// `/proc/self/status`, the same high-water mark `getrusage` reports as
/// `ru_maxrss` (read from /proc so the bench needs no `unsafe`). 0 if
/// unreadable.
pub fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix("VmHWM:")?
                    .trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse()
                    .ok()
            })
        })
        .unwrap_or(0)
}

/// Paces one producer thread at `rate` calls per second for `duration`
/// (spinning on the TSC between calls). Returns the calls made.
pub fn paced(timer: &Timer, rate: u64, duration: Duration, call: &impl Fn(u64)) -> u64 {
    let period = Duration::from_nanos(1_000_000_000 / rate);
    let end = timer.now() + duration;
    let mut next = timer.now();
    let mut i = 0u64;
    while timer.now() < end {
        timer.spin_until(next);
        next += period;
        call(i);
        i += 1;
    }
    i
}
