#!/usr/bin/env bash
# Runs nowait-core's unit tests (the ring and its users) under Miri.
# Needs a nightly toolchain with the miri component:
#   rustup toolchain install nightly --component miri rust-src
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/miri}"
# Wall-clock reads (timestamps of malformed records, notices) need the host.
export MIRIFLAGS="${MIRIFLAGS:--Zmiri-disable-isolation}"
cargo +nightly miri test -p nowait-core --lib
