#!/usr/bin/env bash
# The seeds' experiments through nowait (buffer-size curve, 10 million
# integers to a file, one-byte writes): builds the `seeds` binary in
# release, runs it pinned, and regenerates the section of benches/README.md
# between its markers (tables and one SVG chart per experiment).
#
#   bash benches/run.sh            # full run: results in benches/results/,
#                                  # section in benches/README.md
#   bash benches/run.sh --quick    # smoke test (seconds): small sizes, output
#                                  # in $CARGO_TARGET_DIR/seeds-smoke/ only
#
# Options: --quick, --reps N (default 5; --quick: 3), --only 1,2,3 (the
# result files then hold only those experiments),
# --dir DIR (where the output files are written; default /var/tmp, which is
# on disk on most systems where /tmp may be tmpfs), --no-pin.
#
# Run it on a quiet machine: nothing else compiling or running.
#
# Pinning: the process gets CPUs 0 and 1 (`taskset -c 0,1`); inside each
# run the calling thread is pinned to CPU 0 and nowait's writer thread to
# CPU 1 (with `taskset -p` on its thread id), so that the two never share a
# CPU and neither migrates. The baselines (one thread) run on CPU 0. With
# fewer than two CPUs, or without taskset, it runs unpinned and says so.
#
# Needs: cargo, python3 (standard library only), taskset (util-linux) for
# pinning. Honours CARGO_TARGET_DIR: the binary is located through
# `cargo build --message-format=json`.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
cd "$root"

quick=0
pin=1
dir=""
pass=()
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick=1; pass+=(--quick) ;;
        --no-pin) pin=0 ;;
        --reps|--only) pass+=("$1" "${2:?$1 needs a value}"); shift ;;
        --dir) dir="${2:?--dir needs a value}"; shift ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) echo "run.sh: unknown argument $1 (try --help)" >&2; exit 2 ;;
    esac
    shift
done

command -v cargo >/dev/null || { echo "run.sh: cargo not found" >&2; exit 1; }
command -v python3 >/dev/null || { echo "run.sh: python3 not found" >&2; exit 1; }

echo "building the seeds binary (release)..." >&2
bin=$(cargo build --release -p nowait-benches --bin seeds --message-format=json-render-diagnostics |
    python3 -c '
import json, sys
exe = None
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "seeds" and m.get("executable"):
        exe = m["executable"]
if not exe:
    sys.exit("run.sh: cargo reported no seeds executable")
print(exe)
')

if [ "$quick" = 1 ]; then
    out="${CARGO_TARGET_DIR:-$root/target}/seeds-smoke"
    json="$out/seeds.json"; md="$out/seeds.md"; svgs="$out"; readme="$out/README.md"
    base=(--base-readme "$here/README.md")
else
    out="$here/results"
    json="$out/seeds.json"; md="$out/seeds.md"; svgs="$out"; readme="$here/README.md"
    base=()
fi
mkdir -p "$out"

if [ -z "$dir" ]; then
    dir=$(mktemp -d "${SEEDS_TMP:-/var/tmp}/nowait-seeds.XXXXXX")
    trap 'rm -rf "$dir"' EXIT
fi

runner=()
if [ "$pin" = 1 ]; then
    if command -v taskset >/dev/null && [ "$(nproc --all 2>/dev/null || echo 1)" -ge 2 ] &&
        taskset -c 0,1 true 2>/dev/null; then
        runner=(taskset -c 0,1)
        pass+=(--pin)
    else
        echo "run.sh: cannot pin to CPUs 0 and 1 (taskset missing or fewer than 2 CPUs): running unpinned" >&2
    fi
fi

start=$(date +%s)
${runner[@]+"${runner[@]}"} "$bin" ${pass[@]+"${pass[@]}"} --dir "$dir" --json "$json" --markdown "$md" >/dev/null
python3 "$here/seeds/report.py" --json "$json" --markdown "$md" --svg-dir "$svgs" --readme "$readme" ${base[@]+"${base[@]}"}
echo "done in $(( $(date +%s) - start )) s: $json, $readme" >&2
if [ "$quick" = 1 ]; then
    echo "(smoke run: nothing under benches/ was changed)" >&2
fi
