//! Fatal errors on Windows: no handler yet (a structured exception filter
//! would be the place). A crash loses the records still in the ring, as
//! `Builder::drain_on_crash` documents.

/// Nothing is installed on Windows.
pub(crate) fn on_fatal_signals(_drain: fn(i32)) {}

/// Never called on Windows (no handler runs).
pub(crate) fn signal_name(_sig: i32) -> &'static str {
    "a fatal error"
}

/// Never called on Windows (no handler runs).
pub(crate) fn thread_name(_buf: &mut [u8; 64]) -> &[u8] {
    b"?"
}
