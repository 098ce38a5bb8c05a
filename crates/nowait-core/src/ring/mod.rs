//! A bounded multi-producer, single-consumer ring of variable-length records.
//!
//! This is the only module with `unsafe` code. Its API is safe: producers call
//! [`Ring::try_push`] with the bytes of a record; the one consumer (the writer
//! thread) calls [`Ring::consume`], which lends each committed record's bytes
//! to a closure and then releases the space.
//!
//! # Algorithm
//!
//! Claim-then-commit over one shared byte ring, as in Aeron's `ManyToOneRingBuffer`
//! and the LMAX disruptor's multi-producer sequencer:
//!
//! 1. A producer reads `tail`, computes where its record would go, and claims
//!    the words with one compare-and-swap on `head`. A record never straddles
//!    the end of the buffer: if it does not fit in the words left before the
//!    end, the producer claims those words too and marks them as padding.
//! 2. It writes the header and payload into its claimed words (a copy of
//!    byte slices, or a [`Payload`] that encodes itself in place), which no
//!    other thread touches until it commits. If writing the payload
//!    unwinds, a drop guard commits the record as `VOID` instead, which the
//!    consumer skips unread, so a half-written record never stalls or
//!    reaches the consumer.
//! 3. It commits by storing `COMMITTED` into the state byte of the record's
//!    first word with `Release` ordering.
//! 4. The consumer walks from `tail`: it loads the state byte at its position
//!    with `Acquire`; `FREE` means the next record is claimed but not yet
//!    committed (or the ring is empty) and it stops; otherwise it reads the
//!    record, resets the state byte to `FREE`, and moves on. After a batch it
//!    publishes the new `tail` with `Release`, handing the space back.
//!
//! Positions are counted in 8-byte words and never wrap (`u64`), so there is
//! no ABA problem; the index into the buffer is `position & mask`.
//!
//! 5. Closing sets a flag bit in `head` with one `fetch_or` ([`Ring::close`]).
//!    A producer's claim compare-and-swap expects a `head` without flags, so
//!    every claim either happened before the close (and lies below the
//!    position `close` returns, where the consumer will find it) or fails
//!    and sees the flag. That makes "accepted" and "refused after shutdown"
//!    exact without any check on the hot path beyond the claim itself. A
//!    second flag marks a ring inherited by a forked child
//!    ([`Ring::reset_after_fork`]): claims fail until the child has a writer.
//!
//! The consumer resets a record's state byte and advances its position
//! before lending the payload; if the closure unwinds, a drop guard still
//! publishes `tail` (the record that panicked counts as consumed), so a
//! panic can never leave the ring stalled on a state byte already reset.
//!
//! Capacity is capped at [`MAX_CAPACITY`] (1 GiB) so that a record length
//! always fits the header's `u32`.
//!
//! The state bytes live beside the data (one per word, 12.5 % overhead) rather
//! than in the record header so that a header is never read while a producer
//! may be writing it, and so that loom can model every access.
//!
//! A producer that is preempted between claim and commit holds back the
//! consumer (not other producers) until it resumes: records after it are
//! committed but wait behind it. That window is a `memcpy` of one record.

#[cfg(all(loom, test))]
mod tests;

#[cfg(all(test, not(loom), not(miri)))]
mod durable_model;

#[cfg(loom)]
use crossbeam_utils::CachePadded;

use crate::sync::{AtomicU64, AtomicU8, Ordering, UnsafeCell};

/// State of a word that does not start a committed record.
const FREE: u8 = 0;
/// The word starts a committed record: a header word, then its payload.
const COMMITTED: u8 = 1;
/// The word starts padding that runs to the end of the buffer.
const PADDING: u8 = 2;
/// The word starts a claimed record whose payload was not completely
/// written (its writer unwound): the consumer skips it without lending it.
const VOID: u8 = 3;

/// Bytes per word.
const WORD: usize = 8;

/// The largest capacity in bytes: records are at most half of it, which
/// keeps every length well inside the header's `u32`.
pub(crate) const MAX_CAPACITY: usize = 1 << 30;

/// Flag bit in `head`: the ring is closed, claims fail.
const CLOSED: u64 = 1 << 63;
/// Flag bit in `head`: the ring was inherited by a forked child that has no
/// writer yet; claims fail until [`Ring::clear_forked`].
const FORKED: u64 = 1 << 62;
const FLAGS: u64 = CLOSED | FORKED;

/// Why [`Ring::try_push`] did not take a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PushError {
    /// Not enough free space right now.
    Full,
    /// There is room, but only above the caller's limit.
    Shed,
    /// The record can never fit: it is larger than [`Ring::max_payload`].
    TooLarge,
    /// The ring is closed ([`Ring::close`]).
    Closed,
    /// The ring is in a forked child that has no writer yet.
    Forked,
}

/// The bytes of one record: how many there are, and how to write them into
/// the space claimed for them. Lets a producer encode straight into the
/// ring instead of into a buffer that is then copied.
pub(crate) trait Payload {
    /// The payload's length in bytes.
    fn payload_len(&self) -> usize;
    /// Writes the payload into `dst`, whose length is
    /// [`payload_len`](Payload::payload_len), every byte of it. May be
    /// called again for another claim if a claim fails (the blocking
    /// policy retries), so it must write the same bytes each time.
    fn write_to(&self, dst: &mut [u8]);
}

/// A record made of the concatenation of byte slices.
impl Payload for &[&[u8]] {
    #[inline]
    fn payload_len(&self) -> usize {
        self.iter().map(|p| p.len()).sum()
    }

    #[inline]
    fn write_to(&self, dst: &mut [u8]) {
        let mut at = 0;
        for part in *self {
            dst[at..at + part.len()].copy_from_slice(part);
            at += part.len();
        }
    }
}

/// A record header: payload length, level, kind and lap, packed in one
/// word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    pub(crate) len: u32,
    pub(crate) level: u8,
    pub(crate) kind: u8,
    /// The low bits of the record's position divided by the capacity:
    /// after a crash, tells a header this claim wrote from one left by an
    /// earlier lap (see `durable::recover`).
    pub(crate) lap: u16,
}

impl Header {
    pub(crate) fn pack(self) -> u64 {
        u64::from(self.len)
            | u64::from(self.level) << 32
            | u64::from(self.kind) << 40
            | u64::from(self.lap) << 48
    }

    pub(crate) fn unpack(word: u64) -> Header {
        Header {
            len: word as u32,
            level: (word >> 32) as u8,
            kind: (word >> 40) as u8,
            lap: (word >> 48) as u16,
        }
    }
}

/// The lap tag of a record at word position `pos` in a ring of `cap` words.
pub(crate) fn lap_of(pos: u64, cap: u64) -> u16 {
    (pos / cap) as u16
}

/// Words a record with `len` payload bytes occupies, header included.
pub(crate) fn record_words(len: usize) -> u64 {
    1 + len.div_ceil(WORD) as u64
}

