//! The time the formats print.
//!
//! * [`Clock`] writes an event's time as a sink's [`Timer`] asks. It keeps
//!   the `YYYY-MM-DDTHH:MM:SS` of the last second it wrote (shifted to
//!   local time under `Timer::Local`), so a stamp costs a comparison and a
//!   few digits, not a calendar conversion. Invariant: while `second` is
//!   `Some(s)`, `prefix` holds the date and time of day of `s`; a stamp of
//!   another second renders `prefix` anew before it is read, so the cached
//!   text equals formatting the instant from scratch, in either direction
//!   of time.
//! * [`render_time`] is the time a record that carries none is stamped
//!   with: now, or, inside [`with_render_time`], the time given (kept in a
//!   thread-local that is restored when the closure returns, so calls
//!   nest).

use super::options::Timer;
use crate::text::digits::eight_digits;
use crate::text::time;

/// Per-sink timestamp writer: per-second cache of the date and time of day
/// (a comparison and a few digits per event, not a calendar conversion).
#[derive(Debug, Default)]
pub(crate) struct Clock {
    timer: Timer,
    /// For [`Timer::Uptime`]: when the format was made, in ns since the
    /// epoch.
    start: u64,
    /// The second (since the epoch) that `prefix` shows.
    second: Option<u64>,
    /// `YYYY-MM-DDTHH:MM:SS` of `second`.
    prefix: [u8; 19],
    /// For `Timer::Local`: `+HH:MM` for `second`.
    #[cfg(feature = "local-time")]
    offset: Vec<u8>,
}

impl Clock {
    pub(crate) fn new(timer: Timer) -> Clock {
        Clock {
            timer,
            start: system_nanos(std::time::SystemTime::now()),
            ..Clock::default()
        }
    }

    /// Whether timestamps are printed at all.
    pub(crate) fn on(&self) -> bool {
        self.timer != Timer::None
    }

    /// Appends the time `nanos` (since the epoch) as the timer prints it.
    pub(crate) fn write(&mut self, nanos: u64, out: &mut Vec<u8>) {
        match self.timer {
            Timer::Utc => out.extend_from_slice(&self.utc(nanos)),
            Timer::Uptime => {
                let e = nanos.saturating_sub(self.start);
                let mut buf = itoa::Buffer::new();
                let secs = buf.format(e / 1_000_000_000);
                for _ in secs.len()..4 {
                    out.push(b' ');
                }
                out.extend_from_slice(secs.as_bytes());
                write_fraction(e, 9, out);
                out.push(b's');
            }
            #[cfg(feature = "local-time")]
            Timer::Local => {
                self.local(nanos, out);
            }
            Timer::None => {}
        }
    }

    /// Whether the timer is [`Timer::Utc`] (whose stamps [`Clock::utc`]
    /// gives).
    pub(crate) fn is_utc(&self) -> bool {
        self.timer == Timer::Utc
    }

    /// `nanos` as [`Timer::Utc`] prints it, `YYYY-MM-DDTHH:MM:SS.ffffffZ`:
    /// the cached date and time of day, and the microseconds.
    pub(crate) fn utc(&mut self, nanos: u64) -> [u8; 27] {
        let (prefix, tail) = self.utc_parts(nanos);
        let mut stamp = [0u8; 27];
        stamp[..19].copy_from_slice(prefix);
        stamp[19..].copy_from_slice(&tail.to_le_bytes());
        stamp
    }

    /// [`Clock::utc`] in two parts: `YYYY-MM-DDTHH:MM:SS`, and `.ffffffZ`
    /// as the bytes of a `u64` (computed in a register, stored at once).
    #[inline]
    pub(crate) fn utc_parts(&mut self, nanos: u64) -> (&[u8; 19], u64) {
        self.renew(nanos, 0);
        let micros = (nanos % 1_000_000_000 / 1_000) as u32;
        // Six digits: the eight of `eight_digits` less two leading zeros.
        let digits = eight_digits(micros) >> 16 | 0x0000_3030_3030_3030;
        let tail = u64::from(b'.') | digits << 8 | u64::from(b'Z') << 56;
        (&self.prefix, tail)
    }

