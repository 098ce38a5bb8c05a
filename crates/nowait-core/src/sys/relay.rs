//! A sink's own I/O thread, for outputs that cannot be written without
//! blocking: a pipe where the system cannot give us a private non-blocking
//! descriptor (macOS, the BSDs), the Windows console and pipes, TCP on
//! Windows. The writer thread hands bytes over and never waits; only this
//! thread blocks, so a stalled reader stalls this one sink, which then
//! sheds records as it would behind a full pipe.
//!
//! # Protocol
//!
//! The writer calls [`Relay::write`] with the sink's unsent bytes, always
//! starting at the first byte not yet reported written. The relay:
//!
//! 1. reports (as `Wrote(n)`) the bytes its thread finished writing since
//!    the last call, which are the first `n` bytes of the slice: a record
//!    is counted written only once it really was, so flushes, shutdowns
//!    and stall detection ("nothing taken for 100 ms") work as for a
//!    descriptor, and bytes still in the relay when the process ends are
//!    never counted as written;
//! 2. copies the part of the slice it does not hold yet into its queue,
//!    at most [`QUEUE`] bytes held in all, and wakes its thread;
//! 3. reports a failed write (`Failed`) after the bytes finished before
//!    it; it then holds nothing, and the bytes not written are the sink's
//!    again (to retry, or to count).
//!
//! The thread takes at most [`CHUNK`] bytes at a time and writes them with
//! blocking calls, publishing its progress after each call. The lock is
//! held for a copy, never during a write, so the writer thread never waits
//! on the sink. [`Relay::abandon`] (a shutdown giving up) drops the queue;
//! only the chunk being written may still finish. Dropping the relay ends
//! the thread after the write in progress.

use std::io::{self, Write};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

/// Bytes held (queued or being written) at most.
pub(crate) const QUEUE: usize = 64 << 10;

/// At most this much per write call: a blocking pipe write returns only
/// once all of it is in, so this bounds both how long progress goes
/// unreported and what a shutdown that gives up can leave mid-write.
pub(crate) const CHUNK: usize = 8 << 10;

/// What a relay thread writes to.
pub(crate) trait Blocking: Send + 'static {
    /// Called once when the thread starts (a connection made ahead of the
    /// first record).
    fn start(&mut self) {}
    /// Writes some of `buf`, blocking as long as it takes.
    fn write(&mut self, buf: &[u8]) -> io::Result<usize>;
    /// Called when the queue ran empty (a user-space buffer to push out).
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A `Write` as a relay target (a pipe, the console).
pub(crate) struct WriteTarget<W>(pub(crate) W);

impl<W: Write + Send + 'static> Blocking for WriteTarget<W> {
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
    /// The first `n` bytes of the slice are written.
    Wrote(usize),
    /// Nothing finished since the last call.
    Pending,
    /// A write failed; nothing after the bytes reported before was written.
    Failed(io::Error),
}

#[derive(Default)]
struct State {
    /// Bytes handed over, not yet taken by the thread.
    queue: Vec<u8>,
    /// Bytes the thread took and has not finished (at most [`CHUNK`]).
    taken: usize,
    /// Bytes finished and not yet reported.
    done: usize,
    /// A failed write, to report after `done`.
    error: Option<io::Error>,
    /// The relay was dropped.
    closed: bool,
}

/// Called by the relay thread after each chunk (the writer's doorbell).
pub(crate) type Waker = Arc<dyn Fn() + Send + Sync>;

struct Inner {
    state: Mutex<State>,
    work: Condvar,
    waker: OnceLock<Waker>,
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

impl Relay {
    /// Starts a thread named `name` that writes to `target`.
    ///
    /// # Errors
    ///
    /// The thread cannot be spawned.
    pub(crate) fn spawn(name: &str, target: Box<dyn Blocking>) -> io::Result<Relay> {
        Relay::spawn_with(name, target, || {})
    }

