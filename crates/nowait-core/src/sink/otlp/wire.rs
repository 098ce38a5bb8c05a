//! What the OTLP client's exchange moves its bytes over: the sink's
//! socket ([`Stream`]), or, for the `otlp_exchange` fuzz target, a
//! receiver in memory whose every byte the input gives. The client
//! ([`super::client`]) and the TLS session ([`super::tls`]) both take a
//! `Wire`, so the code the target runs is the code a sink runs.

use std::io;

use crate::sys::{Sent, Stream};

/// A connection to the receiver that never waits.
pub(crate) trait Wire {
    /// One write attempt, connecting first if needed ([`Stream::send`]).
    fn send(&mut self, buf: &[u8]) -> Sent;
    /// Reads what the receiver sent without waiting: `Ok(Some(0))` at the
    /// end of the stream, `Ok(None)` if nothing came yet
    /// ([`Stream::recv`]).
    fn recv(&mut self, buf: &mut [u8]) -> io::Result<Option<usize>>;
    /// Drops the connection; the next write makes a new one
    /// ([`Stream::disconnect`]).
    fn disconnect(&mut self);
}

impl Wire for Stream {
    fn send(&mut self, buf: &[u8]) -> Sent {
        Stream::send(self, buf)
    }

    fn recv(&mut self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        Stream::recv(self, buf)
    }

    fn disconnect(&mut self) {
        Stream::disconnect(self)
    }
}
