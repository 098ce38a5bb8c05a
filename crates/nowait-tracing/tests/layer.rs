//! The `tracing` layer: exact output bytes in text and JSON, the same text
//! as `tracing_subscriber::fmt()`, spans, filters, hostile values, panicking
//! `Debug` impls.

use std::fmt;

use nowait_core::format::{Json, Text};
use nowait_core::{Builder, Logger, Sink};
use nowait_testkit::{text_and_json, MemoryWriter, TextAndJson};
use tracing::{info, info_span, warn};
use tracing_subscriber::prelude::*;

fn logger(
    out: &MemoryWriter,
    format: impl nowait_core::format::MakeFormat,
) -> (Logger, nowait_core::Guard) {
    Builder::new()
        .catch_panics(false)
        .flush_on_exit(false)
        .sink(Sink::writer(out.clone()).format(format))
        .build()
        .unwrap()
}

struct PanicsInDebug;
impl fmt::Debug for PanicsInDebug {
    fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        panic!("Debug of PanicsInDebug")
    }
}

/// The workload every comparison below runs.
fn workload() {
    let conn = info_span!("conn", peer = "10.0.0.7", port = 4431u64);
    let _c = conn.enter();
    let req = info_span!("request", id = 42i64);
    let _r = req.enter();
    info!(
        status = 200u64,
        micros = 41.5,
        cached = false,
        "GET {}",
        "/index.html"
    );
    warn!(target: "db", table = "users", "slow query");
    req.record("id", 43i64);
    info!(answer = ?Some(42), "no message args");
    tracing::error!(error = &std::io::Error::other("disk full") as &dyn std::error::Error);
}

/// Runs [`workload`] through `NowaitLayer` with `format` and returns the
/// output after a flush.
fn through_layer(format: impl nowait_core::format::MakeFormat) -> String {
    let out = MemoryWriter::default();
    let (logger, _guard) = logger(&out, format);
    let layer = nowait_tracing::NowaitLayer::new(logger.clone());
    tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), workload);
    logger.flush().unwrap();
    out.take()
}

/// The default options; every combination of the options (text and JSON)
/// is compared in `tests/fmt_parity.rs`.
#[test]
fn text_matches_tracing_subscriber_fmt_byte_for_byte() {
    // tracing-subscriber's own output, without time and colours.
    let theirs = MemoryWriter::default();
    let fmt_layer = tracing_subscriber::fmt::layer()
        .without_time()
        .with_ansi(false)
        .with_writer({
            let theirs = theirs.clone();
            move || theirs.clone()
        });
    tracing::subscriber::with_default(tracing_subscriber::registry().with(fmt_layer), workload);

    let ours = through_layer(Text::new().ansi(false).with_time(false));
    let theirs = theirs.take();
    assert_eq!(theirs.lines().count(), 4);
    assert_eq!(ours, theirs);
}

#[test]
fn text_with_time_exact() {
    let text = through_layer(Text::new().ansi(false));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4);
    for l in &lines {
        // 2026-11-23T03:31:05.648578Z
        assert_eq!(l.as_bytes()[10], b'T');
        assert_eq!(&l[26..28], "Z ");
    }
    assert_eq!(
        &lines[0][28..],
        " INFO conn{peer=\"10.0.0.7\" port=4431}:request{id=42}: layer: GET /index.html status=200 micros=41.5 cached=false"
    );
}

