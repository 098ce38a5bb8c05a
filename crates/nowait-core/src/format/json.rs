//! JSON lines.

use std::io::Write as _;

use super::{copy_into, is_message, message_with, system_nanos, Resolved, TimeCache};
use crate::event::{decode_field_name, Event, Item, SiteCache, Value};
use crate::record::{kind, Format, MakeFormat, Notice, Record, SinkInfo};
use crate::Level;

/// One JSON object per line, for log shippers (Vector, Fluent Bit, the
/// OpenTelemetry Collector's filelog receiver parse it as is).
///
/// # Schema (stable)
///
/// ```json
/// {"timestamp":"2026-11-22T12:00:01.123456Z","level":"INFO","target":"app::http",
///  "message":"GET /","fields":{"status":200,"path":"/"},
///  "spans":[{"name":"request","id":42}]}
/// ```
///
/// (one line in the output). Every line has all six keys, in this order:
///
/// * `timestamp`: RFC 3339, UTC, microseconds.
/// * `level`: `TRACE`, `DEBUG`, `INFO`, `WARN` or `ERROR`.
/// * `target`: the event's target; `nowait` for nowait's own notices
///   (drops, sink errors); `""` for plain text records.
/// * `message`: the message (`""` if the event has none).
/// * `fields`: the event's other fields. Integers and finite floats are
///   numbers, booleans are booleans, non-finite floats and everything else
///   are strings.
/// * `spans`: the enclosing spans, outermost first, each an object with
///   `name` and the span's fields. A span field set again with
///   `Span::record` appears twice, in order; JSON parsers keep the last.
///
/// Field names are written as given: an event field named `message` other
/// than the first goes to `fields`, and nothing stops a field from being
/// named like a top-level key (it stays inside `fields`).
///
/// Strings are escaped per RFC 8259; in addition DEL, the C1 controls and
/// U+2028/U+2029 are written as `\u` escapes and invalid UTF-8 as U+FFFD,
/// so a line is always valid JSON and safe to print on a terminal.
///
/// # Examples
///
/// ```
/// use nowait_core::{Builder, Json, Level, Sink};
///
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("app.json");
/// let (logger, guard) = Builder::new().sink(Sink::file(&path).format(Json::new())).build()?;
/// logger.log(Level::Info, "plain line")?;
/// drop(guard);
/// let line = std::fs::read_to_string(&path)?;
/// assert!(line.ends_with(
///     "\"level\":\"INFO\",\"target\":\"\",\"message\":\"plain line\",\"fields\":{},\"spans\":[]}\n"
/// ));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Json {
    _private: (),
}

impl Json {
    /// The JSON format.
    ///
    /// # Examples
    ///
    /// ```
    /// let _json = nowait_core::Json::new();
    /// ```
    pub fn new() -> Json {
        Json::default()
    }
}

impl MakeFormat for Json {
    fn make_format(&self, _sink: &SinkInfo) -> Box<dyn Format> {
        Box::<JsonFormat>::default()
    }
}

#[derive(Debug, Default)]
struct JsonFormat {
    sites: SiteCache,
    clock: TimeCache,
    scratch: (String, String),
    msg: Vec<u8>,
    /// Rendered during the single pass over an event's items.
    fields: Vec<u8>,
    spans: Vec<u8>,
}

impl JsonFormat {
    fn head(&mut self, nanos: u64, level: Level, target: &[u8], out: &mut Vec<u8>) {
        out.extend_from_slice(b"{\"timestamp\":\"");
        self.clock.write(nanos, out);
        out.extend_from_slice(b"\",\"level\":\"");
        out.extend_from_slice(level.as_str().as_bytes());
        out.extend_from_slice(b"\",\"target\":");
        json_str(target, out);
        out.extend_from_slice(b",\"message\":");
    }

