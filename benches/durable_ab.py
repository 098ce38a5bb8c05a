#!/usr/bin/env python3
"""The cost of Builder::crash_durable, measured.

Runs latency_load's nowait cases without and with `--durable DIR`
(default /dev/shm, a tmpfs, as the docs advise), interleaved
(plain, durable, plain, durable, ...), and prints durable/plain ratios of
the medians over the runs: per-call latency p50 and p99.9 (spaced cases),
lossless end-to-end throughput, and bytes per write() when paced. Writes
every run's numbers and the ratios to benches/results/durable-ab.json.

Run: python3 benches/durable_ab.py [--reps 3] [--dir /dev/shm]
     (about 1 min per run; builds the bench first)
"""
import argparse, json, os, statistics, subprocess, sys, tempfile, datetime

from latency_json import metrics

CASES = "lat/nowait-macro-block,lat/nowait-layer,tput/nowait-macro-block,tput/nowait-layer,paced/nowait-layer"
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

ap = argparse.ArgumentParser()
ap.add_argument("--reps", type=int, default=3)
ap.add_argument("--dir", default="/dev/shm")
ap.add_argument("--out", default=os.path.join(root, "benches", "results", "durable-ab.json"))
a = ap.parse_args()

subprocess.run(["cargo", "bench", "-p", "nowait-benches", "--bench", "latency_load", "--no-run"],
               cwd=root, check=True)
tmp = tempfile.mkdtemp(prefix="durable-ab.")
runs = {"plain": [], "durable": []}
for rep in range(a.reps):
    for variant in ("plain", "durable"):
        out = os.path.join(tmp, f"{variant}-{rep}.json")
        cmd = ["cargo", "bench", "-q", "-p", "nowait-benches", "--bench", "latency_load", "--",
               "--only", CASES, "--out", out]
        if variant == "durable":
            cmd += ["--durable", a.dir]
        print(f"run {rep + 1}/{a.reps}: {variant}", file=sys.stderr, flush=True)
        subprocess.run(cmd, cwd=root, check=True, stdout=subprocess.DEVNULL)
        with open(out) as f:
            runs[variant].append(json.load(f))


per = {v: [metrics(d) for d in runs[v]] for v in runs}
keys = sorted(set(per["plain"][0]) & set(per["durable"][0]))
rows = []
for key in keys:
    p = [r[key] for r in per["plain"] if r.get(key) is not None]
    d = [r[key] for r in per["durable"] if r.get(key) is not None]
    if not p or not d:
        continue
    mp, md = statistics.median(p), statistics.median(d)
    rows.append({"case": key[0], "metric": key[1], "plain": p, "durable": d,
                 "plain_median": mp, "durable_median": md,
                 "ratio": (md / mp) if mp else None})


def geomean(xs):
    xs = [x for x in xs if x]
    return statistics.geometric_mean(xs) if xs else None


summary = {}
for metric in ("p50_ns", "p999_ns", "records_per_s", "bytes_per_write", "peak_rss_kib"):
    for group in ("x1", "x2", ""):
        sel = [r["ratio"] for r in rows if r["metric"] == metric and (group in r["case"].split(" ")[-1] if group else True)]
        if metric in ("p50_ns", "p999_ns") and group:
            summary[f"{metric} {group}"] = geomean(sel)
        elif not group and metric not in ("p50_ns", "p999_ns"):
            summary[metric] = geomean(sel)
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip()
doc = {"bench": "latency_load, nowait cases, without and with crash_durable", "dir": a.dir,
       "reps": a.reps, "order": "interleaved plain, durable", "commit": commit,
       "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
       "summary_geomean_ratio_durable_over_plain": summary, "rows": rows}
with open(a.out, "w") as f:
    json.dump(doc, f, indent=1)
print(f"| case | metric | plain (median) | durable (median) | durable/plain |")
print("| --- | --- | ---: | ---: | ---: |")
for r in rows:
    if r["metric"] == "dropped":
        continue
    ratio = f'{r["ratio"]:.2f}x' if r["ratio"] else "-"
    print(f'| {r["case"]} | {r["metric"]} | {r["plain_median"]:.6g} | {r["durable_median"]:.6g} | {ratio} |')
print()
for k, v in summary.items():
    if v:
        print(f"geomean durable/plain {k}: {v:.3f}x")
print(f"\nwrote {a.out}", file=sys.stderr)
