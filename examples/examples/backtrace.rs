//! Backtrace on error: the terminal shows INFO and above, and, before each
//! ERROR, the DEBUG lines that led to it (at most the last 100 since the
//! previous error); DEBUG lines that no error follows are never shown.
//!
//! Run: `cargo run -p nowait-examples --example backtrace`
//!
//! Prints:
//!
//! ```text
//! 2026-11-23T12:00:00.000101Z  INFO app: GET /a status=200
//! 2026-11-23T12:00:00.000250Z  INFO nowait: --- 2 earlier records below INFO, kept for this ERROR ---
//! 2026-11-23T12:00:00.000160Z DEBUG app: connecting to db host="db2"
//! 2026-11-23T12:00:00.000171Z DEBUG app: retrying attempt=2
//! 2026-11-23T12:00:00.000250Z  INFO nowait: --- end of the 2 earlier records ---
//! 2026-11-23T12:00:00.000180Z ERROR app: GET /b failed error="connection refused"
//! ```
//!
//! The DEBUG calls are pushed (the logger lets DEBUG through because the
//! sink keeps it: `Logger::min_level` is DEBUG), so a `RUST_LOG` or
//! `EnvFilter` in front must let DEBUG through too. The request thread
//! pays a push per DEBUG call; the writer thread keeps the raw record and
//! formats it only if an error comes.

use nowait::sink::BacktraceBuffer;
use nowait::{debug, error, info, Builder, Level, Sink};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (logger, _guard) = Builder::new()
        .sink(
            Sink::stdout()
                .level(Level::Info)
                .backtrace(BacktraceBuffer::records(100)),
        )
        .build()?;
    nowait::set_global(logger)?;

    info!(target: "app", status = 200u64, "GET {}", "/a");
    debug!(target: "app", host = "db2", "connecting to db");
    debug!(target: "app", attempt = 2u64, "retrying");
    error!(target: "app", error = "connection refused", "GET {} failed", "/b");
    debug!(target: "app", "kept, never shown: no other error comes");
    Ok(())
}
