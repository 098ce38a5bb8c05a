#!/usr/bin/env python3
"""OTLP sink vs file sink, interleaved (A B A B ...), medians and ratios.

Starts rotel-agent (blackhole exporter) on a free loopback port, then runs
the `otlp_throughput` example alternately with `--sink file` and
`--sink otlp`, ROUNDS times each: lossless events/s, and with `--push` the
logging thread's ns per event. Writes benches/results/otlp-ab.json
and .md. Run under `flock /tmp/nowait-bench.lock` after
`cargo build --release -p nowait-examples --example otlp_throughput`.
"""
import json, os, socket, statistics, subprocess, sys, time, platform

ROUNDS = int(os.environ.get("ROUNDS", "5"))
N = int(os.environ.get("N", "2000000"))
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
exe = os.path.join(root, "target/release/examples/otlp_throughput")

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

import rotel
agent = os.path.join(os.path.dirname(rotel.__file__), "rotel-agent")
http, grpc = free_port(), free_port()
rx = subprocess.Popen([agent, "start", "--exporter", "blackhole",
                       "--otlp-http-endpoint", "127.0.0.1:%d" % http,
                       "--otlp-grpc-endpoint", "127.0.0.1:%d" % grpc,
                       "--pid-file", "/tmp/nowait-otlp-ab-rotel.pid"],
                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", http), 0.1).close(); break
        except OSError:
            time.sleep(0.05)
    url = "http://127.0.0.1:%d" % http
    runs = {"file": [], "otlp": []}
    push = {"file": [], "otlp": []}
    failures = []
    for r in range(ROUNDS):
        for kind in ("file", "otlp"):
            p = subprocess.run([exe, "--sink", kind, url, str(N)], capture_output=True, text=True)
            if p.returncode != 0:
                # Not lossless (or failed): recorded, not retried.
                failures.append({"sink": kind, "round": r, "stderr": p.stderr[-2000:]})
                print(p.stderr[-2000:], file=sys.stderr)
                continue
            runs[kind].append(json.loads(p.stdout))
            out = subprocess.run([exe, "--sink", kind, url, "--push", "100000"], check=True, capture_output=True, text=True).stdout
            push[kind].append(json.loads(out)["push_ns"])
finally:
    rx.kill(); rx.wait()

med = {k: statistics.median(x["events_per_s"] for x in v) for k, v in runs.items()}
pmed = {k: statistics.median(v) for k, v in push.items()}
rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.strip()
commit = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
result = {
    "what": "lossless events/s, OTLP sink (rotel blackhole on loopback) vs file sink (JSON), "
            "and the logging thread's ns/event with each; interleaved A B, median of %d" % ROUNDS,
    "machine": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
    "rustc": rustc, "commit": commit, "events": N,
    "runs": runs, "push_ns": push, "failed_runs": failures,
    "median_events_per_s": med, "median_push_ns": pmed,
    "otlp_over_file_throughput": med["otlp"] / med["file"],
    "otlp_over_file_push": pmed["otlp"] / pmed["file"],
}
res = os.path.join(root, "benches/results")
with open(os.path.join(res, "otlp-ab.json"), "w") as f:
    json.dump(result, f, indent=1)
with open(os.path.join(res, "otlp-ab.md"), "w") as f:
    f.write("# Issue 20: OTLP sink beside the file sink\n\n%s\n\n" % result["what"])
    f.write("%s, %s CPUs, %s, commit %s, %d events per run\n\n" % (result["machine"], result["cpus"], rustc, commit, N))
    f.write("| sink | events/s (median) | push ns/event (median) | runs events/s |\n|---|---|---|---|\n")
    for k in ("file", "otlp"):
        f.write("| %s | %.0f | %.1f | %s |\n" % (k, med[k], pmed[k], ", ".join("%.0f" % x["events_per_s"] for x in runs[k])))
    f.write("\nRuns that were not lossless or failed: %d (in the JSON)\n" % len(failures))
    f.write("\nOTLP / file: throughput %.2f, push cost %.2f\n" % (result["otlp_over_file_throughput"], result["otlp_over_file_push"]))
print(json.dumps({"median_events_per_s": med, "median_push_ns": pmed,
                  "otlp_over_file_throughput": result["otlp_over_file_throughput"],
                  "otlp_over_file_push": result["otlp_over_file_push"]}))
