#!/usr/bin/env python3
"""Two commits measured side by side: a base revision against the work tree.

Builds `latency_load` (and, with --loadtest, the demo's servers) for a base
revision, checked out in a temporary worktree, and for the work tree, then
runs them interleaved (base, work, base, work, ...: this VM's drift would
fake several percent in A A A B B B order) and prints work/base ratios of
the medians:

* latency_load's nowait cases (--cases): per-call p50 and p99.9 when
  spaced, lossless end-to-end records/s;
* with --loadtest, the demo (`loadtest/run.sh`, modes none and the nowait
  front ends, one repetition per round): each mode's req/s ratio against
  no logging in the same round and, if the round ran it, against the
  `tracing` registry alone (tracing-envfilter), base and work side by side.

Every run's numbers and the ratios go to benches/results/NAME.json, the
table to NAME.md.

Run: python3 benches/commits_ab.py --base REV --name NAME [--reps 3] [--loadtest
     [--modes M,..] [--scenarios S,..] [--sinks K,..]] [--cases C,..]
"""
import argparse, datetime, json, os, shutil, statistics, subprocess, sys, tempfile

from latency_json import metrics

root = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
CASES = "lat/nowait-macro-drop,lat/nowait-layer,tput/nowait-macro-block,tput/nowait-layer"
MODES = "none,nowait,nowait-macro"

ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument("--base", required=True, help="the revision to compare the work tree with")
ap.add_argument("--name", required=True, help="results file name under benches/results/")
ap.add_argument("--reps", type=int, default=3, help="interleaved rounds (default 3)")
ap.add_argument("--cases", default=CASES, help="latency_load --only (default: %(default)s)")
ap.add_argument("--loadtest", action="store_true", help="also run the demo in each round")
ap.add_argument("--sinks", default="pty,file,pty+file", help="demo sinks (default: %(default)s)")
ap.add_argument("--modes", default=MODES, help="demo modes (default: %(default)s)")
ap.add_argument("--scenarios", default=None, help="demo scenarios (default: run.sh's)")
a = ap.parse_args()


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, **kw)


def bench_binary(tree, target):
    """Builds latency_load in `tree` and returns its executable."""
    out = sh(["cargo", "bench", "-p", "nowait-benches", "--bench", "latency_load", "--no-run",
              "--message-format=json"], cwd=tree, capture_output=True, text=True,
             env={**os.environ, "CARGO_TARGET_DIR": target}).stdout
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg["target"]["name"] == "latency_load" \
                and msg.get("executable"):
            return msg["executable"]
    sys.exit(f"no latency_load executable built in {tree}")


base_sha = sh(["git", "rev-parse", "--short", a.base], cwd=root, capture_output=True, text=True).stdout.strip()
work_sha = sh(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True).stdout.strip()
dirty = bool(sh(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True).stdout.strip())
tmp = tempfile.mkdtemp(prefix="commits-ab.")
base_tree = os.path.join(tmp, "base")
sh(["git", "worktree", "add", "--detach", "-q", base_tree, a.base], cwd=root)
trees = {"base": (base_tree, os.path.join(root, "target", "ab-base")),
         "work": (root, os.path.join(root, "target"))}
try:
    exe = {v: bench_binary(*trees[v]) for v in trees}
    runs = {"base": [], "work": []}
    demo = {"base": [], "work": []}
    for rep in range(a.reps):
        for v in ("base", "work"):
            out = os.path.join(tmp, f"{v}-{rep}.json")
            print(f"round {rep + 1}/{a.reps}: {v} latency_load", file=sys.stderr, flush=True)
            sh([exe[v], "--bench", "--only", a.cases, "--out", out], cwd=trees[v][0],
               stdout=subprocess.DEVNULL)
            with open(out) as f:
                runs[v].append(json.load(f))
            if a.loadtest:
                d = os.path.join(tmp, f"demo-{v}-{rep}")
                print(f"round {rep + 1}/{a.reps}: {v} demo", file=sys.stderr, flush=True)
                scen = ["--scenarios", a.scenarios] if a.scenarios else []
                sh(["bash", "loadtest/run.sh", "--modes", a.modes, "--sinks", a.sinks, "--reps", "1",
                    "--out", d] + scen, cwd=trees[v][0], stdout=subprocess.DEVNULL,
                   env={**os.environ, "CARGO_TARGET_DIR": trees[v][1]})
                with open(os.path.join(d, "results.json")) as f:
                    demo[v].append(json.load(f))
