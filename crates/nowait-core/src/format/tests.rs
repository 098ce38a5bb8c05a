//! Tests across every format, and the seeded generators that these and
//! other modules' tests share.
//!
//! * Strings a recovered catalog hands the formats, and bidirectional
//!   formatting characters anywhere in an event, reach no output raw
//!   ([`unescaped_at`] finds none).
//! * [`test_rng`] and [`random_event`] are deterministic: one fixed seed,
//!   so a failing case is the same on every run.

use super::*;
use crate::event::Callsite;

/// Tests only: a seeded xorshift generator; `next(n)` is in `0..n`.
pub(crate) fn test_rng() -> impl FnMut(u64) -> u64 {
    let mut state = 0x853c_49e6_748f_ea9bu64;
    move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    }
}

/// Tests only: a random event of one of two call sites (`sites`), with up
/// to six items: a span (call site `span`, up to three fields: `peer` by
/// index, an index past the call site's names, an inline name), messages plain,
/// deferred and empty, typed fields by index and inline (one of them
/// named `message`), a rendered value with a newline; one in ten ends in
/// a byte that does not decode.
pub(crate) fn random_event(
    next: &mut impl FnMut(u64) -> u64,
    sites: [crate::event::SiteKey; 2],
    span: crate::event::SiteKey,
) -> Vec<u8> {
    use crate::event::{EventBuf, FieldName};
    let mut buf = EventBuf::new();
    let site = sites[next(2) as usize];
    buf.begin_at(1_795_392_000_000_001_000 + next(5_000_000_000), site);
    for _ in 0..next(7) {
        match next(12) {
            0 => {
                // Zero to three fields: by index (one past the call site's
                // names too) and inline.
                buf.begin_span(span);
                for _ in 0..next(4) {
                    match next(4) {
                        0 | 1 => {
                            let peer = ["10.0.0.7", "10.0.0.8"][next(2) as usize];
                            buf.str(FieldName::Index(0), peer);
                        }
                        2 => buf.u64(FieldName::Index(1), next(100)),
                        _ => buf
                            .rendered(FieldName::Inline("x\ny"), format_args!("GET\r"))
                            .unwrap(),
                    }
                }
                buf.end_span();
            }
            1 => buf.str(FieldName::Index(0), "plain message"),
            2 => {
                buf.args(FieldName::Index(0), 1);
                buf.arg_f64(1.5);
            }
            3 => buf.u64(FieldName::Index(1), next(1000)),
            4 => buf.str(FieldName::Index(2), "us\"ers"),
            5 => buf.f64(FieldName::Index(3), next(1000) as f64 / 7.0),
            6 => buf.i64(FieldName::Index(4), -1),
            7 => buf.bool(FieldName::Inline("ok"), true),
            8 => buf.char(FieldName::Inline("rows"), '\u{1b}'),
            9 => buf.args(FieldName::Index(0), 0),
            10 => buf.u64(FieldName::Inline("message"), 7),
            _ => buf
                .rendered(FieldName::Index(1), format_args!("a\nb"))
                .unwrap(),
        }
    }
    let mut payload = buf.as_bytes().to_vec();
    if next(10) == 0 {
        payload.push(0xFF);
    }
    payload
}

