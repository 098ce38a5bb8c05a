//! Sockets as sinks: TCP and Unix stream connections that reconnect, and
//! Unix datagram sockets (syslog's `/dev/log`).
//!
//! Nothing here ever waits:
//!
//! 1. A connection is made on the first write after the sink was built or
//!    the last connection was lost: a non-blocking `socket` and `connect`,
//!    which for TCP usually answers `EINPROGRESS`. The write then reports
//!    "would block", so the writer thread polls the socket for `POLLOUT`
//!    (which is how the kernel reports a finished connect) along with its
//!    other descriptors, and the next write reads `SO_ERROR` to learn how
//!    the connect ended. A connect still pending after [`CONNECT_TIMEOUT`]
//!    is abandoned as failed.
//! 2. Before each write to a connected stream, whatever the receiver sent
//!    is read and thrown away with `MSG_DONTWAIT`; an end of stream there
//!    means the receiver closed the connection (or died): the connection is
//!    dropped and the write fails, before any record goes into a dead
//!    socket.
//! 3. Writes use `MSG_DONTWAIT` (and `MSG_NOSIGNAL` where it exists; on
//!    macOS the socket is made with `SO_NOSIGPIPE` instead): a full socket buffer is
//!    "would block", a broken connection (`EPIPE`, `ECONNRESET`) drops the
//!    connection and fails the write. Every failure is recoverable: the
//!    sink retries with back-off, and each retry starts with a new connect.
//!
//! Addresses are resolved when the `Sink` is made, never
//! here, so the writer thread makes no DNS lookup.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::time::Instant;

use rustix::fs::{fcntl_getfl, fcntl_setfl, OFlags};
use rustix::io::Errno;
use rustix::io::{fcntl_getfd, fcntl_setfd, FdFlags};
use rustix::net::{AddressFamily, RecvFlags, SendFlags, SocketAddrUnix, SocketType};

use crate::sys::net::{Peer, Sent, CONNECT_TIMEOUT};

/// The flags of every send: never wait, and never raise SIGPIPE where the
/// flag exists (Rust programs ignore SIGPIPE anyway unless they changed it;
/// on Apple systems `SO_NOSIGPIPE` on the socket does the same).
#[cfg(any(
    target_os = "linux",
    target_os = "android",
    target_os = "freebsd",
    target_os = "netbsd",
    target_os = "openbsd",
    target_os = "dragonfly"
))]
pub(crate) const SEND: SendFlags = SendFlags::DONTWAIT.union(SendFlags::NOSIGNAL);
#[cfg(not(any(
    target_os = "linux",
    target_os = "android",
    target_os = "freebsd",
    target_os = "netbsd",
    target_os = "openbsd",
    target_os = "dragonfly"
)))]
pub(crate) const SEND: SendFlags = SendFlags::DONTWAIT;

/// A socket that never blocks, closed on exec. `socket` and then `fcntl`
/// rather than `SOCK_NONBLOCK | SOCK_CLOEXEC`, which macOS lacks: one
/// path for every Unix, so the one Linux runs is the one macOS runs.
fn socket(family: AddressFamily, kind: SocketType) -> rustix::io::Result<OwnedFd> {
    let fd = rustix::net::socket(family, kind, None)?;
    fcntl_setfd(&fd, fcntl_getfd(&fd)? | FdFlags::CLOEXEC)?;
    fcntl_setfl(&fd, fcntl_getfl(&fd)? | OFlags::NONBLOCK)?;
    #[cfg(any(target_os = "macos", target_os = "ios"))]
    rustix::net::sockopt::set_socket_nosigpipe(&fd, true)?;
    Ok(fd)
}

#[derive(Debug)]
enum State {
    Idle,
    Connecting { fd: OwnedFd, since: Instant },
    Connected(OwnedFd),
}

/// A stream connection (TCP or Unix) that reconnects.
#[derive(Debug)]
pub(crate) struct Stream {
    peer: Peer,
    state: State,
}

fn zero_poll(fd: BorrowedFd<'_>, flags: rustix::event::PollFlags) -> rustix::io::Result<bool> {
    let mut pfd = [rustix::event::PollFd::from_borrowed_fd(fd, flags)];
    let zero = rustix::time::Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    Ok(rustix::event::poll(&mut pfd, Some(&zero))? > 0)
}

fn unix_addr(path: &Path) -> io::Result<SocketAddrUnix> {
    SocketAddrUnix::new(path).map_err(|e| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("not a usable socket path ({e})"),
        )
    })
}

impl Stream {
    /// A stream sink, not yet connected.
    pub(crate) fn new(peer: Peer) -> Stream {
        Stream {
            peer,
            state: State::Idle,
        }
    }

