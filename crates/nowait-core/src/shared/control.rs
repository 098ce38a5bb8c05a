//! Requests to the writer (flush, reopen, reconfigure, shutdown) and the
//! writer's answers, as monotonic numbers in atomics.
//!
//! A caller publishes what it wants (`req.fetch_max(target)`), rings the
//! doorbell, and waits on [`Shared::progress`] until the writer's `done`
//! passes its target or its own deadline passes. The writer answers the
//! largest request it has seen, so one answer serves every caller waiting
//! for less. A caller that gives up leaves at most a larger `req` behind,
//! which the writer answers in its own time: no queue can fill up, which is
//! why no number of timed-out flushes can make a later call block.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use super::{consumer, state, Shared};
use crate::error::FlushError;

/// A batch size between 1 byte and the ring's largest capacity (the
/// writer's buffers start at the batch size).
pub(crate) fn check_batch_size(bytes: usize) -> Result<(), crate::error::BuildError> {
    if bytes == 0 || bytes > crate::ring::MAX_CAPACITY {
        return Err(crate::error::BuildError::config(format!(
            "batch_size must be between 1 byte and 1 GiB, got {bytes}"
        )));
    }
    Ok(())
}

/// Which sinks a flush waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FlushScope {
    /// Every sink (that is not failed, stalled or shedding).
    All = 0,
    /// Files and custom writers only: what the panic hook and write-through
    /// wait for, so that a stalled terminal never holds them.
    Durable = 1,
}

/// One request/answer pair.
#[derive(Debug, Default)]
pub(crate) struct Progress {
    /// The largest target asked for.
    pub(crate) req: AtomicU64,
    /// The largest target answered.
    pub(crate) done: AtomicU64,
    /// Requests made / answered, counted: every flush waits for a round of
    /// the writer (which reports losses counted before it), even when its
    /// target position was already reached.
    pub(crate) seq: AtomicU64,
    pub(crate) seq_done: AtomicU64,
}

/// The writer's inbox, read on every round.
#[derive(Debug)]
pub(crate) struct Control {
    /// Per [`FlushScope`]: ring positions. `done >= P` means every record
    /// claimed before `P` is written to every sink in the scope (or counted
    /// as lost there, or its sink is failed or stalled) and custom writers
    /// were flushed.
    pub(crate) flush: [Progress; 2],
    /// Whether a durable flush also `fsync`s files (write-through with
    /// fsync). Set once at build.
    pub(crate) fsync: AtomicBool,
    /// Reopen requests, counted.
    pub(crate) reopen: Progress,
    /// Requests to dump the backtraces' records (`Logger::dump_recent`),
    /// counted.
    pub(crate) dump: Progress,
    /// The writer's busy interval and batch size (reconfigure).
    pub(crate) interval_ns: AtomicU64,
    pub(crate) batch: AtomicUsize,
    /// The shutdown deadline, in nanoseconds since [`origin`].
    pub(crate) deadline_ns: AtomicU64,
}

impl Control {
    pub(crate) fn new(interval: Duration, batch: usize) -> Control {
        Control {
            flush: Default::default(),
            fsync: AtomicBool::new(false),
            reopen: Progress::default(),
            dump: Progress::default(),
            interval_ns: AtomicU64::new(interval.as_nanos().min(u64::MAX as u128) as u64),
            batch: AtomicUsize::new(batch),
            deadline_ns: AtomicU64::new(u64::MAX),
        }
    }

    /// Forked child: the parent's requests are not the child's.
    pub(crate) fn reset_after_fork(&self, position: u64) {
        for p in &self.flush {
            p.req.store(position, Ordering::SeqCst);
            p.done.store(position, Ordering::SeqCst);
            let n = p.seq.load(Ordering::SeqCst);
            p.seq_done.store(n, Ordering::SeqCst);
        }
        let r = self.reopen.req.load(Ordering::SeqCst);
        self.reopen.done.store(r, Ordering::SeqCst);
        let d = self.dump.req.load(Ordering::SeqCst);
        self.dump.done.store(d, Ordering::SeqCst);
        // Nor is a shutdown the parent had begun: the child's own stores
        // its deadline (the first one stands).
        self.deadline_ns.store(u64::MAX, Ordering::SeqCst);
    }

