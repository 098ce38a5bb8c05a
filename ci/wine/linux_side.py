#!/usr/bin/env python3
"""Starts Linux processes for Windows tests running under Wine.

A Windows process under Wine cannot start a Linux program, so the tests
that need a peer on the Linux side (the OTLP receiver) ask this script:
each request is a file `NAME.cmd` in DIR holding a JSON list, the argv of
the process to start (the program must be one of ALLOWED), put there whole
(written under another name, then renamed). It answers
with `NAME.out`, written whole (a rename): the first line the process
printed, or `ERROR <why>`. Every process it started is killed when it
ends, which is when ci/wine.sh stops it, or when the `STOP` file appears.

Usage: linux_side.py DIR
"""

import json
import os
import signal
import subprocess
import sys
import time

ALLOWED = {"python3"}
# How long a started process may take to print its first line.
FIRST_LINE_TIMEOUT = 30.0


def answer(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text + "\n")
    os.rename(tmp, path)


def first_line(proc):
    # The receivers print their port at once; a process that does not is
    # killed rather than waited for.
    deadline = time.monotonic() + FIRST_LINE_TIMEOUT
    line = b""
    fd = proc.stdout.fileno()
    os.set_blocking(fd, False)
    while time.monotonic() < deadline:
        try:
            chunk = os.read(fd, 256)
        except BlockingIOError:
            chunk = None
        if chunk:
            line += chunk
            if b"\n" in line:
                return line.split(b"\n", 1)[0].decode(errors="replace")
        elif chunk == b"" or proc.poll() is not None:
            return None
        else:
            time.sleep(0.01)
    return None


def main():
    root = sys.argv[1]
    procs = []

    def stop(*_):
        for p in procs:
            if p.poll() is None:
                p.kill()
        for p in procs:
            p.wait()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while not os.path.exists(os.path.join(root, "STOP")):
        for name in sorted(os.listdir(root)):
            if not name.endswith(".cmd"):
                continue
            path = os.path.join(root, name)
            out = path[: -len(".cmd")] + ".out"
            try:
                with open(path) as f:
                    argv = json.load(f)
                os.rename(path, path + ".taken")
            except (OSError, ValueError) as e:
                answer(out, "ERROR cannot read the request: %s" % e)
                continue
            if (
                not isinstance(argv, list)
                or not argv
                or not all(isinstance(a, str) for a in argv)
                or argv[0] not in ALLOWED
            ):
                answer(out, "ERROR not an allowed command: %r" % (argv,))
                continue
            try:
                proc = subprocess.Popen(argv, stdout=subprocess.PIPE)
            except OSError as e:
                answer(out, "ERROR cannot start %s: %s" % (argv[0], e))
                continue
            procs.append(proc)
            line = first_line(proc)
            if line is None:
                proc.kill()
                answer(out, "ERROR %s printed nothing" % argv[0])
            else:
                answer(out, line)
        time.sleep(0.02)
    stop()


if __name__ == "__main__":
    main()
