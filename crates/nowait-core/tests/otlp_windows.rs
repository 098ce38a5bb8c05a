//! The OTLP sink on Windows (run under Wine by `ci/wine.sh`), against the
//! receiver of `otlp.rs` (`otlp_receiver.py`, which decodes every request
//! with OpenTelemetry's own protobuf types) running on the Linux side: a
//! Windows process under Wine cannot start a Linux one, so the test asks
//! `ci/wine/linux_side.py` to, through files in the directory named by
//! `NOWAIT_LINUX_SIDE`. Plain and TLS, a receiver that asks for a retry,
//! one that requires a header, one whose certificate is not trusted (by
//! the CA given, or by Windows' own store); each time every accepted
//! record is accounted for exactly.
#![cfg(all(windows, feature = "otlp", not(miri)))] // sockets, another process

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use nowait_core::format::Plain;
use nowait_core::sink::Otlp;
use nowait_core::stats::SinkStats;
use nowait_core::{Builder, Level, Sink};
use nowait_testkit::MemoryWriter;

/// The directory `ci/wine/linux_side.py` watches, or `None` (with the
/// reason printed) outside `ci/wine.sh`.
fn linux_side() -> Option<PathBuf> {
    match std::env::var_os("NOWAIT_LINUX_SIDE") {
        Some(dir) => Some(PathBuf::from(dir)),
        None => {
            nowait_testkit::skip_missing_tool(
                "no Linux side to run the OTLP receiver on (run the Windows tests with ci/wine.sh)",
            );
            None
        }
    }
}

/// The receiver, on the Linux side; killed when `linux_side.py` ends.
struct Receiver {
    port: u16,
    out: PathBuf,
}

