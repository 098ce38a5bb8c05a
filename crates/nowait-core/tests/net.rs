//! Socket sinks against local receivers: a TCP receiver that stops reading,
//! one that is down when the logger is built, a Unix receiver that drops
//! the connection in the middle of a record, a datagram receiver.
#![cfg(not(miri))] // sockets

use std::io::Read;
use std::net::TcpListener;
#[cfg(unix)]
use std::os::unix::net::{UnixDatagram, UnixListener};
use std::time::{Duration, Instant};

use nowait_core::format::Plain;
#[cfg(unix)]
use nowait_core::format::{Facility, Syslog};
use nowait_core::{Builder, FullPolicy, Level, Sink};
use nowait_testkit::MemoryWriter;

fn read_all(mut conn: impl Read) -> String {
    let mut s = Vec::new();
    conn.read_to_end(&mut s).unwrap();
    String::from_utf8(s).unwrap()
}

/// Waits (bounded) until `cond` holds.
fn wait_for(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn tcp_receiver_that_stops_reading_never_blocks_and_sheds_with_a_count() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (logger, guard) = Builder::new()
        .capacity(1 << 20)
        .full_policy(FullPolicy::Drop)
        .sink(Sink::tcp(addr).format(Plain).buffer_size(64 << 10))
        .build()
        .unwrap();
    // Accepted but never read (for now): the kernel buffers fill, then the
    // sink's 64 KiB, then it sheds.
    let (conn, _) = listener.accept().unwrap();
    let pad = "x".repeat(200);
    let n = 100_000u64;
    let mut accepted = 0u64;
    let mut slowest = Duration::ZERO;
    for i in 0..n {
        let t = Instant::now();
        let ok = logger.log(Level::Info, &format!("rec {i} {pad}")).is_ok();
        slowest = slowest.max(t.elapsed());
        accepted += u64::from(ok);
        if i % 100 == 0 {
            // Let the writer run: this test is about the sink, not the ring
            // (the ring must not overflow, or the socket never fills).
            std::thread::sleep(Duration::from_micros(200));
        }
    }
    // Not a speed check: a push that waited on the socket would take the
    // whole test.
    assert!(
        slowest < Duration::from_millis(50),
        "a log call waited {slowest:?}"
    );
    wait_for("the sink to shed", || {
        logger.stats().sinks[0].dropped_overflow > 0
    });
    // The receiver reads again: everything still pending arrives, then
    // the notice with the count.
    let reader = std::thread::spawn(move || read_all(conn));
    // Until then the sink was stalled, and a shutdown does not wait for a
    // stalled sink: wait for it to drain first.
    wait_for("the sink to drain", || {
        let s = &logger.stats().sinks[0];
        s.pending_bytes == 0 && !s.stalled
    });
    logger.flush().unwrap();
    drop(guard);
    let text = reader.join().unwrap();
    let stats = logger.stats();
    assert_eq!(stats.sinks[0].abandoned, 0);
    let sink = &stats.sinks[0];
    let received = text.lines().filter(|l| l.starts_with("rec ")).count() as u64;
    assert_eq!(received, sink.records_written, "{sink:?}");
    assert_eq!(
        stats.records_written,
        sink.records_written + sink.dropped(),
        "{sink:?}"
    );
    assert_eq!(accepted, stats.records_written + stats.abandoned);
    let shed = sink.dropped_overflow;
    assert!(shed > 0);
    let noticed: u64 = text
        .lines()
        .filter(|l| l.contains("too slow, its buffer was full"))
        .map(|l| {
            let rest = l.strip_prefix("nowait: WARN ").expect(l);
            rest.split(' ').next().unwrap().parse::<u64>().unwrap()
        })
        .sum();
    assert_eq!(noticed, shed, "every shed record is in a notice");
    // No record is cut or merged with another.
    for l in text.lines().filter(|l| l.starts_with("rec ")) {
        assert!(l.ends_with(&pad), "{l}");
        assert_eq!(l.matches("rec ").count(), 1, "{l}");
    }
}

#[test]
fn tcp_receiver_down_at_build_is_retried_and_reported() {
    let addr = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    // Nobody listens on `addr` now.
    let others = MemoryWriter::default();
    let (logger, guard) = Builder::new()
        .sink(Sink::tcp(addr).format(Plain))
        .sink(Sink::writer(others.clone()).format(Plain))
        .build()
        .expect("a receiver that is down is not a build error");
    for i in 0..10 {
        logger.log(Level::Info, &format!("early {i}")).unwrap();
    }
    wait_for("the failure notice", || {
        others.text().contains("write failed (Connection refused")
    });
    let failing = logger.stats().sinks[0].clone();
    assert!(failing.write_errors > 0 && failing.records_written == 0);
    assert!(failing.last_error.unwrap().contains("Connection refused"));
    // The receiver comes up on the same port: the retry connects, the
    // records kept meanwhile arrive once, with a recovery notice.
    let listener = TcpListener::bind(addr).unwrap();
    let (conn, _) = listener.accept().unwrap();
    logger.log(Level::Info, "late").unwrap();
    // Err while the sink reports its earlier failure; either way it waits.
    let _ = logger.flush();
    drop(guard);
    let text = read_all(conn);
    let early: Vec<&str> = text.lines().filter(|l| l.starts_with("early")).collect();
    assert_eq!(
        early,
        (0..10).map(|i| format!("early {i}")).collect::<Vec<_>>()
    );
    assert!(text.contains("\nlate\n"), "{text}");
    assert!(
        text.contains(&format!("nowait: WARN sink tcp:{addr} recovered after")),
        "{text}"
    );
    assert!(
        others.text().contains("recovered after"),
        "{}",
        others.text()
    );
    let stats = logger.stats();
    assert_eq!(stats.sinks[0].records_written, 11);
    assert_eq!(stats.sinks[0].dropped(), 0);
}