/// The ring. See the module docs for the algorithm.
pub(crate) struct Ring {
    /// Where `head`, `tail`, the state bytes and the words live: the heap,
    /// or a shared file mapping for a crash-durable ring.
    store: Store,
    /// `capacity - 1`; the capacity in words is a power of two.
    mask: u64,
    /// `log2(capacity)`: a position's lap is `pos >> shift` (a shift, not
    /// the 64-bit division `lap_of` does: 26 to 90 cycles of latency on
    /// x86, on every claim).
    shift: u32,
    /// A crash-durable ring: the consumer leaves the state bytes and `tail`
    /// alone until [`Ring::release`], so that what it took stays readable
    /// from the file until the writer has recorded where it went.
    deferred: bool,
    /// The consumer's position when `deferred` (only the consumer touches
    /// it, so loom need not track it); otherwise unused. On a line of its
    /// own: producers read the fields above on every claim.
    read: crossbeam_utils::CachePadded<std::sync::atomic::AtomicU64>,
}

/// The ring's shared words, as the algorithm sees them.
///
/// - `head`: next word position to claim, plus the `CLOSED` and `FORKED`
///   flag bits (62 and 63). The position only grows, by compare-and-swap
///   from producers. Invariant: `tail <= position <= tail + capacity`.
/// - `tail`: word position up to which the consumer has released space.
///   Only the consumer writes it, with `Release` after resetting the state
///   bytes of everything before it.
/// - `seen_tail`: a value `tail` had, which producers read instead of
///   `tail` and refresh from it only when a claim would not fit (rtrb's
///   cached indices; a producer's read of `tail` misses in its cache
///   whenever the consumer published since). It lives beside `head`, on
///   the producers' cache lines. Invariant: `seen_tail <= tail`, so space
///   computed from it is never more than there is. Producers store it
///   with `Release` after an `Acquire` load of `tail`, and load it with
///   `Acquire`: the consumer's release of a word happens before any
///   producer's write to it, through the producer that refreshed it.
/// - `states`: one state byte per word (`FREE`, `COMMITTED`, `PADDING`,
///   `VOID`). Invariant: a word's state is not `FREE` only if the word
///   starts a claimed region whose producer has committed it and the
///   consumer has not yet released it.
/// - `words`: a word is written only by the producer that claimed it,
///   before its commit, and read only by the consumer, after it observed
///   the commit and before it releases the word.
#[cfg(loom)]
struct Store {
    head: CachePadded<AtomicU64>,
    seen_tail: AtomicU64,
    tail: CachePadded<AtomicU64>,
    states: Box<[AtomicU8]>,
    words: Box<[UnsafeCell<u64>]>,
}

#[cfg(loom)]
impl Store {
    fn heap(words: usize) -> Store {
        Store {
            head: CachePadded::new(AtomicU64::new(0)),
            seen_tail: AtomicU64::new(0),
            tail: CachePadded::new(AtomicU64::new(0)),
            states: (0..words).map(|_| AtomicU8::new(FREE)).collect(),
            words: (0..words).map(|_| UnsafeCell::new(0)).collect(),
        }
    }
    fn head(&self) -> &AtomicU64 {
        &self.head
    }
    fn seen_tail(&self) -> &AtomicU64 {
        &self.seen_tail
    }
    fn tail(&self) -> &AtomicU64 {
        &self.tail
    }
    fn states(&self) -> &[AtomicU8] {
        &self.states
    }
    fn words(&self) -> &[UnsafeCell<u64>] {
        &self.words
    }
}

/// Outside loom the store is one zeroed block of memory: `head` at 0,
/// `seen_tail` at [`SEEN_TAIL_AT`] (the same cache line), `tail` at
/// [`TAIL_AT`] (each on its own pair of cache lines), the state
/// bytes from [`STATES_AT`], then the words, 64-byte aligned. The same
/// layout serves the heap and a file mapping (see [`Ring::region_size`]).
#[cfg(not(loom))]
struct Store {
    base: std::ptr::NonNull<u8>,
    words: usize,
    owner: Owner,
}

#[cfg(not(loom))]
enum Owner {
    /// Allocated with this layout by [`Store::heap`]; freed on drop.
    Heap(std::alloc::Layout),
    /// Part of a mapping the ring keeps alive (it unmaps when the last
    /// owner drops).
    Mapped(#[allow(dead_code)] std::sync::Arc<dyn std::any::Any + Send + Sync>),
}

/// Only the heap or mapped store has a `seen_tail` word at a fixed offset;
/// the recovery scan does not read it.
#[cfg(not(loom))]
const SEEN_TAIL_AT: usize = 8;
const TAIL_AT: usize = 128;
const STATES_AT: usize = 256;

/// The layout of a region (used by [`Ring::region_size`] and [`scan`],
/// which are plain arithmetic and byte reads, so loom builds them too).
impl Store {
    fn words_at(words: usize) -> usize {
        (STATES_AT + words).next_multiple_of(64)
    }

    fn size(words: usize) -> usize {
        Self::words_at(words) + words * WORD
    }
}

#[cfg(not(loom))]
impl Store {
    fn heap(words: usize) -> Store {
        let layout = std::alloc::Layout::from_size_align(Self::size(words), 4096)
            .expect("ring size checked by the builder");
        // SAFETY: the layout's size is nonzero (at least STATES_AT).
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
        let Some(base) = std::ptr::NonNull::new(ptr) else {
            std::alloc::handle_alloc_error(layout)
        };
        Store {
            base,
            words,
            owner: Owner::Heap(layout),
        }
    }

    fn head(&self) -> &AtomicU64 {
        // SAFETY: `base` points to `Store::size(words)` zeroed bytes,
        // 4096-aligned, alive as long as `self` (`Owner`); offset 0 holds
        // an `AtomicU64` (zero is a valid one) that is only ever accessed
        // atomically.
        unsafe { &*self.base.as_ptr().cast::<AtomicU64>() }
    }

    fn seen_tail(&self) -> &AtomicU64 {
        // SAFETY: as in `head`, at offset SEEN_TAIL_AT (8-aligned).
        unsafe { &*self.base.as_ptr().add(SEEN_TAIL_AT).cast::<AtomicU64>() }
    }

    fn tail(&self) -> &AtomicU64 {
        // SAFETY: as in `head`, at offset TAIL_AT (8-aligned).
        unsafe { &*self.base.as_ptr().add(TAIL_AT).cast::<AtomicU64>() }
    }

    fn states(&self) -> &[AtomicU8] {
        // SAFETY: as in `head`: `words` state bytes from STATES_AT, only
        // ever accessed atomically.
        unsafe {
            std::slice::from_raw_parts(
                self.base.as_ptr().add(STATES_AT).cast::<AtomicU8>(),
                self.words,
            )
        }
    }

    fn words(&self) -> &[UnsafeCell<u64>] {
        // SAFETY: as in `head`: `words` 8-byte words from `words_at`
        // (64-aligned). `UnsafeCell<u64>` has the layout of a `u64`, so
        // shared references to the cells let the ring's protocol (module
        // docs) decide who writes through them.
        unsafe {
            std::slice::from_raw_parts(
                self.base
                    .as_ptr()
                    .add(Self::words_at(self.words))
                    .cast::<UnsafeCell<u64>>(),
                self.words,
            )
        }
    }
}

#[cfg(not(loom))]
impl Drop for Store {
    fn drop(&mut self) {
        if let Owner::Heap(layout) = self.owner {
            // SAFETY: allocated in `Store::heap` with this layout, and no
            // reference into it outlives the ring.
            unsafe { std::alloc::dealloc(self.base.as_ptr(), layout) };
        }
    }
}

impl std::fmt::Debug for Ring {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ring")
            .field("capacity_bytes", &self.capacity_bytes())
            .field("used_bytes", &self.used_bytes())
            .finish()
    }
}

