//! The command line, read one argument at a time: options (`-h`,
//! `--name`, `--name VALUE`, `--name=VALUE`) and operands (`--` ends the
//! options, so that an operand may start with `-`; `-` alone is an
//! operand). Each subcommand matches the options it knows and calls
//! anything else a [`Usage`] error.
//!
//! Arguments are kept as `OsString`s, so that a path that is not UTF-8
//! reaches the file system unchanged, given as an operand or as the
//! argument after an option (`--to LOG`); `--name=VALUE` must be UTF-8.

use std::ffi::OsString;
use std::fmt;

/// One argument, as a subcommand sees it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Arg {
    /// An option as written, without its `=VALUE` (`--sink`, `-h`).
    Option(String),
    /// Anything else: a file, a subcommand's name.
    Operand(OsString),
}

/// The arguments not read yet.
#[derive(Debug)]
pub(crate) struct Args {
    rest: std::vec::IntoIter<OsString>,
    /// The last `--name=VALUE`, as (`--name`, `VALUE`), until
    /// [`Args::value`] takes its value.
    inline: Option<(String, OsString)>,
    /// Set after `--`: everything left is an operand.
    operands_only: bool,
}

/// Bad usage: what is wrong, in a phrase (`unknown option --frob`).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Usage(pub(crate) String);

impl fmt::Display for Usage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Args {
    /// The arguments `args`, without the program's name.
    pub(crate) fn new(args: impl IntoIterator<Item = OsString>) -> Args {
        Args {
            rest: args.into_iter().collect::<Vec<_>>().into_iter(),
            inline: None,
            operands_only: false,
        }
    }

    /// The next argument, or `None` at the end.
    ///
    /// # Errors
    ///
    /// An option given a value (`--name=VALUE`) whose value was not taken
    /// with [`Args::value`], and an option that is not UTF-8.
    pub(crate) fn next(&mut self) -> Result<Option<Arg>, Usage> {
        if let Some((name, _)) = self.inline.take() {
            return Err(Usage(format!("{name} takes no value")));
        }
        let Some(arg) = self.rest.next() else {
            return Ok(None);
        };
        if self.operands_only {
            return Ok(Some(Arg::Operand(arg)));
        }
        let Some(text) = arg.to_str() else {
            // Not UTF-8: an option name never is, so an operand, unless it
            // starts like an option.
            let starts_with_dash = arg.to_string_lossy().starts_with('-');
            return match starts_with_dash {
                true => Err(Usage(format!("unknown option {}", arg.to_string_lossy()))),
                false => Ok(Some(Arg::Operand(arg))),
            };
        };
        match text {
            "--" => {
                self.operands_only = true;
                self.next()
            }
            "-" => Ok(Some(Arg::Operand(arg))),
            _ if text.starts_with('-') => match text.split_once('=') {
                Some((name, value)) => {
                    self.inline = Some((name.into(), value.into()));
                    Ok(Some(Arg::Option(name.into())))
                }
                None => Ok(Some(Arg::Option(text.into()))),
            },
            _ => Ok(Some(Arg::Operand(arg))),
        }
    }

    /// The value of the option `name` just read (as written, `--to`):
    /// the part after `=`, or the next argument.
    ///
    /// # Errors
    ///
    /// When there is no next argument.
    pub(crate) fn value(&mut self, name: &str) -> Result<OsString, Usage> {
        match (self.inline.take().map(|(_, value)| value)).or_else(|| self.rest.next()) {
            Some(value) => Ok(value),
            None => Err(Usage(format!("{name} needs a value"))),
        }
    }

    /// Everything not read yet, as given (a subcommand's own arguments).
    pub(crate) fn rest(self) -> Vec<OsString> {
        self.rest.collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Args {
        Args::new(list.iter().map(OsString::from))
    }

    fn option(name: &str) -> Result<Option<Arg>, Usage> {
        Ok(Some(Arg::Option(name.into())))
    }

    fn operand(text: &str) -> Result<Option<Arg>, Usage> {
        Ok(Some(Arg::Operand(text.into())))
    }

    #[test]
    fn options_values_and_operands_come_in_order() {
        let mut a = args(&["f", "--sink", "a.log", "--to=b.log", "--json", "-h", "-"]);
        assert_eq!(a.next(), operand("f"));
        assert_eq!(a.next(), option("--sink"));
        assert_eq!(a.value("--sink"), Ok("a.log".into()));
        assert_eq!(a.next(), option("--to"));
        assert_eq!(a.value("--to"), Ok("b.log".into()));
        assert_eq!(a.next(), option("--json"));
        assert_eq!(a.next(), option("-h"));
        assert_eq!(a.next(), operand("-"));
        assert_eq!(a.next(), Ok(None));
    }

    #[test]
    fn after_double_dash_everything_is_an_operand() {
        let mut a = args(&["--", "--keep", "-x"]);
        assert_eq!(a.next(), operand("--keep"));
        assert_eq!(a.next(), operand("-x"));
        assert_eq!(a.next(), Ok(None));
    }

    #[test]
    fn a_missing_value_and_an_unused_value_are_usage_errors() {
        let mut a = args(&["--sink"]);
        assert_eq!(a.next(), option("--sink"));
        assert_eq!(a.value("--sink"), Err(Usage("--sink needs a value".into())));

        let mut a = args(&["--keep=yes", "f"]);
        assert_eq!(a.next(), option("--keep"));
        assert_eq!(a.next(), Err(Usage("--keep takes no value".into())));
    }

    #[test]
    fn the_rest_is_returned_as_given() {
        let mut a = args(&["recover", "f", "--keep"]);
        assert_eq!(a.next(), operand("recover"));
        assert_eq!(a.rest(), vec![OsString::from("f"), "--keep".into()]);
    }

    #[cfg(unix)]
    #[test]
    fn a_path_that_is_not_utf8_is_an_operand_unchanged() {
        use std::os::unix::ffi::OsStringExt;
        let path = OsString::from_vec(b"app\xff.nowait".to_vec());
        let mut a = Args::new([path.clone(), "--to".into(), path.clone()]);
        assert_eq!(a.next(), Ok(Some(Arg::Operand(path.clone()))));
        assert_eq!(a.next(), option("--to"));
        assert_eq!(a.value("--to"), Ok(path));
    }
}