#[test]
fn json_exact() {
    let text = through_layer(Json::new());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4);
    let rest: Vec<&str> = lines.iter().map(|l| &l[43..]).collect();
    let spans =
        r#""spans":[{"peer":"10.0.0.7","port":4431,"name":"conn"},{"id":42,"name":"request"}]"#;
    let spans2 =
        r#""spans":[{"peer":"10.0.0.7","port":4431,"name":"conn"},{"id":43,"name":"request"}]"#;
    assert_eq!(
        rest,
        [
            format!(
                r#""level":"INFO","fields":{{"message":"GET /index.html","status":200,"micros":41.5,"cached":false}},"target":"layer","span":{{"id":42,"name":"request"}},{spans}}}"#
            ),
            format!(
                r#""level":"WARN","fields":{{"message":"slow query","table":"users"}},"target":"db","span":{{"id":42,"name":"request"}},{spans}}}"#
            ),
            format!(
                r#""level":"INFO","fields":{{"message":"no message args","answer":"Some(42)"}},"target":"layer","span":{{"id":43,"name":"request"}},{spans2}}}"#
            ),
            format!(
                r#""level":"ERROR","fields":{{"error":"disk full"}},"target":"layer","span":{{"id":43,"name":"request"}},{spans2}}}"#
            ),
        ]
    );
    assert!(lines[0].starts_with(r#"{"timestamp":"20"#));
}

#[test]
fn json_nowait_schema_exact() {
    let text = through_layer(Json::nowait_schema());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4);
    let rest: Vec<&str> = lines.iter().map(|l| &l[43..]).collect();
    assert_eq!(
        rest,
        [
            r#""level":"INFO","target":"layer","message":"GET /index.html","fields":{"status":200,"micros":41.5,"cached":false},"spans":[{"name":"conn","peer":"10.0.0.7","port":4431},{"name":"request","id":42}]}"#,
            r#""level":"WARN","target":"db","message":"slow query","fields":{"table":"users"},"spans":[{"name":"conn","peer":"10.0.0.7","port":4431},{"name":"request","id":42}]}"#,
            r#""level":"INFO","target":"layer","message":"no message args","fields":{"answer":"Some(42)"},"spans":[{"name":"conn","peer":"10.0.0.7","port":4431},{"name":"request","id":42,"id":43}]}"#,
            r#""level":"ERROR","target":"layer","message":"","fields":{"error":"disk full"},"spans":[{"name":"conn","peer":"10.0.0.7","port":4431},{"name":"request","id":42,"id":43}]}"#,
        ]
    );
    assert!(lines[0].starts_with(r#"{"timestamp":"20"#));
}

#[test]
fn composes_with_env_filter_and_per_layer_filters() {
    let out = MemoryWriter::default();
    let (logger, _guard) = logger(&out, Text::new().ansi(false).with_time(false));
    let layer = nowait_tracing::NowaitLayer::new(logger.clone())
        .with_filter(tracing_subscriber::filter::LevelFilter::WARN);
    let subscriber = tracing_subscriber::registry()
        .with(tracing_subscriber::EnvFilter::new("info,noisy=error"))
        .with(layer);
    tracing::subscriber::with_default(subscriber, || {
        tracing::debug!("debug: filtered by both");
        info!("info: filtered by the per-layer filter");
        warn!(target: "noisy", "warn: filtered by EnvFilter");
        warn!("kept");
    });
    logger.flush().unwrap();
    assert_eq!(out.take(), " WARN layer: kept\n");
}

#[test]
fn hostile_values_stay_on_one_line() {
    let TextAndJson {
        logger,
        guard: _guard,
        text: out,
        json,
    } = text_and_json(Builder::new(), Json::new());
    let layer = nowait_tracing::NowaitLayer::new(logger.clone());
    tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), || {
        let evil = "x\n2026-01-01T00:00:00.000000Z ERROR forged\x1b]0;pwned\x07\u{9b}2J";
        info!(user = evil, dbg = ?evil, "login {}", evil);
    });
    logger.flush().unwrap();
    assert_eq!(
        out.take(),
        " INFO layer: login x\\n2026-01-01T00:00:00.000000Z ERROR forged\\x1b]0;pwned\\x07\\u{9b}2J \
         user=\"x\\n2026-01-01T00:00:00.000000Z ERROR forged\\u{1b}]0;pwned\\u{7}\\u{9b}2J\" \
         dbg=\"x\\n2026-01-01T00:00:00.000000Z ERROR forged\\u{1b}]0;pwned\\u{7}\\u{9b}2J\"\n"
    );
    let json = json.take();
    assert_eq!(json.lines().count(), 1);
    assert!(json.contains(r#""message":"login x\n2026-01-01T00:00:00.000000Z ERROR forged\u001b]0;pwned\u0007\u009b2J""#));
}

#[test]
fn panicking_debug_discards_the_event_and_counts_it() {
    let out = MemoryWriter::default();
    let (logger, _guard) = logger(&out, Text::new().ansi(false).with_time(false));
    let layer = nowait_tracing::NowaitLayer::new(logger.clone());
    tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), || {
        info!(bad = ?PanicsInDebug, "never written");
        info!("after");
    });
    logger.flush().unwrap();
    assert_eq!(logger.stats().discarded, 1);
    let text = out.take();
    // The loss notice and the next event, in either order (the notice is
    // written when the writer notices the count, at the latest on flush).
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort();
    assert_eq!(lines.len(), 2, "{text:?}");
    assert_eq!(lines[0], " INFO layer: after");
    assert!(
        lines[1].starts_with(" WARN nowait: 1 record dropped (discarded by the front end"),
        "the loss is reported in the output: {text:?}"
    );
    assert!(!text.contains("never written"));
}