    /// The shutdown deadline, if shutdown was asked.
    pub(crate) fn deadline(&self) -> Option<Instant> {
        match self.deadline_ns.load(Ordering::SeqCst) {
            u64::MAX => None,
            ns => Some(origin() + Duration::from_nanos(ns)),
        }
    }
}

/// A fixed instant to store deadlines as numbers.
fn origin() -> Instant {
    static ORIGIN: OnceLock<Instant> = OnceLock::new();
    *ORIGIN.get_or_init(Instant::now)
}

fn to_ns(t: Instant) -> u64 {
    t.saturating_duration_since(origin())
        .as_nanos()
        .min(u64::MAX as u128 - 1) as u64
}

/// How long the records of a claim may take to be committed once the ring
/// is closed (a producer between its claim and its commit is copying bytes).
const COMMIT_GRACE: Duration = Duration::from_millis(20);
/// How long a shutdown past its timeout waits for a writer that is running
/// its own code (not blocked in a sink's write, where it would be taken
/// over at once) to finish its counting.
pub(crate) const FINISH_GRACE: Duration = Duration::from_millis(100);

impl Shared {
    /// Waits on [`Shared::progress`] until `cond` holds or `deadline`
    /// passes. Returns whether `cond` holds.
    pub(crate) fn wait_until(&self, deadline: Instant, cond: impl Fn() -> bool) -> bool {
        loop {
            let seen = self.progress.prepare();
            if cond() {
                self.progress.done();
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                self.progress.done();
                return false;
            }
            // Re-ring now and then: a forked child shares the doorbell and
            // may have swallowed our ring.
            self.progress
                .wait(seen, (deadline - now).min(Duration::from_millis(50)));
            self.progress.done();
            if !cond() {
                self.doorbell.ring();
            }
        }
    }

    /// Waits until every record claimed before the call is written to the
    /// sinks of `scope` (see [`Progress`]), at most `timeout`.
    pub(crate) fn flush(
        self: &Arc<Self>,
        scope: FlushScope,
        timeout: Duration,
    ) -> Result<(), FlushError> {
        if Shared::on_writer_thread() {
            return Err(FlushError::TimedOut);
        }
        self.ensure_writer();
        if self.state.load(Ordering::SeqCst) != state::RUNNING {
            return Err(FlushError::Closed);
        }
        let deadline = crate::record::clock::deadline_after(timeout);
        let n = self.request_flush(scope);
        let p = &self.ctl.flush[scope as usize];
        let answered = || p.seq_done.load(Ordering::SeqCst) >= n;
        let done = self.wait_until(deadline, || {
            answered() || self.state.load(Ordering::SeqCst) != state::RUNNING
        });
        if !answered() {
            return Err(if done {
                FlushError::Closed
            } else {
                FlushError::TimedOut
            });
        }
        self.flush_result(scope)
    }

    /// Asks the writer for a flush of every record claimed before the
    /// call to the sinks of `scope`; returns the sequence number whose
    /// answer (`seq_done >= n`) means it is done.
    pub(crate) fn request_flush(&self, scope: FlushScope) -> u64 {
        let target = self.ring.claimed();
        let p = &self.ctl.flush[scope as usize];
        // The target first, then the sequence: the writer reads them in the
        // opposite order, so an answer to sequence `n` covers our target.
        p.req.fetch_max(target, Ordering::SeqCst);
        let n = p.seq.fetch_add(1, Ordering::SeqCst) + 1;
        self.doorbell.ring();
        n
    }

