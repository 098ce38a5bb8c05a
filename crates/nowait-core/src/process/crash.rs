//! Fatal signals: the records accepted before a crash are written before
//! the process dies (`Builder::drain_on_crash`, on by default on Unix).
//!
//! The handler (`sys`) calls [`drain`] on the thread that crashed, once per
//! process. Everything here is async-signal-safe: no allocation, no lock
//! that could be held by the crashed thread, no formatting machinery.
//!
//! 1. For each live logger that asked for it (the registry, read with
//!    `try_lock` and weak upgrades: atomics only; a registry locked by the
//!    crashed thread is skipped), a flush of every sink is requested the
//!    way [`Logger::flush`] does it: `fetch_max` of the ring position,
//!    `fetch_add` of the request number, and the writer's doorbell (one
//!    `write(2)`). A logger whose writer is not running (a forked child that
//!    never logged), and every logger when the crash is on a writer thread,
//!    are skipped: nobody could drain them.
//! 2. The thread polls the answers (`clock_gettime`, `nanosleep` of 1 ms),
//!    at most each logger's `Builder::crash_timeout`. The writer drains
//!    as it always does, on its own thread; if it needs a lock the crashed
//!    thread holds (inside `malloc`), the bound ends the wait.
//! 3. A last line goes into the ring (a claim, a copy, a commit: no
//!    allocation), built in a stack buffer: the signal, the thread's name
//!    (`prctl`/`pthread_getname_np`), how many records were written during
//!    the drain and how many the sinks still held, then one more short
//!    flush, within the same bound.
//!
//! [`Logger::flush`]: crate::logger::Logger::flush

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::level::Level;
use crate::process::live;
use crate::record::kind;
use crate::shared::{consumer, state, FlushScope, Shared};

/// Most loggers one crash drains (more are skipped: the list is on the
/// stack).
const MAX_LOGGERS: usize = 16;

/// How long the last line may take after the drain.
pub(crate) const NOTICE_WAIT: Duration = Duration::from_millis(100);

/// A line built without allocating.
struct Line {
    buf: [u8; 256],
    len: usize,
}

impl Line {
    fn new() -> Line {
        Line {
            buf: [0; 256],
            len: 0,
        }
    }

    fn push(&mut self, s: &[u8]) -> &mut Line {
        let n = s.len().min(self.buf.len() - self.len);
        self.buf[self.len..self.len + n].copy_from_slice(&s[..n]);
        self.len += n;
        self
    }

    fn num(&mut self, n: u64) -> &mut Line {
        let mut b = itoa::Buffer::new();
        let s = b.format(n);
        self.push(s.as_bytes())
    }

    fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

/// One logger being drained.
struct Draining {
    shared: Option<Arc<Shared>>,
    request: u64,
    written_before: u64,
}

/// Asks `shared`'s writer for a flush of every sink; returns the request's
/// number.
fn request(shared: &Shared) -> u64 {
    let p = &shared.ctl.flush[FlushScope::All as usize];
    p.req.fetch_max(shared.ring.claimed(), Ordering::SeqCst);
    let n = p.seq.fetch_add(1, Ordering::SeqCst) + 1;
    shared.doorbell.ring();
    n
}

fn answered(shared: &Shared, n: u64) -> bool {
    shared.ctl.flush[FlushScope::All as usize]
        .seq_done
        .load(Ordering::SeqCst)
        >= n
        || shared.state.load(Ordering::SeqCst) != state::RUNNING
}

/// Polls until every request is answered or `deadline` passes.
fn wait(all: &[Draining], deadline: Instant) {
    while Instant::now() < deadline {
        if all
            .iter()
            .all(|d| d.shared.as_ref().map_or(true, |s| answered(s, d.request)))
        {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Whether a writer thread is there to drain `shared`.
fn has_writer(shared: &Shared) -> bool {
    matches!(
        shared.consumer.load(Ordering::SeqCst),
        consumer::WRITER | consumer::IN_IO
    ) && shared.state.load(Ordering::SeqCst) == state::RUNNING
}

/// Runs on the thread that received fatal signal `sig` (see the module
/// docs).
pub(crate) fn drain(sig: i32) {
    if Shared::on_writer_thread() {
        // The writer itself crashed: nobody can drain. A crash-durable
        // file is told, so that the next start sets aside the record the
        // writer was formatting (one atomic store).
        crate::durable::note_writer_crash();
        return;
    }
    let start = Instant::now();
    let mut all: [Draining; MAX_LOGGERS] = std::array::from_fn(|_| Draining {
        shared: None,
        request: 0,
        written_before: 0,
    });
    let mut count = 0;
    let mut bound = Duration::ZERO;
    live::try_for_each(
        |o| o.drain_on_crash,
        |shared| {
            if count < MAX_LOGGERS && has_writer(shared) {
                all[count] = Draining {
                    shared: Some(Arc::clone(shared)),
                    request: request(shared),
                    written_before: shared.counters.records_written.load(Ordering::SeqCst),
                };
                bound = bound.max(shared.crash_timeout);
                count += 1;
            }
        },
    );
    if count == 0 {
        return;
    }
    let deadline = start + bound;
    wait(&all[..count], deadline);
    let elapsed = start.elapsed();
    let mut name = [0u8; 64];
    let name = crate::sys::thread_name(&mut name);
    for d in &mut all[..count] {
        let Some(shared) = &d.shared else { continue };
        let drained = shared
            .counters
            .records_written
            .load(Ordering::SeqCst)
            .saturating_sub(d.written_before);
        let done = answered(shared, d.request);
        let held: u64 = shared
            .sinks
            .iter()
            .map(|s| s.pending_records.load(Ordering::SeqCst))
            .max()
            .unwrap_or(0);
        let mut line = Line::new();
        line.push(b"fatal signal ")
            .push(crate::sys::signal_name(sig).as_bytes())
            .push(b" on thread '")
            .push(name)
            .push(b"': ")
            .num(drained)
            .push(b" records drained in ")
            .num(elapsed.as_millis() as u64)
            .push(b" ms, ");
        if done {
            line.num(held).push(b" lost");
        } else {
            line.push(b"the drain did not finish within ")
                .num(bound.as_millis() as u64)
                .push(b" ms: the records after it are lost");
        }
        let parts: [&[u8]; 1] = [line.bytes()];
        if shared
            .try_push_ring_only(Level::Error, kind::TEXT, &parts[..])
            .is_ok()
            && done
        {
            d.request = request(shared);
        } else {
            d.shared = None;
        }
    }
    // The last line: at most `NOTICE_WAIT` more.
    wait(&all[..count], Instant::now() + NOTICE_WAIT);
}
