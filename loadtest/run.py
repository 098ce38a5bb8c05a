#!/usr/bin/env python3
"""Load-test runner: every logging mode x sink x scenario, wrk against the
bundled servers, a table, results JSON and an SVG chart.

Scenarios (stated in the table):
  pinned   the request thread (server --cpu 0) and wrk share CPU 0; logger
           threads (writer, worker) are free to run on CPU 1: the normal case
           of a server with a spare core.
  onecore  the whole server (request thread, logger threads) and wrk on CPU 0:
           what logging costs in CPU.
  tokio    the multi-threaded tokio server (2 workers), wrk -t2 -c64, nothing
           pinned: a logging call that blocks, blocks a runtime worker.
Sinks:
  devnull  stdout redirected to /dev/null
  file     a file (stdout to /dev/null)
  pty      a slow pseudo-terminal (slowpty, profile vscode: ~270 KB/s)
  pty+file both at once
Check column: a peer that wrote fewer lines than requests served shows how
many are missing and how many of those its own counter admitted; a nowait
mode must show or report in-band (a notice in that very output) every
request, exactly, or the run fails.
"""
import argparse, json, os, re, signal, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.join(ROOT, "target", "release")
LOSSLESS = {"println", "tracing-fmt", "tracing-appender-lossless"}
NOWAIT = {"nowait-core", "nowait", "nowait-macro", "nowait-log"}
ALL_MODES = ["none", "println", "tracing-fmt", "tracing-appender", "tracing-appender-lossless",
             "nowait-core", "nowait", "nowait-macro", "nowait-log"]
ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")
ALL_SINKS = ["devnull", "file", "pty", "pty+file"]
DROP_RE = re.compile(r"(\d+) records? dropped \(")


def count_output(path, sink_name):
    """(request lines, drops reported in-band for this sink) in a saved output.

    A notice about ring drops counts for every sink; a notice about a sink's
    own overflow ("sink stdout too slow") counts only for that sink."""
    lines = dropped = 0
    if not path or not os.path.exists(path):
        return None, None
    with open(path, "rb") as f:
        for raw in f:
            line = ANSI_RE.sub("", raw.decode("utf-8", "replace"))
            if "served req=" in line:
                lines += 1
                continue
            m = DROP_RE.search(line)
            if m:
                s = re.search(r"\(sink (\S+)", line)
                if s is None or s.group(1) == sink_name:
                    dropped += int(m.group(1))
    return lines, dropped


