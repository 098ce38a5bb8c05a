#!/usr/bin/env bash
# The docs say what the code and the packages hold. Fails, listing each
# problem as FILE:LINE, when:
#
#  (a) a feature in a published crate's `[features]` (except `default` and
#      names starting with `_`) is missing from that crate's rustdoc list
#      (the `# Features` section of its `src/lib.rs` crate docs) or from
#      the README's `## Features` table (every published crate's features),
#      or either list names a feature the crate does not have. A list entry
#      is the first code span of a list item or of a table row's first
#      cell; a feature named only in prose does not count.
#  (b) the fuzz targets in SECURITY.md's `## Fuzzing` table differ from the
#      files in `fuzz/fuzz_targets/`.
#  (c) a published crate's rustdoc (doc comments and the `.md` files under
#      its `src/`) or README (its `readme`, e.g. the root README.md for
#      `nowait`) cites a path its package does not ship
#      (`cargo package --list`): a code span or link naming a file or
#      directory of the repository outside the package, or a path under a
#      top-level directory (`tests/`, `benches/`, `ci/`, ...) that exists
#      nowhere. A path is resolved against the citing file's directory,
#      the crate, then the repository root. Also, in a README, any relative
#      link (crates.io has no repository to resolve it against). Not read:
#      fenced code blocks, and the README's `## Repository` section, whose
#      paths are presented as repository paths.
#  (d) a published crate's package lacks LICENSE-MIT or LICENSE-APACHE, or
#      its copy differs from the repository root's.
#
#   bash ci/docs-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."

metadata=$(cargo metadata --format-version 1 --no-deps --offline 2>/dev/null) \
  || metadata=$(cargo metadata --format-version 1 --no-deps)

python3 - "$metadata" <<'PY'
import fnmatch, json, os, re, subprocess, sys

meta = json.loads(sys.argv[1])
root = meta["workspace_root"]
os.chdir(root)
members = set(meta["workspace_members"])
packages = {p["name"]: p for p in meta["packages"] if p["id"] in members}
published = sorted(n for n, p in packages.items() if p["publish"] != [])
if not published:
    sys.exit("ci/docs-check.sh: no published crate found")

problems = {"a": [], "b": [], "c": [], "d": []}
def report(check, where, what):
    problems[check].append(f"{where}: {what}")

def crate_dir(name):
    return os.path.relpath(os.path.dirname(packages[name]["manifest_path"]), root)

def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return f.read().split("\n")

CODE = re.compile(r"`([^`]+)`")
LINK = re.compile(r"\]\(([^()\s]+)\)")
REFDEF = re.compile(r"^\s*\[[^\]]+\]:\s*(\S+)")

def first_code_span(text):
    m = CODE.search(text)
    return m.group(1) if m else None

# --- (a) features ----------------------------------------------------------

def user_features(name):
    return sorted(f for f in packages[name]["features"]
                  if f != "default" and not f.startswith("_"))

def lib_rs(name):
    for t in packages[name]["targets"]:
        if "lib" in t["kind"]:
            return os.path.relpath(t["src_path"], root)
    return None

def rustdoc_feature_list(path):
    """(heading line, {feature: line}) of the `# Features` section of the
    crate docs (`//!` lines), or (None, {}) when there is none."""
    lines = read_lines(path)
    heading, listed = None, {}
    for i, line in enumerate(lines, 1):
        m = re.match(r"^\s*//!\s?(.*)$", line)
        if heading is None:
            if m and re.match(r"^#\s+Features\s*$", m.group(1)):
                heading = i
            continue
        if not m or re.match(r"^#\s", m.group(1)):
            break
        item = re.match(r"^\s*[*-]\s+(.*)$", m.group(1))
        if item:
            span = first_code_span(item.group(1))
            if span:
                listed[span] = i
    return heading, listed

def markdown_section(lines, title, level="##"):
    """Line numbers of a section's body (up to the next heading of the same
    or a higher level), skipping fenced code; None if absent."""
    start, body, fenced = None, [], False
    for i, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        if fenced:
            continue
        m = re.match(r"^(#+)\s+(.*?)\s*$", line)
        if m and start is not None and len(m.group(1)) <= len(level):
            break
        if m and start is None and m.group(1) == level and m.group(2) == title:
            start = i
            continue
        if start is not None:
            body.append(i)
    return (start, body) if start is not None else None

