//! Draining the threads' lanes and the ring together, merged by timestamp
//! (see `shared::lanes` for why lanes exist).
//!
//! # The merge
//!
//! The inputs are every lane and the shared ring (which takes the records
//! of threads without a lane, records larger than half a lane, and what
//! overflows a full lane). Each input is in its producers' order. The
//! writer looks at the oldest record of each input and formats the one
//! with the earliest timestamp, until no input has a record older than
//! the grace period ([`GRACE`]) or the batch is full. A record stamped
//! within the grace period waits for the next drain, so that a record of
//! another thread stamped just before it, but not committed yet, is
//! written before it. A record whose commit lags its timestamp by more than
//! the grace period (its thread was preempted in between) can appear after
//! later records of other threads.
//!
//! A thread's own records are in order even across inputs (a lane that
//! overflowed into the ring): a thread's timestamps never decrease, and
//! records that carry none (text lines, custom kinds) get one in front of
//! their payload while lanes are on, which the writer strips
//! ([`split_time`]).
//!
//! A flush, a shutdown and the crash drain do not wait for the grace
//! period: they take everything committed (`forced`).
//!
//! # Flushes
//!
//! A flush's target is a ring position, which says nothing about the
//! lanes. So when the writer sees a new flush request it notes every
//! lane's claim position ([`Goal`]); once it has taken everything before
//! those positions it answers the requests it saw (`swept`), as soon as
//! the ring is also drained past their target.

use std::sync::atomic::Ordering;
use std::time::Duration;

use super::Writer;
use crate::level::Level;
use crate::record::{kind, Record};
use crate::ring::{record_words, Ring};
use crate::shared::lanes::Lanes;
use crate::shared::{state, FlushScope};

/// How long a record waits after its timestamp before it is written, so
/// that records of other threads stamped before it are written before it.
pub(crate) const GRACE: Duration = Duration::from_micros(100);

/// A record stamped further than this ahead of the writer's clock is
/// written at once instead of waiting for its time.
const FUTURE: Duration = Duration::from_secs(1);

use crate::shared::TIME_PREFIX;

/// How far the lanes must be taken before flush requests up to `seqs` can
/// be answered.
#[derive(Debug)]
pub(super) struct Goal {
    seqs: [u64; 2],
    heads: Vec<u64>,
}

/// A record's time field and the payload a format sees: an event's time
/// is its first field; other kinds carry one in front, stripped here.
pub(crate) fn split_time(kind: u8, payload: &[u8]) -> (u64, &[u8]) {
    let time = payload
        .get(..TIME_PREFIX)
        .map_or(0, |t| u64::from_le_bytes(t.try_into().expect("8 bytes")));
    if kind == kind::EVENT {
        (time, payload)
    } else {
        (time, payload.get(TIME_PREFIX..).unwrap_or_default())
    }
}

