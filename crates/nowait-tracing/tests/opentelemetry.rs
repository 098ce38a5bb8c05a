//! Logs joined to traces, end to end: `tracing-opentelemetry` with the
//! OpenTelemetry SDK's tracer (spans exported to the SDK's in-memory
//! exporter, whose ids are the truth here), the `NowaitLayer` with its
//! `opentelemetry` feature, nowait's OTLP sink, and the tests' OTLP
//! receiver (`nowait-core/tests/otlp_receiver.py`, which decodes with
//! OpenTelemetry's own protobuf types). Every record's `trace_id`,
//! `span_id` and `flags` must be those of the span it was logged in:
//! nested spans, two threads, an explicit parent, a context attached with
//! OpenTelemetry's own API, and none outside any span. A JSON sink beside
//! it writes the same ids.
#![cfg(all(unix, feature = "opentelemetry", not(miri)))] // processes and sockets

use std::collections::BTreeMap;

use nowait_core::format::Json;
use nowait_core::sink::Otlp;
use nowait_core::{Builder, Sink};
use nowait_testkit::receiver::Receiver;
use nowait_testkit::MemoryWriter;
use opentelemetry::trace::{TraceContextExt as _, Tracer as _, TracerProvider as _};
use opentelemetry::KeyValue;
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracer, SdkTracerProvider};
use tracing_subscriber::prelude::*;

/// The accepted records (not nowait's notices), as the receiver printed
/// them.
fn records(rx: &Receiver) -> Vec<String> {
    rx.output()
        .lines()
        .filter_map(|l| l.strip_prefix("REC "))
        .filter(|r| !r.contains("target=str:'nowait'"))
        .map(str::to_owned)
        .collect()
}

/// The value of `key=` in a receiver's record line (up to the next space
/// or attribute separator).
fn word<'a>(rec: &'a str, key: &str) -> &'a str {
    let at = rec.find(key).unwrap_or_else(|| panic!("{key} in {rec}")) + key.len();
    rec[at..].split([' ', '|']).next().unwrap()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What one thread logs: an event outside any span, then in a span, in
/// a span nested in it, in the first again, one with the first as its
/// explicit parent after it was exited, and in a second root span entered
/// where the first was; nowait's own macros outside, in the nested span
/// and in the first. Each event names the span it expects (`who` tells the
/// threads apart).
fn log_in_spans(who: &'static str) {
    tracing::info!(who, expect = "none", "outside");
    nowait_core::info!(who = who, expect = "none", "a macro outside");
    let outer = tracing::info_span!("outer", who);
    {
        let _outer = outer.enter();
        tracing::info!(who, expect = "outer", "in outer");
        let inner = tracing::info_span!("inner", who);
        inner.in_scope(|| {
            tracing::info!(who, expect = "inner", "in inner");
            nowait_core::info!(who = who, expect = "inner", "a macro in inner");
        });
        tracing::warn!(who, expect = "outer", "in outer again");
        // The macros' general path (a value that is not plain) as well.
        let n = std::num::Wrapping(7u8);
        nowait_core::warn!(who = who, expect = "outer", n = ?n, "a macro in outer");
    }
    tracing::info!(parent: &outer, who, expect = "outer", "explicit parent");
    tracing::info!(who, expect = "none", "outside again");
    let second = tracing::info_span!("second", who);
    second.in_scope(|| tracing::info!(who, expect = "second", "in second"));
}

/// A span of OpenTelemetry's own API, its context attached to the thread
/// (no `tracing` span): the macros and the layer's events take its ids.
fn log_in_an_api_span(who: &'static str, tracer: &SdkTracer) {
    let span = tracer
        .span_builder("api")
        .with_attributes([KeyValue::new("who", who)])
        .start(tracer);
    let cx = opentelemetry::Context::current_with_span(span);
    {
        let _attached = cx.clone().attach();
        nowait_core::info!(who = who, expect = "api", "a macro in an API span");
        tracing::info!(who, expect = "api", "an event in an API span");
    }
    cx.span().end();
}

/// Logs through a macro when the thread ends, after OpenTelemetry's
/// thread-local is gone.
struct LogsAtThreadEnd;

impl Drop for LogsAtThreadEnd {
    fn drop(&mut self) {
        nowait_core::info!(who = "c", expect = "none", "a macro at thread end");
    }
}

thread_local! {
    static AT_THREAD_END: LogsAtThreadEnd = const { LogsAtThreadEnd };
}

/// A thread whose last macro runs in a thread-local destructor that runs
/// after OpenTelemetry's (it was registered first, and they run in the
/// reverse order): the macro must not read the gone context (which would
/// panic, and abort the process in a destructor), and logs without one.
fn ends_after_opentelemetry(tracer: &SdkTracer) {
    AT_THREAD_END.with(|_| ());
    log_in_an_api_span("c", tracer);
}

