//! The `metrics` feature: the writer thread publishes `Stats` through the
//! facade while running, and the guard publishes the final counts.
#![cfg(feature = "metrics")]

use std::time::{Duration, Instant};

use metrics_util::debugging::{DebugValue, DebuggingRecorder, Snapshotter};
use metrics_util::MetricKind;
use nowait_core::stats::METRIC_NAMES;
use nowait_core::{Builder, FullPolicy, Level, Sink};

/// A sink whose every write fails with a full disk (a writer, so that the
/// test runs where there is no `/dev/full`).
struct Full;

impl std::io::Write for Full {
    fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
        Err(std::io::Error::other("No space left on device (injected)"))
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The failing sink's label.
const FULL: &str = "writer";

type Series = Vec<(
    metrics_util::CompositeKey,
    Option<metrics::Unit>,
    Option<metrics::SharedString>,
    DebugValue,
)>;

/// One snapshot (the debugging recorder drains values as it reads them).
fn take(snap: &Snapshotter) -> Series {
    snap.snapshot().into_vec()
}

/// The value of one series: `name` with exactly `labels`.
fn value(all: &Series, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    all.iter().find_map(|(key, _, _, v)| {
        let k = key.key();
        let mut have: Vec<(String, String)> = k
            .labels()
            .map(|l| (l.key().to_string(), l.value().to_string()))
            .collect();
        have.sort();
        let mut want: Vec<(String, String)> = labels
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        want.sort();
        (k.name() == name && have == want).then(|| match v {
            DebugValue::Counter(c) => *c as f64,
            DebugValue::Gauge(g) => g.into_inner(),
            DebugValue::Histogram(_) => f64::NAN,
        })
    })
}

#[test]
fn stats_reach_the_recorder_while_running_and_at_the_end() {
    let recorder = DebuggingRecorder::new();
    let snap = recorder.snapshotter();
    recorder
        .install()
        .expect("no other recorder in this test binary");

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.log");
    let (logger, guard) = Builder::new()
        .capacity(4096)
        .full_policy(FullPolicy::Drop)
        .sink(Sink::file(&path))
        .sink(Sink::writer(Full))
        .build()
        .unwrap();
    for i in 0..200 {
        let _ = logger.log(Level::Info, &format!("record {i}"));
    }
    // A rate-limited call site (what `limit = 1 per 1h` expands to) over
    // its limit.
    static LIMIT: nowait_core::__private::SiteLimit =
        nowait_core::__private::SiteLimit::rate(1, 3_600_000_000_000, "src/db.rs", 88);
    nowait_core::__private::watch_limit(&LIMIT, &logger);
    let admitted = (0..5).filter(|_| LIMIT.admit_watched()).count();
    let _ = logger.flush();
    let stats = logger.stats();
    assert!(stats.records_written > 0);

    // The writer publishes once a second, without anyone asking.
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let seen = value(&take(&snap), "nowait_records_written_total", &[]);
        if seen == Some(stats.records_written as f64) {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "writer did not publish within 5 s: {seen:?} vs {}",
            stats.records_written
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    drop(guard);
    let stats = logger.stats();
    let all = take(&snap);
    assert_eq!(
        value(
            &all,
            "nowait_records_dropped_total",
            &[("reason", "ring_full")]
        ),
        Some(stats.dropped_full as f64)
    );
    assert_eq!(stats.suppressed_rate_limit, 5 - admitted as u64);
    assert_eq!(
        value(
            &all,
            "nowait_records_suppressed_total",
            &[("reason", "rate_limit")]
        ),
        Some(stats.suppressed_rate_limit as f64)
    );
    assert_eq!(
        value(
            &all,
            "nowait_records_suppressed_total",
            &[("reason", "sampling")]
        ),
        Some(0.0)
    );
    assert_eq!(
        value(&all, "nowait_ring_capacity_bytes", &[]),
        Some(stats.ring_capacity as f64)
    );
    let file = format!("file:{}", path.display());
    assert_eq!(
        value(&all, "nowait_sink_bytes_written_total", &[("sink", &file)]),
        Some(stats.sinks[0].bytes_written as f64)
    );
    assert!(stats.sinks[1].write_errors > 0, "the full sink must fail");
    assert_eq!(
        value(&all, "nowait_sink_write_errors_total", &[("sink", FULL)]),
        Some(stats.sinks[1].write_errors as f64)
    );
    let failed = stats.sinks[1].dropped_failed + stats.sinks[1].abandoned;
    let published = value(
        &all,
        "nowait_sink_records_dropped_total",
        &[("sink", FULL), ("reason", "failed")],
    )
    .unwrap()
        + value(
            &all,
            "nowait_sink_records_dropped_total",
            &[("sink", FULL), ("reason", "abandoned")],
        )
        .unwrap();
    assert_eq!(published, failed as f64);

    // Every documented name was published, with the kind the docs give.
    for name in METRIC_NAMES {
        let kind = all
            .iter()
            .find(|(k, _, _, _)| k.key().name() == *name)
            .map(|(k, _, _, _)| k.kind())
            .unwrap_or_else(|| panic!("{name} was not published"));
        let gauge =
            name.ends_with("_bytes") || name.ends_with("_stalled") || name.ends_with("_kept");
        assert_eq!(kind == MetricKind::Gauge, gauge, "{name}: {kind:?}");
    }
}