impl Ring {
    /// The capacity in words of a ring of at least `min_bytes` bytes
    /// (rounded up to a power of two, at least 64 bytes).
    fn words_for(min_bytes: usize) -> usize {
        debug_assert!(min_bytes <= MAX_CAPACITY, "checked by the builder");
        min_bytes.div_ceil(WORD).max(8).next_power_of_two()
    }

    /// A ring of at least `min_bytes` bytes (rounded up to a power of two,
    /// at least 64 bytes).
    pub(crate) fn new(min_bytes: usize) -> Ring {
        let words = Self::words_for(min_bytes);
        let ring = Ring::with_store(Store::heap(words), words, false);
        // Touch every page now: zeroed allocations are mapped lazily, and a
        // page fault on the first lap would land on a request thread
        // (measured with benches/latency.rs on a fresh 8 MiB ring: p99.9 of
        // `info!` with 3 deferred arguments 2.9 us before, 0.19 us after).
        ring.prefault();
        ring
    }

    /// The bytes a ring of at least `min_bytes` needs in a region of its
    /// own ([`Ring::in_region`]).
    pub(crate) fn region_size(min_bytes: usize) -> usize {
        Store::size(Self::words_for(min_bytes))
    }

    /// A crash-durable ring of at least `min_bytes` bytes in a region of
    /// [`Ring::region_size`] bytes at `base`, which `owner` keeps mapped.
    /// The consumer defers handing space back until [`Ring::release`].
    ///
    /// # Safety
    ///
    /// `base` is 4096-aligned, points to `Ring::region_size(min_bytes)`
    /// zeroed bytes that nothing else reads or writes while the ring
    /// lives (another process may read them after this one died), and
    /// stays valid as long as `owner` does.
    #[cfg(not(loom))]
    pub(crate) unsafe fn in_region(
        min_bytes: usize,
        base: std::ptr::NonNull<u8>,
        owner: std::sync::Arc<dyn std::any::Any + Send + Sync>,
    ) -> Ring {
        let words = Self::words_for(min_bytes);
        let store = Store {
            base,
            words,
            owner: Owner::Mapped(owner),
        };
        let ring = Ring::with_store(store, words, true);
        ring.prefault();
        ring
    }

    /// Under loom: a deferred ring in loom's store on the heap. Loom can
    /// model only its own atomics and cells, not plain memory, so the
    /// region is not used; the protocol (deferred consume and release) is
    /// the same one the loom models check.
    ///
    /// # Safety
    ///
    /// None needed: the region is not touched.
    #[cfg(loom)]
    pub(crate) unsafe fn in_region(
        min_bytes: usize,
        _base: std::ptr::NonNull<u8>,
        _owner: std::sync::Arc<dyn std::any::Any + Send + Sync>,
    ) -> Ring {
        let words = Ring::words_for(min_bytes);
        Ring::with_store(Store::heap(words), words, true)
    }

    fn with_store(store: Store, words: usize, deferred: bool) -> Ring {
        Ring {
            store,
            mask: words as u64 - 1,
            shift: words.trailing_zeros(),
            deferred,
            read: crossbeam_utils::CachePadded::new(std::sync::atomic::AtomicU64::new(0)),
        }
    }

    /// Writes every page of the store once (the values it already holds),
    /// so that no producer takes the first-touch page fault.
    fn prefault(&self) {
        #[cfg(not(loom))]
        {
            const PAGE: usize = 4096;
            for s in self.states().iter().step_by(PAGE) {
                s.store(s.load(Ordering::Relaxed), Ordering::Relaxed);
            }
            for w in self.words().iter().step_by(PAGE / WORD) {
                // SAFETY: nothing else runs on the ring yet (it is being
                // built), so this thread owns every word.
                unsafe { w.get().write_volatile(w.get().read()) };
            }
        }
    }

    #[inline]
    fn head(&self) -> &AtomicU64 {
        self.store.head()
    }

    #[inline]
    fn seen_tail(&self) -> &AtomicU64 {
        self.store.seen_tail()
    }

    #[inline]
    fn tail(&self) -> &AtomicU64 {
        self.store.tail()
    }

    #[inline]
    fn states(&self) -> &[AtomicU8] {
        self.store.states()
    }

    #[inline]
    fn words(&self) -> &[UnsafeCell<u64>] {
        self.store.words()
    }

    pub(crate) fn capacity_words(&self) -> u64 {
        self.mask + 1
    }

    /// Capacity in bytes, record headers included.
    pub(crate) fn capacity_bytes(&self) -> usize {
        self.words().len() * WORD
    }

    /// The largest payload a record may have: such a record fits in half the
    /// ring, so it can always be placed once the ring drains, wherever the
    /// end of the buffer falls.
    pub(crate) fn max_payload(&self) -> usize {
        (self.capacity_words() as usize / 2 - 1) * WORD
    }

    /// Bytes claimed and not yet released. Racy: stale as soon as it returns.
    pub(crate) fn used_bytes(&self) -> usize {
        let tail = self.tail().load(Ordering::Acquire);
        let head = self.head().load(Ordering::Acquire) & !FLAGS;
        (head.saturating_sub(tail) as usize) * WORD
    }

    /// The claim position: every record claimed before this call ends at or
    /// before it. Used as a flush target. `SeqCst` so that it orders with the
    /// producers' claims and the writer's sleep flag.
    pub(crate) fn claimed(&self) -> u64 {
        self.head().load(Ordering::SeqCst) & !FLAGS
    }

    /// Closes the ring: from now on every claim fails with
    /// [`PushError::Closed`]. Returns the final claim position: every record
    /// accepted lies before it. Idempotent.
    pub(crate) fn close(&self) -> u64 {
        self.head().fetch_or(CLOSED, Ordering::SeqCst) & !FLAGS
    }

    /// Whether this is a forked child's ring without a writer yet.
    pub(crate) fn is_forked(&self) -> bool {
        self.head().load(Ordering::SeqCst) & FORKED != 0
    }

    /// In a forked child, before any other thread exists: forgets every
    /// record (they are the parent's, and the parent writes them), including
    /// regions claimed by threads that do not exist in the child, and sets
    /// the `FORKED` flag so that claims fail until the child has a writer.
    /// Only atomic stores: safe in an `atfork` child handler.
    pub(crate) fn reset_after_fork(&self) {
        let head = self.head().load(Ordering::Relaxed);
        for s in self.states().iter() {
            s.store(FREE, Ordering::Relaxed);
        }
        let position = head & !FLAGS;
        self.read.store(position, Ordering::Relaxed);
        self.tail().store(position, Ordering::Release);
        let flag = if head & CLOSED != 0 { CLOSED } else { FORKED };
        self.head().store(position | flag, Ordering::SeqCst);
    }

    /// Clears the `FORKED` flag (the child now has a writer).
    pub(crate) fn clear_forked(&self) {
        self.head().fetch_and(!FORKED, Ordering::SeqCst);
    }

