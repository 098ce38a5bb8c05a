//! Sockets on Windows.
//!
//! * TCP sinks connect and write with blocking calls on a relay thread of
//!   their own ([`relay`](crate::sys::relay)), so a receiver that is slow,
//!   down or unreachable holds that thread only: the writer thread hands
//!   bytes over and never waits. A failure drops the connection; the
//!   sink's retry reconnects.
//! * The OTLP sink's request/response exchanges use a non-blocking socket
//!   (its connect included) that the writer drives itself, as on Unix, and
//!   polls with `WSAPoll` ([`poll`](super::exchange::poll)).
//! * Unix sockets (`Sink::unix`, syslog's `/dev/log`) are not supported on
//!   Windows: building such a sink fails with a clear error.

use std::io::{self, Write};
use std::net::{SocketAddr, TcpStream};
#[cfg(feature = "otlp")]
use std::os::windows::io::AsSocket;
use std::path::{Path, PathBuf};
#[cfg(feature = "otlp")]
use std::time::Instant;

#[cfg(feature = "otlp")]
use super::exchange::{Exchange, State};
use crate::sys::relay::{Blocking, Relay, Relayed};
use crate::sys::Waitable;

use crate::sys::net::{Peer, Sent, CONNECT_TIMEOUT};

fn unsupported() -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        "Unix sockets are not supported on Windows",
    )
}

/// The relay thread's end: a connection made on the first write after a
/// failure.
struct Tcp {
    addr: SocketAddr,
    conn: Option<TcpStream>,
}

impl Tcp {
    fn connect(&mut self) -> io::Result<()> {
        let conn = TcpStream::connect_timeout(&self.addr, CONNECT_TIMEOUT)?;
        let _ = conn.set_nodelay(true);
        self.conn = Some(conn);
        Ok(())
    }
}

impl Blocking for Tcp {
    /// Connects at once, so that the receiver sees the connection before
    /// the first record (as on Unix); a failure is retried by the first
    /// write, which reports it.
    fn start(&mut self) {
        let _ = self.connect();
    }

    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.conn.is_none() {
            self.connect()?;
        }
        let Some(conn) = self.conn.as_mut() else {
            return Err(io::Error::other("nowait bug: connection missing"));
        };
        conn.write(buf).inspect_err(|_| self.conn = None)
    }
}

/// A stream connection that reconnects: written by a relay thread, or,
/// for request/response exchanges, non-blocking and driven by the writer.
#[derive(Debug)]
pub(crate) struct Stream {
    mode: Mode,
}

#[derive(Debug)]
enum Mode {
    Relayed(Result<Relay, String>),
    #[cfg(feature = "otlp")]
    Exchange(Exchange),
}

impl Stream {
    /// A stream sink; its relay thread connects on the first write.
    /// Its writes fail if the sink cannot exist here (see
    /// [`Stream::connecting`]).
    pub(crate) fn new(peer: Peer) -> Stream {
        let relay = match peer {
            Peer::Tcp(addr) => Relay::spawn("nowait-tcp", Box::new(Tcp { addr, conn: None }))
                .map_err(|e| format!("cannot spawn the sink's thread: {e}")),
            Peer::Unix(path) => Err(format!("{} ({})", unsupported(), path.display())),
        };
        Stream {
            mode: Mode::Relayed(relay),
        }
    }

    /// A stream sink whose relay thread connects when the first bytes
    /// come.
    ///
    /// # Errors
    ///
    /// A Unix socket (not supported here), or no thread can be spawned.
    pub(crate) fn connecting(peer: Peer) -> io::Result<Stream> {
        let s = Stream::new(peer);
        match &s.mode {
            Mode::Relayed(Err(why)) => Err(io::Error::new(io::ErrorKind::Unsupported, why.clone())),
            _ => Ok(s),
        }
    }

    /// A stream for request/response exchanges ([`Stream::send`],
    /// [`Stream::recv`]), its connect started without waiting.
    ///
    /// # Errors
    ///
    /// A Unix socket (not supported here).
    #[cfg(feature = "otlp")]
    pub(crate) fn exchanging(peer: Peer) -> io::Result<Stream> {
        let Peer::Tcp(addr) = peer else {
            return Err(unsupported());
        };
        let mut exchange = Exchange {
            addr,
            state: State::Idle,
        };
        // A connect that fails at once is tried again by the first send,
        // which reports the failure.
        let _ = exchange.start(Instant::now());
        Ok(Stream {
            mode: Mode::Exchange(exchange),
        })
    }

