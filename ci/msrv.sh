#!/usr/bin/env bash
# Checks the published crates with the oldest Rust they declare
# (`rust-version` in the workspace Cargo.toml), all features and none, so
# that the declaration is checked rather than hoped (`cargo check`: what
# an older compiler refuses, it refuses before code generation). Installs that
# toolchain with rustup (minimal profile) if it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."
msrv=$(sed -n 's/^rust-version *= *"\(.*\)"/\1/p;T;q' Cargo.toml)
[ -n "$msrv" ] || { echo "ci/msrv.sh: no rust-version in Cargo.toml" >&2; exit 1; }
# Output tested through a here-string: piping rustup into `grep -q` under pipefail
# fails at random when grep exits first and rustup dies of SIGPIPE.
grep -q "^$msrv" <<<"$(rustup toolchain list)" || rustup toolchain install "$msrv" --profile minimal
crates=(-p nowait-core -p nowait-tracing -p nowait-log -p nowait -p nowait-cli)
export CARGO_TARGET_DIR=target/msrv
echo "building ${crates[*]} with Rust $msrv"
cargo "+$msrv" check "${crates[@]}" --all-features
cargo "+$msrv" check "${crates[@]}" --no-default-features
