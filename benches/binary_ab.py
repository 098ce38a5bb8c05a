#!/usr/bin/env python3
"""What a binary log saves the writer thread, measured.

Runs the binary_sink bench (FullPolicy::Block, records through the
macros, as fast as the producer threads can push them) for a text file
sink and a binary log, with 1 and 2 producer threads, and with a rolling
sink compressing its rotated files with zstd (bytes on disk), interleaved
(text 1, binary 1, text 2, binary 2, text zstd, binary zstd, text 1, ...)
so that drift on the machine hits every case alike, and reports medians:
records/s until the last record is on disk, bytes on disk per record, and
how fast `nowait cat`'s rendering (binary::Reader + Text) turns the binary
file back into text. Every run's numbers and the medians go to
benches/results/binary-ab.json, the table to benches/results/binary-ab.md.

Run: python3 benches/binary_ab.py [--reps 5] [--records 2000000] [--dir /tmp]
     (builds the bench first, with the `zstd` feature; pin it with
     taskset -c 0,1 to compare machines)
"""
import argparse, datetime, json, os, statistics, subprocess, sys, tempfile

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
CASES = [("text", 1, "none"), ("binary", 1, "none"), ("text", 2, "none"),
         ("binary", 2, "none"), ("text", 1, "zstd"), ("binary", 1, "zstd")]

ap = argparse.ArgumentParser()
ap.add_argument("--reps", type=int, default=5)
ap.add_argument("--records", type=int, default=2_000_000)
ap.add_argument("--dir", default=None, help="where the files go (default: the temp dir)")
ap.add_argument("--out", default=os.path.join(root, "benches", "results", "binary-ab.json"))
a = ap.parse_args()

bench = ["cargo", "bench", "-q", "-p", "nowait-benches", "--features", "zstd",
         "--bench", "binary_sink"]
subprocess.run(bench[:2] + bench[3:] + ["--no-run"], cwd=root, check=True)
tmp = tempfile.mkdtemp(prefix="binary-ab.")
runs = {c: [] for c in CASES}
for rep in range(a.reps):
    for case in CASES:
        sink, threads, compress = case
        out = os.path.join(tmp, f"{sink}-{threads}-{compress}-{rep}.json")
        cmd = bench + ["--", "--sink", sink, "--threads", str(threads), "--compress", compress,
                       "--records", str(a.records), "--out", out]
        if a.dir:
            cmd += ["--dir", a.dir]
        print(f"run {rep + 1}/{a.reps}: {sink}, {threads} thread(s), {compress}",
              file=sys.stderr, flush=True)
        subprocess.run(cmd, cwd=root, check=True, stdout=subprocess.DEVNULL)
        with open(out) as f:
            runs[case].append(json.load(f))

rows = []
for case in CASES:
    r = runs[case]
    med = lambda k: statistics.median(x[k] for x in r)
    rows.append({"sink": case[0], "threads": case[1], "compress": case[2],
                 "records_per_s": med("records_per_s"),
                 "bytes_per_record": med("bytes_per_record"),
                 "render_records_per_s": med("render_records_per_s"), "runs": r})
by = {(r["sink"], r["threads"], r["compress"]): r for r in rows}
for row in rows:
    base = by[("text", row["threads"], row["compress"])]
    row["vs_text"] = row["records_per_s"] / base["records_per_s"]
    row["bytes_vs_text"] = row["bytes_per_record"] / base["bytes_per_record"]

commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root,
                        capture_output=True, text=True).stdout.strip()
rustc = subprocess.run(["rustc", "-V"], capture_output=True, text=True).stdout.strip()
doc = {"bench": "binary_sink: lossless records/s and bytes per record, text file vs binary log",
       "records": a.records, "reps": a.reps,
       "order": "interleaved " + ", ".join(f"{s} {t} {c}" for s, t, c in CASES),
       "commit": commit, "rustc": rustc, "cpus": os.cpu_count(), "machine": os.uname().machine,
       "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
       "rows": rows}
with open(a.out, "w") as f:
    json.dump(doc, f, indent=1)

lines = [f"Medians of {a.reps} interleaved runs; {a.records} records through `nowait::info!` "
         f"(a deferred message, three fields), FullPolicy::Block (nothing dropped). "
         f"Commit {commit}, {rustc}, {os.cpu_count()} CPUs.", "",
         "| sink | producer threads | compression | records/s | vs text | bytes/record | vs text | render records/s (`nowait cat`) |",
         "| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: |"]
for r in rows:
    render = f"{r['render_records_per_s']:,.0f}" if r["render_records_per_s"] else ""
    lines.append(f"| {r['sink']} | {r['threads']} | {r['compress']} | {r['records_per_s']:,.0f} "
                 f"| {r['vs_text']:.3f} | {r['bytes_per_record']:.1f} | {r['bytes_vs_text']:.3f} "
                 f"| {render} |")
md = "\n".join(lines) + "\n"
with open(os.path.splitext(a.out)[0] + ".md", "w") as f:
    f.write(md)
print(md)
