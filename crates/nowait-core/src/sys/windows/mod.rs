//! Windows. Regular files are written with blocking calls like
//! everywhere, and the console, pipes and TCP sinks go through a relay
//! thread of their own ([`relay`](crate::sys::relay)). The one socket the
//! writer polls itself is the OTLP sink's non-blocking connection
//! ([`net`]): while it waits on one, the writer's sleep polls it in short
//! slices and looks at its doorbell between them.

pub(crate) mod affinity;
pub(crate) mod crash;
mod exchange;
pub(crate) mod file;
pub(crate) mod mapping;
pub(crate) mod net;
pub(crate) mod nofollow;
pub(crate) mod process;
#[cfg(feature = "signals")]
pub(crate) mod signals;
pub(crate) mod stdio;

use std::io;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// A non-blocking descriptor: none exists on Windows (never constructed).
#[derive(Debug)]
pub(crate) enum Descriptor {}

/// A socket to poll (the OTLP sink's connection), for room or for its
/// answer as the caller's list says.
#[derive(Debug, Clone, Copy)]
#[cfg_attr(not(feature = "otlp"), allow(dead_code))]
pub(crate) struct Waitable<'a>(std::os::windows::io::BorrowedSocket<'a>);

impl<'a> Waitable<'a> {
    #[cfg_attr(not(feature = "otlp"), allow(dead_code))]
    pub(crate) fn socket(s: std::os::windows::io::BorrowedSocket<'a>) -> Waitable<'a> {
        Waitable(s)
    }
}

impl Descriptor {
    pub(crate) fn write(&self, _buf: &[u8]) -> io::Result<usize> {
        match *self {}
    }

    pub(crate) fn send(&self, _buf: &[u8]) -> io::Result<usize> {
        match *self {}
    }

    pub(crate) fn waitable(&self) -> Waitable<'_> {
        match *self {}
    }

    pub(crate) fn pipe_room(&self) -> Option<(usize, usize)> {
        match *self {}
    }
}

/// The writer's doorbell: a flag and the parking lot. Ringing sets the flag
/// and wakes the writer; the writer's sleep returns at once if the flag is
/// set (checked again under the lot's lock, so a ring is never lost).
#[derive(Debug, Default)]
pub(crate) struct Doorbell {
    rung: AtomicU32,
}

impl Doorbell {
    pub(crate) fn new() -> io::Result<Doorbell> {
        Ok(Doorbell::default())
    }

    /// Wakes the writer; no system call unless it sleeps.
    pub(crate) fn ring(&self) {
        if self.rung.swap(1, Ordering::SeqCst) == 0 {
            super::wake_all(&self.rung);
        }
    }

    /// Clears pending rings (writer side).
    pub(crate) fn clear(&self) {
        self.rung.store(0, Ordering::SeqCst);
    }
}

/// Sleeps until the doorbell rings (if given), `timeout` passes, or one
/// of `waits` has room or one of `reads` has bytes (or an error).
pub(crate) fn sleep(
    bell: Option<&Doorbell>,
    waits: &[Waitable<'_>],
    reads: &[Waitable<'_>],
    timeout: Duration,
) {
    if waits.is_empty() && reads.is_empty() {
        match bell {
            Some(bell) => {
                if bell.rung.load(Ordering::SeqCst) == 0 {
                    super::wait(&bell.rung, 0, timeout);
                }
                bell.clear();
            }
            None => std::thread::sleep(timeout),
        }
        return;
    }
    // A socket and the doorbell cannot share one wait here: the sockets
    // are polled in slices of at most `SOCKET_SLICE`, the doorbell looked
    // at between them. A ring is seen that much later, and only while an
    // exchange is in flight.
    let start = std::time::Instant::now();
    loop {
        if let Some(bell) = bell {
            if bell.rung.swap(0, Ordering::SeqCst) != 0 {
                return;
            }
        }
        let left = timeout.saturating_sub(start.elapsed());
        if left.is_zero() || exchange::poll(waits, reads, left.min(SOCKET_SLICE)) {
            return;
        }
    }
}

/// The longest the writer polls its sockets without looking at its
/// doorbell.
const SOCKET_SLICE: Duration = Duration::from_millis(5);

/// Whether a write error means the sink can never take bytes again: the
/// reader is gone (`ERROR_BROKEN_PIPE`, `ERROR_NO_DATA`) or the handle is
/// bad.
pub(crate) fn is_permanent(e: &io::Error) -> bool {
    use windows_sys::Win32::Foundation::{ERROR_BROKEN_PIPE, ERROR_INVALID_HANDLE, ERROR_NO_DATA};
    e.kind() == io::ErrorKind::BrokenPipe
        || matches!(
            e.raw_os_error().map(|c| c as u32),
            Some(ERROR_BROKEN_PIPE | ERROR_NO_DATA | ERROR_INVALID_HANDLE)
        )
}

/// Whether a file must be closed before another can be renamed over its
/// name (the crash-durable file's staging).
pub(crate) const RENAME_NEEDS_CLOSE: bool = true;
