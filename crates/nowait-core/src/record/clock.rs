//! Timestamps: a raw TSC read on the calling thread (`quanta`), turned into
//! wall-clock time on the writer thread.
//!
//! An event's time field holds either nanoseconds since the Unix epoch (top
//! bit clear) or raw clock ticks tagged with the top bit. Ticks are
//! converted against an anchor pair (ticks, wall time) that the converting
//! thread refreshes every second, so calibration error and NTP slewing
//! never accumulate: the error is that of the tick rate over at most the
//! age of the event plus one second.

use std::cell::Cell;
use std::sync::OnceLock;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const RAW: u64 = 1 << 63;
const REANCHOR_NANOS: u64 = 1_000_000_000;

static CLOCK: OnceLock<quanta::Clock> = OnceLock::new();

/// `timeout` from now, or about a century from now if `timeout` is too
/// long for an `Instant` (a caller's `Duration::MAX` means "no bound", not
/// a panic).
pub(crate) fn deadline_after(timeout: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(timeout)
        .or_else(|| now.checked_add(FAR))
        .unwrap_or(now)
}

/// What [`deadline_after`] puts in place of a timeout too long to add.
const FAR: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// Calibrates the tick clock (10–20 ms, once per process; `quanta` caps it
/// at 200 ms). Until then, and under Miri, timestamps read the wall clock.
pub(crate) fn init() {
    if !cfg!(miri) {
        CLOCK.get_or_init(quanta::Clock::new);
    }
}

/// The time field for an event happening now.
#[inline]
pub(crate) fn now() -> u64 {
    match CLOCK.get() {
        Some(clock) => clock.raw() | RAW,
        None => wall_nanos(),
    }
}

/// A time field as a key that orders events: raw ticks as they are (the
/// common case costs a mask), and a time a front end gave in wall-clock
/// nanoseconds converted into ticks against one anchor taken once per
/// process (never re-anchored, so the conversion is monotonic). Without a
/// tick clock (before calibration, under Miri) keys are nanoseconds. Only
/// the writer's merge of the lanes uses it; wall-clock times compare with
/// ticks to within the tick rate's calibration error.
#[inline]
pub(crate) fn order_key(field: u64) -> u64 {
    if field & RAW != 0 {
        return field & !RAW;
    }
    let Some((t0, n0, per_ns)) = order_anchor() else {
        return field;
    };
    if field >= n0 {
        t0.saturating_add(((field - n0) as f64 * per_ns) as u64)
    } else {
        t0.saturating_sub(((n0 - field) as f64 * per_ns) as u64)
    }
}

/// (ticks, wall nanoseconds, ticks per nanosecond) read once, for
/// [`order_key`]; `None` without a tick clock.
fn order_anchor() -> Option<(u64, u64, f64)> {
    static ANCHOR: OnceLock<(u64, u64, f64)> = OnceLock::new();
    let clock = CLOCK.get()?;
    Some(*ANCHOR.get_or_init(|| {
        let per_tick = ns_per_tick();
        let per_ns = if per_tick > 0.0 { 1.0 / per_tick } else { 1.0 };
        (clock.raw(), wall_nanos(), per_ns)
    }))
}

/// The [`order_key`] of now.
pub(crate) fn order_key_now() -> u64 {
    order_key(now())
}

/// `span` in [`order_key`] units.
pub(crate) fn order_span(span: Duration) -> u64 {
    let ns = u64::try_from(span.as_nanos()).unwrap_or(u64::MAX);
    match order_anchor() {
        Some((_, _, per_ns)) => (ns as f64 * per_ns) as u64,
        None => ns,
    }
}

/// Nanoseconds on a monotonic clock with an arbitrary origin, cheap
/// enough for every call of a rate-limited call site (the tick clock: a
/// TSC read, a multiply and a shift); the wall clock before calibration
/// and under Miri (a change of clock only starts a new window early).
#[inline]
pub(crate) fn mono_nanos() -> u64 {
    match CLOCK.get() {
        Some(clock) => clock.delta_as_nanos(0, clock.raw()),
        None => wall_nanos(),
    }
}

/// Nanoseconds per raw tick, for a process that converts this one's ticks
/// after it died (the crash-durable ring); 0 without a tick clock.
pub(crate) fn ns_per_tick() -> f64 {
    match CLOCK.get() {
        Some(clock) => clock.delta_as_nanos(0, 1 << 40) as f64 / (1u64 << 40) as f64,
        None => 0.0,
    }
}

/// A (raw ticks, wall nanoseconds) pair read now, for the same purpose.
pub(crate) fn anchor() -> (u64, u64) {
    match CLOCK.get() {
        Some(clock) => (clock.raw(), wall_nanos()),
        None => (0, wall_nanos()),
    }
}

