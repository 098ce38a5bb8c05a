#!/usr/bin/env bash
# Runs the loom models in release, with at most two preemptions per
# execution unless LOOM_MAX_PREEMPTIONS says otherwise:
#   crates/nowait-core/src/ring/loom_models.rs          the ring
#   crates/nowait-core/src/accounting/loom_models.rs    a rate-limited call site and its loss accounting
#   crates/nowait-tracing/src/registered/loom_models.rs the layer's registered call sites
#   bash ci/loom.sh                      # every model
#   bash ci/loom.sh ring                 # the ring's models
#   bash ci/loom.sh ring close_splits    # the ring's models whose names start so
#   bash ci/loom.sh accounting           # the rate limit's models
#   bash ci/loom.sh registered           # the registered call sites' models
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/loom}"
export RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-2}"
module="${1:-}"
if [ "$module" != registered ]; then
  filter="loom_models::${2:-}"
  [ -z "$module" ] || filter="$module::$filter"
  cargo test -p nowait-core --release --lib "$filter"
fi
if [ -z "$module" ] || [ "$module" = registered ]; then
  cargo test -p nowait-tracing --release --lib "registered::loom_models::${2:-}"
fi
