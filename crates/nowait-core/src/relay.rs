//! A sink's own I/O thread, for outputs that cannot be written without
//! blocking: a pipe where the system cannot give us a private non-blocking
//! descriptor (macOS, the BSDs), the Windows console and pipes, TCP on
//! Windows. The writer thread hands bytes over and never waits; only this
//! thread blocks, so a stalled reader stalls this one sink, which then
//! sheds records as a full pipe would.
//!
//! # Protocol
//!
//! The relay behaves like a pipe's kernel buffer of [`QUEUE`] bytes:
//!
//! 1. [`Relay::write`] copies as much of the slice as there is room for
//!    and reports it written at once (as a write into a pipe does); with no
//!    room it reports "would block", so the sink keeps its bytes and sheds
//!    records when its own buffer fills, as it does for a full pipe.
//! 2. The thread takes everything queued and writes it with blocking
//!    calls, at most [`CHUNK`] bytes a call, publishing its progress (the
//!    room it frees, and when) after each call.
//! 3. A failed write discards what the thread held (as a pipe's buffer is
//!    lost when its reader goes) and is reported by the next
//!    [`Relay::write`]; a broken pipe then fails the sink for good.
//!
//! Unlike a kernel buffer, the queue dies with the process, so a flush and
//! a shutdown also wait (within their bounds) for [`Relay::in_flight`] to
//! reach zero, unless the thread has made no progress for the stall time.
//! The lock is held for a copy or a swap, never during a write, so the
//! writer thread never waits on the sink. Dropping the relay ends the
//! thread after the write in progress.

