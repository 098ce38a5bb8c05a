//! Handing the unsent bytes to the output, without waiting: how much to
//! offer (one record per datagram; whole records within a rolling file's
//! room; whole lines into a pipe, keeping a reserve for the notices of a
//! shutdown), a rotation before the next record, and what the outcome of
//! a write does to the books. Bytes taken complete records, counted
//! written or refused; a failure backs off (doubling up to `MAX_BACKOFF`,
//! or as long as the receiver asked), or, where no retry can help, fails
//! the sink for good and counts its records dropped.
//!
//! Invariants: a record is counted written only once its last byte is
//! taken; a reconnecting output sends a record cut by a lost connection
//! again from its start.

use std::io;
use std::time::{Duration, Instant, SystemTime};

use super::{NewFile, SinkState, MAX_BACKOFF, NOTICE_BIT, PIPE_RESERVE, SHUTDOWN_BACKOFF};
use crate::level::Level;
use crate::sink::WriteOutcome;

impl SinkState {
    /// How many of the unsent bytes to offer in one write: all of them,
    /// except for a pipe, where only whole lines that fit the pipe's free
    /// room (less a reserve kept for the shutdown notices, unless `last`)
    /// are offered, so that a reader that stops never leaves a torn line.
    fn offer(&self, last: bool) -> Option<usize> {
        let unsent = self.unsent();
        if self.output.per_record() {
            // One datagram per record (no write is ever partial there).
            return self
                .ends
                .front()
                .map(|&end| ((end & !NOTICE_BIT) - self.written) as usize);
        }
        if let Some(room) = self.output.roll_room() {
            return Some(self.whole_records_within(room));
        }
        let Some(room) = self.output.room() else {
            return Some(unsent);
        };
        let room = if last {
            room
        } else {
            room.saturating_sub(PIPE_RESERVE)
        };
        if room >= unsent {
            return Some(unsent);
        }
        let base = self.written;
        let mut fit = 0;
        for &end in &self.ends {
            let len = (end & !NOTICE_BIT) - base;
            if len as usize > room {
                break;
            }
            fit = len as usize;
        }
        if fit == 0 {
            // Not even the first line fits. A line longer than the whole
            // pipe can only go in pieces; anything else waits for room.
            let first = self
                .ends
                .front()
                .map_or(0, |&e| ((e & !NOTICE_BIT) - base) as usize);
            let Some((whole_pipe, _)) = self.output.pipe_room() else {
                return Some(unsent);
            };
            if first + PIPE_RESERVE > whole_pipe && room > 0 {
                return Some(room.min(unsent));
            }
            return None;
        }
        Some(fit)
    }

    /// Length of the first unsent record (or of its rest, after a short
    /// write).
    fn first_len(&self) -> u64 {
        self.ends
            .front()
            .map_or(0, |&e| (e & !NOTICE_BIT) - self.written)
    }

    /// The unsent bytes up to the last whole record that fits in `room`
    /// (all of them without a bound); at least the first record.
    fn whole_records_within(&self, room: Option<u64>) -> usize {
        let unsent = self.unsent();
        let Some(room) = room else {
            return unsent;
        };
        if room >= unsent as u64 {
            return unsent;
        }
        let mut fit = 0;
        for &end in &self.ends {
            let len = (end & !NOTICE_BIT) - self.written;
            if len > room {
                break;
            }
            fit = len;
        }
        if fit == 0 {
            fit = self.first_len();
        }
        (fit as usize).min(unsent)
    }

    /// A rolling sink: rotates before the next record if its period is
    /// over or it would pass the size limit. Never after a short write
    /// (the rest of that record belongs to the same file). An error: the
    /// output panicked.
    ///
    /// A new file is shown to `on_new_file` before anything is written to
    /// it, and only then is the old one handed to housekeeping.
    fn roll_if_due(&mut self, now: Instant, on_new_file: &mut NewFile<'_>) -> io::Result<()> {
        if self.mid_line || !self.output.rolls() {
            return Ok(());
        }
        let next = self.first_len();
        let before = self.output.current_file().map(|(_, _, id)| id);
        let notice = self.output.rotate_if_due(now, next)?;
        if self.output.current_file().map(|(_, _, id)| id) != before {
            on_new_file(self.durable_view());
            self.output.housekeep()?;
        }
        if let Some(msg) = notice {
            let msg = format!("sink {}: {msg}", self.name);
            self.add_notice(Level::Warn, &msg);
        }
        Ok(())
    }

