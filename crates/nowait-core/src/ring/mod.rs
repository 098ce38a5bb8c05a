//! A bounded multi-producer, single-consumer ring of variable-length records.
//!
//! Its `unsafe` code (the words of a record, and `region.rs`) stays inside;
//! its API is safe: producers call [`Ring::try_push_below`] with a record's
//! [`Payload`], which writes itself into the claimed space; the one consumer
//! (the writer thread) calls [`Ring::consume`], which lends each committed
//! record's bytes to a closure and then releases the space.
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
//!
//! # Files
//!
//! - `region.rs`: the memory the ring lives in (the heap or a file
//!   mapping), its byte layout, and the accessors that are the only code a
//!   loom build changes: the loom models run this file's code on the same
//!   layout, with loom's atomics and access tracking standing in for the
//!   bytes it cannot see.
//! - `scan.rs`: reading the ring a process that died left in a file.
//! - `tests.rs`: unit tests (also run under Miri); `loom_models.rs`: the
//!   loom models; `durable_model.rs`: the crash-durability model checker.

mod region;
mod scan;
pub(crate) mod snapshot;

#[cfg(all(test, not(loom)))]
mod tests;

#[cfg(all(loom, test))]
mod loom_models;

#[cfg(all(test, not(miri)))]
mod durable_model;

pub(crate) use scan::{scan, Found};

use crate::sys::sync::untracked;
use crate::sys::sync::{AtomicU64, AtomicU8, KeepAlive, Ordering};

use region::Region;

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