use std::io::{self, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Bytes handed over and not yet written, at most (a pipe's default size
/// on Linux).
pub(crate) const QUEUE: usize = 64 << 10;

/// At most this much per write: a blocking pipe write returns only once
/// all of it is in, so progress (and room) is published a chunk at a time.
const CHUNK: usize = 16 << 10;

/// What a relay thread writes to.
pub(crate) trait Blocking: Send + 'static {
    /// Writes some of `buf`, blocking as long as it takes.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize>;
    /// Called when the queue ran empty (a user-space buffer to push out).
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A `Write` as a relay target (a pipe, the console).
pub(crate) struct Plain<W>(pub(crate) W);

impl<W: Write + Send + 'static> Blocking for Plain<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// The outcome of one [`Relay::write`].
#[derive(Debug)]
pub(crate) enum Relayed {
    /// The first `n` bytes of the slice are queued.
    Wrote(usize),
    /// No room now.
    Pending,
    /// A write failed (what the thread held is lost).
    Failed(io::Error),
}

struct State {
    /// Bytes handed over, not yet taken by the thread.
    queue: Vec<u8>,
    /// Bytes the thread took and has not finished.
    taken: usize,
    /// When the thread last finished a write (or took bytes while idle).
    progress: Instant,
    /// A failed write, to report on the next `write`.
    error: Option<io::Error>,
    /// The relay was dropped.
    closed: bool,
}

struct Inner {
    state: Mutex<State>,
    work: Condvar,
    /// Called after each batch, so the writer hands more over at once.
    waker: std::sync::OnceLock<Waker>,
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding the lock; recover anyway.
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The writer's end of a sink's I/O thread.
pub(crate) struct Relay {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Relay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Relay")
    }
}

/// Called by the relay thread when it finished a batch (to ring the
/// writer's doorbell).
pub(crate) type Waker = Arc<dyn Fn() + Send + Sync>;

impl Relay {
    /// Starts a thread named `name` that writes to `target`.
    ///
    /// # Errors
    ///
    /// The thread cannot be spawned.
    pub(crate) fn spawn(name: &str, mut target: Box<dyn Blocking>) -> io::Result<Relay> {
        let inner = Arc::new(Inner {
            state: Mutex::new(State {
                queue: Vec::new(),
                taken: 0,
                progress: Instant::now(),
                error: None,
                closed: false,
            }),
            work: Condvar::new(),
            waker: std::sync::OnceLock::new(),
        });
        let theirs = Arc::clone(&inner);
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || run(&theirs, &mut *target))?;
        Ok(Relay { inner })
    }

    /// Sets what the thread calls after each batch it wrote (the writer's
    /// doorbell). Only the first call counts.
    pub(crate) fn set_waker(&self, waker: Waker) {
        let _ = self.inner.waker.set(waker);
    }

    /// One write attempt (see the module docs): never blocks.
    pub(crate) fn write(&self, buf: &[u8]) -> Relayed {
        let mut s = self.inner.lock();
        if let Some(e) = s.error.take() {
            return Relayed::Failed(e);
        }
        let held = s.taken + s.queue.len();
        let n = buf.len().min(QUEUE.saturating_sub(held));
        if n == 0 {
            return Relayed::Pending;
        }
        if held == 0 {
            // Idle until now: the stall clock starts with this hand-over.
            s.progress = Instant::now();
        }
        s.queue.extend_from_slice(&buf[..n]);
        self.inner.work.notify_one();
        Relayed::Wrote(n)
    }

    /// If bytes are still held (handed over, not yet written): how long
    /// since the thread last made progress. `None` when all is written.
    pub(crate) fn in_flight(&self) -> Option<Duration> {
        let s = self.inner.lock();
        (s.taken + s.queue.len() > 0).then(|| s.progress.elapsed())
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        let mut s = self.inner.lock();
        s.closed = true;
        s.queue = Vec::new();
        self.inner.work.notify_one();
    }
}

fn run(inner: &Inner, target: &mut dyn Blocking) {
    let mut batch = Vec::new();
    loop {
        {
            let mut s = inner.lock();
            while s.queue.is_empty() && !s.closed {
                s = inner
                    .work
                    .wait_timeout(s, Duration::from_secs(1))
                    .map(|(s, _)| s)
                    .unwrap_or_else(|p| p.into_inner().0);
            }
            if s.closed {
                return;
            }
            std::mem::swap(&mut s.queue, &mut batch);
            s.taken = batch.len();
        }
        let mut at = 0;
        let mut failure = None;
        while at < batch.len() {
            // A panicking writer (a user's) fails the sink, not the thread.
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                target.write(&batch[at..batch.len().min(at + CHUNK)])
            }))
            .unwrap_or_else(|_| Err(io::Error::new(io::ErrorKind::BrokenPipe, "the sink's writer panicked")));
            match r {
                Ok(0) => {
                    failure = Some(io::Error::from(io::ErrorKind::WriteZero));
                    break;
                }
                Ok(n) => {
                    at += n;
                    let mut s = inner.lock();
                    s.taken -= n;
                    s.progress = Instant::now();
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    // A descriptor someone else made non-blocking: wait a
                    // little rather than spin.
                    std::thread::sleep(Duration::from_millis(1));
                }
                Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        if failure.is_none() {
            let idle = inner.lock().queue.is_empty();
            if idle {
                if let Err(e) = target.flush() {
                    failure = Some(e);
                }
            }
        }
        batch.clear();
        {
            let mut s = inner.lock();
            if let Some(e) = failure {
                s.taken = 0;
                s.queue.clear();
                s.error = Some(e);
            }
        }
        if let Some(wake) = inner.waker.get() {
            wake();
        }
    }
}