    /// `YYYY-MM-DDTHH:MM:SS` of `nanos` shifted by `offset` seconds.
    #[cfg(feature = "local-time")]
    fn date_time(&mut self, nanos: u64, offset: i64, out: &mut Vec<u8>) {
        self.renew(nanos, offset);
        out.extend_from_slice(&self.prefix);
    }

    /// Renders `prefix` for the second of `nanos` (shifted by `offset`
    /// seconds) unless it holds that second already.
    fn renew(&mut self, nanos: u64, offset: i64) {
        let second = nanos / 1_000_000_000;
        if self.second != Some(second) {
            self.render_prefix(second, offset);
        }
    }

    #[cold]
    fn render_prefix(&mut self, second: u64, offset: i64) {
        let shifted = (second as i64).saturating_add(offset).max(0) as u64;
        let time = std::time::UNIX_EPOCH + std::time::Duration::from_secs(shifted);
        let mut text = Vec::with_capacity(27);
        time::write_rfc3339_micros(time, &mut text);
        self.prefix.copy_from_slice(&text[..19]);
        self.second = Some(second);
    }

    #[cfg(feature = "local-time")]
    fn local(&mut self, nanos: u64, out: &mut Vec<u8>) {
        let second = nanos / 1_000_000_000;
        if self.second != Some(second) {
            let offset = local_offset(second as i64);
            self.offset.clear();
            self.offset.push(if offset < 0 { b'-' } else { b'+' });
            let abs = offset.unsigned_abs();
            for v in [abs / 3600, abs / 60 % 60] {
                self.offset.push(b'0' + (v / 10 % 10) as u8);
                self.offset.push(b'0' + (v % 10) as u8);
                self.offset.push(b':');
            }
            self.offset.pop();
            self.second = None;
            self.date_time(nanos, i64::from(offset), out);
        } else {
            out.extend_from_slice(&self.prefix);
        }
        let sub = nanos % 1_000_000_000;
        let digits = if sub == 0 {
            0
        } else if sub % 1_000_000 == 0 {
            3
        } else if sub % 1_000 == 0 {
            6
        } else {
            9
        };
        if digits > 0 {
            write_fraction(nanos, digits, out);
        }
        out.extend_from_slice(&self.offset);
    }
}

/// The local time's offset from UTC at `secs` since the epoch, in seconds.
#[cfg(feature = "local-time")]
fn local_offset(secs: i64) -> i32 {
    use chrono::{Offset as _, TimeZone as _};
    chrono::DateTime::from_timestamp(secs, 0).map_or(0, |utc| {
        chrono::Local
            .offset_from_utc_datetime(&utc.naive_utc())
            .fix()
            .local_minus_utc()
    })
}

/// Appends `.` and the first `digits` (1 to 9) digits of the nanoseconds.
fn write_fraction(nanos: u64, digits: usize, out: &mut Vec<u8>) {
    let mut buf = [b'.', b'0', b'0', b'0', b'0', b'0', b'0', b'0', b'0', b'0'];
    let mut v = nanos % 1_000_000_000;
    for d in buf[1..10].iter_mut().rev() {
        *d = b'0' + (v % 10) as u8;
        v /= 10;
    }
    out.extend_from_slice(&buf[..=digits]);
}

thread_local! {
    /// The time [`render_time`] gives instead of now, while set.
    static RECORD_TIME: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
}

/// The time a record that carries none (a plain text record, a malformed
/// event) is stamped with: now, or while a binary log is rendered
/// ([`with_render_time`]), when its writer handled it.
pub(crate) fn render_time() -> u64 {
    RECORD_TIME
        .try_with(std::cell::Cell::get)
        .ok()
        .flatten()
        .unwrap_or_else(|| system_nanos(std::time::SystemTime::now()))
}

/// Runs `f` with [`render_time`] giving `nanos`.
pub(crate) fn with_render_time<R>(nanos: u64, f: impl FnOnce() -> R) -> R {
    let before = RECORD_TIME
        .try_with(|t| t.replace(Some(nanos)))
        .ok()
        .flatten();
    let r = f();
    let _ = RECORD_TIME.try_with(|t| t.set(before));
    r
}

