//! Events per second written losslessly to an OTLP receiver, beside the
//! same events to a file, and what one event costs the logging thread
//! with each sink configured.
//!
//! `--sink file` or `--sink otlp URL`: one thread logs N request-done events
//! (default 2 000 000) under the blocking full policy; the clock stops
//! when the guard is dropped, i.e. when the sink has everything (for
//! OTLP: when the receiver acknowledged every record). The sink's buffer
//! is large (256 MiB) so that it never sheds: the run fails if any record
//! is dropped. With `--push`, N events that fit in the ring (use 100 000)
//! are timed on the logging thread alone instead: the push cost, with the
//! sink working on the writer thread meanwhile.
//!
//! An `https://` URL is reached over TLS; `NOWAIT_OTLP_CA=PEM` names the
//! CA that signed the receiver's certificate (else the platform's store).
//!
//! Prints one JSON object. Run:
//! `cargo run --release -p nowait-examples --example otlp_throughput -- --sink otlp http://127.0.0.1:4318 [--push] [N]`

use std::time::Instant;

use nowait::format::Json;
use nowait::sink::Otlp;
use nowait::{Builder, FullPolicy, Sink};
use nowait_benches::macro_request_event;

fn sink(kind: &str, url: &str, path: &std::path::Path) -> Sink {
    match kind {
        "otlp" => {
            let mut otlp = Otlp::new(url);
            if let Some(ca) = std::env::var_os("NOWAIT_OTLP_CA") {
                otlp = otlp.ca_certificate(ca);
            }
            Sink::otlp(otlp).buffer_size(256 << 20)
        }
        _ => Sink::file(path).format(Json::new()).buffer_size(256 << 20),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let kind = args
        .iter()
        .position(|a| a == "--sink")
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_else(|| "file".into());
    let url = args
        .iter()
        .find(|a| a.starts_with("http://") || a.starts_with("https://"))
        .cloned()
        .unwrap_or_default();
    let n: usize = args
        .iter()
        .find_map(|a| a.parse().ok())
        .unwrap_or(2_000_000);
    let dir = std::env::temp_dir().join(format!("nowait-otlp-tp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("out.json");

    if args.iter().any(|a| a == "--push") {
        // The logging thread's cost per event (the ring never fills).
        let (logger, guard) = Builder::new()
            .capacity(64 << 20)
            .sink(sink(&kind, &url, &path))
            .build()
            .expect("logger");
        nowait::set_global(logger.clone()).expect("global logger");
        let start = Instant::now();
        for i in 0..n {
            macro_request_event(i);
        }
        let push_ns = start.elapsed().as_secs_f64() * 1e9 / n as f64;
        drop(guard);
        let _ = std::fs::remove_dir_all(&dir);
        println!("{{\"sink\":\"{kind}\",\"events\":{n},\"push_ns\":{push_ns:.1}}}");
        return;
    }
    let (logger, guard) = Builder::new()
        .capacity(64 << 20)
        .full_policy(FullPolicy::Block)
        .sink(sink(&kind, &url, &path))
        .build()
        .expect("logger");
    nowait::set_global(logger.clone()).expect("global logger");
    let start = Instant::now();
    for i in 0..n {
        macro_request_event(i);
    }
    drop(guard);
    let secs = start.elapsed().as_secs_f64();
    let s = &logger.stats().sinks[0];
    assert_eq!(s.records_written, n as u64, "every event written: {s:?}");
    assert_eq!(s.dropped(), 0, "none dropped: {s:?}");
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "{{\"sink\":\"{kind}\",\"events\":{n},\"secs\":{secs:.4},\"events_per_s\":{:.0},\"bytes\":{},\"requests\":{}}}",
        n as f64 / secs,
        s.bytes_written,
        s.write_calls
    );
}
