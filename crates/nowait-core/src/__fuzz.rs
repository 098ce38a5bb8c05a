//! Entry points for the fuzz targets in `fuzz/` and their regression tests
//! (`tests/fuzz_regressions.rs`), behind the `fuzzing` feature. Each takes
//! arbitrary bytes and must return for every input: no panic, no
//! allocation beyond what the input's length bounds, no unbounded
//! recursion. Not part of the public API.
