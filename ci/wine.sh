#!/usr/bin/env bash
# Runs `cargo test --target x86_64-pc-windows-gnu "$@"` under Wine, from the
# repository root. Installs what it needs (Debian's wine64 and mingw-w64,
# the Rust target), keeps a Wine prefix under target/wine-prefix, and
# puts a small bcryptprimitives.dll into it (ci/wine/: Wine 8.0 lacks the
# DLL whose ProcessPrng Rust's std calls at start-up since 1.78).
# Fails, never skips, when Wine cannot be had.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
log="$root/target/wine-setup.log"
mkdir -p "$root/target"
: >"$log"

say() { printf 'wine.sh: %s\n' "$*"; }

if [ ! -x /usr/lib/wine/wine64 ] || ! command -v x86_64-w64-mingw32-gcc >/dev/null; then
  say "apt-get install wine64 gcc-mingw-w64-x86-64"
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y -q --no-install-recommends wine64 gcc-mingw-w64-x86-64 >>"$log" 2>&1 \
    || { apt-get update -q >>"$log" 2>&1 \
         && apt-get install -y -q --no-install-recommends wine64 gcc-mingw-w64-x86-64 >>"$log" 2>&1; } \
    || { say "cannot install wine64 and gcc-mingw-w64-x86-64 (see $log)"; exit 1; }
fi
WINE=/usr/lib/wine/wine64
[ -x "$WINE" ] || { say "no Wine loader at $WINE"; exit 1; }

grep -qx x86_64-pc-windows-gnu <<<"$(rustup target list --installed)" \
  || { say "rustup target add x86_64-pc-windows-gnu"; rustup target add x86_64-pc-windows-gnu >>"$log" 2>&1; }

# One prefix per Wine version, reused between runs (wineboot takes a while).
version=$("$WINE" --version 2>/dev/null | tr -c 'A-Za-z0-9.\n-' _)
export WINEPREFIX="$root/target/wine-prefix/$version"
export WINEDEBUG=-all
export WINEDLLOVERRIDES="mscoree,mshtml="
unset DISPLAY
if [ ! -f "$WINEPREFIX/system.reg" ]; then
  say "creating the Wine prefix ($version)"
  mkdir -p "$WINEPREFIX"
  timeout 300 "$WINE" wineboot -i >>"$log" 2>&1 || { say "wineboot failed (see $log)"; exit 1; }
fi
# The crash tests end children with an access violation on purpose: no
# debugger (Wine's default, `winedbg --auto`) is started for them, so none
# is still attached when the next test binary starts. (A clean CI run once
# saw the test binary after crash_windows exit 1 before printing anything.)
"$WINE" reg delete 'HKLM\Software\Microsoft\Windows NT\CurrentVersion\AeDebug' /v Debugger /f \
  >>"$log" 2>&1 || true
# Stop the wine server however this script ends, so that it holds nothing open.
trap 'WINEPREFIX="$WINEPREFIX" timeout 20 /usr/lib/wine/wineserver -k >/dev/null 2>&1 || true' EXIT

dll="$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"
src="$root/ci/wine/bcryptprimitives.c"
if [ ! -f "$dll" ] || [ "$src" -nt "$dll" ]; then
  say "building bcryptprimitives.dll (ProcessPrng over BCryptGenRandom)"
  x86_64-w64-mingw32-gcc -O2 -shared -o "$dll" "$src" "$root/ci/wine/bcryptprimitives.def" -lbcrypt
fi

# The OTLP tests' receiver runs on the Linux side (a Windows process under
# Wine cannot start a Linux one): ci/wine/linux_side.py starts it when a
# test asks, through files in a private directory.
bash "$root/ci/deps-otlp.sh"
side=$(mktemp -d)
python3 "$root/ci/wine/linux_side.py" "$side" &
side_pid=$!
export NOWAIT_LINUX_SIDE="$side"
trap 'kill "$side_pid" 2>/dev/null || true; rm -rf "$side";
      WINEPREFIX="$WINEPREFIX" timeout 20 /usr/lib/wine/wineserver -k >/dev/null 2>&1 || true' EXIT

export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER="$WINE"
export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc
# Unit and integration tests; the doctests run natively (under Wine some
# of them, each a separate process started hundreds at a time, hung in a
# clean CI run). A hang must fail the run, not stall it: 20 minutes.
say "cargo test --target x86_64-pc-windows-gnu --lib --tests $*"
out=$(mktemp)
if timeout 1200 cargo test --target x86_64-pc-windows-gnu --lib --tests --no-fail-fast "$@" 2>&1 | tee "$out"; then
  rm -f "$out"
  exit 0
fi
# Wine now and then ends a test binary with exit 1 before it prints
# anything (seen in clean runs, and after a passing one here). A run whose
# only failure is a binary that ended so, with no test failed and nothing
# failing to build, is run again once, and says so; any other failure, and
# a second failure, fails the step.
if grep -qE '^test .* FAILED$|^test result: FAILED|could not compile' "$out" \
   || ! grep -q "didn't exit successfully" "$out"; then
  rm -f "$out"
  exit 1
fi
rm -f "$out"
say "a test binary exited before running any test (Wine start-up): running the tests once more"
timeout 1200 cargo test --target x86_64-pc-windows-gnu --lib --tests --no-fail-fast "$@"
