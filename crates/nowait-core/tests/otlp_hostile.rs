//! The OTLP sink against hostile receivers: a tiny HTTP server on loopback,
//! a thread of this test, that answers every request with what no honest
//! receiver sends (a chunk size that overflows, an endless stream of
//! `100 Continue`). The answer is untrusted input: it may fail the OTLP
//! sink's requests, never the writer thread, so the file sink beside it
//! keeps every record, the OTLP sink's records are all counted, and the
//! file says why they are missing.
//!
//! Needs no receiver installed (unlike `tests/otlp.rs`).
#![cfg(all(unix, feature = "otlp", not(miri)))] // sockets and threads

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nowait_core::format::Plain;
use nowait_core::sink::Otlp;
use nowait_core::stats::SinkStats;
use nowait_core::{Builder, Level, Sink};

/// How a hostile server answers one request, on its connection.
type Answer = fn(&mut TcpStream, &AtomicBool);

/// A server on 127.0.0.1 that reads each request whole, then answers it
/// with `answer`, one connection at a time; stopped and joined on drop.
struct Hostile {
    port: u16,
    stop: Arc<AtomicBool>,
    answered: Arc<AtomicU64>,
    thread: Option<JoinHandle<()>>,
}

impl Hostile {
    fn start(answer: Answer) -> Hostile {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let stop = Arc::new(AtomicBool::new(false));
        let answered = Arc::new(AtomicU64::new(0));
        let thread = std::thread::spawn({
            let (stop, answered) = (Arc::clone(&stop), Arc::clone(&answered));
            move || {
                while !stop.load(Ordering::SeqCst) {
                    let mut conn = match listener.accept() {
                        Ok((conn, _)) => conn,
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                            std::thread::sleep(Duration::from_millis(2));
                            continue;
                        }
                        Err(e) => panic!("accept: {e}"),
                    };
                    conn.set_nonblocking(false).unwrap();
                    conn.set_read_timeout(Some(Duration::from_millis(50)))
                        .unwrap();
                    conn.set_write_timeout(Some(Duration::from_millis(50)))
                        .unwrap();
                    // Each request on the connection gets the answer, until
                    // the client hangs up.
                    while read_request(&mut conn, &stop) {
                        answer(&mut conn, &stop);
                        answered.fetch_add(1, Ordering::SeqCst);
                    }
                }
            }
        });
        Hostile {
            port,
            stop,
            answered,
            thread: Some(thread),
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The OTLP sink's name in notices and stats.
    fn sink_name(&self) -> String {
        format!("otlp:{}/v1/logs", self.url())
    }

    /// Waits until the server answered a request.
    fn wait_answered(&self) {
        let start = Instant::now();
        while self.answered.load(Ordering::SeqCst) == 0 {
            assert!(start.elapsed() < Duration::from_secs(10), "no request came");
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Hostile {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Reads one request (head, then `Content-Length` bytes of body); `false`
/// once the client hung up or the server stops.
fn read_request(conn: &mut TcpStream, stop: &AtomicBool) -> bool {
    let mut got = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&got[..end]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map_or(0, |v| v.trim().parse().unwrap());
            if got.len() >= end + 4 + len {
                return true;
            }
        }
        if stop.load(Ordering::SeqCst) {
            return false;
        }
        match conn.read(&mut chunk) {
            Ok(0) => return false,
            Ok(n) => got.extend_from_slice(&chunk[..n]),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(_) => return false,
        }
    }
}

/// A chunked answer whose chunk size is 2^64 - 1.
fn overflowing_chunk(conn: &mut TcpStream, _stop: &AtomicBool) {
    let _ = conn.write_all(
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\nabcdef",
    );
}

/// `100 Continue`, again and again, as fast as the client takes it, until
/// the client hangs up or [`STREAM_CAP`] passed; notes how long the client
/// read before hanging up (the cap if it never did).
fn endless_continue(conn: &mut TcpStream, stop: &AtomicBool) {
    let block: Vec<u8> = b"HTTP/1.1 100 Continue\r\n\r\n"
        .iter()
        .copied()
        .cycle()
        .take(25 * 2048)
        .collect();
    let start = Instant::now();
    let mut read_for = STREAM_CAP;
    // Where the next write starts in the block (writes may be short).
    let mut at = 0;
    while !stop.load(Ordering::SeqCst) && start.elapsed() < STREAM_CAP {
        match conn.write(&block[at..]) {
            Ok(n) => at = (at + n) % block.len(),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(_) => {
                read_for = start.elapsed();
                break;
            }
        }
    }
    let ms = u64::try_from(read_for.as_millis()).unwrap_or(u64::MAX);
    LONGEST_READ_MS.fetch_max(ms, Ordering::SeqCst);
    // Hung up on by the server (at the cap): the next request comes on a
    // new connection.
    let _ = conn.shutdown(std::net::Shutdown::Both);
}

/// The longest an endless stream of interim responses runs on one
/// connection.
const STREAM_CAP: Duration = Duration::from_secs(5);

/// The longest time a client read an endless stream before hanging up.
static LONGEST_READ_MS: AtomicU64 = AtomicU64::new(0);

/// Every accepted record in exactly one outcome.
fn assert_accounted(s: &SinkStats, accepted: u64) {
    assert_eq!(nowait_testkit::outcomes(s), accepted, "{s:?}");
}

/// Waits up to `within` for `line` to be a line of the file at `path`.
fn appears(path: &Path, line: &str, within: Duration) -> bool {
    let start = Instant::now();
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if text.lines().any(|l| l == line) {
            return true;
        }
        if start.elapsed() >= within {
            return false;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Logs `rounds` records one by one beside a hostile receiver; each must
/// reach the file within a second (the writer is never held by the OTLP
/// sink). Then checks the accounting of both sinks and the notice.
fn file_sink_outlives(server: &Hostile, rounds: u64) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.log");
    let (logger, guard) = Builder::new()
        // A test failing on another thread must not log into this logger.
        .catch_panics(false)
        .shutdown_timeout(Duration::from_secs(3))
        .sink(Sink::file(&path).format(Plain))
        .sink(Sink::otlp(
            Otlp::new(&server.url()).timeout(Duration::from_secs(30)),
        ))
        .build()
        .unwrap();
    logger.log(Level::Info, "r0").unwrap();
    server.wait_answered();
    for i in 1..rounds {
        let line = format!("r{i}");
        assert_eq!(
            logger.log(Level::Info, &line),
            Ok(()),
            "the writer thread is gone"
        );
        assert!(
            appears(&path, &line, Duration::from_secs(1)),
            "{line} did not reach the file: {:?}",
            logger.stats()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    drop(guard);
    let stats = logger.stats();
    let (file, otlp) = (&stats.sinks[0], &stats.sinks[1]);
    assert_eq!(otlp.name, server.sink_name());
    assert_eq!(
        (file.records_written, file.dropped()),
        (rounds, 0),
        "{file:?}"
    );
    assert_accounted(otlp, rounds);
    assert_eq!(otlp.records_written, 0, "{otlp:?}");
    assert!(otlp.write_errors > 0, "{otlp:?}");
    let text = std::fs::read_to_string(&path).unwrap();
    for i in 0..rounds {
        assert!(text.lines().any(|l| l == format!("r{i}")), "r{i}: {text}");
    }
    let notice = format!("sink {} ", server.sink_name());
    assert!(
        text.lines().any(|l| l.starts_with("nowait: ERROR ")
            && l.contains(&notice)
            && l.contains("failed")),
        "{text}"
    );
}

/// `Transfer-Encoding: chunked` with a chunk of `ffffffffffffffff` bytes:
/// the request fails (retried, then counted), the writer thread and the
/// file sink go on. (Were the reader to panic on it, the writer's guard
/// around every call into an output would fail the OTLP sink alone, and
/// this would still hold.)
#[test]
fn an_overflowing_chunk_size_fails_the_request_not_the_writer() {
    let server = Hostile::start(overflowing_chunk);
    file_sink_outlives(&server, 20);
}

/// An endless stream of interim responses meets the response bound: the
/// writer reads a bounded answer per request and never stops serving the
/// file sink meanwhile.
#[test]
fn an_endless_stream_of_100_continue_does_not_hold_up_the_writer() {
    let server = Hostile::start(endless_continue);
    file_sink_outlives(&server, 20);
    // Each request read a bounded answer and hung up, long before the
    // receiver would have stopped on its own (or the OTLP timeout).
    let longest = Duration::from_millis(LONGEST_READ_MS.load(Ordering::SeqCst));
    assert!(longest < Duration::from_secs(2), "read for {longest:?}");
}
