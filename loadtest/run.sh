#!/usr/bin/env bash
# The demo: what one log line per request costs a server, per logger and sink.
# Installs wrk if missing, builds in release, runs loadtest/run.py.
#   bash loadtest/run.sh            # full run (3 repetitions x 5 s per cell)
#   bash loadtest/run.sh --quick    # 1 repetition x 1 s, reduced matrix (CI smoke test)
#   bash loadtest/run.sh --help     # all options
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v wrk >/dev/null 2>&1; then
  echo "installing wrk (Debian package)..." >&2
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq wrk >/dev/null
fi
command -v taskset >/dev/null 2>&1 || { echo "taskset (util-linux) is required" >&2; exit 1; }
cargo build --release -q -p nowait-loadtest
exec python3 loadtest/run.py "$@"