/// A span field whose `Debug` panics, at creation or in `Span::record`,
/// does not unwind into the caller, is counted like an event's, and the
/// span stays usable.
#[test]
fn panicking_debug_in_span_fields_is_counted_and_contained() {
    let out = MemoryWriter::default();
    let (logger, _guard) = logger(&out, Text::new().ansi(false).with_time(false));
    let layer = nowait_tracing::NowaitLayer::new(logger.clone());
    tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), || {
        let span = tracing::info_span!("req", bad = ?PanicsInDebug, late = tracing::field::Empty);
        span.record("late", tracing::field::debug(PanicsInDebug));
        let _entered = span.enter();
        info!("inside");
    });
    logger.flush().unwrap();
    assert_eq!(logger.stats().discarded, 2);
    let text = out.take();
    assert!(
        text.lines()
            .any(|l| l.contains("req") && l.ends_with("layer: inside")),
        "{text:?}"
    );
}

/// A logger whose records may be at most 2040 bytes, with text (without
/// time) and JSON sinks.
fn small_logger(text: &MemoryWriter, json: &MemoryWriter) -> (Logger, nowait_core::Guard) {
    Builder::new()
        .capacity(4096)
        .catch_panics(false)
        .flush_on_exit(false)
        .sink(Sink::writer(text.clone()).format(Text::new().ansi(false).with_time(false)))
        .sink(Sink::writer(json.clone()).format(Json::new()))
        .build()
        .unwrap()
}

#[test]
fn oversized_event_is_cut_not_dropped() {
    let (text, json) = (MemoryWriter::default(), MemoryWriter::default());
    let (logger, _guard) = small_logger(&text, &json);
    let layer = nowait_tracing::NowaitLayer::new(logger.clone());
    let body = "x".repeat(10 * 1024);
    tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), || {
        let _s = info_span!("req", id = 7u64).entered();
        warn!(body = body.as_str(), status = 413u64, "upload");
    });
    let (text, cut) = nowait_testkit::take_cut(&logger, &text);
    assert_eq!(
        text,
        format!(" WARN req{{id=7}}: layer: upload body=\"{cut}\" status=413\n")
    );
    let json = json.take();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["fields"]["message"], "upload");
    assert_eq!(v["fields"]["body"], cut.as_str());
    assert_eq!(v["fields"]["status"], 413);
    assert_eq!(v["spans"][0]["id"], 7);
}

