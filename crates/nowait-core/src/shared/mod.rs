//! The contract between the producers (request threads, hooks, the guard)
//! and the writer thread: the state both sides share, the control protocol
//! (flush, reopen, reconfigure, shutdown) and the wake-ups.
//!
//! Both sides import this module and neither imports the other. Nothing in
//! it is a queue: every request is a monotonic number in an atomic
//! (`flush up to ring position P`, `reopen number N`) that the writer
//! answers by publishing how far it got, so a request that timed out leaves
//! nothing behind, any number of callers can wait at once, and no call can
//! block on a full channel. Waiting uses [`EventCount`](crate::sys::sync::EventCount)
//! (a futex on Linux, no lock, so nothing here is held across `fork()`).
//!
//! # States
//!
//! 1. `RUNNING`: the writer drains the ring (or, in a forked child, will be
//!    started by the first push; the `fork` module resets it in the child).
//! 2. `CLOSING`: shutdown asked; the ring is closed ([`Ring::close`]), so
//!    every later push is refused and counted; the writer drains what was
//!    accepted until the deadline.
//! 3. `FINISHED`: every accepted record has its final count. Set by the
//!    writer, or by the thread that took over the counting when the writer
//!    was stuck in a write past the deadline (see [`Consumer`]).

mod control;
pub(crate) mod lanes;
mod push;
pub(crate) mod waiters;

pub(crate) use control::{check_batch_size, FlushScope};
pub(crate) use push::TIME_PREFIX;

use std::io;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;

use crate::accounting::policy::FullPolicy;
use crate::accounting::stats::{Counters, SinkCounters};
use crate::level::Level;
use crate::ring::Ring;
use crate::sys::sync::EventCount;
use crate::sys::Doorbell;

/// Values of [`Shared::state`].
pub(crate) mod state {
    /// The writer runs (or, in a forked child, starts on first use).
    pub(crate) const RUNNING: u8 = 0;
    /// Shutdown asked; the ring is closed.
    pub(crate) const CLOSING: u8 = 1;
    /// Every accepted record has its final count.
    pub(crate) const FINISHED: u8 = 2;
}

/// Values of [`Shared::consumer`]: who may consume the ring and touch the
/// counters.
pub(crate) mod consumer {
    /// The writer thread, outside any call that can block.
    pub(crate) const WRITER: u8 = 0;
    /// The writer thread, inside a call that can block (a file write, a
    /// user's writer, an fsync). It published what it holds before.
    pub(crate) const IN_IO: u8 = 1;
    /// A shutdown whose deadline passed took the consumer role from a writer
    /// stuck in I/O; the writer exits without touching anything when it
    /// comes back.
    pub(crate) const TAKEN: u8 = 2;
    /// No writer (forked child before its first push, or the writer exited).
    pub(crate) const NONE: u8 = 3;
}

/// Starts a writer thread for a [`Shared`] (at build time, and lazily in a
/// forked child). Made by the builder, which knows the sinks.
pub(crate) type Start = Box<dyn Fn(&Arc<Shared>) -> io::Result<()> + Send + Sync>;

