//! Lossless throughput of one sink, for `benches/journald_ab.py`: pushes N
//! text records (the ring's blocking policy: nothing dropped at the ring;
//! a 1 GiB sink buffer: nothing shed) and prints one JSON line with the
//! time from the first push until the writer has sent the last record
//! (the guard's drain), and the sink's counters.
//!
//! Run: `cargo run --release -p nowait-examples --example journald_throughput -- file PATH N`
//!  or `... -- journald SOCKET N IDENTIFIER` (a journald socket: the
//!  bench script starts one of its own in a private namespace).

use std::time::{Duration, Instant};

use nowait::format::Journald;
use nowait::{Builder, FullPolicy, Level, Sink};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (kind, path, n) = match &args[..] {
        [kind, path, n, ..] => (kind.as_str(), path.as_str(), n.parse::<u64>()?),
        _ => return Err("usage: file PATH N | journald SOCKET N IDENTIFIER".into()),
    };
    let sink = match kind {
        "file" => Sink::file(path),
        "journald" => Sink::journald_with(
            Journald::new()
                .socket_path(path)
                .syslog_identifier(args.get(3).map_or("nowait-bench", String::as_str)),
        ),
        other => return Err(format!("unknown sink {other}").into()),
    };
    let (logger, guard) = Builder::new()
        .full_policy(FullPolicy::BlockTimeout(Duration::from_secs(60)))
        .shutdown_timeout(Duration::from_secs(120))
        .sink(sink.buffer_size(1 << 30))
        .build()?;
    let start = Instant::now();
    for i in 0..n {
        logger.log(Level::Info, &format!("request {i} served in 41 us"))?;
    }
    let pushed = start.elapsed();
    drop(guard);
    let drained = start.elapsed();
    let s = logger.stats();
    let sink = &s.sinks[0];
    println!(
        "{{\"sink\":\"{kind}\",\"n\":{n},\"push_s\":{},\"total_s\":{},\"written\":{},\"dropped\":{},\"abandoned\":{},\"events_per_s\":{}}}",
        pushed.as_secs_f64(),
        drained.as_secs_f64(),
        sink.records_written,
        sink.dropped_overflow + sink.dropped_failed + sink.dropped_format + s.dropped_full + s.dropped_timeout,
        sink.abandoned,
        n as f64 / drained.as_secs_f64()
    );
    Ok(())
}