#[test]
fn line_separators_are_escaped_in_text() {
    let (text, json) = (MemoryWriter::default(), MemoryWriter::default());
    let (logger, _guard) = small_logger(&text, &json);
    let layer = nowait_tracing::NowaitLayer::new(logger.clone());
    tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), || {
        let _s = info_span!("sep\u{2029}", s = "a\u{2028}", d = %"b\u{2029}").entered();
        info!(f = "c\u{2029}", p = %"d\u{2028}", q = ?"e\u{2029}", "m\u{2028}{}", "x");
    });
    logger.flush().unwrap();
    assert_eq!(
        text.take(),
        concat!(
            r#" INFO sep\u{2029}{s="a\u{2028}" d=b\u{2029}}: layer: m\u{2028}x f="c\u{2029}" p=d\u{2028} q="e\u{2029}""#,
            "\n"
        )
    );
    let v: serde_json::Value = serde_json::from_str(&json.take()).unwrap();
    assert_eq!(v["fields"]["message"], "m\u{2028}x");
    assert_eq!(v["fields"]["p"], "d\u{2028}");
}

mod prop {
    use super::*;
    use proptest::prelude::*;

    /// `got` is `want`, or a prefix of it followed by the mark.
    fn whole_or_cut(got: &str, want: &str) -> bool {
        got == want
            || got
                .strip_suffix(nowait_testkit::CUT_MARK)
                .is_some_and(|p| want.starts_with(p))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 2 } else { 64 }))]
        /// Random events, mostly larger than a record: always written as one
        /// line of valid JSON whose values are whole or cut and marked.
        #[test]
        fn oversized_events_are_written_cut(
            a in proptest::collection::vec(any::<char>(), 0..3000),
            b in proptest::collection::vec(any::<char>(), 0..3000),
            m in proptest::collection::vec(any::<char>(), 0..3000),
            n in any::<u64>(),
        ) {
            let (a, b, m): (String, String, String) =
                (a.into_iter().collect(), b.into_iter().collect(), m.into_iter().collect());
            let (text, json) = (MemoryWriter::default(), MemoryWriter::default());
            let (logger, _guard) = small_logger(&text, &json);
            let layer = nowait_tracing::NowaitLayer::new(logger.clone());
            tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), || {
                let _s = info_span!("s", a = a.as_str()).entered();
                info!(b = ?b, n, "{}", m);
            });
            logger.flush().unwrap();
            prop_assert_eq!(logger.stats().dropped(), 0);
            prop_assert_eq!(text.take().matches('\n').count(), 1);
            let json = json.take();
            prop_assert_eq!(json.matches('\n').count(), 1);
            let v: serde_json::Value = serde_json::from_str(&json).unwrap();
            prop_assert!(whole_or_cut(v["fields"]["message"].as_str().unwrap(), &m));
            prop_assert!(whole_or_cut(v["spans"][0]["a"].as_str().unwrap(), &a));
            let b_dbg = format!("{:?}", b);
            prop_assert!(whole_or_cut(v["fields"]["b"].as_str().unwrap(), &b_dbg));
            prop_assert_eq!(v["fields"]["n"].as_u64(), Some(n));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(if cfg!(miri) { 4 } else { 256 }))]
        /// Any string, as message, string field or Debug field: exactly one
        /// line out, free of control characters, in text and JSON; and the
        /// JSON line parses back to the same strings.
        #[test]
        fn one_record_one_line(s in any::<String>(), bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let lossy = String::from_utf8_lossy(&bytes).into_owned();
            let out = MemoryWriter::default();
            let json = MemoryWriter::default();
            let old = MemoryWriter::default();
            let (logger, _guard) = Builder::new()
                .catch_panics(false)
                .flush_on_exit(false)
                .sink(Sink::writer(out.clone()).format(Text::new().ansi(true)))
                .sink(Sink::writer(json.clone()).format(Json::new()))
                .sink(Sink::writer(old.clone()).format(Json::nowait_schema()))
                .build()
                .unwrap();
            let layer = nowait_tracing::NowaitLayer::new(logger.clone());
            tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), || {
                info!(f = s.as_str(), d = ?lossy, "{}", s);
            });
            logger.flush().unwrap();
            let text = out.take();
            prop_assert_eq!(text.matches('\n').count(), 1);
            prop_assert!(text.ends_with('\n'));
            // Only our own colour codes may contain ESC.
            let no_sgr = text
                .replace("\x1b[0m", "")
                .replace("\x1b[1m", "")
                .replace("\x1b[2m", "")
                .replace("\x1b[3m", "")
                .replace("\x1b[32m", "");
            prop_assert!(!no_sgr[..no_sgr.len() - 1].chars().any(char::is_control), "{:?}", text);
            let json = json.take();
            prop_assert_eq!(json.matches('\n').count(), 1);
            prop_assert!(!json[..json.len() - 1].chars().any(char::is_control));
            let v: serde_json::Value = serde_json::from_str(&json).unwrap();
            prop_assert_eq!(v["fields"]["message"].as_str().unwrap(), s.as_str());
            prop_assert_eq!(v["fields"]["f"].as_str().unwrap(), s.as_str());
            prop_assert_eq!(v["fields"]["d"].as_str().unwrap(), format!("{:?}", lossy));
            let old = old.take();
            prop_assert_eq!(old.matches('\n').count(), 1);
            prop_assert!(!old[..old.len() - 1].chars().any(char::is_control));
            let v: serde_json::Value = serde_json::from_str(&old).unwrap();
            prop_assert_eq!(v["message"].as_str().unwrap(), s.as_str());
            prop_assert_eq!(v["fields"]["f"].as_str().unwrap(), s.as_str());
        }
    }
}

