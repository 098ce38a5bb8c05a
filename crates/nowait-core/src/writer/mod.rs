//! The writer thread: drains the ring, formats per sink, writes in large
//! batches, answers the control requests, reports losses in the output.
//!
//! # The round
//!
//! 1. Every second, check file sinks for rotation.
//! 2. Answer reopen and reconfigure requests.
//! 3. Drain the ring: format each record once per sink, write a sink's
//!    batch whenever it reaches the batch size, notify producers waiting
//!    for room after each batch released.
//! 4. Write every sink; report losses (ring and per sink) as notices.
//! 5. Advance flush marks: once the ring is drained past a flush's target,
//!    note each sink's byte offset; the flush is answered when every sink
//!    reached it (or is failed, shedding or stalled).
//! 6. Publish the counters; on shutdown, [`finish`](Writer::finish).
//! 7. Sleep in `poll` on the doorbell and on the sinks waiting for room,
//!    for an interval that is [`Builder::flush_interval`] while records
//!    flow and doubles up to [`Builder::idle_interval`] while none come.
//!    Producers never wake the writer; it finds their records by itself.
//!
//! Every call that can block (a file write, a user's writer, an fsync) is
//! made with the consumer role set to `IN_IO` after publishing the counters,
//! so that a shutdown whose deadline passes can take the counting over.
//!
//! [`Builder::flush_interval`]: crate::Builder::flush_interval
//! [`Builder::idle_interval`]: crate::Builder::idle_interval

mod finish;
mod loss;
mod sink;

pub(crate) use sink::SinkState;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use loss::{loss_message, Loss, RING_LOSSES, RING_REASONS};

use crate::record::Record;
use crate::shared::{consumer, state, FlushScope, Shared};
use crate::Level;

/// How often file sinks are checked for rotation or deletion.
const ROTATION_CHECK: Duration = Duration::from_secs(1);

/// A flush in progress: once the ring is drained past `target`, the byte
/// offset each sink must reach.
#[derive(Debug)]
struct Mark {
    target: u64,
    seq: u64,
    offsets: Vec<u64>,
}

/// The writer thread's state.
pub(crate) struct Writer {
    shared: Arc<Shared>,
    sinks: Vec<SinkState>,
    batch: usize,
    /// The interval while records flow.
    interval: Duration,
    /// The longest sleep while none come.
    idle_interval: Duration,
    /// The current sleep.
    sleep: Duration,
    marks: [Option<Mark>; 2],
    reopen_done: u64,
    /// Records taken from the ring.
    records: u64,
    high_water: u64,
    losses: [Loss; RING_LOSSES],
    /// The consumer role was taken over (a shutdown timed out while this
    /// thread was in a blocking call): touch nothing, exit.
    taken: bool,
    /// Notices to write once at start (a sink written with blocking calls).
    startup: Vec<String>,
    /// When the counters were last published through `metrics`.
    #[cfg(feature = "metrics")]
    metrics_at: Instant,
}

impl Writer {
    pub(crate) fn new(
        shared: Arc<Shared>,
        sinks: Vec<SinkState>,
        interval: Duration,
        idle_interval: Duration,
        startup: Vec<String>,
    ) -> Self {
        let batch = shared.ctl.batch.load(Ordering::Relaxed);
        Writer {
            shared,
            sinks,
            batch,
            interval,
            idle_interval: idle_interval.max(interval),
            sleep: interval,
            marks: [None, None],
            reopen_done: 0,
            records: 0,
            high_water: 0,
            losses: Default::default(),
            taken: false,
            startup,
            #[cfg(feature = "metrics")]
            metrics_at: Instant::now(),
        }
    }

    /// The thread's body.
    pub(crate) fn run(mut self) {
        Shared::mark_writer_thread();
        // However this thread ends (a panic in nowait itself), producers and
        // waiters must stop waiting for it and the counts must be final.
        struct Exit(Arc<Shared>);
        impl Drop for Exit {
            fn drop(&mut self) {
                let s = &self.0;
                if s.consumer
                    .compare_exchange(
                        consumer::WRITER,
                        consumer::NONE,
                        Ordering::SeqCst,
                        Ordering::SeqCst,
                    )
                    .is_ok()
                    && s.state.load(Ordering::SeqCst) != state::FINISHED
                {
                    s.finish_counting(true);
                }
            }
        }
        let _exit = Exit(Arc::clone(&self.shared));
        self.reopen_done = self.shared.ctl.reopen.done.load(Ordering::SeqCst);
        for msg in std::mem::take(&mut self.startup) {
            self.broadcast(Level::Warn, &msg, None);
        }
        let mut last_rotation_check = Instant::now();
        loop {
            if last_rotation_check.elapsed() >= ROTATION_CHECK {
                self.check_rotation(false);
                last_rotation_check = Instant::now();
            }
            self.reconfigure();
            let drained = self.drain();
            let now = Instant::now();
            self.write_all(now, false);
            self.report_losses(false);
            self.write_all(now, false);
            self.answer(now);
            if self.taken {
                return;
            }
            self.publish(now);
            #[cfg(feature = "metrics")]
            self.record_metrics(now, false);
            if self.shared.state.load(Ordering::SeqCst) != state::RUNNING {
                self.finish();
                #[cfg(feature = "metrics")]
                self.record_metrics(now, true);
                return;
            }
            self.wait(drained > 0);
        }
    }

