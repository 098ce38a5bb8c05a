//! Per-call-site rate limits and sampling, with counted suppression.
//!
//! A limited call site owns a `static` [`SiteLimit`] (a macro's expansion
//! declares it beside the call site; the `tracing` layer keeps one per
//! limited call site). A call asks [`SiteLimit::admit`] before it encodes
//! anything: a suppressed call costs the check and one counter increment,
//! no encoding and no ring space.
//!
//! # Rate limit: a fixed window in one word
//!
//! `window` packs the window's number (the monotonic clock in
//! nanoseconds divided by the period, the low 40 bits of it, in the high
//! bits) and the records admitted in it (the low [`COUNT_BITS`] bits).
//!
//! 1. Read the clock, compute the window number `w`, load the word.
//! 2. If `w` is later than the word's window (or the word is still 0):
//!    compare-exchange it to `(w, 1)`; the winner is admitted, a loser
//!    goes back to step 2 with the word it saw. This is the only
//!    compare-exchange, once per period.
//! 3. If the word's count reached the limit: suppressed (a load, no
//!    store on the window's line).
//! 4. Else `fetch_add(1)`: admitted if the count it returned was below
//!    the limit. The window can only have moved forward meanwhile, so the
//!    increment counts in whatever window holds it.
//!
//! Invariant: at most `per` calls are admitted per window, plus the
//! window's opener when threads' clocks disagree by less than a period
//! (the opener of a window already full for a thread a little behind).
//! The count never overflows into the window bits: it is incremented only
//! after a load saw it below `per` (`per < 2^23`), so it stays below
//! `per` plus the number of threads.
//!
//! # Sampling
//!
//! Each thread draws from its own generator (wyrand, in a thread-local);
//! a call is kept when the draw, scaled to `0..n` (Lemire's
//! multiply-shift), is 0. No shared line is written on a kept or a
//! sampled-out call but the suppressed counter below. The generators
//! derive from [`set_sample_seed`]'s seed and the order in which threads
//! first sample: one thread with a fixed seed keeps the same calls on
//! every run.
//!
//! # Counting what was suppressed
//!
//! Suppressed calls add to one of [`STRIPES`] cache-padded counters,
//! picked by the calling thread, so that threads hitting one limited site
//! share no counter line while they are few. The counters are monotonic;
//! the total is their sum. The first suppression hands the site to the
//! logger ([`Counters::limits`](crate::stats::Counters)); the writer
//! thread sums each site's counters every round and reports the growth
//! as a notice (at least once a second while it grows, at once when it
//! stops, on every flush and at shutdown), and [`Stats`](crate::Stats)
//! sums them when asked.

use crate::sync::untracked::{AtomicBool, AtomicU32, AtomicU64};
use crate::sync::Ordering::Relaxed;
use std::cell::Cell;
use std::fmt::Write as _;
use std::time::SystemTime;

use crossbeam_utils::CachePadded;

use crate::timefmt::rfc3339;
use crate::{Logger, SuppressReason as Reason};

/// Bits of the window word that count admitted records.
const COUNT_BITS: u32 = 24;
const COUNT_MASK: u64 = (1 << COUNT_BITS) - 1;
/// The largest rate limit (records per period).
pub const MAX_PER: u32 = 1 << (COUNT_BITS - 1);

/// Suppressed-call counters per limited site.
pub(crate) const STRIPES: usize = 4;

/// A call site's rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rule {
    /// At most `per` records per `period_ns`.
    Rate { per: u32, period_ns: u64 },
    /// Keep one call in `one_in`, at random.
    Sample { one_in: u32 },
}

/// A limited call site's rule, location and counters (see the module
/// docs). Not public API: the macros and the `tracing` layer build it.
#[doc(hidden)]
#[derive(Debug)]
pub struct SiteLimit {
    rule: Rule,
    file: &'static str,
    line: u32,
    /// Whether the site was handed to a logger's writer thread (set once,
    /// before the first suppressed count).
    watched: AtomicBool,
    /// Rate rule: window number and admitted count (module docs).
    window: CachePadded<AtomicU64>,
    /// Suppressed calls, per stripe of threads; monotonic.
    suppressed: [CachePadded<AtomicU64>; STRIPES],
}

