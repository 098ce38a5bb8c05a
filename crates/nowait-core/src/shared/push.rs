//! The producer's side of the ring: claim, and on the slow path the full
//! policy, the forked-child start and the write-through wait.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{FlushScope, Shared};
use crate::accounting::loss::ring_loss;
use crate::accounting::policy::FullPolicy;
use crate::error::PushError;
use crate::ring::{self, Payload, Ring};
use crate::shared::lanes::Lanes;

/// Bytes of the time put in front of records that carry none while lanes
/// are on (see `writer::lanes`, which strips it).
pub(crate) const TIME_PREFIX: usize = 8;

/// A payload with a time in front of it (see `writer::lanes`).
struct Timed<'a, P: ?Sized> {
    time: [u8; TIME_PREFIX],
    inner: &'a P,
}

impl<P: Payload + ?Sized> Payload for Timed<'_, P> {
    #[inline]
    fn payload_len(&self) -> usize {
        TIME_PREFIX + self.inner.payload_len()
    }

    #[inline]
    fn write_to(&self, dst: &mut [u8]) {
        let (time, rest) = dst.split_at_mut(TIME_PREFIX);
        time.copy_from_slice(&self.time);
        self.inner.write_to(rest);
    }
}

/// Where a push that did not fit at once retries: the thread's lane (with
/// its claim limit for unprotected levels) or the shared ring.
#[derive(Clone, Copy)]
enum Queue<'a> {
    Lane(&'a Ring, usize),
    Ring,
}

impl<'a> Queue<'a> {
    fn ring(self, shared: &'a Shared) -> &'a Ring {
        match self {
            Queue::Lane(lane, _) => lane,
            Queue::Ring => &shared.ring,
        }
    }
}
use crate::level::Level;

/// A blocked producer re-rings the doorbell this often (a forked child
/// sharing the eventfd may have swallowed a ring).
const REWAKE: Duration = Duration::from_millis(50);

impl Shared {
    /// Pushes one record made of the concatenation of `parts`. With
    /// `wait`, a full ring is handled by the policy (block, block with a
    /// deadline, or drop); without, it drops.
    #[inline]
    pub(crate) fn push(
        self: &Arc<Self>,
        level: Level,
        kind: u8,
        parts: &[&[u8]],
        wait: bool,
    ) -> Result<(), PushError> {
        self.push_payload(level, kind, &parts, wait)
    }

    /// [`push`](Shared::push) for any [`Payload`]: generic so that the
    /// fast path inlines the writing of the record (the macros encode
    /// straight into the ring); the slow path is one copy for all payloads.
    #[inline]
    pub(crate) fn push_payload<P: Payload>(
        self: &Arc<Self>,
        level: Level,
        kind: u8,
        payload: &P,
        wait: bool,
    ) -> Result<(), PushError> {
        match &self.lanes {
            None => self.push_ring(level, kind, payload, wait),
            Some(lanes) if kind == crate::record::kind::EVENT => {
                self.push_lane(lanes, level, kind, payload, wait)
            }
            // The writer merges the lanes by time: a record that carries none
            // gets one in front (stripped before any format sees it).
            Some(lanes) => {
                let timed = Timed {
                    time: crate::record::clock::now().to_le_bytes(),
                    inner: payload,
                };
                self.push_lane(lanes, level, kind, &timed, wait)
            }
        }
    }

