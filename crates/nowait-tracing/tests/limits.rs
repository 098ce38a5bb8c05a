//! The layer's limits (`NowaitLayer::with_limits`): rate directives by
//! target and level, sampling with `sample_rate` on kept events, and the
//! suppressed calls reported in Text and JSON on flush and at shutdown.

use nowait_core::format::Json;
use nowait_core::{Builder, Sink};
use nowait_testkit::{text_and_json, TextAndJson};
use tracing::{debug, info, warn};
use tracing_subscriber::prelude::*;

/// The sum of the counts in the Text notices about suppressed calls whose
/// rule reads `rule`.
fn notices(out: &str, rule: &str) -> u64 {
    out.lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with("INFO nowait: suppressed ") && l.contains(rule))
        .map(|l| {
            l["INFO nowait: suppressed ".len()..]
                .split(' ')
                .next()
                .unwrap()
                .parse::<u64>()
                .unwrap()
        })
        .sum()
}

#[test]
fn directives_limit_by_target_and_level_and_every_suppressed_call_is_reported() {
    let TextAndJson {
        logger,
        guard,
        text,
        json,
    } = text_and_json(Builder::new(), Json::new());
    let layer = nowait_tracing::NowaitLayer::new(logger.clone())
        .with_limits("db=2/1h, db@warn=1/1h, cache=1in10")
        .unwrap();
    nowait_core::filter::set_sample_seed(3);
    let line =
        tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), || {
            for i in 0..10 {
                info!(target: "db::pool", i, "query");
                warn!(target: "db", i, "slow");
                info!(target: "http", i, "request");
            }
            for i in 0..1000 {
                debug!(target: "cache", i, "lookup");
            }
            line!() - 7
        });
    logger.flush().unwrap();
    let out = text.take();
    let count = |prefix: &str| {
        out.lines()
            .filter(|l| l.trim_start().starts_with(prefix))
            .count()
    };
    assert_eq!(count("INFO db::pool: query"), 2, "{out}");
    assert_eq!(count("WARN db: slow"), 1, "{out}");
    assert_eq!(count("INFO http: request"), 10, "{out}");
    assert_eq!(notices(&out, "(limit 2 per 1h)"), 8, "{out}");
    assert_eq!(notices(&out, "(limit 1 per 1h)"), 9, "{out}");
    let site = format!("tests/limits.rs:{line}");
    assert!(
        out.lines().any(|l| l.contains(&format!(
            "suppressed 8 records from crates/nowait-tracing/{site} (limit 2 per 1h)"
        ))),
        "{out}"
    );
    // Sampling: 1 in 10 of 1000, within five standard deviations.
    let kept = count("DEBUG cache: lookup");
    assert!((50..=150).contains(&kept), "{kept}");
    assert!(out
        .lines()
        .filter(|l| l.contains("cache: lookup"))
        .all(|l| l.ends_with(" sample_rate=10")));
    assert_eq!(notices(&out, "(sampled 1 in 10)") + kept as u64, 1000);
    let stats = logger.stats();
    assert_eq!(stats.suppressed_rate_limit, 17);
    assert_eq!(stats.suppressed_sampled, 1000 - kept as u64);

    let json = json.take();
    let values: Vec<serde_json::Value> = json
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let suppressed: u64 = values
        .iter()
        .filter(|v| v["fields"]["reason"] == "rate_limit")
        .map(|v| v["fields"]["suppressed"].as_u64().unwrap())
        .sum();
    assert_eq!(suppressed, 17);
    assert!(values
        .iter()
        .filter(|v| v["target"] == "cache")
        .all(|v| v["fields"]["sample_rate"] == 10));

    // Shutdown reports what was suppressed since the last flush.
    let layer = nowait_tracing::NowaitLayer::new(logger.clone())
        .with_limits("late=1/1h")
        .unwrap();
    tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), || {
        for _ in 0..4 {
            info!(target: "late", "again");
        }
    });
    drop(guard);
    let rest = text.take();
    assert_eq!(notices(&rest, "(limit 1 per 1h)"), 3, "{rest}");
}

#[test]
fn an_invalid_directive_is_refused_with_its_text() {
    let (logger, _guard) = Builder::new()
        .sink(Sink::writer(std::io::sink()))
        .build()
        .unwrap();
    let err = nowait_tracing::NowaitLayer::new(logger)
        .with_limits("db=1/s, x=1/fortnight")
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "invalid limit directive `x=1/fortnight`: a period is a number and a unit: 250ms, 1s, 5m, 1h"
    );
}
