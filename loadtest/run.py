#!/usr/bin/env python3
"""Load-test runner: wrk against the bundled servers for each logging mode x
sink x scenario; prints a table and three sentences, writes results JSON and
SVG charts.

Presets (the options below override any part):
  (default) the demo, a few minutes: scenario pinned; modes none, println,
            tracing-appender, nowait (tracing layer), nowait-macro; sinks
            pty, file, pty+file; 3 repetitions interleaved (A B C A B C ...).
            Writes results.json and chart.svg (the README's chart).
  --quick   CI smoke test (~1 min): 1 short run per cell, every nowait front
            end checked, the tokio and axum servers started once per mode.
  --full    everything: 4 scenarios x all modes x 4 sinks x 3 runs of 5 s
            (about 40 minutes on 2 vCPUs). Writes into results/full/.

Scenarios:
  pinned   std server, the request thread (server --cpu 0) and wrk share
           CPU 0; logger threads (writer, worker) are free to run on CPU 1:
           the normal case of a server with a spare core.
  onecore  the whole std server (request thread, logger threads) and wrk on
           CPU 0: what logging costs in CPU.
  tokio    the multi-threaded tokio server (2 workers), wrk -t2 -c64,
           nothing pinned: a logging call that blocks, blocks a worker.
  axum     axum + tower-http TraceLayer (a span and 2 lines per request) on a
           current-thread runtime pinned to CPU 0 like pinned; tracing modes
           only (none, tracing-envfilter, tracing-fmt, tracing-appender,
           tracing-appender-lossless, nowait).
Sinks:
  devnull  stdout redirected to /dev/null
  file     a file (stdout to /dev/null)
  pty      a slow pseudo-terminal (slowpty, profile vscode: ~270 KB/s)
  pty+file both at once
  binfile  a nowait binary log (Sink::binary; nowait modes and none only),
           read back with `nowait cat` to count its records
Where each expected line went, per output (the pty, the file):
  delivered  in the output (for the pty: read from it by the terminal,
             including what was still in the terminal's buffer when the
             runner's drain bound ran out: "late", counted apart in the JSON)
  reported   missing, and said so in that very output (nowait's notices:
             "N records dropped (...)", "N pending for sink ...")
  counted    missing, and counted by the logger but said nowhere
             (tracing-appender's error counter, which nothing prints; the
             servers print it in their RESULT line)
  lost       missing, and counted nowhere (for tracing-appender: what was
             still in its 128,000-line channel when its guard stopped
             waiting, 1 s after the server stopped)
A nowait mode must deliver or report in-band every line, exactly, or the
run fails.
"""
import argparse, json, math, os, re, shutil, signal, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NOWAIT = {"nowait-core", "nowait", "nowait-macro", "nowait-log"}
NO_OUTPUT = {"none", "tracing-envfilter"}
ALL_MODES = ["none", "println", "tracing-fmt", "tracing-envfilter", "tracing-appender",
             "tracing-appender-lossless", "nowait-core", "nowait", "nowait-macro", "nowait-log"]
AXUM_MODES = ["none", "tracing-envfilter", "tracing-fmt", "tracing-appender",
              "tracing-appender-lossless", "nowait"]
ALL_SINKS = ["devnull", "file", "pty", "pty+file", "binfile"]
ALL_SCENARIOS = ["pinned", "onecore", "tokio", "axum"]
LABELS = {"none": "none", "println": "println!", "tracing-fmt": "tracing fmt (blocking)",
          "tracing-envfilter": "Registry+EnvFilter", "tracing-appender": "tracing-appender",
          "tracing-appender-lossless": "tracing-appender lossless", "nowait-core": "nowait core",
          "nowait": "nowait layer", "nowait-macro": "nowait::info!", "nowait-log": "nowait log"}
# The runner reads whatever a command left in the slow terminal at the
# profile's speed for this long after the command exited, then at full speed
# (those lines count as delivered, "late").
PTY_DRAIN_S = 1.0
ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")
LINE_MARKERS = ("served req=", "processing request")
DROP_RE = re.compile(r"(\d+) records? dropped \(")
ABANDONED_RE = re.compile(r"shutdown timed out: (\d+) records? abandoned in the ring")
PENDING_RE = re.compile(r"(\d+) pending for sink (\S+) \(")

