//! The crash-durable ring is not available on Windows yet: building a
//! logger with `Builder::crash_durable` fails with a clear error (see
//! `docs::design`, "Crashes").

use std::fs::File;
use std::io;
use std::ptr::NonNull;

/// Never made on Windows.
#[derive(Debug)]
pub(crate) enum Mapping {}

impl Mapping {
    pub(crate) fn fresh(_file: &File, _len: usize) -> io::Result<Mapping> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "the crash-durable ring is not available on Windows yet",
        ))
    }

    pub(crate) fn ptr(&self) -> NonNull<u8> {
        match *self {}
    }

    pub(crate) fn len(&self) -> usize {
        match *self {}
    }

    pub(crate) fn detach_in_child(&self) -> io::Result<()> {
        match *self {}
    }
}

pub(crate) fn try_lock(_file: &File) -> io::Result<bool> {
    Ok(true)
}
