//! Compact text, close to `tracing-subscriber`'s default format.

use std::io::Write as _;

use super::{is_message, message_with, scalar_text, system_nanos, Resolved, TimeCache};
use crate::event::{Event, Item, SiteCache, Value};
use crate::record::{escape_into, kind, Format, MakeFormat, Notice, Record, SinkInfo};
use crate::Level;

/// Text lines in the layout of `tracing-subscriber`'s default format:
///
/// ```text
/// 2026-11-22T12:00:01.123456Z  INFO conn{peer="10.0.0.7"}:request{id=42}: app::http: GET / status=200 micros=41
/// ```
///
/// An RFC 3339 UTC timestamp with microseconds, the level padded to five
/// columns, the enclosing spans with their fields, the target, the message
/// and the fields (strings quoted, as `Debug` shows them). Plain text records
/// ([`kind::TEXT`]) are written as their line; notices from nowait itself
/// as events of target `nowait`.
///
/// Control characters and the Unicode line and paragraph separators
/// (U+2028, U+2029) in messages, values, targets and names are escaped (see
/// [`escape_into`]); strings are quoted and escaped as `Debug` does. No
/// value can start a new line, not even in a log viewer that breaks lines
/// at U+2028, or reach the terminal as an escape sequence.
///
/// ANSI colours are used only on sinks that are terminals, and only if the
/// `NO_COLOR` environment variable is unset or empty; [`Text::ansi`]
/// overrides that.
///
/// # Examples
///
/// ```
/// use nowait_core::{Builder, Sink, Text};
///
/// # let dir = tempfile::tempdir().unwrap();
/// let (logger, guard) = Builder::new()
///     .sink(Sink::file(dir.path().join("app.log")).format(Text::new().ansi(false)))
///     .build()?;
/// # drop((logger, guard));
/// # Ok::<(), nowait_core::BuildError>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Text {
    ansi: Option<bool>,
    target: Option<bool>,
    time: Option<bool>,
}

impl Text {
    /// The default text format: colours decided per sink, targets shown.
    ///
    /// # Examples
    ///
    /// ```
    /// let _text = nowait_core::Text::new();
    /// ```
    pub fn new() -> Text {
        Text::default()
    }

    /// Forces ANSI colours on or off for every sink (by default: on for
    /// terminals when `NO_COLOR` is unset or empty).
    ///
    /// # Examples
    ///
    /// ```
    /// let _plain = nowait_core::Text::new().ansi(false);
    /// ```
    pub fn ansi(mut self, on: bool) -> Text {
        self.ansi = Some(on);
        self
    }

    /// Whether to print the timestamp (default `true`).
    ///
    /// # Examples
    ///
    /// ```
    /// let _no_time = nowait_core::Text::new().with_time(false);
    /// ```
    pub fn with_time(mut self, on: bool) -> Text {
        self.time = Some(on);
        self
    }

    /// Whether to print the target (default `true`).
    ///
    /// # Examples
    ///
    /// ```
    /// let _no_target = nowait_core::Text::new().with_target(false);
    /// ```
    pub fn with_target(mut self, on: bool) -> Text {
        self.target = Some(on);
        self
    }
}

impl MakeFormat for Text {
    fn make_format(&self, sink: &SinkInfo) -> Box<dyn Format> {
        let ansi = self
            .ansi
            .unwrap_or_else(|| sink.is_terminal() && !no_color());
        Box::new(TextFormat {
            ansi,
            target: self.target.unwrap_or(true),
            time: self.time.unwrap_or(true),
            ..TextFormat::default()
        })
    }
}

/// Whether `NO_COLOR` asks for no colours (<https://no-color.org>: set and
/// not empty).
fn no_color() -> bool {
    std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty())
}

/// The per-sink state of [`Text`].
#[derive(Debug, Default)]
pub(crate) struct TextFormat {
    pub(crate) ansi: bool,
    pub(crate) target: bool,
    pub(crate) time: bool,
    sites: SiteCache,
    clock: TimeCache,
    scratch: (String, String),
    /// The fields after the message, rendered during the single pass.
    rest: Vec<u8>,
}

impl TextFormat {
    fn paint(&self, out: &mut Vec<u8>, code: &[u8]) {
        if self.ansi {
            out.extend_from_slice(b"\x1b[");
            out.extend_from_slice(code);
            out.push(b'm');
        }
    }

    fn reset(&self, out: &mut Vec<u8>) {
        if self.ansi {
            out.extend_from_slice(b"\x1b[0m");
        }
    }

