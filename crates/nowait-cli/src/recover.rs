//! `nowait recover FILE`: writes what a process that died left in its
//! crash-durable file (`Builder::crash_durable`), without starting the
//! program that wrote it.
//!
//! The tool is a logger built on FILE, as the program's own next start
//! would build one, with only this command line's sinks:
//!
//! 1. FILE must be there (a missing FILE is an error, not an empty file
//!    created in its place) and must not be a symbolic link.
//! 2. `build()` recovers it. nowait refuses a file a live logger uses, a
//!    link, a file another user owns or may write, and a file that is not
//!    a crash-durable file; it completes a dead file sink's unwritten
//!    bytes only in a file given with `--sink` (never in a path read from
//!    FILE, which is untrusted), and counts the others lost in a notice
//!    naming them. The records, after a notice naming the dead process,
//!    go to every sink: the `--sink` files, `--to LOG`, or standard output
//!    when neither is given.
//! 3. Dropping the guard writes them. Standard output is written with
//!    blocking writes and the shutdown has no time bound, so a slow
//!    reader (a pager) gets every record, as from `cat`.
//! 4. FILE then holds a fresh, empty ring (this logger's) and is removed,
//!    unless `--keep` is given.
//!
//! The exit status is 1 when the records could not be had or could not
//! all be written: `build()` refused FILE; or it could not read it, set it
//! aside as `FILE.corrupt` and said why in a notice (the tool sees the
//! file there); or a sink failed (a closed pipe, a full disk), which
//! [`Stats`](nowait::stats::Stats) counts per sink. A recovered record that was
//! taken from the ring is no longer in FILE, so keeping FILE then would
//! keep nothing.

use std::ffi::OsString;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use nowait::format::{Json, Text};
use nowait::{Builder, Sink};

use crate::args::{Arg, Args, Usage};
use crate::Status;

