//! The OTLP sink against real receivers started here on loopback:
//!
//! * `otlp_receiver.py` (beside this file), which decodes every request
//!   with OpenTelemetry's own protobuf types (`opentelemetry-proto`) and
//!   answers as each test scripts it: fields checked exactly, 503 then
//!   recovery, 400, partial success, a receiver killed mid-run and started
//!   again, one that never answers. After each, every accepted record is
//!   accounted for exactly, per reason. The same four faults also run
//!   over TLS beside plain (`each_fault_is_counted_exactly_plain_and_over_tls`,
//!   which prints the table).
//! * rotel (`rotel-agent`, a Rust OpenTelemetry collector from PyPI),
//!   which proves an independent implementation takes our bytes.
//!
//! Receivers are stopped by their PID. Install both with
//! `ci/deps-otlp.sh`; without them these tests say why and pass, unless
//! `NOWAIT_REQUIRE_TEST_TOOLS=1`.
#![cfg(all(unix, feature = "otlp", not(miri)))] // processes and sockets

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use nowait_core::__private::event::{register_callsite, EventBuf};
use nowait_core::event::{Callsite, FieldName, SiteKey};
use nowait_core::format::Plain;
use nowait_core::record::kind;
use nowait_core::sink::Otlp;
use nowait_core::stats::SinkStats;
use nowait_core::{Builder, Level, Sink};
use nowait_testkit::ca::Ca;
use nowait_testkit::receiver::Receiver;
use nowait_testkit::MemoryWriter;

/// The tests run one at a time: [`Fault::Killed`] starts its second
/// receiver on the port the first one freed, which a receiver of a test
/// running beside it could otherwise be given.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn skip(why: &str) {
    nowait_testkit::skip_missing_tool(&format!("{why} (run ci/deps-otlp.sh)"));
}

/// One decoded request, as the receiver logged it.
#[derive(Debug)]
struct Request {
    status: u16,
    rejected: u64,
    gzip: bool,
    at: f64,
    head: String,
    /// `(mark, record)`: `REC` accepted, `REJ` refused for good, `NAK`
    /// not answered or to be retried.
    records: Vec<(String, String)>,
}

/// The receiver's requests, each with its records, from its output.
fn requests(rx: &Receiver) -> Vec<Request> {
    let mut reqs: Vec<Request> = Vec::new();
    for line in rx.output().lines() {
        let (mark, rest) = line.split_once(' ').unwrap();
        if mark == "TLSERR" {
            continue;
        }
        if mark == "REQ" {
            let w: Vec<&str> = rest.splitn(6, ' ').collect();
            reqs.push(Request {
                status: w[0].parse().unwrap(),
                rejected: w[1].parse().unwrap(),
                gzip: w[3] == "1",
                at: w[4].parse().unwrap(),
                head: w.get(5).unwrap_or(&"").to_string(),
                records: Vec::new(),
            });
        } else {
            let req = reqs.last_mut().unwrap();
            req.records.push((mark.to_owned(), rest.to_owned()));
        }
    }
    reqs
}

fn is_notice(rec: &str) -> bool {
    rec.contains("target=str:'nowait'")
}

/// The `seq` attribute of a record.
fn seq(rec: &str) -> Option<u64> {
    let at = rec.find("seq=int:")? + "seq=int:".len();
    rec[at..].split(['|', ' ']).next()?.parse().ok()
}

/// Every accepted record in exactly one outcome.
fn assert_accounted(s: &SinkStats, accepted: u64) {
    assert_eq!(nowait_testkit::outcomes(s), accepted, "{s:?}");
    assert!(s.dropped_rejected <= s.dropped_failed, "{s:?}");
}

/// Counts the records (not notices) by mark, and the seqs of the accepted.
fn tally(reqs: &[Request]) -> (BTreeMap<String, u64>, BTreeMap<u64, u32>) {
    let (mut marks, mut seqs) = (BTreeMap::new(), BTreeMap::new());
    for r in reqs {
        for (mark, rec) in &r.records {
            if is_notice(rec) {
                continue;
            }
            *marks.entry(mark.clone()).or_insert(0) += 1;
            if mark == "REC" {
                *seqs.entry(seq(rec).unwrap()).or_insert(0) += 1;
            }
        }
    }
    (marks, seqs)
}

fn log_seqs(logger: &nowait_core::Logger, range: std::ops::Range<u64>) {
    let mut buf = EventBuf::new();
    for i in range {
        buf.clear();
        buf.begin_inline(nowait_core::__private::event::timestamp(), "otlp_test");
        buf.str(FieldName::Inline("message"), "record");
        buf.u64(FieldName::Inline("seq"), i);
        nowait_core::__private::logger::push(logger, Level::Info, kind::EVENT, &[buf.as_bytes()])
            .unwrap();
    }
}

fn now_nanos() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

static SITE: u8 = 0;
static SPAN: u8 = 0;

