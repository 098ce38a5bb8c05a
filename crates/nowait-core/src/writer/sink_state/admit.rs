//! Taking records in. A record the sink takes is formatted into the
//! buffer, or counted: below the sink's level (or refused by its route) it
//! is filtered, or kept in the backtrace, which a trigger releases ahead of
//! itself; while the sink is behind and its buffer full, records are shed
//! until it has drained to half, and the gap gets its notice where it is.
//!
//! Invariants: a record handed to the sink is pending in the buffer, kept
//! in the backtrace, or counted (filtered, dropped), one of these only;
//! notices go into the buffer tagged with `NOTICE_BIT` and are never
//! counted as records; a format that panics leaves the buffer as it was.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::SystemTime;

use super::{ShedCause, Shedding, SinkState, NOTICE_BIT};
use crate::accounting::loss::loss_message;
use crate::level::Level;
use crate::record::{Notice, Record, Suppressed};
use crate::writer::backtrace::Kept;

impl SinkState {
    /// Gives the sink a backtrace (see `crate::sink::backtrace`).
    pub(crate) fn set_backtrace(&mut self, config: crate::sink::backtrace::BacktraceBuffer) {
        self.backtrace = Some(Box::new(Kept::new(config)));
    }

    /// Formats one record into the sink's buffer, or counts it as dropped;
    /// one below the sink's level is filtered or kept in the backtrace,
    /// and a trigger first releases what the backtrace kept.
    pub(in crate::writer) fn add_record(&mut self, record: &Record<'_>) {
        if record.level() < self.level || !self.route.as_mut().map_or(true, |r| r.takes(record)) {
            match &mut self.backtrace {
                Some(kept) if record.level() >= kept.config.lowest => {
                    self.filtered += kept.keep(record);
                }
                _ => self.filtered += 1,
            }
            return;
        }
        if let Some(kept) = &self.backtrace {
            if record.level() >= kept.config.trigger && kept.len() > 0 {
                self.release_backtrace(record.level());
            }
        }
        self.admit(record, false);
    }

    /// Writes the kept records, oldest first, between two kept notices,
    /// ahead of a trigger of level `trigger`.
    #[cold]
    fn release_backtrace(&mut self, trigger: Level) {
        let Some(mut kept) = self.backtrace.take() else {
            return;
        };
        let n = kept.len();
        let s = if n == 1 { "" } else { "s" };
        let older = match kept.not_kept {
            0 => String::new(),
            1 => "; 1 older one was not kept".to_owned(),
            m => format!("; {m} older ones were not kept"),
        };
        let below = self.level;
        self.add_kept_notice(&format!(
            "--- {n} earlier record{s} below {below}, kept for this {trigger}{older} ---"
        ));
        kept.release(|r| self.admit(r, true));
        self.backtrace_released += n;
        self.add_kept_notice(&format!("--- end of the {n} earlier record{s} ---"));
        self.backtrace = Some(kept);
    }

    /// Writes copies of the kept records, oldest first, between two kept
    /// notices, and keeps them: a later trigger still releases them (and
    /// counts them then). The copies are output as notices are, outside
    /// the record counts, so that each record keeps exactly one outcome.
    /// Nothing for a sink without a backtrace.
    #[cold]
    pub(in crate::writer) fn dump_backtrace(&mut self) {
        let Some(mut kept) = self.backtrace.take() else {
            return;
        };
        let n = kept.len();
        let s = if n == 1 { "" } else { "s" };
        let below = self.level;
        if n == 0 {
            self.add_kept_notice(&format!(
                "--- no recent records below {below} kept, dumped on request ---"
            ));
        } else {
            self.add_kept_notice(&format!(
                "--- {n} recent record{s} below {below}, dumped on request (still kept) ---"
            ));
            kept.each(|r| self.add_copy(r));
            self.add_kept_notice(&format!("--- end of the {n} recent record{s} dumped ---"));
        }
        self.backtrace = Some(kept);
    }

    /// Formats a copy of a kept record as a kept one, outside the record
    /// counts (see [`dump_backtrace`](Self::dump_backtrace)).
    fn add_copy(&mut self, record: &Record<'_>) {
        if self.dead {
            return;
        }
        let before = self.buf.len();
        let format = &mut self.format;
        let buf = &mut self.buf;
        if catch_unwind(AssertUnwindSafe(|| format.format_kept(record, buf))).is_err() {
            self.buf.truncate(before);
            return;
        }
        self.appended += (self.buf.len() - before) as u64;
        self.ends.push_back(self.appended | NOTICE_BIT);
    }

    /// At shutdown: the records still kept are filtered (never written).
    pub(in crate::writer) fn discard_backtrace(&mut self) {
        if let Some(kept) = &mut self.backtrace {
            self.filtered += kept.discard();
        }
    }