pub(crate) fn wall_nanos() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
        & !RAW
}

/// A converting thread's anchor: a (ticks, wall nanoseconds) pair read
/// together, the ticks of [`REANCHOR_NANOS`] (how far from it an event may
/// be converted), and the clock's scale as nanoseconds per 2^32 ticks.
#[derive(Clone, Copy)]
struct Anchor {
    ticks: u64,
    nanos: u64,
    window: u64,
    scale: u64,
}

impl Anchor {
    /// Read now, from `clock`.
    fn now(clock: &quanta::Clock) -> Anchor {
        let (ticks, nanos) = (clock.raw(), wall_nanos());
        // The clock's own conversion of 2^32 ticks: 32 fractional bits
        // of nanoseconds per tick (a 1 GHz clock: 2^32).
        let scale = clock.delta_as_nanos(0, 1 << 32);
        // The ticks of the window: a tick wider or narrower only moves a
        // re-anchoring.
        let window = ((u128::from(REANCHOR_NANOS) << 32) / u128::from(scale.max(1))) as u64;
        Anchor {
            ticks,
            nanos,
            window,
            scale,
        }
    }

    /// `ticks` in wall nanoseconds (saturating, however far from the
    /// anchor).
    #[inline]
    fn convert(self, ticks: u64) -> u64 {
        let ns = |delta: u64| {
            let ns = (u128::from(delta) * u128::from(self.scale)) >> 32;
            u64::try_from(ns).unwrap_or(u64::MAX)
        };
        if ticks >= self.ticks {
            self.nanos.saturating_add(ns(ticks - self.ticks))
        } else {
            self.nanos.saturating_sub(ns(self.ticks - ticks))
        }
    }
}

thread_local! {
    /// This thread's conversion anchor. One per converting thread, shared
    /// by every sink that thread formats for, so that they all show an
    /// event at the same instant.
    static ANCHOR: Cell<Option<Anchor>> = const { Cell::new(None) };
}

/// Nanoseconds since the Unix epoch for a time field.
#[inline]
pub(crate) fn to_unix_nanos(field: u64) -> u64 {
    if field & RAW == 0 {
        return field;
    }
    let ticks = field & !RAW;
    // Events arrive roughly in order: one within a second of the anchor
    // (in either direction) converts against it, so the clocks are read
    // about once a second, not once per event.
    if let Ok(Some(anchor)) = ANCHOR.try_with(Cell::get) {
        if ticks.abs_diff(anchor.ticks) < anchor.window {
            return anchor.convert(ticks);
        }
    }
    reanchor(ticks)
}

/// [`to_unix_nanos`] for ticks outside the anchor's window: anchors anew.
#[cold]
#[inline(never)]
fn reanchor(ticks: u64) -> u64 {
    let Some(clock) = CLOCK.get() else {
        return wall_nanos();
    };
    let anchor = Anchor::now(clock);
    let _ = ANCHOR.try_with(|a| a.set(Some(anchor)));
    anchor.convert(ticks)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(miri, ignore = "quanta reads the TSC, which Miri does not support")]
    fn ticks_convert_to_wall_time() {
        init();
        let before = wall_nanos();
        let t = now();
        let after = wall_nanos();
        assert_ne!(t & RAW, 0);
        let n = to_unix_nanos(t);
        // Within a millisecond of the wall clock around the read.
        assert!(
            n + 1_000_000 >= before && n <= after + 1_000_000,
            "{before} {n} {after}"
        );
        assert_eq!(to_unix_nanos(12345), 12345);
    }

    #[test]
    #[cfg_attr(miri, ignore = "quanta reads the TSC, which Miri does not support")]
    fn the_anchor_converts_as_the_clock_does_and_saturates() {
        init();
        let clock = CLOCK.get().expect("calibrated");
        let a = Anchor::now(clock);
        assert!(a.window > 0);
        for d in [
            0,
            1,
            999,
            1 << 20,
            a.window - 1,
            a.window,
            10 * a.window,
            1 << 40,
        ] {
            // The scale keeps 32 fractional bits: at most one nanosecond
            // off per 2^32 ticks, plus each side's rounding.
            let slack = 2 + (d >> 32);
            let after = a.nanos + clock.delta_as_nanos(a.ticks, a.ticks + d);
            assert!(
                a.convert(a.ticks + d).abs_diff(after) <= slack,
                "{d} ticks after"
            );
            if let Some(t) = a.ticks.checked_sub(d) {
                let before = a.nanos.saturating_sub(clock.delta_as_nanos(t, a.ticks));
                assert!(a.convert(t).abs_diff(before) <= slack, "{d} ticks before");
            }
        }
        // Far from the anchor: a saturated time, never a panic.
        let _ = a.convert(u64::MAX >> 1);
        let _ = a.convert(0);
    }
}
