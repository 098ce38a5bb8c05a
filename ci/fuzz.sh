#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/ for a bounded time (FUZZ_SECONDS,
# default 30 s each), starting from its committed seeds and every input
# that ever failed it. Needs a nightly toolchain; installs cargo-fuzz.
# A crash fails the run and leaves the input in fuzz/artifacts/TARGET/:
# copy it to crates/nowait-core/tests/fuzz-regressions/TARGET/.
set -euo pipefail
cd "$(dirname "$0")/../fuzz"
seconds=${FUZZ_SECONDS:-30}
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked --quiet
targets=$(cargo +nightly fuzz list)
cargo +nightly fuzz build >/dev/null
for t in $targets; do
  corpus=$(mktemp -d)
  cp -r corpus/"$t"/. "$corpus"/ 2>/dev/null || true
  cp -r ../crates/nowait-core/tests/fuzz-regressions/"$t"/. "$corpus"/ 2>/dev/null || true
  out=$(mktemp)
  # -timeout: one input that hangs fails the run in a minute.
  if ! cargo +nightly fuzz run "$t" "$corpus" -- -max_total_time="$seconds" -rss_limit_mb=2048 \
      -max_len=262144 -timeout=60 >"$out" 2>&1; then
    tail -40 "$out"
    echo "fuzz $t: FAILED (input in fuzz/artifacts/$t/)"
    exit 1
  fi
  printf 'fuzz %s, %s s: %s\n' "$t" "$seconds" "$(grep -E '^#[0-9]+[[:space:]]+DONE' "$out" | tail -1)"
  rm -f "$out"
  rm -rf "$corpus"
done
