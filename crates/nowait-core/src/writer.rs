//! The writer thread: drains the ring, formats per sink, writes in large
//! batches, reports losses in the output.

use std::collections::VecDeque;
use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crossbeam_channel::{select, Receiver, Sender};

use crate::error::FlushError;
use crate::logger::{ControlRx, Shared};
use crate::record::{Format, Notice, Record};
use crate::sink::{Output, WriteOutcome};
use crate::timefmt::rfc3339;
use crate::Level;

/// Messages to the writer. Records never travel here, only over the ring.
pub(crate) enum Control {
    /// Write everything claimed before `target`, then acknowledge.
    Flush {
        target: u64,
        deadline: Instant,
        ack: Sender<Result<(), FlushError>>,
    },
    /// Reopen file sinks now, then acknowledge.
    Reopen { ack: Sender<Result<(), FlushError>> },
    /// Change the wake-up interval and batch size.
    Reconfigure {
        interval: Option<Duration>,
        batch: Option<usize>,
    },
    /// Drain until `deadline`, count what is left, acknowledge, exit.
    Shutdown { deadline: Instant, ack: Sender<()> },
}

/// After this long without records the writer sleeps until woken.
const IDLE_BEFORE_SLEEP: Duration = Duration::from_millis(100);
/// How often file sinks are checked for rotation or deletion.
const ROTATION_CHECK: Duration = Duration::from_secs(1);
/// A loss that keeps growing is reported at least this often.
const REPORT_EVERY: Duration = Duration::from_secs(1);
/// Longest back-off between retries of a failing sink.
const MAX_BACKOFF: Duration = Duration::from_secs(1);

/// A count of losses not yet reported in the output, with the window in
/// which they happened (as observed by the writer, to its wake-up interval).
#[derive(Debug, Default)]
struct Loss {
    seen: u64,
    reported: u64,
    first: Option<SystemTime>,
    last: Option<SystemTime>,
    grew: bool,
}

impl Loss {
    fn observe(&mut self, total: u64, now: SystemTime) {
        self.grew = total > self.seen;
        if self.grew {
            self.seen = total;
            self.first.get_or_insert(now);
            self.last = Some(now);
        }
    }

    /// The loss to report now, if any: once it stopped growing, or every
    /// [`REPORT_EVERY`] while it grows, or at once if `force`.
    fn take(&mut self, now: SystemTime, force: bool) -> Option<(u64, SystemTime, SystemTime)> {
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

    fn unreported(&self) -> bool {
        self.seen > self.reported
    }
}

fn loss_message(n: u64, what: &str, (first, last): (SystemTime, SystemTime)) -> String {
    let s = if n == 1 { "" } else { "s" };
    format!(
        "{n} record{s} dropped ({what}) between {} and {}",
        rfc3339(first),
        rfc3339(last)
    )
}

/// End offsets in `SinkState::buf` coordinates (absolute byte counts), with
/// this bit set for notices, which are not counted as records.
const NOTICE_BIT: u64 = 1 << 63;

/// One sink as the writer thread holds it.
pub(crate) struct SinkState {
    name: String,
    output: Output,
    format: Box<dyn Format>,
    /// Formatted bytes; `buf[sent..]` are not yet written.
    buf: Vec<u8>,
    sent: usize,
    /// Absolute end offset of each line in `buf[sent..]`, oldest first.
    ends: VecDeque<u64>,
    /// Bytes ever appended / written (absolute offsets).
    appended: u64,
    written: u64,
    /// Bound on unsent bytes; past it, records are dropped for this sink.
    limit: usize,
    /// Write as soon as this many bytes are unsent.
    batch: usize,
    /// The sink failed for good (closed pipe, bad descriptor).
    dead: bool,
    retry_at: Option<Instant>,
    error_streak: u32,
    errors_since_report: u64,
    error_window: Option<(SystemTime, SystemTime)>,
    flush_error: Option<io::Error>,
    last_error: Option<String>,
    // Counters, published to `Shared::sink_counters` after each round.
    records_written: u64,
    bytes_written: u64,
    write_calls: u64,
    dropped_overflow: u64,
    dropped_failed: u64,
    write_errors: u64,
    /// Set while the sink sheds records: from the moment its buffer is full
    /// until it has drained to half. The time and count of the first drop.
    shedding: Option<(SystemTime, u64)>,
    /// Overflow drops not yet reported in this sink (e.g. at shutdown).
    overflow_unreported: u64,
    failed_loss: Loss,
}

impl SinkState {
    pub(crate) fn new(
        name: String,
        output: Output,
        format: Box<dyn Format>,
        limit: usize,
        batch: usize,
    ) -> Self {
        SinkState {
            name,
            output,
            format,
            buf: Vec::with_capacity(batch.min(limit) + 4096),
            sent: 0,
            ends: VecDeque::with_capacity(1024),
            appended: 0,
            written: 0,
            limit,
            batch: batch.min(limit),
            dead: false,
            retry_at: None,
            error_streak: 0,
            errors_since_report: 0,
            error_window: None,
            flush_error: None,
            last_error: None,
            records_written: 0,
            bytes_written: 0,
            write_calls: 0,
            dropped_overflow: 0,
            dropped_failed: 0,
            write_errors: 0,
            shedding: None,
            overflow_unreported: 0,
            failed_loss: Loss::default(),
        }
    }

