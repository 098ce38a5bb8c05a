//! [`Stats`] published through the [`metrics`] facade (feature `metrics`).
//!
//! The writer thread publishes a snapshot once a second
//! ([`PUBLISH_INTERVAL`]) and the guard once more after the final count, so
//! an exporter (`metrics-exporter-prometheus`, for one) always shows
//! counters at most a second old, and the final ones after shutdown.
//! Handles are looked up at each publication rather than kept, so a
//! recorder installed after the logger was built still gets everything.
//! The request threads never touch the facade.
//!
//! Every counter is published with `absolute` (the value of the matching
//! [`Stats`] field), so a restart of the logger in a forked child starts
//! its series again from zero, as its `Stats` do.

use std::time::Duration;

use metrics::{counter, gauge};

use crate::accounting::stats::{SinkStats, Stats};

/// How often the writer thread publishes.
pub(crate) const PUBLISH_INTERVAL: Duration = Duration::from_secs(1);

/// The metric names, as a Prometheus exporter shows them.
///
/// | name | kind | labels | [`Stats`] field |
/// |---|---|---|---|
/// | `nowait_records_written_total` | counter | | [`records_written`](Stats::records_written) |
/// | `nowait_records_dropped_total` | counter | `reason`: `ring_full`, `shed`, `too_large`, `closed`, `timeout`, `discarded` | `dropped_full`, `dropped_shed`, `dropped_too_large`, `dropped_closed`, `dropped_timeout`, `discarded` |
/// | `nowait_records_suppressed_total` | counter | `reason`: `rate_limit`, `sampling` | [`suppressed_rate_limit`](Stats::suppressed_rate_limit), [`suppressed_sampled`](Stats::suppressed_sampled) |
/// | `nowait_records_truncated_total` | counter | | [`truncated`](Stats::truncated) |
/// | `nowait_records_abandoned_total` | counter | | [`abandoned`](Stats::abandoned) |
/// | `nowait_blocked_waits_total` | counter | | [`blocked_waits`](Stats::blocked_waits) |
/// | `nowait_ring_capacity_bytes` | gauge | | [`ring_capacity`](Stats::ring_capacity) |
/// | `nowait_ring_high_water_bytes` | gauge | | [`ring_high_water`](Stats::ring_high_water) |
/// | `nowait_sink_records_written_total` | counter | `sink` | [`SinkStats::records_written`] |
/// | `nowait_sink_bytes_written_total` | counter | `sink` | [`SinkStats::bytes_written`] |
/// | `nowait_sink_write_calls_total` | counter | `sink` | [`SinkStats::write_calls`] |
/// | `nowait_sink_write_errors_total` | counter | `sink` | [`SinkStats::write_errors`] |
/// | `nowait_sink_records_dropped_total` | counter | `sink`, `reason`: `overflow`, `failed`, `format`, `abandoned` | `dropped_overflow`, `dropped_failed`, `dropped_format`, `abandoned` |
/// | `nowait_sink_records_rejected_total` | counter | `sink` | [`SinkStats::dropped_rejected`] (part of `failed` above: refused for good by the receiver) |
/// | `nowait_sink_records_filtered_total` | counter | `sink` | [`SinkStats::filtered`] |
/// | `nowait_sink_backtrace_kept` | gauge | `sink` | [`SinkStats::backtrace_kept`] |
/// | `nowait_sink_backtrace_released_total` | counter | `sink` | [`SinkStats::backtrace_released`] |
/// | `nowait_sink_pending_bytes` | gauge | `sink` | [`SinkStats::pending_bytes`] |
/// | `nowait_sink_stalled` | gauge (0 or 1) | `sink` | [`SinkStats::stalled`] |
///
/// The `sink` label is the sink's name ([`SinkStats::name`]: `stdout`,
/// `file:/var/log/app.log`, ...).
pub const METRIC_NAMES: &[&str] = &[
    "nowait_records_written_total",
    "nowait_records_dropped_total",
    "nowait_records_suppressed_total",
    "nowait_records_truncated_total",
    "nowait_records_abandoned_total",
    "nowait_blocked_waits_total",
    "nowait_ring_capacity_bytes",
    "nowait_ring_high_water_bytes",
    "nowait_sink_records_written_total",
    "nowait_sink_bytes_written_total",
    "nowait_sink_write_calls_total",
    "nowait_sink_write_errors_total",
    "nowait_sink_records_dropped_total",
    "nowait_sink_records_rejected_total",
    "nowait_sink_records_filtered_total",
    "nowait_sink_backtrace_kept",
    "nowait_sink_backtrace_released_total",
    "nowait_sink_pending_bytes",
    "nowait_sink_stalled",
];

