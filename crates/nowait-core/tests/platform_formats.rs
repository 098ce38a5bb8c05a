//! The platform layouts checked by the platforms' own readers, on one
//! corpus of events (call-site and inline, deferred messages, spans nested
//! and recorded again, trace contexts, every value type, field names that
//! clash with every layout's own keys, values with quotes, `=`, spaces,
//! controls, line separators, bidi controls and emoji, random events),
//! text records, other kinds, a malformed event and notices, each through
//! `format` and `format_kept`:
//!
//! * `Json::ecs()`: `platform/ecs_validate.js`, on the ECS field list of
//!   the npm package `@elastic/ecs` and the ecs-logging specification's
//!   key order and types;
//! * `Json::cloud_logging()`: `platform/cloud_logging_validate.py`, which
//!   moves the structured-logging special fields into a `LogEntry` as
//!   Cloud Logging's agents do and parses it with `google-cloud-logging`'s
//!   `LogEntry` type;
//! * `Logfmt`: go-logfmt's decoder (`platform/logfmt_decode`), whose
//!   values must be the values logged;
//! * JSON with fixed and flattened fields: `serde_json`, with no key twice.
//!
//! Each test installs its tool if it can (npm, pip, the Go module proxy;
//! `ci/deps-formats.sh` does it for CI) and otherwise says why and passes,
//! unless `NOWAIT_REQUIRE_TEST_TOOLS=1`. Each validator is also shown a
//! bad line, which it must refuse.
#![cfg(all(unix, not(miri)))] // child processes

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::SystemTime;

use nowait_core::__private::event::{register_callsite, EventBuf};
use nowait_core::event::{Callsite, FieldName, SiteKey, TraceContext};
use nowait_core::format::{Json, Logfmt, MakeFormat, SinkInfo};
use nowait_core::record::{kind, Notice, Record, SuppressReason, Suppressed};
use nowait_core::Level;

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/platform");

/// Field names that clash with some layout's own keys or ECS objects, or
/// that a logfmt key cannot hold as they are.
const NAMES: [&str; 30] = [
    "level",
    "message",
    "msg",
    "time",
    "timestamp",
    "target",
    "trace_id",
    "span_id",
    "severity",
    "logging.googleapis.com/trace",
    "httpRequest",
    "error",
    "log",
    "host",
    "log.level",
    "message.x",
    "@timestamp",
    "ecs.version",
    "trace.id",
    "span.id",
    "labels",
    "fields",
    "fields.level",
    "a b",
    "k=v",
    "q\"",
    "",
    "backtrace",
    "service",
    "status",
];

/// Values no layout may write raw.
const VALUES: [&str; 16] = [
    "",
    " ",
    "=",
    "\"",
    "\\",
    "a\nb\r\n",
    "x\u{202e}gnp.exe",
    "line\u{2028}sep",
    "é😀",
    "\x1b[31mred",
    "\x7f\u{85}",
    "tab\there",
    "k=v x=\"y\"",
    "plain",
    "{\"json\":1}",
    "-",
];

static SITE: u8 = 0;
static BARE: u8 = 0;
static OUTER: u8 = 0;
static INNER: u8 = 0;

fn sites() -> [SiteKey; 4] {
    let keys = [
        SiteKey::of(&SITE),
        SiteKey::of(&BARE),
        SiteKey::of(&OUTER),
        SiteKey::of(&INNER),
    ];
    register_callsite(
        keys[0],
        Callsite::new(Level::Info, "app::http", "event")
            .fields(vec![
                "message", "status", "path", "ratio", "ok", "c", "error",
            ])
            .location(Some("app::http"), Some("src/http.rs"), Some(42))
            .message_format("GET {} {:>4}"),
    );
    register_callsite(
        keys[1],
        Callsite::new(Level::Warn, "app", "event")
            .fields(vec!["message", "message"])
            .location(Some("app"), Some("src/main.rs"), Some(7))
            .message_format("done \"now\"\n"),
    );
    register_callsite(
        keys[2],
        Callsite::new(Level::Info, "app", "request").fields(vec!["id", "user"]),
    );
    register_callsite(
        keys[3],
        Callsite::new(Level::Info, "app", "db.query").fields(vec!["id", "user"]),
    );
    keys
}

/// A seeded xorshift generator; `next(n)` is in `0..n`.
fn rng() -> impl FnMut(usize) -> usize {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    move |n| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    }
}

/// What one record holds that a reader can check: the message and the
/// value of each field by name (the first one of each name: the one that
/// keeps its key in every layout that does not rename it).
#[derive(Debug, Default, Clone)]
struct Expect {
    message: Option<String>,
}

