//! A user's writer ([`Sink::writer`]): any `io::Write`, written with
//! blocking calls on the writer thread, or by an I/O thread of its own
//! ([`Sink::own_thread`]). Both count as durable: completeness is wanted.
//!
//! The writer is handed over once, to the logger `build` starts: a forked
//! child cannot use it (it is the parent's), so the child's sink fails for
//! good and its records are counted as dropped.
//!
//! [`Sink::writer`]: crate::sink::Sink::writer
//! [`Sink::own_thread`]: crate::sink::Sink::own_thread

use std::io::{self, Write};
use std::sync::Mutex;

use super::{Opened, Output, When};
use crate::sys::relay::{Relay, WriteTarget};

/// A user's writer until `build` opens its sink; empty after.
pub(crate) struct Handoff(Mutex<Option<Box<dyn Write + Send>>>);

impl Handoff {
    pub(super) fn new(writer: Box<dyn Write + Send>) -> Handoff {
        Handoff(Mutex::new(Some(writer)))
    }

    /// The writer, the first time at build; `None` after, and in a forked
    /// child.
    fn take(&self, when: When) -> Option<Box<dyn Write + Send>> {
        match when {
            // Nothing else holds the lock (`build` owns the sink), and a
            // poisoned lock still holds the writer.
            When::Build => self.0.lock().unwrap_or_else(|p| p.into_inner()).take(),
            When::ForkedChild => None,
        }
    }
}

/// Opens a user's writer: on the writer thread, or on an I/O thread of
/// its own if `own_thread`.
pub(super) fn open(writer: &Handoff, own_thread: bool, when: When) -> io::Result<Opened> {
    let Some(writer) = writer.take(when) else {
        return Err(io::Error::other(
            "a custom writer cannot be used in a forked child",
        ));
    };
    if own_thread {
        on_own_thread(writer)
    } else {
        Ok(Opened::new(Output::Writer(writer), false))
    }
}

/// A user's writer on an I/O thread of its own ([`Sink::own_thread`]):
/// durable like any custom writer, and never able to block the writer
/// thread.
///
/// [`Sink::own_thread`]: crate::sink::Sink::own_thread
fn on_own_thread(writer: Box<dyn Write + Send>) -> io::Result<Opened> {
    // Marked as a writer thread: a panic in the user's writer is the
    // sink's failure, reported by the writer, not a panic for the hook
    // to log and wait on.
    let relay = Relay::spawn_with(
        "nowait-sink",
        Box::new(WriteTarget(writer)),
        crate::shared::Shared::mark_writer_thread,
    )?;
    let mut opened = Opened::new(Output::Relayed(relay), false);
    opened.durable = true;
    Ok(opened)
}
