//! Per-thread lanes: a small ring for each of the first threads that log,
//! so that producers on different cores never claim on the same cache line.
//!
//! # Design
//!
//! A [`Lanes`] holds a fixed number of slots, each a [`Ring`] of the same
//! algorithm as the shared ring (allocated and pre-faulted at build, so no
//! request thread ever allocates or takes a page fault for one). A thread
//! takes a free slot on its first record with one compare-and-swap on the
//! slot's owner word, keeps it in a thread-local, and gives it back when it
//! exits. Every later record is a claim in that lane: the claim's
//! compare-and-swap then runs on a line no other producer writes, so it
//! costs what an uncontended atomic costs and does not grow with the
//! number of cores. Past the last slot, threads use the shared ring
//! directly, as every thread did before lanes existed: memory is bounded by
//! `count × size` whatever the number of threads.
//!
//! The writer thread takes records from the lanes and the shared ring
//! together, merged by timestamp (`writer::lanes`), straight into the
//! sinks. A full lane is not a full logger: the push puts the record in
//! the shared ring, whose full policy and protected levels apply as
//! before (`Shared::push_lane`), and the thread stays there until the
//! writer has taken that record, so its own order holds.
//!
//! # Invariants
//!
//! - A slot's `owner` is 0 (free) or the id of the thread that holds it.
//!   Only the holder pushes into the lane, so a lane has one producer at a
//!   time; the lanes are nevertheless multi-producer rings, so a mistake in
//!   ownership (a forked child inheriting a slot, see
//!   [`Lanes::reset_after_fork`]) costs speed, never safety.
//! - Closing closes every lane before the shared ring, so a record is
//!   accepted exactly when a lane or the ring accepted it; the shutdown
//!   drain and the final count cover the lanes with the ring.
//! - A thread holds at most one [`Lanes`] alive (the last logger it logged
//!   to), so a dropped logger's lanes are freed once its threads exit or
//!   log to another logger.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::ring::Ring;

/// Default number of lanes: none (opt in with `Builder::lanes`; see
/// `docs::design`, "Lanes", for the measured trade-off).
pub(crate) const DEFAULT_LANES: usize = 0;

/// A thread without a lane looks for a free one again after this many
/// records (slots free up as threads exit).
const RETRY_EVERY: u32 = 1024;

/// The lanes of one logger.
pub(crate) struct Lanes {
    slots: Box<[Slot]>,
    /// How many times a thread took a slot: the writer's merge looks only
    /// at lanes that are held or hold records, and looks again when this
    /// moves (see `writer::lanes`).
    acquired: AtomicU64,
    /// The claim limit in a lane for records below the protected level
    /// (the high-water rule of the shared ring, per lane).
    pub(crate) low_limit: usize,
}

/// One lane and who holds it.
pub(crate) struct Slot {
    /// 0 when free, else the id of the thread holding the slot.
    owner: AtomicU64,
    /// The lane.
    pub(crate) ring: Ring,
    /// 0, or the shared ring's claim position after the holder's last
    /// record that went to the shared ring (its lane was full, or the
    /// record too large): until the writer has taken the ring up to there,
    /// the holder keeps using the ring, so that a later record of its own
    /// can never be written before that one (see `writer::lanes`). Written
    /// and read only by the holder.
    pub(crate) spill_until: AtomicU64,
}

impl std::fmt::Debug for Lanes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lanes")
            .field("count", &self.slots.len())
            .field(
                "bytes",
                &self.slots.first().map_or(0, |s| s.ring.capacity_bytes()),
            )
            .finish()
    }
}

/// What a thread holds: the lanes of the logger it last logged to, and its
/// slot there (`None`: all were taken).
struct Held {
    lanes: Arc<Lanes>,
    slot: Option<usize>,
    id: u64,
    misses: Cell<u32>,
}

impl Drop for Held {
    fn drop(&mut self) {
        // The fast path's copy goes first: once `lanes` may be freed, its
        // address may be reused by another logger's lanes.
        let _ = FAST.try_with(|f| f.set(NONE));
        if let Some(i) = self.slot {
            // Only if it is still ours (a forked child may have freed it).
            let _ = self.lanes.slots[i].owner.compare_exchange(
                self.id,
                0,
                Ordering::Release,
                Ordering::Relaxed,
            );
        }
    }
}

/// [`FAST`] when the thread holds no lanes.
const NONE: (usize, usize) = (0, NO_SLOT);
/// The slot part of [`FAST`] for a thread that found no free lane.
const NO_SLOT: usize = usize::MAX;