    /// The release position: every record before it has been consumed.
    pub(crate) fn released(&self) -> u64 {
        self.tail().load(Ordering::Acquire)
    }

    /// Copies the concatenation of `parts` into the ring as one record.
    ///
    /// Never waits and never allocates. On success returns the bytes in use
    /// just after the claim (for high-water marks).
    #[cfg(test)]
    pub(crate) fn try_push(
        &self,
        level: u8,
        kind: u8,
        parts: &[&[u8]],
    ) -> Result<usize, PushError> {
        self.try_push_below(level, kind, &parts, usize::MAX)
    }

    /// Like `try_push`, but refuses with [`PushError::Shed`] if the bytes in
    /// use after the claim would exceed `limit_bytes` (level protection).
    #[inline]
    pub(crate) fn try_push_below<P: Payload + ?Sized>(
        &self,
        level: u8,
        kind: u8,
        payload: &P,
        limit_bytes: usize,
    ) -> Result<usize, PushError> {
        let len = payload.payload_len();
        if len > self.max_payload() {
            return Err(PushError::TooLarge);
        }
        let need = record_words(len);
        let cap = self.capacity_words();
        let limit = (limit_bytes / WORD) as u64;

        // Step 1: claim, against the `tail` producers last saw; the real
        // one is read only when that says the record does not fit.
        let mut head = self.head().load(Ordering::Relaxed);
        let mut tail = self.seen_tail().load(Ordering::Acquire);
        let mut fresh = false;
        let (start, used) = loop {
            if head & FLAGS != 0 {
                return Err(if head & CLOSED != 0 {
                    PushError::Closed
                } else {
                    PushError::Forked
                });
            }
            if tail > head {
                // Our `head` is stale: others claimed and the consumer
                // already released past it.
                head = self.head().load(Ordering::Relaxed);
                continue;
            }
            let offset = head & self.mask;
            let to_end = cap - offset;
            let pad = if need <= to_end { 0 } else { to_end };
            let new_head = head + pad + need;
            if new_head - tail > cap.min(limit) {
                if !fresh {
                    tail = self.refresh_tail();
                    fresh = true;
                    continue;
                }
                return Err(if new_head - tail > cap {
                    PushError::Full
                } else {
                    PushError::Shed
                });
            }
            match self.head().compare_exchange_weak(
                head,
                new_head,
                Ordering::SeqCst,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    if pad > 0 {
                        // The padding holds no data: committing it needs only
                        // its state byte.
                        self.states()[offset as usize].store(PADDING, Ordering::Release);
                    }
                    break (head + pad, new_head - tail);
                }
                Err(actual) => head = actual,
            }
        };