impl Writer {
    /// Takes up to about `max_bytes` of records from the lanes and the
    /// ring, oldest timestamp first, and formats them for every sink.
    /// Returns how many it took and the most ring words taken from one
    /// lane.
    pub(super) fn take_merged(&mut self, lanes: &Lanes, max_bytes: usize) -> (u64, u64) {
        self.note_goal(lanes);
        let shared = std::sync::Arc::clone(&self.shared);
        let forced = self.goal.is_some()
            || self.flush_pending()
            || shared.state.load(Ordering::Relaxed) != state::RUNNING;
        let now = crate::record::clock::order_key_now();
        let horizon = if forced {
            u64::MAX
        } else {
            now.saturating_sub(crate::record::clock::order_span(GRACE))
        };
        // A time from the future (a front end's own clock, a bad value) is
        // due at once: it must never hold its lane or the ring back.
        let future = now.saturating_add(crate::record::clock::order_span(FUTURE));
        let ring = lanes.len();
        let input = |i: usize| -> &Ring {
            if i < ring {
                lanes.ring(i)
            } else {
                &shared.ring
            }
        };
        // Per input: its front's key, its cursor, and where it started;
        // `live`: the inputs the merge looks at (the ring, and the lanes
        // held by a thread or holding records; the others cannot get a
        // record without a thread taking them, which `acquisitions` tells).
        let mut keys = std::mem::take(&mut self.lane_keys);
        let mut live = std::mem::take(&mut self.live);
        keys.clear();
        keys.resize(ring + 1, Front::default());
        live.clear();
        let mut acquired = lanes.acquisitions();
        // The ring first, then the lanes: see below.
        for i in std::iter::once(ring).chain(0..ring) {
            let from = input(i);
            let mut pos = from.consumed();
            keys[i] = Front {
                key: front_key(from, &mut pos),
                pos,
                start: pos,
            };
            if i == ring || keys[i].key.is_some() || lanes.is_held(i) {
                live.push(i);
            }
        }
        let (mut taken, mut bytes) = (0u64, 0usize);
        while bytes < max_bytes {
            let mut best: Option<(usize, u64)> = None;
            for &i in &live {
                if let Some(k) = keys[i].key {
                    if (k <= horizon || k > future) && best.map_or(true, |(_, b)| k < b) {
                        best = Some((i, k));
                    }
                }
            }
            let Some((i, _)) = best else { break };
            let from = input(i);
            let sinks = &mut self.sinks;
            let mut pos = keys[i].pos;
            let took = from.front_at(&mut pos, |header, payload| {
                let level = Level::from_u8(header.level).unwrap_or(Level::Error);
                let (_, payload) = split_time(header.kind, payload);
                let record = Record::new(level, header.kind, payload);
                for sink in sinks.iter_mut() {
                    sink.add_record(&record);
                }
                record_words(header.len as usize) as usize * 8
            });
            let Some(n) = took else {
                keys[i].key = None;
                continue;
            };
            from.take_at(&mut pos);
            taken += 1;
            bytes += n;
            keys[i].key = front_key(from, &mut pos);
            keys[i].pos = pos;
            if i == ring && keys[i].key.is_some() {
                // A thread that overflowed into the ring committed its
                // older records to its lane before: having seen its ring
                // record (acquire), a look at the lanes now sees them, so
                // they are merged before it. A lane seen empty before the
                // ring was looked at must be looked at again, and a lane
                // taken since the start of this merge joins it.
                let now_acquired = lanes.acquisitions();
                if now_acquired != acquired {
                    acquired = now_acquired;
                    for j in 0..ring {
                        if !live.contains(&j) && lanes.is_held(j) {
                            live.push(j);
                        }
                    }
                }
                for &j in &live {
                    if j != ring && keys[j].key.is_none() {
                        keys[j].key = front_key(lanes.ring(j), &mut keys[j].pos);
                    }
                }
            }
        }
        let mut most = 0;
        for (i, front) in keys.iter().enumerate() {
            input(i).publish_to(front.pos);
            if i < ring {
                most = most.max(front.pos - front.start);
            }
        }
        self.lane_keys = keys;
        self.live = live;
        if taken > 0 {
            shared.space.notify();
        }
        self.check_goal(lanes);
        (taken, most)
    }

    /// Whether a flush waits for the ring to be drained past its target.
    fn flush_pending(&self) -> bool {
        let released = self.shared.ring.released();
        self.shared.ctl.flush.iter().any(|p| {
            p.seq.load(Ordering::Relaxed) > p.seq_done.load(Ordering::Relaxed)
                && p.req.load(Ordering::Relaxed) > released
        })
    }

    /// On a new flush request, notes how far each lane must be taken.
    fn note_goal(&mut self, lanes: &Lanes) {
        if self.goal.is_some() {
            return;
        }
        let flush = &self.shared.ctl.flush;
        let seqs = [FlushScope::All, FlushScope::Durable]
            .map(|s| flush[s as usize].seq.load(Ordering::SeqCst));
        if seqs[0] > self.swept[0] || seqs[1] > self.swept[1] {
            // After reading the sequences: every record a flusher pushed
            // into its lane before asking is claimed below these positions.
            self.goal = Some(Goal {
                seqs,
                heads: lanes.rings().map(Ring::claimed).collect(),
            });
        }
    }

    /// Once the lanes are taken up to the goal, the requests it covers may
    /// be answered.
    fn check_goal(&mut self, lanes: &Lanes) {
        let Some(goal) = &self.goal else { return };
        if lanes
            .rings()
            .zip(&goal.heads)
            .all(|(r, &head)| r.consumed() >= head)
        {
            self.swept = goal.seqs;
            self.goal = None;
        }
    }

    /// The newest flush request of `scope` whose lane records were taken
    /// (every request, without lanes).
    pub(super) fn swept_up_to(&self, scope: FlushScope, seq: u64) -> u64 {
        if self.shared.lanes.is_some() {
            seq.min(self.swept[scope as usize])
        } else {
            seq
        }
    }
}

/// The merge key of the record at an input's cursor `pos` (its time, see
/// [`order_key`](crate::record::clock::order_key)), moving the cursor past padding;
/// `None` if no committed record is there.
#[inline]
fn front_key(input: &Ring, pos: &mut u64) -> Option<u64> {
    input.front_at(pos, |h, payload| {
        crate::record::clock::order_key(split_time(h.kind, payload).0)
    })
}

/// One input of the merge during [`Writer::take_merged`].
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Front {
    key: Option<u64>,
    pos: u64,
    start: u64,
}
