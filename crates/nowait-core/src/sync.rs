//! The synchronisation primitives nowait uses, swapped for loom's under
//! `cfg(loom)` so that the models in `ring/tests.rs` check the real code.

#[cfg(loom)]
pub(crate) use loom::sync::atomic::{AtomicU64, AtomicU8};
#[cfg(not(loom))]
pub(crate) use std::sync::atomic::{AtomicU64, AtomicU8};

pub(crate) use std::sync::atomic::Ordering;

/// An `UnsafeCell` with loom's closure-based API, so the ring's accesses are
/// tracked by loom and compile to plain pointer accesses otherwise.
#[cfg(not(loom))]
#[derive(Debug)]
pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    /// Raw pointer to the contents.
    pub(crate) fn get(&self) -> *mut T {
        self.0.get()
    }
}

#[cfg(loom)]
pub(crate) use loom::cell::UnsafeCell;

/// A wait/notify point: a sequence number that notifiers bump and waiters
/// sleep on ([`crate::sys::wait`]: a futex on Linux, the parking lot
/// elsewhere), plus a count of waiters so that a notifier with nobody to
/// wake makes no system call.
///
/// The protocol (the classic "check, then sleep on the value you saw"):
/// a waiter calls [`Event::prepare`] (registers and reads the sequence),
/// checks its condition, and if it does not hold calls [`Event::wait`] with
/// the sequence it read, then [`Event::done`]. A notifier changes the
/// condition, then calls [`Event::notify`]. Both sides order these with
/// `SeqCst`, so either the waiter's check sees the change or the notifier
/// sees the waiter and bumps the sequence, which makes the futex wait
/// return at once or wakes it. Spurious returns are allowed: waiters
/// re-check. On Linux nothing here is held across `fork()`, so a forked
/// child can use it as it is.
#[derive(Debug, Default)]
pub(crate) struct Event {
    seq: std::sync::atomic::AtomicU32,
    waiters: std::sync::atomic::AtomicU32,
}

impl Event {
    /// Registers a waiter and returns the sequence to pass to [`Event::wait`].
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
