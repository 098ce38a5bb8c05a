#!/usr/bin/env bash
# Test tools of the platform formats (crates/nowait-core/tests/platform_formats.rs):
# the ECS field list (npm @elastic/ecs, read by tests/platform/ecs_validate.js
# with node), google-cloud-logging from PyPI (its LogEntry type parses the
# Cloud Logging lines), and go-logfmt from the Go module proxy (the logfmt
# decoder in tests/platform/logfmt_decode). Idempotent and quiet; works as
# root on a fresh Debian with python3, node and Go; exits non-zero if a tool
# cannot be had.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    if ! apt-get install -y -qq nodejs npm >/dev/null 2>&1; then
        apt-get update -qq && apt-get install -y -qq nodejs npm >/dev/null
    fi
fi
[ -f "$(npm root -g)/@elastic/ecs/package.json" ] ||
    npm install -g --silent @elastic/ecs@9.4.0 >/dev/null
if ! python3 -m pip --version >/dev/null 2>&1; then
    python3 -m ensurepip --upgrade >/dev/null 2>&1 || true
fi
pip() { python3 -m pip install -q --disable-pip-version-check "$@" 2>/dev/null ||
    python3 -m pip install -q --disable-pip-version-check --break-system-packages "$@"; }
python3 -c 'import google.cloud.logging_v2.types' 2>/dev/null ||
    pip google-cloud-logging==3.17.0
command -v go >/dev/null || export PATH="$PATH:/usr/local/go/bin"
(cd crates/nowait-core/tests/platform/logfmt_decode && go mod download)
