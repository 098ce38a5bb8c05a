//! Byte-for-byte parity with `tracing_subscriber::fmt()` (text) and
//! `tracing_subscriber::fmt().json()`, for every combination of the
//! options both have. Both layers sit in one registry, so they see the same
//! events from the same threads; times are masked (the two read the clock
//! at different moments), everything else must be equal.
//!
//! Its own test binary: `tracing-subscriber` pads thread names to the
//! longest name its process has printed, so no other test may print
//! through it here.

use std::error::Error;

use nowait_core::format::{Json, MakeFormat, Text, Timer};
use nowait_core::{Builder, Logger, Sink};
use nowait_testkit::MemoryWriter;
use tracing::{info, info_span, warn, Dispatch};
use tracing_subscriber::fmt::format::{FmtSpan, Writer};
use tracing_subscriber::fmt::time::{FormatTime, SystemTime, Uptime};
use tracing_subscriber::prelude::*;
use tracing_subscriber::registry::Registry;
use tracing_subscriber::Layer;

type Boxed = Box<dyn Layer<Registry> + Send + Sync>;

/// Events inside and outside spans, with every kind of value, from the
/// test thread, two named threads and an unnamed one.
fn workload(dispatch: &Dispatch) {
    tracing::dispatcher::with_default(dispatch, || {
        info!("outside any span");
        let conn = info_span!("conn", peer = "10.0.0.7", port = 4431u64, alpha = true);
        let _c = conn.enter();
        let req = info_span!("request", id = 42i64);
        let _r = req.enter();
        info!(
            status = 200u64,
            micros = 41.5,
            big = 1e20,
            small = 0.00001,
            neg = -7i64,
            max = u64::MAX,
            cached = false,
            "GET {}",
            "/index.html"
        );
        warn!(target: "db", table = "users", quote = "say \"hi\"\\ \n tab\t", "slow query");
        req.record("id", 43i64);
        info!(answer = ?Some(42), shown = %"disp", nan = f64::NAN, "no message args");
        let io = std::io::Error::other("disk full");
        tracing::error!(error = &io as &dyn Error);
        let _empty = info_span!("empty").entered();
        tracing::debug!(n = 1u64, "in an empty span");
    });
    for name in [Some("w1"), Some("worker-number-two"), None] {
        let d = dispatch.clone();
        let mut b = std::thread::Builder::new();
        if let Some(name) = name {
            b = b.name(name.into());
        }
        b.spawn(move || {
            tracing::dispatcher::with_default(&d, || {
                let _s = info_span!("job", k = 1u64).entered();
                info!(n = 2u64, "from a thread");
            })
        })
        .unwrap()
        .join()
        .unwrap();
    }
}

/// Runs the workload through `theirs` and a `NowaitLayer` with `ours`;
/// returns both outputs, second run only (see the module docs: by then
/// both have seen every thread name).
fn run(theirs: impl FnOnce(MemoryWriter) -> Boxed, ours: impl MakeFormat) -> (String, String) {
    let (t, o) = (MemoryWriter::default(), MemoryWriter::default());
    let (logger, _guard): (Logger, _) = Builder::new()
        .catch_panics(false)
        .flush_on_exit(false)
        .sink(Sink::writer(o.clone()).format(ours))
        .build()
        .unwrap();
    let dispatch = Dispatch::new(
        tracing_subscriber::registry()
            .with(theirs(t.clone()))
            .with(nowait_tracing::NowaitLayer::new(logger.clone())),
    );
    workload(&dispatch);
    logger.flush().unwrap();
    let (_, _) = (t.take(), o.take());
    workload(&dispatch);
    logger.flush().unwrap();
    (t.take(), o.take())
}

/// Digits of the time field (which starts at `from` in each line, `len`
/// bytes long) replaced by `0`.
fn mask(text: &str, find: impl Fn(&str) -> Option<(usize, usize)>) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let mut bytes = line.as_bytes().to_vec();
        if let Some((from, len)) = find(line) {
            for b in &mut bytes[from..from + len] {
                if b.is_ascii_digit() {
                    *b = b'0';
                }
            }
        }
        out.push_str(&String::from_utf8(bytes).unwrap());
        out.push('\n');
    }
    out
}

#[derive(Clone, Copy, Debug)]
enum Time {
    None,
    Utc,
    Uptime,
}

fn bits(n: u32, count: u32) -> Vec<bool> {
    (0..count).map(|i| n >> i & 1 == 1).collect()
}

/// A `FormatTime` by value, so that all three timers give one layer type.
enum Their {
    Utc,
    Uptime(Uptime),
}

impl FormatTime for Their {
    fn format_time(&self, w: &mut Writer<'_>) -> std::fmt::Result {
        match self {
            Their::Utc => SystemTime.format_time(w),
            Their::Uptime(u) => u.format_time(w),
        }
    }
}

