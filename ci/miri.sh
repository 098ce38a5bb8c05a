#!/usr/bin/env bash
# Runs nowait-core's unit tests under Miri.
#   bash ci/miri.sh                  # every unit test of nowait-core (slow:
#                                    # the encoding property tests alone run
#                                    # for more than 15 minutes under Miri)
#   bash ci/miri.sh ring:: event::   # only the tests whose names match
#   bash ci/miri.sh -p nowait-tracing limits::   # another crate's unit tests
# CI (.ci/run) runs the ring (the only unsafe code: claim, commit, the bytes
# lent to payload writers and to the consumer), the macros' direct
# encoding into ring records and the rate limits' atomics (nowait-core's
# `limit::`, the tracing layer's `limits::`), which take about half a
# minute once built.
# Needs a nightly toolchain with the miri component:
#   rustup toolchain install nightly --component miri rust-src
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/miri}"
# Wall-clock reads (timestamps of malformed records, notices) need the host.
export MIRIFLAGS="${MIRIFLAGS:--Zmiri-disable-isolation}"
crate=nowait-core
if [ "${1:-}" = "-p" ]; then
  crate=$2
  shift 2
fi
cargo +nightly miri test -p "$crate" --lib -- "$@"
