//! What one attempt to write an output gave: the type the outputs
//! (`sink::output`) and the OTLP client (module `otlp`) both return,
//! in a module of its own so that neither imports the other.

use std::io;

/// The outcome of one attempt to write.
pub(crate) enum WriteOutcome {
    /// This many bytes were written (possibly fewer than offered).
    Wrote(usize),
    /// The sink cannot take bytes now without blocking.
    WouldBlock,
    /// The sink failed.
    Failed(io::Error),
    /// The receiver refuses this one record for good (a datagram too
    /// large): drop it, keep going.
    Rejected(io::Error),
    /// The receiver took the first `bytes` (whole records) and refused
    /// `records` of them for good (an OTLP 400, a partial success; capped
    /// at the records there are): those are dropped, the rest written.
    #[cfg_attr(not(feature = "otlp"), allow(dead_code))]
    Refused {
        bytes: usize,
        records: u64,
        error: io::Error,
    },
}
