//! Logs a service's `tracing` events into the systemd journal, with a file
//! beside it, through one ring and one writer thread.
//!
//! Each event becomes one journal entry: the message as `MESSAGE`, the
//! level as `PRIORITY`, `SYSLOG_IDENTIFIER`, `TARGET`, `CODE_FILE` and
//! `CODE_LINE`, the span's and the event's fields upper-cased
//! (`status` → `STATUS`). Read them back with
//!
//! ```text
//! journalctl -t nowait-example -o verbose
//! journalctl -t nowait-example STATUS=404
//! journalctl NOWAIT_NOTICE=1          # nowait's own loss reports
//! ```
//!
//! Where there is no journald (not Linux, a container without it) the
//! build says so and the example stops there.
//!
//! Run: `cargo run -p nowait-examples --example journald`

use nowait::format::Journald;
use nowait::{Builder, Sink};
use tracing_subscriber::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let file = std::env::temp_dir().join("nowait-example/journald-beside.log");
    let builder = Builder::new()
        .sink(Sink::journald_with(
            Journald::new().syslog_identifier("nowait-example"),
        ))
        .sink(Sink::file(&file));
    let (layer, guard) = match nowait::layer(builder) {
        Ok(pair) => pair,
        Err(e) => {
            eprintln!("no journal here: {e}");
            return Ok(());
        }
    };
    tracing_subscriber::registry().with(layer).init();

    let conn = tracing::info_span!("conn", peer = "10.0.0.7");
    let _enter = conn.enter();
    for (path, status, micros) in [("/index.html", 200u16, 41u64), ("/missing", 404, 12)] {
        tracing::info!(status, micros, "GET {path}");
    }
    tracing::warn!(queue_depth = 812u64, "backlog growing");
    drop(_enter);
    drop(guard); // drains into journald and the file
    eprintln!("sent; try: journalctl -t nowait-example -o verbose");
    Ok(())
}