# Seconds a run costs beyond wrk's duration, before any was measured:
# starting, stopping (tracing-appender's guard waits up to 1 s, nowait drains
# its terminal buffer for up to its shutdown timeout) and draining the pty.
# Refined from the runs as they finish.
# Measured here (busy 2-vCPU VM): ~0.1 s for a logger with nothing left to
# write, ~0.3 s for one with a file to count, tracing-appender ~1.3 s into
# the terminal (its guard's 1 s), nowait ~4 s into the terminal (its 1 MiB
# sink buffer, full after a fraction of a second of load, drains at
# ~270 KB/s within its 5 s shutdown timeout).
PRIOR_OVERHEAD = {"none": 0.1, "tracing-envfilter": 0.1, "println": 0.3, "tracing-fmt": 0.3,
                  "tracing-appender": 0.3, "tracing-appender-lossless": 0.3}
PRIOR_PTY_EXTRA = {"tracing-appender": 1.0, "tracing-appender-lossless": 1.0}
PRIOR_NOWAIT_PTY = 4.2


def build():
    """Builds the loadtest binaries in release and returns {name: path},
    asking cargo where it put them (CARGO_TARGET_DIR and build.target-dir
    are honoured)."""
    cmd = ["cargo", "build", "--release", "-p", "nowait-loadtest", "-p", "nowait-cli",
           "--message-format=json-render-diagnostics"]
    p = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"cargo build failed ({' '.join(cmd)})")
    bins = {}
    for line in p.stdout.splitlines():
        try:
            msg = json.loads(line)
        except ValueError:
            continue
        if msg.get("reason") == "compiler-artifact" and msg.get("executable") \
                and "bin" in msg["target"]["kind"]:
            bins[msg["target"]["name"]] = msg["executable"]
    for name in ("server", "tokio-server", "axum-server", "slowpty", "nowait"):
        if name not in bins:
            sys.exit(f"cargo did not report the {name} binary")
    return bins


def count_output(path, sink_name):
    """(expected lines found, drops reported in-band for this sink) in a
    saved output.

    A notice about ring drops counts for every sink; a notice about a sink's
    own overflow ("sink stdout too slow") or its shutdown backlog ("N pending
    for sink stdout") counts only for that sink."""
    lines = dropped = 0
    if not path or not os.path.exists(path):
        return None, None
    with open(path, "rb") as f:
        for raw in f:
            if not raw.endswith(b"\n"):
                break  # a line cut short when the writer died: not delivered
            line = ANSI_RE.sub("", raw.decode("utf-8", "replace"))
            if any(m in line for m in LINE_MARKERS):
                lines += 1
                continue
            m = DROP_RE.search(line)
            if m:
                s = re.search(r"\((?:the format of )?sink (\S+)", line)
                if s is None or s.group(1) == sink_name:
                    dropped += int(m.group(1))
            m = ABANDONED_RE.search(line)
            if m:
                dropped += int(m.group(1))
            for n, name in PENDING_RE.findall(line):
                if name == sink_name:
                    dropped += int(n)
    return lines, dropped


def selftest():
    """Checks the output parser and the line classification on made-up
    output (run by --quick, so CI runs it)."""
    fd, path = tempfile.mkstemp(prefix="nowait-loadtest-selftest-")
    with os.fdopen(fd, "wb") as f:
        f.write(b"\x1b[32m INFO\x1b[0m served req=1 method=GET path=/ status=200 bytes=12\n"
                b"INFO request{method=GET uri=/ version=HTTP/1.1}: tower_http::trace::on_request: "
                b"started processing request\n"
                b"WARN nowait: 5 records dropped (ring full) between A and B\n"
                b"WARN nowait: 3 records dropped (sink stdout too slow, its buffer was full) between A and B\n"
                b"WARN nowait: 7 records dropped (sink file:/x too slow, its buffer was full) between A and B\n"
                b"WARN nowait: 1 record dropped (the format of sink stdout panicked) between A and B\n"
                b"WARN nowait: shutdown timed out: 2 records abandoned in the ring; 11 pending for sink "
                b"stdout (stalled), 13 pending for sink file:/x (failing)\n"
                b"served req=2 method=GET path=/ status=200 by")  # cut short: not delivered
    try:
        assert count_output(path, "stdout") == (2, 5 + 3 + 1 + 2 + 11), count_output(path, "stdout")
        assert count_output(path, "file:/x") == (2, 5 + 7 + 2 + 13), count_output(path, "file:/x")
        assert count_output(None, "stdout") == (None, None)
    finally:
        os.remove(path)
    peer = {"mode": "tracing-appender", "expected_lines": 100, "pty_lines": 10, "file_lines": 100,
            "pty_reported_dropped": 0, "file_reported_dropped": 0, "server": {"sink_dropped": {"stdout": 60, "file": 0}},
            "pty": {"late_lines": 4}, "wrk_errors": 0, "logger_dropped": 60}
    o = classify(peer)
    assert o["pty"] == {"expected": 100, "delivered": 10, "reported": 0, "counted": 60, "lost": 30, "late": 4}, o
    assert o["file"]["lost"] == 0 and o["file"]["delivered"] == 100, o
    peer["outputs"] = o
    assert check(peer) == "pty: 90 lines missing (60 counted)", check(peer)
    ours = dict(peer, mode="nowait", pty_reported_dropped=90, server={})
    ours["outputs"] = classify(ours)
    assert ours["outputs"]["pty"]["reported"] == 90 and ours["outputs"]["pty"]["lost"] == 0
    assert check(ours) == "ok", check(ours)
    ours["pty_reported_dropped"] = 89  # one line neither shown nor said
    assert check(ours).startswith("pty: 10+89 reported != 100"), check(ours)


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