finally:
    sh(["git", "worktree", "remove", "--force", base_tree], cwd=root)
    shutil.rmtree(tmp, ignore_errors=True)


def demo_ratios(doc):
    """Each mode's req/s against no logging and, where the round measured
    it, against the `tracing` registry alone (mode tracing-envfilter)."""
    out = {}
    registry = {(s["scenario"], s["sink"]): s["rps_median"] for s in doc["summary"]
                if s["mode"] == "tracing-envfilter"}
    for s in doc["summary"]:
        if s["mode"] == "none":
            continue
        out[(s["scenario"], s["sink"], s["mode"], "vs none")] = s["ratio"]
        reg = registry.get((s["scenario"], s["sink"]))
        if reg and s["mode"] != "tracing-envfilter":
            out[(s["scenario"], s["sink"], s["mode"], "vs registry")] = s["rps_median"] / reg
    return out


rows = []
for extract, kind in ((metrics, "latency_load"), (demo_ratios, "demo")):
    per = {v: [extract(d) for d in (runs if kind == "latency_load" else demo)[v]] for v in runs}
    if not per["base"]:
        continue
    for key in sorted(set(per["base"][0]) & set(per["work"][0])):
        b = [r[key] for r in per["base"] if r.get(key) is not None]
        w = [r[key] for r in per["work"] if r.get(key) is not None]
        if not b or not w:
            continue
        mb, mw = statistics.median(b), statistics.median(w)
        case, metric = (key if kind == "latency_load" else (" ".join(key[:3]), "req/s " + key[3]))
        rows.append({"bench": kind, "case": case, "metric": metric, "base": b, "work": w,
                     "base_median": mb, "work_median": mw, "ratio": (mw / mb) if mb else None})

doc = {"what": "work tree against a base revision, interleaved", "base": base_sha,
       "work": work_sha + ("+dirty" if dirty else ""), "reps": a.reps, "cases": a.cases,
       "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
       "rows": rows}
out = os.path.join(root, "benches", "results", a.name)
with open(out + ".json", "w") as f:
    json.dump(doc, f, indent=1)
lines = [f"# {a.name}: {doc['work']} against {base_sha}", "",
         f"`python3 benches/commits_ab.py --base {base_sha} --name {a.name} --reps {a.reps}"
         + (" --loadtest" if a.loadtest else "")
         + (f" --modes {a.modes}" if a.loadtest and a.modes != MODES else "")
         + (f" --scenarios {a.scenarios}" if a.loadtest and a.scenarios else "")
         + (f" --sinks {a.sinks}" if a.loadtest else "") + "`: "
         f"{a.reps} interleaved rounds, medians; numbers in `{a.name}.json`.", "",
         "| bench | case | metric | base | work | work/base |", "| --- | --- | --- | ---: | ---: | ---: |"]
for r in rows:
    if r["metric"] == "dropped":
        continue
    ratio = f'{r["ratio"]:.2f}x' if r["ratio"] else "-"
    lines.append(f'| {r["bench"]} | {r["case"]} | {r["metric"]} | {r["base_median"]:.4g} | '
                 f'{r["work_median"]:.4g} | {ratio} |')
with open(out + ".md", "w") as f:
    f.write("\n".join(lines) + "\n")
print("\n".join(lines))
print(f"\nwrote {out}.json and {out}.md", file=sys.stderr)
