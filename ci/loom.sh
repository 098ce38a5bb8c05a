#!/usr/bin/env bash
# Runs the loom models (crates/nowait-core/src/ring/loom_models.rs: the
# ring; crates/nowait-core/src/limit/loom_models.rs: a rate-limited call
# site) in release, with at most two preemptions per execution unless
# LOOM_MAX_PREEMPTIONS says otherwise.
#   bash ci/loom.sh                      # every model
#   bash ci/loom.sh ring                 # the ring's models
#   bash ci/loom.sh ring close_splits    # the ring's models whose names start so
#   bash ci/loom.sh limit                # the rate limit's models
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/loom}"
filter="loom_models::${2:-}"
[ -z "${1:-}" ] || filter="$1::$filter"
RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-2}" \
  cargo test -p nowait-core --release --lib "$filter"
