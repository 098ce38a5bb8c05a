#!/usr/bin/env bash
# Runs the loom models in release, with at most two preemptions per
# execution unless LOOM_MAX_PREEMPTIONS says otherwise: the ring's
# (crates/nowait-core/src/ring/loom_models.rs) and the tracing layer's set
# of registered call sites (crates/nowait-tracing/src/registered/loom_models.rs).
#   bash ci/loom.sh                  # every model
#   bash ci/loom.sh close_splits     # the ring models whose names start so
#   bash ci/loom.sh registered       # the registered call sites' models
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/loom}"
export RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-2}"
filter="${1:-}"
if [ "$filter" != registered ]; then
  cargo test -p nowait-core --release --lib "ring::loom_models::$filter"
fi
if [ -z "$filter" ] || [ "$filter" = registered ]; then
  cargo test -p nowait-tracing --release --lib registered::loom_models::
fi