fn corpus() -> Vec<(Level, u8, Vec<u8>, Expect)> {
    let [site, bare, outer, inner] = sites();
    let t0 = 1_795_392_000_000_001_000;
    let mut out = Vec::new();
    let mut buf = EventBuf::new();
    // A call site's event: deferred message, every value type, two
    // spans with the same field names, one recorded again, a sampled
    // trace context, the thread.
    buf.begin_at(t0, site);
    buf.thread();
    buf.trace_context(TraceContext::new([0x4b; 16], [0x0f; 8], 1));
    buf.begin_span(outer);
    buf.u64(FieldName::Index(0), 1);
    buf.str(FieldName::Index(1), "alice");
    buf.end_span();
    buf.begin_span(inner);
    buf.u64(FieldName::Index(0), 2);
    buf.str(FieldName::Index(1), "bob");
    buf.u64(FieldName::Index(0), 3);
    buf.end_span();
    buf.args(FieldName::Index(0), 2);
    buf.arg_str("/x");
    buf.arg_u64(200);
    buf.i64(FieldName::Index(1), -1);
    buf.str(FieldName::Index(2), "/a\"b");
    buf.f64(FieldName::Index(3), 0.5);
    buf.bool(FieldName::Index(4), true);
    buf.char(FieldName::Index(5), 'z');
    buf.str(FieldName::Index(6), "timeout");
    buf.f64(FieldName::Inline("nan"), f64::NAN);
    buf.rendered(FieldName::Inline("dbg"), format_args!("{:?}", [1, 2]))
        .unwrap();
    out.push((
        Level::Info,
        kind::EVENT,
        buf.as_bytes().to_vec(),
        Expect {
            message: Some("GET /x  200".into()),
        },
    ));
    // A literal message, then the call site's second `message` field.
    buf.clear();
    buf.begin_at(t0 + 1, bare);
    buf.trace_context(TraceContext::new([0xab; 16], [0xcd; 8], 0));
    buf.args(FieldName::Index(0), 0);
    buf.str(FieldName::Index(1), "second");
    out.push((
        Level::Warn,
        kind::EVENT,
        buf.as_bytes().to_vec(),
        Expect {
            message: Some("done \"now\"\n".into()),
        },
    ));
    // Every clashing name with a hostile value, inline target and message.
    buf.clear();
    buf.begin_inline(t0 + 2, "app\x1b[2J\n\u{202e}");
    buf.str(FieldName::Inline("message"), "user \"x\"\nlogged\u{2029}in");
    for (i, name) in NAMES.iter().enumerate() {
        buf.str(FieldName::Inline(name), VALUES[i % VALUES.len()]);
    }
    out.push((
        Level::Error,
        kind::EVENT,
        buf.as_bytes().to_vec(),
        Expect {
            message: Some("user \"x\"\nlogged\u{2029}in".into()),
        },
    ));
    // No message, no site, a span named like a key.
    buf.clear();
    buf.begin_inline(t0 + 3, "");
    buf.begin_span(outer);
    buf.str(FieldName::Inline("level"), "span-level");
    buf.end_span();
    buf.u64(FieldName::Inline("level"), 9);
    out.push((
        Level::Trace,
        kind::EVENT,
        buf.as_bytes().to_vec(),
        Expect::default(),
    ));
    // Random events.
    let mut next = rng();
    for i in 0..300u64 {
        buf.clear();
        let with_site = next(2) == 0;
        if with_site {
            buf.begin_at(t0 + 10 + i, site);
        } else {
            buf.begin_inline(t0 + 10 + i, NAMES[next(NAMES.len())]);
        }
        if next(3) == 0 {
            buf.trace_context(TraceContext::new([i as u8; 16], [7; 8], next(2) as u8));
        }
        for _ in 0..next(3) {
            buf.begin_span([outer, inner][next(2)]);
            for _ in 0..next(4) {
                match next(3) {
                    0 => buf.u64(FieldName::Index(next(3)), next(100) as u64),
                    1 => buf.str(FieldName::Index(1), VALUES[next(VALUES.len())]),
                    _ => buf.str(FieldName::Inline(NAMES[next(NAMES.len())]), "s"),
                }
            }
            buf.end_span();
        }
        for _ in 0..next(8) {
            let name = FieldName::Inline(NAMES[next(NAMES.len())]);
            match next(6) {
                0 => buf.u64(name, next(1000) as u64),
                1 => buf.i64(name, -(next(1000) as i64)),
                2 => buf.f64(name, next(1000) as f64 / 7.0),
                3 => buf.bool(name, next(2) == 0),
                4 => buf.char(name, ['\u{1b}', 'é', '"', '='][next(4)]),
                _ => buf.str(name, VALUES[next(VALUES.len())]),
            }
        }
        let level = Level::ALL[next(5)];
        out.push((
            level,
            kind::EVENT,
            buf.as_bytes().to_vec(),
            Expect::default(),
        ));
    }
    // A text record, another kind, a malformed event.
    let text = "plain \"text\" a=b\n\u{202e}".as_bytes().to_vec();
    out.push((
        Level::Info,
        kind::TEXT,
        text,
        Expect {
            message: Some("plain \"text\" a=b\n\u{202e}".into()),
        },
    ));
    out.push((Level::Info, 77, b"x".to_vec(), Expect::default()));
    let mut cut = out[0].2.clone();
    cut.truncate(cut.len() - 3);
    out.push((Level::Warn, kind::EVENT, cut, Expect::default()));
    out
}