def run_one(bins, mode, sink, scenario, duration, port, tmp):
    out_file = os.path.join(tmp, f"log-{port}.txt")
    pty_save = os.path.join(tmp, f"pty-{port}.txt")
    pty_report = os.path.join(tmp, f"pty-{port}.json")
    errpath = os.path.join(tmp, f"err-{port}.txt")
    for p in (out_file, out_file + ".txt", pty_save, pty_report):
        if os.path.exists(p):
            os.remove(p)
    sink_arg = {"devnull": "stdout", "pty": "stdout", "file": f"file:{out_file}",
                "pty+file": f"stdout+file:{out_file}", "binfile": f"binfile:{out_file}"}[sink]
    common = ["--port", str(port), "--log", mode, "--sink", sink_arg]
    if scenario == "tokio":
        server = [bins["tokio-server"]] + common + ["--workers", "2"]
    elif scenario == "axum":
        server = [bins["axum-server"]] + common + ["--cpu", "0"]
    elif scenario == "pinned":
        server = [bins["server"]] + common + ["--cpu", "0"]
    else:  # onecore
        server = ["taskset", "-c", "0", bins["server"]] + common
    cmd = server
    if sink.startswith("pty"):
        cmd = [bins["slowpty"], "--profile", "vscode", "--save", pty_save, "--report", pty_report,
               "--drain-timeout", str(PTY_DRAIN_S), "--"] + server
    with open(errpath, "wb") as err:
        stdout = subprocess.DEVNULL if not sink.startswith("pty") else None
        proc = subprocess.Popen(cmd, stdout=stdout, stderr=err, cwd=ROOT)
    t_load = t_stop = None
    try:
        if not wait_ready(errpath, proc):
            raise RuntimeError(f"server did not start: {open(errpath).read()[-500:]}")
        load = ["-t2", "-c64"] if scenario == "tokio" else ["-t1", "-c1"]
        pin = [] if scenario == "tokio" else ["taskset", "-c", "0"]
        t_load = time.time()
        wrk = subprocess.run(pin + ["wrk"] + load + [f"-d{duration}s",
                              "-s", os.path.join(ROOT, "loadtest", "report.lua"),
                              f"http://127.0.0.1:{port}/"],
                             capture_output=True, text=True, timeout=duration + 30)
        m = re.search(r"^WRK (\{.*\})$", wrk.stdout, re.M)
        if not m:
            raise RuntimeError(f"wrk said: {wrk.stdout[-300:]} {wrk.stderr[-300:]}")
        w = json.loads(m.group(1))
    finally:
        t_stop = time.time()
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    stop_s = time.time() - t_stop
    text = open(errpath, encoding="utf-8", errors="replace").read()
    m = re.search(r"^RESULT (\{.*\})$", text, re.M)
    if not m:
        raise RuntimeError(f"no RESULT from server: {text[-500:]}")
    r = json.loads(m.group(1))
    per_request = r.get("events_per_request", 1)
    row = {"mode": mode, "sink": sink, "scenario": scenario,
           "rps": w["requests"] / (w["duration_us"] / 1e6), "p50_us": w["p50_us"],
           "p99_us": w["p99_us"], "max_us": w["max_us"], "wrk_errors": w["errors"],
           "served": r["requests"], "expected_lines": 0 if mode in NO_OUTPUT else r["requests"] * per_request,
           "logger_dropped": r.get("dropped"), "stop_s": round(stop_s, 3), "server": r}
    counted_file = out_file if "file" in sink else None
    if sink == "binfile" and os.path.exists(out_file):
        # The binary log, rendered as text by `nowait cat`, is counted as a file is.
        counted_file = out_file + ".txt"
        with open(counted_file, "wb") as text_out:
            subprocess.run([bins["nowait"], "cat", out_file], stdout=text_out, check=True)
    fl, fd = count_output(counted_file, f"file:{out_file}")
    pl, pd = count_output(pty_save if sink.startswith("pty") else None, "stdout")
    row["file_lines"], row["file_reported_dropped"] = fl, fd
    row["pty_lines"], row["pty_reported_dropped"] = pl, pd
    if sink.startswith("pty") and os.path.exists(pty_report):
        row["pty"] = json.load(open(pty_report))
    if sink == "devnull" and mode in NOWAIT:
        s = r["sinks"][0]
        row["devnull_lines"], row["devnull_dropped"] = s["written"], s["dropped"]
    row["outputs"] = classify(row)
    row["check"] = check(row)
    row["overhead_s"] = round(time.time() - t_load - duration, 3)
    return row, row["overhead_s"]


