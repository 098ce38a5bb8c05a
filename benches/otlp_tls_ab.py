#!/usr/bin/env python3
"""OTLP plain vs OTLP over TLS vs the file sink: lossless events/s,
interleaved (A B C D A B C D ...), medians of ROUNDS (at least 3).

rotel-agent (blackhole exporter) is the receiver; it has no TLS receiver,
so TLS is terminated in front of it by a small asyncio proxy started here
(Python's `ssl`, the certificate made here with the `openssl` command: a
CA and a leaf for 127.0.0.1 signed by it, which the sink trusts through
`NOWAIT_OTLP_CA`). A proxy is a hop of its own, so the same proxy also
runs without TLS, and TLS's own cost is read between those two arms:

  file         the file sink (JSON), as benches/otlp_ab.py
  otlp         OTLP straight to rotel
  otlp-proxy   OTLP through the plain TCP proxy
  otlp-tls     OTLP over TLS through the TLS proxy

Each run is `otlp_throughput` (examples/examples/otlp_throughput.rs): one
thread logs N events under the blocking policy, the clock stops when the
sink has everything (for OTLP: every record acknowledged); a run that
drops a record fails and is recorded, not retried. If the proxy, not the
sink, is the bottleneck, otlp-proxy is well below otlp: the markdown says
so next to the numbers.

Writes benches/results/otlp-tls-ab.json and .md. Run on a quiet machine,
under `flock /tmp/nowait-bench.lock`, after
`cargo build --release -p nowait-examples --example otlp_throughput`:

  flock /tmp/nowait-bench.lock python3 benches/otlp_tls_ab.py
  (ROUNDS=5 N=2000000 by default; needs rotel from PyPI and openssl)
"""
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

ROUNDS = max(3, int(os.environ.get("ROUNDS", "5")))
N = int(os.environ.get("N", "2000000"))
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
exe = os.path.join(root, "target/release/examples/otlp_throughput")
ARMS = ("file", "otlp", "otlp-proxy", "otlp-tls")

# The proxy: accepts on a port (TLS or not), opens one connection to the
# target per client, and copies both ways. Run as its own process so that
# its CPU is not this script's.
PROXY = textwrap.dedent(
    """
    import asyncio, ssl, sys
    listen, target = int(sys.argv[1]), int(sys.argv[2])
    ctx = None
    if len(sys.argv) > 3:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(sys.argv[3], sys.argv[4])

    async def pipe(r, w):
        try:
            while True:
                data = await r.read(1 << 16)
                if not data:
                    break
                w.write(data)
                await w.drain()
        except (ConnectionError, ssl.SSLError):
            pass
        finally:
            w.close()

    async def client(r, w):
        tr, tw = await asyncio.open_connection("127.0.0.1", target)
        await asyncio.gather(pipe(r, tw), pipe(tr, w))

    async def main():
        server = await asyncio.start_server(client, "127.0.0.1", listen, ssl=ctx)
        print("READY", flush=True)
        async with server:
            await server.serve_forever()

    asyncio.run(main())
    """
)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_port(port):
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), 0.1).close()
            return
        except OSError:
            time.sleep(0.05)
    sys.exit("nothing listens on %d" % port)


def make_certificates(d):
    """A CA, and a leaf for 127.0.0.1 signed by it (P-256)."""
    ca_key, ca, key, csr, leaf = (os.path.join(d, n) for n in ("ca.key", "ca.pem", "leaf.key", "leaf.csr", "leaf.pem"))
    ext = os.path.join(d, "leaf.ext")
    with open(ext, "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n")
    run = lambda *a: subprocess.run(["openssl", *a], check=True, capture_output=True)
    run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-subj", "/CN=nowait bench CA", "-days", "1", "-keyout", ca_key, "-out", ca)
    run("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
        "-subj", "/CN=127.0.0.1", "-keyout", key, "-out", csr)
    run("x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
        "-days", "1", "-extfile", ext, "-out", leaf)
    return ca, leaf, key


