#!/usr/bin/env python3
"""What compressing rotated files costs a lossless logger, measured.

Runs the rolling_compress bench (FullPolicy::Block, a rotation every
16 MiB, 4 threads logging as fast as they can) with compression none,
gzip and zstd, interleaved (none, gzip, zstd, none, gzip, zstd, ...) so
that drift on the machine hits every case alike, and reports the medians
over the runs: records/s until the last record is in a file, records/s
until every rotated file is compressed too, and bytes on disk per byte
logged. Every run's numbers and the medians go to
benches/results/rolling-compress.json, the table to
benches/results/rolling-compress.md.

With --base REV, the same cases also run from a build of REV (checked out
in a temporary worktree, built in target/ab-base-rolling), interleaved with
the work tree's (base none, work none, base gzip, work gzip, ...), and the
table gives work/base ratios instead of ratios against no compression.

Run: python3 benches/rolling_compress_ab.py [--reps 5] [--records 4000000]
     [--threads 4] [--dir /tmp] [--base REV] [--cases none,gzip,zstd]
     (builds the bench first, with the `zstd` feature; a run takes a few
     seconds; pin it with taskset -c 0,1 to compare machines)
"""
import argparse, datetime, json, os, statistics, subprocess, sys, tempfile

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
CASES = ("none", "gzip", "zstd")

ap = argparse.ArgumentParser()
ap.add_argument("--reps", type=int, default=5)
ap.add_argument("--records", type=int, default=4_000_000)
ap.add_argument("--threads", type=int, default=4)
ap.add_argument("--max-size", type=int, default=16 << 20)
ap.add_argument("--dir", default=None, help="where the files go (default: the temp dir)")
ap.add_argument("--out", default=None, help="default benches/results/rolling-compress.json "
                "(with --base: rolling-compress-ab.json)")
ap.add_argument("--base", default=None, help="a revision to compare the work tree with")
ap.add_argument("--cases", default=",".join(CASES))
a = ap.parse_args()
CASES = tuple(a.cases.split(","))
if a.out is None:
    name = "rolling-compress-ab.json" if a.base else "rolling-compress.json"
    a.out = os.path.join(root, "benches", "results", name)


def build(tree, target):
    """Builds the bench in `tree` and returns its executable."""
    out = subprocess.run(["cargo", "bench", "-p", "nowait-benches", "--features", "zstd",
                          "--bench", "rolling_compress", "--no-run", "--message-format=json"],
                         cwd=tree, check=True, capture_output=True, text=True,
                         env={**os.environ, "CARGO_TARGET_DIR": target}).stdout
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg["target"]["name"] == "rolling_compress" \
                and msg.get("executable"):
            return msg["executable"]
    sys.exit(f"no rolling_compress executable built in {tree}")


tmp = tempfile.mkdtemp(prefix="rolling-compress-ab.")
trees = {"work": (root, os.path.join(root, "target"))}
if a.base:
    base_tree = os.path.join(tmp, "base")
    subprocess.run(["git", "worktree", "add", "--detach", "-q", base_tree, a.base], cwd=root, check=True)
    trees = {"base": (base_tree, os.path.join(root, "target", "ab-base-rolling")), **trees}
try:
    exe = {v: build(*trees[v]) for v in trees}
finally:
    if a.base:
        subprocess.run(["git", "worktree", "remove", "--force", base_tree], cwd=root)
runs = {(v, c): [] for c in CASES for v in trees}
for rep in range(a.reps):
    for case in CASES:
        for v in trees:
            out = os.path.join(tmp, f"{v}-{case}-{rep}.json")
            cmd = [exe[v], "--compress", case, "--records", str(a.records),
                   "--threads", str(a.threads), "--max-size", str(a.max_size), "--out", out]
            if a.dir:
                cmd += ["--dir", a.dir]
            print(f"run {rep + 1}/{a.reps}: {v} {case}", file=sys.stderr, flush=True)
            subprocess.run(cmd, cwd=root, check=True, stdout=subprocess.DEVNULL)
            with open(out) as f:
                runs[(v, case)].append(json.load(f))

rows = []
for case in CASES:
    for v in trees:
        r = runs[(v, case)]
        med = lambda k: statistics.median(x[k] for x in r)
        rows.append({
            "tree": v,
            "compress": case,
            "write_records_per_s": med("write_records_per_s"),
            "settled_records_per_s": med("settled_records_per_s"),
            "disk_per_logged": statistics.median(x["bytes_on_disk"] / x["bytes_logged"] for x in r),
            "runs": r,
        })
by = {(r["tree"], r["compress"]): r for r in rows}
for row in rows:
    ref = by[("base", row["compress"])] if a.base else by[("work", CASES[0])]
    row["write_ratio"] = row["write_records_per_s"] / ref["write_records_per_s"]
    row["settled_ratio"] = row["settled_records_per_s"] / ref["settled_records_per_s"]

commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root,
                        capture_output=True, text=True).stdout.strip()
rustc = subprocess.run(["rustc", "-V"], capture_output=True, text=True).stdout.strip()
order = ", ".join(f"{v} {c}" for c in CASES for v in trees)
doc = {"bench": "rolling_compress: lossless throughput with compression " + "/".join(CASES),
       "records": a.records, "threads": a.threads, "max_size": a.max_size, "reps": a.reps,
       "order": "interleaved " + order, "commit": commit, "base": a.base, "rustc": rustc,
       "cpus": os.cpu_count(), "machine": os.uname().machine,
       "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
       "rows": rows}
with open(a.out, "w") as f:
    json.dump(doc, f, indent=1)

vs = f"vs base ({a.base})" if a.base else f"vs {CASES[0]}"
size = f"{a.max_size >> 20} MiB" if a.max_size >= 1 << 20 else f"{a.max_size >> 10} KiB"
lines = [f"Medians of {a.reps} interleaved runs ({order}); {a.records} records, {a.threads} threads, "
         f"a rotation every {size}, FullPolicy::Block (nothing dropped). "
         f"Commit {commit}, {rustc}, {os.cpu_count()} CPUs.", "",
         f"| tree | compression | records/s written | {vs} | records/s until archived | {vs} | disk / logged |",
         "| --- | --- | ---: | ---: | ---: | ---: | ---: |"]
for r in rows:
    lines.append(f"| {r['tree']} | {r['compress']} | {r['write_records_per_s']:,.0f} | {r['write_ratio']:.3f} "
                 f"| {r['settled_records_per_s']:,.0f} | {r['settled_ratio']:.3f} | {r['disk_per_logged']:.3f} |")
md = "\n".join(lines) + "\n"
with open(os.path.splitext(a.out)[0] + ".md", "w") as f:
    f.write(md)
print(md)
