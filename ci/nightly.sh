#!/usr/bin/env bash
# The pinned nightly toolchain that ci/public-api.sh and ci/docsrs.sh use,
# printed on stdout: its rustdoc JSON (format 57) is what
# cargo-public-api 0.52 reads, so the listings do not change with the
# nightly of the day.
#   bash ci/nightly.sh            # the toolchain's name, or exit 1
#   bash ci/nightly.sh --install  # installs it first if it is missing
# A toolchain of another name built from the same commit (a plain
# `nightly` installed that day) is used as it is.
set -euo pipefail
pinned=nightly-2026-05-20
commit=e50aa6fba4e63ab34c72bf9acfd2c307c1155d1a

# Asking a toolchain that is not installed must not install it (rustup
# does by default).
# The version is read whole before it is tested: piping rustc into `grep -q` under
# pipefail fails at random (grep exits at the match, rustc dies of SIGPIPE).
same_commit() {
  local version
  version=$(RUSTUP_AUTO_INSTALL=0 rustc +"$1" -vV 2>/dev/null) || return 1
  grep -qx "commit-hash: $commit" <<<"$version"
}

if same_commit "$pinned"; then
  echo "$pinned"
  exit 0
fi
toolchains=$(rustup toolchain list 2>/dev/null) || toolchains=
for toolchain in $(awk '/^nightly/ {print $1}' <<<"$toolchains"); do
  if same_commit "$toolchain"; then
    echo "$toolchain"
    exit 0
  fi
done
if [ "${1:-}" = --install ] \
  && rustup toolchain install "$pinned" --profile minimal >&2 \
  && same_commit "$pinned"; then
  echo "$pinned"
  exit 0
fi
echo "ci/nightly.sh: no $pinned (rustc commit ${commit:0:9}) installed" >&2
exit 1