    /// A rolling sink: reports what its housekeeping thread could not do
    /// (compress, remove), in the sink itself. Returns a notice for the
    /// other sinks if the output panicked (the sink failed).
    pub(in crate::writer) fn housekeeping_notices(
        &mut self,
        now: Instant,
    ) -> Option<(Level, String)> {
        if !self.output.rolls() {
            return None;
        }
        match self.output.housekeeping_errors() {
            Ok(errors) => {
                for e in errors {
                    let msg = format!("sink {}: {e}", self.name);
                    self.add_notice(Level::Warn, &msg);
                }
                None
            }
            Err(e) => self.failed(e, now),
        }
    }

    /// Writes what it can without waiting (beyond what a blocking file
    /// write takes). `last`: the final writes of a shutdown (may use the
    /// pipe reserve). Returns a notice to broadcast if the sink just failed
    /// or recovered.
    pub(in crate::writer) fn write_out(
        &mut self,
        now: Instant,
        last: bool,
        on_new_file: &mut NewFile<'_>,
    ) -> Option<(Level, String)> {
        if self.dead || self.unsent() == 0 {
            return None;
        }
        if !last && self.retry_at.is_some_and(|t| now < t) {
            return None;
        }
        let mut event = None;
        self.held_back = false;
        while self.unsent() > 0 {
            if let Err(e) = self.roll_if_due(now, on_new_file) {
                event = self.failed(e, now);
                break;
            }
            self.start_file_if_new();
            let Some(len) = self.offer(last) else {
                self.blocked_since.get_or_insert(now);
                self.held_back = true;
                break;
            };
            match self.output.write(&self.buf[self.sent..self.sent + len]) {
                WriteOutcome::Wrote(n) => {
                    self.took(n, 0);
                    if n > 0 {
                        self.refusing = false;
                    }
                    if self.error_streak > 0 {
                        event = self.recovered();
                    }
                    if n == 0 {
                        break;
                    }
                }
                WriteOutcome::Refused {
                    bytes,
                    records,
                    error,
                } => {
                    // The receiver answered: it works, and these records
                    // are settled (some refused for good). A refusal is
                    // an error of the write all the same, and one of the
                    // whole request (not a partial success) keeps the
                    // notices about it away from this sink.
                    self.refusing = records == u64::MAX;
                    self.took(bytes, records);
                    self.write_errors += 1;
                    let text = error.to_string();
                    self.last_error = Some(text.clone());
                    self.refusal = Some(text);
                    if self.unpublished_error.is_none() {
                        self.unpublished_error = Some(error);
                    }
                    if self.error_streak > 0 {
                        event = self.recovered();
                    }
                    if bytes == 0 {
                        break;
                    }
                }
                WriteOutcome::WouldBlock => {
                    self.blocked_since.get_or_insert(now);
                    break;
                }
                WriteOutcome::Rejected(e) => {
                    self.reject_front(e);
                }
                WriteOutcome::Failed(e) => {
                    if self.output.reconnects() && self.mid_line {
                        // The connection is gone with part of a record in
                        // it: the receiver sees that part end with the
                        // connection, and the whole record goes again,
                        // from its start, on the next one.
                        let partial = self.written - self.line_start;
                        self.sent -= partial as usize;
                        self.written -= partial;
                        self.mid_line = false;
                    }
                    event = self.failed(e, now);
                    break;
                }
            }
        }
        // Keep the bytes of a record cut by a short write: a reconnect may
        // have to send it again from its start.
        let start = self.sent - (self.written - self.line_start) as usize;
        if self.sent == self.buf.len() {
            self.buf.clear();
            self.sent = 0;
        } else if start > 0 && start >= self.buf.len() / 2 {
            self.buf.drain(..start);
            self.sent -= start;
        }
        // Drained below half while shedding: the gap notice goes in now,
        // even if no record comes to trigger it.
        if self.shedding.is_some() && self.unsent() < self.limit / 2 {
            self.end_shedding();
        }
        event
    }

    /// The output took `n` more bytes: the records they complete are
    /// written, except the first `refused` of them, which the receiver
    /// refused for good (dropped, counted as rejected).
    fn took(&mut self, n: usize, mut refused: u64) {
        self.sent += n;
        self.written += n as u64;
        self.bytes_written += n as u64;
        self.write_calls += 1;
        self.blocked_since = None;
        while let Some(&end) = self.ends.front() {
            if end & !NOTICE_BIT > self.written {
                break;
            }
            if end & NOTICE_BIT == 0 {
                if refused > 0 {
                    refused -= 1;
                    self.dropped_failed += 1;
                    self.dropped_rejected += 1;
                } else {
                    self.records_written += 1;
                }
                self.pending -= 1;
            }
            self.line_start = end & !NOTICE_BIT;
            self.ends.pop_front();
        }
        self.mid_line = self.written > self.line_start;
    }