    /// Formats a record that the sink takes into its buffer (`kept`: one
    /// a trigger released), or counts it as dropped.
    fn admit(&mut self, record: &Record<'_>, kept: bool) {
        if self.dead {
            self.dropped_failed += 1;
            self.dropped_dead += 1;
            return;
        }
        if self.shedding.is_some() {
            if self.unsent() >= self.limit / 2 {
                self.count_shed();
                return;
            }
            self.end_shedding();
        } else if self.unsent() >= self.limit && self.behind() {
            self.shedding = Some(Shedding {
                since: SystemTime::now(),
                cause: if self.failing() {
                    ShedCause::Failing
                } else {
                    ShedCause::Slow
                },
                dropped: 0,
            });
            self.count_shed();
            return;
        }
        let before = self.buf.len();
        let format = &mut self.format;
        let buf = &mut self.buf;
        let formatted = catch_unwind(AssertUnwindSafe(|| {
            if kept {
                format.format_kept(record, buf);
            } else {
                format.format(record, buf);
            }
        }));
        if formatted.is_err() {
            self.buf.truncate(before);
            self.dropped_format += 1;
            return;
        }
        self.appended += (self.buf.len() - before) as u64;
        self.ends.push_back(self.appended);
        self.pending += 1;
    }

    fn count_shed(&mut self) {
        let Some(s) = &mut self.shedding else { return };
        s.dropped += 1;
        match s.cause {
            ShedCause::Slow => {
                self.dropped_overflow += 1;
                self.shed_slow += 1;
            }
            ShedCause::Failing => {
                self.dropped_failed += 1;
                self.shed_failing += 1;
            }
        }
    }

    /// The gap notice for a shedding episode, in this sink, where the gap is.
    pub(super) fn end_shedding(&mut self) {
        let Some(s) = self.shedding.take() else {
            return;
        };
        if s.dropped == 0 {
            return;
        }
        let why = self.shed_reason(s.cause);
        let msg = loss_message(s.dropped, &why, (s.since, SystemTime::now()));
        self.add_notice(Level::Warn, &msg);
    }

    /// Why records are shed, for the notices in the other sinks.
    pub(in crate::writer) fn shed_reason_slow(&self) -> String {
        self.shed_reason(ShedCause::Slow)
    }

    /// See [`SinkState::shed_reason_slow`].
    pub(in crate::writer) fn shed_reason_failing(&self) -> String {
        self.shed_reason(ShedCause::Failing)
    }

    /// Whether a loss of this sink waits to be reported to the others.
    pub(in crate::writer) fn losses_unreported(&self) -> bool {
        [
            &self.dead_loss,
            &self.format_loss,
            &self.reject_loss,
            &self.shed_slow_loss,
            &self.shed_failing_loss,
        ]
        .iter()
        .any(|l| l.unreported())
    }

    pub(super) fn shed_reason(&self, cause: ShedCause) -> String {
        match cause {
            ShedCause::Slow => format!("sink {} too slow, its buffer was full", self.name),
            ShedCause::Failing => format!(
                "sink {} write failed: {}",
                self.name,
                self.last_error.as_deref().unwrap_or("unknown error")
            ),
        }
    }

    /// Formats a notice into the buffer (notices may exceed the bound a
    /// little: they are few and they explain the gap).
    pub(in crate::writer) fn add_notice(&mut self, level: Level, message: &str) {
        self.push_notice(&Notice::new(level, SystemTime::now(), message));
    }

    /// Adds a notice of suppressed calls (structured: formats may show
    /// its count, site and rule as fields).
    pub(in crate::writer) fn add_suppressed_notice(&mut self, message: &str, info: Suppressed<'_>) {
        let notice = Notice::new(Level::Info, SystemTime::now(), message).with_suppressed(info);
        self.push_notice(&notice);
    }

    fn push_notice(&mut self, notice: &Notice<'_>) {
        if self.dead {
            return;
        }
        let before = self.buf.len();
        let format = &mut self.format;
        let buf = &mut self.buf;
        if catch_unwind(AssertUnwindSafe(|| format.notice(notice, buf))).is_err() {
            self.buf.truncate(before);
            return;
        }
        self.appended += (self.buf.len() - before) as u64;
        self.ends.push_back(self.appended | NOTICE_BIT);
    }

    /// Formats a line around released records (nothing if the format
    /// marks the records themselves).
    fn add_kept_notice(&mut self, message: &str) {
        if self.dead {
            return;
        }
        let before = self.buf.len();
        let notice = Notice::new(Level::Info, SystemTime::now(), message);
        let format = &mut self.format;
        let buf = &mut self.buf;
        if catch_unwind(AssertUnwindSafe(|| format.kept_notice(&notice, buf))).is_err() {
            self.buf.truncate(before);
            return;
        }
        if self.buf.len() > before {
            self.appended += (self.buf.len() - before) as u64;
            self.ends.push_back(self.appended | NOTICE_BIT);
        }
    }
}