#[cfg(unix)] // Unix sockets; Windows refuses them at build (`unix_sockets_are_a_build_error_on_windows`)
#[test]
fn unix_connection_lost_mid_record_sends_the_record_again_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rx.sock");
    let listener = UnixListener::bind(&path).unwrap();
    let (logger, guard) = Builder::new()
        .capacity(8 << 20)
        .sink(Sink::unix(&path).format(Plain).buffer_size(4 << 20))
        .build()
        .unwrap();
    logger.log(Level::Info, "before").unwrap();
    // Larger than the socket buffer: it goes out in pieces.
    let big = format!("big-start {} big-end", "y".repeat(1 << 20));
    logger.log(Level::Info, &big).unwrap();
    logger.log(Level::Info, "after").unwrap();
    let (mut first, _) = listener.accept().unwrap();
    // Read part of the big record, then drop the connection.
    let mut got = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    while got.len() < 100_000 {
        let n = first.read(&mut chunk).unwrap();
        assert!(n > 0);
        got.extend_from_slice(&chunk[..n]);
    }
    drop(first);
    let got = String::from_utf8(got).unwrap();
    assert!(got.starts_with("before\nbig-start "), "{}", &got[..40]);
    assert!(!got.contains("big-end"));
    // The writer reconnects; the new connection starts with the big record
    // from its start, whole, then the rest.
    let (second, _) = listener.accept().unwrap();
    let reader = std::thread::spawn(move || read_all(second));
    // Err while the sink reports its earlier failure; either way it waits.
    let _ = logger.flush();
    drop(guard);
    let text = reader.join().unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let short: Vec<String> = lines
        .iter()
        .map(|l| format!("{}..({} bytes)", &l[..l.len().min(30)], l.len()))
        .collect();
    assert!(
        lines.first() == Some(&big.as_str()),
        "not restarted whole: {short:?} want {} bytes",
        big.len()
    );
    assert_eq!(lines.get(1).copied(), Some("after"));
    assert_eq!(text.matches("big-start").count(), 1, "not duplicated");
    assert!(
        lines[2..].iter().all(|l| l.starts_with("nowait: ")),
        "only notices follow: {:?}",
        &lines[2..]
    );
    let s = &logger.stats().sinks[0];
    assert_eq!((s.records_written, s.dropped()), (3, 0));
}

#[cfg(unix)] // Unix sockets
#[test]
fn unix_datagram_syslog_one_message_per_record() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("log");
    let err = Builder::new()
        .sink(Sink::unix_datagram(&path))
        .build()
        .unwrap_err();
    assert!(
        err.to_string().contains("unix-datagram:") && err.to_string().contains("log"),
        "{err}"
    );
    let rx = UnixDatagram::bind(&path).unwrap();
    rx.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let syslog = Syslog::new()
        .facility(Facility::Daemon)
        .app_name("t")
        .hostname("h");
    let (logger, guard) = Builder::new()
        .sink(Sink::unix_datagram(&path).format(Plain).syslog(syslog))
        .build()
        .unwrap();
    logger.log(Level::Error, "one").unwrap();
    logger.log(Level::Debug, "two\nthree").unwrap();
    // Err while the sink reports its earlier failure; either way it waits.
    let _ = logger.flush();
    drop(guard);
    let pid = std::process::id();
    let mut buf = [0u8; 1024];
    let mut next = || {
        let n = rx.recv(&mut buf).unwrap();
        let s = String::from_utf8(buf[..n].to_vec()).unwrap();
        // <PRI>1 TIMESTAMP h t PID - - MSG; drop the timestamp.
        let (head, rest) = s.split_once(' ').unwrap();
        let (_, rest) = rest.split_once(' ').unwrap();
        format!("{head} {rest}")
    };
    // daemon (3) * 8 + err (3) = 27, + debug (7) = 31.
    assert_eq!(next(), format!("<27>1 h t {pid} - - one"));
    assert_eq!(next(), format!("<31>1 h t {pid} - - two\\nthree"));
}

#[test]
fn tcp_address_that_does_not_resolve_is_a_build_error() {
    let err = Builder::new()
        .sink(Sink::tcp("no-such-host.invalid:514"))
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("cannot resolve"), "{err}");
}

/// Windows has no Unix sockets here: asking for one is a clear error when
/// the logger is built, not a sink that fails on every write.
#[cfg(windows)]
#[test]
fn unix_sockets_are_a_build_error_on_windows() {
    let dir = tempfile::tempdir().unwrap();
    for sink in [
        Sink::unix(dir.path().join("s")),
        Sink::unix_datagram(dir.path().join("d")),
    ] {
        let err = Builder::new().sink(sink).build().unwrap_err().to_string();
        assert!(
            err.contains("Unix sockets are not supported on Windows"),
            "{err}"
        );
    }
}