    /// A stream sink whose connect has started (without waiting), so that
    /// the receiver sees the connection before the first record. A connect
    /// that fails at once is tried again on the first write, which reports
    /// the failure.
    ///
    /// # Errors
    ///
    /// None on Unix (the signature is the one every system shares).
    pub(crate) fn connecting(peer: Peer) -> io::Result<Stream> {
        let mut s = Stream::new(peer);
        let _ = s.start(Instant::now());
        Ok(s)
    }

    /// A stream for request/response exchanges ([`Stream::send`],
    /// [`Stream::recv`]), its connect started as [`Stream::connecting`]'s.
    ///
    /// # Errors
    ///
    /// None on Unix (on Windows: not supported).
    #[cfg_attr(not(feature = "otlp"), allow(dead_code))]
    pub(crate) fn exchanging(peer: Peer) -> io::Result<Stream> {
        Stream::connecting(peer)
    }

    /// Whether a connection is up (for tests and stats).
    #[cfg(all(test, not(miri)))]
    pub(crate) fn connected(&self) -> bool {
        matches!(self.state, State::Connected(_))
    }

    /// The socket to poll for `POLLOUT`: the connection being made or the
    /// one that is full.
    pub(crate) fn poll_fd(&self) -> Option<BorrowedFd<'_>> {
        match &self.state {
            State::Idle => None,
            State::Connecting { fd, .. } | State::Connected(fd) => Some(fd.as_fd()),
        }
    }

    /// Bytes held beyond the kernel's buffer: none on Unix.
    pub(crate) fn abandon_held(&self) -> usize {
        0
    }

    /// Nothing to wake on Unix: the writer polls the socket.
    pub(crate) fn set_waker(&self, _waker: &crate::sys::relay::Waker) {}

    /// Starts a connect; never waits.
    fn start(&mut self, now: Instant) -> Result<(), io::Error> {
        let (fd, result) = match &self.peer {
            Peer::Tcp(addr) => {
                let family = if addr.is_ipv4() {
                    AddressFamily::INET
                } else {
                    AddressFamily::INET6
                };
                let fd = socket(family, SocketType::STREAM)?;
                // The writer sends whole batches: Nagle's algorithm would
                // only hold a request's last segment back until the peer's
                // delayed ACK (tens of ms per OTLP request, TLS records
                // most of all). As on Windows.
                let _ = rustix::net::sockopt::set_tcp_nodelay(&fd, true);
                let r = rustix::net::connect(&fd, addr);
                (fd, r)
            }
            Peer::Unix(path) => {
                let addr = unix_addr(path)?;
                let fd = socket(AddressFamily::UNIX, SocketType::STREAM)?;
                let r = rustix::net::connect(&fd, &addr);
                (fd, r)
            }
        };
        match result {
            Ok(()) => self.state = State::Connected(fd),
            // EAGAIN: a Unix listener's backlog is full; like EINPROGRESS,
            // wait for POLLOUT.
            Err(Errno::INPROGRESS | Errno::AGAIN | Errno::INTR) => {
                self.state = State::Connecting { fd, since: now }
            }
            Err(e) => return Err(e.into()),
        }
        Ok(())
    }

    /// Drops the connection and returns the failure to report.
    fn fail(&mut self, e: io::Error) -> Sent {
        self.state = State::Idle;
        Sent::Failed(e)
    }

    /// One write attempt: connects first if needed.
    pub(crate) fn write(&mut self, buf: &[u8]) -> Sent {
        self.send_with(buf, true)
    }

    /// One write attempt that leaves what the receiver sent unread, for a
    /// caller that reads the answers itself ([`Stream::recv`]): an HTTP
    /// exchange.
    #[cfg_attr(not(feature = "otlp"), allow(dead_code))]
    pub(crate) fn send(&mut self, buf: &[u8]) -> Sent {
        self.send_with(buf, false)
    }

    /// Reads what the receiver sent, without waiting: `Ok(Some(0))` at the
    /// end of the stream, `Ok(None)` if nothing came yet. Not connected is
    /// an error.
    #[cfg_attr(not(feature = "otlp"), allow(dead_code))]
    pub(crate) fn recv(&mut self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        let State::Connected(fd) = &self.state else {
            return Err(io::ErrorKind::NotConnected.into());
        };
        loop {
            return match rustix::net::recv(fd, &mut *buf, RecvFlags::DONTWAIT) {
                Ok((n, _)) => Ok(Some(n)),
                Err(Errno::AGAIN) => Ok(None),
                Err(Errno::INTR) => continue,
                Err(e) => {
                    self.state = State::Idle;
                    Err(e.into())
                }
            };
        }
    }

    /// The connection to poll for `POLLIN` while an answer is awaited.
    #[cfg_attr(not(feature = "otlp"), allow(dead_code))]
    pub(crate) fn read_fd(&self) -> Option<BorrowedFd<'_>> {
        match &self.state {
            State::Connected(fd) => Some(fd.as_fd()),
            _ => None,
        }
    }

    /// Drops the connection (the next write makes a new one).
    #[cfg_attr(not(feature = "otlp"), allow(dead_code))]
    pub(crate) fn disconnect(&mut self) {
        self.state = State::Idle;
    }

    fn send_with(&mut self, buf: &[u8], drain: bool) -> Sent {
        let now = Instant::now();
        loop {
            match &self.state {
                State::Idle => {
                    if let Err(e) = self.start(now) {
                        return self.fail(e);
                    }
                }
                State::Connecting { fd, since } => {
                    match zero_poll(fd.as_fd(), rustix::event::PollFlags::OUT) {
                        Ok(false) if now.saturating_duration_since(*since) >= CONNECT_TIMEOUT => {
                            return self.fail(io::Error::new(
                                io::ErrorKind::TimedOut,
                                format!("connect timed out after {} s", CONNECT_TIMEOUT.as_secs()),
                            ))
                        }
                        Ok(false) => return Sent::WouldBlock,
                        Ok(true) => {}
                        Err(e) => return self.fail(e.into()),
                    }
                    match rustix::net::sockopt::socket_error(fd) {
                        Ok(Ok(())) => {
                            let State::Connecting { fd, .. } =
                                std::mem::replace(&mut self.state, State::Idle)
                            else {
                                unreachable!("nowait bug: connect state changed under us")
                            };
                            self.state = State::Connected(fd);
                        }
                        Ok(Err(e)) => return self.fail(e.into()),
                        Err(e) => return self.fail(e.into()),
                    }
                }
                State::Connected(fd) => {
                    if drain {
                        if let Err(e) = drain_incoming(fd.as_fd()) {
                            return self.fail(e);
                        }
                    }
                    return match rustix::net::send(fd, buf, SEND) {
                        Ok(n) => Sent::Wrote(n),
                        Err(Errno::AGAIN) => Sent::WouldBlock,
                        Err(Errno::INTR) => continue,
                        Err(e) => self.fail(e.into()),
                    };
                }
            }
        }
    }
}

