//! `nowait`: the offline tools of [nowait](https://docs.rs/nowait), one
//! subcommand each, built on the facade crate's public API only.
//!
//! ```text
//! nowait recover FILE [--sink PATH]... [--json] [--to LOG] [--keep]
//! nowait cat FILE... [--json] [--level LEVEL] [--target PREFIX] [--follow] ...
//! ```
//!
//! Each subcommand is a module with its help text, a parser that turns
//! its arguments into a value ([`args`] reads them) and a `run` that
//! returns a [`Status`]; `main` picks the subcommand ([`Command`]).
//!
//! # Exit status
//!
//! The same for every subcommand, so that a script can rely on it:
//! 0 done, 1 a file could not be read or was refused, or the output could
//! not be written, 2 bad usage. Errors
//! go to stderr, one line each, starting with the subcommand
//! (`nowait recover: `).
#![deny(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

mod args;
mod cat;
mod recover;

use std::ffi::OsString;
use std::fmt;
use std::io::Write;
use std::process::ExitCode;

use args::{Arg, Args, Usage};

/// `nowait --help`.
const HELP: &str = "\
nowait: offline tools for the files of nowait, the logging library

Usage: nowait COMMAND [ARGS]...

Commands:
  recover  write what a process that died left in its crash-durable file
  cat      render binary log files (Sink::binary) as text or JSON
  help     print this help, or a command's (nowait help COMMAND)

Options:
  -h, --help     print this help (nowait COMMAND --help: a command's own)
  -V, --version  print the version

Exit status:
  0  done
  1  a file could not be read or was refused, or the output could not be
     written (each command's help says when)
  2  bad usage
";

/// How a run ended: its exit status, the same for every subcommand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Status {
    /// 0: done (`recover`: the file was read, whether it held records or
    /// not).
    Done,
    /// 1: a file could not be read or was refused, or the output could
    /// not be written.
    Failed,
    /// 2: bad usage.
    Usage,
}

impl From<Status> for ExitCode {
    fn from(status: Status) -> ExitCode {
        ExitCode::from(match status {
            Status::Done => 0,
            Status::Failed => 1,
            Status::Usage => 2,
        })
    }
}

/// A subcommand, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Sub {
    /// `nowait recover`.
    Recover,
    /// `nowait cat`.
    Cat,
}

impl Sub {
    fn named(name: &str) -> Option<Sub> {
        match name {
            "recover" => Some(Sub::Recover),
            "cat" => Some(Sub::Cat),
            _ => None,
        }
    }

    fn help(self) -> &'static str {
        match self {
            Sub::Recover => recover::HELP,
            Sub::Cat => cat::HELP,
        }
    }

    /// What its messages start with.
    fn prefix(self) -> &'static str {
        match self {
            Sub::Recover => "nowait recover",
            Sub::Cat => "nowait cat",
        }
    }
}

/// What the command line asks for.
#[derive(Debug)]
enum Command {
    /// `nowait --help`, `nowait help`.
    Help,
    /// `nowait COMMAND --help`, `nowait help COMMAND`.
    HelpFor(Sub),
    /// `nowait --version`.
    Version,
    /// `nowait recover ...`.
    Recover(recover::Recover),
    /// `nowait cat ...`.
    Cat(cat::Cat),
}

/// Bad usage, said on one line by the command it concerns.
#[derive(Debug, PartialEq, Eq)]
struct UsageError {
    /// `None`: `nowait` itself.
    sub: Option<Sub>,
    what: Usage,
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let me = self.sub.map_or("nowait", Sub::prefix);
        write!(f, "{me}: {}; see '{me} --help'", self.what)
    }
}

/// Reads the command line (without the program's name).
fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Command, UsageError> {
    let mut args = Args::new(args);
    let top = |what| UsageError { sub: None, what };
    let name = match args.next().map_err(top)? {
        None => return Err(top(Usage("no command given".into()))),
        Some(Arg::Option(name)) => match name.as_str() {
            "-h" | "--help" => return Ok(Command::Help),
            "-V" | "--version" => return Ok(Command::Version),
            _ => return Err(top(Usage(format!("unknown option {name}")))),
        },
        Some(Arg::Operand(name)) => name.to_string_lossy().into_owned(),
    };
    if name == "help" {
        return match args.next().map_err(top)? {
            None => Ok(Command::Help),
            Some(Arg::Operand(name)) => match Sub::named(&name.to_string_lossy()) {
                Some(sub) => Ok(Command::HelpFor(sub)),
                None => Err(top(Usage(format!(
                    "no command named {}",
                    name.to_string_lossy()
                )))),
            },
            Some(Arg::Option(name)) => Err(top(Usage(format!("unknown option {name}")))),
        };
    }
    let Some(sub) = Sub::named(&name) else {
        return Err(top(Usage(format!("no command named {name}"))));
    };
    let args = Args::new(args.rest());
    let usage = |what| UsageError {
        sub: Some(sub),
        what,
    };
    match sub {
        Sub::Recover => Ok(match recover::Recover::parse(args).map_err(usage)? {
            Some(recover) => Command::Recover(recover),
            None => Command::HelpFor(sub),
        }),
        Sub::Cat => Ok(match cat::Cat::parse(args).map_err(usage)? {
            Some(cat) => Command::Cat(cat),
            None => Command::HelpFor(sub),
        }),
    }
}

/// Writes `text` to stdout; a closed stdout (`nowait --help | head -1`) is
/// no error.
fn print(text: &str) -> Status {
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    Status::Done
}

fn main() -> ExitCode {
    let status = match parse(std::env::args_os().skip(1)) {
        Ok(Command::Help) => print(HELP),
        Ok(Command::HelpFor(sub)) => print(sub.help()),
        Ok(Command::Version) => print(&format!("nowait {}\n", env!("CARGO_PKG_VERSION"))),
        Ok(Command::Recover(recover)) => recover.run(),
        Ok(Command::Cat(cat)) => cat.run(),
        Err(usage) => {
            eprintln!("{usage}");
            Status::Usage
        }
    };
    status.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(list: &[&str]) -> Result<Command, UsageError> {
        parse(list.iter().map(OsString::from))
    }

    #[test]
    fn help_and_version_are_found_in_each_spelling() {
        for line in [&["--help"][..], &["-h"], &["help"]] {
            assert!(matches!(parse_str(line), Ok(Command::Help)), "{line:?}");
        }
        for line in [
            &["recover", "--help"][..],
            &["recover", "f", "-h"],
            &["help", "recover"],
        ] {
            assert!(
                matches!(parse_str(line), Ok(Command::HelpFor(Sub::Recover))),
                "{line:?}"
            );
        }
        for line in [["--version"], ["-V"]] {
            assert!(matches!(parse_str(&line), Ok(Command::Version)), "{line:?}");
        }
    }

    #[test]
    fn usage_errors_name_the_command_they_concern() {
        let err = |list: &[&str]| parse_str(list).unwrap_err().to_string();
        assert_eq!(err(&[]), "nowait: no command given; see 'nowait --help'");
        assert_eq!(
            err(&["frob"]),
            "nowait: no command named frob; see 'nowait --help'"
        );
        assert_eq!(
            err(&["recover", "f", "--frob"]),
            "nowait recover: unknown option --frob; see 'nowait recover --help'"
        );
        assert_eq!(
            err(&["recover"]),
            "nowait recover: no FILE given; see 'nowait recover --help'"
        );
    }
}
