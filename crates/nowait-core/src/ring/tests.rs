//! Loom models of the ring. Run with
//! `RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=2 cargo test -p nowait-core --release --lib ring`.
//!
//! The rings are tiny (8 words) so that every interleaving of two producers
//! and the consumer is explored, including claims that need wrap-around
//! padding and claims that find the ring full.

use super::*;
use loom::sync::Arc;
use loom::thread;

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
        assert_eq!(e, PushError::Full);
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
        assert_eq!(ring.try_push(9, 0, &[&[9; 8]]), Err(PushError::Full));

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
                        assert_eq!(e, PushError::Closed);
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