    fn event(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
        let Some(event) = Event::parse(record.payload()) else {
            let now = system_nanos(std::time::SystemTime::now());
            self.head(now, record.level(), b"nowait", out);
            out.extend_from_slice(b"\"<malformed event>\",\"fields\":{},\"spans\":[]}\n");
            return;
        };
        let site = event.site().and_then(|k| self.sites.get(k.get()));
        let ev = Resolved { site, event };
        self.head(event.time_nanos(), record.level(), ev.target(), out);

        // One pass: spans and fields are rendered into their own buffers,
        // the message is kept aside, then the line is assembled in schema
        // order.
        let (mut fields, mut spans) = (
            std::mem::take(&mut self.fields),
            std::mem::take(&mut self.spans),
        );
        fields.clear();
        spans.clear();
        let mut message = None;
        for item in event.items() {
            match item {
                Item::Field { name, value } => {
                    let name = ev.name_of(name);
                    if message.is_none() && is_message(name) {
                        message = Some(value);
                        continue;
                    }
                    if !fields.is_empty() {
                        fields.push(b',');
                    }
                    json_field(
                        name,
                        value,
                        ev.site.as_ref(),
                        &mut self.scratch,
                        &mut fields,
                    );
                }
                Item::Malformed => {
                    if !fields.is_empty() {
                        fields.push(b',');
                    }
                    fields.extend_from_slice(b"\"nowait.malformed\":true");
                }
                Item::Span {
                    site,
                    fields: span_fields,
                } => {
                    let span_site = self.sites.get(site.get());
                    if !spans.is_empty() {
                        spans.push(b',');
                    }
                    spans.extend_from_slice(b"{\"name\":");
                    json_str(
                        span_site.as_ref().map_or("?", |s| s.name()).as_bytes(),
                        &mut spans,
                    );
                    for f in span_fields.items() {
                        if let Item::Field { name, value } = f {
                            spans.push(b',');
                            let name = decode_field_name(name, span_site.as_ref());
                            json_field(
                                name,
                                value,
                                span_site.as_ref(),
                                &mut self.scratch,
                                &mut spans,
                            );
                        }
                    }
                    spans.push(b'}');
                }
            }
        }
        self.msg.clear();
        if let Some(value) = message {
            // Render unescaped text, then JSON-escape it.
            let mut plain = std::mem::take(&mut self.msg);
            message_with(
                value,
                ev.site.as_ref(),
                &mut plain,
                &mut self.scratch,
                copy_into,
            );
            self.msg = plain;
        }
        json_str(&self.msg, out);
        out.extend_from_slice(b",\"fields\":{");
        out.extend_from_slice(&fields);
        out.extend_from_slice(b"},\"spans\":[");
        out.extend_from_slice(&spans);
        (self.fields, self.spans) = (fields, spans);
        out.extend_from_slice(b"]}\n");
    }
}

fn json_field(
    name: &str,
    value: Value<'_>,
    site: Option<&std::sync::Arc<crate::event::Callsite>>,
    scratch: &mut (String, String),
    out: &mut Vec<u8>,
) {
    json_str(name.as_bytes(), out);
    out.push(b':');
    match value {
        Value::U64(n) => out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes()),
        Value::I64(n) => out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes()),
        Value::F64(x) if x.is_finite() => {
            let _ = write!(out, "{x:?}");
        }
        Value::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
        Value::Str(s) | Value::Rendered(s) => json_str(s, out),
        Value::Char(c) => json_str(c.encode_utf8(&mut [0u8; 4]).as_bytes(), out),
        other => {
            let mut raw = Vec::new();
            message_with(other, site, &mut raw, scratch, copy_into);
            json_str(&raw, out);
        }
    }
}

/// Appends `bytes` as a JSON string (RFC 8259), with DEL, C1 controls and
/// U+2028/U+2029 escaped too and invalid UTF-8 replaced by U+FFFD.
pub(crate) fn json_str(bytes: &[u8], out: &mut Vec<u8>) {
    out.push(b'"');
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '"' => out.extend_from_slice(b"\\\""),
                '\\' => out.extend_from_slice(b"\\\\"),
                '\n' => out.extend_from_slice(b"\\n"),
                '\r' => out.extend_from_slice(b"\\r"),
                '\t' => out.extend_from_slice(b"\\t"),
                '\u{8}' => out.extend_from_slice(b"\\b"),
                '\u{c}' => out.extend_from_slice(b"\\f"),
                '\0'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{2028}' | '\u{2029}' => {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                }
                c => {
                    let mut b = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
                }
            }
        }
        if !chunk.invalid().is_empty() {
            out.extend_from_slice("\u{fffd}".as_bytes());
        }
    }
    out.push(b'"');
}

impl Format for JsonFormat {
    fn format(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
        match record.kind() {
            kind::EVENT => self.event(record, out),
            k => {
                let now = system_nanos(std::time::SystemTime::now());
                self.head(now, record.level(), b"", out);
                if k == kind::TEXT {
                    json_str(record.payload(), out);
                } else {
                    json_str(format!("<kind {k} record>").as_bytes(), out);
                }
                out.extend_from_slice(b",\"fields\":{},\"spans\":[]}\n");
            }
        }
    }

    fn notice(&mut self, notice: &Notice<'_>, out: &mut Vec<u8>) {
        self.head(system_nanos(notice.time()), notice.level(), b"nowait", out);
        json_str(notice.message().as_bytes(), out);
        out.extend_from_slice(b",\"fields\":{},\"spans\":[]}\n");
    }
}
