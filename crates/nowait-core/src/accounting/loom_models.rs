//! Loom models of a rate-limited call site and the writer's accounting of
//! its suppressed calls. Run with `bash ci/loom.sh accounting`
//! (`RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p nowait-core
//! --release --lib accounting::loom_models`).
//!
//! The sites are production's `SiteLimit`, built at run time (loom's
//! atomics have no `const` constructor) and leaked, as the `tracing`
//! layer's are. Each call passes its own clock reading, so a model places
//! calls in windows exactly; the writer's side is its real `Loss`
//! accounting over the site's counters, behind a stand-in for the
//! logger's list of watched sites.
//!
//! 1. Calls racing to open one window, and calls racing across a turn:
//!    at most `per` admitted while the word holds a window, and every
//!    call either admitted or counted as suppressed.
//! 2. The hand-off: suppressed calls racing with each other to hand the
//!    site over and with the writer's sweep; the notices' counts add up
//!    to the suppressed total after the last sweep, none lost, none
//!    twice.

use std::time::SystemTime;

use crate::accounting::loss::Loss;
use crate::limit::SiteLimit;
use crate::sys::sync::{thread, Arc, Mutex};

const PERIOD: u64 = 1_000;

fn site(per: u32) -> &'static SiteLimit {
    Box::leak(Box::new(SiteLimit::rate(per, PERIOD, "src/model.rs", 1)))
}

/// One call at clock reading `now`, as `admit_watched` makes it: the
/// window it was admitted in, or `None` (then counted).
fn call(site: &SiteLimit, per: u32, now: u64) -> Option<u64> {
    let admitted = site.admit_rate(|| now, per, PERIOD);
    if admitted.is_none() {
        site.count_suppressed();
    }
    admitted
}

/// Checks the invariant over every call's verdict.
fn check(site: &SiteLimit, per: u32, verdicts: &[Option<u64>]) {
    let admitted: Vec<u64> = verdicts.iter().flatten().copied().collect();
    for w in &admitted {
        let n = admitted.iter().filter(|x| *x == w).count();
        assert!(
            n <= per as usize,
            "{n} calls admitted in window {w}, limit {per}: {verdicts:?}"
        );
    }
    assert_eq!(
        admitted.len() as u64 + site.suppressed(),
        verdicts.len() as u64,
        "a call neither admitted nor counted: {verdicts:?}"
    );
}

/// Runs `calls[t]` (clock readings) on thread `t`, the first list on the
/// model's own thread, and returns every verdict.
fn run(site: &'static SiteLimit, per: u32, calls: &[&'static [u64]]) -> Vec<Option<u64>> {
    let others: Vec<_> = calls[1..]
        .iter()
        .map(|&times| {
            thread::spawn(move || {
                times
                    .iter()
                    .map(|&t| call(site, per, t))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut verdicts: Vec<Option<u64>> = calls[0].iter().map(|&t| call(site, per, t)).collect();
    for t in others {
        verdicts.extend(t.join().unwrap());
    }
    verdicts
}

#[test]
fn racing_openers_of_one_window_admit_one() {
    loom::model(|| {
        let site = site(1);
        // Window 0 is full; three threads race to open window 1.
        assert_eq!(call(site, 1, 0), Some(0));
        let verdicts = run(site, 1, &[&[PERIOD], &[PERIOD], &[PERIOD + 1]]);
        check(site, 1, &verdicts);
        assert_eq!(verdicts.iter().flatten().count(), 1, "{verdicts:?}");
        assert_eq!(site.suppressed(), 2);
    });
}

#[test]
fn calls_across_a_turn_admit_at_most_per_in_each_window() {
    loom::model(|| {
        let site = site(2);
        // Two threads each call in window 0, then in window 1, racing
        // with a third that opens window 1 early (and whose window-0
        // call comes after it).
        let verdicts = run(
            site,
            2,
            &[
                &[PERIOD - 1, PERIOD + 1],
                &[1, PERIOD + 2],
                &[PERIOD, PERIOD - 2],
            ],
        );
        check(site, 2, &verdicts);
    });
}

#[test]
fn the_count_stays_below_per_plus_the_threads() {
    loom::model(|| {
        let site = site(2);
        let verdicts = run(site, 2, &[&[0, 1], &[2], &[3]]);
        check(site, 2, &verdicts);
        // Only calls that loaded a count below `per` increment it: one
        // opener plus at most one increment per thread past `per - 1`.
        let count = site.admitted_in_window();
        assert!((2..=2 - 1 + 3).contains(&count), "count {count}");
    });
}

/// The writer's side: the sites handed over so far (the logger's list)
/// and what the writer's sweeps reported.
struct Writer {
    list: Mutex<Vec<&'static SiteLimit>>,
}

impl Writer {
    /// One sweep as the writer makes it (`report_suppressed`): takes in
    /// the sites handed over since, reads each site's total, and returns
    /// the counts its notices carry.
    fn sweep(&self, known: &mut Vec<(&'static SiteLimit, Loss)>, force: bool) -> u64 {
        let now = SystemTime::UNIX_EPOCH;
        {
            let list = self.list.lock().unwrap();
            let n = known.len();
            known.extend(list.iter().skip(n).map(|&site| (site, Loss::default())));
        }
        let mut reported = 0;
        for (site, loss) in known.iter_mut() {
            loss.observe(site.suppressed(), now);
            if let Some((n, _, _)) = loss.take(now, force) {
                reported += n;
            }
        }
        reported
    }
}

#[test]
fn a_suppression_racing_with_the_sweep_is_reported_once() {
    loom::model(|| {
        let site = site(1);
        let writer = Arc::new(Writer {
            list: Mutex::new(Vec::new()),
        });
        assert_eq!(call(site, 1, 0), Some(0));
        let producers: Vec<_> = (0..2)
            .map(|_| {
                let writer = Arc::clone(&writer);
                thread::spawn(move || {
                    // As `admit`: suppressed, so the site is offered to
                    // the logger, then counted.
                    assert!(site.admit_rate(|| 1, 1, PERIOD).is_none());
                    site.suppress(|s| s.hand_off(|s| writer.list.lock().unwrap().push(s)));
                })
            })
            .collect();
        let mut known = Vec::new();
        let mut reported = writer.sweep(&mut known, false);
        for p in producers {
            p.join().unwrap();
        }
        // Shutdown: the last, forced sweep after every producer finished.
        reported += writer.sweep(&mut known, true);
        assert_eq!(writer.list.lock().unwrap().len(), 1, "handed over twice");
        assert_eq!(site.suppressed(), 2);
        assert_eq!(reported, 2, "reported {reported} of 2 suppressed calls");
    });
}
