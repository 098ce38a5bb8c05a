//! The memory a ring lives in: one layout for the heap, a file mapping and
//! the loom models, and the one place where loom and production differ.
//!
//! # Layout
//!
//! One zeroed block of [`size`] bytes, 4096-aligned:
//!
//! | offset          | what                                              |
//! |-----------------|---------------------------------------------------|
//! | 0               | `head` (`u64`), the producers' line               |
//! | [`SEEN_TAIL_AT`]| `seen_tail` (`u64`), on the same line as `head`   |
//! | [`TAIL_AT`]     | `tail` (`u64`), on a pair of cache lines of its own |
//! | [`STATES_AT`]   | one state byte per word                           |
//! | [`words_at`]    | the words (64-aligned): record headers, payloads  |
//!
//! Every other byte is padding and stays zero. The recovery scan
//! (`ring::scan`) and the crash-durability model (`ring::durable_model`)
//! read this layout as bytes, so it is the file format of a crash-durable
//! ring as well.
//!
//! # Access
//!
//! - `head`, `seen_tail`, `tail` and the state bytes are only ever accessed
//!   atomically, through [`Region::head`], [`Region::seen_tail`],
//!   [`Region::tail`] and [`Region::states`].
//! - The words are plain memory. The ring's protocol (see the `ring` module
//!   docs) decides which thread may touch which word; the ring reaches them
//!   through [`Region::word_ptr`], and declares each access for as long as
//!   it lasts with [`Region::reading`] or [`Region::writing`].
//!
//! Outside loom the atomics are the region's own bytes (std's atomics have
//! the size and alignment of their integer), and the declarations compile
//! to nothing. Under loom, which sees only its own atomics and cells, the
//! words are still the region's bytes, at the same offsets, written and read
//! by the same code; loom's atomics for `head`, `seen_tail`, `tail` (chosen
//! by their offset) and the state bytes live beside the block, and each
//! word has a loom cell whose tracked accesses are the declarations, so
//! that loom reports any word the protocol hands over without ordering the
//! accesses. That is the only difference, and it lives in [`access`].

use std::ptr::NonNull;

use crate::sys::sync::{AtomicU64, AtomicU8, KeepAlive};

use super::WORD;

/// Offset of `head`.
pub(super) const HEAD_AT: usize = 0;
/// Offset of `seen_tail`: beside `head`, which every claim also reads.
pub(super) const SEEN_TAIL_AT: usize = 8;
/// Offset of `tail`: two cache lines away from `head` (adjacent-line
/// prefetch), as crossbeam-utils' `CachePadded` does on x86-64.
pub(super) const TAIL_AT: usize = 128;
/// Offset of the first state byte.
pub(super) const STATES_AT: usize = 256;

/// Offset of the first word in a region of `words` words.
pub(super) fn words_at(words: usize) -> usize {
    (STATES_AT + words).next_multiple_of(64)
}

/// Bytes in a region of `words` words.
pub(super) fn size(words: usize) -> usize {
    words_at(words) + words * WORD
}

/// The memory of one ring. See the module docs for its layout.
pub(super) struct Region {
    /// The first byte of [`size`]`(words)` bytes, 4096-aligned, valid as
    /// long as `owner`.
    base: NonNull<u8>,
    /// The number of words (a power of two).
    words: usize,
    /// What keeps `base` valid.
    owner: Owner,
    /// How threads see the shared bytes: through themselves, or loom's
    /// stand-ins.
    access: access::Access,
}

/// Who owns a region's memory.
enum Owner {
    /// Allocated with this layout by [`Region::heap`]; freed on drop.
    Heap(std::alloc::Layout),
    /// Part of a mapping the ring keeps alive (it unmaps when the last
    /// owner drops).
    Mapped(#[allow(dead_code)] KeepAlive),
}

impl Region {
    /// A zeroed region of `words` words on the heap.
    pub(super) fn heap(words: usize) -> Region {
        let layout = std::alloc::Layout::from_size_align(size(words), 4096)
            .expect("ring size checked by the builder");
        // SAFETY: the layout's size is nonzero (at least STATES_AT).
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        let Some(base) = NonNull::new(ptr) else {
            std::alloc::handle_alloc_error(layout)
        };
        Region {
            base,
            words,
            owner: Owner::Heap(layout),
            access: access::Access::new(words),
        }
    }

