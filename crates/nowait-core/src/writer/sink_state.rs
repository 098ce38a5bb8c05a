//! The writer's books for one sink: the bytes formatted and not yet
//! written, where the sink's output stands (behind, failing, shedding,
//! retrying), and its counters until they are published. The sink itself
//! (its output, how it opens) is [`crate::sink`]'s; this file decides
//! what to hand it and counts what became of every record.

use std::collections::VecDeque;
use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime};

use super::backtrace::Kept;
use crate::accounting::loss::{loss_message, Loss};
use crate::format::Format;
use crate::record::{Notice, Record, Suppressed};
use crate::shared::Shared;
use crate::sink::{Opened, Output, Plan, WriteOutcome};

/// Told when a sink has opened a new file and written nothing to it yet
/// (the crash-durable ring records it: `DurableWriter::note_new_file`).
pub(super) type NewFile<'a> = dyn FnMut(crate::durable::SinkView<'_>) + 'a;
use crate::level::Level;

/// Longest back-off between retries of a failing sink.
const MAX_BACKOFF: Duration = Duration::from_secs(1);
/// At shutdown, a failing sink gets at most this many more attempts...
pub(super) const SHUTDOWN_ATTEMPTS: u32 = 4;
/// ...the first at once, then after this back-off, doubled each time
/// (25, 50, 100 ms: all of them within about 0.2 s), or after the delay
/// the receiver asked for if it fits before the deadline.
const SHUTDOWN_BACKOFF: Duration = Duration::from_millis(25);
/// A sink with bytes pending that took none for this long is stalled: no
/// flush or shutdown waits for it.
pub(super) const STALL_AFTER: Duration = Duration::from_millis(100);
/// Room kept free in a pipe for the notices of a shutdown, so that a pipe
/// nobody reads can still say what it missed. The kernel stores a pipe in
/// 4 KiB pages and only the last one takes a small write, so the reserve is
/// a page plus the notices (best effort: a pipe shared with other writers
/// can still be full).
const PIPE_RESERVE: usize = 4096 + 512;

/// End offsets in `SinkState::buf` coordinates (absolute byte counts), with
/// this bit set for notices, which are not counted as records.
const NOTICE_BIT: u64 = 1 << 63;

/// Why a sink is shedding records (its buffer is full).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ShedCause {
    /// The reader is slower than the records (or stalled).
    Slow,
    /// Writes fail (a full disk): the records wait for a retry.
    Failing,
}

/// A sink's shedding episode: from the moment its buffer is full until it
/// has drained to half, when the notice goes in exactly at the gap.
#[derive(Debug)]
struct Shedding {
    since: SystemTime,
    cause: ShedCause,
    dropped: u64,
}