    /// The first sink error since the last flush, else a stalled sink, else
    /// success.
    pub(crate) fn flush_result(&self, scope: FlushScope) -> Result<(), FlushError> {
        let in_scope =
            |s: &&crate::accounting::stats::SinkCounters| scope == FlushScope::All || s.durable;
        for s in self.sinks.iter().filter(in_scope) {
            if let Ok(mut e) = s.flush_error.try_lock() {
                if let Some(source) = e.take() {
                    return Err(FlushError::Sink {
                        sink: s.name.clone(),
                        source,
                    });
                }
            }
        }
        if let Some(s) = self
            .sinks
            .iter()
            .filter(in_scope)
            .find(|s| s.stalled.load(Ordering::Relaxed))
        {
            return Err(FlushError::Stalled {
                sink: s.name.clone(),
            });
        }
        Ok(())
    }

    /// Asks the writer to reopen file sinks and waits for it.
    pub(crate) fn reopen(self: &Arc<Self>) -> Result<(), FlushError> {
        if Shared::on_writer_thread() {
            return Err(FlushError::TimedOut);
        }
        self.ensure_writer();
        if self.state.load(Ordering::SeqCst) != state::RUNNING {
            return Err(FlushError::Closed);
        }
        let deadline = crate::record::clock::deadline_after(self.flush_timeout);
        let n = self.ctl.reopen.req.fetch_add(1, Ordering::SeqCst) + 1;
        self.doorbell.ring();
        let r = &self.ctl.reopen;
        if !self.wait_until(deadline, || {
            r.done.load(Ordering::SeqCst) >= n
                || self.state.load(Ordering::SeqCst) != state::RUNNING
        }) {
            return Err(FlushError::TimedOut);
        }
        if r.done.load(Ordering::SeqCst) < n {
            return Err(FlushError::Closed);
        }
        self.flush_result(FlushScope::All)
    }

    /// Asks the writer to write what each sink's backtrace keeps now
    /// (without forgetting it), after every record pushed before the call,
    /// and waits until that is written: a flush, the dump, a flush, all
    /// within one flush timeout.
    pub(crate) fn dump_recent(self: &Arc<Self>) -> Result<(), FlushError> {
        if Shared::on_writer_thread() {
            return Err(FlushError::TimedOut);
        }
        let deadline = crate::record::clock::deadline_after(self.flush_timeout);
        let left = || deadline.saturating_duration_since(Instant::now());
        // The records pushed before the call reach the backtraces first.
        match self.flush(FlushScope::All, left()) {
            Ok(()) | Err(FlushError::Sink { .. } | FlushError::Stalled { .. }) => {}
            Err(e) => return Err(e),
        }
        let n = self.ctl.dump.req.fetch_add(1, Ordering::SeqCst) + 1;
        self.doorbell.ring();
        let d = &self.ctl.dump;
        if !self.wait_until(deadline, || {
            d.done.load(Ordering::SeqCst) >= n
                || self.state.load(Ordering::SeqCst) != state::RUNNING
        }) {
            return Err(FlushError::TimedOut);
        }
        if d.done.load(Ordering::SeqCst) < n {
            return Err(FlushError::Closed);
        }
        self.flush(FlushScope::All, left())
    }

