#!/usr/bin/env python3
"""An OTLP/HTTP logs receiver for nowait's tests.

Decodes every request with the official protobuf types (pip package
`opentelemetry-proto`), writes what it got to a file, and answers as the
test's script says, one action per request (the last repeats):

  ok           200, empty ExportLogsServiceResponse
  503[:N]      503 Service Unavailable (with Retry-After: N)
  429[:N]      429 Too Many Requests (with Retry-After: N)
  400          400 Bad Request, a google.rpc.Status-like body
  partial:K    200 with partial_success.rejected_log_records = K (at most
               the records of the request that are not nowait's notices)
  hang         read the request, log it, never answer (and serve nobody
               else: the server is single-threaded)

Usage: otlp_receiver.py PORT OUT SCRIPT [--fast] [--require-header=NAME:VALUE]
    [--tls=CERT,KEY[,CLIENT_CA]]
PORT 0 picks a free port. Prints "PORT <n>" once listening. --fast decodes
nothing and logs only the request's size and record count (for benches).
--require-header answers 401 (records refused, REJ) to every request
without that header and value, as a backend needing credentials does.
--tls serves HTTPS with the PEM certificate chain and key; with CLIENT_CA
it requires a client certificate signed by it (mTLS).

The output, flushed before each answer, one line each:
  REQ <status> <rejected> <records> <gzip 0|1> <unix time> resource=<attrs> scope=<name>/<version>
  REC|REJ|NAK <record>  (accepted, refused for good, not answered or to
  be retried; see `rec` below)
"""

import gzip
import http.server
import sys
import time

from opentelemetry.proto.collector.logs.v1 import logs_service_pb2


def value(v):
    kind = v.WhichOneof("value")
    if kind == "string_value":
        return "str:" + repr(v.string_value)
    if kind == "int_value":
        return "int:%d" % v.int_value
    if kind == "double_value":
        return "double:%r" % v.double_value
    if kind == "bool_value":
        return "bool:%s" % v.bool_value
    return "%s:?" % kind


def attrs(kvs):
    return "|".join("%s=%s" % (kv.key, value(kv.value)) for kv in kvs)


def rec(r):
    return "sev=%d text=%s body=%s time=%d observed=%d trace=%s span=%s flags=%d attrs=%s" % (
        r.severity_number,
        r.severity_text,
        value(r.body),
        r.time_unix_nano,
        r.observed_time_unix_nano,
        r.trace_id.hex(),
        r.span_id.hex(),
        r.flags,
        attrs(r.attributes),
    )


def is_notice(r):
    return any(kv.key == "target" and kv.value.string_value == "nowait" for kv in r.attributes)


def main():
    port, out_path, script = int(sys.argv[1]), sys.argv[2], sys.argv[3].split(",")
    fast = "--fast" in sys.argv[4:]
    required = None
    tls = None
    for arg in sys.argv[4:]:
        if arg.startswith("--require-header="):
            required = arg.split("=", 1)[1].split(":", 1)
        elif arg.startswith("--tls="):
            tls = arg.split("=", 1)[1].split(",")
    out = open(out_path, "a", encoding="utf-8")
    state = {"n": 0}

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args):
            pass

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            zipped = self.headers.get("Content-Encoding") == "gzip"
            if zipped:
                body = gzip.decompress(body)
            action = script[min(state["n"], len(script) - 1)]
            state["n"] += 1
            name, _, arg = action.partition(":")
            if required is not None and self.headers.get(required[0]) != required[1]:
                name, arg = "401", ""
            if fast:
                req = logs_service_pb2.ExportLogsServiceRequest()
                req.ParseFromString(body)
                n = sum(len(s.log_records) for rl in req.resource_logs for s in rl.scope_logs)
                out.write("REQ 200 0 %d %d %f\n" % (n, zipped, time.time()))
                out.flush()
                return self.answer(200, b"")
            req = logs_service_pb2.ExportLogsServiceRequest()
            req.ParseFromString(body)
            records = [r for rl in req.resource_logs for s in rl.scope_logs for r in s.log_records]
            rejected = 0
            fixed = {"ok": 200, "partial": 200, "hang": 0}
            status = fixed[name] if name in fixed else int(name)
            if name == "partial":
                rejected = min(int(arg), sum(1 for r in records if not is_notice(r)))
            elif status >= 300 and status not in (429, 502, 503, 504):
                rejected = len(records)
            rl = req.resource_logs[0]
            scope = rl.scope_logs[0].scope
            out.write(
                "REQ %d %d %d %d %f resource=%s scope=%s/%s\n"
                % (status, rejected, len(records), zipped, time.time(), attrs(rl.resource.attributes), scope.name, scope.version)
            )
            # The rejected ones are the last records that are not notices.
            if status == 0 or status in (429, 502, 503, 504):
                default = "NAK"  # not answered, or to be sent again
            elif status < 300:
                default = "REC"
            else:
                default = "REJ"
            left = rejected if name == "partial" else 0
            marks = []
            for r in reversed(records):
                if left > 0 and not is_notice(r):
                    marks.append("REJ")
                    left -= 1
                else:
                    marks.append(default)
            for r, mark in zip(records, reversed(marks)):
                out.write("%s %s\n" % (mark, rec(r)))
            out.flush()
            if name == "hang":
                time.sleep(3600)
                return
            if name == "partial":
                resp = logs_service_pb2.ExportLogsServiceResponse()
                resp.partial_success.rejected_log_records = rejected
                resp.partial_success.error_message = "test rejects %d" % rejected
                return self.answer(200, resp.SerializeToString())
            if status == 200:
                return self.answer(200, logs_service_pb2.ExportLogsServiceResponse().SerializeToString())
            extra = {"Retry-After": arg} if arg else {}
            # google.rpc.Status { code = 1: 3; message = 2: "bad" }
            return self.answer(status, b"\x08\x03\x12\x03bad", extra)

        def answer(self, status, body, extra=None):
            self.send_response(status)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(body)))
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

    http.server.HTTPServer.allow_reuse_address = True
    server = http.server.HTTPServer(("127.0.0.1", port), Handler)
    if tls is not None:
        import ssl

        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(tls[0], tls[1])
        if len(tls) > 2:
            ctx.verify_mode = ssl.CERT_REQUIRED
            ctx.load_verify_locations(tls[2])

        # The handshake happens in the handler's thread of control, so a
        # client that fails it only ends its own connection.
        class TlsServer(http.server.HTTPServer):
            def get_request(self):
                sock, addr = self.socket.accept()
                return ctx.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), addr

            def handle_error(self, request, client_address):
                out.write("TLSERR %s\n" % (sys.exc_info()[1],))
                out.flush()

        server.server_close()
        server = TlsServer(("127.0.0.1", port), Handler)
    print("PORT %d" % server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
