//! Files on Unix: opening a sink's path, its identity (device, inode) for
//! rotation and reopen, and what kind of file a descriptor is.

use std::fs::{File, OpenOptions};
use std::io::{self, IsTerminal};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

use rustix::fs::{FileType, OFlags};

use crate::sys::{Descriptor, Open};

/// What names a file whatever its path: (device, inode).
pub(crate) type FileId = (u64, u64);

/// The identity of an open file.
pub(crate) fn file_id(file: &File) -> io::Result<FileId> {
    let m = file.metadata()?;
    Ok((m.dev(), m.ino()))
}

/// The identity of the file a path names now.
pub(crate) fn path_id(path: &Path) -> io::Result<FileId> {
    let m = std::fs::metadata(path)?;
    Ok((m.dev(), m.ino()))
}

/// Whether an open file has no name left (deleted while open).
pub(crate) fn is_deleted(file: &File) -> bool {
    file.metadata().is_ok_and(|m| m.nlink() == 0)
}

/// Opens a regular file for appending (a rolling sink's files), never as
/// the controlling terminal, closed on exec.
pub(crate) fn open_append(path: &Path, create_new: bool) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.append(true)
        .custom_flags(libc::O_CLOEXEC | libc::O_NOCTTY);
    if create_new {
        o.create_new(true);
    } else {
        o.create(true);
    }
    o.open(path)
}

/// Opens a file nowait only reads (a certificate or key named by the user
/// or the environment), following links as any reader does, if it is a
/// regular file. `O_NONBLOCK` makes a FIFO's open return at once (opening
/// one to read would otherwise wait for a writer, forever if none comes);
/// `fstat` on the descriptor then refuses anything but a regular file, so
/// no read can wait on a FIFO, socket, terminal or device either. The
/// flag is cleared on the file kept (regular files ignore it).
#[cfg(feature = "otlp-tls")]
pub(crate) fn open_readable(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY)
        .open(path)?;
    if !file.metadata()?.file_type().is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file (a FIFO, socket, device or directory)",
        ));
    }
    let flags = rustix::fs::fcntl_getfl(&file)?;
    rustix::fs::fcntl_setfl(&file, flags - OFlags::NONBLOCK)?;
    Ok(file)
}

/// Opens a sink's path for appending, creating it, and picks how to write
/// it from its file type: a regular file blocks, a FIFO, terminal or
/// character device is written without blocking on this open file
/// description of our own.
pub(crate) fn open_path(path: &Path) -> io::Result<Open> {
    // O_NONBLOCK from the start: opening a FIFO for writing would otherwise
    // wait for a reader (with it, no reader is ENXIO).
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ENXIO) => io::Error::new(
                e.kind(),
                format!("{e}: a FIFO without a reader (open its read end first)"),
            ),
            _ => e,
        })?;
    let meta = file.metadata()?;
    let ft = meta.file_type();
    match () {
        () if ft.is_file() => {
            // Regular files ignore O_NONBLOCK; clear it for clarity.
            let flags = rustix::fs::fcntl_getfl(&file)?;
            rustix::fs::fcntl_setfl(&file, flags - OFlags::NONBLOCK)?;
            Ok(Open::File {
                file,
                id: (meta.dev(), meta.ino()),
            })
        }
        () if ft.is_dir() => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "is a directory",
        )),
        () if ft.is_socket() => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "is a socket (not supported as a file sink)",
        )),
        () => {
            let terminal = file.is_terminal();
            Ok(Open::NonBlocking {
                fd: Descriptor::from(OwnedFd::from(file)),
                pipe: ft.is_fifo(),
                terminal,
            })
        }
    }
}

/// The kind of an inherited descriptor (stdout, stderr).
pub(crate) enum Kind {
    Socket,
    RegularFile(FileId),
    Fifo,
    Other,
}

pub(crate) fn kind(fd: impl AsFd) -> io::Result<Kind> {
    let stat = rustix::fs::fstat(fd)?;
    Ok(match FileType::from_raw_mode(stat.st_mode) {
        FileType::Socket => Kind::Socket,
        FileType::RegularFile => Kind::RegularFile((stat.st_dev as u64, stat.st_ino as u64)),
        FileType::Fifo => Kind::Fifo,
        _ => Kind::Other,
    })
}