/// One sink as the writer thread holds it.
pub(crate) struct SinkState {
    pub(super) name: String,
    pub(crate) output: Output,
    format: Box<dyn Format>,
    /// Whether completeness is wanted (files, custom writers).
    pub(crate) durable: bool,
    /// Records below this level are skipped (counted in `filtered`), or
    /// kept in `backtrace`.
    pub(crate) level: Level,
    /// The records below `level` kept until a trigger or the shutdown
    /// (see `crate::sink::backtrace`); counted nowhere while kept.
    backtrace: Option<Box<Kept>>,
    /// The sink's target filter (`Sink::filter`), once the writer runs.
    pub(super) route: Option<super::route::Route>,
    /// Formatted bytes; `buf[sent..]` are not yet written.
    buf: Vec<u8>,
    sent: usize,
    /// Absolute end offset of each line in `buf[sent..]`, oldest first.
    ends: VecDeque<u64>,
    /// Bytes ever appended / written (absolute offsets).
    pub(super) appended: u64,
    pub(super) written: u64,
    /// Records among `ends` (notices excluded).
    pending: u64,
    /// Bound on unsent bytes; past it, records are dropped for this sink.
    limit: usize,
    /// Write as soon as this many bytes are unsent.
    pub(super) batch: usize,
    /// The sink failed for good (closed pipe, bad descriptor).
    pub(super) dead: bool,
    retry_at: Option<Instant>,
    error_streak: u32,
    errors_since_report: u64,
    error_window: Option<(SystemTime, SystemTime)>,
    pub(super) last_error: Option<String>,
    /// An error not yet handed to `SinkCounters::flush_error`.
    unpublished_error: Option<io::Error>,
    /// Since when writes would block, with bytes pending.
    blocked_since: Option<Instant>,
    /// The last byte written did not end a line (a short write).
    mid_line: bool,
    /// Absolute offset where the entry at the front of `ends` starts (the
    /// end of the last one written): a connection lost mid-record sends
    /// that record again from here on the next connection.
    line_start: u64,
    /// Bytes are held back by the pipe reserve, not refused by the kernel:
    /// `poll` would report room, so retry on the writer's timer instead.
    held_back: bool,
    shedding: Option<Shedding>,
    /// The file the format's [`Format::file_start`] bytes were last put
    /// in front of (see [`SinkState::start_file`]).
    started_file: Option<crate::sys::FileId>,
    // Counters, published to `Shared::sinks` after each round.
    records_written: u64,
    bytes_written: u64,
    write_calls: u64,
    dropped_overflow: u64,
    dropped_failed: u64,
    /// Part of `dropped_failed` dropped because the sink is dead; reported
    /// in the other sinks.
    pub(super) dropped_dead: u64,
    pub(super) dropped_format: u64,
    filtered: u64,
    /// Records a trigger released from the backtrace (each also counted
    /// in the outcome it then had).
    backtrace_released: u64,
    /// Records the receiver refused for good (a datagram too large, an
    /// OTLP 400 or partial success); part of `dropped_failed`, reported in
    /// every sink.
    pub(super) dropped_rejected: u64,
    pub(super) abandoned: u64,
    /// Failed writes, and requests the receiver refused.
    write_errors: u64,
    pub(super) dead_loss: Loss,
    pub(super) format_loss: Loss,
    /// Refused records, reported to the other sinks (at most once a
    /// `REPORT_EVERY`).
    pub(super) reject_loss: Loss,
    /// Refused records, reported to this sink itself once its receiver
    /// takes a request again (never through the sink refusing them).
    pub(super) reject_self_loss: Loss,
    /// The receiver's last refusal, the reason the refusal notices give
    /// (`last_error` may meanwhile hold another failure).
    pub(super) refusal: Option<String>,
    /// The receiver refused the last request whole: notices about its
    /// refusals wait until it takes one.
    pub(super) refusing: bool,
    /// Records shed while the sink was too slow / failing, reported to
    /// the other sinks as they happen (the gap notice in the sink itself
    /// comes once it drained).
    pub(super) shed_slow: u64,
    pub(super) shed_failing: u64,
    pub(super) shed_slow_loss: Loss,
    pub(super) shed_failing_loss: Loss,
    /// During a shutdown: the attempts a failing sink has had since it
    /// began (see [`SHUTDOWN_ATTEMPTS`]).
    shutdown_attempts: Option<u32>,
}

impl SinkState {
    pub(crate) fn new(
        name: String,
        output: Output,
        format: Box<dyn Format>,
        durable: bool,
        limit: usize,
        batch: usize,
    ) -> Self {
        SinkState {
            name,
            output,
            format,
            durable,
            level: Level::Trace,
            backtrace: None,
            route: None,
            buf: Vec::with_capacity(batch.min(limit) + 4096),
            sent: 0,
            ends: VecDeque::with_capacity(1024),
            appended: 0,
            written: 0,
            pending: 0,
            limit,
            batch: batch.min(limit),
            dead: false,
            retry_at: None,
            error_streak: 0,
            errors_since_report: 0,
            error_window: None,
            last_error: None,
            unpublished_error: None,
            blocked_since: None,
            mid_line: false,
            line_start: 0,
            held_back: false,
            shedding: None,
            records_written: 0,
            bytes_written: 0,
            write_calls: 0,
            dropped_overflow: 0,
            dropped_failed: 0,
            dropped_dead: 0,
            dropped_format: 0,
            filtered: 0,
            backtrace_released: 0,
            dropped_rejected: 0,
            abandoned: 0,
            write_errors: 0,
            dead_loss: Loss::default(),
            format_loss: Loss::default(),
            reject_loss: Loss::default(),
            reject_self_loss: Loss::default(),
            refusal: None,
            refusing: false,
            shed_slow: 0,
            shed_failing: 0,
            shed_slow_loss: Loss::default(),
            shed_failing_loss: Loss::default(),
            shutdown_attempts: None,
            started_file: None,
        }
    }

