//! The writer's doorbell where there is no eventfd (macOS, the BSDs, and
//! Linux's portable backend): a non-blocking self-pipe. Ringing writes one
//! byte; a full pipe (`EAGAIN`) means rings are pending already, so a ring
//! never blocks. Clearing reads until the pipe is empty.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::fs::{fcntl_getfl, fcntl_setfl, OFlags};
use rustix::io::{fcntl_getfd, fcntl_setfd, FdFlags};

/// Wakes the writer out of its poll; rung by flush, shutdown, reopen and
/// producers blocked for room (never by a plain push).
///
/// A forked child shares the pipe with its parent; a ring one of them
/// swallows costs the other at most one poll interval, because every
/// request is state the writer re-reads on each round, not a message.
#[derive(Debug)]
pub(crate) struct Doorbell {
    read: OwnedFd,
    write: OwnedFd,
}

fn nonblocking_cloexec(fd: &OwnedFd) -> io::Result<()> {
    // `pipe2` is not on macOS: set the flags after `pipe`. Another thread's
    // fork+exec between the two calls could inherit the descriptors; they
    // are a doorbell, which the exec'd program ignores.
    fcntl_setfd(fd, fcntl_getfd(fd)? | FdFlags::CLOEXEC)?;
    fcntl_setfl(fd, fcntl_getfl(fd)? | OFlags::NONBLOCK)?;
    Ok(())
}

impl Doorbell {
    pub(crate) fn new() -> io::Result<Doorbell> {
        let (read, write) = rustix::pipe::pipe()?;
        nonblocking_cloexec(&read)?;
        nonblocking_cloexec(&write)?;
        Ok(Doorbell { read, write })
    }

    /// Wakes the writer (one `write(2)` of one byte; never blocks).
    pub(crate) fn ring(&self) {
        let _ = rustix::io::write(&self.write, &[1u8]);
    }

    /// Clears pending rings (writer side).
    pub(crate) fn clear(&self) {
        let mut buf = [0u8; 64];
        // Bounded: producers ringing without end cannot keep us here.
        for _ in 0..16 {
            match rustix::io::read(&self.read, &mut buf) {
                Ok(n) if n == buf.len() => continue,
                Err(rustix::io::Errno::INTR) => continue,
                _ => return,
            }
        }
    }

    /// The descriptor to poll for reading.
    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.read.as_fd()
    }
}