    /// A shutdown gives up: see `Relay::abandon`.
    pub(crate) fn abandon_held(&self) -> usize {
        match &self.mode {
            Mode::Relayed(relay) => relay.as_ref().map_or(0, Relay::abandon),
            #[cfg(feature = "otlp")]
            Mode::Exchange(_) => 0,
        }
    }

    /// Rings the writer's doorbell after each batch (a relayed stream).
    pub(crate) fn set_waker(&self, waker: &crate::sys::relay::Waker) {
        if let Mode::Relayed(Ok(relay)) = &self.mode {
            relay.set_waker(std::sync::Arc::clone(waker));
        }
    }

    /// The socket to poll for room: an exchange's connection being made
    /// or full. A relayed stream has none (its thread wakes the writer).
    pub(crate) fn poll_fd(&self) -> Option<Waitable<'_>> {
        match &self.mode {
            Mode::Relayed(_) => None,
            #[cfg(feature = "otlp")]
            Mode::Exchange(x) => match &x.state {
                State::Idle => None,
                State::Connecting { conn, .. } | State::Connected(conn) => {
                    Some(Waitable::socket(conn.as_socket()))
                }
            },
        }
    }

    /// One attempt to send a request's bytes; never waits.
    #[cfg(feature = "otlp")]
    pub(crate) fn send(&mut self, buf: &[u8]) -> Sent {
        match &mut self.mode {
            Mode::Exchange(x) => x.send(buf),
            Mode::Relayed(_) => Sent::Failed(not_an_exchange()),
        }
    }

    /// Reads what the receiver sent, without waiting: `Ok(Some(0))` at the
    /// end of the stream, `Ok(None)` if nothing came yet. Not connected is
    /// an error.
    #[cfg(feature = "otlp")]
    pub(crate) fn recv(&mut self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        match &mut self.mode {
            Mode::Exchange(x) => x.recv(buf),
            Mode::Relayed(_) => Err(not_an_exchange()),
        }
    }

    /// The connection to poll for bytes while an answer is awaited.
    #[cfg(feature = "otlp")]
    pub(crate) fn read_fd(&self) -> Option<Waitable<'_>> {
        match &self.mode {
            Mode::Exchange(Exchange {
                state: State::Connected(conn),
                ..
            }) => Some(Waitable::socket(conn.as_socket())),
            _ => None,
        }
    }

    /// Drops an exchange's connection (the next send makes a new one).
    #[cfg(feature = "otlp")]
    pub(crate) fn disconnect(&mut self) {
        if let Mode::Exchange(x) = &mut self.mode {
            x.state = State::Idle;
        }
    }

    /// One write attempt; never waits.
    pub(crate) fn write(&mut self, buf: &[u8]) -> Sent {
        match &self.mode {
            Mode::Relayed(Ok(relay)) => match relay.write(buf) {
                Relayed::Wrote(n) => Sent::Wrote(n),
                Relayed::Pending => Sent::WouldBlock,
                Relayed::Failed(e) => Sent::Failed(e),
            },
            Mode::Relayed(Err(why)) => Sent::Failed(io::Error::other(why.clone())),
            #[cfg(feature = "otlp")]
            Mode::Exchange(_) => Sent::Failed(not_an_exchange()),
        }
    }
}

#[cfg(feature = "otlp")]
fn not_an_exchange() -> io::Error {
    io::Error::other("nowait bug: a relayed stream used for an exchange, or the reverse")
}

/// A Unix datagram socket: not on Windows.
#[derive(Debug)]
pub(crate) struct Datagram {
    _path: PathBuf,
}

impl Datagram {
    /// Always fails on Windows.
    pub(crate) fn open(_path: &Path) -> io::Result<Datagram> {
        Err(unsupported())
    }

    /// A sink whose every write fails (a forked child; never on Windows).
    pub(crate) fn unconnected(path: &Path) -> Datagram {
        Datagram {
            _path: path.to_owned(),
        }
    }

    pub(crate) fn poll_fd(&self) -> Option<Waitable<'_>> {
        None
    }

    pub(crate) fn write(&mut self, _buf: &[u8]) -> Sent {
        Sent::Failed(unsupported())
    }
}