/// State shared by every `Logger` clone, the
/// `Guard`, the hooks and the writer thread.
///
/// Laid out for the producers' cache: what a push reads (the ring's
/// address, the lanes, the level limits) comes first and is never written
/// after build, and everything the writer or a waiting thread writes sits on
/// cache lines of its own ([`CachePadded`]), so the writer's stores
/// around each write never invalidate a line every push reads (no false
/// sharing between producers and the writer).
#[repr(C)]
pub(crate) struct Shared {
    /// The records. Producers claim, the consumer (see `consumer`) drains.
    pub(crate) ring: Ring,
    /// Per-thread lanes in front of the ring ([`lanes`]); `None` when
    /// disabled (and in a crash-durable logger, whose records must be in
    /// the file's ring from the start).
    pub(crate) lanes: Option<Arc<lanes::Lanes>>,
    /// The claim limit for records below `protect`: the high-water mark
    /// under [`FullPolicy::Drop`], no limit under the blocking policies
    /// (computed once, so the hot path compares a level and nothing else).
    pub(crate) low_limit: usize,
    /// The least severe level any sink takes (front ends push nothing
    /// below it; see `Logger::min_level`).
    pub(crate) min_level: Level,
    /// Records below this level are shed above `shed_above` bytes.
    pub(crate) protect: Level,
    /// Records at or above this level (as `u8`; `u8::MAX`: none) wait until
    /// written to the durable sinks (and fsynced if `ctl.fsync`).
    pub(crate) write_through_from: u8,
    pub(crate) policy: FullPolicy,
    pub(crate) flush_timeout: Duration,
    pub(crate) shutdown_timeout: Duration,
    /// Bound on the panic hook's wait for the durable sinks.
    pub(crate) panic_timeout: Duration,
    /// Bound on a fatal signal's drain (`crash`).
    pub(crate) crash_timeout: Duration,
    pub(crate) sinks: Box<[SinkCounters]>,
    /// The sinks' filters and their union (`Sink::filter`).
    pub(crate) routes: Arc<crate::filter::routes::Routes>,
    /// Wakes the writer out of its poll (an eventfd). Rung by flush,
    /// reopen, shutdown and producers waiting for room, never by a push.
    pub(crate) doorbell: Doorbell,
    /// The crash-durable file the ring lives in (`Builder::crash_durable`).
    ///
    pub(crate) durable: Option<Arc<crate::durable::DurableFile>>,
    start: Start,
    // Written while the logger runs: each on lines of its own.
    pub(crate) counters: CachePadded<Counters>,
    /// See [`state`]. Only moves forward, except in a forked child.
    pub(crate) state: CachePadded<AtomicU8>,
    /// See [`consumer`]. The writer stores to it around each write.
    pub(crate) consumer: CachePadded<AtomicU8>,
    /// Requests to the writer.
    pub(crate) ctl: CachePadded<control::Control>,
    /// Producers waiting for room in the ring; notified by the writer after
    /// it releases space, and at shutdown.
    pub(crate) space: CachePadded<EventCount>,
    /// Flush, reopen and shutdown callers; notified by the writer when it
    /// publishes progress.
    pub(crate) progress: CachePadded<EventCount>,
    /// Producers currently waiting for room.
    pub(crate) blocked: CachePadded<AtomicUsize>,
    /// Tasks awaiting a flush (`Logger::flush_async`); woken with
    /// `progress`.
    pub(crate) waiters: CachePadded<waiters::AsyncWaiters>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("ring", &self.ring)
            .field("policy", &self.policy)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

/// What [`Shared::new`] needs besides the ring and the sinks.
pub(crate) struct Config {
    /// The least severe level any sink takes.
    pub(crate) min_level: Level,
    pub(crate) policy: FullPolicy,
    pub(crate) protect: Level,
    pub(crate) high_water: f64,
    pub(crate) write_through: Option<Level>,
    pub(crate) flush_timeout: Duration,
    pub(crate) shutdown_timeout: Duration,
    pub(crate) panic_timeout: Duration,
    pub(crate) crash_timeout: Duration,
    pub(crate) flush_interval: Duration,
    pub(crate) batch_size: usize,
    /// Lanes and the bytes of each (0 lanes: none).
    pub(crate) lanes: (usize, usize),
    /// The sinks' filters.
    pub(crate) routes: Arc<crate::filter::routes::Routes>,
}

impl Shared {
    pub(crate) fn new(
        ring: Ring,
        sinks: Vec<SinkCounters>,
        config: Config,
        start: Start,
    ) -> io::Result<Shared> {
        let capacity = ring.capacity_bytes();
        let (count, lane_bytes) = config.lanes;
        let lanes = (count > 0).then(|| {
            let high_water = (config.policy == FullPolicy::Drop).then_some(config.high_water);
            Arc::new(lanes::Lanes::new(
                count,
                lane_bytes.min(capacity),
                high_water,
            ))
        });
        Ok(Shared {
            lanes,
            low_limit: if config.policy == FullPolicy::Drop {
                (capacity as f64 * config.high_water) as usize
            } else {
                usize::MAX
            },
            ring,
            policy: config.policy,
            min_level: config.min_level,
            protect: config.protect,
            write_through_from: config.write_through.map_or(u8::MAX, |l| l as u8),
            counters: CachePadded::new(Counters::default()),
            sinks: sinks.into_boxed_slice(),
            routes: config.routes,
            state: CachePadded::new(AtomicU8::new(state::RUNNING)),
            consumer: CachePadded::new(AtomicU8::new(consumer::NONE)),
            ctl: CachePadded::new(control::Control::new(
                config.flush_interval,
                config.batch_size,
            )),
            doorbell: Doorbell::new()?,
            space: CachePadded::new(EventCount::default()),
            progress: CachePadded::new(EventCount::default()),
            blocked: CachePadded::new(AtomicUsize::new(0)),
            waiters: CachePadded::new(waiters::AsyncWaiters::default()),
            flush_timeout: config.flush_timeout,
            shutdown_timeout: config.shutdown_timeout,
            panic_timeout: config.panic_timeout,
            crash_timeout: config.crash_timeout,
            durable: None,
            start,
        })
    }

    /// The writer published progress (a flush or reopen answered, the
    /// counts final): wakes the threads and the tasks waiting for it.
    pub(crate) fn notify_progress(&self) {
        self.progress.notify();
        self.waiters.wake_all();
    }