/// Strings that a recovered catalog hands the formats (a dead
/// process's thread names and ids, call-site targets and names, field
/// and span names, source files, message formats) reach no output
/// raw: Text escapes them as it escapes values, JSON as strings,
/// syslog carries Text's escaped line.
#[test]
fn catalog_strings_are_escaped_in_every_format() {
    use crate::event::{register_callsite, EventBuf, FieldName, SiteKey};
    use crate::format::{MakeFormat, SinkInfo};
    use crate::level::Level;
    use crate::record::{kind, Record};

    static SITE: u8 = 0;
    static SPAN: u8 = 0;
    let key = SiteKey::of(&SITE);
    register_callsite(
        key,
        Callsite::new(Level::Info, "app\x1b[2J\n", "ev\x1b\n")
            .fields(vec!["message", "f\x1b]0;t\x07\n"])
            .location(Some("app"), Some("src/\x1b[1m\n.rs"), Some(7))
            .message_format("m\x1b[5m\n{}"),
    );
    register_callsite(
        SiteKey::of(&SPAN),
        Callsite::new(Level::Info, "app", "sp\x1b[7m\nan").fields(vec!["p\x1b\n"]),
    );
    let named = crate::event::register_foreign_thread(
        Some("w\x1b[2J\nforged\u{202e}"),
        "ThreadId(\x1b[31m\n7)",
        "ThreadId(\x1b[31m\n07)",
    );
    let unnamed = crate::event::register_foreign_thread(
        None,
        "ThreadId(\x1b[32m\n8)",
        "ThreadId(\x1b[32m\n08)",
    );
    let event = |thread: u32| {
        let mut buf = EventBuf::new();
        buf.begin_at(1_795_392_000_000_001_000, key);
        buf.thread();
        buf.begin_span(SiteKey::of(&SPAN));
        buf.u64(FieldName::Index(0), 1);
        buf.end_span();
        buf.args(FieldName::Index(0), 1);
        buf.arg_u64(2);
        buf.u64(FieldName::Index(1), 3);
        let mut payload = buf.as_bytes().to_vec();
        // The thread item, right after the 16-byte header, names the
        // recovered thread instead of this one.
        assert_eq!(payload[16], crate::event::ITEM_THREAD);
        payload[17..21].copy_from_slice(&thread.to_le_bytes());
        payload
    };
    let formats: Vec<(&str, Box<dyn MakeFormat>)> = vec![
        (
            "text, names and ids",
            Box::new(
                Text::new()
                    .with_ansi(false)
                    .with_thread_names(true)
                    .with_thread_ids(true)
                    .with_file(true)
                    .with_line_number(true),
            ),
        ),
        (
            "text, names",
            Box::new(Text::new().with_ansi(false).with_thread_names(true)),
        ),
        (
            "text, ids",
            Box::new(Text::new().with_ansi(false).with_thread_ids(true)),
        ),
        (
            "json, names and ids",
            Box::new(
                Json::new()
                    .with_thread_names(true)
                    .with_thread_ids(true)
                    .with_file(true)
                    .with_line_number(true),
            ),
        ),
        ("json, names", Box::new(Json::new().with_thread_names(true))),
        ("json, nowait schema", Box::new(Json::nowait_schema())),
        (
            "json, fixed and flattened",
            Box::new(
                Json::new()
                    .field("se\x1b[1m\nrvice", "a\u{202e}\n")
                    .flatten_event(true)
                    .flatten_spans(true)
                    .with_thread_names(true)
                    .with_thread_ids(true)
                    .with_file(true)
                    .with_line_number(true),
            ),
        ),
        (
            // ECS's thread id is a number: a recovered `ThreadId(…)`
            // that holds none is left out, so names only here.
            "ecs",
            Box::new(
                Json::ecs()
                    .with_thread_names(true)
                    .with_file(true)
                    .with_line_number(true),
            ),
        ),
        (
            "cloud logging",
            Box::new(
                Json::cloud_logging()
                    .with_cloud_project("p\x1b\n")
                    .with_thread_names(true)
                    .with_thread_ids(true)
                    .with_file(true)
                    .with_line_number(true),
            ),
        ),
        (
            "logfmt",
            Box::new(
                Logfmt::new()
                    .field("k\x1b\n", "v\u{2028}")
                    .with_thread_names(true)
                    .with_thread_ids(true)
                    .with_file(true)
                    .with_line_number(true),
            ),
        ),
    ];
    let sink = SinkInfo::new("test", false);
    for (what, make) in &formats {
        for thread in [named, unnamed] {
            let payload = event(thread);
            let record = Record::new(Level::Info, kind::EVENT, &payload);
            let mut plain = make.make_format(&sink);
            let mut syslog = Syslog::new().wrap(make.make_format(&sink), Framing::Datagram);
            for (framing, format) in [("", &mut plain), (" in syslog", &mut syslog)] {
                let mut out = Vec::new();
                format.format(&record, &mut out);
                let line = out.strip_suffix(b"\n").unwrap_or(&out);
                let shown = String::from_utf8_lossy(&out);
                assert_eq!(
                    unescaped_at(line, &[]),
                    None,
                    "{what}{framing}, thread {thread}: {shown:?}"
                );
                if make.needs_thread() {
                    // The thread is shown (its name or its id).
                    assert!(
                        shown.contains("forged") || shown.contains("ThreadId("),
                        "{what}: {shown:?}"
                    );
                }
            }
        }
    }
}

