#!/usr/bin/env bash
# Siblings that use each other's hidden items are pinned exactly.
#
# A published crate of this workspace may use the `#[doc(hidden)]` items of
# a sibling (nowait-core's `__private`, its hidden macros and associated
# functions): they are outside semver, so the two crates release in
# lockstep and the user's build must never pair them with another version
# of each other. Cargo guarantees that only with an exact requirement
# (`=x.y.z`), as serde pins serde_derive. This check fails when a published
# crate's source names a hidden item of a sibling while its requirement on
# that sibling (normal or build dependency, `workspace = true` resolved by
# `cargo metadata`) is not exactly the sibling's version.
#
# What counts as naming a hidden item: an identifier of a hidden module,
# item or macro inside a path or `use` tree that starts with the sibling's
# crate name (`nowait_core::__private::x`, `use nowait_core::{__private,
# Y}`), or `Type::function` for a hidden associated function. A method
# called with `.name()` syntax is not seen; the type it is called on
# usually is (`Callsite::new(..).fields(..)`).
#
#   bash ci/siblings.sh        # prints each use found and the requirement
set -euo pipefail
cd "$(dirname "$0")/.."

metadata=$(cargo metadata --format-version 1 --no-deps --offline 2>/dev/null) \
  || metadata=$(cargo metadata --format-version 1 --no-deps)

python3 - "$metadata" <<'PY'
import json, os, re, sys

meta = json.loads(sys.argv[1])
members = set(meta["workspace_members"])
packages = {p["name"]: p for p in meta["packages"] if p["id"] in members}
published = sorted(n for n, p in packages.items() if p["publish"] != [])

def sources(pkg):
    """Every .rs file under the crate's src/, with its path from the root."""
    src = os.path.join(os.path.dirname(pkg["manifest_path"]), "src")
    for dirpath, _, files in os.walk(src):
        for f in sorted(files):
            if f.endswith(".rs"):
                yield os.path.join(dirpath, f)

def strip_comments(line):
    # Line comments only: enough for paths in code, which never hold `//`
    # outside string literals in these crates.
    return re.sub(r"//.*", "", line)

ITEM = re.compile(
    r"^\s*pub\s+(?:unsafe\s+|const\s+|async\s+|extern\s+\"C\"\s+)*"
    r"(mod|fn|struct|enum|trait|type|const|static|union|use)\s+(.*)")
MACRO = re.compile(r"^\s*macro_rules!\s*(\w+)")
IMPL = re.compile(r"^impl\b(?:<[^{]*?>)?\s+(?:[\w:<>, ']+\s+for\s+)?(?:[\w]+::)*(\w+)")

def hidden_items(pkg):
    """Names of the crate's #[doc(hidden)] items: module-level names, and
    (type, function) pairs for associated functions."""
    names, assoc, where = set(), set(), {}
    for path in sources(pkg):
        lines = open(path, encoding="utf-8").read().split("\n")
        for i, line in enumerate(lines):
            if not re.match(r"^\s*#\[doc\(hidden\)\]", line):
                continue
            j = i + 1
            while j < len(lines) and re.match(r"^\s*(#\[|//|$)", lines[j]):
                j += 1
            if j == len(lines):
                continue
            item = lines[j]
            m = MACRO.match(item)
            if m:
                names.add(m.group(1)); where[m.group(1)] = (path, j + 1)
                continue
            m = ITEM.match(item)
            if not m:
                continue
            kind, rest = m.groups()
            if kind == "use":
                found = re.findall(r"(?:as\s+)?(\w+)\s*(?=[,};])", rest)
            else:
                found = re.findall(r"^(\w+)", rest)
            indented = item[0].isspace()
            for name in found:
                if indented and kind == "fn":
                    owner = None
                    # The enclosing block: the nearest line above at column 0.
                    for k in range(j - 1, -1, -1):
                        if lines[k] and not lines[k][0].isspace() and not lines[k].startswith(("#", "//")):
                            mi = IMPL.match(lines[k])
                            owner = mi.group(1) if mi else None
                            break
                    if owner:
                        assoc.add((owner, name)); where[f"{owner}::{name}"] = (path, j + 1)
                else:
                    names.add(name); where[name] = (path, j + 1)
    return names, assoc, where

