//! The books across a record's way: abandoning at shutdown keeps the
//! notices and a torn record's tail; an output or writer that panics fails
//! its sink for good, with every record counted.

use std::io;
use std::time::{Instant, SystemTime};

use super::*;
use crate::format::Plain;
use crate::record::{Notice, Record};

fn sink() -> SinkState {
    let output = Output::Gone("test".into());
    SinkState::new("t".into(), output, Box::new(Plain), false, 1 << 20, 1 << 20)
}

fn notice(message: &str) -> Vec<u8> {
    let mut out = Vec::new();
    let n = Notice::new(Level::Warn, SystemTime::now(), message);
    Plain.notice(&n, &mut out);
    out
}

/// Records abandoned at shutdown take nothing else with them: the
/// notices queued among them (what they say about earlier losses) stay
/// queued, in order, and the bookkeeping still adds up.
#[test]
fn abandoning_records_keeps_the_notices_queued_among_them() {
    let mut s = sink();
    s.add_record(&Record::new(Level::Info, 0, b"r1"));
    s.add_notice(Level::Warn, "5 records dropped");
    s.add_record(&Record::new(Level::Info, 0, b"r2"));
    s.add_notice(Level::Warn, "7 records dropped");
    s.add_record(&Record::new(Level::Info, 0, b"r3"));
    let (n, held, shed) = s.abandon_pending();
    assert_eq!((n, held, shed, s.pending, s.abandoned), (3, 0, None, 0, 3));
    let want = [notice("5 records dropped"), notice("7 records dropped")].concat();
    assert_eq!(&s.buf[s.sent..], &want[..]);
    assert_eq!(s.ends.len(), 2);
    assert!(s.ends.iter().all(|e| e & NOTICE_BIT != 0));
    assert_eq!(s.appended - s.written, want.len() as u64);
    assert_eq!(s.ends.back().map(|e| e & !NOTICE_BIT), Some(s.appended));
}

/// A record cut by a short write keeps its tail (so the next bytes
/// start a line), then come the queued notices.
#[test]
fn abandoning_after_a_short_write_keeps_the_torn_tail_then_the_notices() {
    let mut s = sink();
    s.add_record(&Record::new(Level::Info, 0, b"first"));
    s.add_notice(Level::Warn, "3 records dropped");
    s.add_record(&Record::new(Level::Info, 0, b"second"));
    // The output took "fir" of "first\n".
    s.sent = 3;
    s.written = 3;
    s.mid_line = true;
    let (n, _, _) = s.abandon_pending();
    assert_eq!(n, 2, "the torn record is counted too");
    let want = [b"st\n".to_vec(), notice("3 records dropped")].concat();
    assert_eq!(&s.buf[s.sent..], &want[..]);
    assert_eq!(s.appended - s.written, want.len() as u64);
    assert_eq!(s.ends.len(), 2);
}

/// Runs `f` on a thread marked as a writer thread, as the writer's
/// calls into outputs are: nowait's panic hook, if a test installed
/// it, notes a panic there instead of logging it into live loggers.
fn on_writer_thread<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    std::thread::scope(|scope| {
        scope
            .spawn(|| {
                crate::shared::Shared::mark_writer_thread();
                f()
            })
            .join()
            .unwrap()
    })
}

/// An output whose code panics (nowait's own, not a user's writer):
/// the panic stays in the output. Its sink fails for good, its pending
/// records and every later one are counted as dropped for a failed
/// sink, the other sinks get the notice, and the broken output is
/// never called again.
#[test]
fn a_panicking_output_fails_its_sink_for_good_with_every_record_counted() {
    let mut s = SinkState::new(
        "t".into(),
        Output::Panicking,
        Box::new(Plain),
        false,
        1 << 20,
        1 << 20,
    );
    s.add_record(&Record::new(Level::Info, 0, b"r1"));
    s.add_notice(Level::Warn, "3 records dropped");
    s.add_record(&Record::new(Level::Info, 0, b"r2"));
    let now = Instant::now();
    let (event, mut s) = on_writer_thread(move || (s.write_out(now, false, &mut |_| {}), s));
    let (level, msg) = event.expect("a notice for the other sinks");
    assert_eq!(level, Level::Error);
    assert!(
        msg.starts_with("sink t failed for good (the sink's output panicked, a nowait bug: ")
            && msg.contains("an output's bug"),
        "{msg}"
    );
    assert!(s.dead && s.output.is_gone(), "{:?}", s.output);
    assert_eq!(
        (
            s.pending,
            s.records_written,
            s.dropped_failed,
            s.dropped_dead
        ),
        (0, 0, 2, 2)
    );
    assert_eq!(s.write_errors, 1);
    s.add_record(&Record::new(Level::Info, 0, b"r3"));
    assert_eq!((s.dropped_failed, s.dropped_dead), (3, 3));
    assert_eq!(
        s.write_out(now, false, &mut |_| {}),
        None,
        "a failed sink is not written"
    );
    let (n, held, shed) = s.abandon_pending();
    assert_eq!((n, held, shed, s.abandoned), (0, 0, None, 0));
}

/// A user's writer whose flush panics fails its sink the same way.
#[test]
fn a_writer_panicking_in_flush_fails_its_sink_for_good() {
    struct FlushBomb;
    impl std::io::Write for FlushBomb {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            panic!("flush bug")
        }
    }
    let output = Output::Writer(Box::new(FlushBomb));
    let mut s = SinkState::new("w".into(), output, Box::new(Plain), true, 1 << 20, 1 << 20);
    s.add_record(&Record::new(Level::Info, 0, b"r1"));
    let now = Instant::now();
    let (written, event, mut s) = on_writer_thread(move || {
        let written = s.write_out(now, false, &mut |_| {});
        let event = s.flush_output(now);
        (written, event, s)
    });
    assert_eq!(written, None);
    assert_eq!(s.records_written, 1);
    let (_, msg) = event.expect("a notice for the other sinks");
    assert!(
        msg.contains("sink w failed for good (the sink's writer panicked)"),
        "{msg}"
    );
    assert!(s.dead && s.output.is_gone());
    s.add_record(&Record::new(Level::Info, 0, b"r2"));
    assert_eq!((s.records_written, s.dropped_dead), (1, 1));
}