thread_local! {
    static HELD: RefCell<Option<Held>> = const { RefCell::new(None) };
    /// What the push reads: the address of the [`Lanes`] the thread holds
    /// (its `Held` keeps them alive, so the address cannot be reused while
    /// it is here: `Held`'s drop clears it first) and the slot there.
    /// `const` and without a destructor, so reading it is one load from
    /// the thread's TLS block, with no state check and no borrow flag.
    static FAST: Cell<(usize, usize)> = const { Cell::new(NONE) };
    static THREAD_ID: Cell<u64> = const { Cell::new(0) };
}

/// Ids of threads that took a lane; 0 means none.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn thread_id() -> u64 {
    THREAD_ID
        .try_with(|id| {
            if id.get() == 0 {
                id.set(NEXT_ID.fetch_add(1, Ordering::Relaxed));
            }
            id.get()
        })
        .unwrap_or(0)
}

impl Lanes {
    /// `count` lanes of at least `bytes` bytes each (see [`Ring::new`]);
    /// records below the protected level are shed in a lane past
    /// `high_water` of it when given (the drop policy).
    pub(crate) fn new(count: usize, bytes: usize, high_water: Option<f64>) -> Lanes {
        let slots: Box<[Slot]> = (0..count)
            .map(|_| Slot {
                owner: AtomicU64::new(0),
                ring: Ring::new(bytes),
                spill_until: AtomicU64::new(0),
            })
            .collect();
        let cap = slots.first().map_or(0, |s| s.ring.capacity_bytes());
        Lanes {
            low_limit: high_water.map_or(usize::MAX, |h| (cap as f64 * h) as usize),
            slots,
            acquired: AtomicU64::new(0),
        }
    }

    /// Every lane, in slot order.
    pub(crate) fn rings(&self) -> impl Iterator<Item = &Ring> + Clone {
        self.slots.iter().map(|s| &s.ring)
    }

    /// The number of lanes.
    pub(crate) fn len(&self) -> usize {
        self.slots.len()
    }

    /// Lane `i`.
    pub(crate) fn ring(&self, i: usize) -> &Ring {
        &self.slots[i].ring
    }

    /// The calling thread's lane, taking a free one on its first record;
    /// `None` if every lane is taken (the caller uses the shared ring), or
    /// the thread is exiting, or the call re-entered from inside a push.
    #[inline]
    pub(crate) fn lane(self: &Arc<Self>) -> Option<&Slot> {
        let (held, slot) = FAST.try_with(Cell::get).unwrap_or(NONE);
        if held == Arc::as_ptr(self) as usize && slot != NO_SLOT {
            return self.slots.get(slot);
        }
        self.lane_slow()
    }

    /// A thread's first record for these lanes, or a thread without one:
    /// takes a free slot (a thread without one looks again every
    /// [`RETRY_EVERY`] records).
    #[cold]
    #[inline(never)]
    fn lane_slow(self: &Arc<Self>) -> Option<&Slot> {
        let slot = HELD
            .try_with(|held| {
                match held.try_borrow() {
                    Ok(h) => match &*h {
                        Some(h) if Arc::ptr_eq(&h.lanes, self) => match h.slot {
                            Some(i) => return Some(i),
                            None if !h.retry_now() => return None,
                            None => {}
                        },
                        _ => {}
                    },
                    Err(_) => return None,
                }
                self.acquire(held)
            })
            .ok()
            .flatten()?;
        self.slots.get(slot)
    }

