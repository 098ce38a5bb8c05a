//! The writer's doorbell on Linux: an eventfd it polls beside its sinks.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use rustix::event::{eventfd, EventfdFlags};

/// Wakes the writer out of its poll; rung by flush, shutdown, reopen and
/// producers blocked for room (never by a plain push).
///
/// A forked child shares the kernel object with its parent; a ring one of
/// them swallows costs the other at most one poll interval, because every
/// request is state the writer re-reads on each round, not a message.
#[derive(Debug)]
pub(crate) struct Doorbell {
    fd: OwnedFd,
}

impl Doorbell {
    pub(crate) fn new() -> io::Result<Doorbell> {
        let fd = eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)?;
        Ok(Doorbell { fd })
    }

    /// Wakes the writer (one `write(2)`; never blocks: a full counter is
    /// `EAGAIN`, and a ring is pending then anyway).
    pub(crate) fn ring(&self) {
        let _ = rustix::io::write(&self.fd, &1u64.to_ne_bytes());
    }

    /// Clears pending rings (writer side).
    pub(crate) fn clear(&self) {
        let mut buf = [0u8; 8];
        let _ = rustix::io::read(&self.fd, &mut buf);
    }

    /// The descriptor to poll for reading.
    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}
