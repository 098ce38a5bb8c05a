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
//!    for an interval that is `Builder::flush_interval` while records
//!    flow (shorter if, at the rate the last round saw, the producers would
//!    fill an eighth of the ring sooner; never below 100 us) and doubles up
//!    to `Builder::idle_interval` while none come.
//!    Producers never wake the writer; it finds their records by itself.
//!
//! Every call that can block (a file write, a user's writer, an fsync) is
//! made with the consumer role set to `IN_IO` after publishing the counters,
//! so that a shutdown whose deadline passes can take the counting over.
//!

mod backtrace;
mod finish;
mod lanes;
mod route;
mod sink_state;
mod start;

pub(crate) use sink_state::SinkState;
pub(crate) use start::{start, starter, WriterSettings};

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use crate::accounting::loss::{loss_message, Loss, RING_LOSSES, RING_REASONS};

use crate::level::Level;
use crate::record::Record;
use crate::shared::{consumer, state, FlushScope, Shared};

/// How often file sinks are checked for rotation or deletion.
const ROTATION_CHECK: Duration = Duration::from_secs(1);

/// While records flow, the writer sleeps at most as long as the producers
/// take, at the rate the last round saw, to fill this share of the ring
/// (one part in `FILL_SHARE`).
const FILL_SHARE: u64 = 8;

/// The shortest sleep the fill rate can ask for (the kernel's default
/// timer slack is 50 us on top of it).
const MIN_SLEEP: Duration = Duration::from_micros(100);

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
    /// When the last drain started, and the ring's claim position then.
    drain_at: Instant,
    taken_at: u64,
    /// The interval between drains at which the producers fill
    /// `1 / FILL_SHARE` of the ring, at the rate the last drain saw.
    fill_time: Duration,
    marks: [Option<Mark>; 2],
    reopen_done: u64,
    /// The last dump request answered.
    dump_done: u64,
    /// Records taken from the ring.
    records: u64,
    high_water: u64,
    losses: [Loss; RING_LOSSES],
    /// The limited call sites handed to this logger, each with its
    /// suppressed calls not yet reported.
    limits: Vec<(&'static crate::limit::SiteLimit, Loss)>,
    /// The consumer role was taken over (a shutdown timed out while this
    /// thread was in a blocking call): touch nothing, exit.
    taken: bool,
    /// Notices to write once at start (a sink written with blocking calls).
    startup: Vec<String>,
    /// Mirrors and snapshots of a crash-durable ring.
    durable: Option<crate::durable::DurableWriter>,
    /// When the counters were last published through `metrics`.
    #[cfg(feature = "metrics")]
    metrics_at: Instant,
    /// Each input's front key and cursor during a merge (kept
    /// to reuse the allocation).
    lane_keys: Vec<lanes::Front>,
    /// The inputs a merge looks at (kept to reuse the allocation).
    live: Vec<usize>,
    /// How far the lanes must be moved before the flush requests seen last
    /// can be answered.
    goal: Option<lanes::Goal>,
    /// Per flush scope, the newest request the lanes were moved for.
    swept: [u64; 2],
}

/// How long producers take to claim `share` words at the rate of `came`
/// words in `since`: `Duration::MAX` if none came.
fn fill_time(since: Duration, came: u64, share: u64) -> Duration {
    if came == 0 {
        return Duration::MAX;
    }
    // since * share / came, in u128 (saturating: a sleep is capped anyway).
    let ns = since
        .as_nanos()
        .checked_mul(u128::from(share))
        .map_or(u128::MAX, |v| v / u128::from(came));
    u64::try_from(ns).map_or(Duration::MAX, Duration::from_nanos)
}

