//! `nowait-recover FILE`: writes what a process that died left in a
//! crash-durable file ([`Builder::crash_durable`]), without starting the
//! program that wrote it.
//!
//! The records the dead process had accepted and not written go to
//! standard output (or `--to LOG`), preceded by a notice naming the
//! process. The bytes its file sinks had formatted and not written are
//! completed only in the files named with `--sink PATH` (as many as the
//! program had), which then also get the records, as the program's own
//! next start would do: the tool never writes a path taken from FILE,
//! whose content it does not trust. A dead file sink no `--sink` names
//! has its pending bytes counted lost in a notice that names it.
//! Afterwards FILE holds nothing to recover; it is removed unless `--keep`
//! is given. A file a live logger uses is refused, and so is a link, a
//! file another user owns or may write, and a file that is not a
//! crash-durable file.
//!
//! Run: `cargo run -p nowait-examples --example nowait-recover -- /dev/shm/app.nowait [--sink /var/log/app.log]... [--json] [--to recovered.log] [--keep]`
//!
//! Exit status: 0 when FILE was read (whether it held records or not),
//! 1 when it could not be (in use, unreadable), 2 on bad arguments.

use std::path::PathBuf;
use std::process::ExitCode;

use nowait::format::{Json, Text};
use nowait::{Builder, Sink};

const USAGE: &str = "usage: nowait-recover FILE [--sink PATH]... [--json] [--to LOG] [--keep]";

fn main() -> ExitCode {
    let (mut file, mut to, mut json, mut keep) = (None, None, false, false);
    let mut sinks = Vec::new();
    let mut args = std::env::args_os().skip(1);
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--json") => json = true,
            Some("--keep") => keep = true,
            Some("--sink") => match args.next() {
                Some(path) => sinks.push(PathBuf::from(path)),
                None => {
                    eprintln!("{USAGE}");
                    return ExitCode::from(2);
                }
            },
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
    let mut builder = Builder::new().drain_on_crash(false).crash_durable(&file);
    for path in &sinks {
        builder = builder.sink(Sink::file(path));
    }
    builder = match &to {
        Some(path) => builder.sink(Sink::file(path)),
        None if sinks.is_empty() => builder.sink(Sink::stdout()),
        None => builder,
    };
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
