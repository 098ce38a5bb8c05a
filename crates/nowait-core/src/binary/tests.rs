//! The binary format against the formats it defers to: what a reader
//! renders from the file is what the sink would have written.

use std::time::{Duration, UNIX_EPOCH};

use super::write::BinaryFormat;
use super::*;
use crate::event::{register_callsite, Callsite, EventBuf, FieldName, SiteKey, TraceContext};
use crate::format::{Format, Json, MakeFormat, SinkInfo, Text};
use crate::level::Level;
use crate::record::{kind, Notice, Record, SuppressReason, Suppressed};

static SITE: u8 = 0;
static LITERAL: u8 = 0;
static SPAN: u8 = 0;
static UNICODE: u8 = 0;

fn sites() -> [SiteKey; 2] {
    let key = SiteKey::of(&SITE);
    register_callsite(
        key,
        Callsite::new(Level::Info, "app::db", "event")
            .fields(vec!["message", "peer", "user", "ratio", "n"])
            .location(Some("app::db"), Some("src/db.rs"), Some(88))
            .message_format("query {} took {}ms"),
    );
    let literal = SiteKey::of(&LITERAL);
    register_callsite(
        literal,
        Callsite::new(Level::Info, "app", "event")
            .fields(vec!["message", "rows", "ta\nble", "ratio"])
            .message_format("done\u{2028}"),
    );
    register_callsite(
        SiteKey::of(&SPAN),
        Callsite::new(Level::Info, "app", "co\x1bnn").fields(vec!["peer"]),
    );
    register_callsite(
        SiteKey::of(&UNICODE),
        Callsite::new(Level::Warn, "app::ünï", "événement")
            .fields(vec!["message", "名前"])
            .location(None, Some("src/ü.rs"), Some(3)),
    );
    [key, literal]
}

/// One item of what a writer is handed.
enum Item {
    Record(Level, u8, Vec<u8>, bool),
    Notice(
        Level,
        u64,
        String,
        Option<(u64, &'static str, SuppressReason, &'static str)>,
        bool,
    ),
}

/// Records and notices covering what the formats render: the format
/// tests' random events (every value type, spans, inline names, escapes,
/// malformed tails), events with threads and trace context, unicode,
/// text records, notices with and without suppressed calls, and a
/// backtrace's released records and marker lines.
fn workload() -> Vec<Item> {
    let [key, literal] = sites();
    let mut next = crate::format::test_rng();
    let mut items = Vec::new();
    for i in 0..600 {
        let payload = crate::format::random_event(&mut next, [key, literal], SiteKey::of(&SPAN));
        let level = Level::from_u8((i % 5) as u8).unwrap();
        items.push(Item::Record(level, kind::EVENT, payload, i % 97 == 3));
    }
    let mut buf = EventBuf::new();
    buf.begin_at(1_795_392_000_123_456_789, SiteKey::of(&UNICODE));
    buf.thread();
    buf.trace_context(TraceContext::new([0xab; 16], [0xcd; 8], 1));
    buf.str(FieldName::Index(0), "héllo \u{202e} wörld\t\x07");
    buf.str(FieldName::Index(1), "值");
    items.push(Item::Record(
        Level::Warn,
        kind::EVENT,
        buf.as_bytes().to_vec(),
        false,
    ));
    let mut buf = EventBuf::new();
    buf.begin_inline(1_795_392_001_000_000_000, "inline::target\x1b[31m");
    buf.thread();
    buf.str(FieldName::Inline("message"), "line1\nline2");
    buf.i64(FieldName::Inline("neg"), i64::MIN);
    buf.f64(FieldName::Inline("nan"), f64::NAN);
    buf.f64(FieldName::Inline("inf"), f64::NEG_INFINITY);
    items.push(Item::Record(
        Level::Error,
        kind::EVENT,
        buf.as_bytes().to_vec(),
        false,
    ));
    items.push(Item::Record(
        Level::Info,
        kind::TEXT,
        b"plain \x1b[2J text".to_vec(),
        false,
    ));
    items.push(Item::Notice(
        Level::Warn,
        1_795_392_002_000_000_000,
        "12 records dropped (ring full) between a and b".into(),
        None,
        false,
    ));
    items.push(Item::Notice(
        Level::Info,
        1_795_392_003_000_000_000,
        "suppressed 41 records from src/db.rs:88 (limit 1 per 1s)".into(),
        Some((41, "src/db.rs:88", SuppressReason::RateLimit, "1 per 1s")),
        false,
    ));
    items.push(Item::Notice(
        Level::Info,
        1_795_392_004_000_000_000,
        "--- 3 earlier records below INFO, kept for this ERROR ---".into(),
        None,
        true,
    ));
    items.push(Item::Notice(
        Level::Info,
        1_795_392_004_000_000_001,
        "sampled: ü".into(),
        Some((7, "src/ü.rs:3", SuppressReason::Sampling, "1 in 10")),
        false,
    ));
    items
}

