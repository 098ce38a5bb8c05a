//! Asynchronous flushes (`Logger::flush_async`): a future that completes
//! when the writer answers, without any particular runtime.
//!
//! 1. Creating the future asks the writer for a flush exactly as the
//!    blocking `flush` does (a target position and a sequence number,
//!    `control.rs`), and notes its deadline (the flush timeout).
//! 2. Polling checks the answer, the logger's state and the deadline; if
//!    none settles it, it stores its task's [`Waker`] in two places: the
//!    logger's [`AsyncWaiters`], which the writer wakes every time it
//!    publishes progress ([`Shared::notify_progress`]), and the
//!    process-wide [`Timer`], whose thread wakes it at its deadline (the
//!    writer may be blocked in a slow sink's write). Then it checks again,
//!    so an answer published between the first check and the registration
//!    is not missed.
//! 3. Dropping the future (cancelling it) removes both entries: nothing it
//!    registered outlives it. The request it made is a number the writer
//!    answers in its own time (as for a blocking flush that timed out).
//!
//! Wakers are woken outside the locks. A waiter's lock is held only to
//! insert, remove or take entries: the writer never waits on a user's
//! code.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use super::{state, FlushScope, Shared};
use crate::error::FlushError;

/// Numbers the futures of the process (keys in both maps).
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // Nothing that can panic runs under these locks.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The tasks waiting for one logger's writer.
#[derive(Debug, Default)]
pub(crate) struct AsyncWaiters {
    /// Entries in `wakers`: the writer skips the lock when there are none.
    count: AtomicUsize,
    wakers: Mutex<BTreeMap<u64, Waker>>,
}

impl AsyncWaiters {
    fn register(&self, id: u64, waker: &Waker) {
        let mut map = lock(&self.wakers);
        match map.get_mut(&id) {
            Some(w) => w.clone_from(waker),
            None => {
                map.insert(id, waker.clone());
                self.count.store(map.len(), Ordering::SeqCst);
            }
        }
    }

    fn remove(&self, id: u64) {
        let mut map = lock(&self.wakers);
        if map.remove(&id).is_some() {
            self.count.store(map.len(), Ordering::SeqCst);
        }
    }

    /// Wakes every waiting task (each one re-registers if it still waits).
    pub(crate) fn wake_all(&self) {
        if self.count.load(Ordering::SeqCst) == 0 {
            return;
        }
        let taken = {
            let mut map = lock(&self.wakers);
            self.count.store(0, Ordering::SeqCst);
            std::mem::take(&mut *map)
        };
        for (_, waker) in taken {
            waker.wake();
        }
    }

    /// The number of tasks registered.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        lock(&self.wakers).len()
    }
}

/// The process-wide deadline thread (`nowait-timer`), started by the first
/// future that waits.
struct Timer {
    due: Mutex<BTreeMap<(Instant, u64), Waker>>,
    changed: Condvar,
}

impl Timer {
    /// The timer, or `None` if its thread cannot be started.
    fn get() -> Option<&'static Timer> {
        static TIMER: OnceLock<Option<&'static Timer>> = OnceLock::new();
        *TIMER.get_or_init(|| {
            let timer: &'static Timer = Box::leak(Box::new(Timer {
                due: Mutex::new(BTreeMap::new()),
                changed: Condvar::new(),
            }));
            std::thread::Builder::new()
                .name("nowait-timer".into())
                .spawn(move || timer.run())
                .ok()
                .map(|_| timer)
        })
    }

    fn run(&self) {
        let mut due = lock(&self.due);
        loop {
            let now = Instant::now();
            let first = due.keys().next().copied();
            match first {
                Some(key) if key.0 <= now => {
                    if let Some(waker) = due.remove(&key) {
                        drop(due);
                        waker.wake();
                        due = lock(&self.due);
                    }
                }
                Some((at, _)) => {
                    due = self
                        .changed
                        .wait_timeout(due, at - now)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
                None => {
                    due = self.changed.wait(due).unwrap_or_else(|e| e.into_inner());
                }
            }
        }
    }

    fn register(&self, at: Instant, id: u64, waker: &Waker) {
        let mut due = lock(&self.due);
        let first = due.keys().next().map_or(true, |k| (at, id) < *k);
        match due.get_mut(&(at, id)) {
            Some(w) => w.clone_from(waker),
            None => {
                due.insert((at, id), waker.clone());
            }
        }
        drop(due);
        if first {
            self.changed.notify_one();
        }
    }

    fn remove(&self, at: Instant, id: u64) {
        lock(&self.due).remove(&(at, id));
    }
}

