//! Unit tests of the ring: claims, commits, the consumer's forms, the
//! deferred (crash-durable) mode and the recovery scan, on the heap and in
//! a region standing in for a file mapping. They run under Miri
//! (`ci/miri.sh ring::`); the loom models are in `loom_models.rs`.

use super::region::{self, STATES_AT, TAIL_AT};
use super::*;
use crate::sys::sync::{thread, Arc};

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
    assert_eq!(ring.try_push(0, 0, &[&[3u8; 16]]), Err(ClaimError::Full));
    assert_eq!(drain(&ring).len(), 2);
    assert!(ring.try_push(0, 0, &[&[3u8; 16]]).is_ok());
}

#[test]
fn too_large_is_rejected_not_full() {
    let ring = Ring::new(64);
    assert_eq!(ring.max_payload(), 24);
    assert!(ring.try_push(0, 0, &[&[0u8; 24]]).is_ok());
    assert_eq!(
        ring.try_push(0, 0, &[&[0u8; 25]]),
        Err(ClaimError::TooLarge)
    );
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
    assert_eq!(ring.try_push(0, 0, &[b"after"]), Err(ClaimError::Closed));
    assert_eq!(ring.claimed(), end);
    assert_eq!(drain(&ring), vec![(0, b"before".to_vec())]);
    assert_eq!(ring.close(), end, "idempotent");
}

#[test]
fn fork_reset_forgets_the_parents_records_and_blocks_claims() {
    let ring = Ring::new(256);
    ring.try_push(0, 0, &[b"parent"]).unwrap();
    ring.reset_after_fork();
    assert_eq!(ring.try_push(0, 0, &[b"child"]), Err(ClaimError::Forked));
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
struct Mapping {
    ptr: std::ptr::NonNull<u8>,
    layout: std::alloc::Layout,
}
// SAFETY: plain memory, shared only through the ring's protocol.
unsafe impl Send for Mapping {}
// SAFETY: as above.
unsafe impl Sync for Mapping {}
impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: allocated in `deferred_ring` with this layout.
        unsafe { std::alloc::dealloc(self.ptr.as_ptr(), self.layout) }
    }
}

fn deferred_ring(bytes: usize) -> (Ring, Arc<Mapping>) {
    let layout = std::alloc::Layout::from_size_align(Ring::region_size(bytes), 4096).unwrap();
    // SAFETY: nonzero size.
    let ptr = std::ptr::NonNull::new(unsafe { std::alloc::alloc_zeroed(layout) }).unwrap();
    let region = Arc::new(Mapping { ptr, layout });
    // SAFETY: zeroed, aligned, `region_size` bytes, kept alive by the
    // owner handed to the ring.
    let ring = unsafe { Ring::in_region(bytes, ptr, region.clone()) };
    (ring, region)
}

fn copy(ring: &Ring, region: &Mapping, bytes: usize) -> Vec<u8> {
    let _ = ring;
    // SAFETY: the region holds `region_size(bytes)` bytes; no producer
    // runs while the test copies it.
    unsafe { std::slice::from_raw_parts(region.ptr.as_ptr(), Ring::region_size(bytes)) }.to_vec()
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
    assert_eq!(ring.try_push(0, 0, &[&[3u8; 16]]), Err(ClaimError::Full));
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
    let words_at = region::words_at(32);
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
    let at = region::words_at(8) + 2 * WORD;
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
            thread::spawn(move || {
                for i in 0..per_thread {
                    let mut rec = [0u8; 12];
                    rec[..4].copy_from_slice(&t.to_le_bytes());
                    rec[4..8].copy_from_slice(&i.to_le_bytes());
                    // Vary the length so wrap-around padding happens.
                    let len = 8 + (i % 5) as usize;
                    while ring.try_push(t as u8, 0, &[&rec[..len]]).is_err() {
                        thread::yield_now();
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
        thread::yield_now();
    }
    for h in handles {
        h.join().unwrap();
    }
    assert_eq!(ring.used_bytes(), 0);
}
