//! The portable half of the shared file mapping the crash-durable ring
//! lives in: the mapped bytes, and the zero-fill every system does before
//! mapping. Each system's `mapping.rs` maps, unmaps and locks.

use std::fs::File;
use std::io::{self, Seek, SeekFrom, Write};
use std::ptr::NonNull;

/// `len` bytes of a file, mapped shared and writable (or read-only, for
/// recovery). Each system's `mapping.rs` makes and unmaps it.
#[derive(Debug)]
pub(crate) struct Mapping {
    pub(super) ptr: NonNull<u8>,
    pub(super) len: usize,
}

// SAFETY: the mapping is plain memory; who reads and writes which bytes is
// decided by its users (the ring's protocol, the writer's snapshots).
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// The mapped bytes, for a mapping that nothing writes while it is
    /// read (one from `Mapping::read_only`).
    pub(crate) fn bytes(&self) -> &[u8] {
        // SAFETY: `len` bytes mapped at `ptr` for as long as `self` lives
        // (each system's `Drop` unmaps them); the caller's mapping is
        // read-only and private, so no write in this process aliases the
        // slice.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    pub(crate) fn ptr(&self) -> NonNull<u8> {
        self.ptr
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Touches every page of a mapping just made over zeroed bytes, so
    /// that its page faults happen here, in `build()`, and the first
    /// records pay none.
    pub(super) fn touch_fresh_pages(&self, page: usize) {
        for offset in (0..self.len).step_by(page) {
            // SAFETY: `offset < len`, inside the mapping, which nothing
            // else uses yet (the caller made it just now); the byte is
            // zero and stays zero. Volatile, so that the store (and its
            // fault) happens.
            unsafe { self.ptr.as_ptr().add(offset).write_volatile(0) };
        }
    }
}

/// Refuses to map `len` bytes of `file` unless it has that many: zero, or
/// more than the file holds, is an error naming both.
pub(super) fn check_len(file: &File, len: usize) -> io::Result<()> {
    let real = file.metadata()?.len();
    if len == 0 || (len as u64) > real {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("cannot map {len} bytes of a file of {real}"),
        ));
    }
    Ok(())
}

/// Truncates `file` to zero, then writes `len` zero bytes to it from its
/// start. Writing the zeros (rather than extending the file sparsely) makes
/// the file system allocate every block now: a full disk or tmpfs is an
/// error here, in `build()`, instead of a fault on a request thread whose
/// push first touches a page that has no room.
pub(super) fn zero_fill(file: &File, len: usize) -> io::Result<()> {
    file.set_len(0)?;
    let mut out = file;
    out.seek(SeekFrom::Start(0))?;
    let zeros = vec![0u8; 64 << 10];
    let mut at = 0;
    while at < len {
        let n = zeros.len().min(len - at);
        out.write_all(&zeros[..n])?;
        at += n;
    }
    Ok(())
}
