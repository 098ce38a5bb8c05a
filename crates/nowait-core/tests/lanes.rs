//! Per-thread lanes (`Builder::lanes`): the order of records across
//! threads and within one, the shared ring as every lane's overflow, more
//! threads than lanes, flushes from another thread, and lanes turned off.

use std::sync::mpsc;
use std::time::Duration;

use nowait_core::__private::event::{timestamp, EventBuf};
use nowait_core::event::FieldName;
use nowait_core::record::kind;
use nowait_core::{Builder, FullPolicy, Level, Sink};
use nowait_testkit::{MemoryWriter, Slow};

/// Lanes are opt-in: every test here turns them on (16, the count the
/// docs suggest), except the one that checks them off.
fn builder() -> Builder {
    Builder::new()
        .catch_panics(false)
        .format(nowait_core::format::Plain)
        .lanes(16)
}

fn scale(n: usize) -> usize {
    if cfg!(miri) {
        n / 100
    } else {
        n
    }
}

/// Three threads take turns through channels, so each record is stamped
/// after the previous one (of another thread) was accepted: the file shows
/// them in the order they happened, not lane by lane.
#[test]
fn records_handed_from_thread_to_thread_come_out_in_the_order_they_happened() {
    let out = MemoryWriter::default();
    let (logger, guard) = builder()
        .format(nowait_core::format::Text::new().with_ansi(false))
        .flush_interval(Duration::from_millis(1))
        .sink(Sink::writer(out.clone()))
        .build()
        .unwrap();
    let rounds = scale(2_000);
    let threads = 3;
    let (txs, rxs): (Vec<_>, Vec<_>) = (0..threads).map(|_| mpsc::channel::<usize>()).unzip();
    std::thread::scope(|s| {
        for (t, rx) in rxs.into_iter().enumerate() {
            let logger = logger.clone();
            let next = txs[(t + 1) % threads].clone();
            s.spawn(move || {
                while let Ok(n) = rx.recv() {
                    if n == rounds * threads {
                        let _ = next.send(n);
                        return;
                    }
                    // Alternately a text line (no time of its own: given
                    // one) and an event.
                    if n % 2 == 0 {
                        logger.log(Level::Info, &format!("{n}")).unwrap();
                    } else {
                        let mut buf = EventBuf::new();
                        buf.begin_inline(timestamp(), "app");
                        buf.str(FieldName::Inline("message"), &n.to_string());
                        nowait_core::__private::logger::push(
                            &logger,
                            Level::Info,
                            kind::EVENT,
                            &[buf.as_bytes()],
                        )
                        .unwrap();
                    }
                    let _ = next.send(n + 1);
                }
            });
        }
        txs[0].send(0).unwrap();
    });
    drop(guard);
    let lines = out.lines();
    assert_eq!(lines.len(), rounds * threads);
    for (i, line) in lines.iter().enumerate() {
        assert!(line.ends_with(&format!("{i}")), "line {i}: {line:?}");
    }
}

/// A lane much smaller than what one thread logs between two wake-ups of
/// the writer: the overflow goes through the shared ring, nothing is
/// dropped that the ring could take, and each thread's lines stay in its
/// order (the writer's merge by time, and a thread that spilled stays in
/// the ring until its record was taken).
#[test]
fn a_full_lane_overflows_into_the_ring_in_order() {
    let out = MemoryWriter::default();
    let threads = 3;
    let per_thread = scale(30_000);
    let (logger, guard) = builder()
        .capacity(4 << 20)
        .lane_capacity(1024)
        .full_policy(FullPolicy::Drop)
        .flush_interval(Duration::from_millis(20))
        .sink(Sink::writer(out.clone()))
        .build()
        .unwrap();
    log_from_threads(&logger, threads, per_thread);
    drop(guard);
    let stats = logger.stats();
    assert_eq!(stats.dropped(), 0, "{stats:?}");
    assert_each_thread_in_order(&out.lines(), threads, per_thread);
}