/// A `Debug` impl that logs through `tracing` while its own event is being
/// encoded: no deadlock, no panic, the outer event written. (The inner one
/// never reaches any subscriber: `tracing` does not re-enter the
/// dispatcher from inside a subscriber call, so it is `tracing`, not
/// nowait, that drops it.)
#[test]
fn debug_that_logs_does_not_deadlock() {
    struct LogsItself;
    impl fmt::Debug for LogsItself {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            info!(depth = 2u64, "inner");
            f.write_str("outer-value")
        }
    }
    let out = MemoryWriter::default();
    let (logger, _guard) = logger(&out, Text::new().ansi(false).with_time(false));
    let layer = nowait_tracing::NowaitLayer::new(logger.clone());
    tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), || {
        info!(v = ?LogsItself, "outer");
    });
    logger.flush().unwrap();
    assert_eq!(out.take(), " INFO layer: outer v=outer-value\n");
    assert_eq!(logger.stats().discarded, 0);
}

/// A thread name is untrusted too: escaped in text and JSON, one line.
#[test]
fn hostile_thread_names_stay_on_one_line() {
    let (out, json) = (MemoryWriter::default(), MemoryWriter::default());
    let (logger, _guard) = Builder::new()
        .catch_panics(false)
        .flush_on_exit(false)
        .sink(
            Sink::writer(out.clone()).format(
                Text::new()
                    .with_ansi(false)
                    .without_time()
                    .with_thread_names(true),
            ),
        )
        .sink(Sink::writer(json.clone()).format(Json::new().without_time().with_thread_names(true)))
        .build()
        .unwrap();
    let dispatch = tracing::Dispatch::new(
        tracing_subscriber::registry().with(nowait_tracing::NowaitLayer::new(logger.clone())),
    );
    std::thread::Builder::new()
        .name("evil\n\x1b[31m\u{2028}".into())
        .spawn(move || tracing::dispatcher::with_default(&dispatch, || info!("hi")))
        .unwrap()
        .join()
        .unwrap();
    logger.flush().unwrap();
    assert_eq!(out.take(), " INFO evil\\n\\x1b[31m\\u{2028} layer: hi\n");
    assert_eq!(
        json.take(),
        "{\"level\":\"INFO\",\"fields\":{\"message\":\"hi\"},\"target\":\"layer\",\
         \"threadName\":\"evil\\n\\u001b[31m\\u2028\"}\n"
    );
}

