//! Backtrace on error: a sink keeps the last records
//! below its level and writes them, marked, before a trigger. Exact bytes
//! in text and JSON, order, the bounds, triggers in a row, sinks
//! independent of each other, the macros, the accounting, configuration
//! errors.
//!
//! One test uses the process-wide logger (the macros); the others build
//! loggers of their own.

use nowait_core::format::{Json, Syslog, Text};
use nowait_core::sink::BacktraceBuffer;
use nowait_core::stats::Stats;
use nowait_core::{debug, error, info, trace, warn, Builder, Guard, Level, Logger, Sink};
use nowait_testkit::MemoryWriter;

fn text() -> Text {
    Text::new().without_time().with_ansi(false)
}

/// Every record the writer took ends, per sink, in exactly one outcome
/// (with what a backtrace keeps counted apart while the logger runs).
fn assert_identity(s: &Stats) {
    for sink in &s.sinks {
        assert_eq!(
            nowait_testkit::outcomes(sink) + sink.backtrace_kept,
            s.records_written,
            "{sink:#?}"
        );
    }
}

/// A logger with one text sink at `Info` keeping `backtrace` below it.
fn text_sink_at_info(backtrace: BacktraceBuffer) -> (MemoryWriter, Logger, Guard) {
    let out = MemoryWriter::default();
    let (logger, guard) = Builder::new()
        .flush_on_exit(false)
        .sink(
            Sink::writer(out.clone())
                .format(text())
                .level(Level::Info)
                .backtrace(backtrace),
        )
        .build()
        .unwrap();
    (out, logger, guard)
}

fn log_all(logger: &Logger, records: &[(Level, &str)]) {
    for (level, line) in records {
        logger.log(*level, line).unwrap();
    }
}

#[test]
fn text_output_is_exact_in_order_and_counted_once() {
    let (out, logger, guard) = text_sink_at_info(BacktraceBuffer::records(100));
    assert_eq!(logger.min_level(), Level::Debug);
    log_all(
        &logger,
        &[
            (Level::Debug, "d1"),
            (Level::Info, "i1"),
            (Level::Trace, "t1 below the backtrace's lowest level"),
            (Level::Debug, "d2"),
            (Level::Warn, "w1 is no trigger"),
            (Level::Debug, "d3"),
            (Level::Error, "e1"),
            (Level::Debug, "d4 kept, then discarded at shutdown"),
        ],
    );
    logger.flush().unwrap();
    let s = logger.stats();
    assert_identity(&s);
    assert_eq!(s.sinks[0].backtrace_kept, 1);
    drop(guard);
    assert_eq!(
        out.take(),
        "i1\n\
         w1 is no trigger\n \
         INFO nowait: --- 3 earlier records below INFO, kept for this ERROR ---\n\
         d1\n\
         d2\n\
         d3\n \
         INFO nowait: --- end of the 3 earlier records ---\n\
         e1\n"
    );
    let s = logger.stats();
    assert_identity(&s);
    let sink = &s.sinks[0];
    assert_eq!(sink.records_written, 6);
    assert_eq!(sink.backtrace_released, 3);
    assert_eq!(sink.backtrace_kept, 0);
    // The TRACE record (never kept) and the last DEBUG one (kept, no
    // trigger came).
    assert_eq!(sink.filtered, 2);
    assert_eq!(s.records_written, 8);
}

