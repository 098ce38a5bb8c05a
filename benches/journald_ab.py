#!/usr/bin/env python3
"""journald sink throughput beside the file sink .

Starts a systemd-journald of its own as tests/journald.rs does (private
mount and network namespace, /run and /var/log bind-mounted from a temp
dir, volatile storage, rate limiting off; the kernel's datagram queue left
at the namespace default, 10), then runs the journald_throughput example
interleaved (file, journald, file, journald, ...): N text records each,
lossless (blocking ring, 1 GiB sink buffer). Events/s is N over the time
from the first push to the end of the guard's drain. For journald the
entries stored are counted with journalctl after each run (each run its
own SYSLOG_IDENTIFIER), so "lossless" is checked, not assumed. The file
goes to the same temp dir's file system.

Run (as root, alone on the machine):
  flock /tmp/nowait-bench.lock python3 benches/journald_ab.py [--reps 5] [--n 200000]
Writes benches/results/journald-ab.{json,md}.
"""
import argparse, datetime, json, os, platform, statistics, subprocess, sys, tempfile, time

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
ap = argparse.ArgumentParser()
ap.add_argument("--reps", type=int, default=5)
ap.add_argument("--n", type=int, default=200_000)
a = ap.parse_args()

subprocess.run(["cargo", "build", "-q", "--release", "-p", "nowait-examples", "--example",
                "journald_throughput"], cwd=root, check=True)
exe = os.path.join(root, "target", "release", "examples", "journald_throughput")

SCRIPT = """set -e
T="$1"
mount --bind "$T/run" /run
mount --bind "$T/log" /var/log
exec /lib/systemd/systemd-journald
"""
CONF = """[Journal]
Storage=volatile
RateLimitIntervalSec=0
RateLimitBurst=0
ReadKMsg=no
ForwardToSyslog=no
ForwardToKMsg=no
ForwardToConsole=no
ForwardToWall=no
Audit=no
RuntimeMaxUse=4G
RuntimeMaxFileSize=512M
"""
tmp = tempfile.mkdtemp(prefix="journald-ab.")
os.makedirs(f"{tmp}/run/systemd/journald.conf.d")
os.makedirs(f"{tmp}/log")
with open(f"{tmp}/run/systemd/journald.conf.d/zz-nowait-bench.conf", "w") as f:
    f.write(CONF)
jd = subprocess.Popen(["unshare", "-m", "-n", "--propagation", "private", "sh", "-c", SCRIPT, "sh", tmp])
socket = f"{tmp}/run/systemd/journal/socket"
for _ in range(500):
    if os.path.exists(socket) and os.path.isdir(f"{tmp}/run/log/journal"):
        break
    assert jd.poll() is None, "journald did not start"
    time.sleep(0.02)
assert os.path.realpath(socket).startswith(os.path.realpath(tmp))
jdir = f"{tmp}/run/log/journal"


def stored(ident):
    out = subprocess.run(["journalctl", "-D", jdir, "-o", "cat", f"SYSLOG_IDENTIFIER={ident}"],
                         capture_output=True, check=True).stdout
    return out.count(b"\n")


runs = {"file": [], "journald": []}
try:
    for rep in range(a.reps):
        for kind in ("file", "journald"):
            ident = f"bench-{rep}"
            target = f"{tmp}/out-{rep}.log" if kind == "file" else socket
            out = subprocess.run([exe, kind, target, str(a.n), ident], capture_output=True,
                                 check=True, text=True).stdout
            r = json.loads(out)
            if kind == "journald":
                # Every entry sent is stored (journald may still be reading
                # the last few queued: wait for them, bounded).
                for _ in range(200):
                    r["stored"] = stored(ident)
                    if r["stored"] >= r["written"]:
                        break
                    time.sleep(0.05)
            else:
                with open(target, "rb") as f:
                    r["stored"] = sum(1 for _ in f)
                os.remove(target)
            print(f"run {rep + 1}/{a.reps} {kind}: {r['events_per_s']:.0f}/s, "
                  f"stored {r['stored']}/{a.n}, dropped {r['dropped']}", file=sys.stderr, flush=True)
            runs[kind].append(r)
finally:
    jd.kill()
    jd.wait()

med = {k: statistics.median(r["events_per_s"] for r in v) for k, v in runs.items()}
commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True,
                        text=True).stdout.strip()
rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.strip()
jver = subprocess.run(["journalctl", "--version"], capture_output=True, text=True).stdout.split("\n")[0]
doc = {
    "what": "lossless events/s, N text records, first push to end of drain; interleaved file/journald",
    "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    "machine": f"{platform.machine()} {os.cpu_count()} CPUs, {platform.release()}",
    "rustc": rustc, "commit": commit, "journald": jver, "n": a.n, "reps": a.reps,
    "runs": runs, "median_events_per_s": med,
    "journald_over_file": med["journald"] / med["file"],
}
res = os.path.join(root, "benches", "results")
with open(os.path.join(res, "journald-ab.json"), "w") as f:
    json.dump(doc, f, indent=1)
lost = {k: sum(a.n - r["stored"] for r in v) for k, v in runs.items()}
md = f"""# journald sink beside the file sink

{doc['what']}. {a.reps} interleaved runs of {a.n} records each,
median. Machine: {doc['machine']}; {rustc}; {jver}; commit {commit};
journald of its own (benches/journald_ab.py), volatile storage on the temp
dir's file system, rate limiting off, datagram queue 10.

| sink | median events/s | runs (events/s) | records not stored |
|---|---|---|---|
| file | {med['file']:.0f} | {', '.join(f"{r['events_per_s']:.0f}" for r in runs['file'])} | {lost['file']} |
| journald | {med['journald']:.0f} | {', '.join(f"{r['events_per_s']:.0f}" for r in runs['journald'])} | {lost['journald']} |

journald / file: **{doc['journald_over_file']:.3f}x**.
"""
with open(os.path.join(res, "journald-ab.md"), "w") as f:
    f.write(md)
print(md)