def classify(row):
    """{output: {expected, delivered, reported, counted, lost, late}} for the outputs whose
    lines the runner can count (the pty and the file)."""
    mode = row["mode"]
    out = {}
    if mode in NO_OUTPUT:
        return out
    for kind, sink_key in (("pty", "stdout"), ("file", "file")):
        lines = row.get(f"{kind}_lines")
        if lines is None:
            continue
        expected = row["expected_lines"]
        missing = max(0, expected - lines)
        if mode in NOWAIT:
            reported, counted = min(missing, row.get(f"{kind}_reported_dropped") or 0), 0
        else:
            counter = (row["server"].get("sink_dropped") or {}).get(sink_key, 0)
            reported, counted = 0, min(missing, counter)
        out[kind] = {"expected": expected, "delivered": lines, "reported": reported, "counted": counted,
                     "lost": missing - reported - counted,
                     "late": (row.get("pty") or {}).get("late_lines", 0) if kind == "pty" else 0}
    return out


def check(row):
    """'ok' or a description of what was lost."""
    mode, expected = row["mode"], row["expected_lines"]
    problems = []
    if row["wrk_errors"]:
        problems.append(f"{row['wrk_errors']} wrk errors")
    if mode in NO_OUTPUT:
        return "ok" if not problems else "; ".join(problems)
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
            # Everything expected is either shown or reported as dropped
            # (ring drops are reported in every sink, a sink's drops in
            # itself).
            if lines + reported != expected:
                problems.append(f"{kind}: {lines}+{reported} reported != {expected}")
        elif lines != expected:
            o = row["outputs"].get(kind, {})
            problems.append(f"{kind}: {expected - lines} lines missing ({o.get('counted', 0)} counted)")
    return "ok" if not problems else "; ".join(problems)


def fmt_rps(vals):
    return f"{statistics.median(vals)/1000:6.1f}k ({min(vals)/1000:.1f}-{max(vals)/1000:.1f})"


def pct(n, d):
    return f"{100.0 * n / d:.0f} %" if d else "-"


