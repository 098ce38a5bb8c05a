#!/usr/bin/env bash
# The demo: what one log line per request costs a server, per logger and sink.
# Installs wrk if missing, then runs loadtest/run.py, which builds the
# servers in release (asking cargo where they are, so CARGO_TARGET_DIR works).
#   bash loadtest/run.sh            # the demo, a few minutes: table, 3 sentences, loadtest/results/chart.svg
#   bash loadtest/run.sh --quick    # CI smoke test (~1 min)
#   bash loadtest/run.sh --full     # every scenario, mode and sink (~40 min)
#   bash loadtest/run.sh --help     # all options
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(uname -s)" != Linux ]; then
  # The servers, the slow pty and the benches build on macOS and the BSDs
  # (CI checks it); the runner itself is Linux-only.
  echo "loadtest/run.sh runs on Linux only: it pins wrk and the server to CPUs with" >&2
  echo "taskset (util-linux), which $(uname -s) has no equivalent of, and installs wrk" >&2
  echo "with apt-get. On a Mac: 'brew install wrk', then run the servers by hand" >&2
  echo "(loadtest/README.md lists their flags) without --cpu," >&2
  echo "or run this script in a Linux VM or container." >&2
  exit 1
fi
if ! command -v wrk >/dev/null 2>&1; then
  echo "installing wrk (Debian package)..." >&2
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq wrk >/dev/null
fi
command -v taskset >/dev/null 2>&1 || { echo "taskset (util-linux) is required" >&2; exit 1; }
exec python3 loadtest/run.py "$@"
