//! Windows. There are no descriptors to poll: regular files are written
//! with blocking calls like everywhere, and the console, pipes and TCP go
//! through a relay thread of their own ([`relay`](crate::sys::relay)), so the writer's
//! sleep only waits for its doorbell.

pub(crate) mod affinity;
pub(crate) mod crash;
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

/// Something to poll for room: only a [`Descriptor`] gives one, and none
/// exists on Windows.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Waitable<'a>(std::marker::PhantomData<&'a ()>);

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

/// Sleeps until the doorbell rings (if given) or `timeout` passes.
pub(crate) fn sleep(
    bell: Option<&Doorbell>,
    waits: &[Waitable<'_>],
    reads: &[Waitable<'_>],
    timeout: Duration,
) {
    debug_assert!(
        waits.is_empty() && reads.is_empty(),
        "nowait bug: a Windows sink to poll"
    );
    match bell {
        Some(bell) => {
            if bell.rung.load(Ordering::SeqCst) == 0 {
                super::wait(&bell.rung, 0, timeout);
            }
            bell.clear();
        }
        None => std::thread::sleep(timeout),
    }
}

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
/// name (the crash-durable file's staging, `durable::take_path`).
pub(crate) const RENAME_NEEDS_CLOSE: bool = true;
