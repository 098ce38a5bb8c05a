//! A shared file mapping for the crash-durable ring (`durable`): a view of
//! a file mapping object. The system keeps the file's pages (and writes
//! them to the file) when the process ends, however it ends
//! (`TerminateProcess`, `__fastfail`).

use std::fs::File;
use std::io;
use std::os::windows::fs::FileExt;
use std::os::windows::io::AsRawHandle;
use std::ptr::NonNull;

use windows_sys::Win32::Foundation::{CloseHandle, ERROR_LOCK_VIOLATION, HANDLE};
use windows_sys::Win32::Storage::FileSystem::{
    LockFileEx, LOCKFILE_EXCLUSIVE_LOCK, LOCKFILE_FAIL_IMMEDIATELY,
};
use windows_sys::Win32::System::Memory::{
    CreateFileMappingW, MapViewOfFile, UnmapViewOfFile, FILE_MAP_READ, FILE_MAP_WRITE,
    MEMORY_MAPPED_VIEW_ADDRESS, PAGE_READWRITE,
};
use windows_sys::Win32::System::IO::OVERLAPPED;

/// `len` bytes of a file, mapped shared and writable.
#[derive(Debug)]
pub(crate) struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the view is plain memory; who reads and writes which bytes is
// decided by its users (the ring's protocol, the writer's snapshots).
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Truncates `file` to zero, writes `len` zero bytes to it (every
    /// block allocated now: a full disk is an error here, not a fault on a
    /// push later), maps it and touches every page.
    pub(crate) fn fresh(file: &File, len: usize) -> io::Result<Mapping> {
        file.set_len(0)?;
        let zeros = vec![0u8; 64 << 10];
        let mut at = 0;
        while at < len {
            let n = zeros.len().min(len - at);
            let mut done = 0;
            while done < n {
                done += file.seek_write(&zeros[done..n], (at + done) as u64)?;
            }
            at += n;
        }
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
        for offset in (0..len).step_by(4096) {
            // SAFETY: `offset < len`, inside the view, which nothing else
            // uses yet; the byte is zero and stays zero. Volatile, so that
            // the store (and its fault) happens.
            unsafe { map.ptr.as_ptr().add(offset).write_volatile(0) };
        }
        Ok(map)
    }

    pub(crate) fn ptr(&self) -> NonNull<u8> {
        self.ptr
    }

    pub(crate) fn len(&self) -> usize {
        self.len
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
