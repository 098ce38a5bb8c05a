//! Events rendered by every format: each value type, cuts, spans and
//! escaping, through `Text` and `Json` (the encoding is `event`'s, the
//! bytes are the formats').

use super::{MakeFormat, SinkInfo};
use crate::event::*;
use crate::format::Json;
use crate::format::Logfmt;
use crate::format::Text;
use crate::level::Level;
use crate::record::{kind, Record};

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

/// Every format, with every option that changes what is read from an
/// event turned on.
fn formats() -> Vec<Box<dyn MakeFormat>> {
    vec![
        Box::new(Text::new()),
        Box::new(
            Text::new()
                .with_ansi(true)
                .with_file(true)
                .with_line_number(true)
                .with_thread_ids(true)
                .with_thread_names(true)
                .with_timer(crate::format::Timer::Uptime),
        ),
        Box::new(Json::new()),
        Box::new(
            Json::new()
                .flatten_event(true)
                .with_file(true)
                .with_line_number(true)
                .with_thread_ids(true)
                .with_thread_names(true),
        ),
        Box::new(Json::nowait_schema()),
        Box::new(
            Json::new()
                .field("service", "api")
                .flatten_event(true)
                .flatten_spans(true)
                .with_file(true)
                .with_thread_names(true),
        ),
        Box::new(
            Json::ecs()
                .with_file(true)
                .with_line_number(true)
                .with_thread_ids(true),
        ),
        Box::new(Json::cloud_logging().with_file(true).with_line_number(true)),
        Box::new(
            Logfmt::new()
                .field("service", "api")
                .with_file(true)
                .with_line_number(true)
                .with_thread_ids(true)
                .with_thread_names(true),
        ),
    ]
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
        "{\"timestamp\":\"2026-11-23T00:00:00.000001Z\",\"level\":\"INFO\",\"fields\":{\"message\":\"GET /x  200\",\
         \"status\":-1,\"path\":\"/a\\\"b\",\"ratio\":0.5,\"ok\":true,\"c\":\"z\",\"dbg\":\"[1, 2]\",\"extra\":1},\
         \"target\":\"app::http\",\"span\":{\"id\":7,\"name\":\"request\"},\"spans\":[{\"id\":7,\"name\":\"request\"}]}\n"
    );
    assert_eq!(
        render(&Json::nowait_schema(), &payload),
        "{\"timestamp\":\"2026-11-23T00:00:00.000001Z\",\"level\":\"INFO\",\"target\":\"app::http\",\
         \"message\":\"GET /x  200\",\"fields\":{\"status\":-1,\"path\":\"/a\\\"b\",\"ratio\":0.5,\
         \"ok\":true,\"c\":\"z\",\"dbg\":\"[1, 2]\",\"extra\":1},\"spans\":[{\"name\":\"request\",\"id\":7}]}\n"
    );
}