def svg_chart(summary, path, scenario, note):
    """Two panels: req/s relative to no logging, and where the lines went."""
    cells = [s for s in summary if s["scenario"] == scenario]
    modes = list(dict.fromkeys(s["mode"] for s in cells))  # in the run's order
    sinks = list(dict.fromkeys(s["sink"] for s in cells))
    colors = {"none": "#888888", "println": "#d62728", "tracing-fmt": "#e377c2",
              "tracing-envfilter": "#7f7f7f", "tracing-appender": "#ff7f0e",
              "tracing-appender-lossless": "#8c564b", "nowait-core": "#2ca02c", "nowait": "#1f77b4",
              "nowait-macro": "#17becf", "nowait-log": "#bcbd22"}
    fate = [("delivered", "#4c9a4c", "delivered"), ("reported", "#e8a317", "dropped, said in the output"),
            ("counted", "#f5d78e", "dropped, counted only"), ("lost", "#d62728", "lost, counted nowhere")]
    W, left, right = 940, 64, 16
    top1, h1 = 96, 220              # panel 1: req/s bars
    top2, h2 = top1 + h1 + 92, 150  # panel 2: stacked shares
    H = top2 + h2 + 96
    gw = (W - left - right) / max(1, len(sinks))
    bw = gw * 0.84 / max(1, len(modes))
    top_ratio = max([s["ratio"] or 0 for s in cells] + [1.0])
    ymax = max(1.25, math.ceil((top_ratio + 0.1) * 4) / 4)
    y1 = lambda v: top1 + h1 * (1 - min(v, ymax) / ymax)
    y2 = lambda f: top2 + h2 * (1 - f)
    esc = lambda t: t.replace("&", "&amp;").replace("<", "&lt;")
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W/2}" y="20" text-anchor="middle" font-size="15" font-weight="bold">'
           f'Hello World server, one log line per request ({esc(scenario)})</text>',
           f'<text x="{W/2}" y="38" text-anchor="middle" font-size="11" fill="#444">{esc(note)}</text>',
           f'<text x="{left}" y="{top1-12}" font-size="13" font-weight="bold">req/s relative to no logging '
           f'(median; higher is better)</text>',
           f'<text x="{left}" y="{top2-32}" font-size="13" font-weight="bold">where the lines went '
           f'(all runs)</text>']
    lx = left
    for mode in modes:
        out.append(f'<rect x="{lx}" y="{58-9}" width="10" height="10" fill="{colors[mode]}"/>'
                   f'<text x="{lx+14}" y="58">{esc(LABELS[mode])}</text>')
        lx += 30 + 7.0 * len(LABELS[mode])
    lx = left
    for key, color, what in fate:
        out.append(f'<rect x="{lx}" y="{top2-12-9}" width="10" height="10" fill="{color}"/>'
                   f'<text x="{lx+14}" y="{top2-12}">{what}</text>')
        lx += 30 + 7.0 * len(what)
    t = 0.0
    while t <= ymax + 1e-9:
        out.append(f'<line x1="{left}" x2="{W-right}" y1="{y1(t):.1f}" y2="{y1(t):.1f}" stroke="#ddd"/>'
                   f'<text x="{left-6}" y="{y1(t)+4:.1f}" text-anchor="end">{t:.2f}x</text>')
        t += 0.25
    for t in (0, 0.5, 1.0):
        out.append(f'<line x1="{left}" x2="{W-right}" y1="{y2(t):.1f}" y2="{y2(t):.1f}" stroke="#ddd"/>'
                   f'<text x="{left-6}" y="{y2(t)+4:.1f}" text-anchor="end">{t*100:.0f} %</text>')
    sink_names = {"devnull": "/dev/null", "file": "file", "pty": "slow terminal",
                  "pty+file": "slow terminal + file", "binfile": "binary log"}
    for gi, sink in enumerate(sinks):
        gx = left + gi * gw + gw * 0.08
        base = next((s for s in cells if s["sink"] == sink and s["mode"] == "none"), None)
        label = sink_names[sink] + (f" (none: {base['rps_median']/1000:.1f}k req/s)" if base else "")
        out.append(f'<text x="{left + gi*gw + gw/2:.1f}" y="{top1+h1+16}" text-anchor="middle" '
                   f'font-weight="bold">{esc(label)}</text>')
        for mi, mode in enumerate(modes):
            s = next((s for s in cells if s["mode"] == mode and s["sink"] == sink), None)
            if not s:
                continue
            x = gx + mi * bw
            v = s["ratio"] or 0
            out.append(f'<rect x="{x:.1f}" y="{y1(v):.1f}" width="{bw*0.9:.1f}" height="{y1(0)-y1(v):.1f}" '
                       f'fill="{colors[mode]}"><title>{esc(LABELS[mode])} into {sink}: {v:.2f}x '
                       f'({s["rps_median"]:.0f} req/s)</title></rect>')
            out.append(f'<text x="{x + bw*0.45:.1f}" y="{y1(v)-3:.1f}" text-anchor="middle" font-size="10">{v:.2f}</text>')
            # Panel 2: one stacked bar per output (two halves for pty+file).
            kinds = [k for k in ("pty", "file") if k in s["outputs"]]
            if not kinds:
                out.append(f'<text x="{x + bw*0.45:.1f}" y="{y2(0)-4:.1f}" text-anchor="middle" '
                           f'font-size="9" fill="#666">{"not read" if mode not in NO_OUTPUT else "no output"}</text>')
            sub = bw * 0.9 / max(1, len(kinds))
            for ki, kind in enumerate(kinds):
                o = s["outputs"][kind]
                sx, acc = x + ki * sub, 0.0
                for key, color, what in fate:
                    f = o[key] / o["expected"] if o["expected"] else 0
                    if f > 0:
                        out.append(f'<rect x="{sx:.1f}" y="{y2(acc+f):.1f}" width="{sub*0.92:.1f}" '
                                   f'height="{y2(acc)-y2(acc+f):.1f}" fill="{color}"><title>{esc(LABELS[mode])} into '
                                   f'{sink}, {kind}: {o[key]} of {o["expected"]} lines {what} ({pct(o[key], o["expected"])})'
                                   f'</title></rect>')
                    acc += f
                if len(kinds) > 1:
                    out.append(f'<text x="{sx + sub*0.46:.1f}" y="{y2(0)+10:.1f}" text-anchor="middle" '
                               f'font-size="8" fill="#444">{"term" if kind == "pty" else "file"}</text>')
                lost = o["lost"] / o["expected"] if o["expected"] else 0
                if lost >= 0.01:
                    out.append(f'<text x="{sx + sub*0.46:.1f}" y="{y2(1)-3:.1f}" text-anchor="middle" '
                               f'font-size="10" fill="#d62728" font-weight="bold">{lost*100:.0f} %</text>')
            lx, ly = x + bw * 0.55, y2(0) + 24
            out.append(f'<text x="{lx:.1f}" y="{ly:.1f}" font-size="10" text-anchor="end" '
                       f'transform="rotate(-35 {lx:.1f} {ly:.1f})">{esc(LABELS[mode])}</text>')
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def mmss(s):
    s = max(0, int(round(s)))
    return f"{s // 60}:{s % 60:02d}"


