//! Loom models of the ring. Run with `bash ci/loom.sh ring`
//! (`RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p nowait-core
//! --release --lib ring::loom_models`).
//!
//! The rings are production's: the same region layout, the same code
//! writing headers and payloads into the same bytes; loom's atomics stand
//! in for the control words and state bytes, and loom tracks each access
//! to a word (`region.rs`).
//!
//! The rings are tiny (8 words) so that every interleaving of two producers
//! and the consumer is explored, including claims that need wrap-around
//! padding and claims that find the ring full. The last models check the
//! deferred mode of the crash-durable ring (`consume` keeps the space until
//! `release`).

use super::region::Region;
use super::*;
use crate::sys::sync::{thread, Arc};

/// Consumes until `want` records arrived, yielding to loom between tries.
fn drain(ring: &Ring, want: usize) -> Vec<(u8, Vec<u8>)> {
    let mut got = Vec::new();
    while got.len() < want {
        ring.consume(usize::MAX, |h, p| got.push((h.level, p.to_vec())));
        if got.len() < want {
            thread::yield_now();
        }
    }
    got
}

fn push_retrying(ring: &Ring, level: u8, payload: &[u8]) {
    while let Err(e) = ring.try_push(level, 0, &[payload]) {
        assert_eq!(e, ClaimError::Full);
        thread::yield_now();
    }
}

#[test]
fn two_producers_one_consumer() {
    loom::model(|| {
        let ring = Arc::new(Ring::new(64));
        let producers: Vec<_> = (1..=2u8)
            .map(|t| {
                let ring = Arc::clone(&ring);
                thread::spawn(move || ring.try_push(t, 0, &[&[t; 8]]).unwrap())
            })
            .collect();
        let mut got = drain(&ring, 2);
        for p in producers {
            p.join().unwrap();
        }
        got.sort();
        assert_eq!(got, vec![(1, vec![1; 8]), (2, vec![2; 8])]);
        assert_eq!(ring.used_bytes(), 0);
    });
}

#[test]
fn wrap_around_padding_with_two_producers() {
    loom::model(|| {
        let ring = Arc::new(Ring::new(128)); // 16 words
                                             // Move the positions to word 14 so that a 3-word record needs padding.
        ring.try_push(0, 0, &[&[0; 48]]).unwrap(); // 7 words
        ring.try_push(0, 0, &[&[0; 48]]).unwrap(); // 7 words
        assert_eq!(drain(&ring, 2).len(), 2);

        let producers: Vec<_> = (1..=2u8)
            .map(|t| {
                let ring = Arc::clone(&ring);
                thread::spawn(move || push_retrying(&ring, t, &[t; 16]))
            })
            .collect();
        let mut got = drain(&ring, 2);
        for p in producers {
            p.join().unwrap();
        }
        got.sort();
        assert_eq!(got, vec![(1, vec![1; 16]), (2, vec![2; 16])]);
    });
}

#[test]
fn full_ring_reuses_released_space() {
    loom::model(|| {
        let ring = Arc::new(Ring::new(64)); // 8 words
                                            // Fill the ring: two 4-word records.
        ring.try_push(1, 0, &[&[1; 24]]).unwrap();
        ring.try_push(2, 0, &[&[2; 24]]).unwrap();
        assert_eq!(ring.try_push(9, 0, &[&[9; 8]]), Err(ClaimError::Full));

        // Two producers race the consumer's release: each either finds the
        // ring full or reuses the released words.
        let producers: Vec<_> = (3..=4u8)
            .map(|t| {
                let ring = Arc::clone(&ring);
                thread::spawn(move || ring.try_push(t, 0, &[&[t; 8]]).is_ok())
            })
            .collect();
        let mut got = Vec::new();
        ring.consume(usize::MAX, |h, p| got.push((h.level, p.to_vec())));
        let pushed = producers
            .into_iter()
            .map(|p| p.join().unwrap())
            .filter(|&ok| ok)
            .count();
        ring.consume(usize::MAX, |h, p| got.push((h.level, p.to_vec())));
        assert_eq!(got.len(), 2 + pushed);
        assert_eq!(got[0], (1, vec![1; 24]));
        assert_eq!(got[1], (2, vec![2; 24]));
        for (level, bytes) in got {
            assert!(bytes.iter().all(|&b| b == level), "torn record {bytes:?}");
        }
        assert_eq!(ring.used_bytes(), 0);
    });
}