impl Receiver {
    fn start(side: &Path, name: &str, script: &str, options: &[String]) -> Receiver {
        let receiver = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/otlp_receiver.py");
        let out = side.join(format!("{name}.received"));
        let mut argv = vec![
            "python3".to_owned(),
            unix_path(&receiver),
            "0".to_owned(),
            unix_path(&out),
            script.to_owned(),
        ];
        argv.extend(options.iter().cloned());
        let json = format!(
            "[{}]",
            argv.iter()
                .map(|a| format!("\"{}\"", a.replace('\\', "\\\\").replace('"', "\\\"")))
                .collect::<Vec<_>>()
                .join(",")
        );
        // Written whole, then renamed: the Linux side reads any `.cmd`
        // it sees, and would read a file still being written as empty.
        let tmp = side.join(format!("{name}.cmd.tmp"));
        std::fs::write(&tmp, json).unwrap();
        std::fs::rename(&tmp, side.join(format!("{name}.cmd"))).unwrap();
        let answer = side.join(format!("{name}.out"));
        let deadline = Instant::now() + Duration::from_secs(60);
        let line = loop {
            if let Ok(line) = std::fs::read_to_string(&answer) {
                break line;
            }
            assert!(Instant::now() < deadline, "the Linux side never answered");
            std::thread::sleep(Duration::from_millis(20));
        };
        let port = line
            .trim()
            .strip_prefix("PORT ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("the receiver said {line:?}"));
        Receiver { port, out }
    }

    /// Every record line (`REC`, `REJ`, `NAK` and the record) the
    /// receiver logged, notices left out.
    fn records(&self) -> Vec<(String, String)> {
        let text = std::fs::read_to_string(&self.out).unwrap_or_default();
        text.lines()
            .filter_map(|l| l.split_once(' '))
            .filter(|(mark, rec)| {
                matches!(*mark, "REC" | "REJ" | "NAK") && rec.contains("body=str:'record ")
            })
            .map(|(m, r)| (m.to_owned(), r.to_owned()))
            .collect()
    }

    /// How many times each record arrived (accepted), by number.
    fn accepted(&self) -> BTreeMap<u64, u32> {
        let mut seen = BTreeMap::new();
        for (mark, rec) in self.records() {
            if mark != "REC" {
                continue;
            }
            let n = rec
                .split("body=str:'record ")
                .nth(1)
                .and_then(|r| r.split('\'').next())
                .and_then(|n| n.parse().ok())
                .unwrap_or_else(|| panic!("not a test record: {rec}"));
            *seen.entry(n).or_insert(0) += 1;
        }
        seen
    }
}

/// A path of this (Wine) process as the Linux side sees it: Wine maps
/// drive `Z:` to `/`, and paths without a drive are on the current one.
fn unix_path(p: &Path) -> String {
    let s = p.to_string_lossy().replace('\\', "/");
    match s.strip_prefix("Z:").or_else(|| s.strip_prefix("z:")) {
        Some(rest) => rest.to_owned(),
        None => s,
    }
}

/// Logs `n` records into an OTLP sink beside a memory sink; returns the
/// OTLP sink's final stats and what the memory sink got (the notices).
fn send(otlp: Otlp, n: u64) -> (SinkStats, String) {
    let others = MemoryWriter::default();
    let (logger, guard) = Builder::new()
        .shutdown_timeout(Duration::from_secs(10))
        .sink(Sink::writer(others.clone()).format(Plain))
        .sink(Sink::otlp(otlp.timeout(Duration::from_secs(5))))
        .build()
        .unwrap();
    for i in 0..n {
        logger.log(Level::Info, &format!("record {i}")).unwrap();
    }
    let _ = logger.flush_within(Duration::from_secs(20));
    drop(guard);
    let stats = logger.stats();
    assert_eq!(
        stats.sinks[0].records_written, n,
        "the other sink lost nothing"
    );
    let s = stats.sinks[1].clone();
    assert_eq!(nowait_testkit::outcomes(&s), n, "accounted: {s:?}");
    (s, others.take())
}

fn each_once(rx: &Receiver, n: u64) {
    let seen = rx.accepted();
    assert_eq!(
        seen.len() as u64,
        n,
        "records arrived: {} of {n}",
        seen.len()
    );
    assert!(seen.values().all(|&c| c == 1), "a record arrived twice");
}

#[test]
fn records_arrive_over_plain_http() {
    let Some(side) = linux_side() else { return };
    let rx = Receiver::start(&side, "plain", "ok", &[]);
    let (s, _) = send(Otlp::new(&format!("http://127.0.0.1:{}", rx.port)), 2000);
    assert_eq!(s.records_written, 2000, "{s:?}");
    each_once(&rx, 2000);
}

#[test]
fn a_retry_the_receiver_asks_for_loses_and_doubles_nothing() {
    let Some(side) = linux_side() else { return };
    let rx = Receiver::start(&side, "retry", "503:1,ok", &[]);
    let (s, _) = send(Otlp::new(&format!("http://127.0.0.1:{}", rx.port)), 500);
    assert_eq!(s.records_written, 500, "{s:?}");
    assert!(s.write_errors >= 1, "the 503 was not seen: {s:?}");
    each_once(&rx, 500);
}

#[test]
fn without_the_required_header_records_are_counted_refused() {
    let Some(side) = linux_side() else { return };
    let require = ["--require-header=authorization:Bearer s3cret".to_owned()];
    let rx = Receiver::start(&side, "header-missing", "ok", &require);
    let (s, text) = send(Otlp::new(&format!("http://127.0.0.1:{}", rx.port)), 100);
    assert_eq!((s.records_written, s.dropped_rejected), (0, 100), "{s:?}");
    assert!(text.contains("401"), "no notice names the 401: {text}");
    let rx = Receiver::start(&side, "header-given", "ok", &require);
    let (s, text) = send(
        Otlp::new(&format!("http://127.0.0.1:{}", rx.port))
            .header("authorization", "Bearer s3cret"),
        100,
    );
    assert_eq!(s.records_written, 100, "{s:?}");
    assert!(
        !text.contains("s3cret"),
        "a header value in a notice: {text}"
    );
    each_once(&rx, 100);
}

#[cfg(feature = "otlp-tls")]
mod tls {
    use super::*;
    use nowait_testkit::ca::Ca;