#[test]
fn text_matches_tracing_subscriber_for_every_option() {
    let mut compared = 0;
    for time in [Time::None, Time::Utc, Time::Uptime] {
        for n in 0..128 {
            let b = bits(n, 7);
            let (ansi, level, target, file, line, names, ids) =
                (b[0], b[1], b[2], b[3], b[4], b[5], b[6]);
            let mut ours = Text::new()
                .with_ansi(ansi)
                .with_level(level)
                .with_target(target)
                .with_file(file)
                .with_line_number(line)
                .with_thread_names(names)
                .with_thread_ids(ids);
            ours = match time {
                Time::None => ours.without_time(),
                Time::Utc => ours,
                Time::Uptime => ours.with_timer(Timer::Uptime),
            };
            let theirs = move |w: MemoryWriter| -> Boxed {
                let l = tracing_subscriber::fmt::layer()
                    .with_writer(move || w.clone())
                    .with_ansi(ansi)
                    .with_level(level)
                    .with_target(target)
                    .with_file(file)
                    .with_line_number(line)
                    .with_thread_names(names)
                    .with_thread_ids(ids)
                    .with_span_events(FmtSpan::NONE);
                match time {
                    Time::None => l.without_time().boxed(),
                    Time::Utc => l.with_timer(Their::Utc).boxed(),
                    Time::Uptime => l.with_timer(Their::Uptime(Uptime::default())).boxed(),
                }
            };
            let (theirs, ours) = run(theirs, ours);
            let at = if ansi { 4 } else { 0 };
            let len = match time {
                Time::None => 0,
                Time::Utc => 27,
                Time::Uptime => 15,
            };
            let find = |_: &str| Some((at, len));
            let (theirs, ours) = (mask(&theirs, find), mask(&ours, find));
            assert_eq!(theirs.lines().count(), 9, "{theirs}");
            assert_eq!(
                ours, theirs,
                "time {time:?}, ansi {ansi}, level {level}, target {target}, file {file}, \
                 line {line}, thread names {names}, thread ids {ids}"
            );
            compared += 1;
        }
    }
    assert_eq!(compared, 3 * 128);
}

/// The place of the `timestamp` value in a JSON line.
fn json_time(line: &str) -> Option<(usize, usize)> {
    let from = line.find(r#""timestamp":""#)? + 13;
    let len = line[from..].find('"')?;
    Some((from, len))
}

#[test]
fn json_matches_tracing_subscriber_for_every_option() {
    let mut compared = 0;
    for time in [Time::None, Time::Utc, Time::Uptime] {
        for n in 0..512 {
            let b = bits(n, 9);
            let (flatten, current, list, level, target, file, line, names, ids) =
                (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8]);
            // The timer is independent of the rest: all combinations
            // without time, a spread of them with each timer.
            let skip = match time {
                Time::None => false,
                Time::Utc => n % 5 != 0,
                Time::Uptime => n % 7 != 0,
            };
            if skip {
                continue;
            }
            let mut ours = Json::new()
                .flatten_event(flatten)
                .with_current_span(current)
                .with_span_list(list)
                .with_level(level)
                .with_target(target)
                .with_file(file)
                .with_line_number(line)
                .with_thread_names(names)
                .with_thread_ids(ids);
            ours = match time {
                Time::None => ours.without_time(),
                Time::Utc => ours,
                Time::Uptime => ours.with_timer(Timer::Uptime),
            };
            let theirs = move |w: MemoryWriter| -> Boxed {
                let l = tracing_subscriber::fmt::layer()
                    .json()
                    .with_writer(move || w.clone())
                    .flatten_event(flatten)
                    .with_current_span(current)
                    .with_span_list(list)
                    .with_level(level)
                    .with_target(target)
                    .with_file(file)
                    .with_line_number(line)
                    .with_thread_names(names)
                    .with_thread_ids(ids);
                match time {
                    Time::None => l.without_time().boxed(),
                    Time::Utc => l.with_timer(Their::Utc).boxed(),
                    Time::Uptime => l.with_timer(Their::Uptime(Uptime::default())).boxed(),
                }
            };
            let (theirs, ours) = run(theirs, ours);
            let (theirs, ours) = (mask(&theirs, json_time), mask(&ours, json_time));
            assert_eq!(theirs.lines().count(), 9, "{theirs}");
            assert_eq!(
                ours, theirs,
                "time {time:?}, flatten {flatten}, current span {current}, span list {list}, \
                 level {level}, target {target}, file {file}, line {line}, \
                 thread names {names}, thread ids {ids}"
            );
            for l in ours.lines() {
                let _: serde_json::Value = serde_json::from_str(l).unwrap();
            }
            compared += 1;
        }
    }
    assert_eq!(compared, 512 + 103 + 74);
}
