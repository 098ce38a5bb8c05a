#!/usr/bin/env bash
# The public API of each published crate, written down in
# crates/<crate>/public-api.txt (all features on; blanket impls such as
# `impl<T> From<T> for T` left out, auto traits kept; `#[doc(hidden)]` items,
# such as nowait-core's `__private`, are not part of it), and checked:
#   bash ci/public-api.sh          # regenerates each listing, fails with the
#                                  # diff if one differs from the committed one
#   bash ci/public-api.sh --bless  # rewrites the listings (commit them)
# Every line added to a listing is a promise under semver: review the diff.
#
# Needs the pinned nightly (ci/nightly.sh installs it if it can) and
# cargo-public-api 0.52.0, installed here from crates.io if missing. Cold
# (nothing installed, nothing built), building cargo-public-api is most of
# the run; once it is installed and target/nightly is built, seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
# nowait-cli, also published, is a binary: it has no library API to list.
crates="nowait-core nowait-tracing nowait-log nowait"
tool_version=0.52.0

bless=0
case "${1:-}" in
  --bless) bless=1 ;;
  "") ;;
  *) echo "usage: ci/public-api.sh [--bless]" >&2; exit 2 ;;
esac

toolchain=$(bash ci/nightly.sh --install) || {
  echo "ci/public-api.sh: the pinned nightly is needed to list the public API (see ci/nightly.sh)" >&2
  exit 1
}
if [ "$(cargo public-api --version 2>/dev/null)" != "cargo-public-api $tool_version" ]; then
  cargo install --locked --quiet "cargo-public-api@$tool_version"
fi

# A target directory of its own: nightly artifacts would evict the stable
# ones from target/debug. ci/docsrs.sh shares it.
target_dir=${CARGO_TARGET_DIR:-target}/nightly
failed=""
for crate in $crates; do
  listing=crates/$crate/public-api.txt
  fresh=$(mktemp)
  cargo +"$toolchain" public-api --target-dir "$target_dir" --color never --simplified \
    -p "$crate" --all-features >"$fresh.raw" 2>"$fresh.err" || {
    cat "$fresh.err" >&2
    echo "ci/public-api.sh: cannot list the public API of $crate" >&2
    exit 1
  }
  # Listings name items by nowait-core's public paths, whatever private
  # module defines them (the front ends' listings say
  # nowait_core::builder::Builder where users write nowait_core::Builder):
  # the public modules are kept, every private segment is dropped, so
  # moving a file inside nowait-core changes no listing.
  sed -E 's/nowait_core::(binary|event|docs|filter|format|record|sink|stats)::/nowait_core::@\1@::/g
          s/(@record@::)kind::/\1@kind@::/g
          s/(@docs@::)(design|guarantees|platforms|shipping)/\1@\2@/g
          s/(nowait_core::(@[a-z_]+@::)*)([a-z_][a-z_0-9]*::)+/\1/g
          s/@([a-z_]+)@/\1/g' "$fresh.raw" >"$fresh"
  rm -f "$fresh.raw"
  rm -f "$fresh.err"
  if [ "$bless" = 1 ]; then
    mv "$fresh" "$listing"
    echo "$listing: $(grep -c . "$listing") lines"
  elif diff -u "$listing" "$fresh" >"$fresh.diff"; then
    echo "$crate: public API unchanged ($(grep -c . "$listing") lines)"
    rm -f "$fresh" "$fresh.diff"
  else
    echo "$crate: the public API differs from $listing (- committed, + this tree):"
    cat "$fresh.diff"
    rm -f "$fresh" "$fresh.diff"
    failed="$failed $crate"
  fi
done
if [ -n "$failed" ]; then
  echo
  echo "ci/public-api.sh: the public API of$failed changed."
  echo "If the change is meant, run 'bash ci/public-api.sh --bless' and commit the listings."
  exit 1
fi