def table_and_list_entries(lines, body):
    """{first code span of each table row's first cell / list item: line}."""
    entries, header_seen = {}, False
    for i in body:
        line = lines[i - 1]
        if line.lstrip().startswith("|"):
            cells = line.strip().strip("|").split("|")
            if re.match(r"^\s*:?-{3,}", cells[0]):
                continue
            if not header_seen:
                header_seen = True  # the header row
                continue
            span = first_code_span(cells[0])
            if span:
                entries[span] = i
        else:
            header_seen = False if not line.strip() else header_seen
            item = re.match(r"^\s*[*-]\s+(.*)$", line)
            if item:
                span = first_code_span(item.group(1))
                if span:
                    entries[span] = i
    return entries

all_features = set()
for name in published:
    features = user_features(name)
    all_features |= set(features)
    manifest = os.path.relpath(packages[name]["manifest_path"], root)
    lib = lib_rs(name)
    if lib is None:
        continue
    heading, listed = rustdoc_feature_list(lib)
    if heading is None:
        if features:
            report("a", f"{lib}:1", f"no `# Features` section in the crate docs; "
                   f"{name}'s features ({manifest}): " + ", ".join(f"`{f}`" for f in features))
        continue
    for f in features:
        if f not in listed:
            report("a", f"{lib}:{heading}", f"feature `{f}` ({manifest}) is not in the `# Features` list")
    for f, line in sorted(listed.items(), key=lambda x: x[1]):
        if f not in packages[name]["features"]:
            report("a", f"{lib}:{line}", f"the `# Features` list names `{f}`, which is not a feature of {name}")

readme_lines = read_lines("README.md")
section = markdown_section(readme_lines, "Features")
if section is None:
    report("a", "README.md:1", "no `## Features` section; features: "
           + ", ".join(f"`{f}`" for f in sorted(all_features)))
else:
    heading, body = section
    entries = table_and_list_entries(readme_lines, body)
    for name in published:
        for f in user_features(name):
            if f not in entries:
                report("a", f"README.md:{heading}",
                       f"feature `{f}` of {name} ({crate_dir(name)}/Cargo.toml) is not in the Features table")
    for f, line in sorted(entries.items(), key=lambda x: x[1]):
        if f not in all_features:
            report("a", f"README.md:{line}", f"the Features table names `{f}`, which no published crate has")

# --- (b) fuzz targets --------------------------------------------------------

targets_dir = "fuzz/fuzz_targets"
targets = sorted(f[:-3] for f in os.listdir(targets_dir) if f.endswith(".rs"))
if not targets:
    report("b", targets_dir, "no fuzz targets found")
security = read_lines("SECURITY.md")
section = markdown_section(security, "Fuzzing")
if section is None:
    report("b", "SECURITY.md:1", "no `## Fuzzing` section naming the fuzz targets")
else:
    heading, body = section
    named = table_and_list_entries(security, body)
    if not named:
        report("b", f"SECURITY.md:{heading}", "the Fuzzing section has no table of targets")
    for t in targets:
        if t not in named:
            report("b", f"SECURITY.md:{heading}", f"fuzz target `{t}` ({targets_dir}/{t}.rs) is not in the Fuzzing table")
    for t, line in sorted(named.items(), key=lambda x: x[1]):
        if t not in targets:
            report("b", f"SECURITY.md:{line}", f"the Fuzzing table names `{t}`, but there is no {targets_dir}/{t}.rs")

# --- (c) cited paths ---------------------------------------------------------

repo_files = set(subprocess.run(
    ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
    check=True, capture_output=True, text=True).stdout.split("\n")) - {""}
repo_dirs = set()
for f in repo_files:
    d = os.path.dirname(f)
    while d:
        repo_dirs.add(d)
        d = os.path.dirname(d)
top_level = {p.split("/")[0] for p in repo_files}

def package_list(name):
    out = subprocess.run(
        ["cargo", "package", "--list", "--allow-dirty", "--offline", "-p", name],
        capture_output=True, text=True)
    if out.returncode != 0:
        out = subprocess.run(["cargo", "package", "--list", "--allow-dirty", "-p", name],
                             capture_output=True, text=True)
    if out.returncode != 0:
        sys.stderr.write(out.stderr)
        sys.exit(f"ci/docs-check.sh: cargo package --list -p {name} failed")
    return set(out.stdout.split("\n")) - {""}

PATHLIKE = re.compile(r"^[A-Za-z0-9_.\-/*{},<>]+$")
EXT = re.compile(r"\.(rs|md|sh|py|json|svg|toml|txt|lock|ya?ml|lua|proto)$")

