//! logfmt: `key=value` pairs separated by spaces, one record per line, as
//! Heroku's router, Go's `go-kit/log` and Grafana Loki's `logfmt` parser
//! read them.

use std::sync::Arc;

use super::fixed::FixedFields;
use super::flat::{each_field, message_of, TopKeys};
use super::json::json_str;
use super::{
    copy_into, is_bidi_control, message_with, plain_len, scalar_text, system_nanos, Clock, Format,
    Location, MakeFormat, Options, Resolved, SinkInfo,
};
use crate::event::{Callsite, Event, SiteCache, ThreadCache, Value};
use crate::level::Level;
use crate::record::{kind, Notice, Record};

/// logfmt lines, for Grafana Loki's `logfmt` stage, Heroku-style
/// pipelines and `go-logfmt` readers:
///
/// ```text
/// time=2026-11-22T12:00:01.123456Z level=info target=app::http msg="GET /" service=api status=200 peer=10.0.0.7 trace_id=4bf92f3577b34da6a3ce929d0e0e4736 span_id=00f067aa0ba902b7
/// ```
///
/// Keys in this order, each only when it applies:
///
/// * `time`: as the [`Timer`](crate::format::Timer) prints it
///   ([`with_timer`](Logfmt::with_timer), [`without_time`](Logfmt::without_time)).
/// * `level`: `trace`, `debug`, `info`, `warn` or `error`
///   ([`with_level`](Logfmt::with_level)).
/// * `target` ([`with_target`](Logfmt::with_target)); `nowait` on
///   nowait's own notices, absent on plain text records
///   ([`kind::TEXT`](crate::record::kind::TEXT)).
/// * `msg`: the message, if the event has one.
/// * The fixed fields ([`field`](Logfmt::field),
///   [`fields_from_env`](Logfmt::fields_from_env)), then the event's
///   fields in order, then its spans' fields, innermost span first.
/// * `file` and `line`, from the call site ([`with_file`](Logfmt::with_file),
///   [`with_line_number`](Logfmt::with_line_number)).
/// * `thread` (the name, or the id of an unnamed thread) and `thread_id`
///   ([`with_thread_names`](Logfmt::with_thread_names),
///   [`with_thread_ids`](Logfmt::with_thread_ids)).
/// * `trace_id` and `span_id`, in lowercase hex, on events logged in an
///   OpenTelemetry span whose front end recorded it
///   ([`with_trace_ids`](Logfmt::with_trace_ids), default `true`).
/// * `backtrace=true` on a record a sink's `BacktraceBuffer` released (no
///   prose line marks the block).
///
/// Notices from nowait itself are lines of target `nowait`; a notice about
/// suppressed calls adds `suppressed`, `site`, `reason` and `rule`.
///
/// # Keys
///
/// Every key appears once on a line. The line's own keys above are taken
/// first; then the fixed fields, the event's fields and the spans' fields
/// claim theirs in that order, and one whose key is taken is written as
/// `fields.<key>` (a span's field as `<span name>.<key>`), or, if that is
/// taken too, with `_2`, `_3`, … after the first part of that key
/// (`fields_2.level`). A key holds no space, `=`, `"`, control, line
/// separator or bidirectional formatting character and no byte that is
/// not UTF-8: each is written as `_` (an empty key as `_`), before the
/// keys are compared.
///
/// # Values
///
/// A value that is not empty and consists of printable ASCII other than
/// space, `=`, `"` and `\` is written as it is; any other value is quoted
/// and escaped as a JSON string is ([RFC 8259], with DEL, the C1
/// controls, U+2028/U+2029 and the bidirectional formatting characters as
/// `\u` escapes too, and bytes that are not UTF-8 as U+FFFD), which is
/// what `go-logfmt`'s decoder unquotes. Integers, floats (`NaN`, `inf`)
/// and booleans are bare. No value can end the line, start a new pair or
/// reach a terminal raw.
///
/// [RFC 8259]: https://www.rfc-editor.org/rfc/rfc8259#section-7
///
/// # Examples
///
/// ```
/// use nowait_core::{Builder, Level, Sink};
/// use nowait_core::format::Logfmt;
///
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("app.log");
/// let logfmt = Logfmt::new().without_time().field("service", "api");
/// let (logger, guard) = Builder::new().sink(Sink::file(&path).format(logfmt)).build()?;
/// logger.log(Level::Warn, "disk \"/var\" at 91%")?;
/// drop(guard);
/// assert_eq!(
///     std::fs::read_to_string(&path)?,
///     "level=warn msg=\"disk \\\"/var\\\" at 91%\" service=api\n"
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct Logfmt {
    options: Options,
    fixed: FixedFields,
}

