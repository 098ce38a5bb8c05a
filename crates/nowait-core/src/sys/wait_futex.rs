//! The futex-style wait of the full-ring policy and of flushes, on Linux:
//! `futex(FUTEX_WAIT_PRIVATE)` and `futex(FUTEX_WAKE_PRIVATE)` on the
//! sequence word of the crate's `sync::EventCount`. No lock anywhere, so
//! nothing here can be held across `fork()`.

use std::sync::atomic::AtomicU32;
use std::time::Duration;

use rustix::thread::futex;

/// Sleeps while `word` holds `seen`, at most `timeout` (or spuriously).
pub(crate) fn wait(word: &AtomicU32, seen: u32, timeout: Duration) {
    let ts = rustix::time::Timespec {
        tv_sec: timeout.as_secs().min(i64::MAX as u64) as i64,
        tv_nsec: i64::from(timeout.subsec_nanos()),
    };
    // EAGAIN (the word moved), ETIMEDOUT and EINTR all mean "go and look
    // again"; the caller re-checks its condition.
    let _ = futex::wait(word, futex::Flags::PRIVATE, seen, Some(&ts));
}

/// Wakes every thread sleeping on `word`.
pub(crate) fn wake_all(word: &AtomicU32) {
    let _ = futex::wake(word, futex::Flags::PRIVATE, i32::MAX as u32);
}