class Clock:
    """Estimates each run's cost from what the runs of the same kind took."""

    def __init__(self, duration):
        self.duration = duration
        self.seen = {}

    @staticmethod
    def key(mode, sink):
        pty = sink.startswith("pty")
        return (mode if mode not in NOWAIT else "nowait", pty)

    def prior(self, mode, sink):
        pty = sink.startswith("pty")
        if mode in NOWAIT:
            return PRIOR_NOWAIT_PTY if pty else 0.3
        return PRIOR_OVERHEAD.get(mode, 1.0) + (PRIOR_PTY_EXTRA.get(mode, 0) if pty else 0)

    def cost(self, mode, sink):
        got = self.seen.get(self.key(mode, sink))
        over = statistics.mean(got) if got else self.prior(mode, sink)
        return self.duration + over

    def record(self, mode, sink, overhead):
        self.seen.setdefault(self.key(mode, sink), []).append(overhead)

    def left(self, plan):
        return sum(self.cost(m, k) for (_, k, _, m) in plan)


def show_path(p):
    """p relative to the repository root when it is inside it."""
    rel = os.path.relpath(p, ROOT)
    return p if rel.startswith("..") else rel


def sentences(summary, out_dir, chart):
    """The three things a reader needs, for the slow terminal."""
    said = []
    for scenario in dict.fromkeys(s["scenario"] for s in summary):
        cells = [s for s in summary if s["scenario"] == scenario and s["sink"] == "pty"]
        base = next((s for s in cells if s["mode"] == "none"), None)
        if not base or len(cells) < 2:
            continue
        parts = []
        for s in cells:
            if s["mode"] == "none" or not s["ratio"]:
                continue
            r = s["ratio"]
            how = f"{1/r:.1f} times slower" if r < 0.95 else ("as fast, within 5 %" if r <= 1.05 else "faster")
            parts.append(f"{LABELS[s['mode']]} {r:.2f}x ({how})")
        said.append(f"Into the slow terminal ({scenario}), against {base['rps_median']/1000:.1f}k req/s without "
                    f"logging in the same run: " + ", ".join(parts) + ".")
        parts = []
        for s in cells:
            o = s["outputs"].get("pty")
            if not o:
                continue
            e = o["expected"]
            part = f"{LABELS[s['mode']]} lost {o['lost']:,} of {e:,} lines without a word ({pct(o['lost'], e)})"
            if o["counted"]:
                part += f" and dropped {o['counted']:,} more that only its counter knows of ({pct(o['counted'], e)})"
            if o["reported"]:
                part += f" and dropped {o['reported']:,}, each one reported in the terminal itself ({pct(o['reported'], e)})"
            parts.append(part)
        if parts:
            said.append(f"Lines into the slow terminal ({scenario}, all runs): " + "; ".join(parts) + ".")
    said.append(f"Every number is in {show_path(os.path.join(out_dir, 'results.json'))}"
                f" and the chart in {show_path(chart)}.")
    return said