    /// Drops the record at the front, which the receiver refused for good
    /// (a datagram larger than the socket allows); counted as failed and
    /// reported in every sink.
    fn reject_front(&mut self, e: io::Error) {
        let Some(end) = self.ends.pop_front() else {
            return;
        };
        let len = ((end & !NOTICE_BIT) - self.written) as usize;
        self.sent += len;
        self.written += len as u64;
        self.line_start = end & !NOTICE_BIT;
        if end & NOTICE_BIT == 0 {
            self.pending -= 1;
            self.dropped_failed += 1;
            self.dropped_rejected += 1;
        }
        self.write_errors += 1;
        self.refusal = Some(e.to_string());
        self.last_error = Some(e.to_string());
        if self.unpublished_error.is_none() {
            self.unpublished_error = Some(e);
        }
    }

    /// Records a failed write; returns a notice for the other sinks.
    pub(in crate::writer) fn failed(
        &mut self,
        e: io::Error,
        now: Instant,
    ) -> Option<(Level, String)> {
        self.write_errors += 1;
        self.errors_since_report += 1;
        let wall = SystemTime::now();
        let window = self.error_window.get_or_insert((wall, wall));
        window.1 = wall;
        let text = e.to_string();
        // Errors that no retry can fix: the output is gone (it panicked,
        // or cannot be had), the reader is gone, the descriptor is bad.
        let permanent =
            self.output.is_gone() || (!self.output.reconnects() && crate::sys::is_permanent(&e));
        let first = self.error_streak == 0;
        self.error_streak = self.error_streak.saturating_add(1);
        self.last_error = Some(text.clone());
        if self.unpublished_error.is_none() {
            self.unpublished_error = Some(e);
        }
        if permanent {
            self.dead = true;
            self.dropped_failed += self.pending;
            self.dropped_dead += self.pending;
            self.pending = 0;
            self.buf.clear();
            self.sent = 0;
            self.ends.clear();
            self.line_start = self.written;
            self.mid_line = false;
            self.shedding = None;
            return Some((
                Level::Error,
                format!(
                    "sink {} failed for good ({text}); its records are dropped and counted from now on",
                    self.name
                ),
            ));
        }
        let backoff = match &mut self.shutdown_attempts {
            Some(n) => {
                *n += 1;
                SHUTDOWN_BACKOFF.saturating_mul(1 << (*n - 1).min(7))
            }
            None => Duration::from_millis(10)
                .saturating_mul(1 << self.error_streak.min(7))
                .min(MAX_BACKOFF),
        };
        // A receiver may say how long to wait (OTLP's `Retry-After`).
        let backoff = self.output.take_retry_after().unwrap_or(backoff);
        self.retry_at = Some(now + backoff);
        first.then(|| {
            (
                Level::Error,
                format!(
                    "sink {} write failed ({text}); retrying with back-off, keeping up to {} bytes",
                    self.name, self.limit
                ),
            )
        })
    }

    fn recovered(&mut self) -> Option<(Level, String)> {
        self.error_streak = 0;
        self.retry_at = None;
        let (first, last) = self.error_window.take()?;
        let n = std::mem::take(&mut self.errors_since_report);
        let notice = (
            Level::Warn,
            format!(
                "sink {} recovered after {n} failed write{} between {} and {} (last error: {})",
                self.name,
                if n == 1 { "" } else { "s" },
                crate::text::time::rfc3339(first),
                crate::text::time::rfc3339(last),
                self.last_error.as_deref().unwrap_or("unknown")
            ),
        );
        self.add_notice(notice.0, &notice.1);
        Some(notice)
    }

    /// Flushes a user's writer; records an error for the next flush.
    /// Returns a notice for the other sinks if the writer panicked (the
    /// sink failed).
    pub(in crate::writer) fn flush_output(&mut self, now: Instant) -> Option<(Level, String)> {
        if self.dead {
            return None;
        }
        match self.output.flush() {
            Ok(()) => None,
            Err(e) if self.output.is_gone() => self.failed(e, now),
            Err(e) => {
                self.unpublished_error.get_or_insert(e);
                None
            }
        }
    }
}