/// Reads and discards what the receiver sent; an end of stream or an error
/// means the connection is gone.
fn drain_incoming(fd: BorrowedFd<'_>) -> io::Result<()> {
    let mut scrap = [0u8; 512];
    // Bounded: a receiver that talks without end cannot keep us here.
    for _ in 0..16 {
        match rustix::net::recv(fd, &mut scrap[..], RecvFlags::DONTWAIT) {
            Ok((_, 0)) => {
                return Err(io::Error::new(
                    io::ErrorKind::ConnectionReset,
                    "connection closed by the receiver",
                ))
            }
            Ok(_) | Err(Errno::INTR) => continue,
            Err(Errno::AGAIN) => return Ok(()),
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// A Unix datagram socket, one record per datagram (syslog's `/dev/log`).
#[derive(Debug)]
pub(crate) struct Datagram {
    path: PathBuf,
    fd: Option<OwnedFd>,
}

impl Datagram {
    /// A datagram sink at `path`, connected at once if possible (a Unix
    /// datagram connect never waits).
    ///
    /// # Errors
    ///
    /// The path does not exist, or is not a datagram socket: nobody will
    /// ever listen there. Other failures (`ECONNREFUSED`: the receiver is
    /// down) are left to the writes, which retry.
    pub(crate) fn open(path: &Path) -> io::Result<Datagram> {
        let mut d = Datagram {
            path: path.to_owned(),
            fd: None,
        };
        match d.connect() {
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ENOENT | libc::EPROTOTYPE | libc::ENOTDIR)
                ) || e.kind() == io::ErrorKind::InvalidInput =>
            {
                Err(e)
            }
            _ => Ok(d),
        }
    }

    /// A datagram sink at `path`, not yet connected (a forked child).
    pub(crate) fn unconnected(path: &Path) -> Datagram {
        Datagram {
            path: path.to_owned(),
            fd: None,
        }
    }

    fn connect(&mut self) -> io::Result<()> {
        let addr = unix_addr(&self.path)?;
        let fd = socket(AddressFamily::UNIX, SocketType::DGRAM)?;
        rustix::net::connect(&fd, &addr)?;
        self.fd = Some(fd);
        Ok(())
    }

    /// The socket, to poll for `POLLOUT` while the receiver's queue is full.
    pub(crate) fn poll_fd(&self) -> Option<BorrowedFd<'_>> {
        self.fd.as_ref().map(AsFd::as_fd)
    }

    /// Sends `buf` as one datagram.
    pub(crate) fn write(&mut self, buf: &[u8]) -> Sent {
        if self.fd.is_none() {
            if let Err(e) = self.connect() {
                return Sent::Failed(e);
            }
        }
        let Some(fd) = &self.fd else {
            return Sent::Failed(io::Error::other("nowait bug: datagram socket missing"));
        };
        loop {
            return match rustix::net::send(fd, buf, SEND) {
                Ok(n) => Sent::Wrote(n),
                Err(Errno::AGAIN) => Sent::WouldBlock,
                Err(Errno::INTR) => continue,
                Err(e @ Errno::MSGSIZE) => Sent::Rejected(e.into()),
                Err(e) => {
                    // The receiver went away (ECONNREFUSED once its socket
                    // is gone): connect again on the next try.
                    self.fd = None;
                    Sent::Failed(e.into())
                }
            };
        }
    }
}

