//! The crash-durable file as this process holds it: mapped, and shared
//! by the ring (which lives in it), the producers (loss counts), the
//! writer (progress marks, snapshots, mirrors) and the catalog hooks.
//!
//! Invariants: the header and snapshot words are only ever accessed
//! atomically ([`DurableFile::word`]); every range written with
//! [`DurableFile::put`] has one writer (a mirror: the writer thread; the
//! catalog: under its mutex; an identity copy: the writer, while the
//! snapshot in force names the other). The file stays locked while a
//! `DurableFile` lives, and while a build recovers, the old file stays
//! locked at the path until [`DurableFile::take_path`] replaces it. The
//! crash word is set by the writer thread ([`DurableFile::batch_start`])
//! and stored to by the crash handler on that same thread only.

use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use super::layout::{
    Layout, CATALOG_USED, H_BATCH_START, H_CATALOG_FULL, H_FORMATTING, H_WRITER_CRASHED, LOSSES,
    RING_AT,
};
use crate::accounting::loss::RING_LOSSES;
use crate::ring::Ring;
use crate::sys::{self, FileId, Mapping};

/// An open crash-durable file, mapped. Shared by the ring (which lives in
/// it), the writer (snapshots, mirrors) and the catalog hooks.
pub(crate) struct DurableFile {
    pub(super) map: Arc<Mapping>,
    pub(super) layout: Layout,
    pub(super) catalog: Mutex<()>,
    /// The file's identity, to know it again (`retired_here`).
    pub(super) id: Option<FileId>,
    /// Set when the logger's ring closes (guard dropped): a later
    /// `build()` in this process may then start a new file at the path.
    pub(super) retired: std::sync::atomic::AtomicBool,
    /// Holds the lock that keeps a second logger off the file.
    pub(super) _file: File,
    /// While a build recovers: the new file is at a staging path, the old
    /// one (locked) still at the path, until [`DurableFile::take_path`].
    pub(super) staged: Mutex<Option<Staged>>,
}

#[derive(Debug)]
pub(super) struct Staged {
    pub(super) from: PathBuf,
    pub(super) to: PathBuf,
    /// Where the old file goes first if recovery could not read it.
    pub(super) set_aside: Option<PathBuf>,
    /// The old file, locked until the new one replaces it.
    pub(super) _old: File,
}

impl std::fmt::Debug for DurableFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DurableFile")
            .field("bytes", &self.map.len())
            .finish()
    }
}

impl DurableFile {
    pub(super) fn word(&self, at: usize) -> &AtomicU64 {
        debug_assert!(at % 8 == 0 && at + 8 <= self.map.len());
        // SAFETY: `at` is 8-aligned (the mapping is page-aligned) and inside
        // the mapping, which lives as long as `self`; these header words
        // are only ever accessed atomically in this process.
        unsafe { &*self.map.ptr().as_ptr().add(at).cast::<AtomicU64>() }
    }