/// Every field of a record, decoded by the official types, and the
/// request's resource and scope, exactly; plain and gzipped.
#[test]
fn fields_arrive_exactly_as_the_official_types_decode_them() {
    let _serial = serial();
    if !Receiver::available() {
        return;
    }
    register_callsite(
        SiteKey::of(&SITE),
        Callsite::new(Level::Info, "shop::cart", "event")
            .fields(vec![
                "message", "items", "delta", "ratio", "paid", "who", "trace_id", "span_id", "big",
                "c",
            ])
            .location(Some("shop::cart"), Some("src/cart.rs"), Some(42)),
    );
    register_callsite(
        SiteKey::of(&SPAN),
        Callsite::new(Level::Info, "shop", "request").fields(vec!["user"]),
    );
    for gzip in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let rx = Receiver::start(dir.path(), "ok", 0);
        let before = now_nanos();
        let (logger, guard) = Builder::new()
            .sink(Sink::otlp(
                Otlp::new(&rx.url())
                    .service_name("otlp-test")
                    .resource_attribute("deployment.environment", "ci")
                    .gzip(gzip),
            ))
            .build()
            .unwrap();
        let t = nowait_core::__private::event::timestamp();
        let mut buf = EventBuf::new();
        buf.begin_at(t, SiteKey::of(&SITE));
        buf.thread();
        buf.begin_span(SiteKey::of(&SPAN));
        buf.str(FieldName::Index(0), "ann");
        buf.end_span();
        buf.str(FieldName::Index(0), "added \u{1b}[31m\nline");
        buf.u64(FieldName::Index(1), 3);
        buf.i64(FieldName::Index(2), -7);
        buf.f64(FieldName::Index(3), 0.25);
        buf.bool(FieldName::Index(4), true);
        buf.str(FieldName::Index(5), "b\u{e9}a");
        buf.str(FieldName::Index(6), "4bf92f3577b34da6a3ce929d0e0e4736");
        buf.str(FieldName::Index(7), "00f067aa0ba902b7");
        buf.u64(FieldName::Index(8), u64::MAX);
        buf.char(FieldName::Index(9), 'x');
        nowait_core::__private::logger::push(&logger, Level::Warn, kind::EVENT, &[buf.as_bytes()])
            .unwrap();
        logger.log(Level::Error, "plain text").unwrap();
        drop(guard);
        let after = now_nanos();
        let stats = logger.stats();
        let s = &stats.sinks[0];
        assert_eq!((s.records_written, s.dropped()), (2, 0), "{s:?}");
        assert_eq!(s.name, format!("otlp:{}/v1/logs", rx.url()));
        let reqs = requests(&rx);
        let recs: Vec<_> = reqs.iter().flat_map(|r| r.records.iter()).collect();
        assert_eq!(recs.len(), 2, "{reqs:?}");
        for r in &reqs {
            assert_eq!(r.status, 200);
            assert_eq!(r.gzip, gzip);
            assert_eq!(
                r.head,
                format!(
                    "resource=service.name=str:'otlp-test'|deployment.environment=str:'ci' scope=nowait/{}",
                    env!("CARGO_PKG_VERSION")
                )
            );
        }
        // Times are checked apart, then blanked.
        let times = |rec: &str| -> (u64, u64, String) {
            let num = |key: &str| -> u64 {
                let at = rec.find(key).unwrap() + key.len();
                rec[at..].split(' ').next().unwrap().parse().unwrap()
            };
            let (time, observed) = (num(" time="), num(" observed="));
            let blank = rec
                .replace(&format!(" time={time} "), " time=T ")
                .replace(&format!(" observed={observed} "), " observed=O ");
            (time, observed, blank)
        };
        let (time, observed, event) = times(&recs[0].1);
        assert!(
            before <= time && time <= observed && observed <= after,
            "{before} {time} {observed} {after}"
        );
        let thread = std::thread::current();
        let thread = thread.name().unwrap();
        assert_eq!(
            event,
            format!(
                "sev=13 text=WARN body=str:'added \\x1b[31m\\nline' time=T observed=O \
                 trace=4bf92f3577b34da6a3ce929d0e0e4736 span=00f067aa0ba902b7 flags=0 \
                 attrs=items=int:3|delta=int:-7|ratio=double:0.25|paid=bool:True|who=str:'béa'|\
                 big=str:'18446744073709551615'|c=str:'x'|user=str:'ann'|target=str:'shop::cart'|\
                 code.filepath=str:'src/cart.rs'|code.lineno=int:42|thread.name=str:'{thread}'"
            )
        );
        let (time, observed, text) = times(&recs[1].1);
        assert!(before <= time && time <= observed && observed <= after);
        assert_eq!(
            text,
            "sev=17 text=ERROR body=str:'plain text' time=T observed=O trace= span= flags=0 attrs="
        );
        assert_eq!(recs[0].0, "REC");
    }
}

/// A receiver that takes the connection and the request and never
/// answers: the request times out, the sink sheds alone, counted; the
/// other sink gets everything and the shutdown keeps its bound.
#[test]
fn a_receiver_that_never_answers_sheds_alone() {
    let _serial = serial();
    if !Receiver::available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rx = Receiver::start(dir.path(), "hang", 0);
    let file = MemoryWriter::default();
    let (logger, guard) = Builder::new()
        .shutdown_timeout(Duration::from_secs(2))
        .sink(Sink::writer(file.clone()).format(Plain))
        .sink(
            Sink::otlp(Otlp::new(&rx.url()).timeout(Duration::from_millis(300)))
                .buffer_size(64 << 10),
        )
        .build()
        .unwrap();
    let total = 10_000;
    for i in 0..total / 100 {
        log_seqs(&logger, i * 100..(i + 1) * 100);
        std::thread::sleep(Duration::from_millis(10));
    }
    let t = Instant::now();
    drop(guard);
    let took = t.elapsed();
    assert!(took < Duration::from_millis(2500), "{took:?}");
    let stats = logger.stats();
    let s = &stats.sinks[1];
    assert_accounted(s, total);
    assert_eq!(s.records_written, 0, "{s:?}");
    assert!(s.dropped_overflow + s.dropped_failed > 0, "{s:?}");
    assert_eq!(stats.sinks[0].records_written, total);
    let text = file.take();
    assert!(
        text.contains("no answer from the OTLP receiver within 300 ms"),
        "{text}"
    );
    let reqs = requests(&rx);
    assert!(reqs
        .iter()
        .all(|r| r.records.iter().all(|(m, _)| m == "NAK")));
}

/// A receiver that requires an `Authorization` header: without it every
/// request is refused (401), its records counted as rejected and the
/// refusal reported; with it they all arrive with the header.
#[test]
fn a_required_authorization_header_401s_without_and_delivers_with() {
    let _serial = serial();
    if !Receiver::available() {
        return;
    }
    let secret = "Bearer t0ps3cr3t-value";
    let require = [format!("--require-header=Authorization:{secret}")];
    // Without it: refused, counted, reported without any secret.
    let dir = tempfile::tempdir().unwrap();
    let rx = Receiver::start_with(dir.path(), "ok", 0, &require);
    let others = MemoryWriter::default();
    let (logger, guard) = Builder::new()
        .sink(Sink::writer(others.clone()).format(Plain))
        .sink(Sink::otlp(
            Otlp::new(&rx.url()).header("X-Other", "Bearer wrong"),
        ))
        .build()
        .unwrap();
    log_seqs(&logger, 0..100);
    drop(guard);
    let s = &logger.stats().sinks[1];
    assert_accounted(s, 100);
    assert_eq!(s.records_written, 0, "{s:?}");
    assert_eq!(s.dropped_rejected, 100, "{s:?}");
    let reqs = requests(&rx);
    assert!(!reqs.is_empty() && reqs.iter().all(|r| r.status == 401));
    let text = others.take();
    assert!(text.contains("401 Unauthorized"), "{text}");
    assert!(!text.contains("wrong"), "{text}");
    // With it: every record arrives, and the value never shows.
    let dir = tempfile::tempdir().unwrap();
    let rx = Receiver::start_with(dir.path(), "ok", 0, &require);
    let otlp = Otlp::new(&rx.url()).header("Authorization", secret);
    assert!(!format!("{otlp:?}").contains("t0ps3cr3t"));
    let others = MemoryWriter::default();
    let (logger, guard) = Builder::new()
        .sink(Sink::writer(others.clone()).format(Plain))
        .sink(Sink::otlp(otlp))
        .build()
        .unwrap();
    log_seqs(&logger, 0..100);
    drop(guard);
    let s = &logger.stats().sinks[1];
    assert_accounted(s, 100);
    assert_eq!((s.records_written, s.dropped()), (100, 0), "{s:?}");
    let reqs = requests(&rx);
    assert!(reqs.iter().all(|r| r.status == 200), "{reqs:?}");
    assert_eq!(tally(&reqs).1.len(), 100);
    assert!(!others.take().contains("t0ps3cr3t"));
}

