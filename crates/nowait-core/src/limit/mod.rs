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
//! Window numbers compare modulo 2^40: `d`, the calling thread's window
//! minus the word's, is signed.
//!
//! 1. Read the clock, compute the window number `w`, load the word.
//! 2. If the word is still 0 or `d > 0` (a later window):
//!    compare-exchange it to `(w, 1)`; the winner is admitted, a loser
//!    goes back to step 2 with the word it saw. This is the only
//!    compare-exchange, once per period.
//! 3. If `d < -1` (the word is more than one window ahead): read the
//!    clock again and go back to step 2 with the new `w`; if it is still
//!    so, the clock went back (the wall clock, which times windows until
//!    the tick clock is calibrated and under Miri, was set back), or the
//!    site was idle for 2^39 windows and the numbers wrapped; the thread
//!    opens its window as in step 2. A thread that read the clock just
//!    before the turn (`d == -1`) counts in the word's window.
//! 4. If the word's count reached the limit: suppressed (a load, no
//!    store on the window's line).
//! 5. Else `fetch_add(1)`: admitted if the count it returned was below
//!    the limit. The window can only have been replaced meanwhile, so the
//!    increment counts in whatever window holds it.
//!
//! Invariant: while the word holds a window, at most `per` calls are
//! admitted in it, its opener included: the opener sets the count to 1
//! and every other admitted call moved it from a distinct value below
//! `per`. The word's window only moves forward, except in step 3's
//! clock change, which may admit up to `per` more. The count never
//! overflows into the window bits: it is incremented only after a load
//! saw it below `per` (`per < 2^23`), so it stays below `per` plus the
//! number of threads. The loom models (`accounting/loom_models.rs`, beside the writer's
//! loss accounting they also drive) check
//! both, and that every call is either admitted or counted.
//!
//! # Directives
//!
//! The `tracing` layer gives call sites their rules from directives read
//! at run time (`TARGET[@LEVEL]=N/PERIOD`, `TARGET[@LEVEL]=1inN`):
//! `directive.rs` parses them, as untrusted input, capped as the
//! filter's directives are.
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
//! logger (its list of limited sites); the writer
//! thread sums each site's counters every round and reports the growth
//! as a notice (at least once a second while it grows, at once when it
//! stops, on every flush and at shutdown), and `Stats`
//! sums them when asked.

mod directive;

#[cfg(fuzzing)]
pub(crate) use directive::fuzz_limit_directives;
pub use directive::{
    parse_limit_directives, LimitDirective, LimitDirectiveError, LimitRule,
    MAX_DIRECTIVES as MAX_LIMIT_DIRECTIVES, MAX_DIRECTIVE_LEN as MAX_LIMIT_DIRECTIVE_LEN,
    MAX_TARGET_LEN as MAX_LIMIT_TARGET_LEN,
};

use crate::sys::sync::untracked::{AtomicU32, AtomicU64 as StaticU64};
use crate::sys::sync::Ordering::Relaxed;
use crate::sys::sync::{AtomicBool, AtomicU64};
use std::cell::Cell;
use std::fmt::Write as _;
use std::time::SystemTime;

use crossbeam_utils::CachePadded;

use crate::record::SuppressReason as Reason;
use crate::text::time::rfc3339;

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
    /// by the thread that hands it over; the writer reports the counts
    /// made before too, since it starts a new site from 0).
    watched: AtomicBool,
    /// Rate rule: window number and admitted count (module docs).
    window: CachePadded<AtomicU64>,
    /// Suppressed calls, per stripe of threads; monotonic.
    suppressed: [CachePadded<AtomicU64>; STRIPES],
    /// In a forked child: the sum of `suppressed` at the fork, the
    /// parent's to report (zero in the process that watched the site).
    before_fork: AtomicU64,
}

