//! How many events per second the writer thread formats and writes to a
//! file, losslessly: one thread logs N events (default 5 000 000) under
//! the blocking full policy, so the run lasts as long as the writer needs.
//! The event is the request-done event (a message, a `u64`, a `&str` and an
//! `f64` field; timestamp, level and target). At the end the counts are
//! checked: every event written, none dropped. Also a target for
//! `perf record -g`.
//!
//! With `--spans`, the events are instead those of requests as
//! tower-http's `TraceLayer` logs them (`trace_layer_request`: a span with
//! three fields, two events inside), N / 2 requests.
//!
//! With `--format-only`, measures the formatting alone instead: the
//! events are recorded once as encoded, then rendered into a `Vec` again
//! and again (the best of 50 rounds of 10 000, in batches of 1000), which makes quick A/B comparisons of
//! two builds (the criterion version is `benches/benches/format.rs`).
//!
//! Run: `cargo run --release -p nowait-examples --example writer_throughput
//! -- [--tracing | --spans] [--json] [--format-only] [N]` (prints events/s and ns per
//! event).

use std::time::Instant;

use nowait::format::{Json, MakeFormat, SinkInfo, Text};
use nowait::record::Record;
use nowait::{Builder, FullPolicy, Sink};
use nowait_benches::{
    keeping, macro_request_events, trace_layer_request, tracing_request_events, Kept,
};
use tracing_subscriber::prelude::*;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let spans = args.iter().any(|a| a == "--spans");
    let tracing_front = spans || args.iter().any(|a| a == "--tracing");
    let json = args.iter().any(|a| a == "--json");
    let n: usize = args
        .iter()
        .find_map(|a| a.parse().ok())
        .unwrap_or(5_000_000);
    if args.iter().any(|a| a == "--format-only") {
        format_only(tracing_front, spans, json, n.min(10_000));
        return;
    }
    let dir = std::env::temp_dir().join(format!("nowait-throughput-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("out.log");
    let sink = if json {
        Sink::file(&path).format(Json::new())
    } else {
        Sink::file(&path).format(Text::new())
    };
    let builder = Builder::new()
        .capacity(64 << 20)
        .full_policy(FullPolicy::Block)
        .sink(sink);

    // The clock starts once the logger is built: building calibrates the
    // TSC clock (10-20 ms), which is not the writer's work.
    let (stats, secs) = if tracing_front {
        let (layer, guard) = nowait::layer(builder).expect("logger");
        let logger = layer.logger().clone();
        let subscriber = tracing_subscriber::registry().with(layer);
        let start = Instant::now();
        tracing::subscriber::with_default(subscriber, || {
            if spans {
                (0..n / 2).for_each(trace_layer_request);
            } else {
                tracing_request_events(n);
            }
        });
        drop(guard);
        (logger.stats(), start.elapsed().as_secs_f64())
    } else {
        let (logger, guard) = builder.build().expect("logger");
        nowait::set_global(logger.clone()).expect("global logger");
        let start = Instant::now();
        macro_request_events(n);
        drop(guard);
        (logger.stats(), start.elapsed().as_secs_f64())
    };
    let bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
    let _ = std::fs::remove_dir_all(&dir);
    let n = if spans { n / 2 * 2 } else { n };
    assert_eq!(stats.records_written, n as u64, "every event written");
    assert_eq!(stats.dropped(), 0, "none dropped");
    println!(
        "{} {}: {n} events in {secs:.3} s = {:.2} M events/s, {:.1} ns/event, {:.1} MB",
        front(tracing_front, spans),
        if json { "json" } else { "text" },
        n as f64 / secs / 1e6,
        secs * 1e9 / n as f64,
        bytes as f64 / 1e6
    );
}

const ROUNDS: usize = 50;

fn front(tracing_front: bool, spans: bool) -> &'static str {
    match (tracing_front, spans) {
        (_, true) => "tracing spans",
        (true, false) => "tracing",
        (false, false) => "macro",
    }
}

/// Records `n` events as encoded, then times formatting them.
fn format_only(tracing_front: bool, spans: bool, json: bool, n: usize) {
    let records = Kept::default();
    let builder = Builder::new()
        .capacity(64 << 20)
        .full_policy(FullPolicy::Block)
        .sink(Sink::writer(std::io::sink()).format(keeping(&records)));
    let (layer, guard) = nowait::layer(builder).expect("logger");
    if tracing_front {
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::with_default(subscriber, || {
            if spans {
                (0..n / 2).for_each(trace_layer_request);
            } else {
                tracing_request_events(n);
            }
        });
    } else {
        nowait::set_global(layer.logger().clone()).expect("global logger");
        macro_request_events(n);
    }
    drop(guard);
    let records = std::mem::take(&mut *records.lock().unwrap());
    let n = if spans { n / 2 * 2 } else { n };
    assert_eq!(records.len(), n, "every event kept");
    let make: Box<dyn MakeFormat> = if json {
        Box::new(Json::new())
    } else {
        Box::new(Text::new())
    };
    let mut format = make.make_format(&SinkInfo::new("file", false));
    // Batches of 1000 lines, as the writer fills a buffer and writes it.
    let mut out = Vec::with_capacity(1 << 20);
    let mut best = f64::MAX;
    for _ in 0..ROUNDS {
        let start = Instant::now();
        for batch in records.chunks(1000) {
            out.clear();
            for (level, kind, payload) in batch {
                format.format(&Record::new(*level, *kind, payload), &mut out);
            }
        }
        best = best.min(start.elapsed().as_secs_f64() * 1e9 / n as f64);
    }
    println!(
        "{} {} format only: {best:.1} ns/event (best of {ROUNDS} rounds of {n})",
        front(tracing_front, spans),
        if json { "json" } else { "text" },
    );
}