/// Every record of the corpus, each through `format` and `format_kept`,
/// then two notices: one line each. Returns the lines and, per line, the
/// corpus entry's expectations.
fn render(make: &dyn MakeFormat) -> (String, Vec<Expect>) {
    let mut format = make.make_format(&SinkInfo::new("test", false));
    let mut out = Vec::new();
    let mut expect = Vec::new();
    for (level, kind, payload, e) in corpus() {
        let record = Record::new(level, kind, &payload);
        for kept in [false, true] {
            let start = out.len();
            if kept {
                format.format_kept(&record, &mut out);
            } else {
                format.format(&record, &mut out);
            }
            let line = &out[start..];
            assert_eq!(
                line.iter().filter(|&&b| b == b'\n').count(),
                1,
                "not one line: {:?}",
                String::from_utf8_lossy(line)
            );
            assert!(line.ends_with(b"\n"));
            expect.push(e.clone());
        }
    }
    let time = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_795_392_000);
    format.notice(
        &Notice::new(Level::Warn, time, "12 records dropped (ring full)"),
        &mut out,
    );
    let s = Suppressed::new(3, "src/db.rs:88", SuppressReason::RateLimit, "1 per 1s");
    format.notice(
        &Notice::new(Level::Info, time, "suppressed 3 records").with_suppressed(s),
        &mut out,
    );
    expect.push(Expect {
        message: Some("12 records dropped (ring full)".into()),
    });
    expect.push(Expect {
        message: Some("suppressed 3 records".into()),
    });
    (String::from_utf8(out).expect("UTF-8"), expect)
}

fn skip(why: &str) {
    nowait_testkit::skip_missing_tool(&format!("{why} (run ci/deps-formats.sh)"));
}

/// Runs `cmd` with `input` on stdin; its status and stdout.
fn run(mut cmd: Command, input: &str) -> (bool, String) {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_owned();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let out = child.wait_with_output().expect("wait");
    writer.join().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

fn succeeds(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// One JSON object per line, parsed keeping every key, so that a key
/// written twice shows.
fn pairs(line: &str) -> Vec<(String, serde_json::Value)> {
    struct Pairs(Vec<(String, serde_json::Value)>);
    impl<'de> serde::Deserialize<'de> for Pairs {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Pairs, D::Error> {
            struct V;
            impl<'de> serde::de::Visitor<'de> for V {
                type Value = Pairs;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut m: A,
                ) -> Result<Pairs, A::Error> {
                    let mut v = Vec::new();
                    while let Some(kv) = m.next_entry()? {
                        v.push(kv);
                    }
                    Ok(Pairs(v))
                }
            }
            d.deserialize_map(V)
        }
    }
    serde_json::from_str::<Pairs>(line)
        .unwrap_or_else(|e| panic!("{e}: {line}"))
        .0
}

/// Every line is one JSON object without a key twice, whose message is
/// the one logged; `message_key` names it.
fn check_json(
    text: &str,
    expect: &[Expect],
    message_key: &str,
) -> Vec<BTreeMap<String, serde_json::Value>> {
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), expect.len());
    let mut docs = Vec::new();
    for (line, e) in lines.iter().zip(expect) {
        let p = pairs(line);
        let doc: BTreeMap<_, _> = p.iter().cloned().collect();
        assert_eq!(doc.len(), p.len(), "a key twice: {line}");
        if let Some(m) = &e.message {
            assert_eq!(doc[message_key].as_str(), Some(m.as_str()), "{line}");
        }
        docs.push(doc);
    }
    docs
}