/// Why a claim ([`Ring::try_push_below`]) did not take a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ClaimError {
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
    /// earlier lap (the crash-durable file's recovery reads it).
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
    /// Where the shared words live (`region.rs`: their layout, the heap or
    /// a file mapping), as the algorithm sees them:
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
    region: Region,
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
    read: crossbeam_utils::CachePadded<untracked::AtomicU64>,
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
        let ring = Ring::with_region(Region::heap(words), false);
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
        region::size(Self::words_for(min_bytes))
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
    pub(crate) unsafe fn in_region(
        min_bytes: usize,
        base: std::ptr::NonNull<u8>,
        owner: KeepAlive,
    ) -> Ring {
        let words = Self::words_for(min_bytes);
        // SAFETY: the caller's promise, for `region_size(min_bytes)`, which
        // is `region::size(words)`.
        let region = unsafe { Region::mapped(base, words, owner) };
        let ring = Ring::with_region(region, true);
        ring.prefault();
        ring
    }

    fn with_region(region: Region, deferred: bool) -> Ring {
        let words = region.words();
        Ring {
            region,
            mask: words as u64 - 1,
            shift: words.trailing_zeros(),
            deferred,
            read: crossbeam_utils::CachePadded::new(untracked::AtomicU64::new(0)),
        }
    }

    /// Writes every page of the region once, so that no producer takes the
    /// first-touch page fault. While the ring is being built.
    fn prefault(&self) {
        self.region.prefault();
    }

    #[inline]
    fn head(&self) -> &AtomicU64 {
        self.region.head()
    }

    #[inline]
    fn seen_tail(&self) -> &AtomicU64 {
        self.region.seen_tail()
    }

    #[inline]
    fn tail(&self) -> &AtomicU64 {
        self.region.tail()
    }

    #[inline]
    fn states(&self) -> &[AtomicU8] {
        self.region.states()
    }

    pub(crate) fn capacity_words(&self) -> u64 {
        self.mask + 1
    }

    /// Capacity in bytes, record headers included.
    pub(crate) fn capacity_bytes(&self) -> usize {
        self.region.words() * WORD
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
    /// [`ClaimError::Closed`]. Returns the final claim position: every record
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
    ) -> Result<usize, ClaimError> {
        self.try_push_below(level, kind, &parts, usize::MAX)
    }

    /// Like `try_push`, but refuses with [`ClaimError::Shed`] if the bytes in
    /// use after the claim would exceed `limit_bytes` (level protection).
    #[inline]
    pub(crate) fn try_push_below<P: Payload + ?Sized>(
        &self,
        level: u8,
        kind: u8,
        payload: &P,
        limit_bytes: usize,
    ) -> Result<usize, ClaimError> {
        let len = payload.payload_len();
        if len > self.max_payload() {
            return Err(ClaimError::TooLarge);
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
                    ClaimError::Closed
                } else {
                    ClaimError::Forked
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
                    ClaimError::Full
                } else {
                    ClaimError::Shed
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
        debug_assert!(index + need as usize <= self.region.words());
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
    pub(crate) fn consume(&self, max_bytes: usize, f: impl FnMut(Header, &[u8])) -> usize {
        self.consume_until(max_bytes, || false, f)
    }

    /// [`Ring::consume`], stopping early, before the next record, once
    /// `stop` says so (asked after each record lent): the writer of a
    /// crash-durable ring stops where its sinks' buffers would outgrow
    /// their mirrors.
    pub(crate) fn consume_until(
        &self,
        max_bytes: usize,
        mut stop: impl FnMut() -> bool,
        mut f: impl FnMut(Header, &[u8]),
    ) -> usize {
        /// Step 4 on every exit, unwinding included: hands the space back
        /// (or, in a deferred ring, moves the consumer's own position).
        /// Release orders our reads of the words and our resets of the
        /// state bytes before any producer's reuse of them.
        struct Publish<'a> {
            to: &'a AtomicU64,
            read: Option<&'a untracked::AtomicU64>,
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
                        index + record_words(len) as usize <= self.region.words(),
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
                        if stop() {
                            break;
                        }
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

    /// `Ring::peek` at the consumer's cursor `pos` (which starts at
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
                        index + record_words(header.len as usize) as usize <= self.region.words(),
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

// === the words of a record (the unsafe part) ===

impl Ring {
    /// Writes the header and payload of a record into the words from
    /// `index`, which this producer claimed.
    #[inline]
    fn write_record<P: Payload + ?Sized>(&self, index: usize, header: Header, payload: &P) {
        let len = header.len as usize;
        let need = record_words(len) as usize;
        debug_assert!(index + need <= self.region.words());
        let _writing = self.region.writing(index, need);
        // SAFETY: `index + need <= words` (the claim lies inside the buffer:
        // padding took care of that; checked above).
        let at = unsafe { self.region.word_ptr(index) };
        // SAFETY: `index` starts a region this producer claimed. Until it
        // commits, no other thread reads or writes these words: producers
        // claim disjoint regions and the consumer stops at the FREE state
        // byte of this region. Words are 8-aligned (`region.rs`).
        unsafe { at.cast::<u64>().write(header.pack()) };
        // SAFETY: as above, for the `len` payload bytes after the header,
        // which lie in the claimed region; they are initialised (zeroed at
        // creation, only ever overwritten with bytes). The slice is the only
        // reference to them until the commit, and it does not outlive this
        // call.
        let dst = unsafe { std::slice::from_raw_parts_mut(at.add(WORD), len) };
        payload.write_to(dst);
    }

    /// The header of the committed record at `index`. Consumer only.
    fn read_header(&self, index: usize) -> Header {
        debug_assert!(index < self.region.words());
        let _reading = self.region.reading(index, 1);
        // SAFETY: the consumer observed COMMITTED (or VOID) with Acquire, so
        // the producer's writes to this word happened before, and nobody
        // writes it again until the consumer releases it by advancing
        // `tail`. `index < words` (the caller's index is masked).
        Header::unpack(unsafe { self.region.word_ptr(index).cast::<u64>().read() })
    }

    /// Lends the payload of the committed record at `index` to `f`.
    /// Consumer only, after checking that the record lies in the buffer.
    fn lend_payload(&self, index: usize, header: Header, f: &mut impl FnMut(Header, &[u8])) {
        let len = header.len as usize;
        debug_assert!(index + record_words(len) as usize <= self.region.words());
        let _reading = self.region.reading(index + 1, len.div_ceil(WORD));
        // SAFETY: as in `read_header`; the payload lies in the committed
        // region (the caller checked its bounds, so `index + 1 <= words`)
        // and is initialised (the words were zeroed at creation and only
        // ever overwritten with bytes). `tail` is not advanced past it
        // until `f` returns.
        let payload = unsafe { std::slice::from_raw_parts(self.region.word_ptr(index + 1), len) };
        f(header, payload);
    }
}

// SAFETY: the words are only accessed under the claim/commit/release protocol
// described in the module docs, which gives every access to a word a single
// owner at a time; everything else is atomics.
unsafe impl Sync for Ring {}
// SAFETY: the ring owns its buffers; nothing in it is tied to a thread.
unsafe impl Send for Ring {}
