#!/usr/bin/env bash
# The soak (examples/examples/soak.rs) for SECS seconds (default 120):
# four producers, rolling with compression and retention, SIGHUP reopens,
# filter reloads, and an OTLP sink to the Collector stopped and started
# again (built by ci/deps-otelcol.sh; without it the soak says so and runs
# without that sink). Fails when memory, descriptors or threads grow after
# warm-up or a record is not accounted for. Results: target/soak.json.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-120}"
target="${CARGO_TARGET_DIR:-$PWD/target}"
otelcol="${NOWAIT_OTELCOL:-$target/otelcol/otelcol-nowait}"
args=(--secs "$secs" --json "$target/soak.json")
if [ -x "$otelcol" ]; then
    args+=(--otelcol "$otelcol")
else
    echo "ci/soak.sh: no Collector at $otelcol (ci/deps-otelcol.sh): the soak runs without its OTLP sink"
fi
cargo run -q -p nowait-examples --example soak -- "${args[@]}"