    /// Takes a free slot for the calling thread (giving back the one it
    /// held in another logger's lanes).
    fn acquire(self: &Arc<Self>, held: &RefCell<Option<Held>>) -> Option<usize> {
        let mut held = held.try_borrow_mut().ok()?;
        if let Some(h) = held.as_ref() {
            if Arc::ptr_eq(&h.lanes, self) {
                if let Some(i) = h.slot {
                    return Some(i);
                }
            }
        }
        // Gives back the old slot (if any) before taking a new one.
        *held = None;
        let id = thread_id();
        if id == 0 {
            return None;
        }
        let slot = self.slots.iter().position(|s| {
            s.owner.load(Ordering::Relaxed) == 0
                && s.owner
                    .compare_exchange(0, id, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
        });
        if slot.is_some() {
            // Before any record of ours: a consumer that sees one of them
            // (acquire) sees this count moved.
            self.acquired.fetch_add(1, Ordering::Release);
        }
        *held = Some(Held {
            lanes: Arc::clone(self),
            slot,
            id,
            misses: Cell::new(0),
        });
        let _ = FAST.try_with(|f| f.set((Arc::as_ptr(self) as usize, slot.unwrap_or(NO_SLOT))));
        slot
    }

    /// Whether lane `i` is held by a thread now.
    pub(crate) fn is_held(&self, i: usize) -> bool {
        self.slots[i].owner.load(Ordering::Acquire) != 0
    }

    /// How many times a thread took a lane so far.
    pub(crate) fn acquisitions(&self) -> u64 {
        self.acquired.load(Ordering::Acquire)
    }

    /// Closes every lane ([`Ring::close`]).
    pub(crate) fn close(&self) {
        for ring in self.rings() {
            ring.close();
        }
    }

    /// Whether every lane's claimed records were taken by the consumer.
    pub(crate) fn is_drained(&self) -> bool {
        self.rings().all(Ring::is_drained)
    }

    /// In a forked child (an `atfork` handler: atomic stores only): forgets
    /// the parent's records in every lane, marks them forked like the
    /// shared ring, and frees every slot but the calling thread's (the
    /// other holders do not exist in the child).
    pub(crate) fn reset_after_fork(&self) {
        let me = THREAD_ID.try_with(Cell::get).unwrap_or(0);
        for slot in self.slots.iter() {
            slot.ring.reset_after_fork();
            slot.spill_until.store(0, Ordering::Relaxed);
            if slot.owner.load(Ordering::Relaxed) != me {
                slot.owner.store(0, Ordering::Relaxed);
            }
        }
    }

    /// Clears every lane's `FORKED` flag (the child has a writer).
    pub(crate) fn clear_forked(&self) {
        for ring in self.rings() {
            ring.clear_forked();
        }
    }
}

impl Held {
    /// A thread without a lane: whether to look for a free one now.
    fn retry_now(&self) -> bool {
        let m = self.misses.get().wrapping_add(1);
        self.misses.set(m);
        m % RETRY_EVERY == 0
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn a_thread_keeps_its_lane_and_gives_it_back_when_it_exits() {
        let lanes = Arc::new(Lanes::new(2, 256, None));
        let a = lanes.lane().map(|r| r as *const Slot);
        assert!(a.is_some());
        assert_eq!(lanes.lane().map(|r| r as *const Slot), a);
        let l2 = Arc::clone(&lanes);
        let b = std::thread::spawn(move || {
            let b = l2.lane().map(|r| r as *const Slot as usize);
            // The third thread finds none while this one holds the last.
            let l3 = Arc::clone(&l2);
            let c = std::thread::spawn(move || l3.lane().is_some())
                .join()
                .unwrap();
            (b, c)
        })
        .join()
        .unwrap();
        assert!(b.0.is_some() && b.0 != a.map(|p| p as usize));
        assert!(!b.1, "two lanes, three threads: the third has none");
        // The second thread exited: its slot is free again.
        let l4 = Arc::clone(&lanes);
        let d = std::thread::spawn(move || l4.lane().map(|r| r as *const Slot as usize))
            .join()
            .unwrap();
        assert_eq!(d, b.0);
    }

    #[test]
    fn logging_to_another_logger_gives_the_old_lane_back() {
        let first = Arc::new(Lanes::new(1, 256, None));
        let second = Arc::new(Lanes::new(1, 256, None));
        assert!(first.lane().is_some());
        assert!(second.lane().is_some());
        // The first logger's only slot is free again.
        let f = Arc::clone(&first);
        assert!(std::thread::spawn(move || f.lane().is_some())
            .join()
            .unwrap());
    }

    #[test]
    fn a_thread_without_a_lane_takes_one_that_was_given_back() {
        let lanes = Arc::new(Lanes::new(1, 256, None));
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let (held_tx, held_rx) = std::sync::mpsc::channel::<()>();
        let l = Arc::clone(&lanes);
        let holder = std::thread::spawn(move || {
            assert!(l.lane().is_some());
            held_tx.send(()).unwrap();
            rx.recv().unwrap();
        });
        held_rx.recv().unwrap();
        assert!(lanes.lane().is_none());
        tx.send(()).unwrap();
        holder.join().unwrap();
        let found = (0..RETRY_EVERY).any(|_| lanes.lane().is_some());
        assert!(
            found,
            "the slot given back is found within {RETRY_EVERY} tries"
        );
    }
}
