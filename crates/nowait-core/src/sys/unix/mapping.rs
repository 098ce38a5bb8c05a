//! A shared file mapping for the crash-durable ring (`durable`): the
//! kernel keeps its pages when the process dies, whatever kills it.

use std::fs::File;
use std::io;
use std::ptr::NonNull;

use rustix::fs::{flock, FlockOperation};
use rustix::mm::{mmap, mmap_anonymous, munmap, MapFlags, ProtFlags};

pub(crate) use crate::sys::mapping::Mapping;

impl Mapping {
    /// Truncates `file` to zero, then writes `len` zero bytes to it, maps
    /// it shared and touches every page.
    ///
    /// Writing the zeros (rather than extending the file sparsely) makes
    /// the file system allocate every block now: a full disk or tmpfs is an
    /// error here, in `build()`, instead of a `SIGBUS` on a request thread
    /// whose push first touches a page that has no room. Touching each page
    /// after mapping it takes the page faults here too, so the first
    /// records pay none (on tmpfs; a disk file's pages fault again after
    /// each writeback).
    pub(crate) fn fresh(file: &File, len: usize) -> io::Result<Mapping> {
        crate::sys::mapping::zero_fill(file, len)?;
        // SAFETY: a new mapping at an address the kernel chooses; it
        // aliases no Rust object.
        let ptr = unsafe {
            mmap(
                std::ptr::null_mut(),
                len,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::SHARED,
                file,
                0,
            )
        }?;
        let map = Mapping {
            ptr: NonNull::new(ptr.cast()).ok_or_else(|| io::Error::other("mmap returned null"))?,
            len,
        };
        map.touch_fresh_pages(rustix::param::page_size());
        Ok(map)
    }

    /// The first `len` bytes of `file`, mapped private and read-only: a
    /// dead process's file, read by recovery. Pages the file does not
    /// back with data (a sparse file) cost no memory. `len` must not pass
    /// the file's length (checked here, against `fstat`); a file shortened
    /// meanwhile by another process of this user faults on access, which
    /// the threat model leaves to that user (`SECURITY.md`).
    pub(crate) fn read_only(file: &File, len: usize) -> io::Result<Mapping> {
        crate::sys::mapping::check_len(file, len)?;
        // SAFETY: a new mapping at an address the kernel chooses, of `len`
        // bytes that the file holds; it aliases no Rust object, and private
        // read-only pages are never written through.
        let ptr = unsafe {
            mmap(
                std::ptr::null_mut(),
                len,
                ProtFlags::READ,
                MapFlags::PRIVATE,
                file,
                0,
            )
        }?;
        Ok(Mapping {
            ptr: NonNull::new(ptr.cast()).ok_or_else(|| io::Error::other("mmap returned null"))?,
            len,
        })
    }

    /// In a forked child: puts private zeroed memory where the shared
    /// mapping was, so that the child's logger (which resets the ring it
    /// inherited) never writes into the parent's file. One `mmap` system
    /// call, async-signal-safe; on failure the child keeps the shared
    /// mapping and the caller must not touch it.
    pub(crate) fn detach_in_child(&self) -> io::Result<()> {
        // SAFETY: replaces exactly our own mapping's range; no reference
        // into it is live in the child (it runs only the atfork handler).
        unsafe {
            mmap_anonymous(
                self.ptr.as_ptr().cast(),
                self.len,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::PRIVATE | MapFlags::FIXED,
            )
        }?;
        Ok(())
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: our own mapping, and its users (the ring, the writer)
        // hold it through an `Arc`: none is left.
        let _ = unsafe { munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// Opens the crash-durable file at `path` for reading and writing without
/// following a symbolic link in its last component: the existing file
/// (`Ok((file, false))`), or a new one created exclusively with mode
/// `0600` (`Ok((file, true))`). Whoever could plant a file or a link at
/// the path gets an error, never a file of their choosing opened.
pub(crate) fn open_durable(path: &std::path::Path) -> io::Result<(File, bool)> {
    use std::os::unix::fs::OpenOptionsExt;
    let flags = libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NOCTTY;
    match std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(flags)
        .open(path)
    {
        Ok(file) => return Ok((file, false)),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(link_error(e)),
    }
    Ok((create_durable(path)?, true))
}

/// Creates a new file at `path` exclusively (never through a link, never
/// an existing file), mode `0600`, for reading and writing.
pub(crate) fn create_durable(path: &std::path::Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC | libc::O_NOCTTY)
        .open(path)
        .map_err(link_error)
}

/// `ELOOP` from `O_NOFOLLOW` says that the path is a symbolic link.
fn link_error(e: io::Error) -> io::Error {
    if e.raw_os_error() == Some(libc::ELOOP) {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "the path is a symbolic link, which nowait does not follow",
        )
    } else {
        e
    }
}

/// Checks that an existing crash-durable file can be trusted as this
/// process's own: a regular file, owned by this process's effective user,
/// with one name (a hard link at the path would have nowait overwrite the
/// file it names), writable by nobody else (no group or other write bit).
/// `Err` says which test failed.
pub(crate) fn check_private(file: &File) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let m = file
        .metadata()
        .map_err(|e| format!("cannot stat it: {e}"))?;
    if !m.file_type().is_file() {
        return Err("it is not a regular file".into());
    }
    let me = rustix::process::geteuid().as_raw();
    if m.uid() != me {
        return Err(format!(
            "it is owned by user {}, not by this process's user {me}",
            m.uid()
        ));
    }
    if m.nlink() != 1 {
        return Err(format!(
            "it has {} names (hard links): another name may be a file nowait must not overwrite",
            m.nlink()
        ));
    }
    if m.mode() & 0o022 != 0 {
        return Err(format!(
            "its mode {:o} lets other users write it",
            m.mode() & 0o7777
        ));
    }
    Ok(())
}

/// Takes an exclusive lock on `file` without waiting: `false` if another
/// open file (a live logger) holds it. The lock ends with the process.
pub(crate) fn try_lock(file: &File) -> io::Result<bool> {
    match flock(file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(true),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(false),
        Err(e) => Err(e.into()),
    }
}