def draw(result, out_dir, demo):
    """Writes chart-<scenario>.svg for each scenario in a result (and
    chart.svg, the README's, for the default run) and returns the sentences
    to print."""
    summary = result["summary"]
    load = {"pinned": "wrk -t1 -c1; request thread and wrk on CPU 0, logger threads free",
            "onecore": "wrk -t1 -c1; server (every thread) and wrk on CPU 0",
            "tokio": "tokio server, 2 workers, wrk -t2 -c64, unpinned",
            "axum": "axum + TraceLayer (2 lines per request), wrk -t1 -c1, both on CPU 0"}
    reps = result["reps"]
    runs = f"{reps} interleaved runs" if reps > 1 else "1 run"
    charts = []
    for scenario in dict.fromkeys(s["scenario"] for s in summary):
        note = (f"{runs} x {result['duration_s']} s per bar; {load[scenario]}; slow terminal: "
                f"a pty read at ~270 KB/s; commit {result['commit']}")
        path = os.path.join(out_dir, f"chart-{scenario}.svg")
        svg_chart(summary, path, scenario, note)
        charts.append(path)
    chart = charts[0]
    if demo:
        # The README's picture: the first scenario's chart under a stable
        # name.
        chart = os.path.join(out_dir, "chart.svg")
        shutil.copyfile(charts[0], chart)
    return sentences(summary, out_dir, chart)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="CI smoke test: 1 run x 1 s per cell, reduced matrix")
    g.add_argument("--full", action="store_true", help="every scenario, mode and sink, 3 runs x 5 s")
    ap.add_argument("--reps", type=int, default=None, help="repetitions per cell (default 3; --quick 1)")
    ap.add_argument("--duration", type=int, default=None, help="seconds of load per run (default 3; --full 5; --quick 1)")
    ap.add_argument("--modes", default=None, help="comma-separated (axum runs the tracing ones only)")
    ap.add_argument("--sinks", default=None, help="comma-separated: " + ",".join(ALL_SINKS))
    ap.add_argument("--scenarios", default=None, help="comma-separated: " + ",".join(ALL_SCENARIOS))
    ap.add_argument("--out", default=None, help="results directory (default loadtest/results, "
                    "--quick: loadtest/results/quick, --full: loadtest/results/full)")
    ap.add_argument("--dry-run", action="store_true", help="print the plan and its time estimate, run nothing")
    ap.add_argument("--redraw", metavar="RESULTS_JSON", help="only redraw the charts (beside the file) and "
                    "print the sentences from an earlier run's results.json")
    args = ap.parse_args()
    if args.redraw:
        with open(args.redraw) as f:
            result = json.load(f)
        out_dir = os.path.dirname(os.path.abspath(args.redraw))
        demo = out_dir == os.path.join(ROOT, "loadtest", "results")
        for line in draw(result, out_dir, demo):
            print(line)
        return
    demo = not (args.quick or args.full or args.modes or args.sinks or args.scenarios
                or args.reps or args.duration or args.out)
    results = os.path.join(ROOT, "loadtest", "results")
    if args.quick:
        preset = {"reps": 1, "duration": 1, "out": os.path.join(results, "quick"),
                  "scenarios": "pinned,tokio,axum", "sinks": "file,pty+file",
                  "modes": "none,println,tracing-envfilter,tracing-appender,nowait-core,nowait,nowait-macro,nowait-log"}
    elif args.full:
        preset = {"reps": 3, "duration": 5, "out": os.path.join(results, "full"),
                  "scenarios": ",".join(ALL_SCENARIOS), "sinks": ",".join(ALL_SINKS),
                  "modes": ",".join(ALL_MODES)}
    else:
        preset = {"reps": 3, "duration": 3, "out": results, "scenarios": "pinned",
                  "sinks": "pty,file,pty+file", "modes": "none,println,tracing-appender,nowait,nowait-macro"}
    for k, v in preset.items():
        if getattr(args, k) is None:
            setattr(args, k, v)
    modes, sinks, scenarios = args.modes.split(","), args.sinks.split(","), args.scenarios.split(",")
    for name, got, known in (("mode", modes, ALL_MODES), ("sink", sinks, ALL_SINKS),
                             ("scenario", scenarios, ALL_SCENARIOS)):
        for x in got:
            if x not in known:
                sys.exit(f"unknown {name} {x} (known: {', '.join(known)})")
    if args.reps < 1 or args.duration < 1:
        sys.exit("--reps and --duration must be at least 1")
    plan = []  # (scenario, sink, rep, mode), interleaved so drift hits every mode alike
    for scenario in scenarios:
        ms = [m for m in modes if scenario != "axum" or m in AXUM_MODES]
        if args.quick and scenario == "tokio":
            # The tokio server must start, serve and report; the rest of the
            # matrix is pinned's.
            ms = [m for m in ms if m in ("none", "nowait")]
        if args.quick and scenario != "axum":
            ms = [m for m in ms if m != "tracing-envfilter"]
        for sink in sinks:
            for rep in range(args.reps):
                for mode in ms:
                    if sink == "binfile" and mode not in NOWAIT | NO_OUTPUT:
                        continue  # a binary log is nowait's own format
                    plan.append((scenario, sink, rep, mode))
    clock = Clock(args.duration)
    print(f"{len(plan)} runs ({', '.join(scenarios)}; {args.reps} x {args.duration} s of load each), "
          f"about {mmss(clock.left(plan))} on a warm build", file=sys.stderr, flush=True)
    if args.quick:
        selftest()
    if args.dry_run:
        return
    bins = build()
    os.makedirs(args.out, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="nowait-loadtest-")
    # Listening ports below Linux's ephemeral range (32768+), where wrk's own
    # client ports would otherwise collide with them now and then.
    rows, port = [], 20000 + os.getpid() % 10000
    start = time.time()
    for i, (scenario, sink, rep, mode) in enumerate(plan):
        port += 1
        print(f"[{i+1}/{len(plan)}] {scenario} {sink} {mode} run {rep+1}; {mmss(time.time()-start)} elapsed, "
              f"about {mmss(clock.left(plan[i:]))} left", file=sys.stderr, flush=True)
        for attempt in range(3):
            try:
                row, overhead = run_one(bins, mode, sink, scenario, args.duration, port, tmp)
                rows.append(row)
                clock.record(mode, sink, overhead)
                break
            except RuntimeError as e:
                # A port taken by another process: try the next one;
                # anything else is a real failure.
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
                if not rs:
                    continue
                vals = [r["rps"] for r in rs]
                outputs = {}
                for r in rs:
                    for kind, o in r["outputs"].items():
                        acc = outputs.setdefault(kind, dict.fromkeys(o, 0))
                        for k, v in o.items():
                            acc[k] += v
                summary.append({
                    "scenario": scenario, "sink": sink, "mode": mode,
                    "rps_median": statistics.median(vals), "rps_min": min(vals), "rps_max": max(vals),
                    "ratio": statistics.median(vals) / statistics.median(base) if base else None,
                    "p99_us_median": statistics.median(r["p99_us"] for r in rs),
                    "served": sum(r["served"] for r in rs), "outputs": outputs,
                    "check": "ok" if all(r["check"] == "ok" for r in rs) else next(r["check"] for r in rs if r["check"] != "ok"),
                })
    print()
    print(f"{args.reps} run(s) x {args.duration} s per cell, interleaved; wrk -t1 -c1 (pinned, onecore, axum) or "
          f"-t2 -c64 (tokio); pty profile vscode (~270 KB/s)")
    print("lines, summed over the runs, as shares of those expected: delivered (in the output) / said (dropped, and "
          "said so in the output) / counted (dropped, only a counter knows) / lost (counted nowhere)")
    hdr = (f"{'scenario':<8} {'sink':<9} {'mode':<26} {'req/s median (min-max)':<24} {'vs none':>7} {'p99':>9} "
           f"{'served':>9}  {'terminal: delivered/said/counted/lost':<26} {'file: delivered/said/counted/lost':<26} check")
    print(hdr)
    print("-" * len(hdr))

    def shares(o):
        if not o:
            return "-"
        e = o["expected"]
        return "/".join(pct(o[k], e).replace(" ", "") for k in ("delivered", "reported", "counted", "lost"))
    for s in summary:
        vals = [r["rps"] for r in rows if r["mode"] == s["mode"] and r["sink"] == s["sink"] and r["scenario"] == s["scenario"]]
        ratio = f"{s['ratio']:.2f}x" if s["ratio"] else "-"
        print(f"{s['scenario']:<8} {s['sink']:<9} {s['mode']:<26} {fmt_rps(vals):<24} {ratio:>7} "
              f"{s['p99_us_median']/1000:>7.2f}ms {s['served']:>9}  {shares(s['outputs'].get('pty')):<26} "
              f"{shares(s['outputs'].get('file')):<26} {s['check']}")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    rustc = subprocess.run(["rustc", "-V"], capture_output=True, text=True).stdout.strip()
    wall = time.time() - start
    result = {"machine": {"nproc": os.cpu_count(), "uname": " ".join(os.uname())}, "rustc": rustc, "commit": commit,
              "reps": args.reps, "duration_s": args.duration, "wall_s": round(wall, 1), "pty_profile": "vscode",
              "pty_drain_s": PTY_DRAIN_S,
              "pinning": {"pinned": "request thread + wrk on CPU 0, logger threads free",
                          "onecore": "server (all threads) + wrk on CPU 0",
                          "tokio": "tokio server (2 workers) and wrk -t2 -c64, unpinned",
                          "axum": "axum current-thread runtime + wrk on CPU 0, logger threads free"},
              "summary": summary, "runs": rows}
    with open(os.path.join(args.out, "results.json"), "w") as f:
        json.dump(result, f, indent=1)
    os.remove(os.path.join(args.out, "results.partial.json"))
    print(f"\nwall time {mmss(wall)}\n")
    for line in draw(result, args.out, demo):
        print(line)
    zero = [s for s in summary if s["rps_median"] <= 0]
    if zero:
        sys.exit("some cells served no requests")
    # Peers' losses are findings to report; nowait's would be a bug.
    if any(s["check"] != "ok" for s in summary if s["mode"] in NOWAIT):
        sys.exit("a nowait mode failed its line check (see the table)")


if __name__ == "__main__":
    main()