pub(crate) fn system_nanos(time: std::time::SystemTime) -> u64 {
    time.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(timer: Timer, nanos: u64) -> String {
        let mut clock = Clock::new(timer);
        clock.start = 1_000_000_000;
        let mut out = Vec::new();
        clock.write(nanos, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn utc_and_uptime() {
        assert_eq!(
            render(Timer::Utc, 1_763_800_000_123_456_789),
            "2025-11-22T08:26:40.123456Z"
        );
        assert_eq!(render(Timer::Uptime, 3_000_000_042), "   2.000000042s");
        assert_eq!(
            render(Timer::Uptime, 12_346_000_000_000),
            "12345.000000000s"
        );
        // An event stamped before the format was made.
        assert_eq!(render(Timer::Uptime, 5), "   0.000000000s");
        assert_eq!(render(Timer::None, 5), "");
    }

    /// The cached date and time of day give what formatting each instant
    /// from scratch gives, through one clock (so the cache is reused and
    /// renewed) across second, minute, hour, day, month and year
    /// boundaries, leap days (2024, 2000) and a non-leap century (2100),
    /// going forward and backward in time.
    #[test]
    fn cached_prefix_matches_from_scratch() {
        let boundaries: [u64; 9] = [
            1_795_392_000,      // 2026-11-23T00:00:00
            1_795_395_600 - 60, // an hour's last minute
            1_798_761_600,      // 2027-01-01T00:00:00
            1_709_164_800,      // 2024-02-29T00:00:00
            1_709_251_200,      // 2024-03-01T00:00:00
            951_782_400,        // 2000-02-29T00:00:00
            4_107_542_400,      // 2100-03-01T00:00:00 (no 2100-02-29)
            0,                  // 1970-01-01T00:00:00
            16_725_225_600,     // 2500-01-01T00:00:00
        ];
        let mut clock = Clock::new(Timer::Utc);
        let mut instants = Vec::new();
        for b in boundaries {
            for delta in [
                -1_000_000_000i64,
                -1_000,
                -1,
                0,
                1,
                999,
                1_000_000,
                60_000_000_000,
            ] {
                let nanos = (b * 1_000_000_000) as i64 + delta;
                if nanos >= 0 {
                    instants.push(nanos as u64);
                }
            }
        }
        // Forward, then backward through the same instants.
        let backward: Vec<u64> = instants.iter().rev().copied().collect();
        instants.extend(backward);
        for nanos in instants {
            let mut cached = Vec::new();
            clock.write(nanos, &mut cached);
            let mut scratch = Vec::new();
            let time = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(nanos);
            time::write_rfc3339_micros(time, &mut scratch);
            assert_eq!(
                String::from_utf8(cached).unwrap(),
                String::from_utf8(scratch).unwrap(),
                "at {nanos} ns"
            );
        }
    }

    /// The same bytes as `chrono::Local`'s RFC 3339 (what
    /// `tracing-subscriber`'s `ChronoLocal::rfc_3339()` prints), in
    /// whatever zone the machine is in, for each number of fractional
    /// digits; and the cached second is recomputed when it changes.
    #[cfg(feature = "local-time")]
    #[test]
    fn local_time_matches_chrono() {
        let mut clock = Clock::new(Timer::Local);
        for nanos in [
            1_763_800_000_000_000_000u64,
            1_763_800_000_120_000_000,
            1_763_800_000_123_456_000,
            1_763_800_000_123_456_789,
            1_763_800_001_000_000_001,
            1_750_000_000_500_000_000, // another season
        ] {
            let mut out = Vec::new();
            clock.write(nanos, &mut out);
            let want = chrono::DateTime::from_timestamp(
                (nanos / 1_000_000_000) as i64,
                (nanos % 1_000_000_000) as u32,
            )
            .unwrap()
            .with_timezone(&chrono::Local)
            .to_rfc3339();
            assert_eq!(String::from_utf8(out).unwrap(), want);
        }
    }
}
