//! `nowait cat FILE...`: renders binary log files (`Sink::binary`) as the
//! text or JSON sinks would have written them.
//!
//! 1. Each FILE is opened and its first bytes looked at: a gzip or zstd
//!    archive (a rotated file compressed) is read through its decoder,
//!    anything else as it is. Several files are read in the order of
//!    their first entry's time (a rolling set, in whatever order a shell
//!    glob gives it), files without entries first, ties in the order
//!    given.
//! 2. `binary::Reader` decodes the entries; the filters (level, target,
//!    time range, fields) pick some; the chosen format renders them, one
//!    format for all files, as one sink would have.
//! 3. A file that is not a binary log, or that is damaged, is reported on
//!    stderr with the byte where reading stopped; the other files are
//!    still read, and the exit status is 1.
//! 4. `--follow` keeps reading the last file as it grows, and when its
//!    path names another file (a rotation that renamed it, a rolling
//!    sink's symbolic link moved on), reads the old one to its end and
//!    goes on with the new one from its start.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use nowait::binary::{Entry, Reader, Stop};
use nowait::format::{Format, Json, MakeFormat, SinkInfo, Text};
use nowait::Level;

use crate::args::{Arg, Args, Usage};
use crate::Status;

/// `nowait cat --help`.
pub(crate) const HELP: &str = "\
nowait cat: render binary log files (nowait's Sink::binary) as text or JSON

Usage: nowait cat FILE... [OPTIONS]

Each entry is written as the text (or, with --json, the JSON) sink with the
same options would have written it. Several FILEs (a rolling set, rotated
files compressed with gzip or zstd) are read in the order of their first
entry's time. FILE - reads standard input.

