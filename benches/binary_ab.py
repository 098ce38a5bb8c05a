#!/usr/bin/env python3
"""What a binary log saves the writer thread, measured.

Runs the binary_sink bench (FullPolicy::Block, as fast as the producer
threads can push) for a text file sink and a binary log, interleaved case
by case in every repetition (A B A B ..., so drift on the machine hits every
case alike), and reports medians:

* records/s until the last record is on disk, through the macros and
  through the `tracing` layer, with 1 and 2 producer threads, each run
  timed after --warmup records logged untimed in the same process (quill's
  benchmark, beside, warms its backend by spinning it);
* the writer thread's CPU time per record (process CPU less the producers');
* bytes on disk per record, plain and with a rolling sink compressing its
  rotated files with zstd;
* how fast `nowait cat`'s rendering (binary::Reader + Text) turns the binary
  file back into text, against the text sink's own records/s;
* quill's throughput workload (4M records of "Iteration: {} int: {} double:
  {}", timed until written, writer/backend on CPU 0, producer free) through
  nowait's text and binary sinks, and, with --quill PATH, quill's own
  benchmark (benchmarks/backend_throughput/quill_backend_throughput.cpp,
  built with its backend pinned to CPU 0 and its producer to CPU 1) in the
  same rounds.

Every run's numbers and the medians go to benches/results/binary-ab.json,
the tables to benches/results/binary-ab.md.

Run: taskset -c 0,1 python3 benches/binary_ab.py [--reps 5] [--records 2000000]
     [--quill PATH] [--dir /tmp]
"""
import argparse, datetime, json, os, re, shutil, statistics, subprocess, sys, tempfile

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
QUILL_RECORDS = 4_000_000
# (front, workload, sink, threads, compress)
CASES = [(f, "app", k, t, "none") for f in ("macro", "layer") for t in (1, 2)
         for k in ("text", "binary")]
CASES += [("macro", "app", k, 1, "zstd") for k in ("text", "binary")]
CASES += [("macro", "quill", k, 1, "none") for k in ("text", "binary")]

ap = argparse.ArgumentParser()
ap.add_argument("--reps", type=int, default=5)
ap.add_argument("--records", type=int, default=2_000_000)
ap.add_argument("--warmup", type=int, default=1_000_000,
                help="records each run logs untimed first (the CPUs come up to speed)")
ap.add_argument("--quill", default=None, help="quill's backend_throughput binary, run beside")
ap.add_argument("--dir", default=None, help="where the files go (default: the temp dir)")
ap.add_argument("--out", default=os.path.join(root, "benches", "results", "binary-ab.json"))
a = ap.parse_args()

bench = ["cargo", "bench", "-q", "-p", "nowait-benches", "--features", "zstd",
         "--bench", "binary_sink"]
subprocess.run(bench[:2] + bench[3:] + ["--no-run"], cwd=root, check=True)
tmp = tempfile.mkdtemp(prefix="binary-ab.")
runs = {c: [] for c in CASES}
quill_runs = []


def run_quill(rep):
    cwd = tempfile.mkdtemp(prefix="quill.", dir=a.dir)
    out = subprocess.run([os.path.abspath(a.quill)], cwd=cwd, check=True,
                         capture_output=True, text=True).stdout
    m = re.search(r"Throughput is ([0-9.]+) million msgs/sec average, total time elapsed: "
                  r"([0-9]+) ms for ([0-9]+)", out)
    if not m:
        sys.exit(f"quill printed no throughput: {out!r}")
    size = os.path.getsize(os.path.join(cwd, "quill_backend_total_time.log"))
    n = int(m.group(3))
    shutil.rmtree(cwd)
    return {"records_per_s": float(m.group(1)) * 1e6, "elapsed_ms": int(m.group(2)),
            "records": n, "bytes_per_record": size / n}


for rep in range(a.reps):
    for case in CASES:
        front, workload, sink, threads, compress = case
        out = os.path.join(tmp, "-".join(map(str, case)) + f"-{rep}.json")
        n = QUILL_RECORDS if workload == "quill" else a.records
        cmd = bench + ["--", "--sink", sink, "--threads", str(threads), "--compress", compress,
                       "--front", front, "--workload", workload, "--records", str(n),
                       "--warmup", str(a.warmup),
                       "--out", out]
        if workload == "quill":
            cmd += ["--writer-cpu", "0"]
        if a.dir:
            cmd += ["--dir", a.dir]
        print(f"run {rep + 1}/{a.reps}: {front} {workload} {sink}, {threads} thread(s), {compress}",
              file=sys.stderr, flush=True)
        subprocess.run(cmd, cwd=root, check=True, stdout=subprocess.DEVNULL)
        with open(out) as f:
            runs[case].append(json.load(f))
        if a.quill and case == CASES[-1]:
            print(f"run {rep + 1}/{a.reps}: quill", file=sys.stderr, flush=True)
            quill_runs.append(run_quill(rep))

