#!/usr/bin/env bash
# Test tools of the OTLP sink (crates/nowait-core/tests/otlp.rs,
# benches/otlp_ab.py): OpenTelemetry's protobuf types for Python, which the
# tests' own receiver decodes requests with, and rotel, a collector whose
# PyPI wheel carries its `rotel-agent` binary (pre-release only, hence
# --pre, given to rotel alone so that protobuf stays a release).
# Idempotent and quiet; works as root on a fresh Debian with python3.
set -euo pipefail
if ! python3 -m pip --version >/dev/null 2>&1; then
    python3 -m ensurepip --upgrade >/dev/null 2>&1 || true
fi
if ! python3 -m pip --version >/dev/null 2>&1; then
    if ! apt-get install -y -qq python3-pip >/dev/null 2>&1; then
        apt-get update -qq && apt-get install -y -qq python3-pip >/dev/null
    fi
fi
pip() { python3 -m pip install -q --disable-pip-version-check "$@" 2>/dev/null ||
    python3 -m pip install -q --disable-pip-version-check --break-system-packages "$@"; }
python3 -c 'import opentelemetry.proto.collector.logs.v1.logs_service_pb2' 2>/dev/null ||
    pip opentelemetry-proto
python3 -c 'import rotel, os; assert os.path.isfile(os.path.join(os.path.dirname(rotel.__file__), "rotel-agent"))' 2>/dev/null ||
    pip --pre rotel