fn feed(format: &mut dyn Format, items: &[Item], out: &mut Vec<u8>) {
    for item in items {
        match item {
            Item::Record(level, kind, payload, kept) => {
                let record = Record::new(*level, *kind, payload);
                if *kept {
                    format.format_kept(&record, out);
                } else {
                    format.format(&record, out);
                }
            }
            Item::Notice(level, time, message, suppressed, kept) => {
                let time = UNIX_EPOCH + Duration::from_nanos(*time);
                let mut notice = Notice::new(*level, time, message);
                if let Some((count, site, reason, rule)) = suppressed {
                    notice = notice.with_suppressed(Suppressed::new(*count, site, *reason, rule));
                }
                if *kept {
                    format.kept_notice(&notice, out);
                } else {
                    format.notice(&notice, out);
                }
            }
        }
    }
}

/// The file a binary sink writes for `items`, started once.
fn binary_file(items: &[Item]) -> Vec<u8> {
    let mut format = BinaryFormat::default();
    let mut out = Vec::new();
    format.file_start(&mut out, &[]);
    feed(&mut format, items, &mut out);
    out
}

/// A file of one INFO event with `payload`: the items, the file, and the
/// entry read back.
fn one_event(payload: &[u8]) -> (Vec<Item>, Vec<u8>, Entry) {
    let items = vec![Item::Record(
        Level::Info,
        kind::EVENT,
        payload.to_vec(),
        false,
    )];
    let file = binary_file(&items);
    let entry = Reader::new(&file[..]).next().unwrap().unwrap();
    (items, file, entry)
}

fn formats() -> Vec<(&'static str, Box<dyn MakeFormat>)> {
    vec![
        ("text", Box::new(Text::new())),
        (
            "text, everything",
            Box::new(
                Text::new()
                    .with_ansi(true)
                    .with_file(true)
                    .with_line_number(true)
                    .with_thread_ids(true)
                    .with_thread_names(true)
                    .with_trace_ids(true),
            ),
        ),
        ("json", Box::new(Json::new())),
        (
            "json, everything",
            Box::new(
                Json::new()
                    .flatten_event(true)
                    .with_file(true)
                    .with_line_number(true)
                    .with_thread_ids(true)
                    .with_thread_names(true)
                    .with_trace_ids(true),
            ),
        ),
        ("json, nowait schema", Box::new(Json::nowait_schema())),
    ]
}

fn render_file(bytes: &[u8], make: &dyn MakeFormat) -> Vec<u8> {
    let mut format = make.make_format(&SinkInfo::new("cat", false));
    let mut out = Vec::new();
    let mut reader = Reader::new(bytes);
    for entry in &mut reader {
        entry.unwrap().render(&mut *format, &mut out);
    }
    assert_eq!(reader.stop(), Stop::End);
    out
}

