//! Per-call-site rate limits and sampling on the macros: what is logged
//! stays within the rule, and every suppressed call is counted in a
//! notice (Text and JSON), in `Stats`, on flush and at shutdown.
//!
//! One process-wide logger, so everything runs in one test.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use nowait_core::format::Json;
use nowait_core::{info, warn, Builder, Logger};
use nowait_testkit::{text_and_json, MemoryWriter, TextAndJson};

const FILE: &str = file!();

#[test]
#[cfg_attr(miri, ignore = "spins threads for two seconds")]
fn limits_and_sampling() {
    let TextAndJson {
        logger,
        guard,
        text,
        json,
    } = text_and_json(Builder::new().capacity(1 << 20), Json::new());
    nowait_core::set_global(logger.clone()).unwrap();

    a_suppressed_call_evaluates_no_argument(&logger, &text, &json);
    fields_named_limit_and_sample_are_fields(&logger, &text, &json);
    a_limited_site_under_four_threads_logs_within_the_limit_and_counts_the_rest(
        &logger, &text, &json,
    );
    sampling_keeps_a_binomial_fraction_the_same_for_the_same_seed(&logger, &text, &json);
    let line = flush_reports_pending_counts(&logger, &text, &json);

    // Shutdown reports what the last flush did not see.
    for _ in 0..5 {
        pending_site();
    }
    let stats_before = logger.stats();
    drop(guard);
    let rest = text.take();
    let want =
        format!("INFO nowait: suppressed 5 records from {FILE}:{line} (limit 1 per 1h) between ");
    assert!(
        rest.lines().any(|l| l.trim_start().starts_with(&want)),
        "{rest}"
    );
    assert_eq!(stats_before.dropped(), 0);
}

fn fields_named_limit_and_sample_are_fields(
    logger: &Logger,
    text: &MemoryWriter,
    json: &MemoryWriter,
) {
    let limit = 3u32;
    info!(limit = 5u32, sample = 1, "plain fields");
    info!(limit, "shorthand");
    logger.flush().unwrap();
    let out: Vec<String> = text
        .take()
        .lines()
        .map(|l| l.trim_start().to_owned())
        .collect();
    assert_eq!(
        out,
        [
            "INFO ratelimit: plain fields limit=5 sample=1",
            "INFO ratelimit: shorthand limit=3"
        ]
    );
    json.take();
}

/// Counts the notices about `site` (`FILE:LINE`) in Text output and adds
/// their counts; the other lines are returned.
fn text_notices(out: &str, site: &str) -> (u64, Vec<String>) {
    let mut total = 0;
    let mut rest = Vec::new();
    let prefix = "INFO nowait: suppressed ";
    for line in out.lines().map(str::trim_start) {
        if let Some(tail) = line.strip_prefix(prefix) {
            if tail.contains(&format!(" from {site} (")) {
                let n: u64 = tail.split(' ').next().unwrap().parse().unwrap();
                total += n;
                continue;
            }
        }
        rest.push(line.to_owned());
    }
    (total, rest)
}

/// The sum of `fields.suppressed` over the JSON notices about `site`.
fn json_notices(out: &str, site: &str) -> u64 {
    out.lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["fields"]["site"] == site)
        .map(|v| v["fields"]["suppressed"].as_u64().unwrap())
        .sum()
}

fn a_suppressed_call_evaluates_no_argument(
    logger: &Logger,
    text: &MemoryWriter,
    json: &MemoryWriter,
) {
    static EVALUATED: AtomicU64 = AtomicU64::new(0);
    let arg = || EVALUATED.fetch_add(1, Ordering::Relaxed);
    let line = line!() + 2;
    for _ in 0..10 {
        warn!(limit = 1 per 1h, n = arg(), "expensive {}", arg());
    }
    logger.flush().unwrap();
    assert_eq!(
        EVALUATED.load(Ordering::Relaxed),
        2,
        "the logged call's argument and field only"
    );
    let site = format!("{FILE}:{line}");
    let (suppressed, rest) = text_notices(&text.take(), &site);
    assert_eq!(suppressed, 9);
    assert_eq!(rest, ["WARN ratelimit: expensive 0 n=1"]);
    let json = json.take();
    assert_eq!(json_notices(&json, &site), 9);
    let notice: serde_json::Value = serde_json::from_str(json.lines().last().unwrap()).unwrap();
    assert_eq!(notice["fields"]["reason"], "rate_limit");
    assert_eq!(notice["fields"]["rule"], "1 per 1h");
    assert_eq!(notice["target"], "nowait");
    assert_eq!(notice["level"], "INFO");
}

