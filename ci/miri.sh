#!/usr/bin/env bash
# Runs nowait-core's unit tests under Miri.
#   bash ci/miri.sh                  # every unit test of nowait-core (slow:
#                                    # the encoding property tests alone run
#                                    # for more than 15 minutes under Miri)
#   bash ci/miri.sh ring:: event::   # only the tests whose names match
# CI (.ci/run) runs the ring (the only unsafe code: claim, commit, the bytes
# lent to payload writers and to the consumer) and the macros' direct
# encoding into ring records, which take about half a minute once built.
# Needs a nightly toolchain with the miri component:
#   rustup toolchain install nightly --component miri rust-src
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/miri}"
# Wall-clock reads (timestamps of malformed records, notices) need the host.
export MIRIFLAGS="${MIRIFLAGS:--Zmiri-disable-isolation}"
cargo +nightly miri test -p nowait-core --lib -- "$@"