Output:
  --json               JSON lines (tracing-subscriber's schema)
  --nowait-schema      JSON lines in nowait's own schema (implies --json)
  --flatten            JSON: the event's fields at the top level
  --ansi on|off        colours in text (default: on when standard output is
                       a terminal)
  --no-time            no timestamps
  --no-target          no targets
  --thread-names       the thread names (if the file recorded them)
  --thread-ids         the thread ids (if the file recorded them)
  --file               the source file
  --line-number        the source line
  --trace-ids          the OpenTelemetry trace and span ids

Filters (an entry is written if it passes all of them):
  --level LEVEL        LEVEL and above (trace, debug, info, warn, error)
  --target PREFIX      targets starting with PREFIX (repeat: any of them)
  --since TIME         at or after TIME (RFC 3339, 2026-11-28T10:00:00Z, or
                       seconds since the Unix epoch)
  --until TIME         before TIME
  --field NAME=VALUE   events whose field NAME has the text VALUE (repeat:
                       all of them)

  --follow, -f         keep reading the last FILE as it grows, and when its
                       path names a new file (a rotation), go on in that one;
                       for a rolling sink, follow its link to the current file
                       (Rolling::symlink). Until interrupted.
  -h, --help           print this help

Exit status:
  0  every FILE was read to its end and every entry written
  1  a FILE could not be opened, is not a nowait binary log, or is damaged or
     cut short (stderr names the byte where reading stopped); or the output
     could not be written
  2  bad usage
";

/// Where this subcommand's messages start.
const ME: &str = "nowait cat";
/// How often `--follow` looks for more.
const POLL: Duration = Duration::from_millis(200);

/// A `nowait cat` command line.
#[derive(Debug, Default)]
pub(crate) struct Cat {
    files: Vec<PathBuf>,
    json: bool,
    nowait_schema: bool,
    flatten: bool,
    ansi: Option<bool>,
    no_time: bool,
    no_target: bool,
    thread_names: bool,
    thread_ids: bool,
    file: bool,
    line_number: bool,
    trace_ids: bool,
    filter: Filter,
    follow: bool,
}

/// Which entries are written.
#[derive(Debug, Default)]
struct Filter {
    level: Option<Level>,
    targets: Vec<String>,
    since: Option<u64>,
    until: Option<u64>,
    fields: Vec<(String, String)>,
}

impl Filter {
    fn passes(&self, entry: &Entry) -> bool {
        if self.level.is_some_and(|l| entry.level() < l) {
            return false;
        }
        if !self.targets.is_empty() {
            let target = entry.target();
            if !self.targets.iter().any(|p| target.starts_with(p.as_str())) {
                return false;
            }
        }
        if self.since.is_some() || self.until.is_some() {
            let Some(t) = entry.time_nanos() else {
                return false;
            };
            if self.since.is_some_and(|s| t < s) || self.until.is_some_and(|u| t >= u) {
                return false;
            }
        }
        self.fields
            .iter()
            .all(|(name, value)| entry.field(name).as_deref() == Some(value.as_str()))
    }
}

impl Cat {
    /// Reads `nowait cat`'s arguments; `None` when help is asked for.
    ///
    /// # Errors
    ///
    /// An unknown option, an option without its value or with a value it
    /// does not take, no FILE.
    pub(crate) fn parse(mut args: Args) -> Result<Option<Cat>, Usage> {
        let mut cat = Cat::default();
        while let Some(arg) = args.next()? {
            match arg {
                Arg::Option(name) => match name.as_str() {
                    "-h" | "--help" => return Ok(None),
                    "--json" => cat.json = true,
                    "--nowait-schema" => {
                        cat.json = true;
                        cat.nowait_schema = true;
                    }
                    "--flatten" => cat.flatten = true,
                    "--ansi" => {
                        cat.ansi = Some(match utf8(&name, args.value(&name)?)?.as_str() {
                            "on" => true,
                            "off" => false,
                            other => {
                                return Err(Usage(format!("--ansi takes on or off, not {other}")))
                            }
                        })
                    }
                    "--no-time" => cat.no_time = true,
                    "--no-target" => cat.no_target = true,
                    "--thread-names" => cat.thread_names = true,
                    "--thread-ids" => cat.thread_ids = true,
                    "--file" => cat.file = true,
                    "--line-number" => cat.line_number = true,
                    "--trace-ids" => cat.trace_ids = true,
                    "--follow" | "-f" => cat.follow = true,
                    "--level" => {
                        let v = utf8(&name, args.value(&name)?)?;
                        cat.filter.level = Some(v.parse().map_err(|_| {
                            Usage(format!(
                                "--level takes trace, debug, info, warn or error, not {v}"
                            ))
                        })?);
                    }
                    "--target" => cat.filter.targets.push(utf8(&name, args.value(&name)?)?),
                    "--since" => cat.filter.since = Some(time(&name, args.value(&name)?)?),
                    "--until" => cat.filter.until = Some(time(&name, args.value(&name)?)?),
                    "--field" => {
                        let v = utf8(&name, args.value(&name)?)?;
                        let Some((n, value)) = v.split_once('=') else {
                            return Err(Usage(format!("--field takes NAME=VALUE, not {v}")));
                        };
                        cat.filter.fields.push((n.into(), value.into()));
                    }
                    _ => return Err(Usage(format!("unknown option {name}"))),
                },
                Arg::Operand(path) => cat.files.push(path.into()),
            }
        }
        if cat.files.is_empty() {
            return Err(Usage("no FILE given".into()));
        }
        Ok(Some(cat))
    }

    /// The format the entries are rendered with.
    fn format(&self, terminal: bool) -> Box<dyn Format> {
        let sink = SinkInfo::new("nowait cat", terminal);
        if self.json {
            let mut json = if self.nowait_schema {
                Json::nowait_schema()
            } else {
                Json::new()
            };
            json = json
                .flatten_event(self.flatten)
                .with_target(!self.no_target)
                .with_thread_names(self.thread_names)
                .with_thread_ids(self.thread_ids)
                .with_file(self.file)
                .with_line_number(self.line_number)
                .with_trace_ids(self.trace_ids);
            if self.no_time {
                json = json.without_time();
            }
            return json.make_format(&sink);
        }
        let mut text = Text::new()
            .with_target(!self.no_target)
            .with_thread_names(self.thread_names)
            .with_thread_ids(self.thread_ids)
            .with_file(self.file)
            .with_line_number(self.line_number)
            .with_trace_ids(self.trace_ids);
        if let Some(on) = self.ansi {
            text = text.with_ansi(on);
        }
        if self.no_time {
            text = text.without_time();
        }
        text.make_format(&sink)
    }

    /// Renders the files, saying on stderr what went wrong, if anything.
    pub(crate) fn run(&self) -> Status {
        let stdout = io::stdout();
        let terminal = stdout.is_terminal();
        let mut out = BufWriter::with_capacity(64 * 1024, stdout.lock());
        let mut format = self.format(terminal);
        let mut status = Status::Done;
        let mut inputs = Vec::new();
        for path in &self.files {
            match Input::open(path) {
                Ok(input) => inputs.push(input),
                Err(why) => {
                    eprintln!("{ME}: {}: {why}", path.display());
                    status = Status::Failed;
                }
            }
        }
        // A rolling set in time order: by each file's first entry.
        inputs.sort_by_key(|i| i.first_time);
        let last = inputs.len().saturating_sub(1);
        let mut line = Vec::new();
        for (n, input) in inputs.into_iter().enumerate() {
            let follow = self.follow && n == last;
            match self.render(input, follow, &mut *format, &mut line, &mut out) {
                Ok(true) => {}
                Ok(false) => status = Status::Failed,
                Err(e) => {
                    if e.kind() != io::ErrorKind::BrokenPipe {
                        eprintln!("{ME}: cannot write the output: {e}");
                    }
                    return Status::Failed;
                }
            }
        }
        if let Err(e) = out.flush() {
            if e.kind() != io::ErrorKind::BrokenPipe {
                eprintln!("{ME}: cannot write the output: {e}");
            }
            return Status::Failed;
        }
        status
    }

    /// Renders one file's entries; `Ok(false)` if it was not read to its
    /// end (said on stderr), `Err` if the output failed.
    fn render(
        &self,
        mut input: Input,
        follow: bool,
        format: &mut dyn Format,
        line: &mut Vec<u8>,
        out: &mut impl Write,
    ) -> io::Result<bool> {
        let mut read = 0u64;
        let mut switch = false;
        loop {
            for entry in input.pending.drain(..).map(Ok).chain(&mut input.reader) {
                match entry {
                    Ok(entry) => {
                        read += 1;
                        if self.filter.passes(&entry) {
                            line.clear();
                            entry.render(format, line);
                            out.write_all(line)?;
                        }
                    }
                    Err(e) => {
                        eprintln!(
                            "{ME}: {}: {e}; {read} entries read before it",
                            input.path.display()
                        );
                        return Ok(false);
                    }
                }
            }
            if switch {
                // The old file was read to its end (its writer had left
                // it): the new one from its start.
                if let Ok(next) = Input::open(&input.path) {
                    input = next;
                    read = 0;
                }
                switch = false;
                continue;
            }
            if !follow {
                break;
            }
            out.flush()?;
            std::thread::sleep(POLL);
            // The path names another file now: what the old one got
            // since the last read first, on the next round.
            switch = input.rotated();
        }
        match input.reader.stop() {
            Stop::Cut { at, len } => {
                eprintln!(
                    "{ME}: {}: cut short at byte {at} ({len} bytes of an incomplete entry \
                     follow; still being written, or damaged); {read} entries read before it",
                    input.path.display()
                );
                Ok(false)
            }
            _ => Ok(true),
        }
    }
}

/// One file being read.
struct Input {
    path: PathBuf,
    reader: Reader<Box<dyn Read>>,
    /// The entries read to find `first_time`, not yet rendered.
    pending: Vec<Entry>,
    /// The time of the first entry, if it has one (for the order).
    first_time: Option<u64>,
    /// The file's identity when opened (`--follow` compares).
    identity: Option<Identity>,
}

impl Input {
    /// Opens `path` (`-`: standard input), through a decoder if it is an
    /// archive, and reads up to its first entry with a time.
    fn open(path: &Path) -> Result<Input, String> {
        let (raw, identity): (Box<dyn Read>, _) = if path.as_os_str() == "-" {
            (Box::new(io::stdin()), None)
        } else {
            let file = File::open(path).map_err(|e| e.to_string())?;
            let identity = identity_of(&file);
            (Box::new(file), identity)
        };
        let peeked = Peeked::new(raw).map_err(|e| e.to_string())?;
        let input: Box<dyn Read> = match peeked.head() {
            [0x1f, 0x8b, ..] => gzip(peeked)?,
            [0x28, 0xb5, 0x2f, 0xfd, ..] => zstd(peeked)?,
            _ => Box::new(peeked),
        };
        let mut reader = Reader::new(input);
        let mut pending = Vec::new();
        let mut first_time = None;
        // The first entries, up to one with a time (an error is kept for
        // the rendering to report in its place).
        for entry in &mut reader {
            match entry {
                Ok(entry) => {
                    first_time = entry.time_nanos();
                    pending.push(entry);
                    if first_time.is_some() || pending.len() >= 64 {
                        break;
                    }
                }
                Err(e) if pending.is_empty() => return Err(e.to_string()),
                Err(_) => break,
            }
        }
        Ok(Input {
            path: path.to_owned(),
            reader,
            pending,
            first_time,
            identity,
        })
    }

    /// Whether the path names another file than the one being read.
    fn rotated(&self) -> bool {
        let Some(open) = &self.identity else {
            return false;
        };
        match File::open(&self.path) {
            Ok(now) => identity_of(&now).is_some_and(|id| id != *open),
            Err(_) => false,
        }
    }
}

/// A reader whose first bytes were looked at (to spot an archive) and are
/// given again.
struct Peeked {
    head: Vec<u8>,
    at: usize,
    inner: Box<dyn Read>,
}

impl Peeked {
    fn new(mut inner: Box<dyn Read>) -> io::Result<Peeked> {
        let mut head = vec![0u8; 4];
        let mut got = 0;
        while got < head.len() {
            match inner.read(&mut head[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        head.truncate(got);
        Ok(Peeked { head, at: 0, inner })
    }

    fn head(&self) -> &[u8] {
        &self.head
    }
}

impl Read for Peeked {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.at < self.head.len() {
            let n = buf.len().min(self.head.len() - self.at);
            buf[..n].copy_from_slice(&self.head[self.at..self.at + n]);
            self.at += n;
            return Ok(n);
        }
        self.inner.read(buf)
    }
}

#[cfg(feature = "gzip")]
fn gzip(input: Peeked) -> Result<Box<dyn Read>, String> {
    Ok(Box::new(flate2::read::MultiGzDecoder::new(input)))
}

#[cfg(not(feature = "gzip"))]
fn gzip(_: Peeked) -> Result<Box<dyn Read>, String> {
    Err("compressed with gzip, and this nowait was built without its gzip feature".into())
}

#[cfg(feature = "zstd")]
fn zstd(input: Peeked) -> Result<Box<dyn Read>, String> {
    zstd::stream::read::Decoder::new(input)
        .map(|d| Box::new(d) as Box<dyn Read>)
        .map_err(|e| e.to_string())
}

#[cfg(not(feature = "zstd"))]
fn zstd(_: Peeked) -> Result<Box<dyn Read>, String> {
    Err("compressed with zstd, and this nowait was built without its zstd feature".into())
}

/// What tells one file from another at a path: device and inode on Unix;
/// elsewhere the creation time.
#[derive(Debug, PartialEq, Eq)]
struct Identity {
    #[cfg(unix)]
    dev_ino: (u64, u64),
    #[cfg(not(unix))]
    created: Option<std::time::SystemTime>,
}

fn identity_of(file: &File) -> Option<Identity> {
    let meta = file.metadata().ok()?;
    #[cfg(unix)]
    let identity = {
        use std::os::unix::fs::MetadataExt;
        Identity {
            dev_ino: (meta.dev(), meta.ino()),
        }
    };
    #[cfg(not(unix))]
    let identity = Identity {
        created: meta.created().ok(),
    };
    Some(identity)
}

/// An option's value as text.
fn utf8(name: &str, value: OsString) -> Result<String, Usage> {
    value
        .into_string()
        .map_err(|v| Usage(format!("{name}: {} is not UTF-8", v.to_string_lossy())))
}

/// `--since`/`--until`: RFC 3339 (`2026-11-28T10:00:00Z`, a fraction and
/// an offset allowed) or seconds since the Unix epoch; nanoseconds.
fn time(name: &str, value: OsString) -> Result<u64, Usage> {
    let text = utf8(name, value)?;
    parse_time(&text).ok_or_else(|| {
        Usage(format!(
            "{name} takes a time as 2026-11-28T10:00:00Z or seconds since the epoch, not {text}"
        ))
    })
}

fn parse_time(text: &str) -> Option<u64> {
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return text.parse::<u64>().ok()?.checked_mul(1_000_000_000);
    }
    let b = text.as_bytes();
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let s = text.get(r)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (y, mo, d) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (h, mi, s) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let mut rest = &text[19..];
    let mut nanos = 0i64;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        for (i, c) in frac[..digits].bytes().enumerate().take(9) {
            nanos += i64::from(c - b'0') * 10i64.pow(8 - i as u32);
        }
        rest = &frac[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let r = rest.as_bytes();
            if r.len() != 6 || r[3] != b':' {
                return None;
            }
            let oh: i64 = rest[1..3].parse().ok()?;
            let om: i64 = rest[4..6].parse().ok()?;
            sign * (oh * 3600 + om * 60)
        }
    };
    let days = days_from_civil(y, mo, d);
    let secs = days * 86_400 + h * 3600 + mi * 60 + s - offset;
    let nanos = secs.checked_mul(1_000_000_000)?.checked_add(nanos)?;
    u64::try_from(nanos).ok()
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// `days_from_civil`).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_parse_as_rfc3339_or_epoch_seconds() {
        assert_eq!(parse_time("0"), Some(0));
        assert_eq!(parse_time("1795392000"), Some(1_795_392_000_000_000_000));
        assert_eq!(
            parse_time("2026-11-23T00:00:00Z"),
            Some(1_795_392_000_000_000_000)
        );
        assert_eq!(
            parse_time("2026-11-23T00:00:00.000001Z"),
            Some(1_795_392_000_000_001_000)
        );
        assert_eq!(
            parse_time("2026-11-23T01:30:00+01:30"),
            Some(1_795_392_000_000_000_000)
        );
        assert_eq!(
            parse_time("2000-02-29T00:00:00Z"),
            Some(951_782_400_000_000_000)
        );
        for bad in [
            "",
            "yesterday",
            "2026-13-01T00:00:00Z",
            "2026-11-23T00:00:00",
            "1e9",
        ] {
            assert_eq!(parse_time(bad), None, "{bad}");
        }
    }

    #[test]
    fn options_are_read() {
        let args = |list: &[&str]| Args::new(list.iter().map(OsString::from));
        let cat = Cat::parse(args(&[
            "a.nwb", "--json", "--level", "warn", "--target", "app", "--field", "user=ann",
            "--since", "0", "b.nwb",
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(cat.files.len(), 2);
        assert!(cat.json);
        assert_eq!(cat.filter.level, Some(Level::Warn));
        assert_eq!(cat.filter.fields, vec![("user".into(), "ann".into())]);
        assert!(Cat::parse(args(&[])).is_err());
        assert!(Cat::parse(args(&["f", "--level", "loud"])).is_err());
        assert!(Cat::parse(args(&["f", "--field", "novalue"])).is_err());
        assert!(Cat::parse(args(&["f", "--ansi", "maybe"])).is_err());
        assert!(Cat::parse(args(&["f", "-h"])).unwrap().is_none());
    }
}
