"""Checks Google Cloud Logging structured log lines (one JSON object per
line on stdin) the way Cloud Logging's agents read them: each special
field of the structured-logging table (severity, message, time,
httpRequest, logging.googleapis.com/sourceLocation, /trace, /spanId,
/trace_sampled, /labels, /insertId, /operation) is moved into the
LogEntry field it names, the rest becomes jsonPayload, and the entry is
parsed by the LogEntry type of google-cloud-logging (its protobuf JSON
mapping: an unknown LogSeverity, a line that is not an int64, a
trace_sampled that is not a boolean, a time that is not RFC 3339 are
errors). Also: no key appears twice, trace ids have the W3C lengths, and
with a project (argv[1]) the trace is projects/PROJECT/traces/ID.

Prints `ok N` or one line per problem and exits 1."""

import json
import re
import sys

import google.cloud.logging_v2 as logging_v2
from google.cloud.logging_v2.types import LogEntry

SPECIAL = {
    "severity": "severity",
    "time": "timestamp",
    "timestamp": "timestamp",
    "httpRequest": "httpRequest",
    "logging.googleapis.com/sourceLocation": "sourceLocation",
    "logging.googleapis.com/trace": "trace",
    "logging.googleapis.com/spanId": "spanId",
    "logging.googleapis.com/trace_sampled": "traceSampled",
    "logging.googleapis.com/labels": "labels",
    "logging.googleapis.com/insertId": "insertId",
    "logging.googleapis.com/operation": "operation",
}
SEVERITIES = {"DEFAULT", "DEBUG", "INFO", "NOTICE", "WARNING", "ERROR", "CRITICAL", "ALERT", "EMERGENCY"}

project = sys.argv[1] if len(sys.argv) > 1 else None
problems = []
n = 0


def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("duplicate key in %r" % keys)
    return dict(pairs)


for line in sys.stdin.read().split("\n"):
    if not line:
        continue
    n += 1
    try:
        doc = json.loads(line, object_pairs_hook=no_duplicates)
        entry = {"jsonPayload": {}}
        for key, value in doc.items():
            if key in SPECIAL:
                entry[SPECIAL[key]] = value
            else:
                entry["jsonPayload"][key] = value
        parsed = LogEntry.from_json(json.dumps(entry))
        if doc.get("severity") not in SEVERITIES:
            raise ValueError("severity %r" % doc.get("severity"))
        if "message" in doc and not isinstance(doc["message"], str):
            raise ValueError("message is not a string")
        if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", doc.get("time", "")):
            raise ValueError("time %r" % doc.get("time"))
        if "trace" in entry:
            want = r"[0-9a-f]{32}" if project is None else r"projects/%s/traces/[0-9a-f]{32}" % re.escape(project)
            if not re.fullmatch(want, parsed.trace):
                raise ValueError("trace %r" % parsed.trace)
            if not re.fullmatch(r"[0-9a-f]{16}", parsed.span_id):
                raise ValueError("spanId %r" % parsed.span_id)
        for key in entry["jsonPayload"]:
            if key.startswith("logging.googleapis.com/"):
                raise ValueError("special-looking key %r left in the payload" % key)
    except Exception as e:  # noqa: BLE001 - every failure is a finding
        problems.append("%s: %s" % (e, line))

if problems:
    print("\n".join(problems))
    sys.exit(1)
print("ok %d (google-cloud-logging %s LogEntry)" % (n, logging_v2.__version__))
