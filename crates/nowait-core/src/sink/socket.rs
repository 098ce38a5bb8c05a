//! Socket sinks ([`Sink::tcp`], [`Sink::unix`], [`Sink::unix_datagram`],
//! [`Sink::local_syslog`]): connections nowait makes itself, which connect
//! without waiting and reconnect after a failure (see [`crate::sys`] for
//! each system's sockets), and how a syslog frame fits each.
//!
//! At build a stream starts connecting and a datagram socket must exist;
//! in a forked child both start unconnected, so that the first push, which
//! starts the child's writer, makes no system call for them: the writer
//! connects on its first write.
//!
//! [`Sink::tcp`]: crate::sink::Sink::tcp
//! [`Sink::unix`]: crate::sink::Sink::unix
//! [`Sink::unix_datagram`]: crate::sink::Sink::unix_datagram
//! [`Sink::local_syslog`]: crate::sink::Sink::local_syslog

use std::io;
use std::path::Path;

use super::{Opened, Output, When};
use crate::format::Framing;
use crate::sys::{Datagram, Peer, Stream};

/// Opens a stream connection to `peer`.
pub(super) fn open_stream(peer: Peer, when: When) -> io::Result<Opened> {
    let stream = match when {
        When::Build => Stream::connecting(peer)?,
        When::ForkedChild => Stream::new(peer),
    };
    Ok(Opened::new(Output::Stream(stream), false))
}

/// Opens a Unix datagram socket at `path`.
pub(super) fn open_datagram(path: &Path, when: When) -> io::Result<Opened> {
    let datagram = match when {
        When::Build => Datagram::open(path)?,
        When::ForkedChild => Datagram::unconnected(path),
    };
    Ok(Opened::new(Output::Datagram(datagram), false))
}

/// How a syslog message is framed on `output`: octet-counted on a stream
/// (RFC 6587), one per datagram, one per line elsewhere.
pub(super) fn syslog_framing(output: &Output) -> Framing {
    match output {
        Output::Stream(_) => Framing::OctetCounted,
        Output::Datagram(_) => Framing::Datagram,
        _ => Framing::Line,
    }
}
