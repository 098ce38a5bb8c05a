#!/usr/bin/env bash
# Test tools of tests/journald.rs: systemd-journald and journalctl (the
# Debian package `systemd`), and `unshare` (util-linux, always there on
# Debian). Idempotent and quiet; apt-get update only when the install
# fails. Installing the package does not start anything: the tests run
# their own journald in a private mount namespace.
set -euo pipefail
if [ -x /lib/systemd/systemd-journald ] && command -v journalctl >/dev/null && command -v unshare >/dev/null; then
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
pkgs=(systemd util-linux)
if ! apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null 2>&1; then
  apt-get update -qq >/dev/null
  apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >/dev/null
fi
test -x /lib/systemd/systemd-journald
command -v journalctl >/dev/null