/// `nowait recover --help`.
pub(crate) const HELP: &str = "\
nowait recover: write what a process that died left in its crash-durable file
(nowait's Builder::crash_durable), without starting the program that wrote it.

Usage: nowait recover FILE [--sink PATH]... [--json] [--to LOG] [--keep]

The records the dead process had accepted and not written are written after a
notice naming the process: to standard output, or to LOG with --to, or to the
--sink files. Then FILE, which holds nothing more to recover, is removed.

Options:
  --sink PATH  a file the dead program logged to (repeat for each): its
               unwritten bytes are completed, then the records appended, as
               the program's own next start would do. A file of the program
               that no --sink names is never opened: its unwritten bytes are
               counted lost, in a notice that names it.
  --to LOG     append the records to LOG instead of standard output
  --json       write the records as JSON lines (default: text)
  --keep       keep FILE (it then holds nothing to recover)
  -h, --help   print this help

Exit status:
  0  FILE was read, whether it held records or not, and every record written
  1  FILE could not be read, or was refused: missing, in use by a live
     logger, a symbolic link, owned or writable by another user, not a
     nowait crash-durable file, unreadable (set aside as FILE.corrupt);
     or a recovered record could not be written (a closed pipe, a full disk)
  2  bad usage
";

/// Where this subcommand's messages start.
const ME: &str = "nowait recover";

/// A `nowait recover` command line.
#[derive(Debug)]
pub(crate) struct Recover {
    file: PathBuf,
    /// `--sink`: the dead program's files, completed and appended to.
    sinks: Vec<PathBuf>,
    /// `--to`: where the records go instead of standard output.
    to: Option<PathBuf>,
    json: bool,
    keep: bool,
}

impl Recover {
    /// Reads `nowait recover`'s arguments; `None` when help is asked for.
    ///
    /// # Errors
    ///
    /// An unknown option, an option without its value, no FILE or two.
    pub(crate) fn parse(mut args: Args) -> Result<Option<Recover>, Usage> {
        let mut file: Option<OsString> = None;
        let mut recover = Recover {
            file: PathBuf::new(),
            sinks: Vec::new(),
            to: None,
            json: false,
            keep: false,
        };
        while let Some(arg) = args.next()? {
            match arg {
                Arg::Option(name) => match name.as_str() {
                    "-h" | "--help" => return Ok(None),
                    "--json" => recover.json = true,
                    "--keep" => recover.keep = true,
                    "--sink" => recover.sinks.push(args.value(&name)?.into()),
                    "--to" => recover.to = Some(args.value(&name)?.into()),
                    _ => return Err(Usage(format!("unknown option {name}"))),
                },
                Arg::Operand(path) if file.is_none() => file = Some(path),
                Arg::Operand(path) => {
                    return Err(Usage(format!(
                        "one FILE only ({} given after it)",
                        Path::new(&path).display()
                    )))
                }
            }
        }
        match file {
            Some(file) => {
                recover.file = file.into();
                Ok(Some(recover))
            }
            None => Err(Usage("no FILE given".into())),
        }
    }

    /// Recovers the file, saying on stderr what went wrong, if anything.
    pub(crate) fn run(&self) -> Status {
        let file = &self.file;
        if let Err(why) = present(file) {
            return refused(file, &why);
        }
        let aside = set_aside_path(file);
        let aside_before = identity(&aside);
        let (logger, guard) = match self.builder().build() {
            Ok(built) => built,
            Err(e) => {
                // `nowait: cannot use FILE as a crash-durable ring: why`,
                // or the same naming a --sink or --to file.
                let e = e.to_string();
                eprintln!("{ME}: {}", e.strip_prefix("nowait: ").unwrap_or(&e));
                return Status::Failed;
            }
        };
        drop(guard);
        let stats = logger.stats();
        drop(logger);

        let mut status = Status::Done;
        let aside_after = identity(&aside);
        if aside_after.is_some() && aside_after != aside_before {
            eprintln!(
                "{ME}: {} could not be read (the notice in the output says why); \
                 it is set aside as {}",
                file.display(),
                aside.display()
            );
            status = Status::Failed;
        } else if stats.records_written == 0 {
            eprintln!("{ME}: {} held no records to recover", file.display());
        }
        // Per sink: a failed sink (a closed pipe, a full disk) drops its
        // records; no other count says so.
        let mut unwritten = Vec::new();
        let ring_lost = stats.dropped() + stats.abandoned;
        if ring_lost > 0 {
            unwritten.push(format!("{ring_lost} in the ring"));
        }
        for (sink, name) in stats.sinks.iter().zip(self.sink_names()) {
            if sink.dropped() > 0 {
                let why = sink.last_error.as_deref().unwrap_or("not written in time");
                unwritten.push(format!("{} to {name} ({why})", sink.dropped()));
            }
        }
        if !unwritten.is_empty() {
            eprintln!(
                "{ME}: records from {} could not all be written, and are lost: {}",
                file.display(),
                unwritten.join(", ")
            );
            status = Status::Failed;
        }
        if !self.keep {
            if let Err(e) = std::fs::remove_file(file) {
                eprintln!("{ME}: cannot remove {}: {e}", file.display());
            }
        }
        status
    }

    /// The names of [`Recover::builder`]'s sinks, in their order.
    fn sink_names(&self) -> Vec<String> {
        let files = self.sinks.iter().chain(&self.to);
        let mut names: Vec<_> = files.map(|p| p.display().to_string()).collect();
        if names.is_empty() {
            names.push("standard output".into());
        }
        names
    }

    /// The logger the program's next start would build on the file, with
    /// this command line's sinks instead of the program's: the `--sink`
    /// files, then `--to` or, when neither is given, standard output.
    fn builder(&self) -> Builder {
        let mut builder = Builder::new()
            .drain_on_crash(false)
            .catch_panics(false)
            .flush_on_exit(false)
            // Every record is written, however slow the reader is.
            .shutdown_timeout(Duration::MAX)
            .crash_durable(&self.file);
        for path in &self.sinks {
            builder = builder.sink(Sink::file(path));
        }
        builder = match &self.to {
            Some(path) => builder.sink(Sink::file(path)),
            // Blocking writes: `Sink::stdout` drops what a stalled reader
            // does not take.
            None if self.sinks.is_empty() => builder.sink(Sink::writer(io::stdout())),
            None => builder,
        };
        match self.json {
            true => builder.format(Json::new()),
            false => builder.format(Text::new().with_ansi(false)),
        }
    }
}

/// Says why `file` is refused; the exit status for it.
fn refused(file: &Path, why: &str) -> Status {
    eprintln!("{ME}: {}: {why}", file.display());
    Status::Failed
}

/// Checks that `file` is there and is not a symbolic link (which nowait
/// would refuse, less clearly).
fn present(file: &Path) -> Result<(), String> {
    match std::fs::symlink_metadata(file) {
        Ok(meta) if meta.file_type().is_symlink() => {
            Err("a symbolic link, which nowait does not follow".into())
        }
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err("no such file".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// Where `build()` sets aside a crash-durable file it could not read.
fn set_aside_path(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".corrupt");
    PathBuf::from(name)
}

/// What tells one file from another at the same path, to see that
/// `build()` moved one there: device and inode on Unix; elsewhere length
/// and modification time (a rename keeps the moved file's).
#[derive(Debug, PartialEq, Eq)]
struct Identity {
    #[cfg(unix)]
    dev_ino: (u64, u64),
    #[cfg(not(unix))]
    len_modified: (u64, Option<std::time::SystemTime>),
}

/// The identity of the file at `path` (not following a link), if any.
fn identity(path: &Path) -> Option<Identity> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    #[cfg(unix)]
    let identity = {
        use std::os::unix::fs::MetadataExt;
        Identity {
            dev_ino: (meta.dev(), meta.ino()),
        }
    };
    #[cfg(not(unix))]
    let identity = Identity {
        len_modified: (meta.len(), meta.modified().ok()),
    };
    Some(identity)
}
