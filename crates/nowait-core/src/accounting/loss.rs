//! Loss accounting: counts of records lost, by reason, turned into notices
//! in the output.

use std::time::{Duration, SystemTime};

use crate::text::time::rfc3339;

/// A loss that keeps growing is reported at least this often.
pub(crate) const REPORT_EVERY: Duration = Duration::from_secs(1);

/// A count of losses not yet reported in the output, with the window in
/// which they happened (as observed by the writer, to its wake-up interval).
#[derive(Debug, Default)]
pub(crate) struct Loss {
    seen: u64,
    reported: u64,
    first: Option<SystemTime>,
    last: Option<SystemTime>,
    grew: bool,
}

impl Loss {
    /// Takes in the current value of a monotonic counter.
    pub(crate) fn observe(&mut self, total: u64, now: SystemTime) {
        self.grew = total > self.seen;
        if self.grew {
            self.seen = total;
            self.first.get_or_insert(now);
            self.last = Some(now);
        }
    }

    /// The loss to report now, if any: once it stopped growing, or every
    /// [`REPORT_EVERY`] while it grows, or at once if `force`.
    pub(crate) fn take(
        &mut self,
        now: SystemTime,
        force: bool,
    ) -> Option<(u64, SystemTime, SystemTime)> {
        let first = self.first?;
        let due =
            force || !self.grew || now.duration_since(first).unwrap_or_default() >= REPORT_EVERY;
        if !due || self.seen == self.reported {
            return None;
        }
        let n = self.seen - self.reported;
        self.reported = self.seen;
        self.first = None;
        Some((n, first, self.last.take().unwrap_or(first)))
    }

    /// As [`take`](Loss::take), but at most once a [`REPORT_EVERY`]
    /// however the loss grows or pauses (or at once if `force`): for a
    /// loss that comes in steps, one per refused request, which `take`
    /// would report step by step.
    pub(crate) fn take_every(
        &mut self,
        now: SystemTime,
        force: bool,
    ) -> Option<(u64, SystemTime, SystemTime)> {
        let first = self.first?;
        if force || now.duration_since(first).unwrap_or_default() >= REPORT_EVERY {
            self.take(now, true)
        } else {
            None
        }
    }

    pub(crate) fn unreported(&self) -> bool {
        self.seen > self.reported
    }

    /// The losses reported so far (all of those observed, once taken).
    pub(crate) fn reported(&self) -> u64 {
        self.reported
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A loss that grows in steps with pauses between them (one refused
    /// request after another) is reported once per interval by
    /// `take_every`, with the exact sum, where `take` reports each step.
    #[test]
    fn take_every_coalesces_steps_into_one_report_per_interval() {
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1000);
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let (mut stepwise, mut coalesced) = (Loss::default(), Loss::default());
        let (mut reports, mut coalesced_reports, mut sum) = (0, 0, 0);
        let mut total = 0;
        for step in 0..40u64 {
            // Ten records refused every 50 ms, nothing in between.
            total += 10;
            for loss in [&mut stepwise, &mut coalesced] {
                loss.observe(total, at(step * 50));
                loss.observe(total, at(step * 50 + 25));
            }
            if stepwise.take(at(step * 50 + 25), false).is_some() {
                reports += 1;
            }
            if let Some((n, _, _)) = coalesced.take_every(at(step * 50 + 25), false) {
                sum += n;
                coalesced_reports += 1;
            }
        }
        assert_eq!(reports, 40, "take reports every step");
        assert_eq!(coalesced_reports, 1, "one full interval passed");
        let (n, _, _) = coalesced.take_every(at(2000), true).unwrap();
        assert_eq!(sum + n, total);
        assert_eq!(coalesced.reported(), total);
    }
}

/// `N records dropped (what) between T1 and T2`.
pub(crate) fn loss_message(n: u64, what: &str, (first, last): (SystemTime, SystemTime)) -> String {
    let s = if n == 1 { "" } else { "s" };
    format!(
        "{n} record{s} dropped ({what}) between {} and {}",
        rfc3339(first),
        rfc3339(last)
    )
}

/// Ring-level losses, in the order of [`RING_REASONS`].
pub(crate) const RING_LOSSES: usize = 6;

/// The index of each ring-level loss in [`RING_REASONS`] (and in the
/// crash-durable file's loss words).
pub(crate) mod ring_loss {
    pub(crate) const FULL: usize = 0;
    pub(crate) const SHED: usize = 1;
    pub(crate) const TOO_LARGE: usize = 2;
    pub(crate) const DISCARDED: usize = 3;
    pub(crate) const TIMEOUT: usize = 4;
    pub(crate) const CLOSED: usize = 5;
}

/// Why a record never made it into the ring.
pub(crate) const RING_REASONS: [&str; RING_LOSSES] = [
    "ring full",
    "ring above its high-water mark, level below the protected one",
    "record larger than half the ring",
    "discarded by the front end, e.g. a panicking Display",
    "ring full for the whole block timeout",
    "logged after shutdown began",
];
