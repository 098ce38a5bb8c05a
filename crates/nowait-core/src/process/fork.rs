//! `fork()`: the child gets a working logger.
//!
//! In a forked child only the forking thread exists: there is no writer
//! thread, and the ring may hold the parent's records and regions claimed
//! by threads that are gone. `pthread_atfork` handlers fix that:
//!
//! 1. `prepare` (parent, before the fork) locks the registry of live
//!    loggers, so that the child finds it in a consistent state.
//! 2. `child` (in the child, single-threaded) resets each live logger with
//!    atomic stores only ([`Shared::reset_after_fork`]): the parent's
//!    records are forgotten (the parent writes them), the counters start at
//!    zero, and the ring is flagged so that the child's first push (or
//!    flush, or shutdown) starts a new writer thread, which opens the same
//!    sinks again (`sink::Plan::reopen_in_child`: the one `open` per kind
//!    that `build` uses); a custom writer cannot cross a fork, so that sink
//!    fails for good in the child and its records are counted as dropped.
//! 3. `parent` and `child` then unlock the registry.
//!
//! A `fork()` followed by `exec` costs the handlers a few atomic stores.

use std::cell::RefCell;
use std::sync::{MutexGuard, Weak};

use crate::process::live::{self, Entry};
use crate::shared::Shared;

thread_local! {
    /// The registry lock taken by `prepare`, released after the fork.
    static HELD: RefCell<Option<MutexGuard<'static, Vec<Entry>>>> = const { RefCell::new(None) };
}

pub(crate) fn prepare() {
    let guard = live::lock();
    let _ = HELD.try_with(|h| {
        if let Ok(mut h) = h.try_borrow_mut() {
            *h = Some(guard);
        }
    });
}

pub(crate) fn parent() {
    let _ = HELD.try_with(|h| h.try_borrow_mut().map(|mut h| h.take()));
}

pub(crate) fn child() {
    let _ = HELD.try_with(|h| {
        if let Ok(mut held) = h.try_borrow_mut() {
            if let Some(entries) = held.as_ref() {
                for e in entries.iter() {
                    reset(&e.shared);
                }
            }
            held.take();
        }
    });
}

fn reset(weak: &Weak<Shared>) {
    if let Some(shared) = weak.upgrade() {
        shared.reset_after_fork();
        // Dropping the last reference here would free memory inside the
        // handler (the logger was being dropped by a thread that is gone):
        // leak it instead. The child is single-threaded, so the count
        // cannot change under us.
        if std::sync::Arc::strong_count(&shared) == 1 {
            std::mem::forget(shared);
        }
    }
}