#[test]
fn json_lines_carry_a_key_and_no_prose_line() {
    let (ours, theirs) = (MemoryWriter::default(), MemoryWriter::default());
    let (logger, guard) = Builder::new()
        .flush_on_exit(false)
        .sink(
            Sink::writer(ours.clone())
                .format(Json::new().without_time())
                .level(Level::Info)
                .backtrace(BacktraceBuffer::records(10)),
        )
        .sink(
            Sink::writer(theirs.clone())
                .format(Json::nowait_schema())
                .level(Level::Warn)
                .backtrace(BacktraceBuffer::records(10).trigger(Level::Warn)),
        )
        .build()
        .unwrap();
    log_all(
        &logger,
        &[
            (Level::Debug, "d1 \"quoted\"\n"),
            (Level::Info, "i1"),
            (Level::Error, "e1"),
        ],
    );
    drop(guard);
    assert_eq!(
        ours.take(),
        "{\"level\":\"INFO\",\"fields\":{\"message\":\"i1\"},\"target\":\"\"}\n\
         {\"level\":\"DEBUG\",\"fields\":{\"message\":\"d1 \\\"quoted\\\"\\n\"},\"target\":\"\",\"backtrace\":true}\n\
         {\"level\":\"ERROR\",\"fields\":{\"message\":\"e1\"},\"target\":\"\"}\n"
    );
    // nowait's schema: the same key, last, after all six.
    let theirs = theirs.take();
    let lines: Vec<&str> = theirs.lines().collect();
    assert_eq!(lines.len(), 3, "{theirs}");
    assert!(lines[0].contains("\"level\":\"DEBUG\""), "{theirs}");
    assert!(
        lines[0].ends_with(
            ",\"message\":\"d1 \\\"quoted\\\"\\n\",\"fields\":{},\"spans\":[],\"backtrace\":true}"
        ),
        "{theirs}"
    );
    assert!(
        lines[1].contains("\"level\":\"INFO\"")
            && lines[1].ends_with("\"spans\":[],\"backtrace\":true}"),
        "{theirs}"
    );
    assert!(
        lines[2].ends_with("\"message\":\"e1\",\"fields\":{},\"spans\":[]}"),
        "{theirs}"
    );
    let s = logger.stats();
    assert_identity(&s);
    assert_eq!(
        (s.sinks[0].backtrace_released, s.sinks[1].backtrace_released),
        (1, 2)
    );
}

#[test]
fn past_the_record_bound_the_oldest_is_forgotten_and_said_so() {
    let (out, logger, guard) = text_sink_at_info(BacktraceBuffer::records(3));
    log_all(
        &logger,
        &[
            (Level::Debug, "d1"),
            (Level::Debug, "d2"),
            (Level::Debug, "d3"),
            (Level::Debug, "d4"),
            (Level::Error, "e1"),
        ],
    );
    drop(guard);
    assert_eq!(
        out.take(),
        " INFO nowait: --- 3 earlier records below INFO, kept for this ERROR; \
         1 older one was not kept ---\n\
         d2\n\
         d3\n\
         d4\n \
         INFO nowait: --- end of the 3 earlier records ---\n\
         e1\n"
    );
    let s = logger.stats();
    assert_identity(&s);
    assert_eq!((s.sinks[0].filtered, s.sinks[0].records_written), (1, 4));
}

#[test]
fn past_the_byte_bound_the_oldest_is_forgotten() {
    let (out, logger, guard) = text_sink_at_info(BacktraceBuffer::bytes(1024));
    // A text record's payload is its line: 200 + 6 bytes each, so 4 fit
    // in 1024 and a fifth does not.
    let lines: Vec<String> = (0..6).map(|i| format!("{i}{}", "x".repeat(199))).collect();
    for l in &lines {
        logger.log(Level::Debug, l).unwrap();
    }
    logger.log(Level::Error, "e1").unwrap();
    drop(guard);
    let want = format!(
        " INFO nowait: --- 4 earlier records below INFO, kept for this ERROR; \
         2 older ones were not kept ---\n{}\n{}\n{}\n{}\n \
         INFO nowait: --- end of the 4 earlier records ---\ne1\n",
        lines[2], lines[3], lines[4], lines[5]
    );
    assert_eq!(out.take(), want);
    let s = logger.stats();
    assert_identity(&s);
    assert_eq!(s.sinks[0].filtered, 2);
}