/// The sum of `N` over the "N record(s) dropped (...)" notices in `text`
/// whose line contains `what`, and how many such notices there are.
fn dropped_in_notices(text: &str, what: &str) -> (u64, usize) {
    let (mut sum, mut count) = (0, 0);
    for line in text.lines().filter(|l| l.contains(what)) {
        let Some(head) = line.find(" dropped (").map(|at| &line[..at]) else {
            continue;
        };
        let head = head
            .trim_end_matches(" records")
            .trim_end_matches(" record");
        let n: u64 = head.rsplit(' ').next().unwrap().parse().unwrap();
        sum += n;
        count += 1;
    }
    (sum, count)
}

/// A receiver refusing every request (a 401 for a missing credential):
/// each refusal is a write error with the receiver's answer as the last
/// error; the other sink gets one notice per interval, whose counts add
/// up to exactly what was refused; and no notice about the refusals is
/// sent to the receiver refusing them.
#[test]
fn refusals_are_coalesced_counted_as_errors_and_not_sent_to_the_refusing_sink() {
    let _serial = serial();
    if !Receiver::available() {
        return;
    }
    let require = [String::from("--require-header=Authorization:Bearer right")];
    let dir = tempfile::tempdir().unwrap();
    let rx = Receiver::start_with(dir.path(), "ok", 0, &require);
    let others = MemoryWriter::default();
    let (logger, guard) = Builder::new()
        .sink(Sink::writer(others.clone()).format(Plain))
        .sink(Sink::otlp(
            Otlp::new(&rx.url())
                .header("X-Other", "wrong")
                .max_batch_bytes(1024),
        ))
        .build()
        .unwrap();
    // About 2 s of records: dozens of refused requests.
    let total = 400;
    for i in 0..total / 20 {
        log_seqs(&logger, i * 20..(i + 1) * 20);
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(guard);
    let s = &logger.stats().sinks[1];
    assert_accounted(s, total);
    assert_eq!((s.records_written, s.dropped_rejected), (0, total), "{s:?}");
    let reqs = requests(&rx);
    assert!(reqs.len() >= 10, "{}", reqs.len());
    assert!(reqs.iter().all(|r| r.status == 401), "{reqs:?}");
    assert_eq!(s.write_errors, reqs.len() as u64, "{s:?}");
    let last = s.last_error.as_deref().unwrap_or("");
    assert!(last.contains("401 Unauthorized"), "{s:?}");
    assert!(
        reqs.iter()
            .flat_map(|r| &r.records)
            .all(|(_, rec)| !is_notice(rec)),
        "a notice went to the receiver refusing it: {reqs:?}"
    );
    let text = others.take();
    let (sum, notices) = dropped_in_notices(&text, "refused them");
    assert_eq!(sum, total, "{text}");
    assert!(
        (1..=4).contains(&notices),
        "{notices} notices for {} refused requests in about 2 s: {text}",
        reqs.len()
    );
    assert!(text.contains("401 Unauthorized"), "{text}");
    assert!(!text.contains("a request of 1 records"), "{text}");
    eprintln!(
        "{} refused requests, {notices} notices:\n{}",
        reqs.len(),
        text.lines()
            .filter(|l| l.contains("refused them"))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// A receiver that is down (nothing listens on its port): what the sink
/// sheds reaches the other sink within the notice interval, while the
/// receiver is still down, with counts that add up exactly; once the
/// receiver is back, the OTLP sink itself gets the summary.
#[test]
fn drops_of_a_failing_sink_reach_the_other_sinks_while_it_fails() {
    let _serial = serial();
    if !Receiver::available() {
        return;
    }
    let port = free_port();
    let others = MemoryWriter::default();
    let (logger, guard) = Builder::new()
        .sink(Sink::writer(others.clone()).format(Plain))
        .sink(Sink::otlp(Otlp::new(&format!("http://127.0.0.1:{port}"))).buffer_size(16 << 10))
        .build()
        .unwrap();
    let what = format!("dropped (sink otlp:http://127.0.0.1:{port}/v1/logs");
    let start = Instant::now();
    let mut sent = 0;
    let mut seen = None;
    while start.elapsed() < Duration::from_millis(2500) {
        log_seqs(&logger, sent..sent + 50);
        sent += 50;
        std::thread::sleep(Duration::from_millis(10));
        if seen.is_none() && others.text().contains(&what) {
            seen = Some(start.elapsed());
        }
    }
    let seen = seen.unwrap_or_else(|| panic!("no count while down: {}", others.text()));
    eprintln!(
        "first count while down after {seen:?}: {}",
        others.text().lines().find(|l| l.contains(&what)).unwrap()
    );
    assert!(seen < Duration::from_millis(2000), "{seen:?}");
    let down = logger.stats().sinks[1].clone();
    assert!(
        down.dropped_failed > 0 && down.records_written == 0,
        "{down:?}"
    );
    // The receiver comes back on the same port.
    let dir = tempfile::tempdir().unwrap();
    let rx = Receiver::start(dir.path(), "ok", port);
    let begun = Instant::now();
    loop {
        log_seqs(&logger, sent..sent + 10);
        sent += 10;
        std::thread::sleep(Duration::from_millis(50));
        let s = &logger.stats().sinks[1];
        if s.records_written > 0 && s.pending_bytes == 0 {
            break;
        }
        assert!(begun.elapsed() < Duration::from_secs(15), "{s:?}");
    }
    drop(guard);
    let s = &logger.stats().sinks[1];
    assert_accounted(s, sent);
    let text = others.take();
    let (sum, _) = dropped_in_notices(&text, &what);
    assert_eq!(sum, s.dropped_overflow + s.dropped_failed, "{s:?} {text}");
    let to_itself: u64 = requests(&rx)
        .iter()
        .flat_map(|r| &r.records)
        .filter(|(_, rec)| is_notice(rec) && rec.contains(&what))
        .map(|(_, rec)| {
            let head = &rec[..rec.find(" dropped (").unwrap()];
            let n = head.rsplit('\'').next().unwrap();
            let n = n.trim_end_matches(" records").trim_end_matches(" record");
            n.parse::<u64>().unwrap()
        })
        .sum();
    assert_eq!(
        to_itself,
        s.dropped_overflow + s.dropped_failed,
        "the summary, once back"
    );
}

/// Shutting down with a sink whose every attempt fails (nothing listens):
/// a few attempts with back-off, not one every few milliseconds, and the
/// notice gives the true reason, not a timeout that did not happen.
#[test]
fn shutdown_gives_a_failing_sink_a_few_attempts_and_says_why_it_gave_up() {
    let _serial = serial();
    let port = free_port();
    let others = MemoryWriter::default();
    let (logger, guard) = Builder::new()
        .shutdown_timeout(Duration::from_secs(5))
        .sink(Sink::writer(others.clone()).format(Plain))
        .sink(Sink::otlp(Otlp::new(&format!("http://127.0.0.1:{port}"))))
        .build()
        .unwrap();
    log_seqs(&logger, 0..100);
    let begun = Instant::now();
    while logger.stats().sinks[1].write_errors == 0 {
        assert!(begun.elapsed() < Duration::from_secs(5));
        std::thread::sleep(Duration::from_millis(5));
    }
    let before = logger.stats().sinks[1].write_errors;
    let t = Instant::now();
    drop(guard);
    let took = t.elapsed();
    let s = &logger.stats().sinks[1];
    assert_accounted(s, 100);
    let attempts = s.write_errors - before;
    assert!(
        (1..=5).contains(&attempts),
        "{attempts} attempts in {took:?}"
    );
    assert!(took < Duration::from_secs(1), "{took:?}");
    let text = others.take();
    assert!(!text.contains("timed out"), "{text}");
    let notice = text
        .lines()
        .find(|l| l.contains("gave up after"))
        .unwrap_or_else(|| panic!("{text}"));
    eprintln!("{attempts} attempts in {took:?}: {notice}");
    assert!(notice.contains("100 pending for sink otlp:"), "{notice}");
    assert!(notice.contains("refused"), "the reason: {notice}");
}

/// The `Debug` output of an `Otlp` names its headers, never their values.
#[test]
fn debug_output_hides_header_values() {
    let otlp = Otlp::new("http://127.0.0.1:4318").header("Authorization", "Basic QWxhZGRpbjpvcGVu");
    let debug = format!("{otlp:?}");
    assert!(debug.contains("Authorization"), "{debug}");
    assert!(!debug.contains("QWxhZGRpbjpvcGVu"), "{debug}");
}

/// Credentials over plain HTTP through the public API: `build` refuses
/// them to an address that is not loopback (naming the header, never its
/// value); to loopback it builds, and every sink's output says so once,
/// at build, without the value; the opt-in builds silently.
#[test]
fn credentials_in_clear_are_refused_or_warned_about_once() {
    let _serial = serial();
    let err = Builder::new()
        .sink(Sink::otlp(
            Otlp::new("http://192.0.2.1:4318").header("X-Api-Key", "s3cr3t-key"),
        ))
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("X-Api-Key") && err.contains("https://"),
        "{err}"
    );
    assert!(!err.contains("s3cr3t"), "{err}");
    // Nothing listens on the port: only the other sink's output matters.
    let loopback = format!("http://127.0.0.1:{}", free_port());
    for (allow, warnings) in [(false, 1), (true, 0)] {
        let others = MemoryWriter::default();
        let (logger, guard) = Builder::new()
            .shutdown_timeout(Duration::from_millis(500))
            .sink(Sink::writer(others.clone()).format(Plain))
            .sink(Sink::otlp(
                Otlp::new(&loopback)
                    .header("Authorization", "Bearer s3cr3t")
                    .allow_plaintext_credentials(allow)
                    .timeout(Duration::from_millis(200)),
            ))
            .build()
            .unwrap();
        log_seqs(&logger, 0..3);
        let _ = logger.flush();
        drop(guard);
        let text = others.take();
        assert_eq!(text.matches("go in clear").count(), warnings, "{text}");
        if warnings > 0 {
            assert!(
                text.contains("Authorization") && text.contains(&loopback),
                "{text}"
            );
        }
        assert!(!text.contains("s3cr3t"), "{text}");
    }
}

// === TLS ===

/// `https://` receivers: the tests' receiver wrapped in Python's `ssl`,
/// with certificates made here by rcgen.
#[cfg(feature = "otlp-tls")]
mod tls {
    use super::*;

    /// Writes the server's certificate and key (and the CA its clients
    /// must show, for mTLS) and starts the receiver over TLS.
    fn start(
        dir: &Path,
        server: &(String, String),
        client_ca: Option<&Ca>,
        script: &str,
    ) -> Receiver {
        start_on(dir, server, client_ca, script, 0)
    }

    /// [`start`] on `port` (0: a free one).
    pub(super) fn start_on(
        dir: &Path,
        server: &(String, String),
        client_ca: Option<&Ca>,
        script: &str,
        port: u16,
    ) -> Receiver {
        let (cert, key) = (dir.join("server.pem"), dir.join("server.key"));
        std::fs::write(&cert, &server.0).unwrap();
        std::fs::write(&key, &server.1).unwrap();
        let mut tls = format!("--tls={},{}", cert.display(), key.display());
        if let Some(ca) = client_ca {
            let path = dir.join("client-ca.pem");
            std::fs::write(&path, ca.pem()).unwrap();
            tls += &format!(",{}", path.display());
        }
        Receiver::start_with(dir, script, port, &[tls])
    }

    pub(super) fn https(rx: &Receiver) -> String {
        format!("https://127.0.0.1:{}", rx.port)
    }

    /// Sends 100 records through `otlp` beside a memory sink: the OTLP
    /// sink's stats and the memory sink's text (the notices).
    fn send(otlp: Otlp) -> (SinkStats, String) {
        let others = MemoryWriter::default();
        let (logger, guard) = Builder::new()
            .shutdown_timeout(Duration::from_secs(2))
            .sink(Sink::writer(others.clone()).format(Plain))
            .sink(Sink::otlp(otlp.timeout(Duration::from_secs(2))))
            .build()
            .unwrap();
        log_seqs(&logger, 0..100);
        let _ = logger.flush();
        drop(guard);
        let stats = logger.stats();
        assert_eq!(
            stats.sinks[0].records_written, 100,
            "the other sink lost nothing"
        );
        let s = stats.sinks[1].clone();
        assert_accounted(&s, 100);
        (s, others.take())
    }

    /// A receiver whose certificate the given CA signed, for 127.0.0.1:
    /// every record arrives, over TLS, with the header.
    #[test]
    fn records_arrive_over_tls_with_a_custom_ca() {
        let _serial = serial();
        if !Receiver::available() {
            return;
        }
        let ca = Ca::new("nowait test CA");
        let dir = tempfile::tempdir().unwrap();
        let rx = start(dir.path(), &ca.leaf(&["127.0.0.1"], false), None, "ok");
        for gzip in [false, true] {
            let (s, text) = send(
                Otlp::new(&https(&rx))
                    .ca_certificate_pem(ca.pem())
                    .header("Authorization", "Bearer x")
                    .gzip(gzip),
            );
            assert_eq!(
                (s.records_written, s.dropped(), s.write_errors),
                (100, 0, 0),
                "{s:?} {text}"
            );
            assert!(s.name.starts_with("otlp:https://127.0.0.1:"), "{}", s.name);
        }
        let reqs = requests(&rx);
        assert!(reqs.iter().all(|r| r.status == 200), "{reqs:?}");
        assert_eq!(tally(&reqs).1.len(), 100);
        // The CA from a file too.
        let path = dir.path().join("ca.pem");
        std::fs::write(&path, ca.pem()).unwrap();
        let (s, _) = send(Otlp::new(&https(&rx)).ca_certificate(&path));
        assert_eq!((s.records_written, s.dropped()), (100, 0), "{s:?}");
    }

    /// Each certificate problem fails the sink with rustls's reason in a
    /// notice, every record counted, none written; the other sink is
    /// untouched.
    #[test]
    fn certificate_errors_fail_counted_with_a_clear_notice() {
        let _serial = serial();
        if !Receiver::available() {
            return;
        }
        let ca = Ca::new("nowait test CA");
        let other = Ca::new("another CA");
        let cases: [(&str, (String, String), &Ca, &str); 3] = [
            (
                "wrong CA",
                other.leaf(&["127.0.0.1"], false),
                &ca,
                "UnknownIssuer",
            ),
            ("expired", ca.leaf(&["127.0.0.1"], true), &ca, "expired"),
            (
                "wrong name",
                ca.leaf(&["collector.example"], false),
                &ca,
                "not valid for name",
            ),
        ];
        for (what, server, trusted, reason) in cases {
            let dir = tempfile::tempdir().unwrap();
            let rx = start(dir.path(), &server, None, "ok");
            let (s, text) = send(Otlp::new(&https(&rx)).ca_certificate_pem(trusted.pem()));
            assert_eq!(s.records_written, 0, "{what}: {s:?}");
            assert!(s.write_errors > 0, "{what}: {s:?}");
            assert!(
                text.contains("TLS with the OTLP receiver failed: invalid peer certificate"),
                "{what}: {text}"
            );
            assert!(text.contains(reason), "{what}: {text}");
            eprintln!(
                "{what}: {}",
                text.lines().find(|l| l.contains("TLS")).unwrap_or("")
            );
            assert!(requests(&rx).is_empty(), "{what}: nothing got through");
        }
    }

    /// The receiver's failed handshakes so far (its `TLSERR` lines).
    fn handshake_errors(rx: &Receiver) -> Vec<String> {
        (rx.output().lines())
            .filter_map(|l| l.strip_prefix("TLSERR "))
            .map(str::to_owned)
            .collect()
    }

    /// Shutting down with a receiver whose certificate no trusted CA
    /// signed: a few handshakes with back-off, not one every few
    /// milliseconds; each ends with the TLS alert that tells the receiver
    /// why; and the notice says the sink gave up and why, not that the
    /// shutdown timed out.
    #[test]
    fn shutdown_with_an_untrusted_receiver_tries_a_few_times_and_says_why() {
        let _serial = serial();
        if !Receiver::available() {
            return;
        }
        let (ca, other) = (Ca::new("nowait test CA"), Ca::new("another CA"));
        let dir = tempfile::tempdir().unwrap();
        let rx = start(dir.path(), &other.leaf(&["127.0.0.1"], false), None, "ok");
        let others = MemoryWriter::default();
        let (logger, guard) = Builder::new()
            .shutdown_timeout(Duration::from_secs(5))
            .sink(Sink::writer(others.clone()).format(Plain))
            .sink(Sink::otlp(
                Otlp::new(&https(&rx)).ca_certificate_pem(ca.pem()),
            ))
            .build()
            .unwrap();
        log_seqs(&logger, 0..100);
        let begun = Instant::now();
        while logger.stats().sinks[1].write_errors == 0 {
            assert!(begun.elapsed() < Duration::from_secs(5));
            std::thread::sleep(Duration::from_millis(5));
        }
        // The writer is in its back-off now; what follows is the shutdown's.
        std::thread::sleep(Duration::from_millis(50));
        let before = handshake_errors(&rx).len();
        let failed_before = logger.stats().sinks[1].write_errors;
        let t = Instant::now();
        drop(guard);
        let took = t.elapsed();
        let attempts = logger.stats().sinks[1].write_errors - failed_before;
        assert!(
            (1..=5).contains(&attempts),
            "{attempts} attempts in {took:?}"
        );
        // The receiver logs each failed handshake as it sees it.
        std::thread::sleep(Duration::from_millis(300));
        let errors = handshake_errors(&rx);
        let during = errors.len() - before;
        eprintln!("{during} handshakes in a shutdown of {took:?}; the receiver saw: {errors:?}");
        assert!((1..=5).contains(&during), "{during} in {took:?}");
        assert!(took < Duration::from_secs(1), "{took:?}");
        assert!(
            !errors.is_empty()
                && errors
                    .iter()
                    .all(|e| e.to_ascii_lowercase().contains("alert")),
            "no TLS alert told the receiver why: {errors:?}"
        );
        let s = &logger.stats().sinks[1];
        assert_accounted(s, 100);
        let text = others.take();
        assert!(!text.contains("timed out"), "{text}");
        let notice = text
            .lines()
            .find(|l| l.contains("gave up after"))
            .unwrap_or_else(|| panic!("{text}"));
        assert!(notice.contains("UnknownIssuer"), "{notice}");
    }

    /// A receiver that requires a client certificate takes the requests
    /// of a client showing one its CA signed, and refuses the others.
    #[test]
    fn mutual_tls_accepted_with_a_client_certificate_refused_without() {
        let _serial = serial();
        if !Receiver::available() {
            return;
        }
        let ca = Ca::new("nowait test CA");
        let clients = Ca::new("clients CA");
        let dir = tempfile::tempdir().unwrap();
        let rx = start(
            dir.path(),
            &ca.leaf(&["127.0.0.1"], false),
            Some(&clients),
            "ok",
        );
        let (cert, key) = clients.leaf(&["client.example"], false);
        let (s, text) = send(
            Otlp::new(&https(&rx))
                .ca_certificate_pem(ca.pem())
                .client_certificate_pem(cert, key),
        );
        assert_eq!((s.records_written, s.dropped()), (100, 0), "{s:?} {text}");
        let (s, text) = send(Otlp::new(&https(&rx)).ca_certificate_pem(ca.pem()));
        assert_eq!(s.records_written, 0, "{s:?}");
        assert!(text.contains("write failed"), "{text}");
        eprintln!(
            "mTLS without a certificate: {}",
            text.lines()
                .find(|l| l.contains("write failed"))
                .unwrap_or("")
        );
        assert_eq!(tally(&requests(&rx)).1.len(), 100);
    }

    /// A receiver that takes the connection and never says a word of TLS:
    /// the handshake meets the request's timeout like an answer would,
    /// the records are counted, the other sink and the shutdown are not
    /// held.
    #[test]
    fn a_receiver_silent_in_the_handshake_times_out_counted() {
        let _serial = serial();
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        listener.set_nonblocking(true).unwrap();
        let holder = std::thread::spawn(move || {
            let mut held = Vec::new();
            let until = Instant::now() + Duration::from_secs(4);
            while Instant::now() < until {
                if let Ok((conn, _)) = listener.accept() {
                    held.push(conn);
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            held.len()
        });
        let ca = Ca::new("nowait test CA");
        let others = MemoryWriter::default();
        let (logger, guard) = Builder::new()
            .shutdown_timeout(Duration::from_secs(2))
            .sink(Sink::writer(others.clone()).format(Plain))
            .sink(Sink::otlp(
                Otlp::new(&format!("https://127.0.0.1:{port}"))
                    .ca_certificate_pem(ca.pem())
                    .timeout(Duration::from_millis(300)),
            ))
            .build()
            .unwrap();
        let t = Instant::now();
        log_seqs(&logger, 0..100);
        assert!(
            t.elapsed() < Duration::from_millis(200),
            "{:?}",
            t.elapsed()
        );
        std::thread::sleep(Duration::from_millis(700));
        let t = Instant::now();
        drop(guard);
        assert!(
            t.elapsed() < Duration::from_millis(2500),
            "{:?}",
            t.elapsed()
        );
        let stats = logger.stats();
        assert_eq!(stats.sinks[0].records_written, 100);
        let s = &stats.sinks[1];
        assert_accounted(s, 100);
        assert_eq!(s.records_written, 0, "{s:?}");
        let text = others.take();
        assert!(
            text.contains("no answer from the OTLP receiver within 300 ms"),
            "{text}"
        );
        assert!(holder.join().unwrap() >= 1);
    }

    /// Without a CA of its own the sink trusts the platform's store (read
    /// once, at build): a certificate of a CA the platform does not know is
    /// refused, not taken on trust.
    #[test]
    fn the_platform_store_is_the_default_trust() {
        let _serial = serial();
        if !Receiver::available() {
            return;
        }
        let ca = Ca::new("nowait test CA");
        let dir = tempfile::tempdir().unwrap();
        let rx = start(dir.path(), &ca.leaf(&["127.0.0.1"], false), None, "ok");
        let t = Instant::now();
        let built = Builder::new()
            .sink(Sink::otlp(Otlp::new(&https(&rx))))
            .build();
        let took = t.elapsed();
        let Ok((logger, guard)) = built else {
            // A machine without any CA certificate says so clearly.
            let e = built.unwrap_err().to_string();
            assert!(e.contains("no trusted CA certificate found"), "{e}");
            return;
        };
        eprintln!("build with the platform's trust store: {took:?}");
        drop((logger, guard));
        let (s, text) = send(Otlp::new(&https(&rx)));
        assert_eq!(s.records_written, 0, "{s:?}");
        assert!(text.contains("UnknownIssuer"), "{text}");
    }

    /// Certificates that cannot be had fail the build, clearly.
    #[test]
    fn unusable_certificates_fail_the_build() {
        let dir = tempfile::tempdir().unwrap();
        let (_, key_only) = Ca::new("x").leaf(&["x"], false);
        for (otlp, expect) in [
            (
                Otlp::new("https://127.0.0.1:1").ca_certificate(dir.path().join("none.pem")),
                "none.pem",
            ),
            (
                Otlp::new("https://127.0.0.1:1").ca_certificate_pem("not pem"),
                "no certificate",
            ),
            (
                Otlp::new("https://127.0.0.1:1")
                    .ca_certificate_pem(Ca::new("x").pem())
                    .client_certificate_pem(Ca::new("y").pem(), "garbage"),
                "no PEM private key",
            ),
        ] {
            let err = Builder::new()
                .sink(Sink::otlp(otlp))
                .build()
                .unwrap_err()
                .to_string();
            assert!(err.contains(expect), "{err}");
            assert!(!err.contains(&key_only), "{err}");
        }
    }
}

// === faults, plain and over TLS ===

/// What the receiver does wrong.
#[derive(Clone, Copy, Debug)]
enum Fault {
    /// 503 twice with `Retry-After: 1`, then 200: every record arrives
    /// once, the retries wait as asked, the recovery is reported.
    Retry503,
    /// The first request refused with 400, the rest accepted: that
    /// request's records are counted rejected, reported (in the OTLP sink
    /// itself too), and never sent again.
    Refused400,
    /// Every answer a partial success rejecting 3 records: those counted
    /// rejected, the rest written.
    Partial,
    /// The receiver killed mid-run (SIGKILL), started again on its port:
    /// the writer never waits, the sink sheds alone, counted, and delivery
    /// resumes. Records the dead receiver had taken but not answered may
    /// arrive twice or without being counted written (at most one
    /// request's worth).
    Killed,
}

/// One row of the table: what the sink was given, what arrived (each
/// record accepted by a receiver, once), and how the sink counted it.
struct Row {
    fault: Fault,
    tls: bool,
    accepted: u64,
    arrived: u64,
    stats: SinkStats,
}

/// A receiver of `script` on `port` (0: a free one), over TLS with a
/// certificate `ca` signs if given.
fn fault_receiver(dir: &Path, ca: Option<&Ca>, script: &str, port: u16) -> Receiver {
    match ca {
        #[cfg(feature = "otlp-tls")]
        Some(ca) => tls::start_on(dir, &ca.leaf(&["127.0.0.1"], false), None, script, port),
        #[cfg(not(feature = "otlp-tls"))]
        Some(_) => unreachable!("the TLS rows need the feature otlp-tls"),
        None => Receiver::start(dir, script, port),
    }
}

/// The sink's settings for `rx`, trusting `ca` over TLS if given.
fn otlp_for(rx: &Receiver, ca: Option<&Ca>) -> Otlp {
    match ca {
        #[cfg(feature = "otlp-tls")]
        Some(ca) => Otlp::new(&tls::https(rx)).ca_certificate_pem(ca.pem()),
        #[cfg(not(feature = "otlp-tls"))]
        Some(_) => unreachable!("the TLS rows need the feature otlp-tls"),
        None => Otlp::new(&rx.url()),
    }
}

/// Runs `fault` beside a memory sink, over TLS if `ca` is given, and
/// asserts what the fault must do to the counts, the requests and the
/// notices.
fn run_fault(fault: Fault, ca: Option<&Ca>) -> Row {
    let dir = tempfile::tempdir().unwrap();
    let start = |script: &str, port: u16| fault_receiver(dir.path(), ca, script, port);
    let others = MemoryWriter::default();
    let shutdown = Duration::from_secs(10);
    let build = |otlp: Sink| {
        Builder::new()
            .shutdown_timeout(shutdown)
            .sink(Sink::writer(others.clone()).format(Plain))
            .sink(otlp)
            .build()
            .unwrap()
    };
    let mut slowest = Duration::ZERO;
    let (accepted, rx, extra, logger) = match fault {
        Fault::Retry503 => {
            let rx = start("503:1,503:1,ok", 0);
            let (logger, guard) = build(Sink::otlp(otlp_for(&rx, ca)));
            log_seqs(&logger, 0..1000);
            // A failing sink is not waited for by flushes or the shutdown
            // (after a short grace): wait here until it is through.
            let begun = Instant::now();
            while logger.stats().sinks[1].records_written < 1000 {
                assert!(
                    begun.elapsed() < Duration::from_secs(15),
                    "{:?}",
                    logger.stats()
                );
                std::thread::sleep(Duration::from_millis(20));
            }
            drop(guard);
            (1000, rx, None, logger)
        }
        Fault::Refused400 => {
            let rx = start("400,ok", 0);
            let (logger, guard) = build(Sink::otlp(otlp_for(&rx, ca)));
            log_seqs(&logger, 0..100);
            let _ = logger.flush();
            log_seqs(&logger, 100..200);
            drop(guard);
            (200, rx, None, logger)
        }
        Fault::Partial => {
            let rx = start("partial:3", 0);
            let (logger, guard) = build(Sink::otlp(otlp_for(&rx, ca).max_batch_bytes(4096)));
            for i in 0..5 {
                log_seqs(&logger, i * 100..(i + 1) * 100);
                let _ = logger.flush();
            }
            drop(guard);
            (500, rx, None, logger)
        }
        Fault::Killed => {
            let mut rx = start("ok", 0);
            let port = rx.port;
            let (logger, guard) = build(
                Sink::otlp(otlp_for(&rx, ca).max_batch_bytes(16 << 10)).buffer_size(64 << 10),
            );
            let total = 30_000;
            let mut second = None;
            for i in 0..total / 100 {
                let t = Instant::now();
                log_seqs(&logger, i * 100..(i + 1) * 100);
                slowest = slowest.max(t.elapsed());
                if i == 60 {
                    rx.kill();
                }
                if i == 200 {
                    second = Some(start("ok", port));
                }
                std::thread::sleep(Duration::from_millis(2));
            }
            let t = Instant::now();
            drop(guard);
            assert!(t.elapsed() < shutdown + Duration::from_secs(1));
            (total, second.unwrap(), Some(rx), logger)
        }
    };
    drop(extra);
    let stats = logger.stats();
    assert_eq!(
        stats.sinks[0].records_written, accepted,
        "the other sink lost nothing"
    );
    let s = stats.sinks[1].clone();
    assert_accounted(&s, accepted);
    // Both receivers of `Killed` append to the same file.
    let reqs = requests(&rx);
    let (marks, seqs) = tally(&reqs);
    let arrived = seqs.len() as u64;
    let rejected_marks = marks.get("REJ").copied().unwrap_or(0);
    let text = others.take();
    match fault {
        Fault::Retry503 => {
            assert_eq!((s.records_written, s.dropped()), (1000, 0), "{s:?}");
            assert_eq!((reqs[0].status, reqs[1].status), (503, 503));
            for pair in reqs[..3].windows(2) {
                let waited = pair[1].at - pair[0].at;
                assert!(waited >= 0.95, "Retry-After honoured: {waited}");
            }
            assert!(seqs.values().all(|&n| n == 1), "each record accepted once");
            assert!(
                text.contains("answered 503 Service Unavailable (retry after 1 s)"),
                "{text}"
            );
            assert!(text.contains("recovered after 2 failed writes"), "{text}");
        }
        Fault::Refused400 => {
            assert_eq!(reqs[0].status, 400);
            let refused: Vec<u64> = reqs[0].records.iter().filter_map(|r| seq(&r.1)).collect();
            assert!(!refused.is_empty());
            let n = refused.len() as u64;
            assert_eq!((s.dropped_rejected, s.dropped_failed), (n, n), "{s:?}");
            assert_eq!(s.records_written, 200 - n, "{s:?}");
            assert_eq!(rejected_marks, n);
            assert_eq!(arrived, s.records_written);
            assert!(
                refused.iter().all(|r| !seqs.contains_key(r)),
                "never retried"
            );
            assert!(
                text.contains("refused them: the OTLP receiver refused a request of"),
                "{text}"
            );
            assert!(text.contains("400 Bad Request: bad"), "{text}");
            // The OTLP sink is told too, in a later request.
            assert!(
                reqs[1..]
                    .iter()
                    .flat_map(|r| &r.records)
                    .any(|(_, r)| is_notice(r) && r.contains("refused them")),
                "{reqs:?}"
            );
        }
        Fault::Partial => {
            assert!(reqs.len() >= 5, "{}", reqs.len());
            let rejected: u64 = reqs.iter().map(|r| r.rejected).sum();
            assert_eq!(s.dropped_rejected, rejected, "{s:?}");
            assert_eq!(s.dropped(), rejected, "{s:?}");
            assert_eq!(rejected_marks, rejected);
            assert_eq!(s.records_written + rejected, 500, "{s:?}");
            assert_eq!(arrived, s.records_written);
        }
        Fault::Killed => {
            let max_request = reqs.iter().map(|r| r.records.len() as u64).max().unwrap();
            assert!(arrived >= s.records_written, "{arrived} {s:?}");
            assert!(
                arrived - s.records_written <= max_request,
                "{arrived} {s:?}"
            );
            let twice = seqs.values().filter(|&&n| n > 1).count() as u64;
            assert!(twice <= max_request, "{twice}");
            assert!(
                s.dropped_overflow + s.dropped_failed > 0,
                "a 280 ms outage with a 64 KiB buffer sheds: {s:?}"
            );
            assert_eq!(s.dropped_rejected, 0);
            assert!(text.contains("write failed"), "the failure is reported");
            assert!(text.contains("recovered after"), "{text}");
            eprintln!(
                "killed mid-run (TLS {}): {twice} arrived twice; slowest push of 100: {slowest:?}",
                ca.is_some()
            );
        }
    }
    Row {
        fault,
        tls: ca.is_some(),
        accepted,
        arrived,
        stats: s,
    }
}

/// Each fault, plain and (with the feature `otlp-tls`) over TLS: every
/// record the sink accepted is written or counted under exactly one
/// reason, what arrived agrees with what was counted written, and the
/// notices say what happened. Prints the table.
#[test]
fn each_fault_is_counted_exactly_plain_and_over_tls() {
    let _serial = serial();
    if !Receiver::available() {
        return;
    }
    let ca = cfg!(feature = "otlp-tls").then(|| Ca::new("nowait test CA"));
    let mut rows = Vec::new();
    for fault in [
        Fault::Retry503,
        Fault::Refused400,
        Fault::Partial,
        Fault::Killed,
    ] {
        rows.push(run_fault(fault, None));
        if let Some(ca) = &ca {
            rows.push(run_fault(fault, Some(ca)));
        }
    }
    eprintln!(
        "| receiver | TLS | fault | accepted | arrived | written | failed | (of which rejected) | overflow | abandoned | written + counted |"
    );
    eprintln!("|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|");
    for r in &rows {
        let s = &r.stats;
        eprintln!(
            "| otlp_receiver.py | {} | {:?} | {} | {} | {} | {} | {} | {} | {} | {} |",
            if r.tls { "yes" } else { "no" },
            r.fault,
            r.accepted,
            r.arrived,
            s.records_written,
            s.dropped_failed,
            s.dropped_rejected,
            s.dropped_overflow,
            s.abandoned,
            nowait_testkit::outcomes(s),
        );
        assert_eq!(nowait_testkit::outcomes(s), r.accepted);
    }
}

// === rotel ===

fn rotel() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    if let Some(p) = std::env::split_paths(&path)
        .map(|d| d.join("rotel-agent"))
        .find(|p| p.is_file())
    {
        return Some(p);
    }
    // pip puts the binary inside the package.
    let out = Command::new("python3")
        .args([
            "-c",
            "import rotel, os; print(os.path.join(os.path.dirname(rotel.__file__), 'rotel-agent'))",
        ])
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let p = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    p.is_file().then_some(p)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// rotel, a collector written apart from us, takes our requests (200) and
/// its debug log shows the records, resource and attributes it decoded.
#[test]
fn rotel_accepts_our_requests() {
    let _serial = serial();
    let Some(bin) = rotel() else {
        return skip("rotel-agent is not installed (pip install --pre rotel)");
    };
    let dir = tempfile::tempdir().unwrap();
    let (http, grpc) = (free_port(), free_port());
    let log = dir.path().join("rotel.log");
    let mut child = Command::new(bin)
        .args([
            "start",
            "--exporter",
            "blackhole",
            "--debug-log",
            "logs",
            "--debug-log-verbosity",
            "detailed",
        ])
        .arg("--otlp-http-endpoint")
        .arg(format!("127.0.0.1:{http}"))
        .arg("--otlp-grpc-endpoint")
        .arg(format!("127.0.0.1:{grpc}"))
        .arg("--pid-file")
        .arg(dir.path().join("rotel.pid"))
        .stdout(std::fs::File::create(&log).unwrap())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Until it listens.
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::net::TcpStream::connect(("127.0.0.1", http)).is_err() {
        assert!(Instant::now() < deadline, "rotel did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let (logger, guard) = Builder::new()
        .sink(Sink::otlp(
            Otlp::new(&format!("http://127.0.0.1:{http}"))
                .service_name("rotel-test")
                .gzip(true),
        ))
        .build()
        .unwrap();
    log_seqs(&logger, 0..500);
    drop(guard);
    let s = &logger.stats().sinks[0];
    assert_accounted(s, 500);
    assert_eq!(
        (s.records_written, s.dropped(), s.write_errors),
        (500, 0, 0),
        "{s:?}"
    );
    // Its debug log is written asynchronously.
    let deadline = Instant::now() + Duration::from_secs(5);
    let text = loop {
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        if text.matches("seq").count() >= 500 || Instant::now() > deadline {
            break text;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let _ = child.kill();
    let _ = child.wait();
    assert!(text.contains("rotel-test"), "{text}");
    assert_eq!(text.matches("seq").count(), 500, "{text}");
}

#[cfg(feature = "otlp-tls")]
/// A FIFO named as a certificate or key (by code or by
/// `OTEL_EXPORTER_OTLP_CERTIFICATE`...) makes `build()` fail at once:
/// before, opening it waited for a writer that never came.
#[test]
fn a_fifo_as_a_certificate_fails_the_build_without_waiting() {
    use nowait_core::sink::Otlp;
    use nowait_core::{Builder, Sink};
    use std::time::Duration;

    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("ca.pem");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo {}", fifo.display());
    let ca = nowait_testkit::ca::Ca::new("test CA");
    let cert = dir.path().join("client.pem");
    std::fs::write(&cert, ca.leaf(&["client"], false).0).unwrap();
    let endpoint = "https://127.0.0.1:1";
    for otlp in [
        Otlp::new(endpoint).ca_certificate(&fifo),
        // The client certificate's key.
        Otlp::new(endpoint)
            .ca_certificate_pem(ca.pem())
            .client_certificate(&cert, &fifo),
    ] {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let built = Builder::new().sink(Sink::otlp(otlp)).build();
            let _ = tx.send(built.map(|_| ()).map_err(|e| e.to_string()));
        });
        let answer = rx.recv_timeout(Duration::from_secs(10));
        if answer.is_err() {
            // Let the waiting open go (a writer comes and leaves).
            let _ = std::fs::OpenOptions::new().write(true).open(&fifo);
        }
        let e = answer.expect("build() waits on the FIFO").unwrap_err();
        assert!(e.contains("not a regular file"), "{e}");
    }
}
