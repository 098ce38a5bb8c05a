#!/usr/bin/env bash
# Every platform compiles: clippy (no linker needed) on the published crates
# (the libraries and the `nowait` command) for each target nowait supports,
# with default and with all features, and a check of the demo, benches and
# examples for macOS. One target dir for all of them, so the host's build
# scripts and proc macros are built once.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}"

# One target per thing that changes the code compiled: the host; another
# architecture (aarch64: no TSC); musl's libc; macOS; Windows (MSVC: the
# GNU target is compiled and tested under Wine by ci/wine.sh); FreeBSD. The
# pairs these stand for (x86_64 macOS, aarch64 musl) compile the same cfgs.
targets=(
  x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu
  x86_64-unknown-linux-musl
  aarch64-apple-darwin
  x86_64-pc-windows-msvc
  x86_64-unknown-freebsd
)
crates=(-p nowait -p nowait-core -p nowait-tracing -p nowait-log -p nowait-cli)

installed=$(rustup target list --installed)
missing=()
for t in "${targets[@]}"; do
  grep -qx "$t" <<<"$installed" || missing+=("$t")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "rustup target add ${missing[*]}"
  rustup target add "${missing[@]}"
fi

# otlp-tls brings ring, whose build script compiles C for the target even
# for clippy. clang cross-compiles it for every target here, without the
# target's C library: ring's RING_CORE_NOSTDLIBINC drops <assert.h> and
# <string.h>, -fgnuc-version keeps clang-for-MSVC on the builtins path (not
# <stdlib.h>), and macOS's <TargetConditionals.h> is a stub made here.
# Nothing is linked.
# The `zstd` feature brings zstd-sys, which compiles libzstd's C against
# the target's C library: there is none here for other targets. For them
# it takes libzstd's headers from the host instead (its pkg-config
# escape, ZSTD_SYS_USE_PKG_CONFIG); nothing is linked, so the host's
# library never ends up in a binary for another system.
if ! command -v clang >/dev/null || ! command -v llvm-ar >/dev/null \
    || ! pkg-config --exists libzstd 2>/dev/null; then
  echo "apt-get install clang llvm pkg-config libzstd-dev (to compile ring's C for other targets, and for zstd-sys's headers)"
  apt-get install -y -q --no-install-recommends clang llvm pkg-config libzstd-dev >/dev/null 2>&1 \
    || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q --no-install-recommends clang llvm pkg-config libzstd-dev >/dev/null 2>&1; } \
    || { echo "cannot install clang, llvm, pkg-config and libzstd-dev"; exit 1; }
fi
stubs=$(mktemp -d)
trap 'rm -rf "$stubs"' EXIT
printf '#define TARGET_OS_MAC 1\n#define TARGET_OS_OSX 1\n#define TARGET_OS_IPHONE 0\n' \
  >"$stubs/TargetConditionals.h"
host=$(rustc -vV | sed -n 's/^host: //p')
for t in "${targets[@]}"; do
  [ "$t" = "$host" ] && continue
  u=${t//-/_}
  ar=llvm-ar
  case "$t" in *-msvc) ar=llvm-lib ;; esac
  export "CC_$u=clang" "AR_$u=$ar" \
    "CFLAGS_$u=-ffreestanding -DRING_CORE_NOSTDLIBINC -fgnuc-version=4.2.1 -isystem $stubs"
done

# What zstd-sys needs for target $1 (see above): nothing for the host.
zstd_env() {
  [ "$1" = "$host" ] || echo "ZSTD_SYS_USE_PKG_CONFIG=1 PKG_CONFIG_ALLOW_CROSS=1"
}

failed=()
for t in "${targets[@]}"; do
  for features in "" "--all-features"; do
    printf '%-28s %-16s ' "$t" "${features:-default features}"
    t0=$SECONDS
    if out=$(env $(zstd_env "$t") cargo clippy "${crates[@]}" --target "$t" $features --quiet -- -D warnings 2>&1); then
      echo "ok ($((SECONDS - t0)) s)"
    else
      echo FAILED; echo "$out" | tail -40; failed+=("$t $features")
    fi
  done
done

# The tests too, on the systems no machine here runs them on (a test that
# does not compile there is a defect even if it never runs here: one
# used a Linux-only FIFO call until a clippy of the test targets for
# macOS showed it).
for t in aarch64-apple-darwin x86_64-unknown-freebsd x86_64-pc-windows-msvc; do
  printf '%-28s %-16s ' "$t" "tests"
  t0=$SECONDS
  if out=$(env $(zstd_env "$t") cargo clippy "${crates[@]}" --target "$t" --all-targets --all-features --quiet -- -D warnings 2>&1); then
    echo "ok ($((SECONDS - t0)) s)"
  else
    echo FAILED; echo "$out" | tail -40; failed+=("$t tests")
  fi
done

# The demo, the benches and the examples build on a Mac (run.sh says what
# it needs there). criterion compiles one C file (its `alloca` dependency)
# and the examples' otlp-tls brings ring: clang cross-compiles both for
# macOS with the flags set above (-ffreestanding keeps them to clang's own
# headers and the stubs; there is no macOS SDK here). Nothing is linked.
if ! command -v clang >/dev/null; then
  echo "apt-get install clang (to compile criterion's C file for macOS)"
  apt-get install -y -q --no-install-recommends clang >/dev/null 2>&1 \
    || { apt-get update -q >/dev/null 2>&1 && apt-get install -y -q --no-install-recommends clang >/dev/null 2>&1; } \
    || { echo "cannot install clang"; exit 1; }
fi
printf '%-28s %-16s ' aarch64-apple-darwin "demo+benches"
t0=$SECONDS
if out=$(cargo check -p nowait-loadtest -p nowait-benches -p nowait-examples --all-targets \
    --target aarch64-apple-darwin --quiet 2>&1); then
  echo "ok ($((SECONDS - t0)) s)"
else
  echo FAILED; echo "$out" | tail -40; failed+=("aarch64-apple-darwin demo+benches")
fi

if [ ${#failed[@]} -gt 0 ]; then
  echo "targets failed: ${failed[*]}"; exit 1
fi
echo "all targets compile"
