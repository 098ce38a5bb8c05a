//! The `log` front end: exact text and JSON output with targets and typed
//! key-values, hostile messages, panicking `Display`, level filters, and
//! the global install (one per process, so in one test).

use std::fmt;

use log::Log;
use nowait_core::format::{Json, Text};
use nowait_core::{Builder, Logger, Sink};
use nowait_log::NowaitLogger;
use nowait_testkit::{text_and_json, MemoryWriter, TextAndJson};

fn logger(text: &MemoryWriter, json: &MemoryWriter) -> (Logger, nowait_core::Guard) {
    Builder::new()
        .catch_panics(false)
        .flush_on_exit(false)
        .sink(Sink::writer(text.clone()).format(Text::new().ansi(false).with_time(false)))
        .sink(Sink::writer(json.clone()).format(Json::nowait_schema()))
        .build()
        .unwrap()
}

struct Panics;
impl fmt::Display for Panics {
    fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        panic!("Display of Panics")
    }
}

fn json_tail(line: &str) -> &str {
    &line[43..]
}

#[test]
fn records_with_targets_and_key_values_exact() {
    let (text, json) = (MemoryWriter::default(), MemoryWriter::default());
    let (logger, _guard) = logger(&text, &json);
    let log = NowaitLogger::new(logger.clone());
    let peer = String::from("10.0.0.7");
    let kvs: &[(&str, log::kv::Value<'_>)] = &[
        ("peer", log::kv::Value::from(peer.as_str())),
        ("bytes", log::kv::Value::from(512u64)),
        ("delta", log::kv::Value::from(-3i64)),
        ("ratio", log::kv::Value::from(0.25f64)),
        ("tls", log::kv::Value::from(true)),
        (
            "addr",
            log::kv::Value::from_display(&std::net::Ipv4Addr::LOCALHOST),
        ),
    ];
    log.log(
        &log::Record::builder()
            .level(log::Level::Info)
            .target("hyper::proto")
            .args(format_args!("connection closed"))
            .key_values(&kvs)
            .build(),
    );
    log.log(
        &log::Record::builder()
            .level(log::Level::Warn)
            .target("app")
            .args(format_args!("retry {} of {}", 2, 5))
            .build(),
    );
    logger.flush().unwrap();
    assert_eq!(
        text.take(),
        concat!(
            " INFO hyper::proto: connection closed peer=\"10.0.0.7\" bytes=512 delta=-3 ratio=0.25 tls=true addr=127.0.0.1\n",
            " WARN app: retry 2 of 5\n"
        )
    );
    let json = json.take();
    let lines: Vec<&str> = json.lines().collect();
    assert_eq!(
        json_tail(lines[0]),
        r#""level":"INFO","target":"hyper::proto","message":"connection closed","fields":{"peer":"10.0.0.7","bytes":512,"delta":-3,"ratio":0.25,"tls":true,"addr":"127.0.0.1"},"spans":[]}"#
    );
    assert_eq!(
        json_tail(lines[1]),
        r#""level":"WARN","target":"app","message":"retry 2 of 5","fields":{},"spans":[]}"#
    );

    // The default JSON layout (tracing-subscriber's), with the thread and
    // the source location, which the front end records because a format
    // asks for them; a text sink that does not ask shows neither.
    let (fmt_json, located, plain) = (
        MemoryWriter::default(),
        MemoryWriter::default(),
        MemoryWriter::default(),
    );
    let (logger, _guard) = Builder::new()
        .catch_panics(false)
        .flush_on_exit(false)
        .sink(
            Sink::writer(fmt_json.clone()).format(
                Json::new()
                    .without_time()
                    .with_thread_names(true)
                    .with_file(true)
                    .with_line_number(true),
            ),
        )
        .sink(
            Sink::writer(located.clone()).format(
                Text::new()
                    .without_time()
                    .with_ansi(false)
                    .with_file(true)
                    .with_line_number(true),
            ),
        )
        .sink(Sink::writer(plain.clone()).format(Text::new().without_time().with_ansi(false)))
        .build()
        .unwrap();
    assert!(
        nowait_core::__private::logger::records_thread(&logger)
            && nowait_core::__private::logger::records_location(&logger)
    );
    let log = NowaitLogger::new(logger.clone());
    log.log(
        &log::Record::builder()
            .level(log::Level::Info)
            .target("hyper::proto")
            .file(Some("src/proto.rs"))
            .line(Some(42))
            .args(format_args!("connection closed"))
            .key_values(&kvs)
            .build(),
    );
    logger.flush().unwrap();
    assert_eq!(
        fmt_json.take(),
        concat!(
            r#"{"level":"INFO","fields":{"message":"connection closed","peer":"10.0.0.7","bytes":512,"#,
            r#""delta":-3,"ratio":0.25,"tls":true,"addr":"127.0.0.1"},"target":"hyper::proto","#,
            r#""filename":"src/proto.rs","line_number":42,"#,
            r#""threadName":"records_with_targets_and_key_values_exact"}"#,
            "\n"
        )
    );
    let fields = "peer=\"10.0.0.7\" bytes=512 delta=-3 ratio=0.25 tls=true addr=127.0.0.1\n";
    assert_eq!(
        located.take(),
        format!(" INFO hyper::proto: src/proto.rs:42: connection closed {fields}")
    );
    assert_eq!(
        plain.take(),
        format!(" INFO hyper::proto: connection closed {fields}")
    );
}

#[test]
fn hostile_message_and_values_stay_on_one_line() {
    let (text, json) = (MemoryWriter::default(), MemoryWriter::default());
    let (logger, _guard) = logger(&text, &json);
    let log = NowaitLogger::new(logger.clone());
    let evil = "x\r\n ERROR forged\x1b[2J\u{9b}";
    let kvs: &[(&str, &str)] = &[("user", evil)];
    log.log(
        &log::Record::builder()
            .level(log::Level::Info)
            .target("auth\nforged")
            .args(format_args!("login {evil}"))
            .key_values(&kvs)
            .build(),
    );
    logger.flush().unwrap();
    assert_eq!(
        text.take(),
        " INFO auth\\nforged: login x\\r\\n ERROR forged\\x1b[2J\\u{9b} \
         user=\"x\\r\\n ERROR forged\\u{1b}[2J\\u{9b}\"\n"
    );
    let json = json.take();
    assert_eq!(json.lines().count(), 1);
    assert_eq!(
        json_tail(&json),
        "\"level\":\"INFO\",\"target\":\"auth\\nforged\",\"message\":\"login x\\r\\n ERROR forged\\u001b[2J\\u009b\",\
         \"fields\":{\"user\":\"x\\r\\n ERROR forged\\u001b[2J\\u009b\"},\"spans\":[]}\n"
    );
}

#[test]
fn panicking_display_discards_and_counts() {
    let (text, json) = (MemoryWriter::default(), MemoryWriter::default());
    let (logger, _guard) = logger(&text, &json);
    let log = NowaitLogger::new(logger.clone());
    log.log(
        &log::Record::builder()
            .level(log::Level::Info)
            .args(format_args!("boom {}", Panics))
            .build(),
    );
    let kvs: &[(&str, log::kv::Value<'_>)] = &[("bad", log::kv::Value::from_display(&Panics))];
    log.log(
        &log::Record::builder()
            .level(log::Level::Info)
            .args(format_args!("kv boom"))
            .key_values(&kvs)
            .build(),
    );
    logger.flush().unwrap();
    assert_eq!(logger.stats().discarded, 2);
    let text = text.take();
    assert!(!text.contains("boom"), "{text:?}");
    assert!(
        text.starts_with(" WARN nowait: 2 records dropped (discarded by the front end"),
        "{text:?}"
    );
}

#[test]
fn oversized_record_is_cut_not_dropped() {
    let TextAndJson {
        logger,
        guard: _guard,
        text,
        json,
    } = text_and_json(Builder::new().capacity(4096), Json::nowait_schema());
    let log = NowaitLogger::new(logger.clone());
    let body = "x".repeat(10 * 1024);
    let kvs: &[(&str, log::kv::Value<'_>)] = &[
        ("body", log::kv::Value::from(body.as_str())),
        ("status", log::kv::Value::from(413u64)),
    ];
    log.log(
        &log::Record::builder()
            .level(log::Level::Warn)
            .target("upload")
            .args(format_args!("too big"))
            .key_values(&kvs)
            .build(),
    );
    let (text, cut) = nowait_testkit::take_cut(&logger, &text);
    assert_eq!(
        text,
        format!(" WARN upload: too big body=\"{cut}\" status=413\n")
    );
    let json = json.take();
    assert_eq!(
        json_tail(&json),
        format!(
            "\"level\":\"WARN\",\"target\":\"upload\",\"message\":\"too big\",\
             \"fields\":{{\"body\":\"{cut}\",\"status\":413}},\"spans\":[]}}\n"
        )
    );
}

#[test]
fn line_separators_are_escaped_in_text() {
    let (text, json) = (MemoryWriter::default(), MemoryWriter::default());
    let (logger, _guard) = logger(&text, &json);
    let log = NowaitLogger::new(logger.clone());
    let kvs: &[(&str, log::kv::Value<'_>)] = &[
        ("s", log::kv::Value::from("a\u{2028}")),
        ("d", log::kv::Value::from_display(&"b\u{2029}")),
    ];
    log.log(
        &log::Record::builder()
            .level(log::Level::Info)
            .target("t")
            .args(format_args!("m\u{2028}{}", 1))
            .key_values(&kvs)
            .build(),
    );
    logger.flush().unwrap();
    assert_eq!(
        text.take(),
        concat!(r#" INFO t: m\u{2028}1 s="a\u{2028}" d=b\u{2029}"#, "\n")
    );
    assert!(json
        .take()
        .contains(r#""message":"m\u20281","fields":{"s":"a\u2028","d":"b\u2029"}"#));
}

#[test]
fn level_filter_and_global_install() {
    let (text, json) = (MemoryWriter::default(), MemoryWriter::default());
    let (logger, _guard) = logger(&text, &json);
    nowait_log::init_with_level(logger.clone(), log::LevelFilter::Info).unwrap();
    assert!(
        nowait_log::init(logger.clone()).is_err(),
        "one logger per process"
    );
    log::debug!("filtered");
    log::info!(target: "db", rows = 3; "query done");
    log::error!("failed: {}", "disk full");
    log::logger().flush();
    assert_eq!(
        text.take(),
        " INFO db: query done rows=3\nERROR log: failed: disk full\n"
    );
}