    /// The books of a sink just opened from `plan`, which `batch` bytes
    /// of formatted records make worth a write.
    pub(crate) fn open(plan: &Plan, opened: Opened, batch: usize) -> Self {
        let format = plan.make_format(&opened);
        let mut state = SinkState::new(
            plan.name.clone(),
            opened.output,
            format,
            opened.durable,
            plan.buffer_size,
            batch,
        );
        state.level = plan.level;
        if let Some(bt) = plan.backtrace {
            state.set_backtrace(bt);
        }
        state.started_file = state.output.current_file().map(|(_, _, id)| id);
        state.start_file();
        state
    }

    /// Puts what the format starts each file with (a binary log's header
    /// and catalog; nothing for text) in front of the unsent bytes, at a
    /// record boundary, as a notice is counted: the first bytes the next
    /// file gets.
    fn start_file(&mut self) {
        let mut prologue = Vec::new();
        let format = &mut self.format;
        if catch_unwind(AssertUnwindSafe(|| format.file_start(&mut prologue))).is_err()
            || prologue.is_empty()
        {
            return;
        }
        let n = prologue.len() as u64;
        self.buf.splice(self.sent..self.sent, prologue);
        for end in &mut self.ends {
            *end += n;
        }
        self.ends.push_front((self.written + n) | NOTICE_BIT);
        self.appended += n;
    }

    /// A file sink now writes another file than the one its format last
    /// started (rotated, reopened): start it.
    fn start_file_if_new(&mut self) {
        if self.mid_line {
            return;
        }
        let now = self.output.current_file().map(|(_, _, id)| id);
        if now.is_some() && now != self.started_file {
            self.started_file = now;
            self.start_file();
        }
    }

