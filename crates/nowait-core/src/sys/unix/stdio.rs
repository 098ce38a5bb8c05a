//! stdout and stderr on Unix: written without blocking on an open file
//! description of our own, so that `O_NONBLOCK` never leaks into the
//! process's own descriptor (where `println!` and, after the program exits,
//! the shell would see `EAGAIN`).
//!
//! * A socket is written with `MSG_DONTWAIT` on a duplicate; a regular file
//!   with blocking writes on a duplicate.
//! * A terminal, pipe or character device is reopened: through
//!   `/proc/self/fd/N` on Linux, which opens the pipe or device anew; where
//!   there is no `/proc` (macOS, the BSDs, `--cfg nowait_portable`), a
//!   terminal is reopened by its name (`ttyname`), which opens the device
//!   anew. `/dev/fd/N` is never used: on macOS and the BSDs it duplicates
//!   the descriptor, sharing the description, so `O_NONBLOCK` on it would
//!   change the user's terminal behind their back.
//! * What cannot be reopened (a pipe on macOS) is handed back as a blocking
//!   writer, which the caller isolates on a thread of its own.

use std::fs::File;
use std::io::{self, IsTerminal};
use std::os::fd::{AsFd, OwnedFd};

use rustix::fs::{Mode, OFlags};

use super::file::{kind, Kind};
use crate::sys::{Descriptor, Open};

const FLAGS: OFlags = OFlags::WRONLY
    .union(OFlags::NONBLOCK)
    .union(OFlags::CLOEXEC)
    .union(OFlags::NOCTTY);

/// Opens standard output (1) or error (2).
pub(crate) fn open(which: u8) -> io::Result<Open> {
    let (fd, terminal) = match which {
        1 => (
            io::stdout().as_fd().try_clone_to_owned()?,
            io::stdout().is_terminal(),
        ),
        _ => (
            io::stderr().as_fd().try_clone_to_owned()?,
            io::stderr().is_terminal(),
        ),
    };
    Ok(match kind(&fd)? {
        Kind::Socket => Open::Socket {
            fd: Descriptor::from(fd),
            terminal,
        },
        Kind::RegularFile(id) => Open::File {
            file: File::from(fd),
            id,
        },
        k @ (Kind::Fifo | Kind::Other) => match reopen(which, &fd, terminal) {
            Ok(own) => Open::NonBlocking {
                fd: Descriptor::from(own),
                pipe: matches!(k, Kind::Fifo),
                terminal,
            },
            Err(why) => Open::Blocking {
                writer: Box::new(File::from(fd)),
                terminal,
                why,
            },
        },
    })
}

/// A new open file description for the same pipe or device, non-blocking.
/// The error says why not (a fallback worth a notice).
#[cfg(all(target_os = "linux", not(nowait_portable)))]
fn reopen(which: u8, _fd: &OwnedFd, _terminal: bool) -> Result<OwnedFd, Option<String>> {
    let path = format!("/proc/self/fd/{which}");
    rustix::fs::open(path.as_str(), FLAGS, Mode::empty()).map_err(|e| {
        Some(format!(
            "cannot reopen it without blocking ({path}: {})",
            io::Error::from(e)
        ))
    })
}

/// A new open file description for the same terminal, non-blocking. A pipe
/// has no name to open again here: the relay is the normal way for it (no
/// notice); a terminal that cannot be reopened is a fallback worth one.
#[cfg(not(all(target_os = "linux", not(nowait_portable))))]
fn reopen(_which: u8, fd: &OwnedFd, terminal: bool) -> Result<OwnedFd, Option<String>> {
    if !terminal {
        return Err(None);
    }
    let name = rustix::termios::ttyname(fd, Vec::new())
        .map_err(|e| Some(format!("cannot name the terminal ({})", io::Error::from(e))))?;
    rustix::fs::open(name.as_c_str(), FLAGS, Mode::empty()).map_err(|e| {
        Some(format!(
            "cannot reopen the terminal without blocking ({}: {})",
            name.to_string_lossy(),
            io::Error::from(e)
        ))
    })
}