    /// Reads the reconfigurable settings.
    fn reconfigure(&mut self) {
        let ctl = &self.shared.ctl;
        self.interval = Duration::from_nanos(ctl.interval_ns.load(Ordering::Relaxed));
        let batch = ctl.batch.load(Ordering::Relaxed);
        if batch != self.batch {
            self.batch = batch;
            for sink in &mut self.sinks {
                sink.batch = batch;
            }
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
        // requests are answered even under sustained load.
        let mut budget = shared.ring.capacity_bytes();
        while budget > 0 {
            budget = budget.saturating_sub(self.batch);
            let sinks = &mut self.sinks;
            let n = shared.ring.consume(self.batch, |header, payload| {
                let level = Level::from_u8(header.level).unwrap_or(Level::Error);
                let record = Record::new(level, header.kind, payload);
                for sink in sinks.iter_mut() {
                    sink.add_record(&record);
                }
            }) as u64;
            if n == 0 {
                break;
            }
            total += n;
            self.records += n;
            shared.space.notify();
            let now = Instant::now();
            for i in 0..self.sinks.len() {
                if self.sinks[i].unsent() >= self.sinks[i].batch {
                    self.write_sink(i, now, false);
                    if self.taken {
                        return total;
                    }
                }
            }
        }
        total
    }

    /// Writes one sink, inside the I/O gate if the write can block.
    fn write_sink(&mut self, i: usize, now: Instant, last: bool) {
        if self.sinks[i].unsent() == 0 || self.sinks[i].dead {
            return;
        }
        let event = if self.sinks[i].output.may_block() {
            if !self.enter_io(now) {
                return;
            }
            let event = self.sinks[i].write_out(now, last);
            if !self.leave_io() {
                return;
            }
            event
        } else {
            self.sinks[i].write_out(now, last)
        };
        if let Some((level, msg)) = event {
            self.broadcast(level, &msg, Some(i));
        }
    }

    fn write_all(&mut self, now: Instant, last: bool) {
        for i in 0..self.sinks.len() {
            self.sinks[i].housekeeping_notices();
            self.write_sink(i, now, last);
            if self.taken {
                return;
            }
        }
    }

    /// Publishes the counters, then marks the consumer role as in a
    /// blocking call. Returns `false` if the role was taken.
    fn enter_io(&mut self, now: Instant) -> bool {
        if self.taken {
            return false;
        }
        self.publish(now);
        let ok = self
            .shared
            .consumer
            .compare_exchange(
                consumer::WRITER,
                consumer::IN_IO,
                Ordering::SeqCst,
                Ordering::SeqCst,
            )
            .is_ok();
        self.taken = !ok;
        ok
    }

    /// Back from a blocking call: returns `false` if the role was taken
    /// meanwhile (everything was counted by the taker; touch nothing).
    fn leave_io(&mut self) -> bool {
        let ok = self
            .shared
            .consumer
            .compare_exchange(
                consumer::IN_IO,
                consumer::WRITER,
                Ordering::SeqCst,
                Ordering::SeqCst,
            )
            .is_ok();
        self.taken = !ok;
        ok
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
        let c = &self.shared.counters;
        let totals = [
            c.dropped_full.load(Ordering::Relaxed),
            c.dropped_shed.load(Ordering::Relaxed),
            c.dropped_too_large.load(Ordering::Relaxed),
            c.discarded.load(Ordering::Relaxed),
            c.dropped_timeout.load(Ordering::Relaxed),
            c.dropped_closed.load(Ordering::Relaxed),
        ];
        for (i, total) in totals.into_iter().enumerate() {
            self.losses[i].observe(total, now);
            if let Some((n, first, last)) = self.losses[i].take(now, force) {
                let msg = loss_message(n, RING_REASONS[i], (first, last));
                self.broadcast(Level::Warn, &msg, None);
            }
        }
        for i in 0..self.sinks.len() {
            let sink = &mut self.sinks[i];
            sink.dead_loss.observe(sink.dropped_dead, now);
            if let Some((n, first, last)) = sink.dead_loss.take(now, force) {
                let msg = loss_message(n, &format!("sink {} failed", sink.name), (first, last));
                self.broadcast(Level::Warn, &msg, Some(i));
            }
            let sink = &mut self.sinks[i];
            sink.reject_loss.observe(sink.dropped_rejected, now);
            if let Some((n, first, last)) = sink.reject_loss.take(now, force) {
                let why = format!(
                    "sink {} refused them: {}",
                    sink.name,
                    sink.last_error.as_deref().unwrap_or("unknown error")
                );
                let msg = loss_message(n, &why, (first, last));
                self.broadcast(Level::Warn, &msg, None);
            }
            let sink = &mut self.sinks[i];
            sink.format_loss.observe(sink.dropped_format, now);
            if let Some((n, first, last)) = sink.format_loss.take(now, force) {
                let why = match Shared::take_writer_panic() {
                    Some(p) => format!("the format of sink {} panicked: {p}", sink.name),
                    None => format!("the format of sink {} panicked", sink.name),
                };
                let msg = loss_message(n, &why, (first, last));
                self.broadcast(Level::Warn, &msg, None);
            }
        }
    }

    /// Answers reopen requests and advances flushes.
    fn answer(&mut self, now: Instant) {
        let ctl = &self.shared.ctl;
        let reopen = ctl.reopen.req.load(Ordering::SeqCst);
        if reopen > self.reopen_done {
            self.check_rotation(true);
            self.reopen_done = reopen;
            self.publish(now);
            self.shared.ctl.reopen.done.store(reopen, Ordering::SeqCst);
            self.shared.progress.notify();
        }
        for scope in [FlushScope::All, FlushScope::Durable] {
            self.advance_flush(scope, now);
            if self.taken {
                return;
            }
        }
    }

    fn in_scope(&self, scope: FlushScope, i: usize) -> bool {
        scope == FlushScope::All || self.sinks[i].durable
    }

    fn advance_flush(&mut self, scope: FlushScope, now: Instant) {
        let s = scope as usize;
        let shared = Arc::clone(&self.shared);
        let p = &shared.ctl.flush[s];
        if self.marks[s].is_none() {
            let seq = p.seq.load(Ordering::SeqCst);
            let req = p.req.load(Ordering::SeqCst);
            let released = shared.ring.released();
            if seq <= p.seq_done.load(Ordering::SeqCst) || released < req {
                return;
            }
            self.marks[s] = Some(Mark {
                target: released,
                seq,
                offsets: self.sinks.iter().map(|k| k.appended).collect(),
            });
            // Losses counted before the flush was asked for are part of what
            // it waits for: report them now.
            self.report_losses(true);
            self.write_all(now, false);
            if self.taken {
                return;
            }
        }
        let Some(mark) = &self.marks[s] else { return };
        let complete = (0..self.sinks.len()).all(|i| {
            !self.in_scope(scope, i)
                || self.sinks[i].written >= mark.offsets[i]
                || self.sinks[i].settled(now, scope == FlushScope::Durable)
        });
        if !complete {
            return;
        }
        let (target, seq) = (mark.target, mark.seq);
        self.marks[s] = None;
        let fsync = scope == FlushScope::Durable && shared.ctl.fsync.load(Ordering::Relaxed);
        for i in 0..self.sinks.len() {
            if !self.in_scope(scope, i) || !self.sinks[i].output.may_block() {
                continue;
            }
            if !self.enter_io(now) {
                return;
            }
            self.sinks[i].flush_output();
            if fsync && !self.sinks[i].dead {
                if let Err(e) = self.sinks[i].output.sync() {
                    let event = self.sinks[i].failed(e, now);
                    if !self.leave_io() {
                        return;
                    }
                    if let Some((level, msg)) = event {
                        self.broadcast(level, &msg, Some(i));
                    }
                    continue;
                }
            }
            if !self.leave_io() {
                return;
            }
        }
        self.publish(now);
        p.done.fetch_max(target, Ordering::SeqCst);
        p.seq_done.fetch_max(seq, Ordering::SeqCst);
        shared.progress.notify();
    }

    fn check_rotation(&mut self, force: bool) {
        let now = Instant::now();
        for i in 0..self.sinks.len() {
            if matches!(self.sinks[i].output, crate::output::Output::Rolling(_)) {
                // A rolling file that cannot be reopened keeps the old one:
                // a notice, not a failed sink.
                if !self.enter_io(now) {
                    return;
                }
                let notice = match &mut self.sinks[i].output {
                    crate::output::Output::Rolling(r) => r.reopen_if_moved(force),
                    _ => None,
                };
                if !self.leave_io() {
                    return;
                }
                if let Some(msg) = notice {
                    let msg = format!("sink {}: {msg}", self.sinks[i].name);
                    self.broadcast(Level::Warn, &msg, None);
                }
                continue;
            }
            let file = matches!(self.sinks[i].output, crate::output::Output::File { .. });
            if !file || !self.enter_io(now) {
                continue;
            }
            let result = self.sinks[i].output.reopen_if_moved(force);
            if !self.leave_io() {
                return;
            }
            if let Err(e) = result {
                if let Some((level, msg)) = self.sinks[i].failed(e, now) {
                    self.broadcast(level, &msg, Some(i));
                }
            }
        }
    }

    /// Copies every counter into the shared ones.
    fn publish(&mut self, now: Instant) {
        let c = &self.shared.counters;
        c.records_written.store(self.records, Ordering::Relaxed);
        c.ring_high_water.store(self.high_water, Ordering::Relaxed);
        let shared = Arc::clone(&self.shared);
        for (i, sink) in self.sinks.iter_mut().enumerate() {
            sink.publish(&shared, i, now);
        }
    }

    /// Publishes the counters through the `metrics` facade once a
    /// [`PUBLISH_INTERVAL`](crate::metrics::PUBLISH_INTERVAL) (and at the end).
    #[cfg(feature = "metrics")]
    fn record_metrics(&mut self, now: Instant, last: bool) {
        if last || now.duration_since(self.metrics_at) >= crate::metrics::PUBLISH_INTERVAL {
            self.metrics_at = now;
            let s = &*self.shared;
            s.counters
                .snapshot(s.ring.capacity_bytes(), &s.sinks)
                .record_metrics();
        }
    }

    /// Sleeps until the next round (see the module docs, step 7).
    fn wait(&mut self, busy: bool) {
        let now = Instant::now();
        let pending_flush = self.marks.iter().any(Option::is_some)
            || self
                .shared
                .ctl
                .flush
                .iter()
                .any(|p| p.req.load(Ordering::Relaxed) > p.done.load(Ordering::Relaxed));
        self.sleep = if busy || pending_flush {
            self.interval
        } else {
            (self.sleep * 2).clamp(self.interval, self.idle_interval)
        };
        let mut timeout = self.sleep;
        if self.losses.iter().any(Loss::unreported) {
            timeout = timeout.min(self.interval.max(Duration::from_millis(50)));
        }
        for sink in &self.sinks {
            if let Some(at) = sink.retry_at() {
                timeout = timeout.min(at.saturating_duration_since(now));
            }
            if sink.needs_retry_timer() {
                timeout = timeout.min(self.interval);
            }
        }
        self.poll(timeout, true);
    }

    /// `poll` on the doorbell (if `doorbell`) and the sinks waiting for
    /// room, at most `timeout`.
    fn poll(&mut self, timeout: Duration, doorbell: bool) {
        #[cfg(miri)]
        {
            let _ = doorbell;
            std::thread::sleep(timeout.min(Duration::from_millis(1)));
        }
        #[cfg(not(miri))]
        {
            use rustix::event::{PollFd, PollFlags};
            let shared = Arc::clone(&self.shared);
            let mut fds: Vec<PollFd<'_>> = Vec::with_capacity(self.sinks.len() + 1);
            if doorbell {
                fds.push(PollFd::from_borrowed_fd(
                    shared.doorbell.fd(),
                    PollFlags::IN,
                ));
            }
            for sink in &self.sinks {
                if sink.waiting_for_room() {
                    if let Some(fd) = sink.output.poll_fd() {
                        fds.push(PollFd::from_borrowed_fd(fd, PollFlags::OUT));
                    }
                }
            }
            let ts = rustix::time::Timespec {
                tv_sec: timeout.as_secs() as i64,
                tv_nsec: i64::from(timeout.subsec_nanos()),
            };
            if fds.is_empty() {
                std::thread::sleep(timeout);
                return;
            }
            let woke = matches!(rustix::event::poll(&mut fds, Some(&ts)), Ok(n) if n > 0);
            if doorbell && woke && !fds[0].revents().is_empty() {
                shared.doorbell.clear();
            }
        }
    }
}
