//! `fork()`: the child gets a working logger.
//!
//! In a forked child only the forking thread exists: there is no writer
//! thread, and the ring may hold the parent's records and regions claimed
//! by threads that are gone. `pthread_atfork` handlers fix that:
//!
//! 1. `prepare` (parent, before the fork) locks the registry of live
//!    loggers, so that the child finds it in a consistent state, then the
//!    gate every logger's list of limited call sites is held under
//!    ([`limits_gate`]), so that no such list is held at the fork by a
//!    thread the child will not have (the child forgets and reads them).
//! 2. `child` (in the child, single-threaded) resets each live logger with
//!    atomic stores only ([`Shared::reset_after_fork`]): the parent's
//!    records are forgotten (the parent writes them), the counters start at
//!    zero, and the ring is flagged so that the child's first push (or
//!    flush, or shutdown) starts a new writer thread, which opens the same
//!    sinks again (`sink::Plan::reopen_in_child`: the one `open` per kind
//!    that `build` uses); a custom writer cannot cross a fork, so that sink
//!    fails for good in the child and its records are counted as dropped.
//! 3. `parent` and `child` then release the gate and the registry.
//!
//! Lock order: the registry, then the gate. No holder of the gate takes
//! the registry, and both are held for a few instructions, so `prepare`
//! waits that long at most.
//!
//! A `fork()` followed by `exec` costs the handlers a few atomic stores.

use std::cell::RefCell;
use std::sync::{MutexGuard, Weak};

use crate::accounting::stats::limits_gate;
use crate::process::live::{self, Entry};
use crate::shared::Shared;

/// The registry and the limits gate, taken by `prepare`, released after
/// the fork (the gate first: fields drop in order).
struct Held {
    _gate: MutexGuard<'static, ()>,
    registry: MutexGuard<'static, Vec<Entry>>,
}

thread_local! {
    static HELD: RefCell<Option<Held>> = const { RefCell::new(None) };
}

pub(crate) fn prepare() {
    let registry = live::lock();
    let gate = limits_gate();
    let _ = HELD.try_with(|h| {
        if let Ok(mut h) = h.try_borrow_mut() {
            *h = Some(Held {
                _gate: gate,
                registry,
            });
        }
    });
}

pub(crate) fn parent() {
    let _ = HELD.try_with(|h| h.try_borrow_mut().map(|mut h| h.take()));
}

pub(crate) fn child() {
    let _ = HELD.try_with(|h| {
        if let Ok(mut held) = h.try_borrow_mut() {
            if let Some(held) = held.as_ref() {
                for e in held.registry.iter() {
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