/// Bidi controls in values and messages (plain, deferred, literal,
/// rendered, characters, text records) come out escaped in Text
/// (`\u{202e}`, as `Debug` writes them) and in every JSON schema and
/// logfmt (`\u202e`), never raw.
#[test]
fn bidi_controls_are_escaped_in_text_and_json() {
    use crate::event::{register_callsite, EventBuf, FieldName, SiteKey};
    use crate::format::{MakeFormat, SinkInfo};
    use crate::level::Level;
    use crate::record::{kind, Record};

    static DEFERRED: u8 = 0;
    static LITERAL: u8 = 0;
    register_callsite(
        SiteKey::of(&DEFERRED),
        Callsite::new(Level::Info, "app", "ev")
            .fields(vec!["message", "v"])
            .message_format("user {} logged in"),
    );
    register_callsite(
        SiteKey::of(&LITERAL),
        Callsite::new(Level::Info, "app", "ev")
            .fields(vec!["message"])
            .message_format("done\u{2067}"),
    );
    let mut payloads = Vec::new();
    let mut buf = EventBuf::new();
    buf.begin_inline(1, "app");
    buf.str(FieldName::Inline("message"), "invoice\u{202e}fdp.exe");
    buf.str(FieldName::Inline("s"), "a\u{202d}b\u{2066}c\u{61c}");
    buf.rendered(FieldName::Inline("r"), format_args!("x\u{200f}y"))
        .unwrap();
    buf.char(FieldName::Inline("c"), '\u{202b}');
    payloads.push((kind::EVENT, buf.as_bytes().to_vec()));
    let mut buf = EventBuf::new();
    buf.begin_at(1, SiteKey::of(&DEFERRED));
    buf.args(FieldName::Index(0), 1);
    buf.arg_str("admin\u{202e}\u{2069}");
    buf.str(FieldName::Index(1), "\u{200e}");
    payloads.push((kind::EVENT, buf.as_bytes().to_vec()));
    let mut buf = EventBuf::new();
    buf.begin_at(1, SiteKey::of(&LITERAL));
    buf.args(FieldName::Index(0), 0);
    payloads.push((kind::EVENT, buf.as_bytes().to_vec()));
    payloads.push((kind::TEXT, "line\u{202a}".as_bytes().to_vec()));

    let formats: Vec<(Box<dyn MakeFormat>, &str)> = vec![
        (Box::new(Text::new().with_ansi(false)), "\\u{2"),
        (Box::new(Json::new()), "\\u2"),
        (Box::new(Json::nowait_schema()), "\\u2"),
        (Box::new(Json::ecs()), "\\u2"),
        (Box::new(Json::cloud_logging()), "\\u2"),
        (Box::new(Logfmt::new()), "\\u2"),
    ];
    let sink = SinkInfo::new("test", false);
    for (make, escape) in &formats {
        let mut format = make.make_format(&sink);
        for (kind, payload) in &payloads {
            let mut out = Vec::new();
            format.format(&Record::new(Level::Info, *kind, payload), &mut out);
            let line = out.strip_suffix(b"\n").unwrap_or(&out);
            let shown = String::from_utf8_lossy(&out);
            assert_eq!(unescaped_at(line, &[]), None, "{shown:?}");
            assert!(shown.contains(escape), "{shown:?}");
        }
    }
}
