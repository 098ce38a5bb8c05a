//! journald's socket where there is no journald: every system but Linux,
//! and Linux's portable backend (`--cfg nowait_portable`, so that this
//! path runs in the tests here). Opening it fails with a clear error;
//! `Builder::build` turns that into a
//! `BuildError`.

use std::io;
use std::path::Path;

use super::{Sent, Waitable};

/// A journald socket that cannot be had here.
#[derive(Debug)]
pub(crate) struct Journal(());

fn unsupported() -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        "journald exists only on Linux (this build has no journald sink)",
    )
}

impl Journal {
    /// Always fails.
    pub(crate) fn open(_path: &Path) -> io::Result<Journal> {
        Err(unsupported())
    }

    /// A sink whose every write fails (a forked child; never built).
    pub(crate) fn unconnected(_path: &Path) -> Journal {
        Journal(())
    }

    pub(crate) fn poll_fd(&self) -> Option<Waitable<'_>> {
        None
    }

    pub(crate) fn write(&mut self, _entry: &[u8]) -> Sent {
        Sent::Failed(unsupported())
    }
}
