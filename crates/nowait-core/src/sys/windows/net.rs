//! Sockets as sinks on Windows. TCP connects and writes with blocking calls
//! on a relay thread of its own ([`relay`](crate::sys::relay)), so a receiver that is
//! slow, down or unreachable holds that thread only: the writer thread
//! hands bytes over and never waits. A failure drops the connection; the
//! sink's retry reconnects. Unix sockets (`Sink::unix`, syslog's
//! `/dev/log`) are not supported on Windows: building such a sink fails
//! with a clear error.

use std::io::{self, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};

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

/// A stream connection that reconnects.
#[derive(Debug)]
pub(crate) struct Stream {
    relay: Result<Relay, String>,
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
        Stream { relay }
    }

    /// A stream sink whose relay thread connects when the first bytes
    /// come.
    ///
    /// # Errors
    ///
    /// A Unix socket (not supported here), or no thread can be spawned.
    pub(crate) fn connecting(peer: Peer) -> io::Result<Stream> {
        let s = Stream::new(peer);
        match &s.relay {
            Ok(_) => Ok(s),
            Err(why) => Err(io::Error::new(io::ErrorKind::Unsupported, why.clone())),
        }
    }

    /// A stream for request/response exchanges (the OTLP sink): not
    /// supported on Windows, where nowait's sockets are written by a relay
    /// thread that never reads.
    ///
    /// # Errors
    ///
    /// Always.
    #[cfg_attr(not(feature = "otlp"), allow(dead_code))]
    pub(crate) fn exchanging(_peer: Peer) -> io::Result<Stream> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "the OTLP sink is not supported on Windows yet (it needs non-blocking sockets, \
             which nowait has on Unix only)",
        ))
    }

    /// A shutdown gives up: see `Relay::abandon`.
    pub(crate) fn abandon_held(&self) -> usize {
        self.relay.as_ref().map_or(0, Relay::abandon)
    }

    /// Rings the writer's doorbell after each batch.
    pub(crate) fn set_waker(&self, waker: &crate::sys::relay::Waker) {
        if let Ok(relay) = &self.relay {
            relay.set_waker(std::sync::Arc::clone(waker));
        }
    }

    /// Nothing to poll on Windows.
    pub(crate) fn poll_fd(&self) -> Option<Waitable<'_>> {
        None
    }

    /// Request/response exchanges (the OTLP sink) need a non-blocking
    /// socket, which nowait has on Unix only: never called here, since
    /// such a sink cannot be built on Windows.
    #[cfg_attr(not(feature = "otlp"), allow(dead_code))]
    pub(crate) fn send(&mut self, _buf: &[u8]) -> Sent {
        Sent::Failed(io::Error::new(
            io::ErrorKind::Unsupported,
            "request/response sockets are not supported on Windows",
        ))
    }

    /// See [`Stream::send`]: not supported on Windows.
    #[cfg_attr(not(feature = "otlp"), allow(dead_code))]
    pub(crate) fn recv(&mut self, _buf: &mut [u8]) -> io::Result<Option<usize>> {
        Err(io::ErrorKind::Unsupported.into())
    }

    /// Nothing to poll on Windows.
    #[cfg_attr(not(feature = "otlp"), allow(dead_code))]
    pub(crate) fn read_fd(&self) -> Option<Waitable<'_>> {
        None
    }

    /// See [`Stream::send`]: nothing to drop on Windows.
    #[cfg_attr(not(feature = "otlp"), allow(dead_code))]
    pub(crate) fn disconnect(&mut self) {}

    /// One write attempt; never waits.
    pub(crate) fn write(&mut self, buf: &[u8]) -> Sent {
        match &self.relay {
            Ok(relay) => match relay.write(buf) {
                Relayed::Wrote(n) => Sent::Wrote(n),
                Relayed::Pending => Sent::WouldBlock,
                Relayed::Failed(e) => Sent::Failed(e),
            },
            Err(why) => Sent::Failed(io::Error::other(why.clone())),
        }
    }
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