    fn unsent(&self) -> usize {
        self.buf.len() - self.sent
    }

    fn pending_records(&self) -> u64 {
        self.ends.iter().filter(|&&e| e & NOTICE_BIT == 0).count() as u64
    }

    /// Formats one record into the sink's buffer, or counts it as dropped.
    /// Returns `false` if the format panicked (the partial line is removed).
    fn add_record(&mut self, record: &Record<'_>) -> bool {
        if self.dead {
            self.dropped_failed += 1;
            return true;
        }
        // Hysteresis: once full, shed until half drained, then write the
        // notice exactly where the gap is, and carry on.
        if let Some((since, at_start)) = self.shedding {
            if self.unsent() >= self.limit / 2 {
                self.dropped_overflow += 1;
                self.overflow_unreported += 1;
                return true;
            }
            self.shedding = None;
            let n = self.dropped_overflow - at_start;
            let msg = loss_message(
                n,
                &format!("sink {} too slow, its buffer was full", self.name),
                (since, SystemTime::now()),
            );
            self.overflow_unreported = 0;
            self.add_notice(Level::Warn, &msg);
        } else if self.unsent() >= self.limit {
            self.shedding = Some((SystemTime::now(), self.dropped_overflow));
            self.dropped_overflow += 1;
            self.overflow_unreported += 1;
            return true;
        }
        let before = self.buf.len();
        let format = &mut self.format;
        let buf = &mut self.buf;
        if catch_unwind(AssertUnwindSafe(|| format.format(record, buf))).is_err() {
            self.buf.truncate(before);
            return false;
        }
        self.appended += (self.buf.len() - before) as u64;
        self.ends.push_back(self.appended);
        true
    }

    /// Formats a notice into the buffer (notices may exceed the bound a
    /// little: they are few and they explain the gap).
    fn add_notice(&mut self, level: Level, message: &str) {
        if self.dead {
            return;
        }
        let before = self.buf.len();
        let notice = Notice::new(level, SystemTime::now(), message);
        let format = &mut self.format;
        let buf = &mut self.buf;
        if catch_unwind(AssertUnwindSafe(|| format.notice(&notice, buf))).is_err() {
            self.buf.truncate(before);
            return;
        }
        self.appended += (self.buf.len() - before) as u64;
        self.ends.push_back(self.appended | NOTICE_BIT);
    }

    /// Writes what it can without waiting (beyond what a blocking file
    /// write takes). Returns a notice to broadcast if the sink just failed
    /// or recovered.
    fn write_out(&mut self, now: Instant) -> Option<(Level, String)> {
        if self.dead || self.unsent() == 0 {
            return None;
        }
        if self.retry_at.is_some_and(|t| now < t) {
            return None;
        }
        let mut event = None;
        while self.unsent() > 0 {
            match self.output.write(&self.buf[self.sent..]) {
                WriteOutcome::Wrote(n) => {
                    self.sent += n;
                    self.written += n as u64;
                    self.bytes_written += n as u64;
                    self.write_calls += 1;
                    while let Some(&end) = self.ends.front() {
                        if end & !NOTICE_BIT > self.written {
                            break;
                        }
                        if end & NOTICE_BIT == 0 {
                            self.records_written += 1;
                        }
                        self.ends.pop_front();
                    }
                    if self.error_streak > 0 {
                        event = self.recovered();
                    }
                    if n == 0 {
                        break;
                    }
                }
                WriteOutcome::WouldBlock => break,
                WriteOutcome::Failed(e) => {
                    event = self.failed(e, now);
                    break;
                }
            }
        }
        if self.sent == self.buf.len() {
            self.buf.clear();
            self.sent = 0;
        } else if self.sent >= self.buf.len() / 2 {
            self.buf.drain(..self.sent);
            self.sent = 0;
        }
        event
    }