    /// Shuts the logger down: refuses new records, lets the writer drain
    /// what was accepted until `timeout`, and returns once every accepted
    /// record has its final count, at most `timeout` after the call.
    /// Returns whether the counts are final (false only if the writer is
    /// busy in a user's `Format` past the deadline).
    pub(crate) fn shutdown(self: &Arc<Self>, timeout: Duration) -> bool {
        let deadline = crate::record::clock::deadline_after(timeout);
        // A forked child that never logged has no writer: nothing to drain.
        if self.ring.is_forked()
            && self
                .consumer
                .compare_exchange(
                    consumer::NONE,
                    consumer::TAKEN,
                    Ordering::SeqCst,
                    Ordering::SeqCst,
                )
                .is_ok()
        {
            self.close_queues();
            self.clear_forked();
            self.finish_counting(true);
            return true;
        }
        // The deadline before the state: a writer that wakes on its own may
        // see the logger closing at any moment, and drains until the
        // deadline it reads then. The first shutdown's deadline stands.
        let _ = self.ctl.deadline_ns.compare_exchange(
            u64::MAX,
            to_ns(deadline),
            Ordering::SeqCst,
            Ordering::SeqCst,
        );
        if self
            .state
            .compare_exchange(
                state::RUNNING,
                state::CLOSING,
                Ordering::SeqCst,
                Ordering::SeqCst,
            )
            .is_ok()
        {
            // From here on every push is refused and counted.
            self.close_queues();
            if let Some(durable) = &self.durable {
                durable.retire();
            }
            self.space.notify();
            self.doorbell.ring();
        }
        if Shared::on_writer_thread() {
            // A sink or format shutting its own logger down: the writer
            // finishes after this call returns.
            return false;
        }
        if self.wait_until(deadline, || {
            self.state.load(Ordering::SeqCst) == state::FINISHED
        }) {
            return true;
        }
        // The writer is stuck in a write (or gone): take the counting over.
        // A writer running its own code rather than a sink's write (a thread
        // descheduled on a loaded machine, the last counting) is about to
        // finish or to enter a write: it gets `FINISH_GRACE`, polled, as the
        // role can change without a notification.
        let hard = deadline + FINISH_GRACE;
        loop {
            if self.state.load(Ordering::SeqCst) == state::FINISHED {
                return true;
            }
            let took = [consumer::IN_IO, consumer::NONE].into_iter().any(|from| {
                self.consumer
                    .compare_exchange(from, consumer::TAKEN, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok()
            });
            if took {
                self.finish_counting(true);
                return true;
            }
            let now = Instant::now();
            if now >= hard {
                // Only a custom `Format` that blocks gets here.
                return self.state.load(Ordering::SeqCst) == state::FINISHED;
            }
            let seen = self.progress.prepare();
            if self.state.load(Ordering::SeqCst) != state::FINISHED {
                self.progress
                    .wait(seen, (hard - now).min(Duration::from_millis(1)));
            }
            self.progress.done();
        }
    }

    /// Run by whoever holds the consumer role once draining is over: counts
    /// every record left in the ring as abandoned and, if `takeover`, the
    /// records the writer last said were pending per sink (and those its
    /// backtraces kept, as filtered); marks the counts final and wakes every waiter.
    pub(crate) fn finish_counting(&self, takeover: bool) {
        self.abandon_ring();
        if takeover {
            for s in self.sinks.iter() {
                let pending = s.pending_records.swap(0, Ordering::Relaxed);
                s.abandoned.fetch_add(pending, Ordering::Relaxed);
                // A backtrace's records were never going to be written
                // without a trigger: filtered, as at a normal shutdown.
                let kept = s.backtrace_kept.swap(0, Ordering::Relaxed);
                s.filtered.fetch_add(kept, Ordering::Relaxed);
            }
        }
        self.mark_finished();
    }

    /// Closes the ring and consumes every record left in it, counting each
    /// as abandoned; waits a short grace for claims still being copied.
    /// Only the holder of the consumer role may call it.
    pub(crate) fn abandon_ring(&self) -> u64 {
        self.close_queues();
        let until = Instant::now() + COMMIT_GRACE;
        let mut left = 0u64;
        let lanes = self.lanes.iter().flat_map(|l| l.rings());
        loop {
            for lane in lanes.clone() {
                lane.consume(usize::MAX, |_, _| left += 1);
            }
            self.ring.consume(usize::MAX, |_, _| left += 1);
            // Counted as abandoned: nothing to recover after a crash.
            self.ring.release();
            if self.all_released() {
                break;
            }
            if Instant::now() >= until {
                let unknown: u64 = lanes
                    .clone()
                    .chain(std::iter::once(&self.ring))
                    .map(|r| r.claimed().saturating_sub(r.released()))
                    .sum();
                self.counters
                    .abandoned_unknown_bytes
                    .fetch_add(unknown * 8, Ordering::Relaxed);
                break;
            }
            std::thread::yield_now();
        }
        self.counters.abandoned.fetch_add(left, Ordering::Relaxed);
        left
    }

    /// The counts are final: wakes everybody waiting on the logger.
    pub(crate) fn mark_finished(&self) {
        self.state.store(state::FINISHED, Ordering::SeqCst);
        self.notify_progress();
        self.space.notify();
    }
}