        // Step 2: write. The claimed words [start, start + need) lie inside
        // the buffer without wrapping (padding took care of that).
        let index = (start & self.mask) as usize;
        debug_assert!(index + need as usize <= self.words().len());
        let header = Header {
            len: len as u32,
            level,
            kind,
            lap: (start >> self.shift) as u16,
        };
        // If the payload's writer unwinds, the region is committed as VOID
        // so that the consumer skips it instead of stopping there forever.
        struct VoidOnUnwind<'a>(&'a AtomicU8);
        impl Drop for VoidOnUnwind<'_> {
            fn drop(&mut self) {
                self.0.store(VOID, Ordering::Release);
            }
        }
        let void = VoidOnUnwind(&self.states()[index]);
        self.write_record(index, header, payload);
        std::mem::forget(void);

        // Step 3: commit.
        self.states()[index].store(COMMITTED, Ordering::Release);
        Ok(used as usize * WORD)
    }

    /// Reads `tail` and shares what it read with the other producers
    /// (`seen_tail`). A slower producer may store an older value over a
    /// newer one: that only costs a refresh, as `seen_tail <= tail` holds
    /// either way.
    #[cold]
    #[inline(never)]
    fn refresh_tail(&self) -> u64 {
        let tail = self.tail().load(Ordering::Acquire);
        self.seen_tail().store(tail, Ordering::Release);
        tail
    }

    /// Lends up to roughly `max_bytes` of committed records, oldest first, to
    /// `f`, then releases their space. Returns how many records it lent.
    ///
    /// Must only be called by one thread at a time (the writer): it is the
    /// single consumer. `&mut self` is not required because producers share
    /// the ring; the writer owns the only consumer handle instead.
    pub(crate) fn consume(&self, max_bytes: usize, mut f: impl FnMut(Header, &[u8])) -> usize {
        /// Step 4 on every exit, unwinding included: hands the space back
        /// (or, in a deferred ring, moves the consumer's own position).
        /// Release orders our reads of the words and our resets of the
        /// state bytes before any producer's reuse of them.
        struct Publish<'a> {
            to: &'a AtomicU64,
            read: Option<&'a std::sync::atomic::AtomicU64>,
            start: u64,
            pos: u64,
        }
        impl Drop for Publish<'_> {
            fn drop(&mut self) {
                if self.pos != self.start {
                    match self.read {
                        Some(read) => read.store(self.pos, Ordering::Relaxed),
                        None => self.to.store(self.pos, Ordering::Release),
                    }
                }
            }
        }
        let cap = self.capacity_words();
        let deferred = self.deferred;
        let start = if deferred {
            self.read.load(Ordering::Relaxed)
        } else {
            self.tail().load(Ordering::Relaxed)
        };
        let mut publish = Publish {
            to: self.tail(),
            read: deferred.then_some(&self.read),
            start,
            pos: start,
        };
        // A deferred ring keeps the state bytes of what it consumed until
        // `release`: one lap past `tail` they would be read again.
        let lap_end = if deferred {
            self.tail().load(Ordering::Relaxed) + cap
        } else {
            u64::MAX
        };
        let mut records = 0;
        while ((publish.pos - start) as usize) * WORD < max_bytes && publish.pos < lap_end {
            let pos = publish.pos;
            let index = (pos & self.mask) as usize;
            match self.states()[index].load(Ordering::Acquire) {
                FREE => break,
                PADDING => {
                    if !deferred {
                        self.states()[index].store(FREE, Ordering::Relaxed);
                    }
                    publish.pos = pos + (cap - index as u64);
                }
                state @ (COMMITTED | VOID) => {
                    let header = self.read_header(index);
                    let len = header.len as usize;
                    assert!(
                        index + record_words(len) as usize <= self.words().len(),
                        "nowait bug: record at word {index} with {len} bytes overruns the ring"
                    );
                    // Consumed from here on, even if `f` unwinds: the space
                    // is only handed back when `publish` drops, after `f`.
                    if !deferred {
                        self.states()[index].store(FREE, Ordering::Relaxed);
                    }
                    publish.pos = pos + record_words(len);
                    // A void record (its writer unwound) is skipped unread.
                    if state == COMMITTED {
                        records += 1;
                        self.lend_payload(index, header, &mut f);
                    }
                }
                other => unreachable!("nowait bug: ring state byte {other} at word {index}"),
            }
        }
        records
    }

    /// Lends the oldest committed record to `f` without consuming it, or
    /// returns `None` if there is none yet. Padding and void records in
    /// front of it are consumed on the way. Consumer only, and only on a
    /// ring that does not defer its release (a thread's lane, or the ring
    /// of a logger with lanes).
    ///
    /// With [`Ring::skip_front`], lets the consumer merge several rings:
    /// look at each one's oldest record, take the one it wants. The
    /// cursor forms ([`Ring::front_at`], [`Ring::take_at`],
    /// [`Ring::publish_to`]) do the same and hand the space back once per
    /// batch instead of once per record.
    #[cfg(test)]
    pub(crate) fn peek<R>(&self, f: impl FnOnce(Header, &[u8]) -> R) -> Option<R> {
        let mut pos = self.consumed();
        let out = self.front_at(&mut pos, f);
        self.publish_to(pos);
        out
    }

    /// Consumes the record [`Ring::peek`] last lent and hands its space
    /// back. Consumer only; a no-op if there is no committed record.
    #[cfg(test)]
    pub(crate) fn skip_front(&self) {
        let mut pos = self.consumed();
        self.take_at(&mut pos);
        self.publish_to(pos);
    }

    /// [`Ring::peek`] at the consumer's cursor `pos` (which starts at
    /// [`Ring::consumed`]): moves it past padding and void records, then
    /// lends the committed record there without taking it.
    #[inline]
    pub(crate) fn front_at<R>(
        &self,
        pos: &mut u64,
        f: impl FnOnce(Header, &[u8]) -> R,
    ) -> Option<R> {
        debug_assert!(!self.deferred, "merging is for rings that never defer");
        let cap = self.capacity_words();
        let mut f = Some(f);
        let mut out = None;
        loop {
            let index = (*pos & self.mask) as usize;
            match self.states()[index].load(Ordering::Acquire) {
                FREE => return None,
                PADDING => {
                    self.states()[index].store(FREE, Ordering::Relaxed);
                    *pos += cap - index as u64;
                }
                VOID => {
                    let len = self.read_header(index).len as usize;
                    self.states()[index].store(FREE, Ordering::Relaxed);
                    *pos += record_words(len);
                }
                COMMITTED => {
                    let header = self.read_header(index);
                    assert!(
                        index + record_words(header.len as usize) as usize <= self.words().len(),
                        "nowait bug: record at word {index} with {} bytes overruns the ring",
                        header.len
                    );
                    self.lend_payload(index, header, &mut |h, p| {
                        if let Some(f) = f.take() {
                            out = Some(f(h, p));
                        }
                    });
                    return out;
                }
                other => unreachable!("nowait bug: ring state byte {other} at word {index}"),
            }
        }
    }

    /// Takes the committed record at the cursor `pos` (the one
    /// [`Ring::front_at`] lent) and moves the cursor past it. Its space
    /// goes back to the producers at the next [`Ring::publish_to`].
    #[inline]
    pub(crate) fn take_at(&self, pos: &mut u64) {
        let index = (*pos & self.mask) as usize;
        if self.states()[index].load(Ordering::Acquire) != COMMITTED {
            debug_assert!(false, "nowait bug: take_at without a lent record");
            return;
        }
        let len = self.read_header(index).len as usize;
        self.states()[index].store(FREE, Ordering::Relaxed);
        *pos += record_words(len);
    }

    /// Hands back the space of everything before the cursor `pos`.
    /// Release: our reads of those records and the resets of their state
    /// bytes happen before any producer's reuse of the space.
    #[inline]
    pub(crate) fn publish_to(&self, pos: u64) {
        if pos != self.tail().load(Ordering::Relaxed) {
            self.tail().store(pos, Ordering::Release);
        }
    }

    /// Whether every record claimed so far was consumed. Racy while
    /// producers run; final once the ring is closed and nothing is between
    /// claim and commit.
    pub(crate) fn is_drained(&self) -> bool {
        self.consumed() >= self.claimed()
    }

    /// The consumer's position: every record before it was lent (equal to
    /// [`Ring::released`] except in a deferred ring between
    /// [`Ring::consume`] and [`Ring::release`]).
    pub(crate) fn consumed(&self) -> u64 {
        if self.deferred {
            self.read.load(Ordering::Relaxed)
        } else {
            self.tail().load(Ordering::Relaxed)
        }
    }

    /// In a deferred (crash-durable) ring, hands back the space of every
    /// record consumed so far: resets their state bytes, then publishes
    /// `tail`. The writer calls it once it recorded where those records
    /// went. A no-op otherwise. Consumer only.
    pub(crate) fn release(&self) {
        if !self.deferred {
            return;
        }
        let read = self.read.load(Ordering::Relaxed);
        let tail = self.tail().load(Ordering::Relaxed);
        if read == tail {
            return;
        }
        let states = self.states();
        // Only record starts are ever set, but every state byte in the
        // range is FREE afterwards either way.
        for pos in tail..read {
            states[(pos & self.mask) as usize].store(FREE, Ordering::Relaxed);
        }
        self.tail().store(read, Ordering::Release);
    }
}

// === reading a crash-durable ring left by a process that died ===

/// What [`scan`] finds in the ring of a process that died.
#[derive(Debug)]
pub(crate) enum Found<'a> {
    /// A committed record, claimed at ring position `at`.
    Record {
        at: u64,
        header: Header,
        payload: &'a [u8],
    },
    /// A claimed region that was never committed: its producer died
    /// while writing it (or unwound), so it is counted, never decoded.
    Torn,
}