/// A function that is `const` outside loom models (loom's atomics have no
/// `const` constructor, and a model builds its sites at run time).
macro_rules! const_unless_loom {
    ($(#[$m:meta])* $vis:vis fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty $body:block) => {
        #[cfg(not(loom))]
        $(#[$m])* $vis const fn $name($($arg: $ty),*) -> $ret $body
        #[cfg(loom)]
        $(#[$m])* $vis fn $name($($arg: $ty),*) -> $ret $body
    };
}

impl SiteLimit {
    const_unless_loom! {
        /// At most `per` records every `period_ns` nanoseconds.
        ///
        /// # Panics
        ///
        /// If `per` is 0 or above 2^23, or `period_ns` is 0: in a `static`,
        /// at compile time.
        pub fn rate(per: u32, period_ns: u64, file: &'static str, line: u32) -> SiteLimit {
            assert!(
                per > 0 && per <= MAX_PER,
                "a rate limit keeps 1 to 8388608 records per period"
            );
            assert!(period_ns > 0, "a rate limit's period must not be 0");
            SiteLimit::new(Rule::Rate { per, period_ns }, file, line)
        }
    }

    const_unless_loom! {
        /// One call in `one_in` kept, at random.
        ///
        /// # Panics
        ///
        /// If `one_in` is 0: in a `static`, at compile time.
        pub fn sample(one_in: u32, file: &'static str, line: u32) -> SiteLimit {
            assert!(one_in > 0, "sampling keeps 1 in N calls, N at least 1");
            SiteLimit::new(Rule::Sample { one_in }, file, line)
        }
    }

    #[cfg(not(loom))]
    const fn new(rule: Rule, file: &'static str, line: u32) -> SiteLimit {
        SiteLimit {
            rule,
            file,
            line,
            watched: AtomicBool::new(false),
            window: CachePadded::new(AtomicU64::new(0)),
            suppressed: [const { CachePadded::new(AtomicU64::new(0)) }; STRIPES],
            before_fork: AtomicU64::new(0),
        }
    }

    #[cfg(loom)]
    fn new(rule: Rule, file: &'static str, line: u32) -> SiteLimit {
        SiteLimit {
            rule,
            file,
            line,
            watched: AtomicBool::new(false),
            window: CachePadded::new(AtomicU64::new(0)),
            suppressed: std::array::from_fn(|_| CachePadded::new(AtomicU64::new(0))),
            before_fork: AtomicU64::new(0),
        }
    }

    /// Whether this call may log; a `false` is counted, and the first time
    /// the site is offered to `hand_off` (which gives it to a logger, or
    /// declines: a later suppressed call offers it again).
    #[inline]
    pub fn admit_or_hand_off(&'static self, hand_off: impl FnOnce(&'static SiteLimit)) -> bool {
        let admitted = self.check(crate::record::clock::mono_nanos);
        if !admitted {
            self.suppress(hand_off);
        }
        admitted
    }

    /// As [`admit`](Self::admit), for a site already [`watch`](Self::watch)ed
    /// by its logger (the `tracing` layer's).
    #[inline]
    pub fn admit_watched(&'static self) -> bool {
        let admitted = self.check(crate::record::clock::mono_nanos);
        if !admitted {
            self.count_suppressed();
        }
        admitted
    }

    /// The rule's verdict, `now` reading the monotonic clock.
    #[inline]
    fn check(&self, now: impl Fn() -> u64) -> bool {
        match self.rule {
            Rule::Rate { per, period_ns } => self.admit_rate(now, per, period_ns).is_some(),
            Rule::Sample { one_in } => draw(one_in),
        }
    }

    /// The rate rule (module docs, steps 1 to 5): `Some(window)`, the
    /// number of the window the call was admitted in, or `None`.
    #[inline]
    pub(crate) fn admit_rate(
        &self,
        now: impl Fn() -> u64,
        per: u32,
        period_ns: u64,
    ) -> Option<u64> {
        let window_of = |ns: u64| (ns / period_ns) << COUNT_BITS;
        // Step 1.
        let mut w = window_of(now());
        let mut s = self.window.load(Relaxed);
        let mut read_again = false;
        loop {
            // Windows from the word's to `w`, modulo 2^40 (exact: both
            // are multiples of 2^COUNT_BITS).
            let d = (w.wrapping_sub(s & !COUNT_MASK) as i64) >> COUNT_BITS;
            // Step 3.
            if d < -1 && !read_again {
                read_again = true;
                w = window_of(now());
                continue;
            }
            // Step 2: a later window, or (step 3) a clock that went back;
            // `d` in -1..=0 is the word's window.
            if s == 0 || !(-1..=0).contains(&d) {
                match self.window.compare_exchange(s, w | 1, Relaxed, Relaxed) {
                    Ok(_) => return Some(w >> COUNT_BITS),
                    Err(seen) => {
                        s = seen;
                        continue;
                    }
                }
            }
            // Step 4.
            if s & COUNT_MASK >= u64::from(per) {
                return None;
            }
            // Step 5.
            let prev = self.window.fetch_add(1, Relaxed);
            return (prev & COUNT_MASK < u64::from(per)).then_some(prev >> COUNT_BITS);
        }
    }

    /// Counts a suppressed call; first offers the site to `hand_off`
    /// unless it was handed over already (`hand_off` may decline: without
    /// a logger, a later suppressed call offers it again).
    #[inline]
    pub(crate) fn suppress(&'static self, hand_off: impl FnOnce(&'static SiteLimit)) {
        if !self.watched.load(Relaxed) {
            hand_off(self);
        }
        self.count_suppressed();
    }

    /// The calls admitted in the window the site's word holds.
    #[cfg(all(loom, test))]
    pub(crate) fn admitted_in_window(&self) -> u64 {
        self.window.load(Relaxed) & COUNT_MASK
    }

    #[inline]
    pub(crate) fn count_suppressed(&self) {
        self.suppressed[stripe()].fetch_add(1, Relaxed);
    }

    /// Gives the site to `to` (a logger's writer thread, which reports its
    /// suppressed counts from then on), unless it was given before: once
    /// per site, however many threads race here; later calls keep the
    /// first.
    #[cold]
    pub fn hand_off(&'static self, to: impl FnOnce(&'static SiteLimit)) {
        if !self.watched.swap(true, Relaxed) {
            to(self);
        }
    }

    /// `Some(n)` for a site that keeps one call in `n`: what a kept record
    /// carries as its `sample_rate` field.
    pub fn sample_rate(&self) -> Option<u32> {
        match self.rule {
            Rule::Sample { one_in } => Some(one_in),
            Rule::Rate { .. } => None,
        }
    }

    /// Calls this process suppressed so far (a sum of counters other
    /// threads may be adding to: a lower bound of the count a moment
    /// later). In a forked child, those since the fork.
    pub(crate) fn suppressed(&self) -> u64 {
        self.total().saturating_sub(self.before_fork.load(Relaxed))
    }

    fn total(&self) -> u64 {
        self.suppressed.iter().map(|c| c.load(Relaxed)).sum()
    }

    /// In a forked child (`atfork` handler, single-threaded): what was
    /// suppressed until now is the parent's to report and count.
    pub(crate) fn forget_before_fork(&self) {
        self.before_fork.store(self.total(), Relaxed);
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
static SEED: StaticU64 = StaticU64::new(0x2545_F491_4F6C_DD1D);
static SEED_GENERATION: AtomicU32 = AtomicU32::new(0);
/// Threads that drew since the seed was last set (each gets its own
/// stream).
static DRAWERS: StaticU64 = StaticU64::new(0);
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
/// nowait_core::filter::set_sample_seed(42);
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

#[cfg(all(test, not(loom)))]
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

    const SEC: u64 = 1_000_000_000;

    #[test]
    fn a_rate_admits_exactly_per_while_the_word_holds_a_window() {
        let l = SiteLimit::rate(2, SEC, "f", 1);
        let at = |t: u64| l.admit_rate(|| t, 2, SEC);
        assert_eq!(at(5 * SEC), Some(5));
        assert_eq!(at(5 * SEC + 1), Some(5));
        assert_eq!(at(5 * SEC + 2), None);
        // The count stays saturated: no increment once a load saw it full.
        assert_eq!(l.window.load(Relaxed) & COUNT_MASK, 2);
        assert_eq!(at(6 * SEC), Some(6));
    }

    #[test]
    fn threads_in_one_window_admit_exactly_per_and_count_the_rest() {
        // Twice as many threads as counter stripes: they share stripes.
        const THREADS: u64 = 2 * STRIPES as u64;
        const CALLS: u64 = if cfg!(miri) { 10 } else { 20_000 };
        let l = SiteLimit::rate(7, SEC, "f", 1);
        let start = std::sync::Barrier::new(THREADS as usize);
        let admitted: u64 = std::thread::scope(|s| {
            let threads: Vec<_> = (0..THREADS)
                .map(|_| {
                    s.spawn(|| {
                        start.wait();
                        (0..CALLS)
                            .filter(|_| {
                                let admitted = l.admit_rate(|| 3 * SEC, 7, SEC).is_some();
                                if !admitted {
                                    l.count_suppressed();
                                }
                                admitted
                            })
                            .count() as u64
                    })
                })
                .collect();
            threads.into_iter().map(|t| t.join().unwrap()).sum()
        });
        assert_eq!(admitted, 7);
        assert_eq!(l.suppressed(), THREADS * CALLS - 7);
    }

    #[test]
    fn a_call_that_read_the_clock_just_before_the_turn_counts_in_the_new_window() {
        let l = SiteLimit::rate(1, SEC, "f", 1);
        assert_eq!(l.admit_rate(|| 2 * SEC, 1, SEC), Some(2));
        assert_eq!(l.admit_rate(|| 2 * SEC - 1, 1, SEC), None);
    }

    #[test]
    fn a_clock_that_went_back_opens_a_new_window() {
        // The wall clock before calibration, then the tick clock (whose
        // origin is the machine's boot): a site that filled a window must
        // not wait decades for the tick clock to reach it.
        let l = SiteLimit::rate(1, SEC, "f", 1);
        let wall = 1_790_000_000 * SEC;
        assert_eq!(l.admit_rate(|| wall, 1, SEC), Some(1_790_000_000));
        assert_eq!(l.admit_rate(|| wall, 1, SEC), None);
        assert_eq!(l.admit_rate(|| 86_400 * SEC, 1, SEC), Some(86_400));
        assert_eq!(l.admit_rate(|| 86_400 * SEC, 1, SEC), None);
        assert_eq!(l.admit_rate(|| 86_401 * SEC, 1, SEC), Some(86_401));
    }

    #[test]
    fn a_stale_clock_reading_is_read_again_before_it_opens_a_window() {
        let l = SiteLimit::rate(1, SEC, "f", 1);
        assert_eq!(l.admit_rate(|| 10 * SEC, 1, SEC), Some(10));
        // A thread that read 7s, stalled, and reads 10.5s the second time.
        let reads = Cell::new(0);
        let now = || {
            reads.set(reads.get() + 1);
            if reads.get() == 1 {
                7 * SEC
            } else {
                10 * SEC + SEC / 2
            }
        };
        assert_eq!(l.admit_rate(now, 1, SEC), None);
        assert_eq!(reads.get(), 2);
    }

    #[test]
    fn a_site_idle_for_half_the_window_numbers_opens_a_new_window() {
        // Window numbers compare modulo 2^40: after 2^39 idle windows the
        // word's window looks ahead of the clock's.
        let l = SiteLimit::rate(1, 1_000, "f", 1);
        assert_eq!(l.admit_rate(|| 5_000, 1, 1_000), Some(5));
        let later = (5 + (1 << 39) + 7) * 1_000;
        assert!(l.admit_rate(|| later, 1, 1_000).is_some());
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