    /// Into the calling thread's lane; into the ring if it has none, or if
    /// the record does not fit in the lane (too large, or the lane full or
    /// past its high-water mark: the ring is the reserve every thread
    /// shares, and the writer's merge by time keeps the thread's order).
    #[inline]
    fn push_lane<P: Payload>(
        self: &Arc<Self>,
        lanes: &Arc<Lanes>,
        level: Level,
        kind: u8,
        payload: &P,
        wait: bool,
    ) -> Result<(), PushError> {
        let Some(slot) = lanes.lane() else {
            return self.push_ring(level, kind, payload, wait);
        };
        let spilled = slot.spill_until.load(Ordering::Relaxed);
        if spilled == 0 || self.ring.released() >= spilled {
            if spilled != 0 {
                slot.spill_until.store(0, Ordering::Relaxed);
            }
            let lane = &slot.ring;
            let limit = if level >= self.protect {
                usize::MAX
            } else {
                lanes.low_limit
            };
            match lane.try_push_below(level as u8, kind, payload, limit) {
                Ok(_) => {
                    self.accepted(level);
                    return Ok(());
                }
                Err(
                    ring::ClaimError::Full | ring::ClaimError::Shed | ring::ClaimError::TooLarge,
                ) => {}
                Err(e) => {
                    let queue = Queue::Lane(lane, lanes.low_limit);
                    return self.push_slow(queue, level, kind, payload, wait, e);
                }
            }
        }
        let pushed = self.push_ring(level, kind, payload, wait);
        if pushed.is_ok() {
            // Our later records stay in the ring until the writer took
            // this one (a position never 0 once a record was claimed).
            slot.spill_until
                .store(self.ring.claimed().max(1), Ordering::Relaxed);
        }
        pushed
    }

    #[inline]
    fn push_ring<P: Payload>(
        self: &Arc<Self>,
        level: Level,
        kind: u8,
        payload: &P,
        wait: bool,
    ) -> Result<(), PushError> {
        let limit = self.limit(level);
        match self.ring.try_push_below(level as u8, kind, payload, limit) {
            Ok(_) => {
                self.accepted(level);
                Ok(())
            }
            Err(e) => self.push_slow(Queue::Ring, level, kind, payload, wait, e),
        }
    }

    /// Claims in the shared ring and nothing else: no lane (no
    /// thread-local), no counting, no waiting. For a fatal-signal handler,
    /// which may only do async-signal-safe work.
    pub(crate) fn try_push_ring_only(
        &self,
        level: Level,
        kind: u8,
        parts: &[&[u8]],
    ) -> Result<usize, ring::ClaimError> {
        if self.lanes.is_some() && kind != crate::record::kind::EVENT {
            let timed = Timed {
                time: crate::record::clock::now().to_le_bytes(),
                inner: &parts,
            };
            self.ring
                .try_push_below(level as u8, kind, &timed, usize::MAX)
        } else {
            self.ring
                .try_push_below(level as u8, kind, &parts, usize::MAX)
        }
    }

    /// The largest payload a push takes (the ring's, less the time put in
    /// front of untimed records while lanes are on).
    pub(crate) fn max_payload(&self) -> usize {
        let max = self.ring.max_payload();
        if self.lanes.is_some() {
            max.saturating_sub(TIME_PREFIX)
        } else {
            max
        }
    }

    /// Pushes a record recovered from a crash-durable file (at build, on
    /// the builder's thread, before any other producer exists): waits for
    /// room until `deadline`, whatever the policy. `Full` if the ring
    /// stayed full (a writer stuck in a sink, or not started yet).
    pub(crate) fn push_recovered(
        self: &Arc<Self>,
        level: Level,
        kind: u8,
        payload: &[u8],
        deadline: std::time::Instant,
    ) -> Result<(), ring::ClaimError> {
        loop {
            match self
                .ring
                .try_push_below(level as u8, kind, &[payload].as_slice(), usize::MAX)
            {
                Ok(_) => {
                    self.accepted(level);
                    return Ok(());
                }
                Err(ring::ClaimError::Full) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(e) => return Err(e),
            }
        }
    }

    #[inline]
    fn limit(&self, level: Level) -> usize {
        if level >= self.protect {
            usize::MAX
        } else {
            self.low_limit
        }
    }