    fn failed(&mut self, e: io::Error, now: Instant) -> Option<(Level, String)> {
        self.write_errors += 1;
        self.errors_since_report += 1;
        let wall = SystemTime::now();
        let window = self.error_window.get_or_insert((wall, wall));
        window.1 = wall;
        let text = e.to_string();
        // Errors that no retry can fix: the reader is gone, the descriptor
        // is bad, or a user's writer panicked (reported as BrokenPipe).
        let permanent = e.kind() == io::ErrorKind::BrokenPipe
            || matches!(
                e.raw_os_error(),
                Some(libc::EPIPE)
                    | Some(libc::EBADF)
                    | Some(libc::ECONNRESET)
                    | Some(libc::ENOTCONN)
            );
        let first = self.error_streak == 0;
        self.error_streak = self.error_streak.saturating_add(1);
        self.last_error = Some(text.clone());
        if self.flush_error.is_none() {
            self.flush_error = Some(e);
        }
        if permanent {
            self.dead = true;
            self.dropped_failed += self.pending_records();
            self.buf.clear();
            self.sent = 0;
            self.ends.clear();
            return Some((
                Level::Error,
                format!(
                    "sink {} failed for good ({text}); its records are dropped and counted from now on",
                    self.name
                ),
            ));
        }
        let backoff = Duration::from_millis(10)
            .saturating_mul(1 << self.error_streak.min(7))
            .min(MAX_BACKOFF);
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
                rfc3339(first),
                rfc3339(last),
                self.last_error.as_deref().unwrap_or("unknown")
            ),
        );
        self.add_notice(notice.0, &notice.1);
        Some(notice)
    }

    fn publish(&self, shared: &Shared, index: usize) {
        let c = &shared.sink_counters[index];
        c.records_written
            .store(self.records_written, Ordering::Relaxed);
        c.bytes_written.store(self.bytes_written, Ordering::Relaxed);
        c.write_calls.store(self.write_calls, Ordering::Relaxed);
        c.dropped_overflow
            .store(self.dropped_overflow, Ordering::Relaxed);
        c.dropped_failed
            .store(self.dropped_failed, Ordering::Relaxed);
        c.write_errors.store(self.write_errors, Ordering::Relaxed);
        c.pending_bytes
            .store(self.unsent() as u64, Ordering::Relaxed);
        if self.write_errors > 0 {
            if let Ok(mut last) = c.last_error.lock() {
                if *last != self.last_error {
                    last.clone_from(&self.last_error);
                }
            }
        }
    }
}

struct PendingFlush {
    target: u64,
    deadline: Instant,
    ack: Sender<Result<(), FlushError>>,
    /// Per sink, the byte offset that must be written: set once the ring
    /// has been drained past `target`.
    marks: Option<Vec<u64>>,
}

/// The writer thread's state.
pub(crate) struct Writer {
    shared: Arc<Shared>,
    sinks: Vec<SinkState>,
    ctl_rx: ControlRx,
    wake_rx: Receiver<()>,
    batch: usize,
    interval: Duration,
    flushes: Vec<PendingFlush>,
    shutdown: Option<(Instant, Sender<()>)>,
    records: u64,
    high_water: u64,
    /// Ring-level losses: full, shed, too large, discarded.
    losses: [Loss; 4],
}

const LOSS_REASONS: [&str; 4] = [
    "ring full",
    "ring above its high-water mark, level below the protected one",
    "record larger than half the ring",
    "discarded by the front end, e.g. a panicking Display or Format",
];