def main():
    import rotel

    agent = os.path.join(os.path.dirname(rotel.__file__), "rotel-agent")
    tmp = tempfile.mkdtemp(prefix="nowait-otlp-tls-ab-")
    ca, leaf, key = make_certificates(tmp)
    proxy_script = os.path.join(tmp, "proxy.py")
    with open(proxy_script, "w") as f:
        f.write(PROXY)
    http, grpc, plain_port, tls_port = free_port(), free_port(), free_port(), free_port()
    procs = []
    try:
        procs.append(subprocess.Popen(
            [agent, "start", "--exporter", "blackhole",
             "--otlp-http-endpoint", "127.0.0.1:%d" % http,
             "--otlp-grpc-endpoint", "127.0.0.1:%d" % grpc,
             "--pid-file", os.path.join(tmp, "rotel.pid")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        wait_port(http)
        for args in ([str(plain_port), str(http)], [str(tls_port), str(http), leaf, key]):
            p = subprocess.Popen([sys.executable, proxy_script, *args], stdout=subprocess.PIPE, text=True)
            procs.append(p)
            assert p.stdout.readline().strip() == "READY"
        urls = {
            "file": "http://127.0.0.1:%d" % http,  # unused by the file sink
            "otlp": "http://127.0.0.1:%d" % http,
            "otlp-proxy": "http://127.0.0.1:%d" % plain_port,
            "otlp-tls": "https://127.0.0.1:%d" % tls_port,
        }
        env = dict(os.environ, NOWAIT_OTLP_CA=ca)
        runs = {a: [] for a in ARMS}
        failures = []
        for r in range(ROUNDS):
            for arm in ARMS:
                kind = "file" if arm == "file" else "otlp"
                p = subprocess.run([exe, "--sink", kind, urls[arm], str(N)],
                                   capture_output=True, text=True, env=env)
                if p.returncode != 0:
                    failures.append({"arm": arm, "round": r, "stderr": p.stderr[-2000:]})
                    print(p.stderr[-2000:], file=sys.stderr)
                    continue
                runs[arm].append(json.loads(p.stdout))
    finally:
        for p in procs:
            p.kill()
            p.wait()

    med = {a: statistics.median(x["events_per_s"] for x in v) if v else None for a, v in runs.items()}
    ratio = lambda a, b: med[a] / med[b] if med[a] and med[b] else None
    rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.strip()
    commit = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    result = {
        "what": "lossless events/s: file sink (JSON), OTLP to rotel (blackhole), OTLP through a "
                "plain asyncio proxy, OTLP over TLS through the same proxy with TLS (rustls client, "
                "Python ssl server); interleaved, median of %d" % ROUNDS,
        "machine": platform.processor() or platform.machine(), "cpus": os.cpu_count(),
        "rustc": rustc, "commit": commit, "events": N,
        "runs": runs, "failed_runs": failures, "median_events_per_s": med,
        "tls_over_plain_proxy": ratio("otlp-tls", "otlp-proxy"),
        "proxy_over_direct": ratio("otlp-proxy", "otlp"),
        "otlp_over_file": ratio("otlp", "file"),
        "tls_over_file": ratio("otlp-tls", "file"),
    }
    res = os.path.join(root, "benches/results")
    with open(os.path.join(res, "otlp-tls-ab.json"), "w") as f:
        json.dump(result, f, indent=1)
    with open(os.path.join(res, "otlp-tls-ab.md"), "w") as f:
        f.write("# OTLP plain vs TLS vs the file sink\n\n%s\n\n" % result["what"])
        f.write("%s, %s CPUs, %s, commit %s, %d events per run\n\n"
                % (result["machine"], result["cpus"], rustc, commit, N))
        f.write("| arm | events/s (median) | runs events/s |\n|---|--:|---|\n")
        for a in ARMS:
            shown = "%.0f" % med[a] if med[a] else "-"
            f.write("| %s | %s | %s |\n" % (a, shown, ", ".join("%.0f" % x["events_per_s"] for x in runs[a])))
        f.write("\nRuns that were not lossless or failed: %d (in the JSON)\n\n" % len(failures))
        fmt = lambda x: "%.2f" % x if x else "-"
        f.write("TLS / plain, both through the proxy: %s (TLS's own cost)\n\n" % fmt(result["tls_over_plain_proxy"]))
        f.write("proxy / direct, both plain: %s (below 1: the proxy limits the proxied arms, "
                "and the TLS ratio is a bound, not TLS's cost alone)\n\n" % fmt(result["proxy_over_direct"]))
        f.write("OTLP / file: %s; OTLP over TLS / file: %s\n"
                % (fmt(result["otlp_over_file"]), fmt(result["tls_over_file"])))
    print(json.dumps({"median_events_per_s": med,
                      "tls_over_plain_proxy": result["tls_over_plain_proxy"],
                      "proxy_over_direct": result["proxy_over_direct"]}))


if __name__ == "__main__":
    main()
