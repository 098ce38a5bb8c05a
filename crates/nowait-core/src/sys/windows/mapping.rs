//! A shared file mapping for the crash-durable ring (`durable`): a view of
//! a file mapping object. The system keeps the file's pages (and writes
//! them to the file) when the process ends, however it ends
//! (`TerminateProcess`, `__fastfail`).

use std::fs::File;
use std::io;
use std::os::windows::io::AsRawHandle;
use std::ptr::NonNull;

use windows_sys::Win32::Foundation::{CloseHandle, ERROR_LOCK_VIOLATION, HANDLE};
use windows_sys::Win32::Storage::FileSystem::{
    LockFileEx, LOCKFILE_EXCLUSIVE_LOCK, LOCKFILE_FAIL_IMMEDIATELY,
};
use windows_sys::Win32::System::Memory::{
    CreateFileMappingW, MapViewOfFile, UnmapViewOfFile, FILE_MAP_READ, FILE_MAP_WRITE,
    MEMORY_MAPPED_VIEW_ADDRESS, PAGE_READONLY, PAGE_READWRITE,
};
use windows_sys::Win32::System::IO::OVERLAPPED;

pub(crate) use crate::sys::mapping::Mapping;

impl Mapping {
    /// Truncates `file` to zero, writes `len` zero bytes to it (every
    /// block allocated now: a full disk is an error here, not a fault on a
    /// push later), maps it and touches every page.
    pub(crate) fn fresh(file: &File, len: usize) -> io::Result<Mapping> {
        crate::sys::mapping::zero_fill(file, len)?;
        let handle = file.as_raw_handle() as HANDLE;
        // SAFETY: a mapping object of the whole file (size 0: the file's
        // own), unnamed, default security; closed below once the view
        // holds it.
        let object = unsafe {
            CreateFileMappingW(
                handle,
                std::ptr::null(),
                PAGE_READWRITE,
                0,
                0,
                std::ptr::null(),
            )
        };
        if object.is_null() {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a view of `len` bytes from offset 0 of that object, which
        // the file holds (written above).
        let view = unsafe { MapViewOfFile(object, FILE_MAP_READ | FILE_MAP_WRITE, 0, 0, len) };
        let error = io::Error::last_os_error();
        // SAFETY: our own handle; the view (if any) keeps the object alive.
        unsafe { CloseHandle(object) };
        let ptr = NonNull::new(view.Value.cast::<u8>()).ok_or(error)?;
        let map = Mapping { ptr, len };
        map.touch_fresh_pages(4096);
        Ok(map)
    }

    /// The first `len` bytes of `file`, mapped read-only: a dead process's
    /// file, read by recovery. `len` must not pass the file's length
    /// (checked here).
    pub(crate) fn read_only(file: &File, len: usize) -> io::Result<Mapping> {
        crate::sys::mapping::check_len(file, len)?;
        let handle = file.as_raw_handle() as HANDLE;
        // SAFETY: a read-only mapping object of the whole file, unnamed,
        // default security; closed below once the view holds it.
        let object = unsafe {
            CreateFileMappingW(
                handle,
                std::ptr::null(),
                PAGE_READONLY,
                0,
                0,
                std::ptr::null(),
            )
        };
        if object.is_null() {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a view of `len` bytes from offset 0, which the file holds
        // (checked above).
        let view = unsafe { MapViewOfFile(object, FILE_MAP_READ, 0, 0, len) };
        let error = io::Error::last_os_error();
        // SAFETY: our own handle; the view (if any) keeps the object alive.
        unsafe { CloseHandle(object) };
        let ptr = NonNull::new(view.Value.cast::<u8>()).ok_or(error)?;
        Ok(Mapping { ptr, len })
    }

    /// Windows has no `fork`: never called.
    pub(crate) fn detach_in_child(&self) -> io::Result<()> {
        Ok(())
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: our own view, and its users (the ring, the writer) hold
        // it through an `Arc`: none is left.
        unsafe {
            UnmapViewOfFile(MEMORY_MAPPED_VIEW_ADDRESS {
                Value: self.ptr.as_ptr().cast(),
            })
        };
    }
}

/// Opens the crash-durable file at `path` for reading and writing without
/// following a reparse point (a symbolic link or junction): the existing
/// file (`Ok((file, false))`) or a new one created exclusively
/// (`Ok((file, true))`).
pub(crate) fn open_durable(path: &std::path::Path) -> io::Result<(File, bool)> {
    use std::os::windows::fs::{MetadataExt, OpenOptionsExt};
    use windows_sys::Win32::Storage::FileSystem::{
        FILE_ATTRIBUTE_REPARSE_POINT, FILE_FLAG_OPEN_REPARSE_POINT,
    };
    let (file, created) = match durable_options()
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
        .open(path)
    {
        Ok(file) => (file, false),
        Err(e) if e.kind() == io::ErrorKind::NotFound => (create_durable(path)?, true),
        Err(e) => return Err(e),
    };
    if file.metadata()?.file_attributes() & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the path is a reparse point (a link), which nowait does not follow",
        ));
    }
    Ok((file, created))
}