impl Writer {
    pub(crate) fn new(
        shared: Arc<Shared>,
        sinks: Vec<SinkState>,
        ctl_rx: ControlRx,
        wake_rx: Receiver<()>,
        batch: usize,
        interval: Duration,
    ) -> Self {
        Writer {
            shared,
            sinks,
            ctl_rx,
            wake_rx,
            batch,
            interval,
            flushes: Vec::new(),
            shutdown: None,
            records: 0,
            high_water: 0,
            losses: Default::default(),
        }
    }

    pub(crate) fn run(mut self) {
        // However this thread ends (even by a panic in a user's Format or
        // Write), producers must stop waiting for it.
        struct Exit(Arc<Shared>);
        impl Drop for Exit {
            fn drop(&mut self) {
                self.0.closed.store(true, Ordering::SeqCst);
                let _guard = self.0.space_lock.lock();
                self.0.space_cv.notify_all();
            }
        }
        let _exit = Exit(Arc::clone(&self.shared));
        let mut last_record = Instant::now();
        let mut last_rotation_check = Instant::now();
        loop {
            // Rotation first, so that records of this round go to the new file.
            if last_rotation_check.elapsed() >= ROTATION_CHECK {
                self.check_rotation(false);
                last_rotation_check = Instant::now();
            }
            let drained = self.drain();
            let now = Instant::now();
            if drained > 0 {
                last_record = now;
            }
            self.write_sinks(now);
            self.report_losses(false);
            self.write_sinks(now);
            while let Ok(msg) = self.ctl_rx.try_recv() {
                self.on_control(msg);
            }
            self.check_flushes(now);
            self.publish();
            if let Some((deadline, ack)) = self.shutdown.take() {
                self.finish(deadline);
                self.publish();
                let _ = ack.send(());
                return;
            }
            let idle = now.duration_since(last_record) >= IDLE_BEFORE_SLEEP;
            self.wait(idle);
        }
    }

    /// Takes every committed record from the ring, formatting it for each
    /// sink and writing a sink's batch whenever it reaches the batch size.
    /// Returns the number of records taken.
    fn drain(&mut self) -> u64 {
        let shared = Arc::clone(&self.shared);
        let used = shared.ring.used_bytes() as u64;
        self.high_water = self.high_water.max(used);
        let mut total = 0;
        // Bound one round to about one ring's worth, so that control
        // messages (flush, shutdown) are seen even under sustained load.
        let mut budget = shared.ring.capacity_bytes();
        while budget > 0 {
            budget = budget.saturating_sub(self.batch);
            let mut panicked = 0u64;
            let sinks = &mut self.sinks;
            let n = shared.ring.consume(self.batch, |header, payload| {
                let level = Level::from_u8(header.level).unwrap_or(Level::Error);
                let record = Record::new(level, header.kind, payload);
                for sink in sinks.iter_mut() {
                    if !sink.add_record(&record) {
                        panicked += 1;
                    }
                }
            });
            if panicked > 0 {
                shared
                    .counters
                    .discarded
                    .fetch_add(panicked, Ordering::Relaxed);
            }
            if shared.wake_requested.load(Ordering::Relaxed) {
                shared.wake_requested.store(false, Ordering::Relaxed);
            }
            if n == 0 {
                break;
            }
            shared.notify_space();
            total += n as u64;
            let now = Instant::now();
            for i in 0..self.sinks.len() {
                if self.sinks[i].unsent() >= self.sinks[i].batch {
                    if let Some((level, msg)) = self.sinks[i].write_out(now) {
                        self.broadcast(level, &msg, Some(i));
                    }
                }
            }
        }
        self.records += total;
        total
    }

    fn write_sinks(&mut self, now: Instant) {
        for i in 0..self.sinks.len() {
            if let Some((level, msg)) = self.sinks[i].write_out(now) {
                self.broadcast(level, &msg, Some(i));
            }
        }
    }

    /// Adds a notice to every sink but `except`.
    fn broadcast(&mut self, level: Level, msg: &str, except: Option<usize>) {
        for (i, sink) in self.sinks.iter_mut().enumerate() {
            if Some(i) != except {
                sink.add_notice(level, msg);
            }
        }
    }

    fn report_losses(&mut self, force: bool) {
        let now = SystemTime::now();
        self.report_ring_losses(now, force);
        self.report_sink_losses(now, force);
    }