def expand(pattern):
    m = re.search(r"\{([^{}]*)\}", pattern)
    if not m:
        return [re.sub(r"<[^<>]*>", "*", pattern)]
    out = []
    for alt in m.group(1).split(","):
        out += expand(pattern[:m.start()] + alt + pattern[m.end():])
    return out

def exists(path):
    path = path.rstrip("/")
    if any(c in path for c in "*?["):
        return any(fnmatch.fnmatch(f, path) for f in repo_files) or \
               any(fnmatch.fnmatch(d, path) for d in repo_dirs)
    return path in repo_files or path in repo_dirs

def in_package(path, crate, shipped):
    """Whether repository path `path` is shipped in `crate`'s package."""
    base = crate_dir(crate)
    if not (path + "/").startswith(base + "/"):
        return False
    rel = os.path.relpath(path.rstrip("/"), base)
    if any(c in rel for c in "*?["):
        return any(fnmatch.fnmatch(f, rel) for f in shipped)
    return rel in shipped or any(f.startswith(rel + "/") for f in shipped)

def check_path(token, citing, crate, shipped, where):
    token = token.strip().rstrip(".,;:)").lstrip("(")
    if (not token or "::" in token or token.startswith(("/", "~", "$", "-", "http"))
            or not PATHLIKE.match(token)):
        return
    if "/" not in token and not EXT.search(token):
        return
    for pattern in expand(token):
        bases = [os.path.dirname(citing), crate_dir(crate), ""]
        found = None
        for base in bases:
            candidate = os.path.normpath(os.path.join(base, pattern)) if base else os.path.normpath(pattern)
            if pattern.endswith("/"):
                candidate += "/"
            if not candidate.startswith("..") and exists(candidate):
                found = candidate
                break
        if found is None:
            # A path under a directory the package does not ship (`tests/`,
            # `benches/`, `ci/`, ...) that exists nowhere: a stale citation.
            # One under `src/` may be a user's file (`src/main.rs`).
            first = pattern.split("/")[0]
            crate_top = {os.path.relpath(p, crate_dir(crate)).split("/")[0]
                         for p in repo_files if p.startswith(crate_dir(crate) + "/")}
            shipped_top = {p.split("/")[0] for p in shipped}
            if "/" in pattern and (first in top_level or first in crate_top) and first not in shipped_top:
                report("c", where, f"`{token}`: no such path in the repository or in {crate}'s package")
            continue
        if not in_package(found, crate, shipped):
            report("c", where, f"`{token}` ({found.rstrip('/')}) is not in {crate}'s package")

# Which doc lines docs.rs shows. A module file's inner docs (`//!`) are
# published when every `mod` on its way from lib.rs is `pub`, not
# `#[doc(hidden)]`, not `cfg(test)` and not named `__*`. An item's outer
# docs (`///`) are published when the item is `pub` (with the crates'
# `unreachable_pub` lint, a `pub` item is reachable) or is an enum
# variant, a trait's item or a trait impl's method, unless the item is
# `#[doc(hidden)]` or its file is in a hidden or test module. A `.md` file
# counts where a published item includes it as its docs.

def module_files(name):
    """{file: published?} for the crate's module files, from lib.rs."""
    lib = lib_rs(name)
    if lib is None:
        # A binary crate (nowait-cli) publishes no rustdoc.
        return {}
    status = {lib: True}
    todo = [lib]
    while todo:
        path = todo.pop()
        lines = read_lines(path)
        here = os.path.dirname(path)
        stem = os.path.splitext(os.path.basename(path))[0]
        child_dir = here if stem in ("lib", "mod", "main") else os.path.join(here, stem)
        attrs = []
        for line in lines:
            if re.match(r"^\s*#\[", line):
                attrs.append(line)
                continue
            m = re.match(r"^\s*(pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", line)
            if m:
                vis, mod = m.groups()
                attr_text = " ".join(attrs)
                pm = re.search(r'#\[path\s*=\s*"([^"]+)"\]', attr_text)
                if pm:
                    files = [os.path.normpath(os.path.join(here if stem in ("lib", "mod") else child_dir, pm.group(1)))]
                else:
                    files = [os.path.join(child_dir, mod + ".rs"), os.path.join(child_dir, mod, "mod.rs")]
                published_mod = (status[path] and vis is not None and vis.strip() == "pub"
                                 and "doc(hidden)" not in attr_text
                                 and not re.search(r"cfg\(test\)", attr_text)
                                 and not mod.startswith("__"))
                for f in files:
                    if os.path.exists(f) and f not in status:
                        status[f] = published_mod
                        todo.append(f)
            if not re.match(r"^\s*(//|$)", line):
                attrs = []
    return status

