#!/usr/bin/env bash
# Runs the loom models of the ring (crates/nowait-core/src/ring/tests.rs).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/loom}"
RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-2}" \
  cargo test -p nowait-core --release --lib ring