    /// Ring-level losses (full, shed, too large, discarded).
    fn report_ring_losses(&mut self, now: SystemTime, force: bool) {
        let c = &self.shared.counters;
        let totals = [
            c.dropped_full.load(Ordering::Relaxed),
            c.dropped_shed.load(Ordering::Relaxed),
            c.dropped_too_large.load(Ordering::Relaxed),
            c.discarded.load(Ordering::Relaxed),
        ];
        for (i, total) in totals.into_iter().enumerate() {
            self.losses[i].observe(total, now);
            if let Some((n, first, last)) = self.losses[i].take(now, force) {
                let msg = loss_message(n, LOSS_REASONS[i], (first, last));
                self.broadcast(Level::Warn, &msg, None);
            }
        }
    }

    /// Per-sink losses (overflow of a slow sink, a failed sink).
    fn report_sink_losses(&mut self, now: SystemTime, force: bool) {
        for i in 0..self.sinks.len() {
            let sink = &mut self.sinks[i];
            sink.failed_loss.observe(sink.dropped_failed, now);
            // At shutdown, a sink still shedding has not shown its gap: try
            // it there, and tell the other sinks.
            if force && sink.overflow_unreported > 0 {
                let since = sink.shedding.take().map_or(now, |s| s.0);
                let msg = loss_message(
                    std::mem::take(&mut sink.overflow_unreported),
                    &format!("sink {} too slow, its buffer was full", sink.name),
                    (since, now),
                );
                sink.add_notice(Level::Warn, &msg);
                self.broadcast(Level::Warn, &msg, Some(i));
            }
            let sink = &mut self.sinks[i];
            if let Some((n, first, last)) = sink.failed_loss.take(now, force) {
                let msg = loss_message(
                    n,
                    &format!(
                        "sink {} failed: {}",
                        sink.name,
                        sink.last_error.as_deref().unwrap_or("unknown error")
                    ),
                    (first, last),
                );
                self.broadcast(Level::Warn, &msg, None);
            }
        }
    }

    fn on_control(&mut self, msg: Control) {
        match msg {
            Control::Flush {
                target,
                deadline,
                ack,
            } => {
                // Losses counted before the flush was asked for are part of
                // what it waits for: report them now rather than at the end
                // of their time window.
                self.report_ring_losses(SystemTime::now(), true);
                self.flushes.push(PendingFlush {
                    target,
                    deadline,
                    ack,
                    marks: None,
                });
            }
            Control::Reopen { ack } => {
                self.check_rotation(true);
                let result = match self
                    .sinks
                    .iter_mut()
                    .find_map(|s| s.flush_error.take().map(|e| (s.name.clone(), e)))
                {
                    Some((sink, source)) => Err(FlushError::Sink { sink, source }),
                    None => Ok(()),
                };
                let _ = ack.send(result);
            }
            Control::Reconfigure { interval, batch } => {
                if let Some(interval) = interval {
                    self.interval = interval;
                }
                if let Some(batch) = batch {
                    self.batch = batch;
                    for sink in &mut self.sinks {
                        sink.batch = batch.min(sink.limit);
                    }
                }
            }
            Control::Shutdown { deadline, ack } => self.shutdown = Some((deadline, ack)),
        }
    }

    fn check_rotation(&mut self, force: bool) {
        for i in 0..self.sinks.len() {
            if let Err(e) = self.sinks[i].output.reopen_if_moved(force) {
                let now = Instant::now();
                if let Some((level, msg)) = self.sinks[i].failed(e, now) {
                    self.broadcast(level, &msg, Some(i));
                }
            }
        }
    }

    fn check_flushes(&mut self, now: Instant) {
        if self.flushes.is_empty() {
            return;
        }
        let released = self.shared.ring.released();
        let mut i = 0;
        while i < self.flushes.len() {
            let f = &mut self.flushes[i];
            if f.marks.is_none() && released >= f.target {
                f.marks = Some(self.sinks.iter().map(|s| s.appended).collect());
            }
            let done = f.marks.as_ref().is_some_and(|marks| {
                self.sinks
                    .iter()
                    .zip(marks)
                    .all(|(s, &m)| s.dead || s.error_streak > 0 || s.written >= m)
            });
            if done || now >= f.deadline {
                let f = self.flushes.swap_remove(i);
                let result = if done {
                    self.flush_outputs()
                } else {
                    Err(FlushError::TimedOut)
                };
                let _ = f.ack.send(result);
            } else {
                i += 1;
            }
        }
    }

