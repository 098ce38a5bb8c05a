//! Logs to the terminal and a file at once, then prints the counters.
//!
//! Shows: two sinks fed from one ring; the file keeps every record even if
//! the terminal cannot keep up (try piping into a stalled reader:
//! `cargo run --release -p nowait-examples --example stdout_and_file | (sleep 5; cat >/dev/null)`).
//!
//! Run: `cargo run --release -p nowait-examples --example stdout_and_file`

use std::time::Instant;

use nowait::{Builder, Level, Sink};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::temp_dir().join("nowait-example/app.log");
    let (logger, guard) = Builder::new()
        .sink(Sink::stdout())
        .sink(Sink::file(&path))
        .build()?;

    let started = Instant::now();
    let n = 200_000;
    for i in 0..n {
        logger.log(Level::Info, &format!("request {i} served"))?;
    }
    let pushed = started.elapsed();
    drop(guard); // drains: the file gets all records, stdout what it could take

    let stats = logger.stats();
    eprintln!("pushed {n} records in {pushed:?}");
    for sink in &stats.sinks {
        eprintln!(
            "{:<40} written {:>7}  dropped {:>7}  write() calls {:>5}  bytes/write {:>6}",
            sink.name,
            sink.records_written,
            sink.dropped(),
            sink.write_calls,
            sink.bytes_written / sink.write_calls.max(1)
        );
    }
    eprintln!("file: {}", path.display());
    Ok(())
}
