//! The OTLP sink's connection on Windows: a non-blocking socket (its
//! connect included) that the writer drives itself, and `WSAPoll`, with
//! which the writer waits for room or bytes on such sockets.

#[cfg(feature = "otlp")]
use std::io::{self, Read, Write};
#[cfg(feature = "otlp")]
use std::net::{SocketAddr, TcpStream};
#[cfg(feature = "otlp")]
use std::time::Instant;

#[cfg(feature = "otlp")]
use crate::sys::net::{Sent, CONNECT_TIMEOUT};
use crate::sys::Waitable;

/// The OTLP sink's connection: non-blocking, connect included.
#[cfg(feature = "otlp")]
#[derive(Debug)]
pub(super) struct Exchange {
    pub(super) addr: SocketAddr,
    pub(super) state: State,
}

#[cfg(feature = "otlp")]
#[derive(Debug)]
pub(super) enum State {
    Idle,
    Connecting { conn: TcpStream, since: Instant },
    Connected(TcpStream),
}

#[cfg(feature = "otlp")]
impl Exchange {
    /// Starts a connect; never waits.
    pub(super) fn start(&mut self, now: Instant) -> io::Result<()> {
        use socket2::{Domain, Protocol, Socket, Type};
        let socket = Socket::new(
            Domain::for_address(self.addr),
            Type::STREAM,
            Some(Protocol::TCP),
        )?;
        socket.set_nonblocking(true)?;
        let _ = socket.set_tcp_nodelay(true);
        match socket.connect(&self.addr.into()) {
            Ok(()) => self.state = State::Connected(socket.into()),
            // WSAEWOULDBLOCK: the connect goes on; poll for room.
            Err(e)
                if e.kind() == io::ErrorKind::WouldBlock
                    || e.raw_os_error() == Some(WSAEINPROGRESS) =>
            {
                self.state = State::Connecting {
                    conn: socket.into(),
                    since: now,
                }
            }
            Err(e) => return Err(e),
        }
        Ok(())
    }

    fn fail(&mut self, e: io::Error) -> Sent {
        self.state = State::Idle;
        Sent::Failed(e)
    }

    pub(super) fn send(&mut self, buf: &[u8]) -> Sent {
        let now = Instant::now();
        loop {
            match &self.state {
                State::Idle => {
                    if let Err(e) = self.start(now) {
                        return self.fail(e);
                    }
                }
                State::Connecting { conn, since } => {
                    match poll_one(conn, POLL_OUT) {
                        Ok(Readiness::Pending)
                            if now.saturating_duration_since(*since) >= CONNECT_TIMEOUT =>
                        {
                            return self.fail(io::Error::new(
                                io::ErrorKind::TimedOut,
                                format!("connect timed out after {} s", CONNECT_TIMEOUT.as_secs()),
                            ))
                        }
                        Ok(Readiness::Pending) => return Sent::WouldBlock,
                        Ok(Readiness::Ready) => {}
                        Ok(Readiness::Failed) => {
                            let e = match conn.take_error() {
                                Ok(Some(e)) => e,
                                Ok(None) => io::ErrorKind::ConnectionRefused.into(),
                                Err(e) => e,
                            };
                            return self.fail(e);
                        }
                        Err(e) => return self.fail(e),
                    }
                    let State::Connecting { conn, .. } =
                        std::mem::replace(&mut self.state, State::Idle)
                    else {
                        unreachable!("nowait bug: connect state changed under us")
                    };
                    self.state = State::Connected(conn);
                }
                State::Connected(conn) => {
                    let mut conn = conn;
                    return match conn.write(buf) {
                        Ok(n) => Sent::Wrote(n),
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Sent::WouldBlock,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                        Err(e) => self.fail(e),
                    };
                }
            }
        }
    }

    pub(super) fn recv(&mut self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        let State::Connected(conn) = &self.state else {
            return Err(io::ErrorKind::NotConnected.into());
        };
        let mut conn = conn;
        loop {
            return match conn.read(buf) {
                Ok(n) => Ok(Some(n)),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.state = State::Idle;
                    Err(e)
                }
            };
        }
    }
}

#[cfg(feature = "otlp")]
use windows_sys::Win32::Networking::WinSock::{
    WSAPoll, POLLERR, POLLHUP, POLLNVAL, POLLRDNORM, POLLWRNORM, SOCKET_ERROR, WSAPOLLFD,
};

/// `WSAEINPROGRESS`: a connect still under way (as `WSAEWOULDBLOCK`).
#[cfg(feature = "otlp")]
const WSAEINPROGRESS: i32 = 10036;
#[cfg(feature = "otlp")]
const POLL_OUT: i16 = POLLWRNORM;

#[cfg(feature = "otlp")]
enum Readiness {
    Pending,
    Ready,
    /// An error or hang-up on the socket (a refused connect).
    Failed,
}

/// Whether `conn` is ready for `events` now (no wait).
#[cfg(feature = "otlp")]
fn poll_one(conn: &TcpStream, events: i16) -> io::Result<Readiness> {
    use std::os::windows::io::AsRawSocket;
    let mut fd = [WSAPOLLFD {
        fd: conn.as_raw_socket() as usize,
        events,
        revents: 0,
    }];
    // SAFETY: `fd` is one valid `WSAPOLLFD` that lives across the call,
    // and its count is 1; the socket is open (`conn` borrows it).
    let n = unsafe { WSAPoll(fd.as_mut_ptr(), 1, 0) };
    if n == SOCKET_ERROR {
        return Err(io::Error::last_os_error());
    }
    let r = fd[0].revents;
    Ok(if r & (POLLERR | POLLHUP | POLLNVAL) != 0 {
        Readiness::Failed
    } else if r & events != 0 {
        Readiness::Ready
    } else {
        Readiness::Pending
    })
}

/// Waits up to `timeout` (rounded up to a millisecond) for room in one of
/// `waits` or bytes in one of `reads` (an error or hang-up counts).
/// Returns whether one is ready, or the poll failed (the caller then
/// learns why from its next send or receive).
#[cfg(feature = "otlp")]
pub(crate) fn poll(
    waits: &[Waitable<'_>],
    reads: &[Waitable<'_>],
    timeout: std::time::Duration,
) -> bool {
    use std::os::windows::io::AsRawSocket;
    // Bounded: the writer has one OTLP sink per configured sink.
    let mut fds: Vec<WSAPOLLFD> = waits
        .iter()
        .map(|w| (w, POLLWRNORM))
        .chain(reads.iter().map(|w| (w, POLLRDNORM)))
        .map(|(w, events)| WSAPOLLFD {
            fd: w.0.as_raw_socket() as usize,
            events,
            revents: 0,
        })
        .collect();
    let ms = i32::try_from(timeout.as_micros().div_ceil(1000)).unwrap_or(i32::MAX);
    let Ok(count) = u32::try_from(fds.len()) else {
        return true;
    };
    // SAFETY: `fds` holds `count` valid `WSAPOLLFD`s and lives across the
    // call; each socket is open (its `Waitable` borrows it).
    let n = unsafe { WSAPoll(fds.as_mut_ptr(), count, ms) };
    n != 0
}

#[cfg(not(feature = "otlp"))]
pub(crate) fn poll(
    _waits: &[Waitable<'_>],
    _reads: &[Waitable<'_>],
    timeout: std::time::Duration,
) -> bool {
    // No sink gives a socket to poll without the OTLP sink.
    std::thread::sleep(timeout);
    false
}
