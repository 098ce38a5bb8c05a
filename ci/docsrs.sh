#!/usr/bin/env bash
# Builds each published crate's documentation as docs.rs does (all
# features, `--cfg docsrs`, so `doc(cfg(...))` shows which feature an item
# needs), with warnings as errors. Needs the pinned nightly
# (ci/nightly.sh); without it, skips saying so.
#   bash ci/docsrs.sh
set -euo pipefail
cd "$(dirname "$0")/.."
crates="nowait-core nowait-tracing nowait-log nowait"

if ! toolchain=$(bash ci/nightly.sh 2>/dev/null); then
  echo "ci/docsrs.sh: skipped, the pinned nightly is not installed (bash ci/nightly.sh --install)"
  exit 0
fi
# Shared with ci/public-api.sh: nightly artifacts apart from target/debug.
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-target}/nightly
for crate in $crates; do
  RUSTDOCFLAGS="--cfg docsrs -D warnings" \
    cargo +"$toolchain" doc --no-deps --all-features -p "$crate"
done
echo "ci/docsrs.sh: documentation of $crates builds as on docs.rs"