    /// A server certificate for 127.0.0.1 signed by `ca`, written beside
    /// the receiver's output: the receiver's `--tls` option.
    fn server_option(ca: &Ca, side: &Path, name: &str) -> String {
        let (cert, key) = ca.leaf(&["127.0.0.1"], false);
        let (c, k) = (
            side.join(format!("{name}.pem")),
            side.join(format!("{name}.key")),
        );
        std::fs::write(&c, cert).unwrap();
        std::fs::write(&k, key).unwrap();
        format!("--tls={},{}", unix_path(&c), unix_path(&k))
    }

    #[test]
    fn records_arrive_over_tls_with_a_custom_ca() {
        let Some(side) = linux_side() else { return };
        let ca = Ca::new("nowait test CA");
        let rx = Receiver::start(&side, "tls", "ok", &[server_option(&ca, &side, "tls")]);
        let (s, _) = send(
            Otlp::new(&format!("https://127.0.0.1:{}", rx.port)).ca_certificate_pem(ca.pem()),
            1000,
        );
        assert_eq!(s.records_written, 1000, "{s:?}");
        each_once(&rx, 1000);
    }

    #[test]
    fn a_certificate_from_another_ca_fails_the_sink_with_the_reason() {
        let Some(side) = linux_side() else { return };
        let (ca, other) = (Ca::new("nowait test CA"), Ca::new("someone else"));
        let rx = Receiver::start(
            &side,
            "tls-untrusted",
            "ok",
            &[server_option(&ca, &side, "tls-untrusted")],
        );
        let (s, text) = send(
            Otlp::new(&format!("https://127.0.0.1:{}", rx.port)).ca_certificate_pem(other.pem()),
            100,
        );
        assert_eq!(s.records_written, 0, "{s:?}");
        assert!(
            text.contains("certificate"),
            "no notice says what was wrong: {text}"
        );
        assert!(
            rx.accepted().is_empty(),
            "an untrusted receiver got records"
        );
    }

    /// No CA given: the trust is Windows' own store (read through
    /// `rustls-native-certs`), which cannot know the test's CA. Either the
    /// store holds no certificate (a bare Wine prefix) and the sink says
    /// so, or the receiver's certificate is refused with the reason; no
    /// record reaches the receiver, and every one is counted.
    #[test]
    fn the_windows_store_is_the_default_trust() {
        let Some(side) = linux_side() else { return };
        let ca = Ca::new("nowait test CA");
        let rx = Receiver::start(
            &side,
            "tls-store",
            "ok",
            &[server_option(&ca, &side, "tls-store")],
        );
        let otlp = Otlp::new(&format!("https://127.0.0.1:{}", rx.port));
        let others = MemoryWriter::default();
        let built = Builder::new()
            .shutdown_timeout(Duration::from_secs(10))
            .sink(Sink::writer(others.clone()).format(Plain))
            .sink(Sink::otlp(otlp.timeout(Duration::from_secs(5))))
            .build();
        let why = match built {
            Err(e) => e.to_string(),
            Ok((logger, guard)) => {
                for i in 0..100 {
                    logger.log(Level::Info, &format!("record {i}")).unwrap();
                }
                let _ = logger.flush_within(Duration::from_secs(20));
                drop(guard);
                let stats = logger.stats();
                let s = &stats.sinks[1];
                assert_eq!(s.records_written, 0, "{s:?}");
                assert_eq!(nowait_testkit::outcomes(s), 100, "{s:?}");
                others.take()
            }
        };
        let reason = why
            .lines()
            .find(|l| {
                l.contains("no trusted CA certificate found on this system")
                    || l.contains("UnknownIssuer")
            })
            .unwrap_or_else(|| panic!("no notice says why: {why}"));
        eprintln!("the Windows store under this Wine: {reason}");
        assert!(
            rx.accepted().is_empty(),
            "an untrusted receiver got records"
        );
    }
}