impl Default for Logfmt {
    fn default() -> Logfmt {
        Logfmt {
            options: Options::default().with_trace_ids(true),
            fixed: FixedFields::default(),
        }
    }
}

impl Logfmt {
    /// The logfmt format: time, level, target, message and fields, trace
    /// ids where there are some.
    ///
    /// # Examples
    ///
    /// ```
    /// let _logfmt = nowait_core::format::Logfmt::new();
    /// ```
    pub fn new() -> Logfmt {
        Logfmt::default()
    }

    /// Adds a field with this key and value to every line (setting a key
    /// again replaces its value); see [`Logfmt`]'s *Keys* for a key that
    /// is taken.
    ///
    /// # Examples
    ///
    /// ```
    /// let _logfmt = nowait_core::format::Logfmt::new().field("service", "api");
    /// ```
    pub fn field(mut self, key: impl AsRef<str>, value: impl AsRef<str>) -> Logfmt {
        self.fixed.set(key.as_ref(), value.as_ref());
        self
    }

    /// Adds fixed fields from environment variables, read now, as
    /// [`Json::fields_from_env`](crate::format::Json::fields_from_env)
    /// does: only the variables named, each value untrusted (bounded to
    /// 1024 bytes, escaped when written).
    ///
    /// # Examples
    ///
    /// ```
    /// let _logfmt = nowait_core::format::Logfmt::new().fields_from_env([("host", "HOSTNAME")]);
    /// ```
    pub fn fields_from_env<K, V>(mut self, pairs: impl IntoIterator<Item = (K, V)>) -> Logfmt
    where
        K: AsRef<str>,
        V: AsRef<str>,
    {
        self.fixed
            .set_from_env(pairs, |name| std::env::var_os(name));
        self
    }
}

super::options::shared_options!(Logfmt);

impl MakeFormat for Logfmt {
    fn make_format(&self, _sink: &SinkInfo) -> Box<dyn Format> {
        Box::new(LogfmtFormat {
            logfmt: self.clone(),
            clock: Clock::new(self.options.timer),
            sites: SiteCache::default(),
            threads: ThreadCache::default(),
            scratch: Default::default(),
            raw: Vec::new(),
            keys: TopKeys::default(),
            name: String::new(),
            prefix: String::new(),
            fixed: Vec::new(),
            fields: Vec::new(),
            kept: false,
        })
    }

    fn needs_thread(&self) -> bool {
        self.options.needs_thread()
    }

    fn needs_location(&self) -> bool {
        self.options.needs_location()
    }
}

/// The per-sink state of [`Logfmt`].
#[derive(Debug)]
struct LogfmtFormat {
    logfmt: Logfmt,
    clock: Clock,
    sites: SiteCache,
    threads: ThreadCache,
    scratch: (String, String),
    raw: Vec<u8>,
    keys: TopKeys,
    /// A key and a prefix as written (see [`key_text`]).
    name: String,
    prefix: String,
    /// The fixed fields and the event's and spans' fields, rendered
    /// before the line's head.
    fixed: Vec<u8>,
    fields: Vec<u8>,
    kept: bool,
}

/// The keys of a notice about suppressed calls.
const SUPPRESSED: [&str; 4] = ["suppressed", "site", "reason", "rule"];

impl LogfmtFormat {
    /// Takes the line's own keys (`trace`: whether it has trace ids), and
    /// `extra`; renders the fixed fields under the keys they claim.
    fn take_own_keys(&mut self, trace: bool, extra: &[&str]) {
        let o = self.logfmt.options;
        let keys = &mut self.keys;
        keys.clear(false, &[]);
        for (on, key) in [
            (self.clock.on(), "time"),
            (o.level, "level"),
            (o.target, "target"),
            (true, "msg"),
            (o.file, "file"),
            (o.line, "line"),
            (o.thread_names, "thread"),
            (o.thread_ids, "thread_id"),
            (trace, "trace_id"),
            (trace, "span_id"),
            (self.kept, "backtrace"),
        ] {
            if on {
                keys.take(key);
            }
        }
        extra.iter().for_each(|k| keys.take(k));
        self.fixed.clear();
        for (name, value) in self.logfmt.fixed.iter() {
            key_text(name, &mut self.name);
            let key = self.keys.claim(&self.name, "fields.");
            self.fixed.push(b' ');
            self.fixed.extend_from_slice(key);
            self.fixed.push(b'=');
            value_text(value.as_bytes(), &mut self.fixed);
        }
    }

