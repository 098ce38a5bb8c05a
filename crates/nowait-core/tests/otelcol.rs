//! The OTLP sink against the OpenTelemetry Collector itself, as operators
//! run it: the OTLP/HTTP receiver over TLS with the `bearertokenauth`
//! extension, records written by the file exporter. The Collector is the
//! build of `ci/otelcol/` that `ci/deps-otelcol.sh` makes (found at
//! `$NOWAIT_OTELCOL`, else `target/otelcol/otelcol-nowait`); each test
//! starts its own on a loopback port with a configuration in a temporary
//! directory and stops it by its PID.
//!
//! What each test checks is what an operator would: which records arrived
//! (read back from the exporter's file), what the other sink was told, and
//! what `Stats` counted, with every accepted record in exactly one outcome.
#![cfg(all(unix, feature = "otlp-tls", not(miri)))] // processes and sockets

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nowait_core::__private::event::EventBuf;
use nowait_core::event::FieldName;
use nowait_core::format::Plain;
use nowait_core::record::kind;
use nowait_core::sink::Otlp;
use nowait_core::stats::SinkStats;
use nowait_core::{Builder, Level, Logger, Sink};
use nowait_testkit::ca::Ca;
use nowait_testkit::MemoryWriter;

const TOKEN: &str = "c0llect0r-t0ken";

/// The Collector binary, or `None` after saying why the test skips.
fn otelcol() -> Option<PathBuf> {
    let path = std::env::var_os("NOWAIT_OTELCOL")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let target = std::env::var_os("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target"));
            target.join("otelcol/otelcol-nowait")
        });
    if path.is_file() {
        return Some(path);
    }
    nowait_testkit::skip_missing_tool(&format!(
        "the OpenTelemetry Collector is not built at {} (run ci/deps-otelcol.sh, which needs Go)",
        path.display()
    ));
    None
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One running Collector; killed (by PID) when dropped.
struct Collector {
    child: Child,
    out: PathBuf,
}

impl Collector {
    /// Starts the Collector on `port` with a TLS certificate for
    /// 127.0.0.1 signed by `ca`, requiring `Bearer TOKEN`, exporting to
    /// `dir/NAME.jsonl`; returns once the port accepts connections.
    fn start(bin: &Path, dir: &Path, name: &str, port: u16, ca: &Ca) -> Collector {
        let (cert, key) = ca.leaf(&["127.0.0.1"], false);
        let cert_path = dir.join(format!("{name}.crt"));
        let key_path = dir.join(format!("{name}.key"));
        std::fs::write(&cert_path, cert).unwrap();
        std::fs::write(&key_path, key).unwrap();
        let out = dir.join(format!("{name}.jsonl"));
        let config = dir.join(format!("{name}.yaml"));
        std::fs::write(
            &config,
            format!(
                r#"extensions:
  bearertokenauth:
    token: "{TOKEN}"
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:{port}
        tls:
          cert_file: {cert}
          key_file: {key}
        auth:
          authenticator: bearertokenauth
exporters:
  file:
    path: {out}
    flush_interval: 50ms
service:
  extensions: [bearertokenauth]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
  pipelines:
    logs:
      receivers: [otlp]
      exporters: [file]
"#,
                cert = cert_path.display(),
                key = key_path.display(),
                out = out.display(),
            ),
        )
        .unwrap();
        let mut child = Command::new(bin)
            .arg("--config")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join(format!("{name}.stderr"))).unwrap())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(status) = child.try_wait().unwrap() {
                let err = std::fs::read_to_string(dir.join(format!("{name}.stderr")));
                panic!("the Collector exited ({status}): {err:?}");
            }
            assert!(Instant::now() < deadline, "the Collector did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        Collector { child, out }
    }

    /// Kills it with SIGKILL, by its PID, and reaps it.
    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// The `seq` of every record in the exporter's file, counted (a
    /// record that arrived twice counts 2); notices (no `seq`) apart.
    fn seqs(&self) -> (BTreeMap<u64, u32>, Vec<String>) {
        read_exported(&self.out)
    }

    /// Waits until `n` records with a `seq` are in the file, or 10 s.
    fn wait_for(&self, n: usize) -> BTreeMap<u64, u32> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let (seqs, _) = self.seqs();
            if seqs.values().map(|&c| c as usize).sum::<usize>() >= n || Instant::now() > deadline {
                return seqs;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Reads the file exporter's JSON lines (one `ExportLogsServiceRequest` in
/// OTLP/JSON each): the `seq` attribute of each record, and the bodies of
/// the records without one (nowait's notices).
fn read_exported(path: &Path) -> (BTreeMap<u64, u32>, Vec<String>) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let (mut seqs, mut others) = (BTreeMap::new(), Vec::new());
    // The last line may be half written while the exporter flushes.
    for line in text.lines().filter(|l| l.ends_with('}')) {
        let Ok(req) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let records = req["resourceLogs"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|r| r["scopeLogs"].as_array().into_iter().flatten())
            .flat_map(|s| s["logRecords"].as_array().into_iter().flatten());
        for rec in records {
            let seq = rec["attributes"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|a| a["key"] == "seq")
                .and_then(|a| a["value"]["intValue"].as_str()?.parse::<u64>().ok());
            match seq {
                Some(seq) => *seqs.entry(seq).or_insert(0) += 1,
                None => others.push(rec["body"]["stringValue"].as_str().unwrap_or("").to_owned()),
            }
        }
    }
    (seqs, others)
}