/// Producers claim against `seen_tail`, a copy of `tail` that one of them
/// refreshes when a claim does not fit. One producer retries on a full
/// ring while the consumer frees it, the other tries once: when it claims,
/// it may do so through the copy the first one stored, and loom checks
/// that the consumer's reads of the reused words still happen before the
/// producers' writes.
#[test]
fn producers_reuse_space_through_the_shared_tail_copy() {
    loom::model(|| {
        let ring = Arc::new(Ring::new(64)); // 8 words
        ring.try_push(1, 0, &[&[1; 24]]).unwrap();
        ring.try_push(2, 0, &[&[2; 24]]).unwrap();
        let retrying = {
            let ring = Arc::clone(&ring);
            thread::spawn(move || push_retrying(&ring, 3, &[3; 24]))
        };
        let once = {
            let ring = Arc::clone(&ring);
            thread::spawn(move || ring.try_push(4, 0, &[&[4; 24]]).is_ok())
        };
        let mut got = drain(&ring, 3);
        retrying.join().unwrap();
        let pushed = once.join().unwrap();
        ring.consume(usize::MAX, |h, p| got.push((h.level, p.to_vec())));
        assert_eq!(got.len(), 3 + usize::from(pushed));
        assert_eq!(&got[..2], &[(1, vec![1; 24]), (2, vec![2; 24])]);
        for (level, bytes) in &got {
            assert!(bytes.iter().all(|b| b == level), "torn record {bytes:?}");
        }
    });
}

/// Closing races two producers: every claim that succeeded lies before the
/// position `close` returns (the consumer finds all of them there), and
/// every other claim fails with `Closed`. This is what makes the shutdown's
/// "accepted = written + abandoned" exact.
#[test]
fn close_splits_claims_exactly() {
    loom::model(|| {
        let ring = Arc::new(Ring::new(64));
        let producers: Vec<_> = (1..=2u8)
            .map(|t| {
                let ring = Arc::clone(&ring);
                thread::spawn(move || match ring.try_push(t, 0, &[&[t; 8]]) {
                    Ok(_) => true,
                    Err(e) => {
                        assert_eq!(e, ClaimError::Closed);
                        false
                    }
                })
            })
            .collect();
        let end = ring.close();
        let accepted = producers
            .into_iter()
            .map(|p| p.join().unwrap())
            .filter(|&ok| ok)
            .count();
        // Everything accepted was claimed before `end` (2 words a record).
        assert_eq!(end, 2 * accepted as u64);
        let got = drain(&ring, accepted);
        assert_eq!(got.len(), accepted);
        assert_eq!(ring.released(), end);
    });
}

// === deferred mode (the crash-durable ring) ===

/// A deferred ring, as `Ring::in_region` builds it, in a region on the
/// heap instead of a file mapping (the same layout).
fn deferred(min_bytes: usize) -> Ring {
    Ring::with_region(Region::heap(Ring::words_for(min_bytes)), true)
}

/// Re-reads what the consumer of a deferred ring took and has not released
/// yet (from `released()` to `consumed()`), the way `scan` would read it
/// from the file after a crash: `taken` must all still be there, intact and
/// tagged with their own lap. If a producer wrote into those words before
/// the release, loom reports the race with these reads, or they find
/// other bytes.
fn assert_still_there(ring: &Ring, taken: &[(u8, Vec<u8>)]) {
    let cap = ring.capacity_words();
    let end = ring.consumed();
    let mut pos = ring.released();
    let mut found = Vec::new();
    while pos < end {
        let index = (pos & ring.mask) as usize;
        match ring.states()[index].load(Ordering::Acquire) {
            PADDING => pos += cap - index as u64,
            COMMITTED => {
                let header = ring.read_header(index);
                assert_eq!(header.lap, lap_of(pos, cap), "header of another lap");
                ring.lend_payload(index, header, &mut |h, p| {
                    found.push((h.level, p.to_vec()));
                });
                pos += record_words(header.len as usize);
            }
            other => panic!("state {other} at word {pos}, taken and not released"),
        }
    }
    assert_eq!(pos, end);
    assert_eq!(found, taken);
}