#[cfg(all(test, not(miri)))]
mod tests {
    use super::*;
    use std::io::Read;
    use std::net::TcpListener;
    use std::os::unix::net::{UnixDatagram, UnixListener};
    use std::time::Duration;

    /// Writes until the bytes are all in (waiting for the connect with a
    /// real poll, as the writer thread does).
    fn write_all(s: &mut Stream, mut buf: &[u8]) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while !buf.is_empty() {
            match s.write(buf) {
                Sent::Wrote(n) => buf = &buf[n..],
                Sent::WouldBlock => {
                    assert!(Instant::now() < deadline, "never connected");
                    std::thread::sleep(Duration::from_millis(1));
                }
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn tcp_connects_without_waiting_and_reconnects_after_the_peer_closes() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let mut s = Stream::new(Peer::Tcp(addr));
        write_all(&mut s, b"one\n");
        let (mut conn, _) = listener.accept().unwrap();
        let mut got = [0u8; 4];
        conn.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"one\n");
        // The receiver closes: the next write notices before sending and
        // fails (recoverably), the one after reconnects.
        drop(conn);
        std::thread::sleep(Duration::from_millis(20));
        match s.write(b"two\n") {
            Sent::Failed(e) => assert_eq!(e.kind(), io::ErrorKind::ConnectionReset, "{e}"),
            other => panic!("expected a failure, got {other:?}"),
        }
        assert!(!s.connected());
        write_all(&mut s, b"two\n");
        let (mut conn, _) = listener.accept().unwrap();
        let mut got = [0u8; 4];
        conn.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"two\n");
    }

    #[test]
    fn tcp_streams_send_without_the_nagle_delay() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut s = Stream::new(Peer::Tcp(listener.local_addr().unwrap()));
        write_all(&mut s, b"x");
        let fd = s.poll_fd().expect("a connection");
        assert!(rustix::net::sockopt::tcp_nodelay(fd).unwrap());
    }

    #[test]
    fn tcp_refused_is_a_failure_not_a_wait() {
        let addr = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        // Nobody listens any more.
        let mut s = Stream::new(Peer::Tcp(addr));
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let t = Instant::now();
            let r = s.write(b"x\n");
            assert!(t.elapsed() < Duration::from_millis(50), "a write waited");
            match r {
                Sent::Failed(e) => {
                    assert_eq!(e.raw_os_error(), Some(libc::ECONNREFUSED), "{e}");
                    break;
                }
                Sent::WouldBlock => assert!(Instant::now() < deadline),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn unix_stream_and_datagram() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s");
        let listener = UnixListener::bind(&path).unwrap();
        let mut s = Stream::new(Peer::Unix(path.clone()));
        write_all(&mut s, b"hello\n");
        let (mut conn, _) = listener.accept().unwrap();
        let mut got = [0u8; 6];
        conn.read_exact(&mut got).unwrap();
        assert_eq!(&got, b"hello\n");

        let dpath = dir.path().join("d");
        assert_eq!(
            Datagram::open(&dir.path().join("absent"))
                .unwrap_err()
                .raw_os_error(),
            Some(libc::ENOENT)
        );
        let rx = UnixDatagram::bind(&dpath).unwrap();
        let mut d = Datagram::open(&dpath).unwrap();
        assert!(matches!(d.write(b"<14>1 a"), Sent::Wrote(7)));
        let mut got = [0u8; 64];
        assert_eq!(rx.recv(&mut got).unwrap(), 7);
        // Too large for any datagram: rejected, not retried.
        assert!(matches!(d.write(&vec![b'x'; 8 << 20]), Sent::Rejected(_)));
        // The receiver goes away and comes back: a failure, then a reconnect.
        drop(rx);
        std::fs::remove_file(&dpath).unwrap();
        assert!(matches!(d.write(b"lost"), Sent::Failed(_)));
        let rx = UnixDatagram::bind(&dpath).unwrap();
        assert!(matches!(d.write(b"back"), Sent::Wrote(4)));
        assert_eq!(rx.recv(&mut got).unwrap(), 4);
        assert_eq!(&got[..4], b"back");
    }
}
