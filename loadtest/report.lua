-- wrk hook: print one JSON line with the run's numbers (latencies in µs).
done = function(summary, latency, requests)
  io.write(string.format(
    'WRK {"requests":%d,"duration_us":%d,"errors":%d,"p50_us":%d,"p99_us":%d,"max_us":%d}\n',
    summary.requests, summary.duration,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.status + summary.errors.timeout,
    latency:percentile(50), latency:percentile(99), latency.max))
end
