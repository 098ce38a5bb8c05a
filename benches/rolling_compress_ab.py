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

Run: python3 benches/rolling_compress_ab.py [--reps 5] [--records 4000000]
     [--threads 4] [--dir /tmp]
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
ap.add_argument("--out", default=os.path.join(root, "benches", "results", "rolling-compress.json"))
a = ap.parse_args()

bench = ["cargo", "bench", "-q", "-p", "nowait-benches", "--features", "zstd",
         "--bench", "rolling_compress"]
subprocess.run(bench[:2] + bench[3:] + ["--no-run"], cwd=root, check=True)
tmp = tempfile.mkdtemp(prefix="rolling-compress-ab.")
runs = {c: [] for c in CASES}
for rep in range(a.reps):
    for case in CASES:
        out = os.path.join(tmp, f"{case}-{rep}.json")
        cmd = bench + ["--", "--compress", case, "--records", str(a.records),
                       "--threads", str(a.threads), "--max-size", str(a.max_size), "--out", out]
        if a.dir:
            cmd += ["--dir", a.dir]
        print(f"run {rep + 1}/{a.reps}: {case}", file=sys.stderr, flush=True)
        subprocess.run(cmd, cwd=root, check=True, stdout=subprocess.DEVNULL)
        with open(out) as f:
            runs[case].append(json.load(f))

rows = []
for case in CASES:
    r = runs[case]
    med = lambda k: statistics.median(x[k] for x in r)
    rows.append({
        "compress": case,
        "write_records_per_s": med("write_records_per_s"),
        "settled_records_per_s": med("settled_records_per_s"),
        "disk_per_logged": statistics.median(x["bytes_on_disk"] / x["bytes_logged"] for x in r),
        "runs": r,
    })
base = rows[0]["write_records_per_s"]
for row in rows:
    row["write_vs_none"] = row["write_records_per_s"] / base if base else None

commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root,
                        capture_output=True, text=True).stdout.strip()
rustc = subprocess.run(["rustc", "-V"], capture_output=True, text=True).stdout.strip()
doc = {"bench": "rolling_compress: lossless throughput with compression none/gzip/zstd",
       "records": a.records, "threads": a.threads, "max_size": a.max_size, "reps": a.reps,
       "order": "interleaved none, gzip, zstd", "commit": commit, "rustc": rustc,
       "cpus": os.cpu_count(), "machine": os.uname().machine,
       "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
       "rows": rows}
with open(a.out, "w") as f:
    json.dump(doc, f, indent=1)

lines = [f"Medians of {a.reps} interleaved runs; {a.records} records, {a.threads} threads, "
         f"a rotation every {a.max_size >> 20} MiB, FullPolicy::Block (nothing dropped). "
         f"Commit {commit}, {rustc}, {os.cpu_count()} CPUs.", "",
         "| compression | records/s written | vs none | records/s until archived | disk / logged |",
         "| --- | ---: | ---: | ---: | ---: |"]
for r in rows:
    lines.append(f"| {r['compress']} | {r['write_records_per_s']:,.0f} | {r['write_vs_none']:.3f} "
                 f"| {r['settled_records_per_s']:,.0f} | {r['disk_per_logged']:.3f} |")
md = "\n".join(lines) + "\n"
with open(os.path.splitext(a.out)[0] + ".md", "w") as f:
    f.write(md)
print(md)