#[test]
fn rendering_a_binary_file_gives_what_the_format_writes() {
    let items: Vec<Item> = workload()
        .into_iter()
        .step_by(if cfg!(miri) { 29 } else { 1 })
        .collect();
    // Plain text records have no time of their own: formats stamp them
    // when they handle them, and so does the writer of the binary file
    // (here, at one fixed instant for both).
    let file = crate::format::with_render_time(1_795_392_009_000_000_000, || binary_file(&items));
    for (what, make) in formats() {
        let mut direct = make.make_format(&SinkInfo::new("cat", false));
        let mut want = Vec::new();
        crate::format::with_render_time(1_795_392_009_000_000_000, || {
            feed(&mut *direct, &items, &mut want)
        });
        let got = render_file(&file, &*make);
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&want),
            "{what}"
        );
    }
}

/// A file cut at every byte reads the entries whose frames are whole and
/// stops where the cut frame starts.
#[test]
fn a_cut_file_reads_up_to_its_last_whole_frame() {
    let items: Vec<Item> = workload().into_iter().take(40).collect();
    let file = binary_file(&items);
    // Where each entry's frame ends.
    let mut ends = Vec::new();
    let mut reader = Reader::new(&file[..]);
    while let Some(entry) = reader.next() {
        entry.unwrap();
        ends.push(reader.offset());
    }
    let step = if cfg!(miri) { 97 } else { 1 };
    for cut in (0..=file.len()).step_by(step) {
        let mut reader = Reader::new(&file[..cut]);
        let mut n = 0;
        for entry in &mut reader {
            entry.unwrap();
            n += 1;
        }
        let whole = ends.iter().filter(|&&e| e <= cut as u64).count();
        assert_eq!(n, whole, "cut at {cut}");
        match reader.stop() {
            // At a frame's end (a record's, or a catalog entry's).
            Stop::End => assert_eq!(reader.offset(), cut as u64, "cut at {cut}"),
            Stop::Cut { at, len } => {
                assert_eq!(at, reader.offset(), "cut at {cut}");
                assert_eq!(at + len, cut as u64, "cut at {cut}");
            }
            Stop::Failed => panic!("cut at {cut}: failed"),
        }
    }
}

/// A reader that met the end of a file still being written reads on when
/// more arrives, from the frame it stopped in.
#[test]
fn a_reader_resumes_when_the_file_grows() {
    let items: Vec<Item> = workload().into_iter().take(30).collect();
    let file = binary_file(&items);
    let shared = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
    struct Growing(std::rc::Rc<std::cell::RefCell<Vec<u8>>>, usize);
    impl std::io::Read for Growing {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let data = self.0.borrow();
            let n = buf.len().min(data.len() - self.1);
            buf[..n].copy_from_slice(&data[self.1..self.1 + n]);
            self.1 += n;
            Ok(n)
        }
    }
    let mut reader = Reader::new(Growing(shared.clone(), 0));
    let mut n = 0;
    for chunk in file.chunks(37) {
        shared.borrow_mut().extend_from_slice(chunk);
        for entry in &mut reader {
            entry.unwrap();
            n += 1;
        }
    }
    assert_eq!(n, items.len());
    assert_eq!(reader.stop(), Stop::End);
}

#[test]
fn what_is_not_a_binary_log_is_refused_at_once() {
    for bytes in [
        &b"2026-11-23T00:00:00Z INFO x\n"[..],
        b"\x89PNG\r\n\x1a\n",
        b"{",
    ] {
        let mut reader = Reader::new(bytes);
        let err = reader.next().unwrap().unwrap_err();
        assert!(matches!(err.kind(), ReadErrorKind::NotBinaryLog), "{err}");
        assert!(reader.next().is_none());
        assert_eq!(reader.stop(), Stop::Failed);
    }
    let mut newer = header();
    newer[8..12].copy_from_slice(&(VERSION + 1).to_le_bytes());
    let err = Reader::new(&newer[..]).next().unwrap().unwrap_err();
    assert!(
        matches!(err.kind(), ReadErrorKind::Version(v) if *v == VERSION + 1),
        "{err}"
    );
}