fn log_seqs(logger: &Logger, range: std::ops::Range<u64>) {
    let mut buf = EventBuf::new();
    for i in range {
        buf.clear();
        buf.begin_inline(nowait_core::__private::event::timestamp(), "otelcol_test");
        buf.str(FieldName::Inline("message"), "record");
        buf.u64(FieldName::Inline("seq"), i);
        nowait_core::__private::logger::push(logger, Level::Info, kind::EVENT, &[buf.as_bytes()])
            .unwrap();
    }
}

/// Every accepted record in exactly one outcome.
fn assert_accounted(s: &SinkStats, accepted: u64) {
    assert_eq!(nowait_testkit::outcomes(s), accepted, "{s:?}");
}

fn otlp(port: u16, ca: &Ca, token: &str) -> Otlp {
    Otlp::new(&format!("https://127.0.0.1:{port}"))
        .ca_certificate_pem(ca.pem())
        .header("Authorization", format!("Bearer {token}"))
        .service_name("otelcol-test")
        .timeout(Duration::from_secs(2))
}

/// The right token over TLS: every record arrives once, nothing is
/// dropped, and the other sink is told of no failure.
#[test]
fn records_arrive_once_over_tls_with_the_token() {
    let Some(bin) = otelcol() else { return };
    let dir = tempfile::tempdir().unwrap();
    let ca = Ca::new("otelcol test CA");
    let port = free_port();
    let col = Collector::start(&bin, dir.path(), "ok", port, &ca);
    let others = MemoryWriter::default();
    let (logger, guard) = Builder::new()
        .sink(
            Sink::writer(others.clone())
                .format(Plain)
                .level(Level::Warn),
        )
        .sink(Sink::otlp(otlp(port, &ca, TOKEN)))
        .build()
        .unwrap();
    log_seqs(&logger, 0..3000);
    drop(guard);
    let s = &logger.stats().sinks[1];
    assert_accounted(s, 3000);
    assert_eq!(
        (s.records_written, s.dropped(), s.write_errors),
        (3000, 0, 0),
        "{s:?}"
    );
    let seqs = col.wait_for(3000);
    assert_eq!(seqs.len(), 3000, "missing records");
    assert!(seqs.iter().all(|(_, &c)| c == 1), "a record arrived twice");
    assert_eq!(
        seqs.keys().copied().collect::<Vec<_>>(),
        (0..3000).collect::<Vec<_>>()
    );
    let said = others.take();
    assert!(
        !said.contains("nowait"),
        "a notice without a failure: {said}"
    );
}

/// A wrong token: the Collector refuses every request (401). Nothing
/// arrives, not even a notice; every record is counted as rejected, each
/// refusal as a write error whose answer is the sink's last error; the
/// other sink is told the exact count and the reason, at most once a
/// second, without the token.
#[test]
fn a_wrong_token_is_refused_counted_and_said_elsewhere() {
    let Some(bin) = otelcol() else { return };
    let dir = tempfile::tempdir().unwrap();
    let ca = Ca::new("otelcol test CA");
    let port = free_port();
    let col = Collector::start(&bin, dir.path(), "token", port, &ca);
    let others = MemoryWriter::default();
    let (logger, guard) = Builder::new()
        .sink(
            Sink::writer(others.clone())
                .format(Plain)
                .level(Level::Warn),
        )
        .sink(Sink::otlp(otlp(port, &ca, "not-the-token")))
        .build()
        .unwrap();
    // Ten refused requests or more, over 2.5 s.
    for round in 0..10u64 {
        log_seqs(&logger, round * 100..(round + 1) * 100);
        std::thread::sleep(Duration::from_millis(250));
    }
    drop(guard);
    let s = &logger.stats().sinks[1];
    assert_accounted(s, 1000);
    assert_eq!((s.records_written, s.dropped_rejected), (0, 1000), "{s:?}");
    assert!(s.write_errors >= 10, "each refusal is a write error: {s:?}");
    assert!(
        s.last_error.as_deref().is_some_and(|e| e.contains("401")),
        "{s:?}"
    );
    std::thread::sleep(Duration::from_millis(200));
    let (seqs, notices) = col.seqs();
    assert!(seqs.is_empty(), "records passed a wrong token: {seqs:?}");
    assert!(
        notices.is_empty(),
        "notices passed a wrong token: {notices:?}"
    );
    let said = others.take();
    assert!(said.contains("401"), "{said}");
    // Said at most once a second, not once per refused request.
    let notices = said
        .lines()
        .filter(|l| l.contains(" records dropped"))
        .count();
    assert!(
        (1..=4).contains(&notices),
        "{notices} notices in 2.5 s: {said}"
    );
    assert!(
        !said.contains("not-the-token"),
        "the token was shown: {said}"
    );
    // Every record the other sink heard of, in its counts.
    let told: u64 = said
        .lines()
        .filter_map(|l| {
            let at = l.find(" records dropped")?;
            l[..at].rsplit(' ').next()?.parse::<u64>().ok()
        })
        .sum();
    assert_eq!(told, 1000, "{said}");
}

