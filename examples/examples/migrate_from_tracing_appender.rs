//! Moving a service from `tracing_appender::non_blocking` to nowait: three
//! changed lines, the same output format.
//!
//! Before:
//!
//! ```text
//! use tracing_subscriber::prelude::*;
//!
//! let (writer, _guard) = tracing_appender::non_blocking(std::io::stdout());
//! tracing_subscriber::registry()
//!     .with(tracing_subscriber::EnvFilter::from_default_env())
//!     .with(tracing_subscriber::fmt::layer().with_writer(writer))
//!     .init();
//! ```
//!
//! After (the three lines marked `// changed`, below in `main`): the
//! guard comes from nowait, and the fmt layer is replaced by nowait's layer.
//! Every `tracing` call in the service stays as it is; `RUST_LOG` filtering
//! too. The lines look the same, e.g.
//!
//! ```text
//! 2026-11-23T10:00:00.123456Z  INFO conn{peer="10.0.0.7"}: app: GET /index.html status=200 micros=41
//! ```
//!
//! What changes underneath: the request thread copies the event's raw
//! values into a ring instead of formatting a line and allocating a `Vec`
//! for it; the writer thread formats and writes 64 KiB at a time; a slow
//! terminal drops (and reports) instead of filling memory or blocking; the
//! guard drains for up to 5 s instead of 1 s, and says what it abandoned.
//!
//! Run: `RUST_LOG=info cargo run -p nowait-examples --example migrate_from_tracing_appender`

use tracing_subscriber::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let stdout = nowait::Builder::new()
        .sink(nowait::Sink::stdout())
        .drain_on_signals(true); // changed
    let (layer, _guard) = nowait::layer(stdout)?; // changed
    tracing_subscriber::registry()
        .with(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with(layer) // changed
        .init();

    // The service, unchanged.
    let conn = tracing::info_span!("conn", peer = "10.0.0.7");
    let _enter = conn.enter();
    for (path, status, micros) in [("/index.html", 200u16, 41u64), ("/missing", 404, 12)] {
        tracing::info!(status, micros, "GET {path}");
    }
    tracing::warn!(queue_depth = 812u64, "backlog growing");
    Ok(())
}