/// Read, write, and shared for reading, writing and deleting, so that the
/// staging file can be renamed over the old one while it is open.
fn durable_options() -> std::fs::OpenOptions {
    use std::os::windows::fs::OpenOptionsExt;
    use windows_sys::Win32::Storage::FileSystem::{
        FILE_SHARE_DELETE, FILE_SHARE_READ, FILE_SHARE_WRITE,
    };
    let mut o = std::fs::OpenOptions::new();
    o.read(true)
        .write(true)
        .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE);
    o
}

/// Creates a new file at `path` exclusively (never an existing file or
/// link), for reading and writing.
pub(crate) fn create_durable(path: &std::path::Path) -> io::Result<File> {
    durable_options().create_new(true).open(path)
}

/// Checks that an existing crash-durable file can be trusted as this
/// process's own: a regular file, not a reparse point, with one name,
/// owned by this process's user (see `nofollow`). Windows keeps who may
/// write it in an ACL, which this does not read: the directory's ACL is
/// the defence there (`SECURITY.md`).
pub(crate) fn check_private(file: &File) -> Result<(), String> {
    use windows_sys::Win32::Storage::FileSystem::{
        FILE_ATTRIBUTE_DIRECTORY, FILE_ATTRIBUTE_REPARSE_POINT,
    };
    let info = super::file::handle_info(file).map_err(|e| format!("cannot stat it: {e}"))?;
    if info.dwFileAttributes & (FILE_ATTRIBUTE_DIRECTORY | FILE_ATTRIBUTE_REPARSE_POINT) != 0 {
        return Err("it is not a regular file".into());
    }
    if info.nNumberOfLinks != 1 {
        return Err(format!(
            "it has {} names (hard links): another name may be a file nowait must not overwrite",
            info.nNumberOfLinks
        ));
    }
    match super::nofollow::owned_by_me(file) {
        Ok(true) => Ok(()),
        Ok(false) => Err("it is owned by another user, not by this process's user".into()),
        Err(e) => Err(format!("cannot read its owner: {e}")),
    }
}

/// Takes an exclusive lock on `file` without waiting: `false` if another
/// open file (a live logger) holds it. Windows locks are mandatory for the
/// bytes they cover, so the lock covers one byte far past any end of file
/// (offset 2^63 - 1), which nobody reads or writes; it ends with the
/// handle, or the process.
pub(crate) fn try_lock(file: &File) -> io::Result<bool> {
    let mut at = OVERLAPPED::default();
    at.Anonymous.Anonymous.Offset = u32::MAX;
    at.Anonymous.Anonymous.OffsetHigh = i32::MAX as u32;
    // SAFETY: a valid handle, an OVERLAPPED that lives across the call
    // (which completes at once: LOCKFILE_FAIL_IMMEDIATELY, synchronous
    // handle).
    let ok = unsafe {
        LockFileEx(
            file.as_raw_handle() as HANDLE,
            LOCKFILE_EXCLUSIVE_LOCK | LOCKFILE_FAIL_IMMEDIATELY,
            0,
            1,
            0,
            &mut at,
        )
    };
    if ok != 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    if e.raw_os_error() == Some(ERROR_LOCK_VIOLATION as i32) {
        Ok(false)
    } else {
        Err(e)
    }
}