#[test]
fn a_second_trigger_writes_only_what_came_since_the_first() {
    let (out, logger, guard) = text_sink_at_info(BacktraceBuffer::records(10));
    log_all(
        &logger,
        &[
            (Level::Debug, "d1"),
            (Level::Error, "e1"),
            (Level::Debug, "d2"),
            (Level::Debug, "d3"),
            (Level::Error, "e2"),
            (Level::Error, "e3 has nothing before it"),
        ],
    );
    drop(guard);
    assert_eq!(
        out.take(),
        " INFO nowait: --- 1 earlier record below INFO, kept for this ERROR ---\n\
         d1\n \
         INFO nowait: --- end of the 1 earlier record ---\n\
         e1\n \
         INFO nowait: --- 2 earlier records below INFO, kept for this ERROR ---\n\
         d2\n\
         d3\n \
         INFO nowait: --- end of the 2 earlier records ---\n\
         e2\n\
         e3 has nothing before it\n"
    );
    let s = logger.stats();
    assert_identity(&s);
    assert_eq!((s.sinks[0].filtered, s.sinks[0].backtrace_released), (0, 3));
}

/// A file-like sink with a backtrace, a terminal-like one without at the
/// same level, and one that takes everything: each gets what its own
/// configuration says.
#[test]
fn sinks_are_independent() {
    let (file, term, all) = (
        MemoryWriter::default(),
        MemoryWriter::default(),
        MemoryWriter::default(),
    );
    let (logger, guard) = Builder::new()
        .flush_on_exit(false)
        .sink(
            Sink::writer(file.clone())
                .format(text())
                .level(Level::Info)
                .backtrace(BacktraceBuffer::records(10).trigger(Level::Warn)),
        )
        .sink(Sink::writer(term.clone()).format(text()).level(Level::Info))
        .sink(Sink::writer(all.clone()).format(text()))
        .build()
        .unwrap();
    assert_eq!(logger.min_level(), Level::Trace);
    log_all(
        &logger,
        &[
            (Level::Debug, "d1"),
            (Level::Info, "i1"),
            (Level::Warn, "w1"),
            (Level::Debug, "d2"),
        ],
    );
    drop(guard);
    assert_eq!(
        file.take(),
        "i1\n \
         INFO nowait: --- 1 earlier record below INFO, kept for this WARN ---\n\
         d1\n \
         INFO nowait: --- end of the 1 earlier record ---\n\
         w1\n"
    );
    assert_eq!(term.take(), "i1\nw1\n");
    assert_eq!(all.take(), "d1\ni1\nw1\nd2\n");
    let s = logger.stats();
    assert_identity(&s);
    let f = |i: usize| (s.sinks[i].filtered, s.sinks[i].backtrace_released);
    assert_eq!([f(0), f(1), f(2)], [(1, 1), (2, 0), (0, 0)]);
}

/// A backtrace only sees what the front ends push: the logger's level
/// goes down to the backtrace's lowest level, and no further.
#[test]
fn the_logger_level_follows_the_lowest_level_kept() {
    let build = |sink: Sink| Builder::new().sink(sink).build().unwrap().0.min_level();
    let w = || Sink::writer(std::io::sink()).level(Level::Warn);
    assert_eq!(build(w()), Level::Warn);
    assert_eq!(
        build(w().backtrace(BacktraceBuffer::records(5))),
        Level::Debug
    );
    let info = BacktraceBuffer::records(5).lowest(Level::Info);
    assert_eq!(build(w().backtrace(info)), Level::Info);
    let trace = BacktraceBuffer::records(5).lowest(Level::Trace);
    assert_eq!(build(w().backtrace(trace)), Level::Trace);
    // A backtrace whose lowest level is above the sink's keeps nothing
    // and lowers nothing.
    let error = BacktraceBuffer::records(5).lowest(Level::Error);
    assert_eq!(build(w().backtrace(error)), Level::Warn);
}

#[test]
fn bad_bounds_are_build_errors() {
    for (bt, why) in [
        (BacktraceBuffer::records(0), "at least 1 record"),
        (BacktraceBuffer::bytes(1023), "between 1024 bytes and 1 GiB"),
        (
            BacktraceBuffer::records(5).max_bytes(2 << 30),
            "between 1024 bytes",
        ),
    ] {
        let err = Builder::new()
            .sink(Sink::writer(std::io::sink()).backtrace(bt))
            .build()
            .unwrap_err();
        assert!(err.to_string().contains(why), "{err}");
        assert!(err.to_string().contains("sink writer"), "{err}");
    }
}