impl SiteLimit {
    /// At most `per` records every `period_ns` nanoseconds.
    ///
    /// # Panics
    ///
    /// If `per` is 0 or above 2^23, or `period_ns` is 0: in a `static`,
    /// at compile time.
    pub const fn rate(per: u32, period_ns: u64, file: &'static str, line: u32) -> SiteLimit {
        assert!(
            per > 0 && per <= MAX_PER,
            "a rate limit keeps 1 to 8388608 records per period"
        );
        assert!(period_ns > 0, "a rate limit's period must not be 0");
        SiteLimit::new(Rule::Rate { per, period_ns }, file, line)
    }

    /// One call in `one_in` kept, at random.
    ///
    /// # Panics
    ///
    /// If `one_in` is 0: in a `static`, at compile time.
    pub const fn sample(one_in: u32, file: &'static str, line: u32) -> SiteLimit {
        assert!(one_in > 0, "sampling keeps 1 in N calls, N at least 1");
        SiteLimit::new(Rule::Sample { one_in }, file, line)
    }

    const fn new(rule: Rule, file: &'static str, line: u32) -> SiteLimit {
        SiteLimit {
            rule,
            file,
            line,
            watched: AtomicBool::new(false),
            window: CachePadded::new(AtomicU64::new(0)),
            suppressed: [const { CachePadded::new(AtomicU64::new(0)) }; STRIPES],
        }
    }

    /// Whether this call may log; a `false` is counted, and the site is
    /// handed to the global logger the first time.
    #[inline]
    pub fn admit(&'static self) -> bool {
        let admitted = match self.rule {
            Rule::Rate { per, period_ns } => self.admit_rate(per, period_ns),
            Rule::Sample { one_in } => draw(one_in),
        };
        if !admitted {
            if !self.watched.load(Relaxed) {
                if let Some(logger) = crate::global() {
                    self.watch(logger);
                }
            }
            self.count_suppressed();
        }
        admitted
    }

    /// As [`admit`](Self::admit), for a site already [`watch`](Self::watch)ed
    /// by its logger (the `tracing` layer's).
    #[inline]
    pub fn admit_watched(&'static self) -> bool {
        let admitted = match self.rule {
            Rule::Rate { per, period_ns } => self.admit_rate(per, period_ns),
            Rule::Sample { one_in } => draw(one_in),
        };
        if !admitted {
            self.count_suppressed();
        }
        admitted
    }

    #[inline]
    fn admit_rate(&self, per: u32, period_ns: u64) -> bool {
        let w = (crate::clock::mono_nanos() / period_ns) << COUNT_BITS;
        let mut s = self.window.load(Relaxed);
        loop {
            // Step 2: a later window (compared modulo 2^40), or none yet.
            if s == 0 || (w.wrapping_sub(s & !COUNT_MASK) as i64) > 0 {
                match self.window.compare_exchange(s, w | 1, Relaxed, Relaxed) {
                    Ok(_) => return true,
                    Err(seen) => {
                        s = seen;
                        continue;
                    }
                }
            }
            // Step 3.
            if s & COUNT_MASK >= u64::from(per) {
                return false;
            }
            // Step 4.
            let prev = self.window.fetch_add(1, Relaxed);
            return prev & COUNT_MASK < u64::from(per);
        }
    }

    #[inline]
    fn count_suppressed(&self) {
        self.suppressed[stripe()].fetch_add(1, Relaxed);
    }

    /// Hands the site to `logger`'s writer thread, which reports its
    /// suppressed counts from then on (once per site; later calls keep the
    /// first logger).
    #[cold]
    pub fn watch(&'static self, logger: &Logger) {
        if self.watched.swap(true, Relaxed) {
            return;
        }
        logger.watch_limit(self);
    }

    /// `Some(n)` for a site that keeps one call in `n`: what a kept record
    /// carries as its `sample_rate` field.
    pub fn sample_rate(&self) -> Option<u32> {
        match self.rule {
            Rule::Sample { one_in } => Some(one_in),
            Rule::Rate { .. } => None,
        }
    }

    /// Calls suppressed so far (a sum of counters other threads may be
    /// adding to: a lower bound of the count a moment later).
    pub(crate) fn suppressed(&self) -> u64 {
        self.suppressed.iter().map(|c| c.load(Relaxed)).sum()
    }

    pub(crate) fn reason(&self) -> Reason {
        match self.rule {
            Rule::Rate { .. } => Reason::RateLimit,
            Rule::Sample { .. } => Reason::Sampling,
        }
    }

    /// `file:line`.
    pub(crate) fn location(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }

    /// The rule as the macros spell it: `100 per 1s`, `1 in 100`.
    pub(crate) fn rule_text(&self) -> String {
        match self.rule {
            Rule::Rate { per, period_ns } => format!("{per} per {}", period_text(period_ns)),
            Rule::Sample { one_in } => format!("1 in {one_in}"),
        }
    }

    /// `suppressed N records from FILE:LINE (limit RULE) between T1 and T2`.
    pub(crate) fn notice_message(&self, n: u64, (first, last): (SystemTime, SystemTime)) -> String {
        let s = if n == 1 { "" } else { "s" };
        let what = match self.reason() {
            Reason::RateLimit => "limit",
            Reason::Sampling => "sampled",
        };
        format!(
            "suppressed {n} record{s} from {} ({what} {}) between {} and {}",
            self.location(),
            self.rule_text(),
            rfc3339(first),
            rfc3339(last)
        )
    }
}

/// A period as the macros spell it: the largest unit that divides it.
fn period_text(ns: u64) -> String {
    let mut out = String::new();
    for (unit, name) in [
        (3_600_000_000_000, "h"),
        (60_000_000_000, "m"),
        (1_000_000_000, "s"),
        (1_000_000, "ms"),
        (1_000, "us"),
    ] {
        if ns % unit == 0 {
            let _ = write!(out, "{}{name}", ns / unit);
            return out;
        }
    }
    format!("{ns}ns")
}

/// Parses a macro's period (`250ms`, `1s`, `5m`, `1h`, `100us`) into
/// nanoseconds, at compile time.
///
/// # Panics
///
/// On anything else (in a `const`, at compile time).
///
/// # Examples
///
/// ```
/// use nowait_core::__private::period_nanos;
///
/// assert_eq!(period_nanos("250ms"), 250_000_000);
/// assert_eq!(period_nanos("1s"), 1_000_000_000);
/// ```
pub const fn period_nanos(s: &str) -> u64 {
    match parse_period(s) {
        Some(ns) => ns,
        None => panic!("a limit's period is a number and a unit (250ms, 1s, 5m, 1h), above 0"),
    }
}

/// As [`period_nanos`], `None` where it panics (for periods read at run
/// time: the `tracing` layer's directives).
///
/// # Examples
///
/// ```
/// use nowait_core::__private::period_nanos_checked;
///
/// assert_eq!(period_nanos_checked("5m"), Some(300_000_000_000));
/// assert_eq!(period_nanos_checked("0s"), None);
/// ```
pub fn period_nanos_checked(s: &str) -> Option<u64> {
    parse_period(s)
}

const fn parse_period(s: &str) -> Option<u64> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut n: u64 = 0;
    while i < b.len() && b[i].is_ascii_digit() {
        n = match n.checked_mul(10) {
            Some(v) => match v.checked_add((b[i] - b'0') as u64) {
                Some(v) => v,
                None => return None,
            },
            None => return None,
        };
        i += 1;
    }
    if i == 0 {
        return None;
    }
    let first = if i < b.len() { b[i] } else { 0 };
    let second = if i + 1 < b.len() { b[i + 1] } else { 0 };
    let unit: u64 = match (b.len() - i, first, second) {
        (1, b'h', _) => 3_600_000_000_000,
        (1, b'm', _) => 60_000_000_000,
        (1, b's', _) => 1_000_000_000,
        (2, b'm', b's') => 1_000_000,
        (2, b'u', b's') => 1_000,
        _ => return None,
    };
    match n.checked_mul(unit) {
        Some(0) | None => None,
        Some(v) => Some(v),
    }
}

// === sampling ===

/// The seed of every thread's generator, and how many times it was set
/// (a thread reseeds when it sees a new generation).
static SEED: AtomicU64 = AtomicU64::new(0x2545_F491_4F6C_DD1D);
static SEED_GENERATION: AtomicU32 = AtomicU32::new(0);
/// Threads that drew since the seed was last set (each gets its own
/// stream).
static DRAWERS: AtomicU64 = AtomicU64::new(0);
/// Threads that counted a suppression (their stripe).
static STRIPE_NEXT: AtomicU32 = AtomicU32::new(0);

thread_local! {
    /// The generator's state and the seed generation it derives from
    /// (`u32::MAX`: not seeded yet).
    static RNG: Cell<(u64, u32)> = const { Cell::new((0, u32::MAX)) };
    /// The thread's stripe plus one (0: none yet).
    static STRIPE: Cell<u8> = const { Cell::new(0) };
}