    /// Flushes user writers and returns the first sink error since the last
    /// flush.
    fn flush_outputs(&mut self) -> Result<(), FlushError> {
        let mut result = Ok(());
        for sink in &mut self.sinks {
            if let Err(e) = sink.output.flush() {
                sink.flush_error.get_or_insert(e);
            }
            if let Some(source) = sink.flush_error.take() {
                if result.is_ok() {
                    result = Err(FlushError::Sink {
                        sink: sink.name.clone(),
                        source,
                    });
                }
            }
        }
        result
    }

    fn busy(&self) -> bool {
        !self.flushes.is_empty()
            || self.losses.iter().any(Loss::unreported)
            || self
                .sinks
                .iter()
                .any(|s| (!s.dead && s.unsent() > 0) || s.failed_loss.unreported())
    }

    /// Sleeps until the next round: `interval` while records flow or work is
    /// pending, until woken once idle.
    fn wait(&mut self, idle: bool) {
        let shared = Arc::clone(&self.shared);
        let timeout = if idle && !self.busy() {
            // Announce the sleep, then look at the ring once more: a producer
            // either claimed before our look (we see it and stay awake) or
            // sees the flag after its claim and wakes us. Both sides use
            // SeqCst, so one of the two must happen.
            shared.writer_sleeping.store(true, Ordering::SeqCst);
            if shared.ring.claimed() != shared.ring.released() {
                shared.writer_sleeping.store(false, Ordering::SeqCst);
                self.interval
            } else {
                // A long backstop: nothing is lost if a wake went missing.
                Duration::from_secs(1)
            }
        } else {
            self.interval
        };
        select! {
            recv(self.ctl_rx) -> msg => {
                if let Ok(msg) = msg {
                    self.on_control(msg);
                }
            }
            recv(self.wake_rx) -> _ => {}
            default(timeout) => {}
        }
        shared.writer_sleeping.store(false, Ordering::SeqCst);
    }

    /// Shutdown: drain and write until `deadline`, then count and report
    /// what is left.
    fn finish(&mut self, deadline: Instant) {
        loop {
            self.drain();
            let now = Instant::now();
            self.write_sinks(now);
            self.report_losses(true);
            self.write_sinks(now);
            let ring_empty = self.shared.ring.claimed() == self.shared.ring.released();
            let sinks_done = self.sinks.iter().all(|s| s.dead || s.unsent() == 0);
            if (ring_empty && sinks_done) || now >= deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(1).min(self.interval));
        }
        // Whatever is still in the ring is abandoned; count it.
        let mut left = 0u64;
        while self.shared.ring.consume(usize::MAX, |_, _| left += 1) > 0 {}
        self.shared
            .counters
            .abandoned
            .fetch_add(left, Ordering::Relaxed);
        let pending: Vec<(String, u64)> = self
            .sinks
            .iter()
            .map(|s| (s.name.clone(), if s.dead { 0 } else { s.pending_records() }))
            .collect();
        let stuck: u64 = pending.iter().map(|p| p.1).sum();
        if left > 0 || stuck > 0 {
            let detail: Vec<String> = pending
                .iter()
                .filter(|p| p.1 > 0)
                .map(|(name, n)| format!("{n} pending for sink {name}"))
                .collect();
            let msg = format!(
                "shutdown timed out: {left} records abandoned in the ring{}{}",
                if detail.is_empty() { "" } else { "; " },
                detail.join(", ")
            );
            for (sink, (_, n)) in self.sinks.iter_mut().zip(&pending) {
                // Records left in a sink's buffer count as lost for it.
                sink.dropped_failed += n;
                sink.ends.retain(|e| e & NOTICE_BIT != 0);
            }
            self.broadcast(Level::Warn, &msg, None);
            self.write_sinks(Instant::now());
        }
        let _ = self.flush_outputs();
        // Answer any flush still waiting.
        for f in self.flushes.drain(..) {
            let _ = f.ack.send(Err(FlushError::Closed));
        }
    }

    fn publish(&self) {
        let c = &self.shared.counters;
        c.records_written.store(self.records, Ordering::Relaxed);
        c.ring_high_water.store(self.high_water, Ordering::Relaxed);
        for (i, sink) in self.sinks.iter().enumerate() {
            sink.publish(&self.shared, i);
        }
    }
}
