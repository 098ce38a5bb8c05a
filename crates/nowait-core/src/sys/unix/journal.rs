//! journald's native socket (Linux only): one entry per datagram, and an
//! entry too large for a datagram through a sealed memfd.
//!
//! 1. Each entry goes as one datagram on the connected, non-blocking Unix
//!    datagram socket ([`Datagram`]): a full receiver queue
//!    (`net.unix.max_dgram_qlen`, as small as 10) or send buffer is
//!    "would block", which the writer waits out by polling the socket for
//!    `POLLOUT` within the sink's bounds (buffer, then shedding, counted).
//! 2. An entry larger than the socket's send buffer (`EMSGSIZE`; 208 KiB
//!    with the kernel's default `net.core.wmem_default`) is written into a
//!    memfd, sealed against any change (`F_SEAL_SHRINK | F_SEAL_GROW |
//!    F_SEAL_WRITE | F_SEAL_SEAL`: journald reads only sealed memfds), and
//!    the descriptor alone is sent with `SCM_RIGHTS` on the same socket,
//!    so it keeps its place among the datagrams. A memfd that cannot be
//!    made or filled (no memory, no memfd support) drops that entry alone,
//!    counted as rejected; "would block" on its send makes a new memfd on
//!    the retry (a rare path: the entry is hundreds of KiB).

use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::Path;

use rustix::fs::{MemfdFlags, SealFlags};
use rustix::io::Errno;
use rustix::net::{SendAncillaryBuffer, SendAncillaryMessage};

use super::net::{Datagram, SEND};
use crate::sys::Sent;

/// A journald socket.
#[derive(Debug)]
pub(crate) struct Journal {
    socket: Datagram,
    /// Entries sent through a memfd (tests).
    #[cfg(test)]
    pub(crate) by_memfd: u64,
}

impl Journal {
    /// journald's socket at `path`, connected at once.
    ///
    /// # Errors
    ///
    /// The path does not exist or is not a datagram socket (no journald
    /// there).
    pub(crate) fn open(path: &Path) -> io::Result<Journal> {
        Ok(Journal::from(Datagram::open(path)?))
    }

    /// Not yet connected (a forked child).
    pub(crate) fn unconnected(path: &Path) -> Journal {
        Journal::from(Datagram::unconnected(path))
    }

    fn from(socket: Datagram) -> Journal {
        Journal {
            socket,
            #[cfg(test)]
            by_memfd: 0,
        }
    }

    /// The socket, to poll for `POLLOUT` while journald's queue is full.
    pub(crate) fn poll_fd(&self) -> Option<BorrowedFd<'_>> {
        self.socket.poll_fd()
    }

    /// Sends one entry.
    pub(crate) fn write(&mut self, entry: &[u8]) -> Sent {
        match self.socket.write(entry) {
            Sent::Rejected(e) if e.raw_os_error() == Some(libc::EMSGSIZE) => {}
            other => return other,
        }
        let memfd = match sealed_memfd(entry) {
            Ok(fd) => fd,
            Err(e) => {
                return Sent::Rejected(io::Error::new(
                    e.kind(),
                    format!("an entry of {} bytes needs a memfd: {e}", entry.len()),
                ))
            }
        };
        let Some(socket) = self.socket.poll_fd() else {
            return Sent::Failed(io::Error::other("nowait bug: journal socket missing"));
        };
        match send_fd(socket, memfd.as_fd()) {
            Ok(()) => {
                #[cfg(test)]
                {
                    self.by_memfd += 1;
                }
                Sent::Wrote(entry.len())
            }
            Err(Errno::AGAIN) => Sent::WouldBlock,
            Err(e) => Sent::Failed(e.into()),
        }
    }
}

