//! The call sites this process has registered with nowait's call-site
//! registry, as a fixed lock-free set of their keys, so that `on_event`
//! can tell with one load that its call site is known.
//!
//! `tracing-core` registers a call site with the subscriber on the thread
//! that first reaches it; another thread may dispatch an event of that
//! call site before that `register_callsite` has run. The layer then
//! registers the site itself, from the event's metadata (registering is
//! idempotent: the registry keeps the first description).
//!
//! 1. [`contains`]: hash the key to a slot and look at up to [`PROBES`]
//!    slots from there (an acquire load each): the key, known; an empty
//!    slot, not known.
//! 2. [`mark`], after the key is in the registry: put it in the first
//!    slot that is empty (compare-exchange) or already holds it. With
//!    every probed slot taken by other keys it is not kept, and that call
//!    site takes the registry's lock on each event: correct, slower.
//!
//! Invariant: a key in a slot is in the registry, and the registry's
//! insertion happens before the slot's store (release), so a thread that
//! sees the key (acquire) and pushes an event lets the writer thread find
//! the call site. A key is in at most one slot: slots are only ever filled
//! (never cleared), and a mark stops at the first slot that holds its key,
//! which every other mark of that key passes through before it could reach
//! a later one. Keys are addresses of `'static` metadata, never 0.
//!
//! The loom models (`loom_models.rs`, run by `ci/loom.sh`) check both
//! halves on a set of four slots.

#[cfg(loom)]
use loom::sync::atomic::AtomicU64;
#[cfg(not(loom))]
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;

use nowait_core::event::SiteKey;

/// Slots in the set (a power of two); four in the loom models.
const SLOTS: usize = if cfg!(loom) { 4 } else { 4096 };
/// Slots looked at from a key's hash.
const PROBES: usize = if cfg!(loom) { 2 } else { 8 };

/// A fixed set of non-zero keys, filled and never emptied.
pub(crate) struct Set {
    slots: [AtomicU64; SLOTS],
}

#[cfg(not(loom))]
static SET: Set = Set {
    slots: [const { AtomicU64::new(0) }; SLOTS],
};

#[cfg(loom)]
loom::lazy_static! {
    static ref SET: Set = Set::new();
}

/// Whether `key` was [`mark`]ed. A `false` may be stale (or lasting, for
/// a key that found no slot): the caller registers again, which is
/// idempotent.
#[inline]
pub(crate) fn contains(key: SiteKey) -> bool {
    SET.contains(key.get())
}

/// Records that `key` is in the registry (called after registering it).
pub(crate) fn mark(key: SiteKey) {
    SET.mark(key.get());
}

fn start(key: u64) -> usize {
    // Fibonacci hashing of the address; the top bits pick the slot.
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SLOTS.trailing_zeros())) as usize
}

impl Set {
    #[cfg(loom)]
    pub(crate) fn new() -> Set {
        Set {
            slots: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }

    /// Step 1: whether `key` (non-zero) is in a slot.
    #[inline]
    pub(crate) fn contains(&self, key: u64) -> bool {
        let at = start(key);
        // Most keys sit in their first slot: one load, no loop.
        self.slots[at].load(Ordering::Acquire) == key || self.probe(key, at)
    }

    #[cold]
    fn probe(&self, key: u64, at: usize) -> bool {
        for i in 1..PROBES {
            match self.slots[(at + i) % SLOTS].load(Ordering::Acquire) {
                k if k == key => return true,
                0 => return false,
                _ => {}
            }
        }
        false
    }

    /// Step 2: puts `key` (non-zero, already in the registry) in a slot.
    pub(crate) fn mark(&self, key: u64) {
        let at = start(key);
        for i in 0..PROBES {
            match self.slots[(at + i) % SLOTS].compare_exchange(
                0,
                key,
                Ordering::Release,
                Ordering::Acquire,
            ) {
                Ok(_) => return,
                Err(k) if k == key => return,
                Err(_) => {}
            }
        }
    }

    /// How many slots hold `key`, for the models.
    #[cfg(all(loom, test))]
    pub(crate) fn slots_holding(&self, key: u64) -> usize {
        self.slots
            .iter()
            .filter(|s| s.load(Ordering::Relaxed) == key)
            .count()
    }
}

/// A key whose first slot is `slot` (for the models: keys that collide).
#[cfg(all(loom, test))]
pub(crate) fn key_starting_at(slot: usize, skip: usize) -> u64 {
    (1..)
        .filter(|&k| start(k) == slot)
        .nth(skip)
        .expect("some key hashes to every slot")
}

#[cfg(all(loom, test))]
mod loom_models;

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn marked_keys_are_contained_and_others_not() {
        static A: u8 = 0;
        static B: u8 = 0;
        let (a, b) = (SiteKey::of(&A), SiteKey::of(&B));
        assert!(!contains(a));
        mark(a);
        mark(a);
        assert!(contains(a));
        assert!(!contains(b));
    }
}
