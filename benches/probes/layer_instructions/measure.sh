#!/bin/sh
# Instructions per event on the calling thread, counted by callgrind:
# the difference of an N=20000 and an N=10000 run, collected only inside
# the probe's emit_* functions, thread 1 only (the writer thread is not
# counted). Deterministic: other load on the machine does not matter.
#
#   benches/probes/layer_instructions/measure.sh [MODE SHAPE]...
#   (default: layer and floor, each shape)
#
# PROBE_FEATURES=otel-layer (mode `otel`: tracing-opentelemetry's layer
# before ours; mode `otelmacro`: nowait's macros with that subscriber set
# up as `nowait::init` does) or PROBE_FEATURES=opentelemetry (the same,
# and the layer's `opentelemetry` feature, which reads each event's span
# context and answers the macros').
set -eu
root=$(cd "$(dirname "$0")/../../.." && pwd)
cd "$root"
cargo build --release -q -p layer-instructions ${PROBE_FEATURES:+--features "$PROBE_FEATURES"}
bin="${CARGO_TARGET_DIR:-$root/target}/release/layer-instructions"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
total() { # MODE SHAPE N
    valgrind --tool=callgrind --separate-threads=yes --collect-atstart=no \
        --toggle-collect='layer_instructions::emit_*' \
        --callgrind-out-file="$out/cg.$1.$2.$3" "$bin" "$1" "$2" "$3" 2>"$out/err.$1.$2.$3"
    grep -h '^summary:\|^totals:' "$out/cg.$1.$2.$3-01" | head -n 1 | awk '{print $2}'
}
if [ $# -eq 0 ]; then
    set -- layer req floor req layer fmt floor fmt layer spanreq floor spanreq
fi
while [ $# -ge 2 ]; do
    a=$(total "$1" "$2" 10000)
    b=$(total "$1" "$2" 20000)
    printf '%-6s %-8s %5d instructions/event %s\n' "$1" "$2" $(((b - a) / 10000)) \
        "$(grep -h dropped "$out/err.$1.$2.20000" || true)"
    shift 2
done