/// The writer's next sleep (module docs, step 7). While records flow
/// (`busy`): the flush interval, or less if the producers would fill a
/// share of the ring sooner (`fill_time`), so that a writer with CPU to
/// spare does not let fast producers drop; never below [`MIN_SLEEP`]
/// unless the interval itself is shorter. While none come: the last sleep
/// doubled, up to the idle interval.
fn next_sleep(
    busy: bool,
    last: Duration,
    fill_time: Duration,
    interval: Duration,
    idle: Duration,
) -> Duration {
    if busy {
        interval.min(fill_time.max(MIN_SLEEP))
    } else {
        last.saturating_mul(2).clamp(interval, idle)
    }
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
        // A sink with an I/O thread of its own rings the doorbell when it
        // finished a batch, so the writer hands it the next one at once
        // (a weak reference: the thread may outlive the logger).
        let weak = Arc::downgrade(&shared);
        let waker: crate::sys::relay::Waker = Arc::new(move || {
            if let Some(shared) = weak.upgrade() {
                shared.doorbell.ring();
            }
        });
        for sink in &sinks {
            sink.output.set_waker(&waker);
        }
        let durable = shared.durable.as_ref().map(|file| {
            let files = sinks
                .iter()
                .enumerate()
                .filter(|(_, s)| s.output.current_file().is_some())
                .map(|(i, _)| i);
            crate::durable::DurableWriter::new(Arc::clone(file), files)
        });
        // Limited call sites are watched once the logger exists, so none
        // is known yet, except in a forked child's new writer, whose sites
        // count from the fork (`SiteLimit::forget_before_fork`): all of it
        // is the child's to report.
        let limits = (shared.counters.lock_limits().iter())
            .map(|&site| (site, Loss::default()))
            .collect();
        Writer {
            durable,
            shared,
            sinks,
            batch,
            interval,
            idle_interval: idle_interval.max(interval),
            sleep: interval,
            drain_at: Instant::now(),
            taken_at: 0,
            fill_time: Duration::MAX,
            marks: [None, None],
            reopen_done: 0,
            dump_done: 0,
            records: 0,
            high_water: 0,
            losses: Default::default(),
            limits,
            taken: false,
            startup,
            #[cfg(feature = "metrics")]
            metrics_at: Instant::now(),
            lane_keys: Vec::new(),
            live: Vec::new(),
            goal: None,
            swept: [0; 2],
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
        self.dump_done = self.shared.ctl.dump.done.load(Ordering::SeqCst);
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
            self.settle_durable();
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
        // Neither this nor `note_fill` reads `head`: a read puts the
        // producers' cache line in shared state, and the next claim pays
        // for taking it back. What the drain takes tells the
        // same, one drain later for the rate.
        let from = shared.ring.consumed();
        self.note_fill(Instant::now(), from);
        let mut total = 0;
        // Bound one round to about one ring's worth, so that control
        // requests are answered even under sustained load.
        let mut budget = shared.ring.capacity_bytes();
        while budget > 0 {
            budget = budget.saturating_sub(self.batch);
            if let Some(lanes) = &shared.lanes {
                let (n, lane_words) = self.take_merged(lanes, self.batch);
                if lane_words > 0 {
                    // A lane fills sooner than the ring: wake before it does.
                    let share = lanes.ring(0).capacity_words() / FILL_SHARE;
                    let since = Instant::now().saturating_duration_since(self.drain_at);
                    self.fill_time = self.fill_time.min(fill_time(since, lane_words, share));
                }
                if n == 0 {
                    break;
                }
                self.after_batch(n, from);
                if self.taken {
                    return total + n;
                }
                total += n;
                continue;
            }
            let sinks = &mut self.sinks;
            // A crash-durable file notes which record is being formatted,
            // so that one that crashes the writer is not retried forever.
            let writer = self.durable.as_ref();
            let durable = writer.map(|d| d.file());
            if let Some(d) = durable {
                d.batch_start(shared.ring.consumed());
            }
            let mut nth = 0;
            // In a crash-durable ring the batch ends early once a file
            // sink's unwritten bytes grow past half its mirror, so that
            // the commit after it copies them all, however many bytes the
            // ring's records format to (see `durable`).
            let full = std::cell::Cell::new(false);
            let n = shared.ring.consume_until(
                self.batch,
                || full.get(),
                |header, payload| {
                    if let Some(d) = durable {
                        nth += 1;
                        d.formatting(nth);
                    }
                    let level = Level::from_u8(header.level).unwrap_or(Level::Error);
                    let record = Record::new(level, header.kind, payload);
                    for (i, sink) in sinks.iter_mut().enumerate() {
                        let before = sink.unsent();
                        sink.add_record(&record);
                        if let Some(w) = writer {
                            let after = sink.unsent();
                            if after > before && after >= w.commit_before() && w.mirrors(i) {
                                full.set(true);
                            }
                        }
                    }
                },
            ) as u64;
            if let Some(d) = durable {
                d.formatting(0);
            }
            self.commit_durable();
            if n == 0 {
                break;
            }
            total += n;
            self.after_batch(n, from);
            if self.taken {
                return total;
            }
        }
        total
    }

    /// After a batch of `n` records taken (the ring was at `from` when the
    /// drain started): counts, notes the high-water mark, wakes producers
    /// waiting for room and writes the sinks whose batch is full.
    fn after_batch(&mut self, n: u64, from: u64) {
        let shared = &self.shared;
        self.records += n;
        // Positions count 8-byte words.
        let took = shared.ring.consumed().wrapping_sub(from) * 8;
        self.high_water = self
            .high_water
            .max(took.min(shared.ring.capacity_bytes() as u64));
        shared.space.notify();
        let now = Instant::now();
        for i in 0..self.sinks.len() {
            if self.sinks[i].unsent() >= self.sinks[i].batch {
                self.write_sink(i, now, false);
                if self.taken {
                    return;
                }
            }
        }
    }

    /// In a crash-durable ring: records where what the writer took went
    /// (the file sinks' bytes into their mirrors, a snapshot naming the
    /// ring position), then hands the ring space back. Before any sink
    /// writes those bytes (see `durable`).
    fn commit_durable(&mut self) {
        let ring = &self.shared.ring;
        let Some(durable) = &mut self.durable else {
            return;
        };
        let taken = ring.consumed();
        if taken == ring.released() {
            return;
        }
        let sinks = &self.sinks;
        durable.commit(taken, |i| sinks[i].durable_view());
        ring.release();
        // Never silently: bytes a mirror could not hold (one record that
        // formats to more than half of it) are said at once.
        if let Some((lost, mirror)) = durable.take_overflow() {
            let msg = format!(
                "{lost} formatted bytes outgrew the crash-durable mirror of {mirror} bytes: \
                 a crash before they are written loses them (a record formatted to more \
                 than half a mirror; a mirror holds twice the largest file sink's buffer_size)"
            );
            self.broadcast(Level::Warn, &msg, None);
        }
    }

    /// In a crash-durable ring: once the file sinks have written the
    /// notices of the push-time losses reported last, names them in a
    /// snapshot (see `durable`, "Losses at push time").
    fn settle_durable(&mut self) {
        if let Some(durable) = &mut self.durable {
            let sinks = &self.sinks;
            durable.settle_reported(|i| sinks[i].written);
        }
    }

    /// Notes that a drain starts at `now`, at ring position `consumed`:
    /// from the ring space taken since the last one started (what the
    /// producers claimed before it), the time the producers take at that
    /// rate to claim `1 / FILL_SHARE` of the ring.
    fn note_fill(&mut self, now: Instant, consumed: u64) {
        let came = consumed.wrapping_sub(self.taken_at);
        let since = now.saturating_duration_since(self.drain_at);
        (self.drain_at, self.taken_at) = (now, consumed);
        self.fill_time = fill_time(since, came, self.shared.ring.capacity_words() / FILL_SHARE);
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
            let durable = &mut self.durable;
            let event = self.sinks[i].write_out(now, last, &mut |view| {
                if let Some(d) = durable {
                    d.note_new_file(i, view);
                }
            });
            if !self.leave_io() {
                return;
            }
            event
        } else {
            self.sinks[i].write_out(now, last, &mut |_| {})
        };
        if let Some((level, msg)) = event {
            self.broadcast(level, &msg, Some(i));
        }
    }

    fn write_all(&mut self, now: Instant, last: bool) {
        for i in 0..self.sinks.len() {
            if let Some((level, msg)) = self.sinks[i].housekeeping_notices(now) {
                self.broadcast(level, &msg, Some(i));
            }
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
        self.report_suppressed(now, force);
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
        if let Some(durable) = &mut self.durable {
            let sinks = &self.sinks;
            durable.note_reported(self.losses.each_ref().map(Loss::reported), |i| {
                sinks[i].appended
            });
        }
        for i in 0..self.sinks.len() {
            let sink = &mut self.sinks[i];
            sink.dead_loss.observe(sink.dropped_dead, now);
            if let Some((n, first, last)) = sink.dead_loss.take(now, force) {
                let msg = loss_message(n, &format!("sink {} failed", sink.name), (first, last));
                self.broadcast(Level::Warn, &msg, Some(i));
            }
            // Refusals: to the other sinks at most once an interval (a
            // receiver refusing every request would otherwise get a notice
            // per request); to the sink itself only once its receiver takes
            // a request again, never through the receiver refusing them.
            let sink = &mut self.sinks[i];
            sink.reject_loss.observe(sink.dropped_rejected, now);
            sink.reject_self_loss.observe(sink.dropped_rejected, now);
            let why = |sink: &SinkState| {
                format!(
                    "sink {} refused them: {}",
                    sink.name,
                    sink.refusal.as_deref().unwrap_or("unknown error")
                )
            };
            if let Some((n, first, last)) = sink.reject_loss.take_every(now, force) {
                let msg = loss_message(n, &why(sink), (first, last));
                self.broadcast(Level::Warn, &msg, Some(i));
            }
            let sink = &mut self.sinks[i];
            if !sink.refusing {
                if let Some((n, first, last)) = sink.reject_self_loss.take(now, true) {
                    let msg = loss_message(n, &why(sink), (first, last));
                    sink.add_notice(Level::Warn, &msg);
                }
            }
            // Records shed by a sink too slow or failing: to the other
            // sinks as they go (the sink itself gets its gap notice once
            // it has drained).
            let sink = &mut self.sinks[i];
            sink.shed_slow_loss.observe(sink.shed_slow, now);
            if let Some((n, first, last)) = sink.shed_slow_loss.take(now, force) {
                let msg = loss_message(n, &sink.shed_reason_slow(), (first, last));
                self.broadcast(Level::Warn, &msg, Some(i));
            }
            let sink = &mut self.sinks[i];
            sink.shed_failing_loss.observe(sink.shed_failing, now);
            if let Some((n, first, last)) = sink.shed_failing_loss.take(now, force) {
                let msg = loss_message(n, &sink.shed_reason_failing(), (first, last));
                self.broadcast(Level::Warn, &msg, Some(i));
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

    /// Reports the calls that limited call sites suppressed, per site: at
    /// least once a [`REPORT_EVERY`](crate::accounting::loss::REPORT_EVERY) while a count grows, at once when
    /// it stops, and everything pending if `force` (a flush, the shutdown).
    fn report_suppressed(&mut self, now: SystemTime, force: bool) {
        // The lock only when sites were added (see `limits_len`).
        let listed = self.shared.counters.limits_len.load(Ordering::Acquire);
        if listed > self.limits.len() {
            let list = self.shared.counters.lock_limits();
            let known = self.limits.len();
            self.limits
                .extend(list.iter().skip(known).map(|&site| (site, Loss::default())));
        }
        for i in 0..self.limits.len() {
            let (site, loss) = &mut self.limits[i];
            let site: &'static crate::limit::SiteLimit = site;
            loss.observe(site.suppressed(), now);
            if let Some((n, first, last)) = loss.take(now, force) {
                let msg = site.notice_message(n, (first, last));
                let location = site.location();
                let rule = site.rule_text();
                let info = crate::record::Suppressed::new(n, &location, site.reason(), &rule);
                for sink in &mut self.sinks {
                    sink.add_suppressed_notice(&msg, info);
                }
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
            self.shared.notify_progress();
        }
        let dump = self.shared.ctl.dump.req.load(Ordering::SeqCst);
        if dump > self.dump_done {
            for sink in &mut self.sinks {
                sink.dump_backtrace();
            }
            self.dump_done = dump;
            self.shared.ctl.dump.done.store(dump, Ordering::SeqCst);
            self.shared.notify_progress();
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
            // Only the requests whose lane records were moved into the ring.
            let seq = self.swept_up_to(scope, p.seq.load(Ordering::SeqCst));
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
            let mut event = self.sinks[i].flush_output(now);
            if fsync && !self.sinks[i].dead {
                if let Err(e) = self.sinks[i].output.sync() {
                    event = self.sinks[i].failed(e, now);
                }
            }
            if !self.leave_io() {
                return;
            }
            if let Some((level, msg)) = event {
                self.broadcast(level, &msg, Some(i));
            }
        }
        self.publish(now);
        p.done.fetch_max(target, Ordering::SeqCst);
        p.seq_done.fetch_max(seq, Ordering::SeqCst);
        shared.notify_progress();
    }

    fn check_rotation(&mut self, force: bool) {
        let now = Instant::now();
        for i in 0..self.sinks.len() {
            if self.sinks[i].output.rolls() {
                // A rolling file that cannot be reopened keeps the old one:
                // a notice, not a failed sink.
                if !self.enter_io(now) {
                    return;
                }
                let notice = self.sinks[i].output.reopen_rolling(force);
                if !self.leave_io() {
                    return;
                }
                match notice {
                    Ok(Some(msg)) => {
                        let msg = format!("sink {}: {msg}", self.sinks[i].name);
                        self.broadcast(Level::Warn, &msg, None);
                    }
                    Ok(None) => {}
                    Err(e) => {
                        if let Some((level, msg)) = self.sinks[i].failed(e, now) {
                            self.broadcast(level, &msg, Some(i));
                        }
                    }
                }
                continue;
            }
            let file = self.sinks[i].output.is_file();
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
    /// [`PUBLISH_INTERVAL`](crate::accounting::metrics::PUBLISH_INTERVAL) (and at the end).
    #[cfg(feature = "metrics")]
    fn record_metrics(&mut self, now: Instant, last: bool) {
        if last
            || now.duration_since(self.metrics_at) >= crate::accounting::metrics::PUBLISH_INTERVAL
        {
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
        self.sleep = next_sleep(
            busy || pending_flush,
            self.sleep,
            self.fill_time,
            self.interval,
            self.idle_interval,
        );
        let mut timeout = self.sleep;
        if self.losses.iter().any(Loss::unreported)
            || self.limits.iter().any(|(_, loss)| loss.unreported())
            || self.sinks.iter().any(SinkState::losses_unreported)
        {
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

    /// Sleeps on the doorbell (if `doorbell`) and the sinks waiting for
    /// room or for an answer (OTLP), at most `timeout`
    /// ([`crate::sys::sleep`]: `poll` on Unix).
    fn poll(&mut self, timeout: Duration, doorbell: bool) {
        let shared = Arc::clone(&self.shared);
        let waits: Vec<_> = self
            .sinks
            .iter()
            .filter(|sink| sink.waiting_for_room())
            .filter_map(|sink| sink.output.poll_fd())
            .collect();
        let reads: Vec<_> = self
            .sinks
            .iter()
            .filter(|sink| sink.waiting_for_room())
            .filter_map(|sink| sink.output.poll_read_fd())
            .collect();
        let bell = doorbell.then_some(&shared.doorbell);
        crate::sys::sleep(bell, &waits, &reads, timeout);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn fill_time_is_the_time_to_claim_the_share_at_the_seen_rate() {
        // 1000 words in 1 ms: 16 384 words take 16.384 ms.
        assert_eq!(fill_time(MS, 1000, 16_384), Duration::from_micros(16_384));
        assert_eq!(fill_time(MS, 0, 16_384), Duration::MAX);
        // No overflow whatever the inputs.
        assert_eq!(fill_time(Duration::MAX, 1, u64::MAX), Duration::MAX);
        assert_eq!(fill_time(Duration::ZERO, u64::MAX, 1), Duration::ZERO);
    }

    #[test]
    fn busy_sleep_follows_the_fill_rate_between_the_floor_and_the_interval() {
        let (interval, idle) = (3 * MS, 50 * MS);
        // Slow producers: the flush interval.
        assert_eq!(
            next_sleep(true, idle, Duration::MAX, interval, idle),
            interval
        );
        assert_eq!(next_sleep(true, idle, 40 * MS, interval, idle), interval);
        // Fast ones: before they fill the share.
        assert_eq!(next_sleep(true, interval, MS, interval, idle), MS);
        // Very fast ones: never below the floor.
        let tiny = Duration::from_micros(3);
        assert_eq!(next_sleep(true, interval, tiny, interval, idle), MIN_SLEEP);
        // A flush interval below the floor is kept.
        assert_eq!(next_sleep(true, interval, tiny, tiny, idle), tiny);
    }

    #[test]
    fn idle_sleep_doubles_up_to_the_idle_interval() {
        let (interval, idle) = (3 * MS, 50 * MS);
        let mut sleep = interval;
        let mut seen = vec![];
        for _ in 0..6 {
            sleep = next_sleep(false, sleep, MS, interval, idle);
            seen.push(sleep.as_millis());
        }
        assert_eq!(seen, [6, 12, 24, 48, 50, 50]);
    }
}