    /// What the crash-durable ring mirrors of this sink (also what
    /// [`NewFile`] is shown).
    pub(super) fn durable_view(&self) -> crate::durable::SinkView<'_> {
        crate::durable::SinkView {
            file: self.output.current_file(),
            unsent: &self.buf[self.sent..],
            written: self.written,
            appended: self.appended,
        }
    }

    pub(super) fn unsent(&self) -> usize {
        self.buf.len() - self.sent
    }

    pub(super) fn failing(&self) -> bool {
        self.error_streak > 0
    }

    /// Whether the sink is behind: failing, or its last write left bytes it
    /// would not take. Only a sink behind sheds. One that took everything
    /// it was offered is not, whatever the size its records formatted to
    /// in between: a chunk of ring bytes can format to several times the
    /// buffer's bound (a timestamp, level and target per short record),
    /// and dropping those for a healthy file would be loss without cause.
    fn behind(&self) -> bool {
        self.failing() || self.blocked_since.is_some()
    }

    pub(super) fn stalled(&self, now: Instant) -> bool {
        let after = self.output.stall_after(STALL_AFTER);
        self.blocked_since
            .is_some_and(|t| now.saturating_duration_since(t) >= after)
    }

    /// Whether a flush need not wait for this sink: it failed, is failing,
    /// or is stalled; for a durable flush (the panic hook, write-through)
    /// also while it sheds, since its buffer is full anyway.
    pub(super) fn settled(&self, now: Instant, durable: bool) -> bool {
        self.dead || self.failing() || self.stalled(now) || (durable && self.shedding.is_some())
    }

    /// Whether a shutdown need not wait for this sink any more: nothing
    /// pending, failed, stalled, or failing with no attempt left before
    /// `until` (see [`SinkState::begin_shutdown`]).
    pub(super) fn done_for_shutdown(&self, now: Instant, until: Instant) -> bool {
        self.unsent() == 0 || self.dead || self.stalled(now) || self.gave_up(until)
    }

    /// A shutdown began: a failing sink is tried again at once, then at
    /// most [`SHUTDOWN_ATTEMPTS`] times in all, with back-off.
    pub(super) fn begin_shutdown(&mut self) {
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
    pub(super) fn gave_up_reason(&self) -> String {
        let n = self.shutdown_attempts.unwrap_or(0);
        let last = self.last_error.as_deref().unwrap_or("unknown error");
        match n {
            0 => format!("gave up, its next attempt was due past the deadline: {last}"),
            1 => format!("gave up after 1 attempt: {last}"),
            n => format!("gave up after {n} attempts: {last}"),
        }
    }

    /// Whether it has bytes to write but no descriptor to poll for room
    /// (a user's writer that returned `WouldBlock`): retry on a timer.
    pub(super) fn needs_retry_timer(&self) -> bool {
        self.waiting_for_room()
            && self.output.poll_fd().is_none()
            && self.output.poll_read_fd().is_none()
    }

    /// Whether a poll for `POLLOUT` should wake the writer for this sink.
    pub(super) fn waiting_for_room(&self) -> bool {
        !self.dead && self.unsent() > 0 && self.blocked_since.is_some() && !self.held_back
    }

    /// When a failing sink is due for its next try.
    pub(super) fn retry_at(&self) -> Option<Instant> {
        self.retry_at.filter(|_| !self.dead && self.unsent() > 0)
    }

    /// Gives the sink a backtrace (see `crate::sink::backtrace`).
    pub(crate) fn set_backtrace(&mut self, config: crate::sink::backtrace::BacktraceBuffer) {
        self.backtrace = Some(Box::new(Kept::new(config)));
    }

    /// Formats one record into the sink's buffer, or counts it as dropped;
    /// one below the sink's level is filtered or kept in the backtrace,
    /// and a trigger first releases what the backtrace kept.
    pub(super) fn add_record(&mut self, record: &Record<'_>) {
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
    pub(super) fn dump_backtrace(&mut self) {
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
    pub(super) fn discard_backtrace(&mut self) {
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
    fn end_shedding(&mut self) {
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
    pub(super) fn shed_reason_slow(&self) -> String {
        self.shed_reason(ShedCause::Slow)
    }

    /// See [`SinkState::shed_reason_slow`].
    pub(super) fn shed_reason_failing(&self) -> String {
        self.shed_reason(ShedCause::Failing)
    }

    /// Whether a loss of this sink waits to be reported to the others.
    pub(super) fn losses_unreported(&self) -> bool {
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

    fn shed_reason(&self, cause: ShedCause) -> String {
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
    pub(super) fn add_notice(&mut self, level: Level, message: &str) {
        self.push_notice(&Notice::new(level, SystemTime::now(), message));
    }

    /// Adds a notice of suppressed calls (structured: formats may show
    /// its count, site and rule as fields).
    pub(super) fn add_suppressed_notice(&mut self, message: &str, info: Suppressed<'_>) {
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
    pub(super) fn housekeeping_notices(&mut self, now: Instant) -> Option<(Level, String)> {
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
    pub(super) fn write_out(
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
    pub(super) fn failed(&mut self, e: io::Error, now: Instant) -> Option<(Level, String)> {
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
    pub(super) fn abandon_pending(&mut self) -> (u64, u64, Option<String>) {
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
    pub(super) fn abandon_rest(&mut self) -> u64 {
        let n = self.pending;
        if self.failing() {
            self.dropped_failed += n;
        } else {
            self.abandoned += n;
        }
        self.pending = 0;
        n
    }

    /// Flushes a user's writer; records an error for the next flush.
    /// Returns a notice for the other sinks if the writer panicked (the
    /// sink failed).
    pub(super) fn flush_output(&mut self, now: Instant) -> Option<(Level, String)> {
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

    /// Copies the counters into the shared ones.
    pub(super) fn publish(&mut self, shared: &Shared, index: usize, now: Instant) {
        let c = &shared.sinks[index];
        c.records_written
            .store(self.records_written, Ordering::Relaxed);
        c.bytes_written.store(self.bytes_written, Ordering::Relaxed);
        c.write_calls.store(self.write_calls, Ordering::Relaxed);
        c.dropped_overflow
            .store(self.dropped_overflow, Ordering::Relaxed);
        c.dropped_failed
            .store(self.dropped_failed, Ordering::Relaxed);
        c.dropped_format
            .store(self.dropped_format, Ordering::Relaxed);
        c.filtered.store(self.filtered, Ordering::Relaxed);
        c.backtrace_released
            .store(self.backtrace_released, Ordering::Relaxed);
        c.backtrace_kept.store(
            self.backtrace.as_ref().map_or(0, |k| k.len()),
            Ordering::Relaxed,
        );
        c.abandoned.store(self.abandoned, Ordering::Relaxed);
        c.write_errors.store(self.write_errors, Ordering::Relaxed);
        c.dropped_rejected
            .store(self.dropped_rejected, Ordering::Relaxed);
        if let Some((rotations, errors)) = self.output.rotations() {
            c.rotations.store(rotations, Ordering::Relaxed);
            c.rotation_errors.store(errors, Ordering::Relaxed);
        }
        c.pending_bytes
            .store(self.unsent() as u64, Ordering::Relaxed);
        c.pending_records.store(self.pending, Ordering::Relaxed);
        c.stalled.store(self.stalled(now), Ordering::Relaxed);
        if let Some(e) = self.unpublished_error.take() {
            match c.flush_error.try_lock() {
                Ok(mut slot) => {
                    slot.get_or_insert(e);
                }
                Err(_) => self.unpublished_error = Some(e),
            }
        }
        if self.write_errors > 0 {
            if let Ok(mut last) = c.last_error.try_lock() {
                if *last != self.last_error {
                    last.clone_from(&self.last_error);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::Plain;

    fn sink() -> SinkState {
        let output = Output::Gone("test".into());
        SinkState::new("t".into(), output, Box::new(Plain), false, 1 << 20, 1 << 20)
    }

    fn notice(message: &str) -> Vec<u8> {
        let mut out = Vec::new();
        let n = Notice::new(Level::Warn, SystemTime::now(), message);
        Plain.notice(&n, &mut out);
        out
    }

    /// Records abandoned at shutdown take nothing else with them: the
    /// notices queued among them (what they say about earlier losses) stay
    /// queued, in order, and the bookkeeping still adds up.
    #[test]
    fn abandoning_records_keeps_the_notices_queued_among_them() {
        let mut s = sink();
        s.add_record(&Record::new(Level::Info, 0, b"r1"));
        s.add_notice(Level::Warn, "5 records dropped");
        s.add_record(&Record::new(Level::Info, 0, b"r2"));
        s.add_notice(Level::Warn, "7 records dropped");
        s.add_record(&Record::new(Level::Info, 0, b"r3"));
        let (n, held, shed) = s.abandon_pending();
        assert_eq!((n, held, shed, s.pending, s.abandoned), (3, 0, None, 0, 3));
        let want = [notice("5 records dropped"), notice("7 records dropped")].concat();
        assert_eq!(&s.buf[s.sent..], &want[..]);
        assert_eq!(s.ends.len(), 2);
        assert!(s.ends.iter().all(|e| e & NOTICE_BIT != 0));
        assert_eq!(s.appended - s.written, want.len() as u64);
        assert_eq!(s.ends.back().map(|e| e & !NOTICE_BIT), Some(s.appended));
    }

    /// A record cut by a short write keeps its tail (so the next bytes
    /// start a line), then come the queued notices.
    #[test]
    fn abandoning_after_a_short_write_keeps_the_torn_tail_then_the_notices() {
        let mut s = sink();
        s.add_record(&Record::new(Level::Info, 0, b"first"));
        s.add_notice(Level::Warn, "3 records dropped");
        s.add_record(&Record::new(Level::Info, 0, b"second"));
        // The output took "fir" of "first\n".
        s.sent = 3;
        s.written = 3;
        s.mid_line = true;
        let (n, _, _) = s.abandon_pending();
        assert_eq!(n, 2, "the torn record is counted too");
        let want = [b"st\n".to_vec(), notice("3 records dropped")].concat();
        assert_eq!(&s.buf[s.sent..], &want[..]);
        assert_eq!(s.appended - s.written, want.len() as u64);
        assert_eq!(s.ends.len(), 2);
    }

    /// Runs `f` on a thread marked as a writer thread, as the writer's
    /// calls into outputs are: nowait's panic hook, if a test installed
    /// it, notes a panic there instead of logging it into live loggers.
    fn on_writer_thread<R: Send>(f: impl FnOnce() -> R + Send) -> R {
        std::thread::scope(|scope| {
            scope
                .spawn(|| {
                    crate::shared::Shared::mark_writer_thread();
                    f()
                })
                .join()
                .unwrap()
        })
    }

    /// An output whose code panics (nowait's own, not a user's writer):
    /// the panic stays in the output. Its sink fails for good, its pending
    /// records and every later one are counted as dropped for a failed
    /// sink, the other sinks get the notice, and the broken output is
    /// never called again.
    #[test]
    fn a_panicking_output_fails_its_sink_for_good_with_every_record_counted() {
        let mut s = SinkState::new(
            "t".into(),
            Output::Panicking,
            Box::new(Plain),
            false,
            1 << 20,
            1 << 20,
        );
        s.add_record(&Record::new(Level::Info, 0, b"r1"));
        s.add_notice(Level::Warn, "3 records dropped");
        s.add_record(&Record::new(Level::Info, 0, b"r2"));
        let now = Instant::now();
        let (event, mut s) = on_writer_thread(move || (s.write_out(now, false, &mut |_| {}), s));
        let (level, msg) = event.expect("a notice for the other sinks");
        assert_eq!(level, Level::Error);
        assert!(
            msg.starts_with("sink t failed for good (the sink's output panicked, a nowait bug: ")
                && msg.contains("an output's bug"),
            "{msg}"
        );
        assert!(s.dead && s.output.is_gone(), "{:?}", s.output);
        assert_eq!(
            (
                s.pending,
                s.records_written,
                s.dropped_failed,
                s.dropped_dead
            ),
            (0, 0, 2, 2)
        );
        assert_eq!(s.write_errors, 1);
        s.add_record(&Record::new(Level::Info, 0, b"r3"));
        assert_eq!((s.dropped_failed, s.dropped_dead), (3, 3));
        assert_eq!(
            s.write_out(now, false, &mut |_| {}),
            None,
            "a failed sink is not written"
        );
        let (n, held, shed) = s.abandon_pending();
        assert_eq!((n, held, shed, s.abandoned), (0, 0, None, 0));
    }

    /// A user's writer whose flush panics fails its sink the same way.
    #[test]
    fn a_writer_panicking_in_flush_fails_its_sink_for_good() {
        struct FlushBomb;
        impl std::io::Write for FlushBomb {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                Ok(buf.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                panic!("flush bug")
            }
        }
        let output = Output::Writer(Box::new(FlushBomb));
        let mut s = SinkState::new("w".into(), output, Box::new(Plain), true, 1 << 20, 1 << 20);
        s.add_record(&Record::new(Level::Info, 0, b"r1"));
        let now = Instant::now();
        let (written, event, mut s) = on_writer_thread(move || {
            let written = s.write_out(now, false, &mut |_| {});
            let event = s.flush_output(now);
            (written, event, s)
        });
        assert_eq!(written, None);
        assert_eq!(s.records_written, 1);
        let (_, msg) = event.expect("a notice for the other sinks");
        assert!(
            msg.contains("sink w failed for good (the sink's writer panicked)"),
            "{msg}"
        );
        assert!(s.dead && s.output.is_gone());
        s.add_record(&Record::new(Level::Info, 0, b"r2"));
        assert_eq!((s.records_written, s.dropped_dead), (1, 1));
    }
}