#[cfg(all(test, not(miri)))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Instant;

    /// Shares what was written; blocks while `gate` is 0; fails after
    /// `fail_after` bytes.
    #[derive(Clone, Default)]
    struct Probe {
        out: Arc<Mutex<Vec<u8>>>,
        gate: Arc<AtomicUsize>,
        fail_after: Option<usize>,
    }

    impl Blocking for Probe {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            while self.gate.load(Ordering::SeqCst) == 0 {
                std::thread::sleep(Duration::from_millis(1));
            }
            let mut out = self.out.lock().unwrap();
            if let Some(limit) = self.fail_after {
                if out.len() >= limit {
                    return Err(io::Error::new(io::ErrorKind::Other, "disk full"));
                }
            }
            let n = buf.len().min(7);
            out.extend_from_slice(&buf[..n]);
            Ok(n)
        }
    }

    /// Drives the relay as the writer does: `pending` is the sink's
    /// unsent bytes, trimmed by what is reported written; then waits for
    /// the relay to write everything out.
    fn drive(relay: &Relay, pending: &mut Vec<u8>, deadline: Duration) -> Option<io::Error> {
        let end = Instant::now() + deadline;
        while Instant::now() < end {
            let idle = pending.is_empty() && relay.in_flight().is_none();
            match relay.write(pending) {
                Relayed::Pending if idle => break,
                Relayed::Wrote(n) => {
                    pending.drain(..n);
                }
                Relayed::Pending => std::thread::sleep(Duration::from_millis(1)),
                Relayed::Failed(e) => return Some(e),
            }
        }
        None
    }

    #[test]
    fn everything_handed_over_is_written_in_order() {
        let probe = Probe {
            gate: Arc::new(AtomicUsize::new(1)),
            ..Probe::default()
        };
        let relay = Relay::spawn("t", Box::new(probe.clone())).unwrap();
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let mut pending = data.clone();
        assert!(drive(&relay, &mut pending, Duration::from_secs(10)).is_none());
        assert!(pending.is_empty());
        assert_eq!(*probe.out.lock().unwrap(), data);
        assert!(relay.in_flight().is_none());
    }

    #[test]
    fn a_stalled_target_never_blocks_the_caller_and_bounds_what_it_holds() {
        let probe = Probe::default(); // gate closed: every write blocks
        let relay = Relay::spawn("t", Box::new(probe.clone())).unwrap();
        let data = vec![b'x'; QUEUE * 3];
        let mut taken = 0;
        for _ in 0..100 {
            let t = Instant::now();
            match relay.write(&data[taken..]) {
                Relayed::Wrote(n) => taken += n,
                Relayed::Pending => {}
                Relayed::Failed(e) => panic!("{e}"),
            }
            assert!(t.elapsed() < Duration::from_millis(100));
        }
        // Like a full pipe: exactly its size taken, then "would block".
        assert_eq!(taken, QUEUE);
        std::thread::sleep(Duration::from_millis(30));
        assert!(relay.in_flight().is_some_and(|d| d >= Duration::from_millis(30)));
        // The reader comes back: everything is written.
        probe.gate.store(1, Ordering::SeqCst);
        let mut pending = data[taken..].to_vec();
        assert!(drive(&relay, &mut pending, Duration::from_secs(10)).is_none());
        assert_eq!(probe.out.lock().unwrap().len(), data.len());
    }

    #[test]
    fn a_failure_is_reported_by_the_next_write() {
        let probe = Probe {
            gate: Arc::new(AtomicUsize::new(1)),
            fail_after: Some(20),
            ..Probe::default()
        };
        let relay = Relay::spawn("t", Box::new(probe.clone())).unwrap();
        let mut pending = vec![b'y'; 100];
        let e = drive(&relay, &mut pending, Duration::from_secs(10)).expect("a failure");
        assert_eq!(e.to_string(), "disk full");
        assert!(relay.in_flight().is_none());
        assert_eq!(probe.out.lock().unwrap().len(), 21);
    }

    #[test]
    fn a_panicking_target_is_a_failure() {
        struct Boom;
        impl Blocking for Boom {
            fn write(&mut self, _: &[u8]) -> io::Result<usize> {
                panic!("boom")
            }
        }
        let relay = Relay::spawn("t", Box::new(Boom)).unwrap();
        let mut pending = b"abc\n".to_vec();
        let e = drive(&relay, &mut pending, Duration::from_secs(10)).expect("a failure");
        assert_eq!(e.kind(), io::ErrorKind::BrokenPipe);
    }
}