    #[cold]
    #[inline(never)]
    fn push_slow(
        self: &Arc<Self>,
        queue: Queue<'_>,
        level: Level,
        kind: u8,
        parts: &dyn Payload,
        wait: bool,
        first: ring::ClaimError,
    ) -> Result<(), PushError> {
        let c = &self.counters;
        let bound = match self.policy {
            FullPolicy::Block => Some(None),
            FullPolicy::BlockTimeout(d) => Some(Some(d)),
            _ => None,
        };
        // Never wait on a writer thread (it is the one that makes room).
        let bound = bound.filter(|_| wait && !Shared::on_writer_thread());
        let mut deadline: Option<Option<Instant>> = None;
        let mut err = first;
        loop {
            match err {
                ring::ClaimError::Forked => self.ensure_writer(),
                ring::ClaimError::Closed => {
                    self.count_loss(&c.dropped_closed, ring_loss::CLOSED);
                    return Err(PushError::Closed);
                }
                ring::ClaimError::TooLarge => {
                    self.count_loss(&c.dropped_too_large, ring_loss::TOO_LARGE);
                    return Err(PushError::TooLarge);
                }
                ring::ClaimError::Shed => {
                    self.count_loss(&c.dropped_shed, ring_loss::SHED);
                    return Err(PushError::Shed);
                }
                ring::ClaimError::Full => {
                    let Some(bound) = bound else {
                        self.count_loss(&c.dropped_full, ring_loss::FULL);
                        return Err(PushError::Full);
                    };
                    let deadline = *deadline.get_or_insert_with(|| {
                        c.blocked_waits.fetch_add(1, Ordering::Relaxed);
                        bound.map(crate::record::clock::deadline_after)
                    });
                    match self.wait_for_room(queue.ring(self), level, kind, parts, deadline) {
                        Ok(()) => {
                            self.accepted(level);
                            return Ok(());
                        }
                        Err(ring::ClaimError::Full) => {
                            self.count_loss(&c.dropped_timeout, ring_loss::TIMEOUT);
                            return Err(PushError::TimedOut);
                        }
                        Err(e) => {
                            err = e;
                            continue;
                        }
                    }
                }
            }
            let limit = match queue {
                _ if level >= self.protect => usize::MAX,
                Queue::Lane(_, low) => low,
                Queue::Ring => self.low_limit,
            };
            match queue
                .ring(self)
                .try_push_below(level as u8, kind, parts, limit)
            {
                Ok(_) => {
                    self.accepted(level);
                    return Ok(());
                }
                Err(e) => err = e,
            }
        }
    }

    /// Counts a record refused at push time in `counter` and, in a
    /// crash-durable ring, in the file's loss words (`ring_loss` index
    /// `reason`), so that a process killed before its writer reported the
    /// loss still has it announced by the next start.
    pub(crate) fn count_loss(&self, counter: &std::sync::atomic::AtomicU64, reason: usize) {
        counter.fetch_add(1, Ordering::Relaxed);
        if let Some(file) = &self.durable {
            file.count_loss(reason);
        }
    }

    /// Retries the claim until it succeeds, fails for another reason than
    /// a full ring, or `deadline` passes (then `Err(Full)`). Parked on a
    /// futex between tries; the writer notifies after releasing space.
    fn wait_for_room(
        &self,
        queue: &Ring,
        level: Level,
        kind: u8,
        parts: &dyn Payload,
        deadline: Option<Instant>,
    ) -> Result<(), ring::ClaimError> {
        self.blocked.fetch_add(1, Ordering::SeqCst);
        let result = loop {
            // Register before the retry, so that space released after the
            // retry's look at the ring bumps the sequence we sleep on.
            let seen = self.space.prepare();
            match queue.try_push_below(level as u8, kind, parts, usize::MAX) {
                Err(ring::ClaimError::Full) => {}
                other => {
                    self.space.done();
                    break other.map(|_| ());
                }
            }
            let now = Instant::now();
            let left = deadline.map_or(REWAKE, |d| d.saturating_duration_since(now));
            if left.is_zero() {
                self.space.done();
                break Err(ring::ClaimError::Full);
            }
            self.doorbell.ring();
            self.space.wait(seen, left.min(REWAKE));
            self.space.done();
        };
        self.blocked.fetch_sub(1, Ordering::SeqCst);
        result
    }

    /// After a record was accepted: write-through for a record at or above
    /// the configured level (one byte compare otherwise).
    #[inline]
    fn accepted(self: &Arc<Self>, level: Level) {
        if level as u8 >= self.write_through_from {
            self.write_through_wait();
        }
    }

    /// Write-through: returns once the durable sinks have every record
    /// accepted so far (bounded by the flush timeout).
    #[cold]
    #[inline(never)]
    fn write_through_wait(self: &Arc<Self>) {
        let _ = self.flush(FlushScope::Durable, self.flush_timeout);
    }
}