/// The future `Logger::flush_async` returns.
pub(crate) struct Flush {
    shared: Arc<Shared>,
    scope: FlushScope,
    /// The sequence number the writer's answer must reach.
    seq: u64,
    deadline: Instant,
    id: u64,
    /// Whether this future registered a waker (then it must remove it).
    registered: bool,
    /// Settled at creation (on a writer thread, after shutdown).
    early: Option<Result<(), FlushError>>,
}

impl std::fmt::Debug for Flush {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Flush")
            .field("seq", &self.seq)
            .field("deadline", &self.deadline)
            .finish_non_exhaustive()
    }
}

impl Flush {
    /// Asks the writer for a flush of every record claimed before now,
    /// bounded by `timeout`.
    pub(crate) fn new(shared: &Arc<Shared>, scope: FlushScope, timeout: Duration) -> Flush {
        let mut flush = Flush {
            shared: Arc::clone(shared),
            scope,
            seq: 0,
            deadline: crate::record::clock::deadline_after(timeout),
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            registered: false,
            early: None,
        };
        if Shared::on_writer_thread() {
            flush.early = Some(Err(FlushError::TimedOut));
            return flush;
        }
        shared.ensure_writer();
        if shared.state.load(Ordering::SeqCst) != state::RUNNING {
            flush.early = Some(Err(FlushError::Closed));
            return flush;
        }
        flush.seq = shared.request_flush(scope);
        flush
    }

    /// The outcome, if settled.
    fn settled(&self) -> Option<Result<(), FlushError>> {
        let p = &self.shared.ctl.flush[self.scope as usize];
        if p.seq_done.load(Ordering::SeqCst) >= self.seq {
            return Some(self.shared.flush_result(self.scope));
        }
        if self.shared.state.load(Ordering::SeqCst) != state::RUNNING {
            // Answered by the last round, or closed before it.
            return Some(if p.seq_done.load(Ordering::SeqCst) >= self.seq {
                self.shared.flush_result(self.scope)
            } else {
                Err(FlushError::Closed)
            });
        }
        if Instant::now() >= self.deadline {
            return Some(Err(FlushError::TimedOut));
        }
        None
    }

    fn unregister(&mut self) {
        if std::mem::take(&mut self.registered) {
            self.shared.waiters.remove(self.id);
            if let Some(timer) = Timer::get() {
                timer.remove(self.deadline, self.id);
            }
        }
    }
}

impl Future for Flush {
    type Output = Result<(), FlushError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        if let Some(early) = this.early.take() {
            return Poll::Ready(early);
        }
        if let Some(outcome) = this.settled() {
            this.unregister();
            return Poll::Ready(outcome);
        }
        let Some(timer) = Timer::get() else {
            // No thread to keep the deadline: give up now rather than
            // wait past it.
            return Poll::Ready(Err(FlushError::TimedOut));
        };
        this.registered = true;
        this.shared.waiters.register(this.id, cx.waker());
        timer.register(this.deadline, this.id, cx.waker());
        // An answer published before the registration woke nobody.
        if let Some(outcome) = this.settled() {
            this.unregister();
            return Poll::Ready(outcome);
        }
        Poll::Pending
    }
}

impl Drop for Flush {
    fn drop(&mut self) {
        self.unregister();
    }
}

#[cfg(test)]
impl Flush {
    /// Whether this future has an entry in its logger's waiters and in the
    /// timer.
    pub(crate) fn entries(&self) -> (bool, bool) {
        let waiting = lock(&self.shared.waiters.wakers).contains_key(&self.id);
        let timed =
            Timer::get().is_some_and(|t| lock(&t.due).contains_key(&(self.deadline, self.id)));
        (waiting, timed)
    }
}
