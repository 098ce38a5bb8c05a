//! The synchronisation primitives nowait uses, swapped for loom's under
//! `cfg(loom)` so that the loom models (`ring/loom_models.rs`,
//! `accounting/loom_models.rs`) check the real code.
//!
//! The ring's storage (`ring/region.rs`) is the only other place where a
//! loom build differs: loom's atomics and cells stand in there for the
//! bytes of the region, which loom cannot see.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU64, AtomicU8};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8};

/// Loom's cell and the pointers that track an access to it, for the
/// ring's region.
#[cfg(loom)]
pub(crate) use loom::cell::{ConstPtr, MutPtr, UnsafeCell};

pub(crate) use std::sync::atomic::Ordering;

/// Threads, shared ownership and a lock for the tests and loom models.
#[cfg(all(test, loom))]
pub(crate) use loom::{
    sync::{Arc, Mutex},
    thread,
};
#[cfg(all(test, not(loom)))]
pub(crate) use std::{sync::Arc, thread};

/// Atomics no loom model needs to see, std's in every build: a value only
/// one thread touches at a time (the consumer's own position in a deferred
/// ring), a count kept across a model's executions, or a process-wide
/// `static` (the sampling seed), which loom's atomics cannot initialise.
pub(crate) mod untracked {
    #[cfg(all(loom, test))]
    pub(crate) use std::sync::atomic::AtomicUsize;
    pub(crate) use std::sync::atomic::{AtomicU32, AtomicU64};
}

/// Keeps a ring's mapped memory alive for as long as anything holds it.
/// std's `Arc` in every build: loom's cannot hold a `dyn` value, and
/// nothing is synchronised through it.
pub(crate) type KeepAlive = std::sync::Arc<dyn std::any::Any + Send + Sync>;

/// An event count: a sequence number that notifiers bump and waiters
/// sleep on ([`crate::sys::wait`]: a futex on Linux, the parking lot
/// elsewhere), plus a count of waiters so that a notifier with nobody to
/// wake makes no system call (Vyukov's eventcount; folly's `EventCount`).
///
/// The protocol (the classic "check, then sleep on the value you saw"):
/// a waiter calls [`EventCount::prepare`] (registers and reads the
/// sequence), checks its condition, and if it does not hold calls
/// [`EventCount::wait`] with the sequence it read, then
/// [`EventCount::done`]. A notifier changes the condition, then calls
/// [`EventCount::notify`]. Both sides order these with `SeqCst`, so either
/// the waiter's check sees the change or the notifier sees the waiter and
/// bumps the sequence, which makes the futex wait return at once or wakes
/// it. Spurious returns are allowed: waiters re-check. On Linux nothing
/// here is held across `fork()`, so a forked child can use it as it is.
#[derive(Debug, Default)]
pub(crate) struct EventCount {
    seq: std::sync::atomic::AtomicU32,
    waiters: std::sync::atomic::AtomicU32,
}

impl EventCount {
    /// Registers a waiter and returns the sequence to pass to
    /// [`EventCount::wait`].
    pub(crate) fn prepare(&self) -> u32 {
        self.waiters.fetch_add(1, Ordering::SeqCst);
        std::sync::atomic::fence(Ordering::SeqCst);
        self.seq.load(Ordering::SeqCst)
    }

    /// Unregisters a waiter.
    pub(crate) fn done(&self) {
        self.waiters.fetch_sub(1, Ordering::SeqCst);
    }

    /// Sleeps until notified after `seen` was read, or `timeout` passes
    /// (or spuriously).
    pub(crate) fn wait(&self, seen: u32, timeout: std::time::Duration) {
        crate::sys::wait(&self.seq, seen, timeout);
    }

    /// Wakes every waiter, if there is any. The caller changed the
    /// condition before the call.
    pub(crate) fn notify(&self) {
        std::sync::atomic::fence(Ordering::SeqCst);
        if self.waiters.load(Ordering::SeqCst) == 0 {
            return;
        }
        self.seq.fetch_add(1, Ordering::SeqCst);
        crate::sys::wake_all(&self.seq);
    }
}