    /// The time, level, target and message, then the fixed fields.
    fn head(
        &mut self,
        nanos: u64,
        level: Level,
        target: Option<&[u8]>,
        message: Option<&[u8]>,
        out: &mut Vec<u8>,
    ) {
        let start = out.len();
        let o = self.logfmt.options;
        if self.clock.on() {
            out.extend_from_slice(b"time=");
            self.raw.clear();
            self.clock.write(nanos, &mut self.raw);
            value_text(&self.raw, out);
        }
        if o.level {
            space(out, start);
            out.extend_from_slice(b"level=");
            out.extend_from_slice(level_text(level).as_bytes());
        }
        if let Some(target) = target.filter(|_| o.target) {
            space(out, start);
            out.extend_from_slice(b"target=");
            value_text(target, out);
        }
        if let Some(message) = message {
            space(out, start);
            out.extend_from_slice(b"msg=");
            value_text(message, out);
        }
        let fixed = if out.len() == start {
            self.fixed.get(1..).unwrap_or_default()
        } else {
            &self.fixed[..]
        };
        out.extend_from_slice(fixed);
    }

    fn line(
        &mut self,
        nanos: u64,
        level: Level,
        target: Option<&[u8]>,
        message: &[u8],
        out: &mut Vec<u8>,
    ) {
        self.take_own_keys(false, &[]);
        self.head(nanos, level, target, Some(message), out);
        self.end(out);
    }

    /// `backtrace=true` on a released record, and the newline.
    fn end(&self, out: &mut Vec<u8>) {
        if self.kept {
            out.extend_from_slice(b" backtrace=true");
        }
        out.push(b'\n');
    }

    fn event(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
        let Some(event) = Event::parse(record.payload()) else {
            let now = system_nanos(std::time::SystemTime::now());
            self.line(
                now,
                record.level(),
                Some(b"nowait"),
                b"<malformed event>",
                out,
            );
            return;
        };
        let site = event.site().and_then(|k| self.sites.get(k.get()));
        let ev = Resolved { site, event };
        let o = self.logfmt.options;
        let trace = event.trace_context().filter(|_| o.trace_ids);
        self.take_own_keys(trace.is_some(), &[]);

        let mut at = Location::default();
        let LogfmtFormat {
            sites,
            keys,
            scratch,
            raw,
            name: key_buf,
            prefix,
            fields,
            ..
        } = self;
        fields.clear();
        each_field(&ev, sites, &mut at, true, |name, value, site, origin| {
            key_text(name, key_buf);
            key_text(origin.prefix(), prefix);
            fields.push(b' ');
            fields.extend_from_slice(keys.claim(key_buf, prefix));
            fields.push(b'=');
            write_value(value, site, scratch, raw, fields);
        });
        let message = message_of(&ev).map(|value| {
            self.raw.clear();
            message_with(
                value,
                ev.site.as_ref(),
                &mut self.raw,
                &mut self.scratch,
                copy_into,
            );
            std::mem::take(&mut self.raw)
        });
        let start = out.len();
        self.head(
            event.time_nanos(),
            record.level(),
            Some(ev.target()),
            message.as_deref(),
            out,
        );
        if let Some(raw) = message {
            self.raw = raw;
        }
        let fields = if out.len() == start {
            self.fields.get(1..).unwrap_or_default()
        } else {
            &self.fields[..]
        };
        out.extend_from_slice(fields);
        let at = at.of(ev.site.as_deref());
        if let Some(file) = at.file.filter(|_| o.file) {
            space(out, start);
            out.extend_from_slice(b"file=");
            value_text(file, out);
        }
        if let Some(line) = at.line.filter(|_| o.line) {
            space(out, start);
            out.extend_from_slice(b"line=");
            out.extend_from_slice(itoa::Buffer::new().format(line).as_bytes());
        }
        if o.needs_thread() {
            self.thread(event.thread(), start, out);
        }
        if let Some(cx) = trace {
            space(out, start);
            out.extend_from_slice(b"trace_id=");
            cx.write_trace_id_hex(out);
            out.extend_from_slice(b" span_id=");
            cx.write_span_id_hex(out);
        }
        self.end(out);
    }

