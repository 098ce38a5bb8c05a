//! What it models: the writer thread's formatting alone, without the ring
//! or any I/O. Events are recorded once through the real front ends (own
//! macros and the `tracing` layer) by a sink whose format keeps each
//! record's bytes; each benchmark then renders those encoded records into
//! a `Vec` through `Text` or `Json`, as the writer does for a sink.
//!
//! The event is the request-done event: a message, a `u64`, a `&str` and an
//! `f64` field, with timestamp, level and target.
//!
//! Run: `cargo bench -p nowait-benches --bench format` (ns per event =
//! time per element).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use nowait::format::{Json, MakeFormat, SinkInfo, Text, Timer};
use nowait::record::Record;
use nowait::{Builder, Level, Sink};
use nowait_benches::{keeping, macro_request_events, tracing_request_events, Kept};
use std::hint::black_box;
use tracing_subscriber::prelude::*;

/// Events per batch (a distinct value per event, as in a real log).
const EVENTS: usize = 1000;

fn keeping_builder(records: &Kept) -> Builder {
    Builder::new()
        .capacity(8 << 20)
        .sink(Sink::writer(std::io::sink()).format(keeping(records)))
}

/// The request-done event through nowait's own macros.
fn macro_records() -> Vec<(Level, u8, Vec<u8>)> {
    let records = Kept::default();
    let (logger, guard) = keeping_builder(&records).build().expect("logger");
    nowait::set_global(logger).expect("global logger set once");
    macro_request_events(EVENTS);
    drop(guard);
    let kept = std::mem::take(&mut *records.lock().unwrap());
    kept
}

/// The same event through the `tracing` layer.
fn tracing_records() -> Vec<(Level, u8, Vec<u8>)> {
    let records = Kept::default();
    let (layer, guard) = nowait::layer(keeping_builder(&records)).expect("layer");
    let subscriber = tracing_subscriber::registry().with(layer);
    tracing::subscriber::with_default(subscriber, || tracing_request_events(EVENTS));
    drop(guard);
    let kept = std::mem::take(&mut *records.lock().unwrap());
    kept
}

fn format(c: &mut Criterion) {
    let inputs = [("macro", macro_records()), ("tracing", tracing_records())];
    let formats: [(&str, Box<dyn MakeFormat>); 3] = [
        ("text", Box::new(Text::new())),
        (
            "text-uptime",
            Box::new(Text::new().with_timer(Timer::Uptime)),
        ),
        ("json", Box::new(Json::new())),
    ];
    let mut group = c.benchmark_group("format");
    for (front, records) in &inputs {
        assert_eq!(records.len(), EVENTS, "every event was kept");
        for (name, make) in &formats {
            let mut format = make.make_format(&SinkInfo::new("file", false));
            let mut out = Vec::with_capacity(1 << 20);
            group.throughput(Throughput::Elements(records.len() as u64));
            group.bench_function(BenchmarkId::new(*name, front), |b| {
                b.iter(|| {
                    out.clear();
                    for (level, kind, payload) in records {
                        format.format(&Record::new(*level, *kind, payload), &mut out);
                    }
                    black_box(out.len())
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, format);
criterion_main!(benches);