    /// Copies `bytes` to `at..at + bytes.len()`, a range of the mapping
    /// that only the caller writes (a mirror: the writer thread; the
    /// catalog: under its mutex; an identity copy not in use).
    pub(super) fn put(&self, at: usize, bytes: &[u8]) {
        assert!(
            at + bytes.len() <= self.map.len(),
            "nowait bug: write past the durable file"
        );
        // SAFETY: inside the mapping (checked); no reference to these bytes
        // exists in this process (they are only written through here and
        // read by a later process), and the caller is their only writer.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                self.map.ptr().as_ptr().add(at),
                bytes.len(),
            )
        }
    }

    /// The ring in this file's mapping.
    pub(crate) fn ring(self: &Arc<Self>) -> Ring {
        let owner: Arc<dyn std::any::Any + Send + Sync> = self.map.clone();
        // SAFETY: `RING_AT` is page-aligned and `region_size` bytes from it
        // lie inside the mapping (`Layout::total`), zeroed by
        // `Mapping::fresh`; only the ring uses them; `owner` keeps the
        // mapping alive as long as the ring.
        unsafe {
            Ring::in_region(
                self.layout.ring_bytes,
                std::ptr::NonNull::new_unchecked(self.map.ptr().as_ptr().add(RING_AT)),
                owner,
            )
        }
    }

    /// The writer starts a batch at ring position `start`. Also points
    /// this thread's crash word at this file (see `note_writer_crash`).
    pub(crate) fn batch_start(&self, start: u64) {
        self.word(H_BATCH_START).store(start, Ordering::Relaxed);
        self.word(H_FORMATTING).store(0, Ordering::Relaxed);
        let word: *const AtomicU64 = self.word(H_WRITER_CRASHED);
        let _ = CRASH_WORD.try_with(|c| c.set(word));
    }

    /// A producer refused a record (reason `ring_loss` index `reason`).
    pub(crate) fn count_loss(&self, reason: usize) {
        if reason < RING_LOSSES {
            self.word(LOSSES + 8 * reason)
                .fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The writer formats the `nth` record of the batch (from 1), or has
    /// formatted them all (0).
    pub(crate) fn formatting(&self, nth: u64) {
        self.word(H_FORMATTING).store(nth, Ordering::Relaxed);
    }

    /// Puts this file at its path, in place of the one recovered from (one
    /// `rename`), once the recovered records are in this file's ring.
    pub(crate) fn take_path(&self) -> io::Result<()> {
        let Ok(mut staged) = self.staged.lock() else {
            return Ok(());
        };
        let Some(s) = staged.take() else {
            return Ok(());
        };
        // Where a file that is still open cannot be replaced (Windows: the
        // name stays taken until the last handle closes), the old one is
        // closed first, which lets another process lock it for the instant
        // before the rename. Elsewhere it stays locked until the rename is
        // done.
        let Staged {
            from,
            to,
            set_aside,
            _old,
        } = s;
        if sys::RENAME_NEEDS_CLOSE {
            drop(_old);
        }
        if let Some(aside) = set_aside {
            std::fs::rename(&to, aside)?;
        }
        std::fs::rename(&from, &to)
    }

    /// The logger's ring is closed: nothing more will be pushed into it.
    pub(crate) fn retire(&self) {
        self.retired.store(true, Ordering::SeqCst);
    }

    /// In a forked child: the child's logger must not write into the
    /// parent's file.
    pub(crate) fn detach_in_child(&self) {
        let _ = self.map.detach_in_child();
    }

    pub(super) fn append_entry(&self, entry: &[u8]) {
        let Ok(_guard) = self.catalog.lock() else {
            return;
        };
        let used = self.word(CATALOG_USED).load(Ordering::Relaxed) as usize;
        if used + entry.len() > self.layout.catalog {
            self.word(H_CATALOG_FULL).fetch_add(1, Ordering::Relaxed);
            return;
        }
        self.put(self.layout.catalog_at() + used, entry);
        self.word(CATALOG_USED)
            .store((used + entry.len()) as u64, Ordering::Release);
    }
}

thread_local! {
    /// On a writer thread of a crash-durable logger: its file's
    /// `H_WRITER_CRASHED` word (which lives as long as the writer).
    static CRASH_WORD: std::cell::Cell<*const AtomicU64> =
        const { std::cell::Cell::new(std::ptr::null()) };
}

/// Called by the crash handler when the thread that crashed is a writer
/// thread: marks its crash-durable file, if it has one, so that the next
/// start sets aside the record it was formatting (one atomic store; async-
/// signal-safe).
pub(crate) fn note_writer_crash() {
    let word = CRASH_WORD.try_with(|c| c.get()).unwrap_or(std::ptr::null());
    if !word.is_null() {
        // SAFETY: set by `batch_start` on this thread to a word of the
        // mapping that this thread's writer keeps alive (it holds the
        // file) while it runs, which it does: it is the thread crashing.
        unsafe { (*word).store(1, Ordering::SeqCst) };
    }
}