fn ecs_ready() -> bool {
    let installed = || {
        let Ok(out) = Command::new("npm").args(["root", "-g"]).output() else {
            return false;
        };
        let root = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        Path::new(&root).join("@elastic/ecs/package.json").is_file()
    };
    if !succeeds("node", &["--version"]) {
        skip("node is not installed");
        return false;
    }
    if !installed() && !succeeds("npm", &["install", "-g", "--silent", "@elastic/ecs@9.4.0"]) {
        skip("the npm package @elastic/ecs could not be installed");
        return false;
    }
    installed()
}

#[test]
fn ecs_lines_pass_the_ecs_validator() {
    if !ecs_ready() {
        return;
    }
    let validate = |text: &str| {
        let mut cmd = Command::new("node");
        cmd.arg(format!("{DIR}/ecs_validate.js"));
        run(cmd, text)
    };
    // The validator refuses what ECS refuses.
    let bad = "{\"@timestamp\":\"2026-11-23T00:00:00.000001Z\",\"log.level\":\"info\",\
               \"ecs.version\":\"1.6.0\",\"error\":\"x\"}\n";
    assert!(
        !validate(bad).0,
        "the validator took a line with `error` a string"
    );
    for (json, traced) in [
        (Json::ecs(), true),
        (
            Json::ecs()
                .with_file(true)
                .with_line_number(true)
                .with_thread_names(true)
                .with_thread_ids(true)
                .field("service.name", "api")
                .field("service.version", "1.2.3")
                .field("service.environment", "prod\n")
                .field("error", "fixed")
                .fields_from_env([
                    ("nowait.path", "PATH"),
                    ("host.name", "NOWAIT_UNSET_VARIABLE"),
                ]),
            true,
        ),
        (Json::ecs().with_target(false).with_trace_ids(false), false),
    ] {
        let (text, expect) = render(&json);
        let docs = check_json(&text, &expect, "message");
        let trace = docs[0].get("trace.id").and_then(|t| t.as_str());
        let want = "4b".repeat(16);
        assert_eq!(trace, Some(want.as_str()).filter(|_| traced));
        let (ok, report) = validate(&text);
        assert!(ok, "{report}");
        eprintln!("{}", report.trim());
    }
}

fn cloud_logging_ready() -> bool {
    let installed = || succeeds("python3", &["-c", "import google.cloud.logging_v2.types"]);
    if installed() {
        return true;
    }
    let pip = |extra: &[&str]| {
        let mut args = vec!["-m", "pip", "install", "-q", "--disable-pip-version-check"];
        args.extend_from_slice(extra);
        args.push("google-cloud-logging==3.17.0");
        succeeds("python3", &args)
    };
    if !(pip(&[]) || pip(&["--break-system-packages"])) || !installed() {
        skip("the PyPI package google-cloud-logging could not be installed");
        return false;
    }
    true
}

#[test]
fn cloud_logging_lines_parse_as_log_entries() {
    if !cloud_logging_ready() {
        return;
    }
    let validate = |text: &str, project: Option<&str>| {
        let mut cmd = Command::new("python3");
        cmd.arg(format!("{DIR}/cloud_logging_validate.py"));
        cmd.args(project);
        run(cmd, text)
    };
    let bad = "{\"time\":\"2026-11-23T00:00:00.000001Z\",\"severity\":\"WARN\"}\n";
    assert!(!validate(bad, None).0, "the validator took severity WARN");
    for (json, project) in [
        (Json::cloud_logging(), None),
        (
            Json::cloud_logging()
                .with_cloud_project("my-project")
                .with_file(true)
                .with_line_number(true)
                .with_thread_names(true)
                .with_thread_ids(true)
                .field("service", "api")
                .field("severity", "fixed")
                .fields_from_env([("path", "PATH")]),
            Some("my-project"),
        ),
    ] {
        let (text, expect) = render(&json);
        let docs = check_json(&text, &expect, "message");
        assert_eq!(docs[0]["severity"], "INFO");
        assert_eq!(docs[0]["logging.googleapis.com/trace_sampled"], true);
        let (ok, report) = validate(&text, project);
        assert!(ok, "{report}");
        eprintln!("{}", report.trim());
    }
}

/// go-logfmt's decoder, built from `platform/logfmt_decode` (its module
/// from the Go module proxy).
fn logfmt_decoder() -> Option<PathBuf> {
    if !succeeds("go", &["version"]) {
        skip("Go is not installed");
        return None;
    }
    let bin = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("logfmt_decode");
    let built = Command::new("go")
        .args(["build", "-o"])
        .arg(&bin)
        .arg(".")
        .current_dir(format!("{DIR}/logfmt_decode"))
        .status()
        .is_ok_and(|s| s.success());
    if !built {
        skip("go-logfmt could not be built (the Go module proxy unreachable?)");
        return None;
    }
    Some(bin)
}