def path_trees(text, ident):
    """The text of each path or use tree that starts with `ident::`."""
    for m in re.finditer(r"\b" + re.escape(ident) + r"::", text):
        k, depth = m.end(), 0
        while k < len(text):
            c = text[k]
            if c == "{":
                depth += 1
            elif c == "}":
                if depth == 0:
                    break
                depth -= 1
            elif depth == 0 and not (c.isalnum() or c in "_:!"):
                break
            k += 1
        yield m.start(), text[m.end():k]

def uses_of_hidden(pkg, ident, names, assoc):
    """Where `pkg`'s source names a hidden item of the sibling `ident`."""
    found = []
    for path in sources(pkg):
        raw = open(path, encoding="utf-8").read()
        text = "\n".join(strip_comments(l) for l in raw.split("\n"))
        line_of = lambda pos: text.count("\n", 0, pos) + 1
        for pos, tree in path_trees(text, ident):
            hit = sorted(set(re.findall(r"\w+", tree)) & names)
            if hit:
                shown = re.sub(r"\s+", " ", f"{ident}::{tree}").replace("{ ", "{")
                found.append((path, line_of(pos), shown[:100], hit[0]))
        if re.search(r"\b" + re.escape(ident) + r"\b", text):
            for owner, fn in sorted(assoc):
                for m in re.finditer(r"\b%s::%s\b" % (owner, fn), text):
                    found.append((path, line_of(m.start()), f"{owner}::{fn}", f"{owner}::{fn}"))
    return sorted(set(found))

EXACT = re.compile(r"^=\s*(\d+\.\d+\.\d+)$")
root = meta["workspace_root"]
rel = lambda p: os.path.relpath(p, root)
failures, checked = [], 0
for name in published:
    pkg = packages[name]
    for dep in pkg["dependencies"]:
        sibling = packages.get(dep["name"])
        if sibling is None or dep["kind"] == "dev":
            continue
        ident = (dep.get("rename") or dep["name"]).replace("-", "_")
        names, assoc, where = hidden_items(sibling)
        uses = uses_of_hidden(pkg, ident, names, assoc)
        checked += 1
        req = dep["req"]
        m = EXACT.match(req)
        exact = bool(m) and m.group(1) == sibling["version"]
        if not uses:
            print(f"{name} -> {dep['name']} {req}: no hidden item named")
            continue
        first = uses[0]
        summary = f"{rel(first[0])}:{first[1]}: {first[2]}"
        more = f" (and {len(uses) - 1} more)" if len(uses) > 1 else ""
        if exact:
            print(f"{name} -> {dep['name']} {req}: exact, names hidden items, e.g. {summary}{more}")
        else:
            failures.append(name)
            print(f"FAIL {name} -> {dep['name']}: requirement {req!r} is not "
                  f"exactly ={sibling['version']}, but {name} names hidden items of "
                  f"{dep['name']}:")
            for path, line, text, item in uses:
                src = where.get(item)
                hid = f" (hidden at {rel(src[0])}:{src[1]})" if src else ""
                print(f"  {rel(path)}:{line}: {text}{hid}")
            print(f"  fix: {dep['name']} = {{ ..., version = \"={sibling['version']}\" }} "
                  f"in [workspace.dependencies] (or in {rel(pkg['manifest_path'])})")
if checked == 0:
    sys.exit("ci/siblings.sh: no published crate depends on a sibling: is the workspace read right?")
if failures:
    sys.exit(f"ci/siblings.sh: {len(failures)} requirement(s) on a sibling must be exact (see above)")
print(f"ci/siblings.sh: {checked} sibling requirements checked")
PY
