//! Entry points for the fuzz targets in `fuzz/` and their regression tests
//! (`tests/fuzz_regressions.rs`), behind the `fuzzing` feature. Each takes
//! arbitrary bytes and must return for every input: no panic, no
//! allocation beyond what the input's length bounds, no unbounded
//! recursion. Not part of the public API.

/// A dead process's crash-durable file, as the next start reads it. The
/// input is the file's first bytes; the file is as long as its header
/// states (zeros past the input) when that is at most 8 MiB, else the
/// input alone. No sink is named, so no file is written: every pending
/// mirror byte must come out as a counted loss.
pub fn durable_recover(data: &[u8]) {
    const MAX: usize = 8 << 20;
    let mut file = data.to_vec();
    if let Some(len) = crate::durable::stated_len(data).filter(|&n| n <= MAX) {
        file.resize(len.max(file.len()), 0);
    }
    let out = crate::durable::recover_bytes(&file, &[]);
    assert!(out.notices.iter().all(|n| !n.is_empty()));
}

/// An OTLP receiver's answer (`fuzz_targets/otlp_response.rs`): the first
/// byte picks how the rest is cut into reads (and whether it is sent
/// again and again past the response bound), then the connection ends.
/// The reader must give an answer or refuse it, holding at most its
/// bound.
#[cfg(feature = "otlp")]
pub fn otlp_response(data: &[u8]) {
    crate::otlp::fuzz_response(data);
}
