//! `Logger::dump_recent` and `Builder::dump_recent_on_signal`: what a
//! sink's backtrace keeps is written now, between two marking lines,
//! without forgetting it (the next error still writes it), and without
//! counting the copies as records; SIGUSR1 does the same in a child
//! process.

#[cfg(all(unix, feature = "signals"))]
use std::time::{Duration, Instant};

use nowait_core::format::{Json, Text};
use nowait_core::sink::BacktraceBuffer;
use nowait_core::{Builder, Level, Sink};
use nowait_testkit::MemoryWriter;

fn text() -> Text {
    Text::new().without_time().ansi(false)
}

#[test]
fn the_dump_is_marked_and_the_error_still_gets_the_records() {
    let (out, plain) = (MemoryWriter::default(), MemoryWriter::default());
    let (logger, guard) = Builder::new()
        .flush_on_exit(false)
        .sink(
            Sink::writer(out.clone())
                .format(text())
                .level(Level::Info)
                .backtrace(BacktraceBuffer::records(10)),
        )
        .sink(
            Sink::writer(plain.clone())
                .format(text())
                .level(Level::Info),
        )
        .build()
        .unwrap();
    logger.dump_recent().unwrap();
    assert_eq!(
        out.take(),
        " INFO nowait: --- no recent records below INFO kept, dumped on request ---\n"
    );
    logger.log(Level::Debug, "d1").unwrap();
    logger.log(Level::Info, "i1").unwrap();
    logger.log(Level::Debug, "d2").unwrap();
    logger.dump_recent().unwrap();
    assert_eq!(
        out.take(),
        "i1\n\
         \x20INFO nowait: --- 2 recent records below INFO, dumped on request (still kept) ---\n\
         d1\n\
         d2\n\
         \x20INFO nowait: --- end of the 2 recent records dumped ---\n"
    );
    // A sink without a backtrace gets nothing but its own records.
    assert_eq!(plain.take(), "i1\n");
    let s = logger.stats();
    assert_eq!(s.sinks[0].backtrace_kept, 2, "still kept");
    assert_eq!(s.sinks[0].records_written, 1, "the copies are no records");
    logger.log(Level::Error, "e1").unwrap();
    drop(guard);
    assert_eq!(
        out.text(),
        " INFO nowait: --- 2 earlier records below INFO, kept for this ERROR ---\n\
         d1\n\
         d2\n\
         \x20INFO nowait: --- end of the 2 earlier records ---\n\
         e1\n"
    );
    let s = logger.stats();
    assert_eq!(s.sinks[0].records_written, 4);
    assert_eq!(s.sinks[0].backtrace_released, 2);
    assert_eq!(s.sinks[1].filtered, 2);
}

#[test]
fn json_marks_each_dumped_record() {
    let out = MemoryWriter::default();
    let (logger, _guard) = Builder::new()
        .flush_on_exit(false)
        .sink(
            Sink::writer(out.clone())
                .format(Json::new())
                .level(Level::Warn)
                .backtrace(BacktraceBuffer::records(10)),
        )
        .build()
        .unwrap();
    logger.log(Level::Info, "kept one").unwrap();
    logger.dump_recent().unwrap();
    let lines = out.lines();
    assert_eq!(lines.len(), 1, "{lines:?}");
    let v: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
    assert_eq!(v["fields"]["message"], "kept one");
    assert_eq!(v["backtrace"], true);
}

#[test]
fn after_shutdown_the_dump_is_closed() {
    let (logger, guard) = Builder::new()
        .flush_on_exit(false)
        .sink(Sink::writer(std::io::sink()).backtrace(BacktraceBuffer::records(1)))
        .build()
        .unwrap();
    drop(guard);
    assert!(matches!(
        logger.dump_recent(),
        Err(nowait_core::FlushError::Closed)
    ));
}

/// Runs in the child only: a logger dumping on SIGUSR1, some DEBUG
/// records kept, then "ready" and a wait for the parent to kill it.
#[cfg(all(unix, feature = "signals"))]
#[test]
fn child_entry() {
    use nowait_testkit::child;
    let Some(_case) = child::role() else {
        return;
    };
    let path = std::env::var("NOWAIT_FILE").unwrap();
    let (logger, _guard) = Builder::new()
        .sink(
            Sink::file(&path)
                .format(text())
                .level(Level::Info)
                .backtrace(BacktraceBuffer::records(10)),
        )
        .dump_recent_on_signal(true)
        .build()
        .unwrap();
    logger.log(Level::Debug, "debug before the signal").unwrap();
    logger.log(Level::Info, "running").unwrap();
    logger.flush().unwrap();
    println!("ready");
    std::thread::sleep(Duration::from_secs(60));
}

#[cfg(all(unix, feature = "signals"))]
#[test]
fn sigusr1_dumps_in_a_child_process() {
    use nowait_testkit::child::Child;
    if nowait_testkit::child::is_child() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.log");
    let mut running = Child::new("child_entry", "sigusr1")
        .env("NOWAIT_FILE", &path)
        .stdout(std::process::Stdio::piped())
        .spawn();
    running.wait_for_line("ready");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "running\n");
    running.signal(libc::SIGUSR1);
    let until = Instant::now() + Duration::from_secs(20);
    let expected = "running\n\
                    \x20INFO nowait: --- 1 recent record below INFO, dumped on request (still kept) ---\n\
                    debug before the signal\n\
                    \x20INFO nowait: --- end of the 1 recent record dumped ---\n";
    loop {
        let text = std::fs::read_to_string(&path).unwrap();
        if text == expected {
            break;
        }
        assert!(Instant::now() < until, "no dump after SIGUSR1:\n{text}");
        std::thread::sleep(Duration::from_millis(20));
    }
    running.kill();
}