    /// [`Relay::spawn`], running `on_start` first on the new thread (to
    /// mark it as one of nowait's own for the panic hook).
    ///
    /// # Errors
    ///
    /// The thread cannot be spawned.
    pub(crate) fn spawn_with(
        name: &str,
        mut target: Box<dyn Blocking>,
        on_start: fn(),
    ) -> io::Result<Relay> {
        let inner = Arc::new(Inner {
            state: Mutex::new(State::default()),
            work: Condvar::new(),
            waker: OnceLock::new(),
        });
        let theirs = Arc::clone(&inner);
        std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                on_start();
                run(&theirs, &mut *target);
            })?;
        Ok(Relay { inner })
    }

    /// Sets what the thread calls after each chunk it wrote (the writer's
    /// doorbell). Only the first call counts.
    pub(crate) fn set_waker(&self, waker: Waker) {
        let _ = self.inner.waker.set(waker);
    }

    /// One write attempt (see the module docs): never blocks.
    pub(crate) fn write(&self, buf: &[u8]) -> Relayed {
        let mut s = self.inner.lock();
        let report = std::mem::take(&mut s.done);
        if report == 0 {
            if let Some(e) = s.error.take() {
                return Relayed::Failed(e);
            }
        }
        if s.error.is_none() {
            // `buf[report..]` starts with the bytes held; hand over what
            // follows them, up to the bound.
            let held = s.taken + s.queue.len();
            let from = report + held;
            if from < buf.len() && held < QUEUE {
                let to = buf.len().min(from + (QUEUE - held));
                s.queue.extend_from_slice(&buf[from..to]);
                self.inner.work.notify_one();
            }
        }
        if report > 0 {
            Relayed::Wrote(report)
        } else {
            Relayed::Pending
        }
    }

    /// Drops what is queued and not yet being written; returns the bytes
    /// still held (finished but unreported, or being written), which are
    /// the first bytes of the next slice and may still be reported.
    pub(crate) fn abandon(&self) -> usize {
        let mut s = self.inner.lock();
        s.queue.clear();
        s.taken + s.done
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
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| target.start()));
    let mut chunk = Vec::with_capacity(CHUNK);
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
            let k = s.queue.len().min(CHUNK);
            chunk.clear();
            chunk.extend_from_slice(&s.queue[..k]);
            s.queue.drain(..k);
            s.taken = k;
        }
        let mut at = 0;
        let mut failure = None;
        while at < chunk.len() {
            // A panicking writer fails the sink, not the thread.
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                target.write(&chunk[at..])
            }))
            .unwrap_or_else(|_| {
                Err(io::Error::new(
                    io::ErrorKind::BrokenPipe,
                    "the sink's writer panicked",
                ))
            });
            match r {
                Ok(0) => {
                    failure = Some(io::Error::from(io::ErrorKind::WriteZero));
                    break;
                }
                Ok(n) => {
                    at += n;
                    let mut s = inner.lock();
                    s.taken -= n;
                    s.done += n;
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
        if failure.is_none() && inner.lock().queue.is_empty() {
            if let Err(e) =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| target.flush()))
                    .unwrap_or_else(|_| Err(io::Error::from(io::ErrorKind::BrokenPipe)))
            {
                failure = Some(e);
            }
        }
        if let Some(e) = failure {
            let mut s = inner.lock();
            s.taken = 0;
            s.queue.clear();
            s.error = Some(e);
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

    /// Shares what was written; blocks while `gate` is 0; fails once
    /// `fail_after` bytes are out. Writes 7 bytes a call.
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
            if self.fail_after.is_some_and(|limit| out.len() >= limit) {
                return Err(io::Error::other("disk full"));
            }
            let n = buf.len().min(7);
            out.extend_from_slice(&buf[..n]);
            Ok(n)
        }
    }

    /// Drives the relay as the writer does: `pending` is the sink's
    /// unsent bytes, trimmed by what is reported written.
    fn drive(relay: &Relay, pending: &mut Vec<u8>, deadline: Duration) -> Option<io::Error> {
        let end = Instant::now() + deadline;
        while !pending.is_empty() && Instant::now() < end {
            match relay.write(pending) {
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
    fn bytes_are_reported_written_only_once_written_in_order() {
        let probe = Probe {
            gate: Arc::new(AtomicUsize::new(1)),
            ..Probe::default()
        };
        let relay = Relay::spawn("t", Box::new(probe.clone())).unwrap();
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        let mut pending = data.clone();
        assert!(drive(&relay, &mut pending, Duration::from_secs(10)).is_none());
        assert!(pending.is_empty());
        assert_eq!(*probe.out.lock().unwrap(), data);
        assert_eq!(relay.abandon(), 0);
    }

    #[test]
    fn a_stalled_target_never_blocks_the_caller_and_bounds_what_it_holds() {
        let probe = Probe::default(); // gate closed: every write blocks
        let relay = Relay::spawn("t", Box::new(probe.clone())).unwrap();
        let data = vec![b'x'; QUEUE * 3];
        for _ in 0..100 {
            let t = Instant::now();
            assert!(matches!(relay.write(&data), Relayed::Pending));
            assert!(t.elapsed() < Duration::from_millis(100));
        }
        let deadline = Instant::now() + Duration::from_secs(5);
        while relay.inner.lock().taken == 0 {
            assert!(Instant::now() < deadline, "the thread never took a chunk");
            std::thread::sleep(Duration::from_millis(1));
        }
        {
            let s = relay.inner.lock();
            assert_eq!(s.taken + s.queue.len(), QUEUE);
            assert_eq!(s.taken, CHUNK);
        }
        // The reader comes back: everything is written.
        probe.gate.store(1, Ordering::SeqCst);
        let mut pending = data.clone();
        assert!(drive(&relay, &mut pending, Duration::from_secs(10)).is_none());
        assert_eq!(probe.out.lock().unwrap().len(), data.len());
    }

    #[test]
    fn abandon_keeps_only_the_chunk_being_written() {
        let probe = Probe::default();
        let relay = Relay::spawn("t", Box::new(probe.clone())).unwrap();
        let data = vec![b'z'; QUEUE];
        assert!(matches!(relay.write(&data), Relayed::Pending));
        let deadline = Instant::now() + Duration::from_secs(5);
        while relay.inner.lock().taken == 0 {
            assert!(Instant::now() < deadline);
            std::thread::sleep(Duration::from_millis(1));
        }
        assert_eq!(relay.abandon(), CHUNK);
        probe.gate.store(1, Ordering::SeqCst);
        // What follows the held chunk is offered again (the sink's buffer
        // after an abandon: the chunk, then a notice).
        let mut pending = data[..CHUNK].to_vec();
        pending.extend_from_slice(b"notice\n");
        assert!(drive(&relay, &mut pending, Duration::from_secs(10)).is_none());
        let out = probe.out.lock().unwrap();
        assert_eq!(out.len(), CHUNK + 7);
        assert!(out.ends_with(b"notice\n"));
    }

    #[test]
    fn a_failure_reports_what_was_written_first_and_keeps_the_rest() {
        let probe = Probe {
            gate: Arc::new(AtomicUsize::new(1)),
            fail_after: Some(20),
            ..Probe::default()
        };
        let relay = Relay::spawn("t", Box::new(probe.clone())).unwrap();
        let mut pending = vec![b'y'; 100];
        let e = drive(&relay, &mut pending, Duration::from_secs(10)).expect("a failure");
        assert_eq!(e.to_string(), "disk full");
        let written = probe.out.lock().unwrap().len();
        // Every byte is either reported written or still the caller's.
        assert_eq!(written + pending.len(), 100);
        assert_eq!(relay.abandon(), 0);
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
        assert_eq!(pending, b"abc\n");
    }
}