impl Stats {
    /// Publishes this snapshot through the `metrics` facade, under the
    /// names in [`METRIC_NAMES`]. The writer thread already does this once a
    /// second; call it to publish at a moment of your choosing (after a
    /// `Logger::flush`, say).
    ///
    /// # Examples
    ///
    /// ```
    /// let (logger, guard) = nowait_core::Builder::new()
    ///     .sink(nowait_core::Sink::writer(std::io::sink()))
    ///     .build()
    ///     .unwrap();
    /// logger.stats().record_metrics();
    /// # drop(guard);
    /// ```
    #[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
    pub fn record_metrics(&self) {
        counter!("nowait_records_written_total").absolute(self.records_written);
        for (reason, value) in [
            ("ring_full", self.dropped_full),
            ("shed", self.dropped_shed),
            ("too_large", self.dropped_too_large),
            ("closed", self.dropped_closed),
            ("timeout", self.dropped_timeout),
            ("discarded", self.discarded),
        ] {
            counter!("nowait_records_dropped_total", "reason" => reason).absolute(value);
        }
        for (reason, value) in [
            ("rate_limit", self.suppressed_rate_limit),
            ("sampling", self.suppressed_sampled),
        ] {
            counter!("nowait_records_suppressed_total", "reason" => reason).absolute(value);
        }
        counter!("nowait_records_truncated_total").absolute(self.truncated);
        counter!("nowait_records_abandoned_total").absolute(self.abandoned);
        counter!("nowait_blocked_waits_total").absolute(self.blocked_waits);
        gauge!("nowait_ring_capacity_bytes").set(self.ring_capacity as f64);
        gauge!("nowait_ring_high_water_bytes").set(self.ring_high_water as f64);
        for sink in &self.sinks {
            record_sink(sink);
        }
    }
}

fn record_sink(s: &SinkStats) {
    let name = s.name.clone();
    counter!("nowait_sink_records_written_total", "sink" => name.clone())
        .absolute(s.records_written);
    counter!("nowait_sink_bytes_written_total", "sink" => name.clone()).absolute(s.bytes_written);
    counter!("nowait_sink_write_calls_total", "sink" => name.clone()).absolute(s.write_calls);
    counter!("nowait_sink_write_errors_total", "sink" => name.clone()).absolute(s.write_errors);
    for (reason, value) in [
        ("overflow", s.dropped_overflow),
        ("failed", s.dropped_failed),
        ("format", s.dropped_format),
        ("abandoned", s.abandoned),
    ] {
        counter!("nowait_sink_records_dropped_total", "sink" => name.clone(), "reason" => reason)
            .absolute(value);
    }
    counter!("nowait_sink_records_rejected_total", "sink" => name.clone())
        .absolute(s.dropped_rejected);
    counter!("nowait_sink_records_filtered_total", "sink" => name.clone()).absolute(s.filtered);
    gauge!("nowait_sink_backtrace_kept", "sink" => name.clone()).set(s.backtrace_kept as f64);
    counter!("nowait_sink_backtrace_released_total", "sink" => name.clone())
        .absolute(s.backtrace_released);
    gauge!("nowait_sink_pending_bytes", "sink" => name.clone()).set(s.pending_bytes as f64);
    gauge!("nowait_sink_stalled", "sink" => name).set(if s.stalled { 1.0 } else { 0.0 });
}