/// Syslog framing wraps the kept notices and records like any line.
#[test]
fn syslog_frames_the_released_lines() {
    let out = MemoryWriter::default();
    let (logger, guard) = Builder::new()
        .flush_on_exit(false)
        .sink(
            Sink::writer(out.clone())
                .format(nowait_core::format::Plain)
                .syslog(Syslog::new().hostname("h").app_name("a"))
                .level(Level::Info)
                .backtrace(BacktraceBuffer::records(10)),
        )
        .build()
        .unwrap();
    log_all(&logger, &[(Level::Debug, "d1"), (Level::Error, "e1")]);
    drop(guard);
    let out = out.take();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    // <14> user.info, <15> user.debug, <11> user.err.
    let pid = std::process::id();
    let tails = [
        (
            "<14>1 ",
            "nowait: INFO --- 1 earlier record below INFO, kept for this ERROR ---",
        ),
        ("<15>1 ", "d1"),
        ("<14>1 ", "nowait: INFO --- end of the 1 earlier record ---"),
        ("<11>1 ", "e1"),
    ];
    for (line, (head, tail)) in lines.iter().zip(tails) {
        let tail = format!(" h a {pid} - - {tail}");
        assert!(
            line.starts_with(head) && line.ends_with(&tail),
            "{line:?} in {out}"
        );
    }
}

/// The macros (structured events, with their own time, target and fields)
/// through the process-wide logger: the released records keep their
/// original time (before the trigger's), and the bytes are exact.
#[test]
fn macros_release_their_events_exactly() {
    let (plain, timed) = (MemoryWriter::default(), MemoryWriter::default());
    let (logger, guard) = Builder::new()
        .flush_on_exit(false)
        .sink(
            Sink::writer(plain.clone())
                .format(text())
                .level(Level::Info)
                .backtrace(BacktraceBuffer::records(10).lowest(Level::Trace)),
        )
        .sink(
            Sink::writer(timed.clone())
                .format(Text::new().with_ansi(false))
                .level(Level::Info)
                .backtrace(BacktraceBuffer::records(10)),
        )
        .build()
        .unwrap();
    nowait_core::set_global(logger.clone()).unwrap();
    trace!(step = 1u64, "opening");
    debug!(host = "db1", "connecting to {}", "db1");
    info!("request");
    std::thread::sleep(std::time::Duration::from_millis(5));
    warn!(attempt = 2u64, "retrying");
    error!(code = 57u64, "query failed");
    logger.flush().unwrap();
    let t = "backtrace";
    assert_eq!(
        plain.take(),
        format!(
            " INFO {t}: request\n \
             WARN {t}: retrying attempt=2\n \
             INFO nowait: --- 2 earlier records below INFO, kept for this ERROR ---\n\
             TRACE {t}: opening step=1\n\
             DEBUG {t}: connecting to db1 host=\"db1\"\n \
             INFO nowait: --- end of the 2 earlier records ---\n\
             ERROR {t}: query failed code=57\n"
        )
    );
    // With time: the released DEBUG event keeps its own, earlier than the
    // notice written when the ERROR came (RFC 3339 UTC strings order as
    // times).
    let timed = timed.take();
    let lines: Vec<&str> = timed.lines().collect();
    assert_eq!(lines.len(), 6, "{timed}");
    assert!(lines[3].contains(" DEBUG backtrace: connecting"), "{timed}");
    assert!(lines[3][..27] < lines[2][..27], "{timed}");
    assert!(lines[0][..27] > lines[3][..27], "{timed}");
    drop(guard);
    let s = logger.stats();
    assert_identity(&s);
    assert_eq!(s.sinks[1].filtered, 1, "TRACE is below its lowest level");
}
