//! nowait's own macros through the global logger: exact text and JSON
//! output, deferred and caller-rendered messages, fields, levels, panicking
//! and self-logging `Display` impls.
//!
//! One process-wide logger, so everything runs in one test.

use std::fmt;

use nowait_core::format::{Json, Text};
use nowait_core::{debug, error, event, info, trace, warn, Builder, Level, Sink};
use nowait_testkit::MemoryWriter;

struct Panics;
impl fmt::Display for Panics {
    fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        panic!("Display of Panics")
    }
}

struct LogsItself;
impl fmt::Display for LogsItself {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        info!("inner {}", 1);
        f.write_str("outer-value")
    }
}

#[derive(Debug)]
#[allow(dead_code)]
struct Point {
    x: i32,
    y: i32,
}

/// Drops the 27-byte timestamp and the space after it.
fn strip_times(text: &str) -> Vec<String> {
    text.lines()
        .map(|l| {
            assert_eq!(&l[4..5], "-", "line starts with a timestamp: {l:?}");
            assert_eq!(&l[26..27], "Z", "line starts with a timestamp: {l:?}");
            l[28..].to_owned()
        })
        .collect()
}

#[test]
fn macros_render_exactly() {
    // Before a global logger exists, macros are disabled and cost nothing.
    info!("dropped on the floor {}", 1);

    let text = MemoryWriter::default();
    let json = MemoryWriter::default();
    let old_json = MemoryWriter::default();
    let (logger, _guard) = Builder::new()
        .catch_panics(false)
        .flush_on_exit(false)
        .sink(Sink::writer(text.clone()).format(Text::new().ansi(false)))
        .sink(Sink::writer(json.clone()).format(Json::new().with_file(true).with_line_number(true)))
        .sink(Sink::writer(old_json.clone()).format(Json::nowait_schema()))
        .build()
        .unwrap();
    nowait_core::set_global(logger.clone()).unwrap();

    let path = "/index.html";
    let owned = String::from("owned");
    info!("GET {} {} {}us", path, 200u16, 41.5);
    warn!(target: "db", millis = 812u64, table = "users", "slow query");
    error!(code = -3i32, ok = false, c = 'x');
    debug!(
        "hex {:#06x} pad [{:>5}] prec {:.2} dbg {:?} {}",
        255u32,
        "ab",
        2.0f64 / 3.0,
        "q\"",
        owned
    );
    trace!("captured {path}");
    info!("point {:?}", Point { x: 1, y: -2 });
    info!(p = ?Point { x: 3, y: 4 }, d = %path, "fields");
    let (status, peer) = (204u16, Point { x: 5, y: 6 });
    info!(status, ?peer, %path);
    // Hostile values cannot forge lines or escapes.
    let evil = "a\nINFO forged\x1b[31m\r";
    info!(user = evil, "login {}", evil);
    event!(Level::Info, "evaluated once: {}", {
        static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        N.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1
    });

    // A panicking Display discards the event and counts it.
    let before = logger.stats().discarded;
    info!("boom {}", Panics);
    assert_eq!(logger.stats().discarded, before + 1);
    // A Display that logs does not deadlock; both events are written.
    info!("outer {}", LogsItself);

    // Level filter.
    nowait_core::filter::set_max_level(Level::Warn);
    info!("filtered out");
    warn!("kept");
    nowait_core::filter::set_max_level(Level::Trace);

    logger.flush().unwrap();
    let all = strip_times(&text.take());
    let (notices, lines): (Vec<String>, Vec<String>) = all
        .into_iter()
        .partition(|l| l.starts_with(" WARN nowait: "));
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].starts_with(" WARN nowait: 1 record dropped (discarded by the front end"),
        "{notices:?}"
    );
    let want = [
        " INFO macros: GET /index.html 200 41.5us",
        " WARN db: slow query millis=812 table=\"users\"",
        "ERROR macros: code=-3 ok=false c='x'",
        "DEBUG macros: hex 0x00ff pad [   ab] prec 0.67 dbg \"q\\\"\" owned",
        "TRACE macros: captured /index.html",
        " INFO macros: point Point { x: 1, y: -2 }",
        " INFO macros: fields p=Point { x: 3, y: 4 } d=/index.html",
        " INFO macros: status=204 peer=Point { x: 5, y: 6 } path=/index.html",
        " INFO macros: login a\\nINFO forged\\x1b[31m\\r user=\"a\\nINFO forged\\u{1b}[31m\\r\"",
        " INFO macros: evaluated once: 1",
        " INFO macros: inner 1",
        " INFO macros: outer outer-value",
        " WARN macros: kept",
    ];
    assert_eq!(lines, want);

    let json = json.take();
    let json: Vec<&str> = json
        .lines()
        .filter(|l| !l.contains(r#""target":"nowait""#))
        .collect();
    assert_eq!(json.len(), want.len());
    assert_eq!(
        &json[1][43..],
        r#""level":"WARN","fields":{"message":"slow query","millis":812,"table":"users"},"target":"db","filename":"crates/nowait-core/tests/macros.rs","line_number":67}"#
    );
    assert_eq!(
        &json[8][43..],
        r#""level":"INFO","fields":{"message":"login a\nINFO forged\u001b[31m\r","user":"a\nINFO forged\u001b[31m\r"},"target":"macros","filename":"crates/nowait-core/tests/macros.rs","line_number":84}"#
    );
    let old_json = old_json.take();
    let old_json: Vec<&str> = old_json
        .lines()
        .filter(|l| !l.contains(r#""target":"nowait""#))
        .collect();
    assert_eq!(
        &old_json[1][43..],
        r#""level":"WARN","target":"db","message":"slow query","fields":{"millis":812,"table":"users"},"spans":[]}"#
    );
    assert_eq!(
        &old_json[8][43..],
        r#""level":"INFO","target":"macros","message":"login a\nINFO forged\u001b[31m\r","fields":{"user":"a\nINFO forged\u001b[31m\r"},"spans":[]}"#
    );
    assert!(json[0].starts_with(r#"{"timestamp":"20"#));
}
