//! Logs to an OpenTelemetry receiver over OTLP/HTTP (protobuf), from the
//! writer thread: the request threads never wait for the receiver, which
//! may be slow, down or absent; what it misses is counted and reported.
//!
//! Start a receiver on 127.0.0.1:4318 first, for example rotel
//! (`pip install --pre rotel`, then `rotel-agent start --otlp-http-endpoint
//! 127.0.0.1:4318 --exporter blackhole --debug-log logs`) or an
//! OpenTelemetry Collector with the `otlp` receiver, then run:
//! `cargo run -p nowait-examples --example otlp [-- http://HOST:PORT]`.

use std::time::Duration;

use nowait::format::Text;
use nowait::sink::Otlp;
use nowait::{Builder, Sink};

fn main() {
    let endpoint = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "http://127.0.0.1:4318".to_owned());
    let (logger, guard) = Builder::new()
        .sink(Sink::stderr().format(Text::new()))
        .sink(Sink::otlp(
            Otlp::new(&endpoint)
                .service_name("nowait-example")
                .resource_attribute("deployment.environment", "dev")
                .gzip(true),
        ))
        .build()
        .expect("logger");
    nowait::set_global(logger.clone()).expect("global logger");

    for order in 0..5u64 {
        // Fields become typed attributes; `trace_id` and `span_id` in hex
        // become the record's ids.
        nowait::info!(
            order,
            total = 12.5 * order as f64,
            trace_id = "4bf92f3577b34da6a3ce929d0e0e4736",
            "order {} placed",
            order
        );
    }
    nowait::warn!(retries = 3u64, "payment gateway slow");
    std::thread::sleep(Duration::from_millis(200));
    drop(guard);

    let s = &logger.stats().sinks[1];
    println!(
        "{}: {} records acknowledged, {} dropped ({} refused by the receiver), last error: {:?}",
        s.name,
        s.records_written,
        s.dropped(),
        s.dropped_rejected,
        s.last_error
    );
}
