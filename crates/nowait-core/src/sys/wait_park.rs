//! The futex-style wait where there is no futex to call (macOS, the BSDs,
//! Windows, and Linux's portable backend): `parking_lot_core`'s parking
//! lot, keyed by the address of the sequence word of
//! the crate's `sync::EventCount`.
//!
//! `park` re-checks `word == seen` under the lot's bucket lock, and
//! `wake_all` takes the same lock after the notifier changed the word, so a
//! wake-up between the waiter's check and its sleep is never lost (the
//! same guarantee the futex gives). The bucket lock is held for a few
//! instructions only; a `fork()` that lands inside one of them leaves that
//! bucket locked in the child, which is the one difference from the
//! lock-free futex (documented in `docs::design`).

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use parking_lot_core::{park, unpark_all, DEFAULT_PARK_TOKEN, DEFAULT_UNPARK_TOKEN};

fn key(word: &AtomicU32) -> usize {
    word as *const AtomicU32 as usize
}

/// Sleeps while `word` holds `seen`, at most `timeout` (or spuriously).
pub(crate) fn wait(word: &AtomicU32, seen: u32, timeout: Duration) {
    let deadline = Instant::now().checked_add(timeout);
    // SAFETY: the callbacks neither panic nor call back into the parking
    // lot, as `park` requires (a load, and two no-ops).
    let _ = unsafe {
        park(
            key(word),
            || word.load(Ordering::SeqCst) == seen,
            || {},
            |_, _| {},
            DEFAULT_PARK_TOKEN,
            deadline,
        )
    };
}

/// Wakes every thread sleeping on `word`.
pub(crate) fn wake_all(word: &AtomicU32) {
    // SAFETY: the key is only an address compared by the lot; nothing is
    // dereferenced, and no callback is involved.
    unsafe {
        unpark_all(key(word), DEFAULT_UNPARK_TOKEN);
    }
}

#[cfg(all(test, not(miri)))]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_wake_after_the_word_moved_is_never_lost() {
        for _ in 0..200 {
            let word = Arc::new(AtomicU32::new(0));
            let w = Arc::clone(&word);
            let t = std::thread::spawn(move || {
                let start = Instant::now();
                while w.load(Ordering::SeqCst) == 0 {
                    wait(&w, 0, Duration::from_secs(5));
                }
                start.elapsed()
            });
            word.store(1, Ordering::SeqCst);
            wake_all(&word);
            assert!(t.join().unwrap() < Duration::from_secs(4));
        }
    }

    #[test]
    fn a_wait_on_a_stale_value_returns_at_once_and_a_timeout_ends_it() {
        let word = AtomicU32::new(7);
        let t = Instant::now();
        wait(&word, 6, Duration::from_secs(5));
        assert!(t.elapsed() < Duration::from_secs(1));
        let t = Instant::now();
        wait(&word, 7, Duration::from_millis(20));
        assert!(t.elapsed() >= Duration::from_millis(20));
    }
}
