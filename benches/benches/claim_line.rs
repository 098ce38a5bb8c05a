//! What it models: the one cache line every nowait producer writes, the
//! ring's `head`, claimed with a compare-and-swap loop shaped like the
//! ring's. Measures claims per second in total and the time per claim
//! seen by each thread, with 1 and 2 threads claiming back to back (the
//! worst case: the line moves between cores on every claim). The figures
//! behind `docs::design`'s "On many cores".
//!
//! Run: `taskset -c 0,1 cargo bench -p nowait-benches --bench claim_line`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

static HEAD: AtomicU64 = AtomicU64::new(0);

fn claim(n: u64) {
    for _ in 0..n {
        let mut cur = HEAD.load(Ordering::Relaxed);
        while let Err(seen) =
            HEAD.compare_exchange_weak(cur, cur + 3, Ordering::AcqRel, Ordering::Relaxed)
        {
            cur = seen;
        }
    }
}

fn main() {
    if cfg!(debug_assertions) {
        eprintln!("claim_line: run it with `cargo bench` (an optimised build)");
        return;
    }
    let n = 20_000_000u64;
    for threads in [1u64, 2] {
        // Best of 5: the least disturbed run.
        let mut best = f64::MAX;
        for _ in 0..5 {
            let start = Instant::now();
            let handles: Vec<_> = (0..threads)
                .map(|_| std::thread::spawn(move || claim(n / threads)))
                .collect();
            for h in handles {
                h.join().unwrap();
            }
            best = best.min(start.elapsed().as_secs_f64());
        }
        println!(
            "{threads} thread(s): {:.1} M claims/s in total, {:.1} ns per claim on each thread",
            n as f64 / best / 1e6,
            best * 1e9 * threads as f64 / n as f64
        );
    }
}