/// Seeds sampling (`sample = 1 in N` on the macros, `NowaitLayer`'s
/// sampling directives): from then on, each thread draws from a stream
/// derived from `seed` and the order in which threads first sample after
/// this call. A program that samples from one thread keeps the same calls
/// on every run with the same seed. Without a call, the seed is fixed too;
/// call it with a random value for runs that differ.
///
/// # Examples
///
/// ```
/// nowait_core::set_sample_seed(42);
/// ```
pub fn set_sample_seed(seed: u64) {
    SEED.store(seed, Relaxed);
    DRAWERS.store(0, Relaxed);
    SEED_GENERATION.fetch_add(1, Relaxed);
}

/// Whether to keep this call, one in `n`.
#[inline]
fn draw(n: u32) -> bool {
    if n <= 1 {
        return true;
    }
    let r = next_random();
    // Lemire: the top 32 bits of r32 * n are uniform in 0..n.
    (u64::from(r as u32) * u64::from(n)) >> 32 == 0
}

#[inline]
fn next_random() -> u64 {
    RNG.try_with(|cell| {
        let (mut state, gen) = cell.get();
        let current = SEED_GENERATION.load(Relaxed);
        if gen != current {
            let nth = DRAWERS.fetch_add(1, Relaxed);
            state = splitmix(SEED.load(Relaxed) ^ splitmix(nth));
        }
        // wyrand.
        state = state.wrapping_add(0xA076_1D64_78BD_642F);
        let t = u128::from(state) * u128::from(state ^ 0xE703_7ED1_A0B4_28DB);
        cell.set((state, current));
        (t >> 64) as u64 ^ t as u64
    })
    // A thread-local destructor logging: keep the call.
    .unwrap_or(0)
}

fn splitmix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The calling thread's suppressed-counter stripe.
#[inline]
fn stripe() -> usize {
    STRIPE
        .try_with(|s| {
            let v = s.get();
            if v != 0 {
                return usize::from(v - 1);
            }
            let n = (STRIPE_NEXT.fetch_add(1, Relaxed) as usize) % STRIPES;
            s.set(n as u8 + 1);
            n
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_parse_and_print_back() {
        for (s, ns) in [
            ("250ms", 250_000_000),
            ("1s", 1_000_000_000),
            ("5m", 300_000_000_000),
            ("1h", 3_600_000_000_000),
            ("100us", 100_000),
        ] {
            assert_eq!(period_nanos(s), ns, "{s}");
            assert_eq!(period_text(ns), s);
        }
        assert_eq!(period_text(1_500), "1500ns");
    }

    #[test]
    fn bad_periods_are_refused() {
        for s in ["", "s", "1", "1x", "0s", "1 s", "99999999999999999999h"] {
            assert!(
                std::panic::catch_unwind(|| period_nanos(s)).is_err(),
                "{s:?}"
            );
        }
    }

    #[test]
    fn a_rate_admits_per_in_a_window_then_counts_the_rest() {
        // A period of an hour: the whole test sits in one window (or two,
        // if it straddles a boundary).
        static L: SiteLimit = SiteLimit::rate(3, 3_600_000_000_000, "src/x.rs", 7);
        let admitted = (0..10).filter(|_| L.admit_watched()).count() as u64;
        assert!((3..=6).contains(&admitted), "{admitted}");
        assert_eq!(admitted + L.suppressed(), 10);
        assert_eq!(L.rule_text(), "3 per 1h");
        assert_eq!(L.location(), "src/x.rs:7");
        assert_eq!(L.reason(), Reason::RateLimit);
    }

    #[test]
    fn a_new_window_admits_again() {
        static L: SiteLimit = SiteLimit::rate(1, 20_000_000, "f", 1);
        assert!(L.admit_watched());
        std::thread::sleep(std::time::Duration::from_millis(45));
        assert!(L.admit_watched());
    }

    #[test]
    fn sampling_one_in_one_keeps_everything() {
        static L: SiteLimit = SiteLimit::sample(1, "f", 1);
        assert!((0..100).all(|_| L.admit_watched()));
        assert_eq!(L.suppressed(), 0);
    }

    #[test]
    fn the_notice_names_count_site_and_rule() {
        static L: SiteLimit = SiteLimit::sample(100, "src/db.rs", 88);
        let t = SystemTime::UNIX_EPOCH;
        assert_eq!(
            L.notice_message(5, (t, t)),
            "suppressed 5 records from src/db.rs:88 (sampled 1 in 100) between \
             1970-01-01T00:00:00.000000Z and 1970-01-01T00:00:00.000000Z"
        );
    }
}
