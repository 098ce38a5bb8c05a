//! `nowait-recover FILE`: writes what a process that died left in a
//! crash-durable file ([`Builder::crash_durable`]), without starting the
//! program that wrote it.
//!
//! The records the dead process had accepted and not written go to
//! standard output (or `--to LOG`), preceded by a notice naming the
//! process; the bytes its file sinks had formatted and not written are
//! completed in those files, as the program's own next start would do.
//! Afterwards FILE holds nothing to recover; it is removed unless `--keep`
//! is given. A file a live logger uses is refused.
//!
//! Run: `cargo run -p nowait-examples --example nowait-recover -- /dev/shm/app.nowait [--json] [--to recovered.log] [--keep]`
//!
//! Exit status: 0 when FILE was read (whether it held records or not),
//! 1 when it could not be (in use, unreadable), 2 on bad arguments.

use std::path::PathBuf;
use std::process::ExitCode;

use nowait::{Builder, Json, Sink, Text};

const USAGE: &str = "usage: nowait-recover FILE [--json] [--to LOG] [--keep]";

fn main() -> ExitCode {
    let (mut file, mut to, mut json, mut keep) = (None, None, false, false);
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--json") => json = true,
            Some("--keep") => keep = true,
            Some("--to") => match args.next() {
                Some(path) => to = Some(PathBuf::from(path)),
                None => {
                    eprintln!("{USAGE}");
                    return ExitCode::from(2);
                }
            },
            Some("-h" | "--help") => {
                println!("{USAGE}");
                return ExitCode::SUCCESS;
            }
            _ if file.is_none() => file = Some(PathBuf::from(arg)),
            _ => {
                eprintln!("{USAGE}");
                return ExitCode::from(2);
            }
        }
    }
    let Some(file) = file else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    if !file.exists() {
        eprintln!("nowait-recover: {} does not exist", file.display());
        return ExitCode::from(1);
    }
    let sink = match &to {
        Some(path) => Sink::file(path),
        None => Sink::stdout(),
    };
    let builder = Builder::new()
        .sink(sink)
        .drain_on_crash(false)
        .crash_durable(&file);
    let builder = if json {
        builder.format(Json::new())
    } else {
        builder.format(Text::new())
    };
    let (logger, guard) = match builder.build() {
        Ok(built) => built,
        Err(e) => {
            eprintln!("nowait-recover: {e}");
            return ExitCode::from(1);
        }
    };
    // Dropping the guard writes everything, within its bound (5 s).
    drop(guard);
    let stats = logger.stats();
    drop(logger);
    if stats.records_written == 0 {
        eprintln!(
            "nowait-recover: {} held no records to recover",
            file.display()
        );
    }
    if stats.dropped() > 0 {
        eprintln!(
            "nowait-recover: {} records could not be written",
            stats.dropped()
        );
    }
    if !keep {
        if let Err(e) = std::fs::remove_file(&file) {
            eprintln!("nowait-recover: cannot remove {}: {e}", file.display());
        }
    }
    ExitCode::SUCCESS
}