/// Walks the committed records of a ring store copied from a file that a
/// process which died left behind, from word position `from` (where the
/// writer had recorded that it took everything before) to the claim
/// position, handing each to `f`. Plain reads of a copy: the process that
/// wrote it is gone. Errors name what is inconsistent (a file that is not
/// a ring, or was damaged).
pub(crate) fn scan(
    region: &[u8],
    min_bytes: usize,
    from: u64,
    mut f: impl FnMut(Found<'_>),
) -> Result<(), String> {
    let words = Ring::words_for(min_bytes);
    if region.len() < Store::size(words) {
        return Err(format!(
            "the ring needs {} bytes, the file holds {}",
            Store::size(words),
            region.len()
        ));
    }
    let word_at = |at: usize| u64::from_le_bytes(region[at..at + WORD].try_into().unwrap());
    let head = word_at(0) & !FLAGS;
    let tail = word_at(TAIL_AT);
    if !(tail <= from && from <= head && head - tail <= words as u64) {
        return Err(format!(
            "inconsistent positions: released {tail}, taken {from}, claimed {head}"
        ));
    }
    let cap = words as u64;
    let states = &region[STATES_AT..STATES_AT + words];
    let data = &region[Store::words_at(words)..Store::words_at(words) + words * WORD];
    let mut pos = from;
    // The first word after a torn one whose state byte is set (or the end
    // of the buffer, or the claim position), found once for a run of torn
    // words and kept for the rest of it: each state byte is looked at once.
    let mut set_at = from;
    while pos < head {
        let index = (pos & (cap - 1)) as usize;
        let left = head - pos;
        let header = Header::unpack(u64::from_le_bytes(
            data[index * WORD..(index + 1) * WORD].try_into().unwrap(),
        ));
        let need = record_words(header.len as usize);
        let fits = index as u64 + need <= cap && need <= left;
        match states[index] {
            PADDING => pos += cap - index as u64,
            state @ (COMMITTED | VOID) => {
                if !fits {
                    return Err(format!(
                        "a record at word {pos} of {} bytes runs past the claims",
                        header.len
                    ));
                }
                if state == COMMITTED {
                    let at = (index + 1) * WORD;
                    f(Found::Record {
                        at: pos,
                        header,
                        payload: &data[at..at + header.len as usize],
                    });
                } else {
                    f(Found::Torn);
                }
                pos += need;
            }
            FREE => {
                f(Found::Torn);
                // No word of a claim has its state set but the first, so
                // every committed record after this one starts at or
                // after the next word whose state was set (or the end of
                // the buffer, or the claim position). Between `pos` and a
                // `set_at` found from an earlier word of this run, every
                // state byte is FREE: it is still the next.
                if set_at <= pos {
                    let limit = left.min(cap - index as u64) as usize;
                    set_at = pos
                        + states[index + 1..index + limit]
                            .iter()
                            .position(|&s| s != FREE)
                            .map_or(limit, |k| k + 1) as u64;
                }
                let next = set_at - pos;
                // A header of this lap is this claim's if its producer
                // wrote it (the first store of a claim) before it died,
                // and then a torn claim after it is counted on its own.
                // But it may also be a payload word of an earlier lap
                // that reads as one: its length is trusted only as far as
                // `next`, never over a record.
                pos += if header.lap == lap_of(pos, cap) && need <= next {
                    need
                } else {
                    next
                };
            }
            other => return Err(format!("state byte {other} at word {pos}")),
        }
    }
    Ok(())
}

// === storage access (the unsafe part) ===

#[cfg(not(loom))]
impl Ring {
    fn base(&self) -> *mut u8 {
        // `UnsafeCell<u64>` is `repr(transparent)`, so the slice is a run of
        // `u64`s; the pointer keeps the whole slice's provenance.
        self.words().as_ptr() as *mut u8
    }

    #[inline]
    fn write_record<P: Payload + ?Sized>(&self, index: usize, header: Header, payload: &P) {
        let len = header.len as usize;
        debug_assert!(index + record_words(len) as usize <= self.words().len());
        // SAFETY: `index` starts a region this producer claimed and that lies
        // inside the buffer (checked above). Until it commits, no other
        // thread reads or writes these words: producers claim disjoint regions
        // and the consumer stops at the FREE state byte of this region.
        unsafe { self.words()[index].get().write(header.pack()) };
        // SAFETY: as above, for the `len` payload bytes after the header,
        // which lie in the claimed region; they are initialised (zeroed at
        // creation, only ever overwritten with bytes). The slice is the only
        // reference to them until the commit, and it does not outlive this
        // call.
        let dst =
            unsafe { std::slice::from_raw_parts_mut(self.base().add((index + 1) * WORD), len) };
        payload.write_to(dst);
    }

    fn read_header(&self, index: usize) -> Header {
        // SAFETY: the consumer observed COMMITTED with Acquire, so the
        // producer's writes to this region happened before, and nobody writes
        // it again until the consumer releases it by advancing `tail`.
        Header::unpack(unsafe { self.words()[index].get().read() })
    }

    fn lend_payload(&self, index: usize, header: Header, f: &mut impl FnMut(Header, &[u8])) {
        let len = header.len as usize;
        debug_assert!(index + record_words(len) as usize <= self.words().len());
        // SAFETY: as in `read_header`; the payload lies in the committed
        // region (the caller checked its bounds) and is initialised (the
        // words were zeroed at creation and only ever overwritten with
        // bytes). `tail` is not advanced past it until `f` returns.
        let payload =
            unsafe { std::slice::from_raw_parts(self.base().add((index + 1) * WORD), len) };
        f(header, payload);
    }
}

#[cfg(loom)]
impl Ring {
    fn write_record<P: Payload + ?Sized>(&self, index: usize, header: Header, payload: &P) {
        let mut bytes = vec![0u8; header.len as usize];
        payload.write_to(&mut bytes);
        self.words()[index].with_mut(|p| {
            // SAFETY: claimed region, see the non-loom version.
            unsafe { *p = header.pack() }
        });
        for (i, chunk) in bytes.chunks(WORD).enumerate() {
            let mut word = [0u8; WORD];
            word[..chunk.len()].copy_from_slice(chunk);
            self.words()[index + 1 + i].with_mut(|p| {
                // SAFETY: claimed region, see the non-loom version.
                unsafe { *p = u64::from_le_bytes(word) }
            });
        }
    }

    fn read_header(&self, index: usize) -> Header {
        // SAFETY: committed region, see the non-loom version.
        Header::unpack(self.words()[index].with(|p| unsafe { *p }))
    }

    fn lend_payload(&self, index: usize, header: Header, f: &mut impl FnMut(Header, &[u8])) {
        let len = header.len as usize;
        let mut bytes = Vec::with_capacity(len);
        for i in 0..len.div_ceil(WORD) {
            // SAFETY: committed region, see the non-loom version.
            let word = self.words()[index + 1 + i].with(|p| unsafe { *p });
            bytes.extend_from_slice(&word.to_le_bytes());
        }
        bytes.truncate(len);
        f(header, &bytes);
    }
}

// SAFETY: the words are only accessed under the claim/commit/release protocol
// described in the module docs, which gives every access to a word a single
// owner at a time; everything else is atomics.
unsafe impl Sync for Ring {}
// SAFETY: the ring owns its buffers; nothing in it is tied to a thread.
unsafe impl Send for Ring {}

#[cfg(all(test, not(loom)))]
mod unit_tests {
    use super::*;
    use std::sync::Arc;

    fn drain(ring: &Ring) -> Vec<(u8, Vec<u8>)> {
        let mut out = Vec::new();
        ring.consume(usize::MAX, |h, p| out.push((h.level, p.to_vec())));
        out
    }

    #[test]
    fn push_then_consume_in_order() {
        let ring = Ring::new(256);
        ring.try_push(1, 0, &[b"hello"]).unwrap();
        ring.try_push(2, 0, &[b"wor", b"ld!"]).unwrap();
        ring.try_push(3, 0, &[]).unwrap();
        assert_eq!(
            drain(&ring),
            vec![(1, b"hello".to_vec()), (2, b"world!".to_vec()), (3, vec![])]
        );
        assert_eq!(ring.used_bytes(), 0);
        assert!(drain(&ring).is_empty());
    }

    #[test]
    fn full_then_room_again() {
        let ring = Ring::new(64); // 8 words
                                  // 1 header + 2 payload words each.
        assert!(ring.try_push(0, 0, &[&[1u8; 16]]).is_ok());
        assert!(ring.try_push(0, 0, &[&[2u8; 16]]).is_ok());
        assert_eq!(ring.try_push(0, 0, &[&[3u8; 16]]), Err(PushError::Full));
        assert_eq!(drain(&ring).len(), 2);
        assert!(ring.try_push(0, 0, &[&[3u8; 16]]).is_ok());
    }

    #[test]
    fn too_large_is_rejected_not_full() {
        let ring = Ring::new(64);
        assert_eq!(ring.max_payload(), 24);
        assert!(ring.try_push(0, 0, &[&[0u8; 24]]).is_ok());
        assert_eq!(ring.try_push(0, 0, &[&[0u8; 25]]), Err(PushError::TooLarge));
    }

    #[test]
    fn wraps_around_with_padding() {
        let ring = Ring::new(64); // 8 words
        for round in 0..50u8 {
            // 3 words, then 4 words: the second often needs padding.
            ring.try_push(0, 0, &[&[round; 9]]).unwrap();
            ring.try_push(1, 0, &[&[round; 17]]).unwrap();
            let got = drain(&ring);
            assert_eq!(got, vec![(0, vec![round; 9]), (1, vec![round; 17])]);
        }
    }

    #[test]
    fn consume_respects_max_bytes() {
        let ring = Ring::new(1024);
        for i in 0..10u8 {
            ring.try_push(0, 0, &[&[i; 8]]).unwrap();
        }
        let mut n = 0;
        assert_eq!(ring.consume(32, |_, _| n += 1), 2);
        assert_eq!(n, 2);
        assert_eq!(drain(&ring).len(), 8);
    }

    #[test]
    fn close_refuses_later_claims_and_returns_the_final_position() {
        let ring = Ring::new(256);
        ring.try_push(0, 0, &[b"before"]).unwrap();
        let end = ring.close();
        assert_eq!(end, 2);
        assert_eq!(ring.try_push(0, 0, &[b"after"]), Err(PushError::Closed));
        assert_eq!(ring.claimed(), end);
        assert_eq!(drain(&ring), vec![(0, b"before".to_vec())]);
        assert_eq!(ring.close(), end, "idempotent");
    }

    #[test]
    fn fork_reset_forgets_the_parents_records_and_blocks_claims() {
        let ring = Ring::new(256);
        ring.try_push(0, 0, &[b"parent"]).unwrap();
        ring.reset_after_fork();
        assert_eq!(ring.try_push(0, 0, &[b"child"]), Err(PushError::Forked));
        assert!(drain(&ring).is_empty());
        ring.clear_forked();
        ring.try_push(1, 0, &[b"child"]).unwrap();
        assert_eq!(drain(&ring), vec![(1, b"child".to_vec())]);
    }

    #[test]
    fn a_panicking_consumer_does_not_stall_the_ring() {
        let ring = Ring::new(256);
        ring.try_push(0, 0, &[b"poison"]).unwrap();
        ring.try_push(1, 0, &[b"next"]).unwrap();
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            ring.consume(usize::MAX, |h, _| assert_ne!(h.level, 0, "boom"));
        }));
        assert!(unwound.is_err());
        // The record that panicked is consumed; the next one is still there.
        assert_eq!(drain(&ring), vec![(1, b"next".to_vec())]);
        assert_eq!(ring.used_bytes(), 0);
    }

    /// A zeroed, page-aligned region standing in for a file mapping.
    struct Region {
        ptr: std::ptr::NonNull<u8>,
        layout: std::alloc::Layout,
    }
    // SAFETY: plain memory, shared only through the ring's protocol.
    unsafe impl Send for Region {}
    // SAFETY: as above.
    unsafe impl Sync for Region {}
    impl Drop for Region {
        fn drop(&mut self) {
            // SAFETY: allocated in `deferred_ring` with this layout.
            unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) }
        }
    }

    fn deferred_ring(bytes: usize) -> (Ring, Arc<Region>) {
        let layout = std::alloc::Layout::from_size_align(Ring::region_size(bytes), 4096).unwrap();
        // SAFETY: nonzero size.
        let ptr = std::ptr::NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) }).unwrap();
        let region = Arc::new(Region { ptr, layout });
        // SAFETY: zeroed, aligned, `region_size` bytes, kept alive by the
        // owner handed to the ring.
        let ring = unsafe { Ring::in_region(bytes, ptr, region.clone()) };
        (ring, region)
    }

    fn copy(ring: &Ring, region: &Region, bytes: usize) -> Vec<u8> {
        let _ = ring;
        // SAFETY: the region holds `region_size(bytes)` bytes; no producer
        // runs while the test copies it.
        unsafe { std::slice::from_raw_parts(region.ptr.as_ptr(), Ring::region_size(bytes)) }
            .to_vec()
    }

    fn scanned(copy: &[u8], bytes: usize, from: u64) -> Vec<Option<Vec<u8>>> {
        let mut out = Vec::new();
        scan(copy, bytes, from, |found| {
            out.push(match found {
                Found::Record { payload, .. } => Some(payload.to_vec()),
                Found::Torn => None,
            })
        })
        .unwrap();
        out
    }

    #[test]
    fn a_deferred_ring_keeps_consumed_space_until_released() {
        let (ring, _region) = deferred_ring(64); // 8 words
        ring.try_push(0, 0, &[&[1u8; 16]]).unwrap();
        ring.try_push(0, 0, &[&[2u8; 16]]).unwrap();
        assert_eq!(drain(&ring).len(), 2);
        assert_eq!(ring.consumed(), 6);
        assert_eq!(ring.released(), 0);
        assert_eq!(ring.try_push(0, 0, &[&[3u8; 16]]), Err(PushError::Full));
        ring.release();
        assert_eq!(ring.released(), 6);
        ring.try_push(0, 0, &[&[3u8; 16]]).unwrap();
        assert_eq!(drain(&ring), vec![(0, vec![3u8; 16])]);
        ring.release();
        // A full ring, consumed and not released: the consumer must not
        // read its own records again a lap later.
        let (full, _r) = deferred_ring(64);
        full.try_push(0, 0, &[&[7u8; 24]]).unwrap(); // 4 words
        full.try_push(0, 0, &[&[8u8; 24]]).unwrap(); // 4 words: full
        assert_eq!(drain(&full).len(), 2);
        assert!(
            drain(&full).is_empty(),
            "a lap of consumed records read again"
        );
        full.release();
        assert!(drain(&full).is_empty());
        let (ring, _region) = deferred_ring(128);
        for round in 0..40u8 {
            ring.try_push(0, 0, &[&[round; 9]]).unwrap();
            ring.try_push(1, 0, &[&[round; 17]]).unwrap();
            assert_eq!(
                drain(&ring),
                vec![(0, vec![round; 9]), (1, vec![round; 17])]
            );
            ring.release();
        }
    }

    #[test]
    fn scan_finds_what_was_not_taken_and_counts_torn_claims() {
        let bytes = 256;
        let (ring, region) = deferred_ring(bytes);
        for i in 0..5u8 {
            ring.try_push(0, 0, &[&[i; 10]]).unwrap();
        }
        ring.consume(8, |_, _| {}); // takes the first record (3 words)
        ring.release();
        let taken = ring.consumed();
        assert_eq!(taken, 3);
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            ring.try_push_below(0, 0, &Unwinds, usize::MAX)
        }));
        ring.try_push(0, 0, &[b"last"]).unwrap();
        let image = copy(&ring, &region, bytes);
        let all = scanned(&image, bytes, taken);
        let mut want: Vec<Option<Vec<u8>>> = (1..5u8).map(|i| Some(vec![i; 10])).collect();
        want.push(None);
        want.push(Some(b"last".to_vec()));
        assert_eq!(all, want);

        // A claim whose producer died after writing its header: skipped
        // by its length.
        let mut torn = image.clone();
        torn[STATES_AT + 6] = FREE; // the record at word 6 (the third)
        let got = scanned(&torn, bytes, taken);
        assert_eq!(got[1], None);
        assert_eq!(got.len(), want.len());
        assert_eq!(got[2], Some(vec![3u8; 10]));

        // ... and before writing it (a header from an earlier lap): the
        // next record is found by its state byte.
        let words_at = Store::words_at(32);
        torn[words_at + 6 * WORD + 7] ^= 0x55; // the lap tag
        let got = scanned(&torn, bytes, taken);
        assert_eq!(got[1], None);
        assert_eq!(got[2], Some(vec![3u8; 10]));
        assert_eq!(got.len(), want.len());

        // A region that is not a ring is an error, not garbage.
        assert!(scan(&image[..100], bytes, 0, |_| {}).is_err());
        let mut bad = image.clone();
        bad[TAIL_AT..TAIL_AT + 8].copy_from_slice(&999u64.to_le_bytes());
        assert!(scan(&bad, bytes, taken, |_| {}).is_err());
    }

    #[test]
    fn scan_never_skips_a_record_on_the_length_of_an_old_payload_word() {
        let bytes = 64; // 8 words
        let (ring, region) = deferred_ring(bytes);
        // Lap 0: a record whose payload words read as the header of a
        // 4-word record of lap 1, at words 1 to 3.
        let lookalike = Header {
            len: 24,
            level: 9,
            kind: 0,
            lap: 1,
        }
        .pack()
        .to_le_bytes();
        ring.try_push(0, 0, &[&lookalike, &lookalike, &lookalike])
            .unwrap();
        ring.try_push(0, 0, &[b"b"]).unwrap(); // words 4-5
        ring.try_push(0, 0, &[b"c"]).unwrap(); // words 6-7
        drain(&ring);
        ring.release();
        let taken = ring.consumed();
        assert_eq!(taken, 8);
        // Lap 1: words 0-1, 2-3 (its producer is killed right after its
        // claim: neither header nor state written), 4-5.
        ring.try_push(0, 0, &[b"d"]).unwrap();
        ring.try_push(0, 0, &[b"e"]).unwrap();
        ring.try_push(0, 0, &[b"f"]).unwrap();
        let mut image = copy(&ring, &region, bytes);
        image[STATES_AT + 2] = FREE;
        let at = Store::words_at(8) + 2 * WORD;
        image[at..at + WORD].copy_from_slice(&lookalike);
        assert_eq!(
            scanned(&image, bytes, taken),
            vec![Some(b"d".to_vec()), None, Some(b"f".to_vec())]
        );
    }

    #[test]
    #[cfg_attr(miri, ignore = "a 4 MiB ring")]
    fn scan_of_a_ring_of_torn_claims_takes_linear_time() {
        // Every word claimed, none committed, every header zero (lap 0,
        // length 0): each word is a torn claim of one word. Looking ahead
        // from each for the next set state byte anew would take time
        // quadratic in the ring: hours for this one.
        let bytes = 4 << 20;
        let words = Ring::words_for(bytes) as u64;
        let mut image = vec![0u8; Ring::region_size(bytes)];
        image[..8].copy_from_slice(&words.to_le_bytes());
        let start = std::time::Instant::now();
        let mut torn = 0;
        scan(&image, bytes, 0, |found| {
            assert!(matches!(found, Found::Torn));
            torn += 1;
        })
        .unwrap();
        assert_eq!(torn, words);
        assert!(start.elapsed() < std::time::Duration::from_secs(20));
    }

    /// A payload whose writer unwinds between claim and commit.
    struct Unwinds;
    impl Payload for Unwinds {
        fn payload_len(&self) -> usize {
            20
        }
        fn write_to(&self, dst: &mut [u8]) {
            dst[..4].copy_from_slice(b"half");
            panic!("a payload writer that unwinds");
        }
    }

    #[test]
    fn a_payload_writer_that_unwinds_does_not_stall_the_ring() {
        let ring = Ring::new(256);
        ring.try_push(0, 0, &[b"before"]).unwrap();
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            ring.try_push_below(1, 0, &Unwinds, usize::MAX)
        }));
        assert!(unwound.is_err());
        ring.try_push(2, 0, &[b"after"]).unwrap();
        // The half-written record is skipped, neither lent nor counted.
        assert_eq!(
            drain(&ring),
            vec![(0, b"before".to_vec()), (2, b"after".to_vec())]
        );
        assert_eq!(ring.used_bytes(), 0);
    }

    #[test]
    fn peek_lends_without_taking_and_skips_padding_and_void_records() {
        let ring = Ring::new(128); // 16 words
        assert_eq!(ring.peek(|_, _| ()), None);
        // Positions to word 14, so that the next record needs padding.
        for _ in 0..2 {
            ring.try_push(0, 0, &[&[0; 48]]).unwrap();
            ring.skip_front();
        }
        ring.try_push(1, 0, &[b"one"]).unwrap(); // after the padding
        let unwound = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            ring.try_push_below(9, 0, &Unwinds, usize::MAX)
        }));
        assert!(unwound.is_err());
        ring.try_push(2, 0, &[b"two"]).unwrap();
        // Looking twice lends the same record; it stays until skipped.
        for _ in 0..2 {
            assert_eq!(
                ring.peek(|h, p| (h.level, p.to_vec())),
                Some((1, b"one".to_vec()))
            );
        }
        ring.skip_front();
        // The void record is passed over unread.
        assert_eq!(
            ring.peek(|h, p| (h.level, p.to_vec())),
            Some((2, b"two".to_vec()))
        );
        ring.skip_front();
        assert_eq!(ring.peek(|_, _| ()), None);
        assert!(ring.is_drained());
        assert_eq!(ring.used_bytes(), 0);
    }

    #[test]
    fn concurrent_producers_keep_per_thread_order() {
        let per_thread: u32 = if cfg!(miri) { 200 } else { 20_000 };
        let threads: u32 = 3;
        let ring = Arc::new(Ring::new(512));
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let ring = Arc::clone(&ring);
                std::thread::spawn(move || {
                    for i in 0..per_thread {
                        let mut rec = [0u8; 12];
                        rec[..4].copy_from_slice(&t.to_le_bytes());
                        rec[4..8].copy_from_slice(&i.to_le_bytes());
                        // Vary the length so wrap-around padding happens.
                        let len = 8 + (i % 5) as usize;
                        while ring.try_push(t as u8, 0, &[&rec[..len]]).is_err() {
                            std::thread::yield_now();
                        }
                    }
                })
            })
            .collect();
        let mut next = vec![0u32; threads as usize];
        let mut total = 0;
        while total < per_thread * threads {
            ring.consume(usize::MAX, |h, p| {
                let t = u32::from_le_bytes(p[..4].try_into().unwrap());
                let i = u32::from_le_bytes(p[4..8].try_into().unwrap());
                assert_eq!(u32::from(h.level), t);
                assert_eq!(p.len(), 8 + (i % 5) as usize);
                assert_eq!(i, next[t as usize], "thread {t} out of order");
                next[t as usize] += 1;
                total += 1;
            });
            std::thread::yield_now();
        }
        for h in handles {
            h.join().unwrap();
        }
        assert_eq!(ring.used_bytes(), 0);
    }
}
