#!/usr/bin/env bash
# The OpenTelemetry Collector of crates/nowait-core/tests/otelcol.rs: built
# from its Go modules (ci/otelcol/: the OTLP receiver, the bearertokenauth
# extension, the file exporter; core v0.165.0, contrib v0.165.1, one
# release) into ${CARGO_TARGET_DIR:-target}/otelcol/otelcol-nowait.
# Needs Go (1.26 or later); fails, saying why, without it. Rebuilds only
# when ci/otelcol/ changed. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${CARGO_TARGET_DIR:-$PWD/target}/otelcol/otelcol-nowait"
src=ci/otelcol
if ! command -v go >/dev/null; then
    for d in /usr/local/go/bin /usr/lib/go/bin; do
        if [ -x "$d/go" ]; then PATH="$d:$PATH"; fi
    done
fi
if ! command -v go >/dev/null; then
    echo "ci/deps-otelcol.sh: no Go toolchain (go) on PATH: cannot build the Collector" >&2
    exit 1
fi
if [ -x "$out" ] && [ -z "$(find "$src" -newer "$out" -type f)" ]; then
    echo "ci/deps-otelcol.sh: $out is up to date"
    exit 0
fi
mkdir -p "$(dirname "$out")"
start=$SECONDS
(cd "$src" && go build -trimpath -o "$out.tmp" .)
mv "$out.tmp" "$out"
echo "ci/deps-otelcol.sh: built $("$out" --version) in $((SECONDS - start)) s"