def wait_ready(errpath, proc, timeout=10.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            return False
        with open(errpath, "rb") as f:
            if b"READY" in f.read():
                return True
        time.sleep(0.02)
    return False


def run_one(mode, sink, scenario, duration, port, tmp):
    out_file = os.path.join(tmp, f"log-{port}.txt")
    pty_save = os.path.join(tmp, f"pty-{port}.txt")
    pty_report = os.path.join(tmp, f"pty-{port}.json")
    errpath = os.path.join(tmp, f"err-{port}.txt")
    for p in (out_file, pty_save, pty_report):
        if os.path.exists(p):
            os.remove(p)
    sink_arg = {"devnull": "stdout", "pty": "stdout", "file": f"file:{out_file}",
                "pty+file": f"stdout+file:{out_file}"}[sink]
    if scenario == "tokio":
        server = [os.path.join(BIN, "tokio-server"), "--port", str(port), "--log", mode,
                  "--sink", sink_arg, "--workers", "2"]
    else:
        server = [os.path.join(BIN, "server"), "--port", str(port), "--log", mode, "--sink", sink_arg]
    if scenario == "pinned":
        server += ["--cpu", "0"]
    elif scenario == "onecore":
        server = ["taskset", "-c", "0"] + server
    cmd = server
    if sink.startswith("pty"):
        cmd = [os.path.join(BIN, "slowpty"), "--profile", "vscode", "--save", pty_save,
               "--report", pty_report, "--drain-timeout", "60", "--"] + server
    with open(errpath, "wb") as err:
        stdout = subprocess.DEVNULL if not sink.startswith("pty") else None
        proc = subprocess.Popen(cmd, stdout=stdout, stderr=err, cwd=ROOT)
    try:
        if not wait_ready(errpath, proc):
            raise RuntimeError(f"server did not start: {open(errpath).read()[-500:]}")
        load = ["-t2", "-c64"] if scenario == "tokio" else ["-t1", "-c1"]
        pin = [] if scenario == "tokio" else ["taskset", "-c", "0"]
        wrk = subprocess.run(pin + ["wrk"] + load + [f"-d{duration}s",
                              "-s", os.path.join(ROOT, "loadtest", "report.lua"),
                              f"http://127.0.0.1:{port}/"],
                             capture_output=True, text=True, timeout=duration + 30)
        m = re.search(r"^WRK (\{.*\})$", wrk.stdout, re.M)
        if not m:
            raise RuntimeError(f"wrk said: {wrk.stdout[-300:]} {wrk.stderr[-300:]}")
        w = json.loads(m.group(1))
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=90)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    text = open(errpath, encoding="utf-8", errors="replace").read()
    m = re.search(r"^RESULT (\{.*\})$", text, re.M)
    if not m:
        raise RuntimeError(f"no RESULT from server: {text[-500:]}")
    r = json.loads(m.group(1))
    row = {"mode": mode, "sink": sink, "scenario": scenario,
           "rps": w["requests"] / (w["duration_us"] / 1e6), "p50_us": w["p50_us"],
           "p99_us": w["p99_us"], "max_us": w["max_us"], "wrk_errors": w["errors"],
           "served": r["requests"], "logger_dropped": r.get("dropped"), "server": r}
    fl, fd = count_output(out_file if "file" in sink else None, f"file:{out_file}")
    pl, pd = count_output(pty_save if sink.startswith("pty") else None, "stdout")
    row["file_lines"], row["file_reported_dropped"] = fl, fd
    row["pty_lines"], row["pty_reported_dropped"] = pl, pd
    if sink.startswith("pty") and os.path.exists(pty_report):
        row["pty"] = json.load(open(pty_report))
    if sink == "devnull" and mode in NOWAIT:
        s = r["sinks"][0]
        row["devnull_lines"], row["devnull_dropped"] = s["written"], s["dropped"]
    row["check"] = check(row)
    return row


def check(row):
    """'ok', 'n/a' or a description of what was lost."""
    mode, served = row["mode"], row["served"]
    problems = []
    if mode == "none":
        return "ok" if row["wrk_errors"] == 0 else "wrk errors"
    for kind in ("file", "pty", "devnull"):
        lines = row.get(f"{kind}_lines")
        if lines is None:
            continue
        reported = row.get(f"{kind}_reported_dropped") or 0
        if kind == "devnull":
            # Nobody reads /dev/null: use the logger's own counters (ring
            # drops plus this sink's drops).
            reported = row.get("devnull_dropped", 0) + (row["logger_dropped"] or 0)
        if mode in NOWAIT:
            # Everything served is either shown or reported as dropped (ring
            # drops are reported in every sink, a sink's drops in itself).
            if lines + reported != served:
                problems.append(f"{kind}: {lines}+{reported} reported != {served}")
        else:
            if lines != served:
                lost = served - lines
                counted = row["logger_dropped"] or 0
                problems.append(f"{kind}: {lost} lines missing ({counted} counted)")
    return "ok" if not problems else "; ".join(problems)


def fmt_rps(vals):
    return f"{statistics.median(vals)/1000:6.1f}k ({min(vals)/1000:.1f}-{max(vals)/1000:.1f})"