KEYS = ("records_per_s", "bytes_per_record", "render_records_per_s", "writer_cpu_ns_per_record",
        "writer_busy")
rows = []
for case in CASES:
    r = runs[case]
    row = dict(zip(("front", "workload", "sink", "threads", "compress"), case))
    for k in KEYS:
        row[k] = statistics.median(x.get(k, float("nan")) for x in r)
    row["runs"] = r
    rows.append(row)
by = {tuple(r[k] for k in ("front", "workload", "sink", "threads", "compress")): r for r in rows}
for row in rows:
    base = by[(row["front"], row["workload"], "text", row["threads"], row["compress"])]
    row["vs_text"] = row["records_per_s"] / base["records_per_s"]
    row["bytes_vs_text"] = row["bytes_per_record"] / base["bytes_per_record"]
    row["writer_cpu_vs_text"] = row["writer_cpu_ns_per_record"] / base["writer_cpu_ns_per_record"]
quill = None
if quill_runs:
    quill = {"records_per_s": statistics.median(q["records_per_s"] for q in quill_runs),
             "bytes_per_record": statistics.median(q["bytes_per_record"] for q in quill_runs),
             "runs": quill_runs}

commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root,
                        capture_output=True, text=True).stdout.strip()
rustc = subprocess.run(["rustc", "-V"], capture_output=True, text=True).stdout.strip()
doc = {"bench": "binary_sink: lossless records/s, writer CPU and bytes per record, text file vs binary log",
       "records": a.records, "warmup": a.warmup, "quill_records": QUILL_RECORDS, "reps": a.reps,
       "order": "interleaved " + ", ".join(" ".join(map(str, c)) for c in CASES)
                + (", quill" if a.quill else ""),
       "commit": commit, "rustc": rustc, "cpus": os.cpu_count(), "machine": os.uname().machine,
       "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
       "rows": rows, "quill": quill}
with open(a.out, "w") as f:
    json.dump(doc, f, indent=1)

lines = [f"Medians of {a.reps} interleaved runs; {a.records} records per run (quill's workload: "
         f"{QUILL_RECORDS}), timed after {a.warmup} untimed ones in the same process "
         f"(the CPUs come up to speed), FullPolicy::Block (nothing dropped). `app`: a request line with "
         f"three fields and two formatted values; `quill`: quill's throughput message. "
         f"Writer CPU: the process's CPU time less the producer threads', per record; writer "
         f"busy: the writer thread's time on a CPU over the wall time (1: the writer limits "
         f"the rate). "
         f"Commit {commit}, {rustc}, {os.cpu_count()} CPUs.", "",
         "| front | workload | sink | threads | compression | records/s | runs: min–max | vs text | writer CPU ns/record | vs text | writer busy | bytes/record | vs text | render records/s (`nowait cat`) |",
         "| --- | --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
for r in rows:
    render = f"{r['render_records_per_s']:,.0f}" if r["render_records_per_s"] else ""
    lines.append(f"| {r['front']} | {r['workload']} | {r['sink']} | {r['threads']} | {r['compress']} "
                 f"| {r['records_per_s']:,.0f} "
                 f"| {min(x['records_per_s'] for x in r['runs']) / 1e6:.1f}M–"
                 f"{max(x['records_per_s'] for x in r['runs']) / 1e6:.1f}M | {r['vs_text']:.3f} "
                 f"| {r['writer_cpu_ns_per_record']:.0f} | {r['writer_cpu_vs_text']:.3f} "
                 f"| {r['writer_busy']:.2f} "
                 f"| {r['bytes_per_record']:.1f} | {r['bytes_vs_text']:.3f} | {render} |")
if quill:
    nb = by[("macro", "quill", "binary", 1, "none")]
    nt = by[("macro", "quill", "text", 1, "none")]
    lines += ["", f"quill's throughput workload, same rounds ({QUILL_RECORDS} records, timed until written):", "",
              "| logger | records/s | vs quill | bytes/record |", "| --- | ---: | ---: | ---: |",
              f"| quill (its own benchmark, backend spinning on CPU 0) | {quill['records_per_s']:,.0f} | 1.000 | {quill['bytes_per_record']:.1f} |",
              f"| nowait text file | {nt['records_per_s']:,.0f} | {nt['records_per_s'] / quill['records_per_s']:.3f} | {nt['bytes_per_record']:.1f} |",
              f"| nowait binary log | {nb['records_per_s']:,.0f} | {nb['records_per_s'] / quill['records_per_s']:.3f} | {nb['bytes_per_record']:.1f} |"]
md = "\n".join(lines) + "\n"
with open(os.path.splitext(a.out)[0] + ".md", "w") as f:
    f.write(md)
print(md)