#[test]
fn damage_is_reported_at_the_frame_it_is_in() {
    let items: Vec<Item> = workload().into_iter().take(10).collect();
    let mut file = binary_file(&items);
    let mut reader = Reader::new(&file[..]);
    let offsets: Vec<u64> = (&mut reader).map(|e| e.unwrap().offset()).collect();
    let at = offsets[5] as usize;
    file[at] = 0x42;
    let mut reader = Reader::new(&file[..]);
    let read: Vec<_> = (&mut reader).collect();
    assert_eq!(read.len(), 6);
    let err = read[5].as_ref().unwrap_err();
    assert_eq!(err.offset(), at as u64);
    assert!(
        err.to_string().contains(&format!("damaged at byte {at}")),
        "{err}"
    );
    // A length past the cap.
    file[at] = F_RECORD;
    file[at + 1..at + 6].copy_from_slice(&[0xFF, 0xFF, 0xFF, 0xFF, 0x0F]);
    let err = Reader::new(&file[..]).nth(5).unwrap().unwrap_err();
    assert!(matches!(err.kind(), ReadErrorKind::TooLong(_)), "{err}");
}

/// A second header (a process appending to the file, or two files
/// concatenated) starts a new catalog scope: its call-site keys can mean
/// other things than the first part's.
#[test]
fn concatenated_files_read_as_one() {
    let items = workload();
    let one = binary_file(&items[..20]);
    let two = binary_file(&items[20..40]);
    let mut both = one.clone();
    both.extend_from_slice(&two);
    let make = Json::new();
    let mut want = render_file(&one, &make);
    want.extend(render_file(&two, &make));
    assert_eq!(render_file(&both, &make), want);
}

/// Entries of a file whose catalog is missing (keys no site frame
/// describes) render with an unknown call site, never as one of this
/// process's.
#[test]
fn a_key_without_its_entry_names_no_call_site_here() {
    let [key, _] = sites();
    let mut buf = EventBuf::new();
    buf.begin_at(1_795_392_000_000_000_000, key);
    buf.str(FieldName::Index(0), "m");
    let payload = buf.as_bytes();
    // Version 1: the key as the process had it.
    let mut file = header().to_vec();
    file[8] = 1;
    file.push(F_RECORD);
    file.extend_from_slice(&((payload.len() + 3) as u32).to_le_bytes());
    file.extend_from_slice(&[0, Level::Info as u8, kind::EVENT]);
    file.extend_from_slice(payload);
    let entry = Reader::new(&file[..]).next().unwrap().unwrap();
    assert_eq!(entry.target(), "?");
    // Version 2, the event as the ring holds it and compact: a site
    // number no frame gives.
    let head = (Level::Info as u8) << LEVEL_SHIFT;
    let mut file = header().to_vec();
    file.push(F_RECORD);
    compact::put_varint(&mut file, payload.len() as u64 + 1);
    file.push(head);
    file.extend_from_slice(payload);
    let entry = Reader::new(&file[..]).next().unwrap().unwrap();
    assert_eq!(entry.target(), "?");
    let mut body = vec![head | FLAG_COMPACT];
    assert!(compact::encode(
        payload,
        1_795_392_000_000_000_000,
        0,
        &mut Numbered(7),
        &mut body
    ));
    let mut file = header().to_vec();
    file.push(F_RECORD);
    compact::put_varint(&mut file, body.len() as u64);
    file.extend_from_slice(&body);
    let entry = Reader::new(&file[..]).next().unwrap().unwrap();
    assert_eq!(entry.target(), "?");
    assert_eq!(entry.time_nanos(), Some(1_795_392_000_000_000_000));
}

#[test]
fn entries_answer_the_filters_questions() {
    let [key, _] = sites();
    let mut buf = EventBuf::new();
    buf.begin_at(1_795_392_000_000_000_000, key);
    buf.begin_span(SiteKey::of(&SPAN));
    buf.str(FieldName::Index(0), "10.0.0.1");
    buf.end_span();
    buf.str(FieldName::Index(2), "ann");
    buf.u64(FieldName::Index(4), 7);
    let (_, _, entry) = one_event(buf.as_bytes());
    assert_eq!(entry.target(), "app::db");
    assert_eq!(entry.time_nanos(), Some(1_795_392_000_000_000_000));
    assert_eq!(entry.field("user").as_deref(), Some("ann"));
    assert_eq!(entry.field("n").as_deref(), Some("7"));
    assert_eq!(entry.field("peer").as_deref(), Some("10.0.0.1"));
    assert_eq!(entry.field("missing"), None);
}