/// A memfd holding `bytes`, sealed so that nobody can change it.
fn sealed_memfd(bytes: &[u8]) -> io::Result<OwnedFd> {
    let fd = rustix::fs::memfd_create(
        "nowait-journal-entry",
        MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING,
    )?;
    let mut rest = bytes;
    while !rest.is_empty() {
        match rustix::io::write(&fd, rest) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => rest = &rest[n..],
            Err(Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    rustix::fs::fcntl_add_seals(
        &fd,
        SealFlags::SHRINK | SealFlags::GROW | SealFlags::WRITE | SealFlags::SEAL,
    )?;
    Ok(fd)
}

/// Sends `fd` alone (no data) with `SCM_RIGHTS`, without waiting.
fn send_fd(socket: BorrowedFd<'_>, fd: BorrowedFd<'_>) -> rustix::io::Result<()> {
    let fds = [fd];
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    if !control.push(SendAncillaryMessage::ScmRights(&fds)) {
        return Err(Errno::NOBUFS);
    }
    loop {
        match rustix::net::sendmsg(socket, &[], &mut control, SEND) {
            Err(Errno::INTR) => continue,
            r => return r.map(drop),
        }
    }
}

#[cfg(all(test, not(miri)))]
mod tests {
    use super::*;
    use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags};
    use std::io::IoSliceMut;
    use std::os::unix::net::UnixDatagram;

    /// Receives one datagram, and the descriptor it carries if any.
    fn receive(rx: &UnixDatagram) -> (Vec<u8>, Option<OwnedFd>) {
        let mut data = vec![0u8; 1 << 16];
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
        let mut control = RecvAncillaryBuffer::new(&mut space);
        let r = rustix::net::recvmsg(
            rx,
            &mut [IoSliceMut::new(&mut data)],
            &mut control,
            RecvFlags::empty(),
        )
        .unwrap();
        data.truncate(r.bytes);
        let mut fd = None;
        for msg in control.drain() {
            if let RecvAncillaryMessage::ScmRights(fds) = msg {
                fd = fds.into_iter().next();
            }
        }
        (data, fd)
    }

    #[test]
    fn small_entries_are_datagrams_large_ones_sealed_memfds() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("socket");
        let rx = UnixDatagram::bind(&path).unwrap();
        let mut j = Journal::open(&path).unwrap();
        assert!(matches!(j.write(b"MESSAGE=hi\n"), Sent::Wrote(11)));
        let (data, fd) = receive(&rx);
        assert_eq!((data, fd.is_none()), (b"MESSAGE=hi\n".to_vec(), true));
        assert_eq!(j.by_memfd, 0);

        // Larger than any send buffer the kernel gives by default.
        let sndbuf = rustix::net::sockopt::socket_send_buffer_size(j.poll_fd().unwrap()).unwrap();
        let mut big = b"MESSAGE=".to_vec();
        big.extend((0..sndbuf + 4096).map(|i| b'a' + (i % 26) as u8));
        big.push(b'\n');
        assert!(matches!(j.write(&big), Sent::Wrote(n) if n == big.len()));
        assert_eq!(j.by_memfd, 1);
        let (data, fd) = receive(&rx);
        assert!(data.is_empty());
        let fd = fd.expect("a descriptor");
        let seals = rustix::fs::fcntl_get_seals(&fd).unwrap();
        assert!(seals
            .contains(SealFlags::SHRINK | SealFlags::GROW | SealFlags::WRITE | SealFlags::SEAL));
        let mut file = std::fs::File::from(fd);
        let mut got = Vec::new();
        std::io::Seek::rewind(&mut file).unwrap();
        std::io::Read::read_to_end(&mut file, &mut got).unwrap();
        assert!(
            got == big,
            "the memfd holds {} bytes, not the entry",
            got.len()
        );
        // Sealed: nobody can change what journald will read.
        assert!(std::io::Write::write_all(&mut file, b"x").is_err());
    }

    #[test]
    fn a_full_queue_would_block_and_never_waits() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("socket");
        let _rx = UnixDatagram::bind(&path).unwrap();
        let mut j = Journal::open(&path).unwrap();
        let start = std::time::Instant::now();
        let mut sent = 0;
        loop {
            match j.write(b"MESSAGE=x\n") {
                Sent::Wrote(_) => sent += 1,
                Sent::WouldBlock => break,
                other => panic!("{other:?}"),
            }
            assert!(sent < 1_000_000);
        }
        assert!(start.elapsed() < std::time::Duration::from_secs(1));
        assert!(sent >= 1, "{sent}");
    }
}