/// The platform layouts and fixed fields, byte for byte: the layouts
/// their docs show.
#[test]
fn platform_layouts_render_exactly() {
    let payload = sample();
    assert_eq!(
        render(&Json::ecs().field("service.name", "api"), &payload),
        "{\"@timestamp\":\"2026-11-23T00:00:00.000001Z\",\"log.level\":\"info\",\"message\":\"GET /x  200\",\
         \"ecs.version\":\"1.6.0\",\"service.name\":\"api\",\"log.logger\":\"app::http\",\"status\":-1,\
         \"path\":\"/a\\\"b\",\"ratio\":0.5,\"ok\":true,\"c\":\"z\",\"dbg\":\"[1, 2]\",\"extra\":1,\"id\":7}\n"
    );
    assert_eq!(
        render(&Json::cloud_logging().field("service", "api"), &payload),
        "{\"time\":\"2026-11-23T00:00:00.000001Z\",\"severity\":\"INFO\",\"message\":\"GET /x  200\",\
         \"service\":\"api\",\"target\":\"app::http\",\"status\":-1,\"path\":\"/a\\\"b\",\"ratio\":0.5,\
         \"ok\":true,\"c\":\"z\",\"dbg\":\"[1, 2]\",\"extra\":1,\"id\":7}\n"
    );
    assert_eq!(
        render(&Logfmt::new().field("service", "api"), &payload),
        "time=2026-11-23T00:00:00.000001Z level=info target=app::http msg=\"GET /x  200\" service=api \
         status=-1 path=\"/a\\\"b\" ratio=0.5 ok=true c=z dbg=\"[1, 2]\" extra=1 id=7\n"
    );
    assert_eq!(
        render(
            &Json::new()
                .field("service", "api")
                .field("level", "x")
                .flatten_event(true)
                .flatten_spans(true),
            &payload
        ),
        "{\"timestamp\":\"2026-11-23T00:00:00.000001Z\",\"level\":\"INFO\",\"service\":\"api\",\
         \"fields.level\":\"x\",\"message\":\"GET /x  200\",\"status\":-1,\"path\":\"/a\\\"b\",\"ratio\":0.5,\
         \"ok\":true,\"c\":\"z\",\"dbg\":\"[1, 2]\",\"extra\":1,\"id\":7,\"target\":\"app::http\"}\n"
    );
    // Fixed fields alone keep the spans as `span` and `spans`.
    assert_eq!(
        render(&Json::new().without_time().with_target(false).field("service", "api"), &payload),
        "{\"level\":\"INFO\",\"service\":\"api\",\"fields\":{\"message\":\"GET /x  200\",\"status\":-1,\
         \"path\":\"/a\\\"b\",\"ratio\":0.5,\"ok\":true,\"c\":\"z\",\"dbg\":\"[1, 2]\",\"extra\":1},\
         \"span\":{\"id\":7,\"name\":\"request\"},\"spans\":[{\"id\":7,\"name\":\"request\"}]}\n"
    );
}

/// Random events (the generator of the formats' cache tests) through
/// JSON with fixed and flattened fields and the platform layouts: each
/// line is one object for `serde_json`, no key twice at the top level, the
/// fixed field on it.
#[test]
fn fixed_and_flattened_json_round_trips_through_serde_json() {
    static A: u8 = 0;
    static B: u8 = 0;
    static S: u8 = 0;
    let (a, b, s) = (SiteKey::of(&A), SiteKey::of(&B), SiteKey::of(&S));
    register_callsite(
        a,
        Callsite::new(Level::Info, "app", "ev")
            .fields(vec!["message", "level", "service", "ta\"ble", "message"])
            .location(Some("app"), Some("src/a.rs"), Some(3))
            .message_format("took {} ms"),
    );
    register_callsite(
        b,
        Callsite::new(Level::Info, "app", "ev")
            .fields(vec!["message", "service", "fields.service", "error"])
            .message_format("done"),
    );
    register_callsite(
        s,
        Callsite::new(Level::Info, "app", "conn").fields(vec!["peer", "level"]),
    );
    let formats: Vec<Box<dyn MakeFormat>> = vec![
        Box::new(Json::new().field("service", "api").flatten_spans(true)),
        Box::new(
            Json::new()
                .field("service", "api")
                .flatten_event(true)
                .flatten_spans(true)
                .with_file(true)
                .with_line_number(true),
        ),
        Box::new(Json::ecs().field("service", "api")),
        Box::new(Json::cloud_logging().field("service", "api")),
    ];
    let mut next = crate::format::test_rng();
    for _ in 0..2000 {
        let payload = crate::format::random_event(&mut next, [a, b], s);
        for make in &formats {
            let line = render(&**make, &payload);
            let value: serde_json::Value =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
            let object = value.as_object().unwrap();
            // A key twice would leave the map shorter than the line's
            // top-level keys: count them with a second, flat parse.
            let mut de = serde_json::Deserializer::from_str(&line);
            let keys = top_level_keys(&mut de);
            assert_eq!(object.len(), keys, "a key twice: {line}");
            let service = if line.starts_with("{\"@timestamp\"") {
                object.get("fields.service")
            } else {
                object.get("service")
            };
            assert_eq!(service.and_then(|v| v.as_str()), Some("api"), "{line}");
        }
    }
}

