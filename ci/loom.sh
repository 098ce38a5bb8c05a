#!/usr/bin/env bash
# Runs the loom models of the ring (crates/nowait-core/src/ring/loom_models.rs)
# in release, with at most two preemptions per execution unless
# LOOM_MAX_PREEMPTIONS says otherwise. Extra arguments go to the test
# binary (e.g. a model's name).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/loom}"
RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-2}" \
  cargo test -p nowait-core --release --lib ring::loom_models -- "$@"