#[test]
fn logfmt_lines_round_trip_through_go_logfmt() {
    let Some(decoder) = logfmt_decoder() else {
        return;
    };
    // The decoder refuses a line logfmt cannot hold.
    assert!(!run(Command::new(&decoder), "a=\"unterminated\n").0);
    for logfmt in [
        Logfmt::new(),
        Logfmt::new()
            .with_file(true)
            .with_line_number(true)
            .with_thread_names(true)
            .with_thread_ids(true)
            .field("service", "api")
            .field("level", "fixed")
            .field("a b", "x y")
            .fields_from_env([("path", "PATH")]),
    ] {
        let (text, expect) = render(&logfmt);
        let (ok, decoded) = run(Command::new(&decoder), &text);
        assert!(ok, "{decoded}");
        let records: Vec<Vec<(String, String)>> = decoded
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(records.len(), lines.len(), "one record per line");
        for ((record, line), e) in records.iter().zip(&lines).zip(&expect) {
            let keys: BTreeMap<&str, &str> = record
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect();
            assert_eq!(keys.len(), record.len(), "a key twice: {line}");
            if let Some(m) = &e.message {
                assert_eq!(keys.get("msg"), Some(&m.as_str()), "{line}");
            }
        }
        // The hostile event: each name's value as logged, under the key
        // the rule gives it (the second configuration's fixed `level` and
        // `a b` take `fields.level` and `a_b` first).
        let fixed = logfmt_has_fixed(&records[4]);
        let (hostile, line) = (&records[4], lines[4]);
        let get = |k: &str| {
            hostile
                .iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.as_str())
        };
        let value = |i: usize| Some(VALUES[i % VALUES.len()]);
        assert_eq!(get("target"), Some("app\x1b[2J\n\u{202e}"), "{line}");
        assert_eq!(get("message"), value(1), "{line}");
        assert_eq!(get("fields.msg"), value(2), "{line}");
        assert_eq!(get("error"), value(11), "{line}");
        assert_eq!(get("k_v"), value(24), "{line}");
        assert_eq!(get("q_"), value(25), "{line}");
        assert_eq!(get("_"), value(26), "{line}");
        assert_eq!(get("status"), value(29), "{line}");
        if fixed {
            assert_eq!(get("fields.level"), Some("fixed"), "{line}");
            assert_eq!(get("fields_2.level"), value(0), "{line}");
            assert_eq!(get("a_b"), Some("x y"), "{line}");
            assert_eq!(get("fields.a_b"), value(23), "{line}");
        } else {
            assert_eq!(get("fields.level"), value(0), "{line}");
            assert_eq!(get("a_b"), value(23), "{line}");
        }
        eprintln!("{} lines decoded by go-logfmt v0.6.1", lines.len());
    }
}

/// Whether a decoded logfmt record has the fixed field `service=api`.
fn logfmt_has_fixed(record: &[(String, String)]) -> bool {
    record.iter().any(|(k, v)| k == "service" && v == "api")
}

#[test]
fn json_with_fixed_and_flattened_fields_round_trips_through_serde_json() {
    for json in [
        Json::new().field("service", "api").flatten_spans(true),
        Json::new()
            .field("service", "api")
            .field("level", "fixed")
            .field("fields", "fixed too")
            .flatten_event(true)
            .flatten_spans(true)
            .with_file(true)
            .with_line_number(true)
            .with_thread_names(true)
            .with_thread_ids(true),
        Json::new().field("service", "api").flatten_event(true),
    ] {
        let (text, expect) = render(&json);
        let flat = text.lines().all(|l| !l.contains("\"fields\":{"));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), expect.len());
        for (line, e) in lines.iter().zip(&expect) {
            let p = pairs(line);
            let doc: BTreeMap<_, _> = p.iter().cloned().collect();
            assert_eq!(doc.len(), p.len(), "a key twice: {line}");
            assert_eq!(doc["service"], "api", "{line}");
            let message = if flat {
                doc.get("message")
            } else {
                doc.get("fields").and_then(|f| f.get("message"))
            };
            // Unflattened, `fields` holds a second `message` as
            // `tracing-subscriber` writes it, and a map keeps the last.
            if let Some(m) = e.message.as_ref().filter(|_| flat) {
                assert_eq!(message.and_then(|m| m.as_str()), Some(m.as_str()), "{line}");
            }
        }
    }
}