    /// Starts the writer thread.
    pub(crate) fn start_writer(self: &Arc<Self>) -> io::Result<()> {
        (self.start)(self)
    }

    /// Whether the current thread is a nowait writer thread (any logger's).
    /// Such a thread never waits for a writer, its own or another's.
    pub(crate) fn on_writer_thread() -> bool {
        IS_WRITER.try_with(|w| w.get()).unwrap_or(false)
    }

    /// Marks the current thread as a writer thread.
    pub(crate) fn mark_writer_thread() {
        let _ = IS_WRITER.try_with(|w| w.set(true));
    }

    /// In a forked child, before any other thread exists (`atfork` child
    /// handler): forget the parent's records, zero the counters, and make
    /// the first push start a writer. Atomic stores only.
    pub(crate) fn reset_after_fork(&self) {
        if let Some(durable) = &self.durable {
            // The parent's file stays the parent's: the child's ring (and
            // its writer's snapshots) go to private memory from here on,
            // so that the child's logger is not crash-durable.
            durable.detach_in_child();
        }
        if self.state.load(Ordering::Relaxed) != state::RUNNING {
            // Closing or closed in the parent: closed in the child too.
            self.close_queues();
            self.state.store(state::FINISHED, Ordering::SeqCst);
            self.consumer.store(consumer::NONE, Ordering::SeqCst);
            return;
        }
        if let Some(lanes) = &self.lanes {
            lanes.reset_after_fork();
        }
        self.ring.reset_after_fork();
        self.counters.reset();
        for s in self.sinks.iter() {
            s.reset();
        }
        self.ctl.reset_after_fork(self.ring.claimed());
        self.consumer.store(consumer::NONE, Ordering::SeqCst);
        self.blocked.store(0, Ordering::SeqCst);
    }

    /// In a forked child: starts the writer if none runs yet. Called on the
    /// slow paths (a push that found the `FORKED` flag, flush, shutdown).
    pub(crate) fn ensure_writer(self: &Arc<Self>) {
        if !self.ring.is_forked() {
            return;
        }
        // One thread starts it; the others find the flag gone or the
        // consumer claimed and carry on (a push then retries its claim).
        if self
            .consumer
            .compare_exchange(
                consumer::NONE,
                consumer::WRITER,
                Ordering::SeqCst,
                Ordering::SeqCst,
            )
            .is_err()
        {
            // Being started by another thread: wait (parked, bounded) for
            // the flag to clear.
            let until = Instant::now() + Duration::from_millis(100);
            self.wait_until(until, || !self.ring.is_forked());
            return;
        }
        match self.start_writer() {
            Ok(()) => {
                self.clear_forked();
                self.notify_progress();
            }
            Err(_) => {
                // No thread can be had: records are refused and counted
                // (dropped_closed), never left waiting.
                self.close_queues();
                self.clear_forked();
                self.consumer.store(consumer::NONE, Ordering::SeqCst);
                self.state.store(state::FINISHED, Ordering::SeqCst);
                self.notify_progress();
            }
        }
    }
}

impl Shared {
    /// Closes the lanes, then the ring: from here on every push is refused
    /// (and counted), so "accepted" is exactly what a lane or the ring took
    /// before. The writer still moves what the lanes hold into the ring.
    pub(crate) fn close_queues(&self) {
        if let Some(lanes) = &self.lanes {
            lanes.close();
        }
        self.ring.close();
    }

    /// Clears the `FORKED` flag of the lanes and the ring.
    pub(crate) fn clear_forked(&self) {
        if let Some(lanes) = &self.lanes {
            lanes.clear_forked();
        }
        self.ring.clear_forked();
    }

    /// Whether every record accepted so far was taken by the writer from the
    /// lanes and the ring (final once both are closed).
    pub(crate) fn all_released(&self) -> bool {
        self.lanes.as_ref().map_or(true, |l| l.is_drained())
            && self.ring.released() >= self.ring.claimed()
    }
}

thread_local! {
    static IS_WRITER: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    static WRITER_PANIC: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

impl Shared {
    /// Panic hook, on a writer thread: keeps the message for the writer's
    /// in-band report instead of printing it to a possibly stalled stderr.
    pub(crate) fn note_writer_panic(message: String) {
        let _ = WRITER_PANIC.try_with(|p| {
            if let Ok(mut p) = p.try_borrow_mut() {
                *p = Some(message);
            }
        });
    }

    /// The last panic message noted on this writer thread.
    pub(crate) fn take_writer_panic() -> Option<String> {
        WRITER_PANIC
            .try_with(|p| p.try_borrow_mut().ok().and_then(|mut p| p.take()))
            .ok()
            .flatten()
    }
}
