//! A perf target for the producer's path: one thread logs the request-done event
//! (a message, a `u64`, a `&str` and an `f64` field) through the macros
//! or the `tracing` layer, one call every `--spacing-ns` (default 1000,
//! spinning on the clock, so the writer keeps up and every call takes the
//! accepting path), into a file sink that discards nothing.
//!
//! It prints the mean cost of a call as seen by the caller (the loop's
//! time minus the same loop without the call), which is what `perf stat`
//! or `perf record -t <tid>` of the main thread then breaks down.
//!
//! With `--spans`, each call is instead a request as tower-http's
//! `TraceLayer` logs it through the layer: a span with the method, URI and
//! version, entered, two events inside, then exit and close.
//!
//! With `--floor noop` or `--floor visit`, the same `tracing` event (or,
//! with `--spans`, request) goes through the registry to a layer that does
//! nothing with it, or that only visits its fields: what `tracing` itself
//! costs, the floor under the nowait layer's figure.
//!
//! With `--idle MS`, times instead the first and second call after each
//! of 40 sleeps of MS milliseconds, beside an empty timed region.
//!
//! Run: `taskset -c 0,1 cargo run --release -p nowait-examples --example
//! push_profile -- [--tracing | --spans | --floor noop|visit] [--spacing-ns N] [--idle MS] [N]`.

use std::hint::black_box;
use std::time::{Duration, Instant};

use nowait::{Builder, FullPolicy, Sink};
use nowait_benches::{macro_request_event, trace_layer_request, tracing_request_event};
use tracing_subscriber::prelude::*;

fn spin_until(deadline: Instant) {
    while Instant::now() < deadline {
        std::hint::spin_loop();
    }
}

/// Runs `n` iterations spaced `spacing` apart, calling `f(i)` in each;
/// returns the summed time spent inside `f`.
fn timed(n: usize, spacing: Duration, mut f: impl FnMut(usize)) -> Duration {
    let mut inside = Duration::ZERO;
    let mut next = Instant::now();
    for i in 0..n {
        next += spacing;
        spin_until(next);
        let t = Instant::now();
        f(i);
        inside += t.elapsed();
    }
    inside
}

/// `--idle MS`: after each of 40 sleeps of MS milliseconds, times an
/// empty region, then the first call, then a second call (p50s), to tell
/// the cost of a cold call from the cost of waking up.
fn idle(ms: u64) {
    let dir = std::env::temp_dir().join(format!("nowait-push-profile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (logger, guard) = Builder::new()
        .sink(Sink::file(dir.join("out.log")))
        .build()
        .expect("logger");
    nowait::set_global(logger).expect("global logger");
    let call = macro_request_event;
    for i in 0..1000 {
        call(i);
    }
    let mut rows: [Vec<u128>; 3] = Default::default();
    for trial in 0..40 {
        std::thread::sleep(Duration::from_millis(ms));
        let t = Instant::now();
        black_box(trial);
        rows[0].push(t.elapsed().as_nanos());
        let t = Instant::now();
        call(trial);
        rows[1].push(t.elapsed().as_nanos());
        let t = Instant::now();
        call(trial);
        rows[2].push(t.elapsed().as_nanos());
    }
    drop(guard);
    let _ = std::fs::remove_dir_all(&dir);
    let p50 = |v: &mut Vec<u128>| {
        v.sort_unstable();
        v[v.len() / 2]
    };
    println!(
        "after {ms} ms asleep, p50 of 40: empty region {} ns, first call {} ns, second call {} ns",
        p50(&mut rows[0]),
        p50(&mut rows[1]),
        p50(&mut rows[2])
    );
}

/// `--floor`: a layer that takes the event and does nothing (`noop`) or
/// visits its fields into nothing (`visit`).
struct Floor {
    visit: bool,
}

struct NoVisit;

impl tracing::field::Visit for NoVisit {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        black_box((field, value));
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Floor {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        if self.visit {
            event.record(&mut NoVisit);
        }
        black_box(event.metadata());
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(ms) = args
        .iter()
        .position(|a| a == "--idle")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
    {
        idle(ms);
        return;
    }
    let floor = args
        .iter()
        .position(|a| a == "--floor")
        .and_then(|i| args.get(i + 1))
        .map(|s| s == "visit");
    let spans = args.iter().any(|a| a == "--spans");
    let tracing_front = spans || args.iter().any(|a| a == "--tracing");
    let spacing_ns: u64 = args
        .iter()
        .position(|a| a == "--spacing-ns")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000);
    let n: usize = args
        .iter()
        .filter(|a| !a.starts_with("--") && *a != "noop" && *a != "visit")
        .filter_map(|a| a.parse().ok())
        .find(|&v: &usize| v as u64 != spacing_ns)
        .unwrap_or(2_000_000);
    let spacing = Duration::from_nanos(spacing_ns);
    let dir = std::env::temp_dir().join(format!("nowait-push-profile-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let builder = Builder::new()
        .full_policy(FullPolicy::Drop)
        .sink(Sink::file(dir.join("out.log")));

    let empty = timed(n, spacing, |i| {
        black_box(i);
    });
    if let Some(visit) = floor {
        tracing_subscriber::registry().with(Floor { visit }).init();
        let inside = if spans {
            timed(n, spacing, trace_layer_request)
        } else {
            timed(n, spacing, tracing_request_event)
        };
        let per_call = inside.saturating_sub(empty).as_nanos() as f64 / n as f64;
        let what = match (visit, spans) {
            (false, false) => "noop layer",
            (true, false) => "visit layer",
            (false, true) => "noop layer, a span and two events per call",
            (true, true) => "visit layer, a span and two events per call",
        };
        println!("floor ({what}): {n} calls {spacing_ns} ns apart: {per_call:.1} ns per call (net of the empty loop)");
        return;
    }
    let (inside, stats) = if tracing_front {
        let (layer, guard) = nowait::layer(builder).expect("logger");
        let logger = layer.logger().clone();
        // The process-wide dispatcher, as a service sets it (a scoped one
        // costs a thread-local lookup per event).
        tracing_subscriber::registry().with(layer).init();
        let inside = if spans {
            timed(n, spacing, trace_layer_request)
        } else {
            timed(n, spacing, tracing_request_event)
        };
        drop(guard);
        (inside, logger.stats())
    } else {
        let (logger, guard) = builder.build().expect("logger");
        nowait::set_global(logger.clone()).expect("global logger");
        let inside = timed(n, spacing, macro_request_event);
        drop(guard);
        (inside, logger.stats())
    };
    let _ = std::fs::remove_dir_all(&dir);
    let per_call = inside.saturating_sub(empty).as_nanos() as f64 / n as f64;
    println!(
        "{}: {n} calls {spacing_ns} ns apart: {per_call:.1} ns per call (net of the empty loop), \
         {} written, {} dropped",
        if spans {
            "tracing layer, a span and two events per call"
        } else if tracing_front {
            "tracing layer"
        } else {
            "macro"
        },
        stats.records_written,
        stats.dropped()
    );
}
