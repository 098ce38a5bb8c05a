#!/usr/bin/env python3
"""Per-process latency modes: many processes of one latency case each.

Runs `latency_load --child lat FRONT` (quill's method: batches of 20
calls timed together, 2.0-2.2 ms apart; one thread, then two) once per
process, PROCS processes per variant, variants interleaved (a round runs
each variant once, in turn), each pinned with `taskset -c 0,1`; with
`--aslr on,off` each front end runs with address-space randomization as
the system has it and under `setarch -R` (every process the same virtual
addresses). A variant is bimodal when its processes' p50s fall into two
groups: the table gives min, median and max of the per-process p50 and
p99.9, how many processes lie within 10 % of the median, and the split
at the largest gap between sorted p50s (the two groups' sizes and
medians) when that gap is wider than 25 % of the lower group's median.

    python3 benches/bimodal.py [--procs 40] [--fronts nowait-macro-drop,nowait-layer]
                               [--aslr on,off] [--batches 500] [--name bimodal]
                               [--thp madvise,always] [--quill PATH] [--window W]

`--thp madvise,always` (root only) adds transparent huge pages as a
dimension: before each process the system's setting
(/sys/kernel/mm/transparent_hugepage/enabled) is set to the variant's, and
it is restored at the end. With `always`, the ring's memory (and quill's
queues) can be backed by 2 MiB pages; with `madvise`, only what asks.

A front end may carry the benchmark's knobs after `@`, joined by `+`:
`nowait-macro-drop@NOWAIT_BENCH_CAPACITY=262144` is the macros with a
256 KiB ring, a variant of its own. `--window W` also records the p50 of
every W consecutive batches of the one-thread run, in time order: whether
a process keeps its mode while it runs.

`--quill` adds quill's own hot-path benchmark as a variant: build it from
quill's `benchmarks/hot_path_latency/quill_hot_path_rdtsc_clock.cpp` with
its backend pinned to CPU 0, `THREAD_LIST_COUNT` {1, 2} and the
iterations wanted (not committed here).

Writes benches/results/NAME.json (every process's numbers) and NAME.md.
Run it on a quiet machine: one process at a time, nothing else running.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def bench_binary():
    out = subprocess.run(
        ["cargo", "bench", "-p", "nowait-benches", "--bench", "latency_load",
         "--no-run", "--message-format=json"],
        cwd=ROOT, check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("reason") == "compiler-artifact" and msg.get("executable") \
                and msg["target"]["name"] == "latency_load":
            return msg["executable"]
    sys.exit("bimodal.py: cargo built no latency_load executable")


def one(binary, front, aslr, batches, window=None):
    cmd = ["taskset", "-c", "0,1"]
    if not aslr:
        cmd += ["setarch", platform.machine(), "-R"]
    front, _, knobs = front.partition("@")
    cmd += [binary, "--child", "lat", front, "-"]
    env = dict(os.environ, NOWAIT_BENCH_SPACINGS="q20x2ms",
               NOWAIT_BENCH_BATCHES=str(batches))
    for knob in filter(None, knobs.split("+")):
        name, _, value = knob.partition("=")
        env[name] = value
    if window:
        env["NOWAIT_BENCH_WINDOW"] = str(window)
    run = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    for line in run.stdout.splitlines():
        if line.startswith("@@RESULT "):
            result = json.loads(line[len("@@RESULT "):])
            rows = {r["threads"]: r for r in result["spaced"]}
            extra = ("steady_p50_ns", "cpus", "tsc_ns_per_1e9_ticks", "window_p50_ns")
            return {t: dict({"p50": rows[t]["p50_ns"], "p999": rows[t]["p999_ns"]},
                            **{k: rows[t][k] for k in extra if k in rows[t]})
                    for t in (1, 2) if t in rows}
    raise RuntimeError(f"{' '.join(cmd)}: no result\n{run.stderr[-2000:]}")


def one_quill(binary, aslr):
    """quill's own hot-path benchmark (built by the caller from quill's
    `benchmarks/hot_path_latency`, its backend pinned to CPU 0, thread
    counts 1 and 2): its p50 and p99.9 per thread count."""
    import tempfile
    cmd = ["taskset", "-c", "0,1"]
    if not aslr:
        cmd += ["setarch", platform.machine(), "-R"]
    cmd += [binary]
    with tempfile.TemporaryDirectory() as cwd:
        run = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300)
    out, threads = {}, None
    for line in run.stdout.splitlines():
        if line.startswith("Thread Count "):
            threads = int(line.split()[2])
        elif threads and line.strip().startswith("|") and "th" not in line:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            out[threads] = {"p50": float(cells[0]), "p999": float(cells[5])}
            threads = None
    if not out:
        raise RuntimeError(f"quill: no result\n{run.stdout[-2000:]}{run.stderr[-2000:]}")
    return out


THP = "/sys/kernel/mm/transparent_hugepage/enabled"


def thp_setting():
    with open(THP) as f:
        return f.read().split("[")[1].split("]")[0]


def set_thp(mode):
    with open(THP, "w") as f:
        f.write(mode)


def summary(values):
    values = sorted(values)
    med = statistics.median(values)
    near = sum(1 for v in values if abs(v - med) <= 0.10 * med)
    split = None
    best = 0.0
    for i in range(1, len(values)):
        lo = statistics.median(values[:i])
        gap = (values[i] - values[i - 1]) / lo if lo > 0 else 0.0
        if gap > best:
            best, split = gap, i
    modes = None
    if split is not None and best > 0.25:
        modes = {"low_n": split, "low_median": statistics.median(values[:split]),
                 "high_n": len(values) - split,
                 "high_median": statistics.median(values[split:]), "gap": round(best, 3)}
    return {"min": values[0], "median": med, "max": values[-1],
            "within_10pct": near, "n": len(values), "modes": modes}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--procs", type=int, default=40)
    ap.add_argument("--fronts", default="nowait-macro-drop,nowait-layer")
    ap.add_argument("--aslr", default="on,off")
    ap.add_argument("--batches", type=int, default=500)
    ap.add_argument("--thp", default=None, help="e.g. madvise,always (root: sets the system's THP mode)")
    ap.add_argument("--name", default="bimodal")
    ap.add_argument("--window", type=int, default=None,
                    help="also record the p50 of every WINDOW consecutive batches (one thread)")
    ap.add_argument("--quill", help="quill's hot_path_latency binary, run as one more variant")
    ap.add_argument("--report", action="store_true",
                    help="no runs: write NAME.md again from NAME.json")
    args = ap.parse_args()
    out = os.path.join(ROOT, "benches", "results", args.name)
    if args.report:
        with open(out + ".json") as f:
            saved = json.load(f)
        runs = {k: [{int(t): v for t, v in proc.items()} for proc in procs]
                for k, procs in saved["runs"].items()}
        window = saved.get("window")
        if window is None and "--window" in saved["command"].split():
            words = saved["command"].split()
            window = int(words[words.index("--window") + 1])
        write_report(out, saved["command"], saved["procs"], saved["batches"], window, runs)
        return
    fronts = args.fronts.split(",")
    modes = [m == "on" for m in args.aslr.split(",")]
    thps = args.thp.split(",") if args.thp else [None]
    binary = bench_binary()
    variants = [(f, a, h) for f in fronts for a in modes for h in thps]
    if args.quill:
        variants += [("quill", a, h) for a in modes for h in thps]

    def key_of(front, aslr, thp):
        return f"{front} aslr={'on' if aslr else 'off'}" + (f" thp={thp}" if thp else "")

    runs = {key_of(*v): [] for v in variants}
    if args.quill:
        print("quill: its own benchmark, its iterations as built", file=sys.stderr)
    thp_before = thp_setting() if args.thp else None
    start = time.time()
    try:
        for p in range(args.procs):
            for front, aslr, thp in variants:
                if thp:
                    set_thp(thp)
                if front == "quill":
                    runs[key_of(front, aslr, thp)].append(one_quill(args.quill, aslr))
                else:
                    runs[key_of(front, aslr, thp)].append(one(binary, front, aslr, args.batches, args.window))
            print(f"round {p + 1}/{args.procs} ({time.time() - start:.0f} s)", file=sys.stderr)
    finally:
        if thp_before:
            set_thp(thp_before)
    command = " ".join(sys.argv)
    with open(out + ".json", "w") as f:
        json.dump({"command": command, "procs": args.procs, "batches": args.batches,
                   "window": args.window, "runs": runs,
                   "summary": summarize(runs)}, f, indent=1)
    write_report(out, command, args.procs, args.batches, args.window, runs)


def summarize(runs):
    table = {}
    for key, procs in runs.items():
        for t in (1, 2):
            table[f"{key} x{t}"] = {
                "p50": summary([r[t]["p50"] for r in procs if t in r]),
                "p999": summary([r[t]["p999"] for r in procs if t in r]),
            }
    return table


def write_report(out, command, procs_n, batches, window, runs):
    table = summarize(runs)
    lines = [f"# {os.path.basename(out)}: per-process p50 over {procs_n} processes per variant",
             "",
             f"`python3 benches/bimodal.py {' '.join(command.split()[1:])}`: quill's method "
             f"({batches} batches of 20 calls per thread count), one process per run, "
             "variants interleaved, `taskset -c 0,1`; `aslr=off` is `setarch -R`; `thp=` is the "
             "system's transparent huge pages setting while the process ran. "
             "Nanoseconds; every process's numbers in the JSON.",
             "",
             "| variant | p50 min | p50 median | p50 max | within 10 % | modes (n @ median) "
             "| p99.9 min | p99.9 median | p99.9 max | p99.9 modes (n @ median) |",
             "|---|---:|---:|---:|---:|---|---:|---:|---:|---|"]

    def modes_of(m):
        return (f"{m['low_n']} @ {m['low_median']:.0f}, {m['high_n']} @ {m['high_median']:.0f}"
                if m else "one")
    for key, s in table.items():
        a, b = s["p50"], s["p999"]
        lines.append(f"| {key} | {a['min']:.0f} | {a['median']:.0f} | {a['max']:.0f} | "
                     f"{a['within_10pct']}/{a['n']} | {modes_of(a['modes'])} | "
                     f"{b['min']:.0f} | {b['median']:.0f} | {b['max']:.0f} | {modes_of(b['modes'])} |")
    spans = {}
    for key, procs in runs.items():
        ratios = [max(w) / min(w) for r in procs
                  for w in [r.get(1, {}).get("window_p50_ns") or []] if len(w) > 1 and min(w) > 0]
        if ratios:
            spans[key] = ratios
    if spans:
        lines += ["",
                  f"Within one process (one thread, p50 of every {window} batches in "
                  "time order): the slowest window over the fastest.",
                  "",
                  "| variant | processes | median slowest/fastest | processes whose windows "
                  "differ by more than 1.25x |",
                  "|---|---:|---:|---:|"]
        for key, ratios in spans.items():
            lines.append(f"| {key} | {len(ratios)} | {statistics.median(ratios):.2f} | "
                         f"{sum(1 for x in ratios if x > 1.25)} |")
    # Same-round ratios against the first variant: each round runs every
    # variant within seconds, so the host's state cancels in part.
    keys = list(runs)
    if len(keys) > 1:
        base = keys[0]
        lines += ["", f"Per-round ratio of p50 against `{base}` (median over rounds):", "",
                  "| variant | x1 | x2 |", "|---|---:|---:|"]
        for key in keys[1:]:
            cells = []
            for t in (1, 2):
                rs = [b[t]["p50"] and r[t]["p50"] / b[t]["p50"]
                      for r, b in zip(runs[key], runs[base]) if t in r and t in b and b[t]["p50"]]
                cells.append(f"{statistics.median(rs):.2f}" if rs else "")
            lines.append(f"| {key} | {cells[0]} | {cells[1]} |")
    with open(out + ".md", "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