/// Two producers and a consumer that takes, then releases, in turns. The
/// records need more words than the ring has (two of 3 words and two of 2,
/// in 8, plus padding before the wrap wherever the order puts it), so the
/// last claims succeed only in space a release handed back. Every accepted
/// record arrives once, in its producer's order, intact; what was taken
/// stays untouched until it is released.
///
/// Nobody spins without bound: with two threads retrying and a third
/// preempted inside its claim, loom could schedule the two forever. So
/// each push gets a few tries and the consumer a few rounds before it
/// joins the producers and takes the rest. The model counts the
/// executions in which every record got in (the ring wrapped into
/// released space) and requires that there were some.
#[test]
fn deferred_ring_reuses_only_released_space() {
    // Counts across loom's executions, so not one of loom's atomics.
    use crate::sys::sync::untracked::AtomicUsize;
    static WRAPPED: AtomicUsize = AtomicUsize::new(0);
    const RECORDS: u8 = 2; // per producer
    const TRIES: usize = 3;
    const ROUNDS: usize = 4;
    /// Producer 1's records are 16 bytes (3 words), producer 2's 8 (2).
    fn record(t: u8, i: u8) -> (u8, Vec<u8>) {
        (t, vec![t * 10 + i; if t == 1 { 16 } else { 8 }])
    }
    loom::model(|| {
        let ring = Arc::new(deferred(64)); // 8 words
        let producers: Vec<_> = (1..=2u8)
            .map(|t| {
                let ring = Arc::clone(&ring);
                thread::spawn(move || {
                    let mut accepted = Vec::new();
                    for i in 0..RECORDS {
                        let (level, payload) = record(t, i);
                        for _ in 0..TRIES {
                            match ring.try_push(level, 0, &[&payload]) {
                                Ok(_) => {
                                    accepted.push(record(t, i));
                                    break;
                                }
                                Err(e) => assert_eq!(e, ClaimError::Full),
                            }
                            thread::yield_now();
                        }
                    }
                    accepted
                })
            })
            .collect();
        let mut got = Vec::new();
        let take_then_release = |got: &mut Vec<(u8, Vec<u8>)>| {
            let before = got.len();
            let n = ring.consume(ring.capacity_bytes(), |h, p| {
                got.push((h.level, p.to_vec()))
            });
            if n > 0 {
                // Producers may run here: nothing taken may be overwritten.
                thread::yield_now();
                assert_still_there(&ring, &got[before..]);
                ring.release();
                assert_eq!(ring.released(), ring.consumed());
            }
        };
        for _ in 0..ROUNDS {
            take_then_release(&mut got);
            thread::yield_now();
        }
        let accepted: Vec<_> = producers.into_iter().map(|p| p.join().unwrap()).collect();
        take_then_release(&mut got);
        for (t, mine) in (1..=2u8).zip(&accepted) {
            let arrived: Vec<_> = got.iter().filter(|(l, _)| *l == t).collect();
            assert_eq!(arrived, mine.iter().collect::<Vec<_>>(), "producer {t}");
        }
        assert_eq!(got.len(), accepted.iter().map(Vec::len).sum::<usize>());
        if got.len() == 2 * RECORDS as usize {
            // Ten words of records (and any padding) went through a ring
            // of eight.
            assert!(ring.claimed() >= 10, "claimed {}", ring.claimed());
            WRAPPED.fetch_add(1, Ordering::Relaxed);
        }
        assert_eq!(ring.released(), ring.claimed());
        assert_eq!(ring.used_bytes(), 0);
    });
    assert!(WRAPPED.load(Ordering::Relaxed) > 0, "no execution wrapped");
}

/// Consumes from a deferred ring until `want` records arrived, at most a
/// lap's bytes per call (so that a consumer that read a lap again would
/// show duplicates instead of looping), without releasing.
fn take(ring: &Ring, want: usize) -> Vec<(u8, Vec<u8>)> {
    let mut got = Vec::new();
    while got.len() < want {
        ring.consume(ring.capacity_bytes(), |h, p| {
            got.push((h.level, p.to_vec()))
        });
        if got.len() < want {
            thread::yield_now();
        }
    }
    got
}

/// The consumer takes a record, then a producer fills the ring before the
/// release (padding to the end of the buffer, then words the consumer
/// released a lap ago): the next `consume` must stop a lap after `tail`
/// instead of reading the taken record again (its state byte is still
/// set), and the producer's next claim must wait for the release.
#[test]
fn deferred_full_ring_is_not_read_again() {
    loom::model(|| {
        let ring = Arc::new(deferred(64)); // 8 words
        ring.try_push(0, 0, &[&[0; 16]]).unwrap(); // words 0..3
        assert_eq!(take(&ring, 1), vec![(0, vec![0; 16])]);
        ring.release();
        ring.try_push(1, 0, &[&[1; 16]]).unwrap(); // 3..6
        assert_eq!(take(&ring, 1), vec![(1, vec![1; 16])]);
        assert_eq!((ring.released(), ring.consumed()), (3, 6));

        let producer = {
            let ring = Arc::clone(&ring);
            thread::spawn(move || {
                // Pads 6..8 and takes 8..11: the ring is full.
                ring.try_push(2, 0, &[&[2; 16]]).unwrap();
                // 11..13 (words 3..5, the taken record's): only after the
                // release.
                push_retrying(&ring, 3, &[3; 8]);
            })
        };
        let mut got = take(&ring, 1);
        assert_eq!(got, vec![(2, vec![2; 16])]);
        assert_eq!(ring.consumed(), 11);
        // A lap of records taken and not released: nothing to read.
        let again = ring.consume(ring.capacity_bytes(), |h, p| {
            got.push((h.level, p.to_vec()))
        });
        assert_eq!(again, 0, "read again: {got:?}");
        assert_eq!(ring.consumed(), 11);
        assert_still_there(&ring, &[(1, vec![1; 16]), (2, vec![2; 16])]);
        ring.release();
        assert_eq!(ring.released(), 11);
        got.extend(take(&ring, 1));
        producer.join().unwrap();
        assert_eq!(got, vec![(2, vec![2; 16]), (3, vec![3; 8])]);
        assert_eq!(ring.consumed(), 13);
        ring.release();
        assert_eq!(ring.used_bytes(), 0);
    });
}