def svg_chart(summary, path, scenario):
    modes = [m for m in ALL_MODES if any(s["mode"] == m for s in summary)]
    sinks = [k for k in ALL_SINKS if any(s["sink"] == k for s in summary)]
    colors = ["#888888", "#d62728", "#ff7f0e", "#9467bd", "#8c564b", "#2ca02c", "#17becf", "#1f77b4", "#bcbd22"]
    W, H, left, top, bottom = 900, 420, 60, 50, 70
    gw = (W - left - 20) / max(1, len(sinks))
    bw = gw * 0.8 / max(1, len(modes))
    ymax = 1.2
    y = lambda v: top + (H - top - bottom) * (1 - min(v, ymax) / ymax)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
           f'<text x="{W/2}" y="22" text-anchor="middle" font-size="15">req/s relative to no logging ({scenario}; median of runs)</text>']
    for t in (0, 0.25, 0.5, 0.75, 1.0):
        out.append(f'<line x1="{left}" x2="{W-20}" y1="{y(t)}" y2="{y(t)}" stroke="#ddd"/>'
                   f'<text x="{left-6}" y="{y(t)+4}" text-anchor="end">{t:.2f}x</text>')
    for gi, sink in enumerate(sinks):
        gx = left + gi * gw + gw * 0.1
        out.append(f'<text x="{left + gi*gw + gw/2}" y="{H-bottom+18}" text-anchor="middle" font-weight="bold">{sink}</text>')
        for mi, mode in enumerate(modes):
            s = next((s for s in summary if s["mode"] == mode and s["sink"] == sink and s["scenario"] == scenario), None)
            if not s:
                continue
            v = s["ratio"]
            x = gx + mi * bw
            out.append(f'<rect x="{x:.1f}" y="{y(v):.1f}" width="{bw*0.9:.1f}" height="{y(0)-y(v):.1f}" fill="{colors[mi % len(colors)]}">'
                       f'<title>{mode} into {sink}: {v:.2f}x ({s["rps_median"]:.0f} req/s)</title></rect>')
            out.append(f'<text x="{x + bw*0.45:.1f}" y="{y(v)-3:.1f}" text-anchor="middle" font-size="9">{v:.2f}</text>')
    for mi, mode in enumerate(modes):
        lx = left + (mi % 5) * 165
        ly = H - 28 + (mi // 5) * 16
        out.append(f'<rect x="{lx}" y="{ly-9}" width="10" height="10" fill="{colors[mi % len(colors)]}"/><text x="{lx+14}" y="{ly}">{mode}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="1 run x 1 s, reduced matrix (CI smoke test)")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--duration", type=int, default=5, help="seconds per wrk run")
    ap.add_argument("--modes", default=None, help="default: all (--quick: a subset)")
    ap.add_argument("--sinks", default=",".join(ALL_SINKS))
    ap.add_argument("--scenarios", default=None, help="default pinned,onecore,tokio (--quick: pinned,tokio)")
    ap.add_argument("--out", default=os.path.join(ROOT, "loadtest", "results"))
    args = ap.parse_args()
    if args.quick:
        args.reps, args.duration = 1, 1
        args.modes = args.modes or "none,println,tracing-appender,nowait-core,nowait,nowait-macro,nowait-log"
        args.scenarios = args.scenarios or "pinned,tokio"
    args.scenarios = args.scenarios or "pinned,onecore,tokio"
    args.modes = args.modes or ",".join(ALL_MODES)
    modes, sinks, scenarios = args.modes.split(","), args.sinks.split(","), args.scenarios.split(",")
    for m in modes:
        if m not in ALL_MODES:
            sys.exit(f"unknown mode {m}")
    os.makedirs(args.out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="nowait-loadtest-")
    # Listening ports below Linux's ephemeral range (32768+), where wrk's own
    # client ports would otherwise collide with them now and then.
    rows, port = [], 20000 + os.getpid() % 10000
    total = len(modes) * len(sinks) * len(scenarios) * args.reps
    n = 0
    for scenario in scenarios:
        for sink in sinks:
            for rep in range(args.reps):
                for mode in modes:  # interleaved, so drift hits every mode alike
                    n += 1
                    port += 1
                    print(f"[{n}/{total}] {scenario} {sink} {mode} run {rep+1}", file=sys.stderr, flush=True)
                    for attempt in range(3):
                        try:
                            rows.append(run_one(mode, sink, scenario, args.duration, port, tmp))
                            break
                        except RuntimeError as e:
                            # A port taken by another process: try the next
                            # one; anything else is a real failure.
                            if "Address already in use" not in str(e) or attempt == 2:
                                raise
                            port += 1
                    # Keep what was measured even if a later run fails.
                    with open(os.path.join(args.out, "results.partial.json"), "w") as f:
                        json.dump(rows, f)
    summary = []
    for scenario in scenarios:
        for sink in sinks:
            base = [r["rps"] for r in rows if r["mode"] == "none" and r["sink"] == sink and r["scenario"] == scenario]
            for mode in modes:
                rs = [r for r in rows if r["mode"] == mode and r["sink"] == sink and r["scenario"] == scenario]
                vals = [r["rps"] for r in rs]
                last = rs[-1]
                lines = [v for v in (last.get("file_lines"), last.get("pty_lines"), last.get("devnull_lines")) if v is not None]
                summary.append({
                    "scenario": scenario, "sink": sink, "mode": mode,
                    "rps_median": statistics.median(vals), "rps_min": min(vals), "rps_max": max(vals),
                    "ratio": statistics.median(vals) / statistics.median(base) if base else None,
                    "p99_us_median": statistics.median(r["p99_us"] for r in rs),
                    "served_last": last["served"],
                    "lines_last": "/".join(str(v) for v in lines) if lines else "n/a",
                    "dropped_last": last["logger_dropped"],
                    "reported_last": "/".join(str(last.get(k) or 0) for k in ("file_reported_dropped", "pty_reported_dropped") if last.get(k) is not None) or "-",
                    "check": "ok" if all(r["check"] == "ok" for r in rs) else next(r["check"] for r in rs if r["check"] != "ok"),
                })
    hdr = f"{'scenario':<8} {'sink':<9} {'mode':<26} {'req/s median (min-max)':<24} {'vs none':>7} {'p99':>9} {'served':>8} {'lines (file/pty)':>17} {'counted':>8} {'in-band':>14}  check"
    print()
    print(f"{args.reps} run(s) x {args.duration} s per cell; wrk -t1 -c1 (pinned, onecore) or -t2 -c64 (tokio); pty profile vscode (~270 KB/s); line counts from the last run")
    print(hdr)
    print("-" * len(hdr))
    for s in summary:
        vals = [r["rps"] for r in rows if r["mode"] == s["mode"] and r["sink"] == s["sink"] and r["scenario"] == s["scenario"]]
        ratio = f"{s['ratio']:.2f}x" if s["ratio"] else "-"
        print(f"{s['scenario']:<8} {s['sink']:<9} {s['mode']:<26} {fmt_rps(vals):<24} {ratio:>7} {s['p99_us_median']/1000:>7.2f}ms "
              f"{s['served_last']:>8} {s['lines_last']:>17} {str(s['dropped_last']):>8} {s['reported_last']:>14}  {s['check']}")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    rustc = subprocess.run(["rustc", "-V"], capture_output=True, text=True).stdout.strip()
    result = {"machine": {"nproc": os.cpu_count(), "uname": " ".join(os.uname())}, "rustc": rustc, "commit": commit,
              "reps": args.reps, "duration_s": args.duration, "pty_profile": "vscode",
              "pinning": {"pinned": "request thread + wrk on CPU 0, logger threads free",
                          "onecore": "server (all threads) + wrk on CPU 0",
                          "tokio": "tokio server (2 workers) and wrk -t2 -c64, unpinned"},
              "summary": summary, "runs": rows}
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(result, f, indent=1)
    for scenario in scenarios:
        svg_chart(summary, os.path.join(args.out, f"chart-{scenario}.svg"), scenario)
    print(f"\nresults: {args.out}/results.json, charts: {args.out}/chart-*.svg")
    zero = [s for s in summary if s["rps_median"] <= 0]
    if zero:
        sys.exit("some cells served no requests")
    # Peers' losses are findings to report; nowait's would be a bug.
    if any(s["check"] != "ok" for s in summary if s["mode"] in NOWAIT):
        sys.exit("a nowait mode failed its line check (see the table)")


if __name__ == "__main__":
    main()