fn a_limited_site_under_four_threads_logs_within_the_limit_and_counts_the_rest(
    logger: &Logger,
    text: &MemoryWriter,
    json: &MemoryWriter,
) {
    const PER: u64 = 20;
    const PERIOD: Duration = Duration::from_millis(100);
    const RUN: Duration = Duration::from_secs(2);
    let before = logger.stats();
    let began = Instant::now();
    let line = line!() + 8;
    let calls: u64 = std::thread::scope(|s| {
        let workers: Vec<_> = (0..4)
            .map(|t| {
                s.spawn(move || {
                    let start = Instant::now();
                    let mut n = 0u64;
                    while start.elapsed() < RUN {
                        info!(limit = 20 per 100ms, t, "hot {}", n);
                        n += 1;
                    }
                    n
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).sum()
    });
    let spanned = began.elapsed();
    logger.flush().unwrap();
    let site = format!("{FILE}:{line}");
    let (suppressed, logged) = text_notices(&text.take(), &site);
    assert!(
        logged.iter().all(|l| l.starts_with("INFO ratelimit: hot ")),
        "{logged:?}"
    );
    let logged = logged.len() as u64;
    // Windows touched: the periods the calls spanned (the threads' start
    // and end are spread on a busy machine), plus one they straddle into;
    // each admits at most PER, however the threads' calls interleave.
    let windows = (spanned.as_nanos() / PERIOD.as_nanos()) as u64 + 2;
    assert!(logged <= windows * PER, "{logged} logged");
    assert!(logged >= PER, "{logged} logged");
    assert_eq!(logged + suppressed, calls, "every call logged or counted");
    assert_eq!(json_notices(&json.take(), &site), suppressed);
    let after = logger.stats();
    assert_eq!(
        after.suppressed_rate_limit - before.suppressed_rate_limit,
        suppressed
    );
    assert_eq!(after.dropped(), 0);
}

fn sampling_keeps_a_binomial_fraction_the_same_for_the_same_seed(
    logger: &Logger,
    text: &MemoryWriter,
    json: &MemoryWriter,
) {
    const N: u64 = if cfg!(miri) { 1_000 } else { 100_000 };
    let before = logger.stats().suppressed_sampled;
    nowait_core::filter::set_sample_seed(7);
    for i in 0..N {
        info!(target: "first", sample = 1 in 100, "kept {}", i);
    }
    logger.flush().unwrap();
    nowait_core::filter::set_sample_seed(7);
    for i in 0..N {
        info!(target: "second", sample = 1 in 100, "kept {}", i);
    }
    logger.flush().unwrap();
    let out = text.take();
    let kept = |target: &str| -> Vec<String> {
        let prefix = format!("INFO {target}: ");
        out.lines()
            .filter_map(|l| l.trim_start().strip_prefix(&prefix))
            .map(str::to_owned)
            .collect()
    };
    let (first, second) = (kept("first"), kept("second"));
    // 1 in 100 of N: mean N/100, standard deviation sqrt(N * 0.01 * 0.99);
    // five deviations either side.
    let mean = N as f64 / 100.0;
    let sd = (N as f64 * 0.01 * 0.99).sqrt();
    let k = first.len() as f64;
    assert!((k - mean).abs() <= 5.0 * sd, "kept {k} of {N}");
    assert_eq!(first, second, "the same seed keeps the same calls");
    assert!(
        first.iter().all(|l| l.ends_with(" sample_rate=100")),
        "{first:?}"
    );
    let json = json.take();
    let kept_json = json
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["target"] == "first")
        .inspect(|v| assert_eq!(v["fields"]["sample_rate"], 100))
        .count();
    assert_eq!(kept_json, first.len());
    let suppressed = logger.stats().suppressed_sampled - before;
    assert_eq!(suppressed + 2 * first.len() as u64, 2 * N);
    let notices = out
        .lines()
        .filter(|l| l.contains("(sampled 1 in 100)"))
        .map(|l| {
            l.trim_start()["INFO nowait: suppressed ".len()..]
                .split(' ')
                .next()
                .unwrap()
                .parse::<u64>()
                .unwrap()
        })
        .sum::<u64>();
    assert_eq!(notices, suppressed);
}

#[inline(never)]
fn pending_site() {
    warn!(limit = 1 per 1h, "pending");
}

/// Returns the line of `pending_site`'s call.
fn flush_reports_pending_counts(logger: &Logger, text: &MemoryWriter, json: &MemoryWriter) -> u32 {
    for _ in 0..4 {
        pending_site();
    }
    logger.flush().unwrap();
    let out = text.take();
    let notice = out
        .lines()
        .find(|l| l.contains("(limit 1 per 1h)"))
        .unwrap_or_else(|| panic!("no notice on flush: {out}"));
    let line: u32 = notice
        .split(&format!("{FILE}:"))
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|l| l.parse().ok())
        .unwrap();
    assert!(
        notice
            .trim_start()
            .starts_with("INFO nowait: suppressed 3 records from "),
        "{notice}"
    );
    assert_eq!(json_notices(&json.take(), &format!("{FILE}:{line}")), 3);
    line
}
