#!/usr/bin/env bash
# A stranger's first use, checked: packages the published crates as
# `cargo package` would upload them, then builds and runs, in an empty
# directory, a new crate made only from the README's first screen (the
# `Cargo.toml` lines and the quick-start programs, each marked in the
# README with `<!-- stranger: FILE -->`). The packaged crates stand in for
# crates.io through `[patch.crates-io]`. Each program must log its line to
# the terminal and to `app.log`. The packaged `nowait` command (nowait-cli)
# is then built as `cargo install nowait-cli` would, and run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CARGO_TARGET_DIR="$root/target/stranger"

echo "packaging the published crates"
cargo package --manifest-path "$root/Cargo.toml" --allow-dirty --no-verify \
  -p nowait-core -p nowait-tracing -p nowait-log -p nowait -p nowait-cli 2>&1 \
  | grep -v '^warning: ignoring test' || true
mkdir -p "$work/packages"
for crate in "$CARGO_TARGET_DIR"/package/nowait*-*.crate; do
  tar xzf "$crate" -C "$work/packages"
done

app="$work/hello"
mkdir -p "$app/src/bin"
python3 - "$root/README.md" "$app" "$work/packages" <<'PY'
import os, re, sys
readme, app, packages = sys.argv[1:]
text = open(readme, encoding="utf-8").read()
blocks = re.findall(r"<!-- stranger: (\S+) -->\s*```[a-z]*\n(.*?)```", text, re.S)
if not blocks:
    sys.exit("README.md has no <!-- stranger: FILE --> blocks")
files = dict(blocks)
if "Cargo.toml" not in files or not any(f.startswith("src/") for f in files):
    sys.exit("README.md must mark a Cargo.toml block and at least one program")
# Fragments (`<!-- stranger-fragment: NAME FEATURE -->`): the body of a
# `main` that needs a feature of the facade; compiled (not run) as the
# binary NAME with that feature.
fragments = re.findall(
    r"<!-- stranger-fragment: (\S+) (\S+) -->\s*```[a-z,]*\n(.*?)```", text, re.S)
extra, features = "", "\n[features]\n"
for name, feature, body in fragments:
    path = f"src/fragments/{name}.rs"
    files[path] = ("fn main() -> Result<(), Box<dyn std::error::Error>> {\n"
                   + body + "    Ok(())\n}\n")
    features += f'{name} = ["{feature}"]\n'
    extra += f'\n[[bin]]\nname = "{name}"\npath = "{path}"\nrequired-features = ["{name}"]\n'
    print("fragment from the README:", name, "with", feature)
patch = "\n[patch.crates-io]\n"
for d in sorted(os.listdir(packages)):
    name = d.rsplit("-", 1)[0]
    if name == "nowait-cli":
        continue  # a command, not a dependency: built below
    patch += f'{name} = {{ path = "{os.path.join(packages, d)}" }}\n'
manifest = '[package]\nname = "hello"\nversion = "0.1.0"\nedition = "2021"\npublish = false\n\n'
manifest += files.pop("Cargo.toml") + features + extra + patch + "\n[workspace]\n"
open(os.path.join(app, "Cargo.toml"), "w").write(manifest)
for path, body in files.items():
    os.makedirs(os.path.dirname(os.path.join(app, path)), exist_ok=True)
    open(os.path.join(app, path), "w").write(body)
    print("from the README:", path)
PY

cd "$app"
cargo build --quiet --bins
# The packaged crates' optional features compile too.
cargo check --quiet --bins --features nowait/otlp,nowait/metrics,nowait/local-time
# The README's fragments, each with the feature it names.
for f in src/fragments/*.rs; do
  [ -e "$f" ] || continue
  cargo check --quiet --bin "$(basename "$f" .rs)" --features "$(basename "$f" .rs)"
done
failed=0
for src in src/bin/*.rs; do
  bin=$(basename "$src" .rs)
  rm -f app.log
  out=$(timeout 60 "$CARGO_TARGET_DIR/debug/$bin")
  if grep -q 'GET /index.html done' <<<"$out" && grep -q 'GET /index.html done' app.log; then
    echo "$bin: ok ($(wc -l <app.log) line in app.log: $(head -c 120 app.log))"
  else
    echo "$bin: FAILED"; echo "terminal: $out"; echo "app.log: $(cat app.log 2>/dev/null)"
    failed=1
  fi
done

# The command, from its package alone (what `cargo install nowait-cli`
# downloads), against the packaged libraries.
cli=$(echo "$work"/packages/nowait-cli-*)
python3 - "$cli" "$work/packages" <<'PY'
import os, sys
cli, packages = sys.argv[1:]
patch = "\n[patch.crates-io]\n"
for d in sorted(os.listdir(packages)):
    name = d.rsplit("-", 1)[0]
    if name != "nowait-cli":
        patch += f'{name} = {{ path = "{os.path.join(packages, d)}" }}\n'
with open(os.path.join(cli, "Cargo.toml"), "a") as f:
    f.write(patch + "\n[workspace]\n")
PY
(cd "$cli" && cargo build --quiet --bin nowait)
version=$("$CARGO_TARGET_DIR/debug/nowait" --version)
help=$("$CARGO_TARGET_DIR/debug/nowait" recover --help)
if grep -q '^nowait [0-9]' <<<"$version" && grep -q '^Usage: nowait recover FILE' <<<"$help"; then
  echo "nowait-cli: ok ($version)"
else
  echo "nowait-cli: FAILED"; echo "--version: $version"; echo "recover --help: $help"
  failed=1
fi
exit $failed