    #[cold]
    fn thread(&mut self, thread: Option<u32>, start: usize, out: &mut Vec<u8>) {
        let o = self.logfmt.options;
        let Some(info) = thread.and_then(|n| self.threads.get(n)) else {
            return;
        };
        let name = info
            .name
            .as_deref()
            .or(if o.thread_ids { None } else { Some(&*info.id) });
        if let Some(name) = name.filter(|_| o.thread_names) {
            space(out, start);
            out.extend_from_slice(b"thread=");
            value_text(name.as_bytes(), out);
        }
        if o.thread_ids {
            space(out, start);
            out.extend_from_slice(b"thread_id=");
            value_text(info.id.as_bytes(), out);
        }
    }
}

/// A space before the next pair, unless the line is still empty.
fn space(out: &mut Vec<u8>, start: usize) {
    if out.len() > start {
        out.push(b' ');
    }
}

fn level_text(level: Level) -> &'static str {
    match level {
        Level::Trace => "trace",
        Level::Debug => "debug",
        Level::Info => "info",
        Level::Warn => "warn",
        Level::Error => "error",
    }
}

/// `name` as a logfmt key (see [`Logfmt`]'s *Keys*): every space, `=`,
/// `"`, control, line or paragraph separator, bidirectional formatting
/// character and U+FFFD as `_`; an empty name as `_`.
fn key_text(name: &str, out: &mut String) {
    out.clear();
    for c in name.chars() {
        let bad = c <= ' '
            || matches!(
                c,
                '=' | '"' | '\u{7f}'..='\u{9f}' | '\u{2028}' | '\u{2029}' | '\u{fffd}'
            )
            || is_bidi_control(c);
        out.push(if bad { '_' } else { c });
    }
    if out.is_empty() {
        out.push('_');
    }
}

/// A value as text: bare if it is plain (see [`Logfmt`]'s *Values*), else
/// a quoted JSON string.
fn value_text(bytes: &[u8], out: &mut Vec<u8>) {
    let bare = !bytes.is_empty()
        && plain_len(bytes, true) == bytes.len()
        && !bytes.iter().any(|&b| b == b' ' || b == b'=');
    if bare {
        out.extend_from_slice(bytes);
    } else {
        json_str(bytes, out);
    }
}

/// A field's value: numbers and booleans bare (as `Debug` prints them),
/// text through [`value_text`].
fn write_value(
    value: Value<'_>,
    site: Option<&Arc<Callsite>>,
    scratch: &mut (String, String),
    raw: &mut Vec<u8>,
    out: &mut Vec<u8>,
) {
    match value {
        Value::U64(_) | Value::I64(_) | Value::F64(_) | Value::Bool(_) => scalar_text(value, out),
        Value::Str(s) | Value::Rendered(s) => value_text(s, out),
        Value::Char(c) => value_text(c.encode_utf8(&mut [0u8; 4]).as_bytes(), out),
        Value::Args(_) => {
            raw.clear();
            message_with(value, site, raw, scratch, copy_into);
            value_text(raw, out);
        }
    }
}

impl Format for LogfmtFormat {
    fn format(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
        match record.kind() {
            kind::EVENT => self.event(record, out),
            k => {
                let now = system_nanos(std::time::SystemTime::now());
                if k == kind::TEXT {
                    self.line(now, record.level(), None, record.payload(), out);
                } else {
                    let msg = format!("<kind {k} record>");
                    self.line(now, record.level(), Some(b"nowait"), msg.as_bytes(), out);
                }
            }
        }
    }

    fn notice(&mut self, notice: &Notice<'_>, out: &mut Vec<u8>) {
        let time = system_nanos(notice.time());
        let suppressed = notice.suppressed();
        self.take_own_keys(
            false,
            if suppressed.is_some() {
                &SUPPRESSED
            } else {
                &[]
            },
        );
        let start = out.len();
        self.head(
            time,
            notice.level(),
            Some(b"nowait"),
            Some(notice.message().as_bytes()),
            out,
        );
        if let Some(s) = suppressed {
            space(out, start);
            out.extend_from_slice(b"suppressed=");
            out.extend_from_slice(itoa::Buffer::new().format(s.count()).as_bytes());
            out.extend_from_slice(b" site=");
            value_text(s.site().as_bytes(), out);
            out.extend_from_slice(b" reason=");
            out.extend_from_slice(s.reason().as_str().as_bytes());
            out.extend_from_slice(b" rule=");
            value_text(s.rule().as_bytes(), out);
        }
        self.end(out);
    }

    fn format_kept(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
        self.kept = true;
        self.format(record, out);
        self.kept = false;
    }

    fn kept_notice(&mut self, _notice: &Notice<'_>, _out: &mut Vec<u8>) {}
}