    /// The region of `words` words at `base`, which `owner` keeps mapped.
    ///
    /// # Safety
    ///
    /// `base` is 4096-aligned, points to [`size`]`(words)` zeroed bytes
    /// that nothing else reads or writes while the region lives (another
    /// process may read them after this one died), and stays valid as long
    /// as `owner` does.
    pub(super) unsafe fn mapped(base: NonNull<u8>, words: usize, owner: KeepAlive) -> Region {
        Region {
            base,
            words,
            owner: Owner::Mapped(owner),
            access: access::Access::new(words),
        }
    }

    /// The number of words.
    #[inline]
    pub(super) fn words(&self) -> usize {
        self.words
    }

    /// Next word position to claim, with the ring's flag bits.
    #[inline]
    pub(super) fn head(&self) -> &AtomicU64 {
        // SAFETY: `base` is valid for `size(words)` bytes while `self`
        // lives, and HEAD_AT is a control word.
        unsafe { self.access.control(self.base, HEAD_AT) }
    }

    /// The producers' copy of `tail`.
    #[inline]
    pub(super) fn seen_tail(&self) -> &AtomicU64 {
        // SAFETY: as in `head`.
        unsafe { self.access.control(self.base, SEEN_TAIL_AT) }
    }

    /// Word position up to which the consumer released space.
    #[inline]
    pub(super) fn tail(&self) -> &AtomicU64 {
        // SAFETY: as in `head`.
        unsafe { self.access.control(self.base, TAIL_AT) }
    }

    /// One state byte per word.
    #[inline]
    pub(super) fn states(&self) -> &[AtomicU8] {
        // SAFETY: as in `head`; the state bytes are `words` bytes from
        // STATES_AT.
        unsafe { self.access.states(self.base, self.words) }
    }

    /// A pointer to the first byte of word `index` (`index == words` is the
    /// end of the region). Plain memory: reads and writes through it follow
    /// the ring's protocol, declared with [`Region::reading`] and
    /// [`Region::writing`].
    ///
    /// # Safety
    ///
    /// `index <= self.words()`.
    #[inline]
    pub(super) unsafe fn word_ptr(&self, index: usize) -> *mut u8 {
        debug_assert!(index <= self.words);
        // SAFETY: the words are the last `words * WORD` bytes of the block
        // (`size`), and `index <= words` (the caller's promise), so the
        // result is inside it or one past its end.
        unsafe { self.base.as_ptr().add(words_at(self.words) + index * WORD) }
    }

    /// Declares that this thread reads words `index..index + n` until the
    /// returned value drops (for loom; nothing otherwise).
    #[inline]
    pub(super) fn reading(&self, index: usize, n: usize) -> access::Declared {
        debug_assert!(index + n <= self.words);
        self.access.reading(index, n)
    }

    /// Declares that this thread writes words `index..index + n` until the
    /// returned value drops (for loom; nothing otherwise).
    #[inline]
    pub(super) fn writing(&self, index: usize, n: usize) -> access::Declared {
        debug_assert!(index + n <= self.words);
        self.access.writing(index, n)
    }

    /// Writes every page of the region once (the values it already holds),
    /// so that no producer takes the first-touch page fault. Only while
    /// nothing else uses the region (the ring is being built).
    pub(super) fn prefault(&self) {
        const PAGE: usize = 4096;
        for at in (0..size(self.words)).step_by(PAGE) {
            // SAFETY: `at` is inside the block; nothing else runs on the
            // region yet, so this thread owns every byte of it.
            unsafe {
                let p = self.base.as_ptr().add(at);
                p.write_volatile(p.read());
            }
        }
    }
}

impl Drop for Region {
    fn drop(&mut self) {
        if let Owner::Heap(layout) = self.owner {
            // SAFETY: allocated in `Region::heap` with this layout, and no
            // reference into it outlives the ring.
            unsafe { std::alloc::dealloc(self.base.as_ptr(), layout) };
        }
    }
}

/// Production: the shared bytes are accessed as themselves.
#[cfg(not(loom))]
mod access {
    use std::marker::PhantomData;
    use std::ptr::NonNull;

    use crate::sys::sync::{AtomicU64, AtomicU8};

    use super::STATES_AT;

    /// Nothing: the atomics are the region's bytes.
    pub(in crate::ring) struct Access;