/// A Collector whose certificate this sink does not trust: no handshake
/// succeeds, nothing arrives, every record is counted as failed, and the
/// guard's drop ends within the shutdown bound.
#[test]
fn an_untrusted_certificate_sends_nothing_and_shutdown_is_bounded() {
    let Some(bin) = otelcol() else { return };
    let dir = tempfile::tempdir().unwrap();
    let (ca, other_ca) = (Ca::new("otelcol test CA"), Ca::new("another CA"));
    let port = free_port();
    let col = Collector::start(&bin, dir.path(), "ca", port, &ca);
    let others = MemoryWriter::default();
    let bound = Duration::from_secs(2);
    let (logger, guard) = Builder::new()
        .sink(
            Sink::writer(others.clone())
                .format(Plain)
                .level(Level::Warn),
        )
        .sink(Sink::otlp(otlp(port, &other_ca, TOKEN)))
        .shutdown_timeout(bound)
        .build()
        .unwrap();
    log_seqs(&logger, 0..500);
    std::thread::sleep(Duration::from_millis(300));
    let t = Instant::now();
    drop(guard);
    let took = t.elapsed();
    assert!(
        took < bound + Duration::from_secs(1),
        "shutdown took {took:?}"
    );
    let s = &logger.stats().sinks[1];
    assert_accounted(s, 500);
    assert_eq!(s.records_written, 0, "{s:?}");
    assert!(s.write_errors > 0 && s.last_error.is_some(), "{s:?}");
    let (seqs, _) = col.seqs();
    assert!(seqs.is_empty());
    let said = others.take();
    assert!(
        said.contains("certificate") || said.contains("Certificate"),
        "{said}"
    );
    // A few attempts at shutdown, then the true reason: not a timeout.
    assert!(said.contains("gave up after"), "{said}");
    assert!(!said.contains("timed out"), "{said}");
}

/// The Collector killed (SIGKILL) mid-run and started again on the same
/// port: what was sent before arrives, what the sink could not deliver
/// while it was down is counted, and the rest arrives after it is back;
/// nothing is lost without a count, and nothing arrives twice.
#[test]
fn the_collector_down_and_back_loses_nothing_uncounted() {
    let Some(bin) = otelcol() else { return };
    let dir = tempfile::tempdir().unwrap();
    let ca = Ca::new("otelcol test CA");
    let port = free_port();
    let mut first = Collector::start(&bin, dir.path(), "first", port, &ca);
    let others = MemoryWriter::default();
    let (logger, guard) = Builder::new()
        .sink(
            Sink::writer(others.clone())
                .format(Plain)
                .level(Level::Warn),
        )
        .sink(Sink::otlp(otlp(port, &ca, TOKEN)))
        .build()
        .unwrap();
    log_seqs(&logger, 0..1000);
    assert_eq!(first.wait_for(1000).len(), 1000, "before the kill");
    first.kill();
    log_seqs(&logger, 1000..2000);
    std::thread::sleep(Duration::from_millis(1500));
    let second = Collector::start(&bin, dir.path(), "second", port, &ca);
    // Back: the sink finds it again within its back-off.
    std::thread::sleep(Duration::from_millis(1500));
    log_seqs(&logger, 2000..3000);
    drop(guard);
    let s = logger.stats().sinks[1].clone();
    assert_accounted(&s, 3000);
    let mut arrived = first.seqs().0;
    for (seq, n) in second.wait_for(s.records_written as usize - 1000) {
        *arrived.entry(seq).or_insert(0) += n;
    }
    assert!(arrived.values().all(|&n| n == 1), "a record arrived twice");
    assert_eq!(arrived.len() as u64, s.records_written, "{s:?}");
    assert_eq!(arrived.len() as u64 + s.dropped(), 3000, "{s:?}");
    assert!(
        (2000..3000).all(|q| arrived.contains_key(&q)),
        "records after the restart lost"
    );
    if s.dropped() > 0 {
        let said = others.take();
        assert!(said.contains("dropped"), "drops not said: {said}");
    }
}