/// The compact form's fuzz target holds over the workload's events, their
/// compact bodies, and bytes that are neither.
#[test]
fn the_compact_fuzz_target_holds_over_the_workload() {
    let mut next = crate::format::test_rng();
    let step = if cfg!(miri) { 29 } else { 1 };
    for item in workload().into_iter().step_by(step) {
        let Item::Record(_, kind::EVENT, payload, _) = item else {
            continue;
        };
        let time = u64::from_le_bytes(payload[..8].try_into().unwrap());
        let mut input = vec![(time % 251) as u8];
        input.extend_from_slice(&payload);
        fuzz_compact(&input);
        let mut body = vec![input[0]];
        let prev = u64::from(input[0]).wrapping_mul(0x0123_4567_89AB_CDEF);
        if compact::encode(&payload, time, prev, &mut compact::AsIs, &mut body) {
            fuzz_compact(&body);
            // One byte changed anywhere.
            let at = 1 + next(body.len() as u64 - 1) as usize;
            body[at] ^= 1 << next(8);
            fuzz_compact(&body);
        }
        let noise: Vec<u8> = (0..next(64)).map(|_| next(256) as u8).collect();
        fuzz_compact(&noise);
    }
}

/// Names every call site by one number, for the compact encoder alone.
struct Numbered(u64);

impl compact::Names for Numbered {
    fn site(&mut self, _key: u64) -> u64 {
        self.0
    }
    fn thread(&mut self, _number: u32) {}
}

/// Every event the writer is handed reads back byte for byte from its
/// compact form (its time already wall-clock), whatever time it follows;
/// what the compact form refuses is what the event decoder finds
/// malformed, and it is refused whole.
#[test]
fn compact_events_read_back_byte_for_byte() {
    let mut compact = 0;
    let mut refused = 0;
    let mut prev = 1_795_392_000_000_000_000u64;
    let step = if cfg!(miri) { 29 } else { 1 };
    for item in workload().into_iter().step_by(step) {
        let Item::Record(_, kind::EVENT, payload, _) = item else {
            continue;
        };
        let time = u64::from_le_bytes(payload[..8].try_into().unwrap());
        let mut out = vec![0xAA];
        if compact::encode(&payload, time, prev, &mut compact::AsIs, &mut out) {
            compact += 1;
            let mut back = vec![0x55];
            assert_eq!(
                compact::decode(&out[1..], prev, &compact::AsIs, &mut back),
                Some(time)
            );
            assert_eq!(back[1..], payload[..]);
            assert!(out.len() - 1 < payload.len(), "not smaller");
            // A body cut anywhere decodes to nothing, and leaves the
            // output as it was.
            for cut in 1..out.len() - 1 {
                let mut back = vec![0x55];
                let whole = compact::decode(&out[1..cut], prev, &compact::AsIs, &mut back);
                assert!(whole.is_none() || back.len() > 1, "cut at {cut}");
                if whole.is_none() {
                    assert_eq!(back, [0x55]);
                }
            }
            prev = time;
        } else {
            refused += 1;
            assert_eq!(out, [0xAA]);
            let event = crate::event::Event::parse(&payload);
            let malformed = event.is_none_or(|e| {
                e.items().any(|i| match i {
                    crate::event::Item::Malformed => true,
                    crate::event::Item::Span { fields, .. } => fields
                        .items()
                        .any(|f| !matches!(f, crate::event::Item::Field { .. })),
                    _ => false,
                })
            });
            assert!(malformed, "a well-formed event refused: {payload:?}");
        }
    }
    assert!(compact > 500 / step, "{compact} compact, {refused} refused");
}

