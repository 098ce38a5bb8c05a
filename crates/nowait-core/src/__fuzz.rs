//! Entry points for the fuzz targets in `fuzz/` and their regression tests
//! (`tests/fuzz_regressions.rs`), behind the `fuzzing` feature. Each takes
//! arbitrary bytes and must return for every input: no panic, no
//! allocation beyond what the input's length bounds, no unbounded
//! recursion. Not part of the public API.

/// An OTLP receiver's answer (`fuzz_targets/otlp_response.rs`): the first
/// byte picks how the rest is cut into reads (and whether it is sent
/// again and again past the response bound), then the connection ends.
/// The reader must give an answer or refuse it, holding at most its
/// bound.
#[cfg(feature = "otlp")]
pub fn otlp_response(data: &[u8]) {
    crate::otlp::fuzz_response(data);
}
