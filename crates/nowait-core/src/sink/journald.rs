//! The systemd journal ([`Sink::journald`]): journald's native socket,
//! one entry per datagram, a sealed memfd for an entry too large for one
//! (see [`crate::sys`]; journald exists only on Linux, and elsewhere
//! opening it fails). Its entries are its format,
//! [`Journald`](crate::format::Journald): no other format or syslog framing can
//! be set on it.
//!
//! At build the socket is connected (no journald is an error); in a forked
//! child it starts unconnected and the writer connects on its first write.
//!
//! [`Sink::journald`]: crate::sink::Sink::journald

use std::io;
use std::path::Path;
use std::sync::Arc;

use super::{Opened, Output, Sink, When};
use crate::format::MakeFormat;
use crate::sys::Journal;

/// Whether the sink still writes the format it was made with (`made`),
/// and no syslog framing.
pub(super) fn check(sink: &Sink, made: &Arc<dyn MakeFormat>) -> Result<(), String> {
    // Its entries are its format: another one would send journald lines
    // it cannot parse.
    let own = sink
        .format
        .as_ref()
        .is_some_and(|f| std::ptr::addr_eq(Arc::as_ptr(f), Arc::as_ptr(made)));
    if !own || sink.syslog.is_some() {
        return Err("a journald sink writes journald's own format; \
                    set its options with Journald, not Sink::format or Sink::syslog"
            .into());
    }
    Ok(())
}

/// Opens journald's socket at `path`.
pub(super) fn open(path: &Path, when: When) -> io::Result<Opened> {
    let journal = match when {
        When::Build => Journal::open(path)?,
        When::ForkedChild => Journal::unconnected(path),
    };
    Ok(Opened::new(Output::Journal(journal), false))
}
