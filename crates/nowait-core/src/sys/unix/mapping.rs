//! A shared file mapping for the crash-durable ring (`durable`): the
//! kernel keeps its pages when the process dies, whatever kills it.

use std::fs::File;
use std::io;
use std::ptr::NonNull;

use rustix::fs::{flock, FlockOperation};
use rustix::mm::{mmap, mmap_anonymous, munmap, MapFlags, ProtFlags};

/// `len` bytes of `file`, mapped shared and writable.
#[derive(Debug)]
pub(crate) struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is plain memory; who reads and writes which bytes is
// decided by its users (the ring's protocol, the writer's snapshots).
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

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
        use std::os::unix::fs::FileExt;
        file.set_len(0)?;
        let zeros = vec![0u8; 64 << 10];
        let mut at = 0;
        while at < len {
            let n = zeros.len().min(len - at);
            file.write_all_at(&zeros[..n], at as u64)?;
            at += n;
        }
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
        let page = rustix::param::page_size();
        for offset in (0..len).step_by(page) {
            // SAFETY: `offset < len`, inside the mapping, which nothing else
            // uses yet (it was created above); the byte is zero and stays
            // zero. Volatile, so that the store (and its fault) happens.
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

/// Takes an exclusive lock on `file` without waiting: `false` if another
/// open file (a live logger) holds it. The lock ends with the process.
pub(crate) fn try_lock(file: &File) -> io::Result<bool> {
    match flock(file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(true),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(false),
        Err(e) => Err(e.into()),
    }
}
