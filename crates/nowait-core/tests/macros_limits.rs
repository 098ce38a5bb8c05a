//! nowait's macros at the edges: an event larger than a record is written
//! cut and marked instead of dropped, U+2028/U+2029 are escaped in text,
//! and logging from a thread-local destructor does not panic.
//!
//! One process-wide logger, so everything runs in one test.

use nowait_core::format::Json;
use nowait_core::{info, warn, Builder, Level, Logger};
use nowait_testkit::{text_and_json, MemoryWriter, TextAndJson};

#[test]
fn macros_at_the_limits() {
    let TextAndJson {
        logger,
        guard: _guard,
        text,
        json,
    } = text_and_json(Builder::new().capacity(4096), Json::new());
    nowait_core::set_global(logger.clone()).unwrap();

    oversized_event_is_cut_not_dropped(&logger, &text, &json);
    line_separators_are_escaped_in_text(&logger, &text, &json);
    logging_from_a_thread_local_destructor(&logger, &text);
}

fn oversized_event_is_cut_not_dropped(logger: &Logger, text: &MemoryWriter, json: &MemoryWriter) {
    let body = "x".repeat(10 * 1024);
    warn!(body = body.as_str(), status = 413u16, "upload {}", 7);
    let (text, cut) = nowait_testkit::take_cut(logger, text);
    assert_eq!(
        text,
        format!(" WARN macros_limits: upload 7 body=\"{cut}\" status=413\n")
    );
    let json = json.take();
    assert_eq!(json.lines().count(), 1);
    assert!(json.starts_with(r#"{"timestamp":"20"#), "{json}");
    assert!(
        json.ends_with(&format!(
            r#""level":"WARN","fields":{{"message":"upload 7","body":"{cut}","status":413}},"target":"macros_limits"}}
"#
        )),
        "{json}"
    );
}

fn line_separators_are_escaped_in_text(logger: &Logger, text: &MemoryWriter, json: &MemoryWriter) {
    let user = "a\u{2028}b";
    let shown = "c\u{2029}d";
    info!(user, %shown, "line\u{2028}break {}", "e\u{2029}f");
    logger.log(Level::Info, "text\u{2028}line").unwrap();
    logger.flush().unwrap();
    assert_eq!(
        text.take(),
        concat!(
            r#" INFO macros_limits: line\u{2028}break e\u{2029}f user="a\u{2028}b" shown=c\u{2029}d"#,
            "\n",
            r"text\u{2028}line",
            "\n",
        )
    );
    let json = json.take();
    assert!(
        json.contains(r#""fields":{"message":"text\u2028line"},"target":""}"#),
        "{json}"
    );
    assert!(
        json.contains(r#""fields":{"message":"line\u2028break e\u2029f","user":"a\u2028b","shown":"c\u2029d"}"#),
        "{json}"
    );
}

/// Logs from its destructor.
struct LogsOnDrop(&'static str);

impl Drop for LogsOnDrop {
    fn drop(&mut self) {
        info!(
            big = "y".repeat(5000).as_str(),
            "from a TLS destructor {}", self.0
        );
    }
}

thread_local! {
    static FIRST: LogsOnDrop = const { LogsOnDrop("first") };
    static LAST: LogsOnDrop = const { LogsOnDrop("last") };
}

/// Thread-local destructors run in reverse order of first use: `LAST`'s
/// while the thread's event buffer still exists, `FIRST`'s after it was
/// destroyed (the macro then encodes into a fresh buffer).
fn logging_from_a_thread_local_destructor(logger: &Logger, text: &MemoryWriter) {
    std::thread::spawn(|| {
        FIRST.with(|_| {});
        info!("thread body");
        LAST.with(|_| {});
    })
    .join()
    .expect("no panic, in the thread or its destructors");
    logger.flush().unwrap();
    let text = text.take();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert_eq!(lines[0], " INFO macros_limits: thread body");
    for (line, which) in lines[1..].iter().zip(["last", "first"]) {
        let head = format!(" INFO macros_limits: from a TLS destructor {which} big=\"yyy");
        assert!(line.starts_with(&head), "{line}");
        assert!(
            line.ends_with(&format!("y{}\"", nowait_testkit::CUT_MARK)),
            "{line}"
        );
    }
    assert_eq!(logger.stats().dropped(), 0);
}