/// Lengths past one varint byte: a record of 300 bytes and more, a span
/// whose fields take 200; both read back as written.
#[test]
fn long_records_and_spans_read_back() {
    let [key, _] = sites();
    let long = "x".repeat(300);
    let mut buf = EventBuf::new();
    buf.begin_at(1_795_392_000_000_000_000, key);
    buf.begin_span(SiteKey::of(&SPAN));
    buf.str(FieldName::Index(0), &"p".repeat(200));
    buf.end_span();
    buf.str(FieldName::Index(2), &long);
    let (items, file, entry) = one_event(buf.as_bytes());
    assert_eq!(entry.field("user").as_deref(), Some(long.as_str()));
    assert_eq!(entry.field("peer"), Some("p".repeat(200)));
    for (what, make) in formats() {
        let mut direct = make.make_format(&SinkInfo::new("cat", false));
        let mut want = Vec::new();
        feed(&mut *direct, &items, &mut want);
        assert_eq!(render_file(&file, &*make), want, "{what}");
    }
}

/// The request line of the repository's binary_sink benchmark (three
/// fields and a deferred message with two numbers) takes 40 bytes or
/// fewer on disk, a third of its text line.
#[test]
fn a_request_event_is_a_third_of_its_text_line() {
    static REQUEST: u8 = 0;
    let key = SiteKey::of(&REQUEST);
    register_callsite(
        key,
        Callsite::new(Level::Info, "app::http", "event")
            .fields(vec!["status", "user", "latency_us", "message"])
            .message_format("GET /api/v1/items/{} seq={}"),
    );
    let event = |time: u64, seq: u64| {
        let mut buf = EventBuf::new();
        buf.begin_at(time, key);
        buf.u64(FieldName::Index(0), 200);
        buf.str(FieldName::Index(1), "u1234");
        buf.u64(FieldName::Index(2), 4_321);
        buf.args(FieldName::Index(3), 2);
        buf.arg_u64(54_321);
        buf.arg_u64(seq);
        buf.as_bytes().to_vec()
    };
    let items: Vec<Item> = (0..1000u64)
        .map(|i| {
            let time = 1_795_392_000_000_000_000 + i * 2_500;
            Item::Record(Level::Info, kind::EVENT, event(time, 1_000_000 + i), false)
        })
        .collect();
    let mut format = BinaryFormat::default();
    let mut first = Vec::new();
    feed(&mut format, &items[..1], &mut first);
    let mut rest = Vec::new();
    feed(&mut format, &items[1..], &mut rest);
    let per_record = rest.len() as f64 / 999.0;
    let mut text = Vec::new();
    let mut direct = Text::new()
        .with_ansi(false)
        .make_format(&SinkInfo::new("t", false));
    feed(&mut *direct, &items[1..], &mut text);
    let text_per_record = text.len() as f64 / 999.0;
    eprintln!("{per_record:.1} bytes a record, text {text_per_record:.1}");
    assert!(
        per_record <= 40.0 && per_record * 3.0 <= text_per_record,
        "{per_record} bytes a record, text {text_per_record}"
    );
}

/// A file started in front of records the sink formatted before (a
/// rotation while they wait to be written) reads their times right: the
/// anchor it starts with counts back over them.
#[test]
fn a_file_started_in_front_of_unsent_records_reads_their_times() {
    let items: Vec<Item> = workload().into_iter().take(120).collect();
    let at = 1_795_392_009_000_000_000;
    let mut format = BinaryFormat::default();
    let mut first = Vec::new();
    let mut unsent = Vec::new();
    let mut second = Vec::new();
    crate::format::with_render_time(at, || {
        format.file_start(&mut first, &[]);
        feed(&mut format, &items[..60], &mut first);
        feed(&mut format, &items[60..], &mut unsent);
        format.file_start(&mut second, &unsent);
    });
    second.extend_from_slice(&unsent);
    let times = |file: &[u8]| -> Vec<Option<u64>> {
        Reader::new(file)
            .map(|e| e.unwrap())
            .filter(|e| !e.is_notice())
            .map(|e| e.time_nanos())
            .collect()
    };
    let want: Vec<Option<u64>> = items[60..]
        .iter()
        .filter_map(|i| match i {
            Item::Record(_, kind::EVENT, p, _) => {
                Some(crate::event::Event::parse(p).map(|e| e.time_nanos()))
            }
            Item::Record(..) => Some(None),
            Item::Notice(..) => None,
        })
        .collect();
    let got = times(&second);
    assert_eq!(got.len(), want.len());
    for (g, w) in got.iter().zip(&want) {
        if w.is_some() {
            assert_eq!(g, w);
        }
    }
    // And started as if nothing followed, the same bytes would not read
    // right: the test is not blind.
    let mut blind = Vec::new();
    format.file_start(&mut blind, &[]);
    blind.extend_from_slice(&unsent);
    assert_ne!(times(&blind), got);
    // The same through the formats: what each would have written.
    for (what, make) in formats() {
        let mut direct = make.make_format(&SinkInfo::new("cat", false));
        let mut want = Vec::new();
        crate::format::with_render_time(at, || feed(&mut *direct, &items[60..], &mut want));
        let got = render_file(&second, &*make);
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&want),
            "{what}"
        );
    }
}