ITEM_PUB = re.compile(r"^\s*pub\s")
ITEM_PRIVATE = re.compile(
    r"^\s*(pub\(|fn\s|const\s|static\s|struct\s|enum\s|union\s|mod\s|type\s|trait\s|"
    r"impl\b|use\s|let\s|unsafe\s|async\s|extern\s|macro_rules!|\w+\s*:)")

def enclosing_block(lines, k):
    """The header line of the block that line k (0-based) sits in."""
    indent = len(lines[k]) - len(lines[k].lstrip())
    for j in range(k - 1, -1, -1):
        line = lines[j]
        if line.strip() and len(line) - len(line.lstrip()) < indent and not line.lstrip().startswith(("//", "#")):
            return line.strip()
    return ""

def item_published(lines, k, attrs):
    """Whether the item declared at line k (0-based) is shown by rustdoc."""
    if "doc(hidden)" in attrs or re.search(r"cfg\(test\)", attrs):
        return False
    item = lines[k]
    if re.match(r"^\s*macro_rules!", item):
        return "macro_export" in attrs
    if ITEM_PUB.match(item):
        return True
    block = enclosing_block(lines, k)
    if re.match(r"^(pub\s+)?(unsafe\s+)?trait\s", block) or re.match(r"^(unsafe\s+)?impl\b.*\bfor\b", block):
        return True  # a trait's items and a trait impl's methods
    if ITEM_PRIVATE.match(item):
        return False
    return bool(re.match(r"^\s*\w+\s*([,({=]|$)", item))  # an enum variant

def doc_text(path, file_published, includes):
    """(line number, doc text) of the published rustdoc in a source file
    (`///`, `//!`, string `doc = "..."` attributes), and the `.md` files
    published items include into `includes`."""
    lines = read_lines(path)
    out, block, attrs = [], [], ""
    inner_published = file_published is True
    # Each doc block is read on its own (a fence left open in one does not
    # hide the next): a `None` entry separates blocks.
    in_inner = False
    for k, line in enumerate(lines):
        m = re.match(r"^\s*//([/!])(?![/!])\s?(.*)$", line)
        inner_attr = line.strip().startswith("#![")
        if (m and m.group(1) == "!") or inner_attr:
            if not in_inner:
                out.append(None)
            in_inner = True
        else:
            in_inner = False
        if m and m.group(1) == "!":
            if inner_published:
                out.append((k + 1, m.group(2)))
            continue
        if m:
            block.append((k + 1, m.group(2)))
            continue
        stripped = line.strip()
        if stripped.startswith("#!["):
            # Of `cfg_attr(x, doc = A)` / `cfg_attr(not(x), doc = B)`
            # alternatives, A is read.
            d = re.search(r"\bdoc\s*=\s*\"((?:[^\"\\]|\\.)*)\"", line)
            if d and inner_published and "cfg_attr(not(" not in line.replace(" ", ""):
                out.append((k + 1, d.group(1)))
            continue
        if stripped.startswith("#["):
            attrs += " " + stripped
            d = re.search(r"\bdoc\s*=\s*\"((?:[^\"\\]|\\.)*)\"", line)
            if d:
                block.append((k + 1, d.group(1)))
            inc = re.search(r'doc\s*=\s*include_str!\(\s*"([^"]+)"\s*\)', line)
            if inc:
                block.append((k + 1, ("include", inc.group(1))))
            continue
        if stripped.startswith("//") or not stripped:
            if not stripped:
                block, attrs = [], ""
            continue
        # An item line: the docs and attributes above are its own.
        if block or attrs:
            shown = file_published is not None and item_published(lines, k, attrs) and not (
                file_published is False and re.match(r"^\s*//!", line))
            # Items in an unpublished (hidden or test) module file stay
            # unpublished; private module files' `pub` items are re-exported.
            if file_published == "hidden":
                shown = False
            out.append(None)
            for n, text in block:
                if isinstance(text, tuple):
                    if shown:
                        includes.append(os.path.normpath(os.path.join(os.path.dirname(path), text[1])))
                elif shown:
                    out.append((n, text))
        block, attrs = [], ""
        mod_block = re.match(r"^\s*(pub(?:\([^)]*\))?\s+)?mod\s+\w+\s*\{", line)
        if mod_block:
            inner_published = (file_published is True and mod_block.group(1) is not None
                               and mod_block.group(1).strip() == "pub")
        elif stripped == "}" and not line.startswith(" "):
            inner_published = file_published is True
    return out

