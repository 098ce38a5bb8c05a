//! The writer's books for one sink: the bytes formatted and not yet
//! written, where the sink's output stands (behind, failing, shedding,
//! retrying), and its counters until they are published. The sink itself
//! (its output, how it opens) is [`crate::sink`]'s; this module decides
//! what to hand it and counts what became of every record.
//!
//! The books: `buf[sent..]` are the unsent bytes, `appended - written` of
//! them; `ends` holds the absolute end offset of each line among them,
//! oldest first, a notice's tagged with `NOTICE_BIT`; `pending` counts the
//! records (the untagged ends). Every record the sink is handed is in the
//! end counted once: written, filtered, or dropped or abandoned for one
//! reason (`backtrace_released` counts records a trigger released on top
//! of the outcome they then had).
//!
//! A record's way through them, a file each: `admit` takes it in
//! (formatted, filtered, kept for a backtrace, or shed), `write` hands the
//! bytes to the output and settles them (written, refused, failed), and
//! `shutdown` abandons what is left when the logger stops. This file holds
//! the books, where the output stands, and the publishing of the counters.

mod admit;
mod shutdown;
#[cfg(test)]
mod tests;
mod write;

use std::collections::VecDeque;
use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime};

use super::backtrace::Kept;
use crate::accounting::loss::Loss;
use crate::format::Format;
use crate::level::Level;
use crate::shared::Shared;
use crate::sink::{Opened, Output, Plan};

/// Told when a sink has opened a new file and written nothing to it yet
/// (the crash-durable ring records it: `DurableWriter::note_new_file`).
pub(super) type NewFile<'a> = dyn FnMut(crate::durable::SinkView<'_>) + 'a;

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
        let unsent = &self.buf[self.sent..];
        if catch_unwind(AssertUnwindSafe(|| {
            format.file_start(&mut prologue, unsent)
        }))
        .is_err()
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
