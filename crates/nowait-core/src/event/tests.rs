use super::*;
use crate::record::{kind, MakeFormat, Record, SinkInfo};
use crate::{Json, Level, Text};

static SITE: u8 = 0;
static SPAN: u8 = 0;

fn site() -> SiteKey {
    let key = SiteKey::of(&SITE);
    register_callsite(
        key,
        Callsite::new(Level::Info, "app::http", "event")
            .fields(vec!["message", "status", "path", "ratio", "ok", "c", "dbg"])
            .message_format("GET {} {:>4}"),
    );
    register_callsite(
        SiteKey::of(&SPAN),
        Callsite::new(Level::Info, "app", "request").fields(vec!["id"]),
    );
    key
}

fn sample() -> Vec<u8> {
    let mut buf = EventBuf::new();
    // 2026-11-23T00:00:00.000001Z
    buf.begin_at(1_795_392_000_000_001_000, site());
    buf.begin_span(SiteKey::of(&SPAN));
    buf.u64(FieldName::Index(0), 7);
    buf.end_span();
    buf.args(FieldName::Index(0), 2);
    buf.arg_str("/x");
    buf.arg_u64(200);
    buf.i64(FieldName::Index(1), -1);
    buf.str(FieldName::Index(2), "/a\"b");
    buf.f64(FieldName::Index(3), 0.5);
    buf.bool(FieldName::Index(4), true);
    buf.char(FieldName::Index(5), 'z');
    buf.rendered(FieldName::Index(6), format_args!("{:?}", [1, 2]))
        .unwrap();
    buf.u64(FieldName::Inline("extra"), 1);
    buf.as_bytes().to_vec()
}

fn render(make: &dyn MakeFormat, payload: &[u8]) -> String {
    let mut format = make.make_format(&SinkInfo::new("test", false));
    let mut out = Vec::new();
    format.format(&Record::new(Level::Info, kind::EVENT, payload), &mut out);
    String::from_utf8(out).unwrap()
}

#[test]
fn every_value_type_renders_exactly() {
    let payload = sample();
    assert_eq!(
        render(&Text::new(), &payload),
        "2026-11-23T00:00:00.000001Z  INFO request{id=7}: app::http: GET /x  200 \
         status=-1 path=\"/a\\\"b\" ratio=0.5 ok=true c='z' dbg=[1, 2] extra=1\n"
    );
    assert_eq!(
        render(&Json::new(), &payload),
        "{\"timestamp\":\"2026-11-23T00:00:00.000001Z\",\"level\":\"INFO\",\"target\":\"app::http\",\
         \"message\":\"GET /x  200\",\"fields\":{\"status\":-1,\"path\":\"/a\\\"b\",\"ratio\":0.5,\
         \"ok\":true,\"c\":\"z\",\"dbg\":\"[1, 2]\",\"extra\":1},\"spans\":[{\"name\":\"request\",\"id\":7}]}\n"
    );
}

#[test]
fn inline_target_and_colours() {
    let mut buf = EventBuf::new();
    buf.begin_inline(0, "hyper::proto");
    buf.str(FieldName::Inline("message"), "closed");
    let payload = buf.as_bytes().to_vec();
    assert_eq!(
        render(&Text::new().with_time(false), &payload),
        " INFO hyper::proto: closed\n"
    );
    assert_eq!(
        render(&Text::new().with_time(false).ansi(true), &payload),
        "\x1b[32m INFO\x1b[0m \x1b[2mhyper::proto:\x1b[0m closed\n"
    );
}

/// Every truncation and a sweep of corruptions of a valid event: no panic,
/// exactly one line out, in both formats.
#[test]
fn malformed_payloads_never_panic_and_stay_one_line() {
    let payload = sample();
    let step = if cfg!(miri) { 7 } else { 1 };
    for len in (0..=payload.len()).step_by(step) {
        for make in [&Text::new() as &dyn MakeFormat, &Json::new()] {
            let out = render(make, &payload[..len]);
            assert_eq!(out.matches('\n').count(), 1, "{out:?}");
        }
    }
    for at in (16..payload.len()).step_by(step * 3) {
        for b in [0u8, 0x7f, 0xfd, 0xfe, 0xff] {
            let mut bad = payload.clone();
            bad[at] = b;
            for make in [&Text::new() as &dyn MakeFormat, &Json::new()] {
                let out = render(make, &bad);
                assert_eq!(out.matches('\n').count(), 1, "{out:?}");
            }
        }
    }
}

#[test]
fn unknown_call_site_is_shown_not_fatal() {
    static NEVER_REGISTERED: u8 = 0;
    let mut buf = EventBuf::new();
    buf.begin_at(0, SiteKey::of(&NEVER_REGISTERED));
    buf.u64(FieldName::Index(3), 1);
    let out = render(&Text::new().with_time(false), buf.as_bytes());
    assert_eq!(out, " INFO ?: ?=1\n");
}

#[test]
fn reentrant_event_buf_gets_a_fresh_buffer() {
    let outer = with_event_buf(|a| {
        a.clear();
        a.u64(FieldName::Index(0), 1);
        let inner = with_event_buf(|b| {
            assert!(b.is_empty());
            b.u64(FieldName::Index(0), 2);
            b.len()
        });
        assert_eq!(a.len(), 10);
        inner
    });
    assert_eq!(outer, 10);
}