def code_spans(text):
    """(line number, span) for each inline code span, spans across line
    breaks within a paragraph included, fenced blocks skipped."""
    out, para, fenced = [], [], False
    def flush():
        if not para:
            return
        joined = "\n".join(t for _, t in para)
        starts, pos = [], 0
        for n, t in para:
            starts.append((pos, n))
            pos += len(t) + 1
        for m in re.finditer(r"`([^`]+)`", re.sub(r"\]\([^()\s]*\)", lambda x: "]" + " " * (len(x.group(0)) - 1), joined)):
            n = max(n for p, n in starts if p <= m.start())
            out.append((n, m.group(1)))
        para.clear()
    for entry in text:
        if entry is None:
            flush()
            fenced = False
            continue
        n, t = entry
        if t.lstrip().startswith("```"):
            flush()
            fenced = not fenced
            continue
        if fenced:
            continue
        if not t.strip():
            flush()
            continue
        para.append((n, t))
    flush()
    return out

def scan(citing, crate, shipped, text, is_readme):
    skipped = set()
    if is_readme:
        section_of, current = {}, None
        for n, t in filter(None, text):
            m = re.match(r"^(#+)\s+(.*?)\s*$", t)
            if m and len(m.group(1)) <= 2:
                current = m.group(2)
            section_of[n] = current
        skipped = {n for n, sec in section_of.items() if sec == "Repository"}
    fenced = False
    for entry in text:
        if entry is None:
            fenced = False
            continue
        n, t = entry
        if t.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        targets = [m.group(1) for m in LINK.finditer(t)]
        m = REFDEF.match(t)
        if m:
            targets.append(m.group(1))
        for target in targets:
            if is_readme and not re.match(r"^(https?:|mailto:|#)", target):
                report("c", f"{citing}:{n}", f"relative link `{target}`: crates.io has no repository to resolve it against")
            elif n not in skipped:
                check_path(target, citing, crate, shipped, f"{citing}:{n}")
    for n, span in code_spans(text):
        if n not in skipped:
            check_path(span, citing, crate, shipped, f"{citing}:{n}")

licences = ("LICENSE-MIT", "LICENSE-APACHE")
for name in published:
    shipped = package_list(name)
    base = crate_dir(name)
    modules = module_files(name)
    includes = []
    for path in sorted(modules):
        published_file = modules[path] if modules[path] else (
            "hidden" if re.search(r"/(__\w+|private)\.rs$|/tests\.rs$", path) else False)
        scan(path, name, shipped, doc_text(path, published_file, includes), is_readme=False)
    for path in sorted(set(includes)):
        scan(path, name, shipped, list(enumerate(read_lines(path), 1)), is_readme=False)
    readme = packages[name].get("readme")
    if readme:
        readme = os.path.relpath(os.path.join(base, readme) if not os.path.isabs(readme) else readme, root)
        scan(readme, name, shipped, list(enumerate(read_lines(readme), 1)), is_readme=True)

    # --- (d) licence files ---------------------------------------------------
    for lic in licences:
        if not os.path.exists(lic):
            report("d", lic, "missing at the repository root")
        elif lic not in shipped:
            report("d", f"{base}/Cargo.toml", f"{name}'s package does not ship {lic} (see its `include`)")
        elif open(os.path.join(base, lic), "rb").read() != open(lic, "rb").read():
            report("d", f"{base}/{lic}", f"differs from the repository root's {lic}")

titles = {
    "a": "(a) features missing from, or unknown to, the crate docs and the README",
    "b": "(b) fuzz targets: SECURITY.md against fuzz/fuzz_targets/",
    "c": "(c) paths cited in published docs that the package does not ship",
    "d": "(d) licence files in the packages",
}
total = 0
for key in "abcd":
    found = sorted(set(problems[key]), key=lambda s: (s.split(":")[0], int(s.split(":")[1]) if s.split(":")[1].isdigit() else 0, s))
    total += len(found)
    print(f"{titles[key]}: {'ok' if not found else f'{len(found)} problem(s)'}")
    for p in found:
        print(f"  {p}")
if total:
    sys.exit(f"ci/docs-check.sh: {total} problem(s)")
print(f"ci/docs-check.sh: docs match ({', '.join(published)})")
PY
