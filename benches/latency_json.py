"""Reading latency_load's JSON document, shared by the A/B scripts
(durable_ab.py, commits_ab.py)."""


def metrics(doc):
    """(case, metric) -> value for one latency_load run: per-call p50 and
    p99.9 of each spaced case (keyed `ID SPACING xTHREADS`), records/s of
    each throughput case, bytes per write() and peak RSS of each paced case,
    and each case's drop count."""
    m = {}
    for c in doc["latency"]:
        for s in c.get("spaced", []):
            key = f'{c["id"]} {s["spacing"]} x{s["threads"]}'
            m[(key, "p50_ns")] = s["p50_ns"]
            m[(key, "p999_ns")] = s["p999_ns"]
        m[(c["id"], "dropped")] = c.get("dropped")
    for c in doc["throughput"]:
        m[(c["id"], "records_per_s")] = c["records_per_s"]
        m[(c["id"], "dropped")] = c.get("dropped")
    for c in doc.get("paced", []):
        m[(c["id"], "bytes_per_write")] = c["io"]["bytes_per_write"]
        m[(c["id"], "peak_rss_kib")] = c["peak_rss_kib"]
    return m
