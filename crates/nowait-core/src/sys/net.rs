//! The portable half of the socket facility, the same on every system:
//! where a stream sink connects, what one write attempt returns, and how
//! long a connect may take. Each system's `net.rs` implements the sockets.

use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// A connect still in progress after this long is abandoned (a host that
/// drops packets would otherwise hold it for the kernel's two minutes).
pub(crate) const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The result of one write attempt on a socket.
#[derive(Debug)]
pub(crate) enum Sent {
    /// This many bytes went into the socket.
    Wrote(usize),
    /// Not now: the socket buffer is full, or the connect is in progress.
    WouldBlock,
    /// The write or the connect failed; the connection (if any) is dropped
    /// and the next write tries a new one.
    Failed(io::Error),
    /// The receiver refuses this record itself (a datagram larger than the
    /// socket allows): retrying cannot help, the record must be dropped.
    #[cfg_attr(windows, allow(dead_code))]
    Rejected(io::Error),
}

/// Where a stream sink connects.
#[derive(Debug, Clone)]
pub(crate) enum Peer {
    Tcp(SocketAddr),
    #[cfg_attr(windows, allow(dead_code))]
    Unix(PathBuf),
}
