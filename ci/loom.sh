#!/usr/bin/env bash
# Runs the loom models of the ring (crates/nowait-core/src/ring/loom_models.rs)
# in release, with at most two preemptions per execution unless
# LOOM_MAX_PREEMPTIONS says otherwise.
#   bash ci/loom.sh                  # every model
#   bash ci/loom.sh close_splits     # the models whose names start so
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/loom}"
RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-2}" \
  cargo test -p nowait-core --release --lib "ring::loom_models::${1:-}"