    /// A declared access to some words: nothing outside loom.
    #[must_use = "the access lasts as long as this value"]
    pub(in crate::ring) struct Declared(PhantomData<*const ()>);

    impl Access {
        pub(super) fn new(_words: usize) -> Access {
            Access
        }

        /// The control word at byte offset `at`.
        ///
        /// # Safety
        ///
        /// `base` is a region's, valid as long as `self`, and `at` is
        /// `HEAD_AT`, `SEEN_TAIL_AT` or `TAIL_AT`.
        #[inline]
        pub(super) unsafe fn control(&self, base: NonNull<u8>, at: usize) -> &AtomicU64 {
            debug_assert!(at % 8 == 0 && at + 8 <= STATES_AT);
            // SAFETY: `at` lies in the region (the caller's promise),
            // 8-aligned in a 4096-aligned block; the bytes there are
            // zeroed (a valid `AtomicU64`) and only ever accessed
            // atomically, so a shared reference for as long as `self`
            // lives is sound.
            unsafe { &*base.as_ptr().add(at).cast::<AtomicU64>() }
        }

        /// The `words` state bytes.
        ///
        /// # Safety
        ///
        /// `base` is a region of `words` words, valid as long as `self`.
        #[inline]
        pub(super) unsafe fn states(&self, base: NonNull<u8>, words: usize) -> &[AtomicU8] {
            // SAFETY: as in `control`: `words` bytes from STATES_AT, only
            // ever accessed atomically.
            unsafe {
                std::slice::from_raw_parts(base.as_ptr().add(STATES_AT).cast::<AtomicU8>(), words)
            }
        }

        #[inline]
        pub(super) fn reading(&self, _index: usize, _n: usize) -> Declared {
            Declared(PhantomData)
        }

        #[inline]
        pub(super) fn writing(&self, _index: usize, _n: usize) -> Declared {
            Declared(PhantomData)
        }
    }
}

/// Loom: its atomics and cells stand in for the shared bytes it cannot see.
#[cfg(loom)]
mod access {
    use std::ptr::NonNull;

    use crate::sys::sync::{AtomicU64, AtomicU8, ConstPtr, MutPtr, UnsafeCell};

    use super::{STATES_AT, WORD};

    /// Loom's stand-ins for a region's shared memory.
    pub(in crate::ring) struct Access {
        /// One atomic per 8 bytes before STATES_AT, chosen by offset.
        control: Box<[AtomicU64]>,
        /// The state bytes.
        states: Box<[AtomicU8]>,
        /// One cell per word, whose tracked accesses are the declared ones.
        words: Box<[UnsafeCell<()>]>,
    }

    /// A declared access to some words: loom tracks it until it drops.
    #[must_use = "the access lasts as long as this value"]
    pub(in crate::ring) struct Declared {
        _reads: Vec<ConstPtr<()>>,
        _writes: Vec<MutPtr<()>>,
    }

    impl Access {
        pub(super) fn new(words: usize) -> Access {
            Access {
                control: (0..STATES_AT / WORD).map(|_| AtomicU64::new(0)).collect(),
                states: (0..words).map(|_| AtomicU8::new(0)).collect(),
                words: (0..words).map(|_| UnsafeCell::new(())).collect(),
            }
        }

        /// # Safety
        ///
        /// None needed here; the same contract as outside loom.
        pub(super) unsafe fn control(&self, _base: NonNull<u8>, at: usize) -> &AtomicU64 {
            debug_assert!(at % WORD == 0 && at + WORD <= STATES_AT);
            &self.control[at / WORD]
        }

        /// # Safety
        ///
        /// None needed here; the same contract as outside loom.
        pub(super) unsafe fn states(&self, _base: NonNull<u8>, words: usize) -> &[AtomicU8] {
            &self.states[..words]
        }

        #[track_caller]
        pub(super) fn reading(&self, index: usize, n: usize) -> Declared {
            Declared {
                _reads: self.words[index..index + n]
                    .iter()
                    .map(|c| c.get())
                    .collect(),
                _writes: Vec::new(),
            }
        }

        #[track_caller]
        pub(super) fn writing(&self, index: usize, n: usize) -> Declared {
            Declared {
                _reads: Vec::new(),
                _writes: self.words[index..index + n]
                    .iter()
                    .map(|c| c.get_mut())
                    .collect(),
            }
        }
    }
}