/// Writes the committed sample of this format version
/// (`tests/data/binary-vN.nwb`, read by `tests/binary_compat.rs`) and, next
/// to it, its renderings by this build, which that test then holds every
/// later build to. Run when the format version changes: the new sample
/// goes beside the old ones, which stay.
#[test]
#[ignore = "writes the committed sample file: run with --ignored to make one"]
fn write_the_sample_of_this_version() {
    let items: Vec<Item> = workload().into_iter().skip(560).collect();
    let at = 1_795_392_009_000_000_000;
    let file = crate::format::with_render_time(at, || binary_file(&items));
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    std::fs::create_dir_all(&dir).unwrap();
    let name = format!("binary-v{VERSION}");
    std::fs::write(dir.join(format!("{name}.nwb")), &file).unwrap();
    let text = Text::new()
        .with_ansi(false)
        .with_thread_names(true)
        .with_thread_ids(true)
        .with_file(true)
        .with_line_number(true)
        .with_trace_ids(true);
    let json = Json::new()
        .with_thread_names(true)
        .with_thread_ids(true)
        .with_file(true)
        .with_line_number(true)
        .with_trace_ids(true);
    for (suffix, make) in [
        ("txt", &text as &dyn MakeFormat),
        ("json", &json),
        ("nowait.json", &Json::nowait_schema()),
    ] {
        std::fs::write(
            dir.join(format!("{name}.{suffix}")),
            render_file(&file, make),
        )
        .unwrap();
    }
}

/// Writes seeds for the fuzz targets that read this version's files
/// (`fuzz/corpus/binary_read/`, `fuzz/corpus/binary_compact/`).
#[test]
#[ignore = "writes fuzz seeds: run with --ignored to make them"]
fn write_the_fuzz_seeds_of_this_version() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus");
    let items = workload();
    let at = 1_795_392_009_000_000_000;
    let read = root.join("binary_read");
    for (i, range) in [(0, 0..12), (1, 100..140), (2, 590..items.len())] {
        let file = crate::format::with_render_time(at, || binary_file(&items[range]));
        let mut seed = vec![[1u8, 7, 255][i]];
        seed.extend_from_slice(&file);
        std::fs::write(read.join(format!("v{VERSION}-{i}")), seed).unwrap();
    }
    let compact = root.join("binary_compact");
    std::fs::create_dir_all(&compact).unwrap();
    let mut n = 0;
    for item in items.iter().step_by(23) {
        let Item::Record(_, kind::EVENT, payload, _) = item else {
            continue;
        };
        let time = u64::from_le_bytes(payload[..8].try_into().unwrap());
        let mut body = vec![3];
        if compact::encode(payload, time, 0, &mut compact::AsIs, &mut body) {
            std::fs::write(compact.join(format!("body-{n}")), &body).unwrap();
        }
        let mut raw = vec![3];
        raw.extend_from_slice(payload);
        std::fs::write(compact.join(format!("payload-{n}")), &raw).unwrap();
        n += 1;
    }
}
