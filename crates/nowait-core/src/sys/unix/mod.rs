//! Unix: Linux, macOS, the BSDs. See [`crate::sys`] for which file each
//! system compiles.

pub(crate) mod affinity;
pub(crate) mod crash;
#[cfg(all(target_os = "linux", not(nowait_portable)))]
#[path = "doorbell_eventfd.rs"]
mod doorbell;
#[cfg(not(all(target_os = "linux", not(nowait_portable))))]
#[path = "doorbell_pipe.rs"]
mod doorbell;
pub(crate) mod file;
#[cfg(all(target_os = "linux", not(nowait_portable)))]
pub(crate) mod journal;
pub(crate) mod mapping;
pub(crate) mod net;
pub(crate) mod nofollow;
mod poll;
pub(crate) mod process;
#[cfg(feature = "signals")]
pub(crate) mod signals;
pub(crate) mod stdio;

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::io::Errno;

pub(crate) use doorbell::Doorbell;
pub(crate) use poll::{sleep, Waitable};

/// A descriptor of our own that never blocks: a terminal, pipe, FIFO or
/// character device opened with `O_NONBLOCK` on a private open file
/// description, or a socket written with `MSG_DONTWAIT`.
#[derive(Debug)]
pub(crate) struct Descriptor(OwnedFd);

impl From<OwnedFd> for Descriptor {
    fn from(fd: OwnedFd) -> Descriptor {
        Descriptor(fd)
    }
}

fn retry_intr(mut f: impl FnMut() -> rustix::io::Result<usize>) -> io::Result<usize> {
    loop {
        match f() {
            Err(Errno::INTR) => continue,
            r => return r.map_err(io::Error::from),
        }
    }
}

impl Descriptor {
    /// One `write(2)`; a full pipe or terminal is `ErrorKind::WouldBlock`.
    pub(crate) fn write(&self, buf: &[u8]) -> io::Result<usize> {
        retry_intr(|| rustix::io::write(&self.0, buf))
    }

    /// One `send(2)` that never waits (a socket).
    pub(crate) fn send(&self, buf: &[u8]) -> io::Result<usize> {
        retry_intr(|| rustix::net::send(&self.0, buf, net::SEND))
    }

    /// What to poll for room.
    pub(crate) fn waitable(&self) -> Waitable<'_> {
        self.0.as_fd()
    }

    /// A pipe's size and its free room in bytes, where the kernel tells
    /// (Linux: `F_GETPIPE_SZ` and `FIONREAD`); `None` elsewhere.
    pub(crate) fn pipe_room(&self) -> Option<(usize, usize)> {
        pipe_room(self.0.as_fd())
    }
}

#[cfg(all(target_os = "linux", not(nowait_portable)))]
fn pipe_room(fd: BorrowedFd<'_>) -> Option<(usize, usize)> {
    let size = rustix::pipe::fcntl_getpipe_size(fd).ok()?;
    let queued = rustix::io::ioctl_fionread(fd).ok()? as usize;
    Some((size, size.saturating_sub(queued)))
}

/// Other systems do not tell a pipe's size (macOS sizes pipes dynamically).
#[cfg(not(all(target_os = "linux", not(nowait_portable))))]
fn pipe_room(_fd: BorrowedFd<'_>) -> Option<(usize, usize)> {
    None
}

/// Whether a write error means the sink can never take bytes again: the
/// reader is gone or the descriptor is bad.
pub(crate) fn is_permanent(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
        || matches!(
            e.raw_os_error(),
            Some(libc::EPIPE) | Some(libc::EBADF) | Some(libc::ECONNRESET) | Some(libc::ENOTCONN)
        )
}

/// Whether a file must be closed before another can be renamed over its
/// name (the crash-durable file's staging).
pub(crate) const RENAME_NEEDS_CLOSE: bool = false;