#[test]
fn every_record_carries_the_ids_of_the_span_it_was_logged_in() {
    if !Receiver::available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let rx = Receiver::start(dir.path(), "ok", 0);
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let json = MemoryWriter::default();
    let (layer, guard) = nowait_tracing::layer(
        Builder::new()
            .sink(Sink::otlp(Otlp::new(&format!(
                "http://127.0.0.1:{}",
                rx.port
            ))))
            .sink(Sink::writer(json.clone()).format(Json::new().without_time())),
    )
    .unwrap();
    // The macros log to the global logger: the layer's, set before the
    // layer joins the subscriber, as `nowait::init` does.
    nowait_core::set_global(layer.logger().clone()).unwrap();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test")))
        .with(layer);
    let dispatch = tracing::Dispatch::new(subscriber);
    let tracer = provider.tracer("api");
    std::thread::scope(|s| {
        for who in ["a", "b"] {
            let (dispatch, tracer) = (&dispatch, &tracer);
            s.spawn(move || {
                tracing::dispatcher::with_default(dispatch, || {
                    log_in_spans(who);
                    log_in_an_api_span(who, tracer);
                })
            });
        }
    });
    // Joined by `join` (not a scope's end), which waits for the thread's
    // thread-local destructors too.
    let end = {
        let tracer = tracer.clone();
        std::thread::spawn(move || ends_after_opentelemetry(&tracer))
    };
    end.join().unwrap();
    drop(dispatch);
    drop(guard);
    provider.force_flush().unwrap();

    // The spans as exported: (name, who) -> (trace id, span id).
    let mut spans = BTreeMap::new();
    for span in exporter.get_finished_spans().unwrap() {
        let who = span
            .attributes
            .iter()
            .find(|kv| kv.key.as_str() == "who")
            .map(|kv| kv.value.as_str().into_owned())
            .unwrap();
        let ids = (
            hex(&span.span_context.trace_id().to_bytes()),
            hex(&span.span_context.span_id().to_bytes()),
        );
        assert!(span.span_context.is_sampled());
        spans.insert((span.name.to_string(), who), ids);
    }
    assert_eq!(spans.len(), 9, "{spans:?}");
    for who in ["a", "b"] {
        let outer = &spans[&("outer".to_owned(), who.to_owned())];
        let inner = &spans[&("inner".to_owned(), who.to_owned())];
        assert_eq!(outer.0, inner.0, "one trace per thread");
        assert_ne!(outer.1, inner.1);
    }
    assert_ne!(
        spans[&("outer".to_owned(), "a".to_owned())].0,
        spans[&("outer".to_owned(), "b".to_owned())].0,
        "two root spans, two traces"
    );

    let records = records(&rx);
    assert_eq!(records.len(), 26, "{records:#?}");
    let mut in_span = 0;
    for rec in &records {
        let who = word(rec, "who=str:'").trim_end_matches('\'');
        let expect = word(rec, "expect=str:'").trim_end_matches('\'');
        let (trace, span, flags) = (word(rec, "trace="), word(rec, "span="), word(rec, "flags="));
        if expect == "none" {
            assert_eq!((trace, span, flags), ("", "", "0"), "{rec}");
            continue;
        }
        in_span += 1;
        let (want_trace, want_span) = &spans[&(expect.to_owned(), who.to_owned())];
        assert_eq!((trace, span), (&want_trace[..], &want_span[..]), "{rec}");
        assert_eq!(flags, "1", "sampled: {rec}");
    }
    assert_eq!(in_span, 19);

    // The JSON sink: the same ids, as keys of their own.
    let text = json.take();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 26, "{text}");
    for line in lines {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let who = v["fields"]["who"].as_str().unwrap();
        match v["fields"]["expect"].as_str().unwrap() {
            "none" => assert!(
                v.get("trace_id").is_none() && v.get("span_id").is_none(),
                "{line}"
            ),
            expect => {
                let (trace, span) = &spans[&(expect.to_owned(), who.to_owned())];
                assert_eq!(v["trace_id"], trace.as_str(), "{line}");
                assert_eq!(v["span_id"], span.as_str(), "{line}");
            }
        }
    }
}

/// Without a `tracing-opentelemetry` layer in the subscriber, events carry
/// no trace context and lines are as without the feature.
#[test]
fn without_an_opentelemetry_layer_nothing_is_added() {
    let json = MemoryWriter::default();
    let (layer, guard) = nowait_tracing::layer(
        Builder::new().sink(Sink::writer(json.clone()).format(Json::new().without_time())),
    )
    .unwrap();
    let subscriber = tracing_subscriber::registry().with(layer);
    tracing::subscriber::with_default(subscriber, || {
        tracing::info_span!("outer").in_scope(|| tracing::info!("in outer"));
    });
    drop(guard);
    assert_eq!(
        json.take(),
        "{\"level\":\"INFO\",\"fields\":{\"message\":\"in outer\"},\"target\":\"opentelemetry\",\
         \"span\":{\"name\":\"outer\"},\"spans\":[{\"name\":\"outer\"}]}\n"
    );
}