/// More threads than lanes: the threads without one use the shared ring;
/// every record arrives, each thread's in order, under the blocking policy
/// with a slow sink.
#[test]
fn more_threads_than_lanes_share_the_ring() {
    let out = MemoryWriter::default();
    let threads = 6;
    let per_thread = scale(5_000);
    let (logger, guard) = builder()
        .lanes(2)
        .capacity(16 << 10)
        .full_policy(FullPolicy::Block)
        .sink(Sink::writer(Slow {
            inner: out.clone(),
            delay: Duration::from_micros(100),
            chunk: 64 << 10,
        }))
        .build()
        .unwrap();
    log_from_threads(&logger, threads, per_thread);
    drop(guard);
    assert_eq!(logger.stats().dropped(), 0);
    assert_each_thread_in_order(&out.lines(), threads, per_thread);
}

/// A flush waits for what other threads put in their lanes before it was
/// called, even with an interval that would otherwise keep the writer
/// asleep for an hour.
#[test]
fn a_flush_covers_records_in_other_threads_lanes() {
    let out = MemoryWriter::default();
    let (logger, guard) = builder()
        .flush_interval(Duration::from_secs(3600))
        .sink(Sink::writer(out.clone()))
        .build()
        .unwrap();
    let n = scale(1_000);
    log_from_threads(&logger, 2, n);
    logger.flush().unwrap();
    assert_eq!(out.lines().len(), 2 * n);
    drop(guard);
}

/// `lanes(0)`: every thread claims in the shared ring; records carry no
/// time in front (the full half ring is the largest record).
#[test]
fn without_lanes_the_ring_takes_everything() {
    let out = MemoryWriter::default();
    let (logger, guard) = builder()
        .lanes(0)
        .capacity(4096)
        .sink(Sink::writer(out.clone()))
        .build()
        .unwrap();
    assert_eq!(logger.max_record_len(), 2040);
    let line = "x".repeat(2040);
    logger.log(Level::Info, &line).unwrap();
    nowait_core::__private::logger::push(&logger, Level::Warn, kind::TEXT, &[b"a", b"b"]).unwrap();
    drop(guard);
    assert_eq!(out.lines(), vec![line, "ab".to_owned()]);
}

/// With lanes a text record carries a time in front, which no format
/// ever sees, at the largest size a record may have.
#[test]
fn the_time_in_front_of_a_text_record_never_reaches_a_format() {
    let out = MemoryWriter::default();
    let (logger, guard) = builder()
        .capacity(4096)
        .sink(Sink::writer(out.clone()))
        .build()
        .unwrap();
    let max = logger.max_record_len();
    assert_eq!(max, 2032);
    let line = "y".repeat(max);
    logger.log(Level::Info, &line).unwrap();
    nowait_core::__private::logger::push(&logger, Level::Warn, kind::TEXT, &[b"c", b"d"]).unwrap();
    logger.log(Level::Info, "").unwrap();
    drop(guard);
    assert_eq!(out.lines(), vec![line, "cd".to_owned(), String::new()]);
}

/// Invalid lane settings are refused at build with a message.
#[test]
fn invalid_lane_settings_are_build_errors() {
    let e = Builder::new()
        .lanes(1 << 20)
        .sink(Sink::writer(std::io::sink()))
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("lanes must be at most"), "{e}");
    let e = Builder::new()
        .lane_capacity(8)
        .sink(Sink::writer(std::io::sink()))
        .build()
        .unwrap_err();
    assert!(e.to_string().contains("lane capacity"), "{e}");
}

/// `threads` threads each log "t<thread> <i>" for i in 0..per_thread.
fn log_from_threads(logger: &nowait_core::Logger, threads: usize, per_thread: usize) {
    std::thread::scope(|s| {
        for t in 0..threads {
            let logger = logger.clone();
            s.spawn(move || {
                for i in 0..per_thread {
                    logger.log(Level::Info, &format!("t{t} {i}")).unwrap();
                }
            });
        }
    });
}

/// Lines "t<thread> <i>": all of them, each thread's in its order.
fn assert_each_thread_in_order(lines: &[String], threads: usize, per_thread: usize) {
    let mut next = vec![0usize; threads];
    assert_eq!(lines.len(), threads * per_thread);
    for line in lines {
        let (t, i) = line.split_once(' ').unwrap();
        let t: usize = t[1..].parse().unwrap();
        let i: usize = i.parse().unwrap();
        assert_eq!(i, next[t], "thread {t} out of order");
        next[t] += 1;
    }
}