/// Per-sink levels behind the layer, with EnvFilter in front.
#[test]
fn sink_levels_and_env_filter() {
    use nowait_core::Level;
    let (all, warn) = (MemoryWriter::default(), MemoryWriter::default());
    let (logger, _guard) = Builder::new()
        .catch_panics(false)
        .flush_on_exit(false)
        .sink(
            Sink::writer(all.clone())
                .format(Text::new().ansi(false).with_time(false))
                .level(Level::Debug),
        )
        .sink(
            Sink::writer(warn.clone())
                .format(Text::new().ansi(false).with_time(false))
                .level(Level::Warn),
        )
        .build()
        .unwrap();
    let layer = nowait_tracing::NowaitLayer::new(logger.clone());
    assert_eq!(
        tracing_subscriber::Layer::<tracing_subscriber::Registry>::max_level_hint(&layer),
        Some(tracing_core::LevelFilter::DEBUG)
    );
    let subscriber = tracing_subscriber::registry()
        .with(tracing_subscriber::EnvFilter::new("info,app::db=trace"))
        .with(layer);
    tracing::subscriber::with_default(subscriber, || {
        tracing::trace!(target: "app::db", "below every sink");
        tracing::debug!(target: "app::db", "debug db");
        tracing::debug!(target: "app::http", "off by EnvFilter");
        info!(target: "app::http", "info http");
        warn!(target: "app::http", "warn http");
    });
    logger.flush().unwrap();
    assert_eq!(
        all.take(),
        "DEBUG app::db: debug db\n INFO app::http: info http\n WARN app::http: warn http\n"
    );
    assert_eq!(warn.take(), " WARN app::http: warn http\n");
    let stats = logger.stats();
    assert_eq!(stats.records_written, 3, "the TRACE event was not pushed");
    assert_eq!(stats.sinks[1].filtered, 2);
}

/// A writer that holds every write until [`Gate::open`].
#[derive(Clone, Default)]
struct Gate {
    open: std::sync::Arc<(std::sync::Mutex<bool>, std::sync::Condvar)>,
    out: MemoryWriter,
}

impl Gate {
    fn open(&self) {
        *self.open.0.lock().unwrap() = true;
        self.open.1.notify_all();
    }
}

impl std::io::Write for Gate {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut open = self.open.0.lock().unwrap();
        while !*open {
            open = self.open.1.wait(open).unwrap();
        }
        drop(open);
        self.out.write(buf)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
    }
}

/// With the ring full while the writer is stalled, and some events'
/// `Debug` panicking, every event the layer was handed is either written
/// whole or counted (dropped or discarded): none lost, none twice.
#[test]
fn full_ring_and_panicking_debug_account_for_every_event() {
    let gate = Gate::default();
    let (logger, _guard) = Builder::new()
        .capacity(4096)
        .lanes(0)
        .full_policy(nowait_core::FullPolicy::Drop)
        .catch_panics(false)
        .flush_on_exit(false)
        .sink(Sink::writer(gate.clone()).format(Text::new().ansi(false).with_time(false)))
        .build()
        .unwrap();
    let layer = nowait_tracing::NowaitLayer::new(logger.clone());
    let n = if cfg!(miri) { 100 } else { 500 };
    tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), || {
        for i in 0..n {
            if i % 7 == 3 {
                info!(bad = ?PanicsInDebug, i, "event");
            } else {
                info!(pad = "p".repeat(40), i, "event");
            }
        }
    });
    gate.open();
    logger.flush().unwrap();
    let stats = logger.stats();
    let text = gate.out.take();
    let written = text.lines().filter(|l| l.contains("layer: event")).count() as u64;
    assert_eq!(
        stats.discarded,
        (0..n).filter(|i| i % 7 == 3).count() as u64
    );
    assert!(
        stats.dropped_shed + stats.dropped_full > 0,
        "the ring filled up: {stats:?}"
    );
    // `dropped()` includes the discarded events.
    assert_eq!(written + stats.dropped(), n as u64, "{stats:?}");
    let whole = format!("layer: event pad=\"{}\" i=", "p".repeat(40));
    assert!(
        text.lines()
            .filter(|l| l.contains("layer: event"))
            .all(|l| l.starts_with(" INFO ") && l.contains(&whole)),
        "{text:?}"
    );
}