// === lanes: a producer with a lane of its own, the shared ring as its
// overflow, and the writer merging both by key (shared::lanes,
// writer::lanes) ===

/// Takes the records available now from `lanes` and `ring` by smallest
/// key (the first byte of the payload; ties to the lanes, as the writer
/// does) with `peek` and `skip_front`, into `got`. The ring is looked at
/// before the lanes, as the writer does (`writer::lanes`): a thread's lane
/// records committed before its ring record are then seen.
fn take_available(lanes: &[&Ring], ring: &Ring, got: &mut Vec<u8>) {
    loop {
        let ring_key = ring.peek(|_, p| p[0]);
        let lane_keys: Vec<Option<u8>> = lanes.iter().map(|r| r.peek(|_, p| p[0])).collect();
        let best = lane_keys
            .iter()
            .enumerate()
            .filter_map(|(i, k)| k.map(|k| (k, i)))
            .chain(ring_key.map(|k| (k, lanes.len())))
            .min();
        let Some((k, i)) = best else { return };
        lanes.get(i).copied().unwrap_or(ring).skip_front();
        got.push(k);
    }
}

/// A producer fills its lane, and its next record goes to the shared
/// ring; as `Shared::push_lane` does, it goes back to its lane only once
/// the consumer took the ring up to that record (it does not wait: it
/// keeps using the ring until then). Another producer uses the ring
/// directly with a later key. Whatever the interleaving, the consumer
/// merging while they run sees the first producer's records in its order,
/// and every record once.
#[test]
fn a_lane_spilling_into_the_ring_keeps_its_producers_order() {
    loom::model(|| {
        let lane = Arc::new(Ring::new(64)); // 8 words: two 4-word records
        let ring = Arc::new(Ring::new(128));
        let producer = {
            let (lane, ring) = (Arc::clone(&lane), Arc::clone(&ring));
            thread::spawn(move || {
                let mut spill_until = 0;
                for k in 1..=4u8 {
                    let in_lane = spill_until == 0 || ring.released() >= spill_until;
                    if in_lane {
                        spill_until = 0;
                        match lane.try_push(0, 0, &[&[k; 24]]) {
                            Ok(_) => continue,
                            Err(ClaimError::Full) => {}
                            Err(e) => panic!("{e:?}"),
                        }
                    }
                    ring.try_push(0, 0, &[&[k; 24]]).unwrap();
                    spill_until = ring.claimed();
                }
            })
        };
        let other = {
            let ring = Arc::clone(&ring);
            thread::spawn(move || ring.try_push(0, 0, &[&[9; 24]]).unwrap())
        };
        let mut got = Vec::new();
        take_available(&[&lane], &ring, &mut got);
        take_available(&[&lane], &ring, &mut got);
        producer.join().unwrap();
        other.join().unwrap();
        take_available(&[&lane], &ring, &mut got);
        let mine: Vec<u8> = got.iter().copied().filter(|&k| k != 9).collect();
        assert_eq!(mine, vec![1, 2, 3, 4]);
        assert_eq!(got.len(), 5);
        assert!(lane.is_drained() && ring.is_drained());
    });
}

/// `peek` lends the oldest record without taking it, across the padding
/// at the end of the buffer; `skip_front` takes it and hands its space
/// back to a producer that waits for room.
#[test]
fn peek_and_skip_front_take_records_in_order_across_the_end() {
    loom::model(|| {
        let ring = Arc::new(Ring::new(128)); // 16 words
        for _ in 0..2 {
            ring.try_push(0, 0, &[&[0; 48]]).unwrap(); // 7 words
            assert_eq!(ring.peek(|_, p| p.len()), Some(48));
            ring.skip_front();
        }
        let producer = {
            let ring = Arc::clone(&ring);
            thread::spawn(move || {
                // Needs padding at word 14: starts again at word 16.
                push_retrying(&ring, 0, &[1; 16]);
                push_retrying(&ring, 0, &[2; 16]);
                push_retrying(&ring, 0, &[3; 16]);
            })
        };
        let mut got = Vec::new();
        take_available(&[], &ring, &mut got);
        producer.join().unwrap();
        take_available(&[], &ring, &mut got);
        assert_eq!(got, vec![1, 2, 3]);
        assert_eq!(ring.peek(|_, _| ()), None);
        assert!(ring.is_drained());
    });
}
