//! A sink while the logger shuts down: a failing sink gets at most
//! `SHUTDOWN_ATTEMPTS` more tries, with back-off, and what is still
//! pending at the end is abandoned, counted (dropped for failure if the
//! sink is failing). The records an I/O thread is writing stay pending
//! until it finishes them or the end comes; the notices queued among the
//! abandoned records, and the tail of a record cut by a short write, stay
//! queued.

use std::time::{Instant, SystemTime};

use super::{SinkState, NOTICE_BIT, SHUTDOWN_ATTEMPTS};
use crate::accounting::loss::loss_message;

impl SinkState {
    /// Whether a shutdown need not wait for this sink any more: nothing
    /// pending, failed, stalled, or failing with no attempt left before
    /// `until` (see [`SinkState::begin_shutdown`]).
    pub(in crate::writer) fn done_for_shutdown(&self, now: Instant, until: Instant) -> bool {
        self.unsent() == 0 || self.dead || self.stalled(now) || self.gave_up(until)
    }

    /// A shutdown began: a failing sink is tried again at once, then at
    /// most [`SHUTDOWN_ATTEMPTS`] times in all, with back-off.
    pub(in crate::writer) fn begin_shutdown(&mut self) {
        self.shutdown_attempts = Some(0);
        if self.failing() {
            self.retry_at = None;
        }
    }

    /// Failing, with no attempt left: all made, or the next one due
    /// after `until`.
    fn gave_up(&self, until: Instant) -> bool {
        self.failing()
            && (self.shutdown_attempts.unwrap_or(0) >= SHUTDOWN_ATTEMPTS
                || self.retry_at.is_some_and(|t| t > until))
    }

    /// Why a shutdown stopped waiting for this failing sink: the attempts
    /// it had since the shutdown began and the last error.
    pub(in crate::writer) fn gave_up_reason(&self) -> String {
        let n = self.shutdown_attempts.unwrap_or(0);
        let last = self.last_error.as_deref().unwrap_or("unknown error");
        match n {
            0 => format!("gave up, its next attempt was due past the deadline: {last}"),
            1 => format!("gave up after 1 attempt: {last}"),
            n => format!("gave up after {n} attempts: {last}"),
        }
    }

    /// At shutdown: the records still pending (not written, not yet
    /// counted) become abandoned for this sink (dropped for failure if it is
    /// failing), and a shedding episode still open gets its notice. Keeps
    /// the rest of a record that was cut by a short write (it may still
    /// complete) but counts that record too, and keeps the notices still
    /// queued among the abandoned records. The records an I/O thread of
    /// the sink is writing right now (at most a chunk) stay pending: they
    /// are counted written if it finishes them, abandoned by
    /// [`SinkState::abandon_rest`] if not.
    /// Returns how many records were abandoned, how many stay pending, and
    /// the shedding notice.
    pub(in crate::writer) fn abandon_pending(&mut self) -> (u64, u64, Option<String>) {
        let shed = self.shedding.take().and_then(|s| {
            (s.dropped > 0).then(|| {
                loss_message(
                    s.dropped,
                    &self.shed_reason(s.cause),
                    (s.since, SystemTime::now()),
                )
            })
        });
        // The records the sink's I/O thread holds (and the whole of the
        // last one it holds a part of) are kept as they are.
        let hold_to = self.written + self.output.abandon_held() as u64;
        let mut start = self.written;
        let mut entries = self.ends.iter().copied().peekable();
        let mut held = 0u64;
        let mut held_entries = Vec::new();
        while let Some(&entry) = entries.peek() {
            if start >= hold_to {
                break;
            }
            entries.next();
            held_entries.push(entry);
            if entry & NOTICE_BIT == 0 {
                held += 1;
            }
            start = entry & !NOTICE_BIT;
        }
        let n = self.pending - held;
        if self.failing() {
            self.dropped_failed += n;
        } else {
            self.abandoned += n;
        }
        self.pending = held;
        // Keep a torn line's tail, so that what follows starts a line, and
        // the notices still queued (a shedding episode's gap notice, a
        // failure's): the records around them are abandoned, but what they
        // say about earlier losses must still reach the output.
        let mut torn = false;
        if held_entries.is_empty() && self.mid_line {
            if let Some(end) = entries.next() {
                start = end & !NOTICE_BIT;
                torn = true;
            }
        }
        let keep = (start - self.written) as usize;
        let mut notices = Vec::new();
        let mut notice_lens = Vec::new();
        for entry in entries {
            let end = entry & !NOTICE_BIT;
            if entry & NOTICE_BIT != 0 {
                let from = self.sent + (start - self.written) as usize;
                let to = self.sent + (end - self.written) as usize;
                notices.extend_from_slice(&self.buf[from..to]);
                notice_lens.push(to - from);
            }
            start = end;
        }
        self.buf.truncate(self.sent + keep);
        self.appended = self.written + keep as u64;
        self.ends.clear();
        self.ends.extend(held_entries);
        if torn {
            self.ends.push_back(self.appended | NOTICE_BIT);
        }
        self.buf.extend_from_slice(&notices);
        for len in notice_lens {
            self.appended += len as u64;
            self.ends.push_back(self.appended | NOTICE_BIT);
        }
        (n, held, shed)
    }

    /// At the very end of a shutdown: records still pending (an I/O
    /// thread did not finish them in time) are abandoned. Returns how many.
    pub(in crate::writer) fn abandon_rest(&mut self) -> u64 {
        let n = self.pending;
        if self.failing() {
            self.dropped_failed += n;
        } else {
            self.abandoned += n;
        }
        self.pending = 0;
        n
    }
}
