#!/usr/bin/env python3
"""Summarise the peer benches: median ns per call for each peer, as a table
and as JSON (benches/results.json is not committed; it is re-made per run).

Run after: for b in peer_nowait peer_tracing_appender peer_slog_async peer_ftlog peer_fast_log;
           do cargo bench -p nowait-benches --bench $b; done
"""
import json, os, platform, subprocess, sys

root = os.path.join(os.path.dirname(__file__), "..", "target", "criterion", "log_3_fields")
rows = []
for peer in sorted(os.listdir(root)):
    est = os.path.join(root, peer, "3", "new", "estimates.json")
    if not os.path.exists(est):
        continue
    with open(est) as f:
        e = json.load(f)
    rows.append({"peer": peer, "median_ns": e["median"]["point_estimate"],
                 "ci_low_ns": e["median"]["confidence_interval"]["lower_bound"],
                 "ci_high_ns": e["median"]["confidence_interval"]["upper_bound"]})
if not rows:
    sys.exit("no results under " + root)
# The baseline is what Rust services use today: tracing-appender.
base = next((r for r in rows if r["peer"] == "tracing-appender"), rows[0])
print(f"{'peer':<28} {'median ns/call':>15} {'vs ' + base['peer']:>26}")
for r in sorted(rows, key=lambda r: r["median_ns"]):
    r["ratio_to_baseline"] = r["median_ns"] / base["median_ns"]
    print(f"{r['peer']:<28} {r['median_ns']:>15.1f} {r['ratio_to_baseline']:>25.2f}x")
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
rustc = subprocess.run(["rustc", "-V"], capture_output=True, text=True).stdout.strip()
out = {"machine": {"nproc": os.cpu_count(), "platform": platform.platform()}, "rustc": rustc,
       "commit": commit, "workload": "message + 3 fields, null sink", "baseline": base["peer"], "results": rows}
with open(os.path.join(os.path.dirname(__file__), "results.json"), "w") as f:
    json.dump(out, f, indent=2)