    fn head(&mut self, nanos: u64, level: Level, out: &mut Vec<u8>) {
        if self.time {
            self.paint(out, b"2");
            self.clock.write(nanos, out);
            self.reset(out);
            out.push(b' ');
        }
        self.paint(out, level_colour(level));
        out.extend_from_slice(match level {
            Level::Trace => b"TRACE",
            Level::Debug => b"DEBUG",
            Level::Info => b" INFO",
            Level::Warn => b" WARN",
            Level::Error => b"ERROR",
        });
        self.reset(out);
        out.push(b' ');
    }

    fn target(&self, target: &[u8], out: &mut Vec<u8>) {
        if self.target {
            self.paint(out, b"2");
            escape_into(target, out);
            out.push(b':');
            self.reset(out);
            out.push(b' ');
        }
    }

    fn field(&self, name: &str, value: Value<'_>, out: &mut Vec<u8>) {
        self.paint(out, b"3");
        escape_into(name.as_bytes(), out);
        self.reset(out);
        self.paint(out, b"2");
        out.push(b'=');
        self.reset(out);
        match value {
            Value::Str(s) => quoted(s, out),
            other => scalar_text(other, out),
        }
    }

    fn event(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
        let Some(event) = Event::parse(record.payload()) else {
            out.extend_from_slice(b"<malformed event>\n");
            return;
        };
        let site = event.site().and_then(|k| self.sites.get(k.get()));
        let ev = Resolved { site, event };
        self.head(event.time_nanos(), record.level(), out);

        // One pass over the items: spans (they come first) go straight to
        // the line, the message is kept aside, the other fields go to
        // `rest`, each with a leading space.
        let mut rest = std::mem::take(&mut self.rest);
        rest.clear();
        let mut any_span = false;
        let mut message = None;
        for item in event.items() {
            match item {
                Item::Span { site, fields } => {
                    let span_site = self.sites.get(site.get());
                    any_span = true;
                    self.paint(out, b"1");
                    escape_into(span_site.as_ref().map_or("?", |s| s.name()).as_bytes(), out);
                    self.reset(out);
                    let mut first = true;
                    for f in fields.items() {
                        let Item::Field { name, value } = f else {
                            continue;
                        };
                        out.extend_from_slice(if first { b"{" } else { b" " });
                        first = false;
                        let name = crate::event::decode_field_name(name, span_site.as_ref());
                        self.field(name, value, out);
                    }
                    if !first {
                        out.push(b'}');
                    }
                    out.push(b':');
                }
                Item::Field { name, value } => {
                    let name = ev.name_of(name);
                    if message.is_none() && is_message(name) {
                        message = Some(value);
                    } else {
                        rest.push(b' ');
                        self.field(name, value, &mut rest);
                    }
                }
                Item::Malformed => rest.extend_from_slice(b" <malformed>"),
            }
        }
        if any_span {
            out.push(b' ');
        }
        self.target(ev.target(), out);
        match message {
            Some(value) => {
                message_with(value, ev.site.as_ref(), out, &mut self.scratch, escape_into);
                out.extend_from_slice(&rest);
            }
            None => out.extend_from_slice(rest.strip_prefix(b" ").unwrap_or(&rest)),
        }
        self.rest = rest;
        out.push(b'\n');
    }
}

/// A string value quoted and escaped exactly as `Debug` does (what
/// `tracing-subscriber` prints), with a fast path for plain ASCII.
fn quoted(s: &[u8], out: &mut Vec<u8>) {
    if s.iter()
        .all(|&b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
    {
        out.push(b'"');
        out.extend_from_slice(s);
        out.push(b'"');
    } else {
        let _ = write!(out, "{:?}", String::from_utf8_lossy(s));
    }
}

fn level_colour(level: Level) -> &'static [u8] {
    match level {
        Level::Trace => b"35",
        Level::Debug => b"34",
        Level::Info => b"32",
        Level::Warn => b"33",
        Level::Error => b"31",
    }
}

impl Format for TextFormat {
    fn format(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
        match record.kind() {
            kind::TEXT => {
                escape_into(record.payload(), out);
                out.push(b'\n');
            }
            kind::EVENT => self.event(record, out),
            other => {
                out.extend_from_slice(b"<kind ");
                out.extend_from_slice(itoa::Buffer::new().format(other).as_bytes());
                out.extend_from_slice(b" record>\n");
            }
        }
    }

    fn notice(&mut self, notice: &Notice<'_>, out: &mut Vec<u8>) {
        self.head(system_nanos(notice.time()), notice.level(), out);
        self.target(b"nowait", out);
        escape_into(notice.message().as_bytes(), out);
        out.push(b'\n');
    }
}