/// The number of keys of the JSON object `de` reads (values skipped).
fn top_level_keys(de: &mut serde_json::Deserializer<serde_json::de::StrRead<'_>>) -> usize {
    struct Count(usize);
    impl<'de> serde::Deserialize<'de> for Count {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Count, D::Error> {
            struct V;
            impl<'de> serde::de::Visitor<'de> for V {
                type Value = Count;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut m: A,
                ) -> Result<Count, A::Error> {
                    let mut n = 0;
                    while m
                        .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                        .is_some()
                    {
                        n += 1;
                    }
                    Ok(Count(n))
                }
            }
            d.deserialize_map(V)
        }
    }
    <Count as serde::Deserialize>::deserialize(de).unwrap().0
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
        "\x1b[32m INFO\x1b[0m \x1b[2mhyper::proto\x1b[0m\x1b[2m:\x1b[0m closed\n"
    );
}

/// Every truncation and a sweep of corruptions of a valid event: no panic,
/// exactly one line out, in both formats.
#[test]
fn malformed_payloads_never_panic_and_stay_one_line() {
    let payload = sample();
    let step = if cfg!(miri) { 7 } else { 1 };
    for len in (0..=payload.len()).step_by(step) {
        for make in formats() {
            let out = render(&*make, &payload[..len]);
            assert_eq!(out.matches('\n').count(), 1, "{out:?}");
        }
    }
    for at in (16..payload.len()).step_by(step * 3) {
        for b in [0u8, 0x7f, 0xfd, 0xfe, 0xff] {
            let mut bad = payload.clone();
            bad[at] = b;
            for make in formats() {
                let out = render(&*make, &bad);
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

// === truncate_to ===

const MARK: &str = "… [truncated]";

#[test]
fn oversized_event_cuts_its_longest_value_with_a_mark() {
    let mut buf = EventBuf::new();
    buf.begin_at(1_795_392_000_000_001_000, site());
    buf.str(FieldName::Index(0), "upload");
    buf.str(FieldName::Index(2), &"a".repeat(10_000));
    buf.i64(FieldName::Index(1), -1);
    assert_eq!(buf.len(), 10_044);
    assert!(buf.truncate_to(2040));
    // 16 + 12 + (6 + cap) + 10 bytes = 2040: the cap is 1996, of which
    // 1981 bytes of text and the 15-byte mark.
    assert_eq!(buf.len(), 2040);
    let payload = buf.as_bytes().to_vec();
    assert_decodes(&payload);
    let kept = "a".repeat(1981);
    assert_eq!(
        render(&Text::new().with_time(false), &payload),
        format!(" INFO app::http: upload path=\"{kept}{MARK}\" status=-1\n")
    );
    assert_eq!(
        render(&Json::nowait_schema(), &payload),
        format!(
            "{{\"timestamp\":\"2026-11-23T00:00:00.000001Z\",\"level\":\"INFO\",\"target\":\"app::http\",\
             \"message\":\"upload\",\"fields\":{{\"path\":\"{kept}{MARK}\",\"status\":-1}},\"spans\":[]}}\n"
        )
    );
}

#[test]
fn span_fields_and_message_arguments_are_cut_too() {
    let mut buf = EventBuf::new();
    buf.begin_at(0, site());
    buf.begin_span(SiteKey::of(&SPAN));
    buf.str(FieldName::Index(0), &"s".repeat(5000));
    buf.end_span();
    buf.args(FieldName::Index(0), 2);
    buf.arg_str(&"m".repeat(5000));
    buf.arg_u64(200);
    buf.u64(FieldName::Index(1), 3);
    assert!(buf.truncate_to(600));
    assert!(buf.len() <= 600);
    let payload = buf.as_bytes().to_vec();
    assert_decodes(&payload);
    let text = render(&Text::new().with_time(false), &payload);
    assert!(text.starts_with(" INFO request{id=\"sss"), "{text}");
    assert!(
        text.contains(&format!("{MARK}\"}}: app::http: GET mmm")),
        "{text}"
    );
    assert!(text.ends_with(&format!("{MARK}  200 status=3\n")), "{text}");
    assert_eq!(text.matches(MARK).count(), 2);
}

#[test]
fn many_small_fields_keep_the_leading_ones_and_say_so() {
    let mut buf = EventBuf::new();
    buf.begin_inline(0, "app");
    buf.str(FieldName::Inline("message"), "many");
    for i in 0..500 {
        buf.u64(FieldName::Index(i % 200), i as u64);
    }
    assert!(buf.truncate_to(1000));
    assert!(buf.len() <= 1000);
    let payload = buf.as_bytes().to_vec();
    assert_decodes(&payload);
    let items: Vec<_> = Event::parse(&payload).unwrap().items().collect();
    assert!(items.len() > 50, "{}", items.len());
    assert!(matches!(
        items[items.len() - 2],
        Item::Field { value: Value::U64(n), .. } if n as usize == items.len() - 3
    ));
    assert!(matches!(
        items[items.len() - 1],
        Item::Field {
            name: FieldName::Inline("nowait.truncated"),
            value: Value::Bool(true)
        }
    ));
    let text = render(&Text::new().with_time(false), &payload);
    assert!(text.starts_with(" INFO app: many ?=0 ?=1 "), "{text}");
    assert!(text.ends_with(" nowait.truncated=true\n"), "{text}");
    assert!(render(&Json::nowait_schema(), &payload)
        .ends_with(",\"nowait.truncated\":true},\"spans\":[]}\n"));
    assert!(render(&Json::new(), &payload)
        .ends_with(",\"nowait.truncated\":true},\"target\":\"app\"}\n"));
}

#[test]
fn an_inline_target_is_cut_only_when_it_alone_does_not_fit() {
    let mut buf = EventBuf::new();
    buf.begin_inline(0, &"é".repeat(30_000));
    buf.str(FieldName::Inline("message"), "m");
    assert!(buf.truncate_to(200));
    assert!(buf.len() <= 200);
    let payload = buf.as_bytes().to_vec();
    assert_decodes(&payload);
    let event = Event::parse(&payload).unwrap();
    let target = event.target().expect("still UTF-8");
    assert!(target.len() >= 150 && target.chars().all(|c| c == 'é'));
    assert!(render(&Text::new().with_time(false), &payload).ends_with(" nowait.truncated=true\n"));
}

use nowait_testkit::Rng;

/// Random text, mostly of awkward characters, short to very long.
fn random_text(rng: &mut Rng) -> String {
    let len = match rng.below(4) {
        0 => rng.below(8),
        1 => rng.below(200),
        _ => rng.below(6000),
    };
    let alphabet = ['a', '"', '\n', 'é', '€', '😀', '\u{2028}', '\u{9b}'];
    (0..len)
        .map(|_| alphabet[rng.below(alphabet.len() as u64) as usize])
        .collect()
}

/// `n` random fields of random types.
fn random_fields(rng: &mut Rng, buf: &mut EventBuf, n: u64) {
    for _ in 0..n {
        let name = match rng.below(3) {
            0 => FieldName::Inline("inline"),
            _ => FieldName::Index(rng.below(8) as usize),
        };
        match rng.below(7) {
            0 => buf.u64(name, rng.next()),
            1 => buf.bool(name, true),
            2 => buf.char(name, 'é'),
            3 => buf
                .rendered(name, format_args!("{:?}", random_text(rng)))
                .unwrap(),
            _ => buf.str(name, &random_text(rng)),
        }
    }
}
/// Random events, most of them oversized, cut to random limits: they fit,
/// decode without a malformed item, and render as one line in both
/// formats. Corrupt span bytes (possible through `EventBuf::span`) never
/// make the cut panic.
#[test]
fn random_oversized_events_always_fit_and_decode() {
    let site = site();
    let mut rng = Rng::new(1);
    let rounds = if cfg!(miri) { 8 } else { 400 };
    let (mut cuts, mut drops) = (0, 0);
    for round in 0..rounds {
        let mut buf = EventBuf::new();
        if rng.below(2) == 0 {
            buf.begin_at(rng.next() >> 1, site);
        } else {
            buf.begin_inline(0, &random_text(&mut rng));
        }
        let corrupt = round % 10 == 9;
        for _ in 0..rng.below(3) {
            let mut fields = EventBuf::new();
            let n = rng.below(4);
            random_fields(&mut rng, &mut fields, n);
            let mut bytes = fields.field_bytes().to_vec();
            if corrupt && !bytes.is_empty() {
                let at = rng.below(bytes.len() as u64) as usize;
                bytes[at] = rng.next() as u8;
            }
            buf.span(SiteKey::of(&SPAN), &bytes);
        }
        if rng.below(2) == 0 {
            let n = rng.below(4) as u8;
            buf.args(FieldName::Index(0), n);
            for _ in 0..n {
                match rng.below(3) {
                    0 => buf.arg_u64(rng.next()),
                    1 => buf
                        .arg_rendered(format_args!("{}", random_text(&mut rng)))
                        .unwrap(),
                    _ => buf.arg_str(&random_text(&mut rng)),
                }
            }
        }
        let n = rng.below(40);
        random_fields(&mut rng, &mut buf, n);
        let max = 40 + rng.below(4000) as usize;
        let before = buf.as_bytes().to_vec();
        let cut = buf.truncate_to(max);
        let payload = buf.as_bytes().to_vec();
        assert_eq!(cut, before.len() > max, "round {round}");
        assert!(
            payload.len() <= max || !cut,
            "round {round}: {} > {max}",
            payload.len()
        );
        cuts += usize::from(cut);
        drops += usize::from(payload.ends_with(b"nowait.truncated\x05\x01"));
        if !corrupt {
            assert_decodes(&payload);
        }
        for make in formats() {
            let out = render(&*make, &payload);
            assert_eq!(out.matches('\n').count(), 1, "round {round}: {out:?}");
        }
    }
    // Both ways of cutting are exercised.
    assert!(
        cuts > rounds / 4 && drops > 0,
        "{cuts} cut, {drops} with dropped items"
    );
}

/// The thread item rides in the header: decoded, kept by truncation (also
/// when an inline target has to be cut), printed by the formats that ask.
#[test]
fn thread_item_survives_truncation_and_is_printed() {
    let mut buf = EventBuf::new();
    buf.begin_inline(0, &"t".repeat(300));
    buf.thread();
    buf.thread(); // a second call adds nothing
    let head = buf.len();
    buf.str(FieldName::Inline("message"), &"m".repeat(500));
    let event = Event::parse(buf.as_bytes()).unwrap();
    let number = event.thread().expect("thread recorded");
    assert_eq!(event.target().map(str::len), Some(300));
    assert_eq!(head, 16 + 2 + 300 + 5);

    // Calling it after a field does nothing.
    let mut late = EventBuf::new();
    late.begin_inline(0, "app");
    late.u64(FieldName::Inline("n"), 1);
    late.thread();
    assert_eq!(Event::parse(late.as_bytes()).unwrap().thread(), None);

    // Cut so small that the target itself must shrink.
    assert!(buf.truncate_to(200));
    assert!(buf.len() <= 200);
    let payload = buf.as_bytes().to_vec();
    assert_decodes(&payload);
    let event = Event::parse(&payload).unwrap();
    assert_eq!(event.thread(), Some(number));
    assert!(event.target().unwrap().len() < 300);

    let name = std::thread::current().name().map(str::to_owned);
    let text = render(
        &Text::new().without_time().with_thread_names(true),
        &payload,
    );
    let shown = name.unwrap_or_else(|| format!("{:0>2?}", std::thread::current().id()));
    assert!(text.starts_with(&format!(" INFO {shown} tttt")), "{text}");
    let ids = render(
        &Text::new()
            .without_time()
            .with_level(false)
            .with_thread_ids(true),
        &payload,
    );
    assert!(
        ids.starts_with(&format!("{:0>2?} ttt", std::thread::current().id())),
        "{ids}"
    );
    let json = render(&Json::new().without_time().with_thread_ids(true), &payload);
    assert!(
        json.ends_with(&format!(
            ",\"threadId\":\"{:?}\"}}\n",
            std::thread::current().id()
        )),
        "{json}"
    );
    // Formats that do not ask print nothing of it.
    assert!(!render(&Text::new(), &payload).contains("ThreadId"));
}
