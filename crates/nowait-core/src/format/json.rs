//! JSON lines.

use super::{
    copy_into, is_message, message_with, system_nanos, Clock, KnownSites, Location, Options, Piece,
    Resolved, Timer,
};
use crate::event::{
    decode_field_name, Callsite, Event, FieldName, Item, SiteCache, ThreadCache, Value,
};
use crate::record::{
    is_bidi_control, kind, plain_len, Format, MakeFormat, Notice, Record, SinkInfo,
};
use crate::Level;

/// One JSON object per line, for log shippers (Vector, Fluent Bit, the
/// OpenTelemetry Collector's filelog receiver parse it as is).
///
/// Two layouts ([`JsonSchema`]): by default the bytes that
/// `tracing_subscriber::fmt().json()` prints for the same options and
/// events, so that parsers written for it keep working; or nowait's own
/// schema ([`Json::nowait_schema`]), in which every line has all keys.
///
/// # Default schema (`tracing-subscriber`'s)
///
/// ```json
/// {"timestamp":"2026-11-22T12:00:01.123456Z","level":"INFO",
///  "fields":{"message":"GET /","status":200},"target":"app::http",
///  "span":{"id":42,"name":"request"},
///  "spans":[{"peer":"10.0.0.7","name":"conn"},{"id":42,"name":"request"}]}
/// ```
///
/// (one line in the output), keys in this order, each only when it applies:
///
/// * `timestamp`: as the [`Timer`] prints it; absent with
///   [`without_time`](Json::without_time).
/// * `level`: `TRACE`, `DEBUG`, `INFO`, `WARN` or `ERROR`
///   ([`with_level`](Json::with_level)).
/// * `fields`: the event's fields in order, the message as field `message`
///   (absent if the event has none). With
///   [`flatten_event`](Json::flatten_event) they are keys of the line
///   itself instead.
/// * `target` ([`with_target`](Json::with_target)); `filename` and
///   `line_number`, from the call site
///   ([`with_file`](Json::with_file),
///   [`with_line_number`](Json::with_line_number)).
/// * `span`: the innermost span ([`with_current_span`](Json::with_current_span)),
///   and `spans`: all enclosing spans, outermost first
///   ([`with_span_list`](Json::with_span_list)); both absent outside spans.
///   A span is an object of its fields in key order, a field recorded again
///   with `Span::record` keeping its last value, followed by `name`.
/// * `threadName` and `threadId` (`ThreadId(7)`)
///   ([`with_thread_names`](Json::with_thread_names),
///   [`with_thread_ids`](Json::with_thread_ids)).
///
/// Integers are numbers, floats numbers (as `serde_json` writes them) or
/// `null` if not finite, booleans booleans, everything else strings.
/// nowait's own notices are lines of target `nowait` with the text in
/// `fields.message`; plain text records ([`kind::TEXT`]) have target `""`.
///
/// # nowait schema
///
/// ```json
/// {"timestamp":"2026-11-22T12:00:01.123456Z","level":"INFO","target":"app::http",
///  "message":"GET /","fields":{"status":200,"path":"/"},
///  "spans":[{"name":"request","id":42}]}
/// ```
///
/// Every line has all six keys, in this order, whatever the options (which
/// apply to the default schema only):
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
/// # Records a backtrace released (both schemas)
///
/// A record that a sink's [`Backtrace`](crate::Backtrace) kept and a
/// trigger released is its usual line with one more key, last:
/// `"backtrace":true`. No prose line marks the block, so every line stays
/// one JSON object of the schema.
///
/// Field names are written as given: an event field named `message` other
/// than the first goes to `fields`, and nothing stops a field from being
/// named like a top-level key (it stays inside `fields`).
///
/// # Escaping (both schemas)
///
/// Strings are escaped per RFC 8259; in addition DEL, the C1 controls,
/// U+2028/U+2029 and the bidirectional formatting characters
/// (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C) are written as
/// `\u` escapes and invalid UTF-8 as U+FFFD, so a line is always valid
/// JSON, safe to print on a terminal, and reads in the order of its
/// bytes. (Where `serde_json` leaves those characters as they are, this is
/// the one difference from `tracing-subscriber`'s bytes.)
///
/// # Examples
///
/// ```
/// use nowait_core::{Builder, Json, Level, Sink};
///
/// # let dir = tempfile::tempdir().unwrap();
/// # let path = dir.path().join("app.json");
/// let (logger, guard) = Builder::new()
///     .sink(Sink::file(&path).format(Json::new().without_time()))
///     .build()?;
/// logger.log(Level::Info, "plain line")?;
/// drop(guard);
/// let line = std::fs::read_to_string(&path)?;
/// assert_eq!(line, "{\"level\":\"INFO\",\"fields\":{\"message\":\"plain line\"},\"target\":\"\"}\n");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Json {
    schema: JsonSchema,
    options: Options,
    flatten: bool,
    current_span: bool,
    span_list: bool,
}

/// The layout a [`Json`] format writes.
///
/// # Examples
///
/// ```
/// use nowait_core::{Json, JsonSchema};
///
/// let _ours = Json::new().with_schema(JsonSchema::Nowait);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum JsonSchema {
    /// `tracing_subscriber::fmt().json()`'s layout (the default).
    #[default]
    TracingSubscriber,
    /// nowait's own: all six keys on every line, the message apart from
    /// the fields (see [`Json`]).
    Nowait,
}

impl Default for Json {
    fn default() -> Json {
        Json {
            schema: JsonSchema::TracingSubscriber,
            options: Options::default(),
            flatten: false,
            current_span: true,
            span_list: true,
        }
    }
}

impl Json {
    /// The JSON format in `tracing-subscriber`'s layout.
    ///
    /// # Examples
    ///
    /// ```
    /// let _json = nowait_core::Json::new();
    /// ```
    pub fn new() -> Json {
        Json::default()
    }

    /// The JSON format in nowait's own schema (see [`Json`]): all keys on
    /// every line, the message apart.
    ///
    /// # Examples
    ///
    /// ```
    /// let _json = nowait_core::Json::nowait_schema();
    /// ```
    pub fn nowait_schema() -> Json {
        Json::new().with_schema(JsonSchema::Nowait)
    }

    /// Chooses the layout.
    ///
    /// # Examples
    ///
    /// ```
    /// let _json = nowait_core::Json::new().with_schema(nowait_core::JsonSchema::Nowait);
    /// ```
    pub fn with_schema(mut self, schema: JsonSchema) -> Json {
        self.schema = schema;
        self
    }

    /// Puts the event's fields at the top level instead of under `fields`
    /// (default `false`).
    ///
    /// # Examples
    ///
    /// ```
    /// let _json = nowait_core::Json::new().flatten_event(true);
    /// ```
    pub fn flatten_event(mut self, on: bool) -> Json {
        self.flatten = on;
        self
    }

    /// Whether to write the innermost span as `span` (default `true`).
    ///
    /// # Examples
    ///
    /// ```
    /// let _json = nowait_core::Json::new().with_current_span(false);
    /// ```
    pub fn with_current_span(mut self, on: bool) -> Json {
        self.current_span = on;
        self
    }

    /// Whether to write all enclosing spans as `spans` (default `true`).
    ///
    /// # Examples
    ///
    /// ```
    /// let _json = nowait_core::Json::new().with_span_list(false);
    /// ```
    pub fn with_span_list(mut self, on: bool) -> Json {
        self.span_list = on;
        self
    }

    /// How to write `timestamp` (default [`Timer::Utc`]; [`Timer::None`]
    /// leaves the key out).
    ///
    /// # Examples
    ///
    /// ```
    /// let _json = nowait_core::Json::new().with_timer(nowait_core::Timer::Uptime);
    /// ```
    pub fn with_timer(mut self, timer: Timer) -> Json {
        self.options.timer = timer;
        self
    }

    /// Leaves `timestamp` out.
    ///
    /// # Examples
    ///
    /// ```
    /// let _json = nowait_core::Json::new().without_time();
    /// ```
    pub fn without_time(self) -> Json {
        self.with_timer(Timer::None)
    }

    /// Whether to write `level` (default `true`).
    ///
    /// # Examples
    ///
    /// ```
    /// let _json = nowait_core::Json::new().with_level(false);
    /// ```
    pub fn with_level(mut self, on: bool) -> Json {
        self.options.level = on;
        self
    }

    /// Whether to write `target` (default `true`).
    ///
    /// # Examples
    ///
    /// ```
    /// let _json = nowait_core::Json::new().with_target(false);
    /// ```
    pub fn with_target(mut self, on: bool) -> Json {
        self.options.target = on;
        self
    }

    /// Whether to write the call site's source file as `filename` (default
    /// `false`).
    ///
    /// # Examples
    ///
    /// ```
    /// let _json = nowait_core::Json::new().with_file(true);
    /// ```
    pub fn with_file(mut self, on: bool) -> Json {
        self.options.file = on;
        self
    }

    /// Whether to write the call site's line as `line_number` (default
    /// `false`).
    ///
    /// # Examples
    ///
    /// ```
    /// let _json = nowait_core::Json::new().with_line_number(true);
    /// ```
    pub fn with_line_number(mut self, on: bool) -> Json {
        self.options.line = on;
        self
    }

    /// Whether to write the logging thread's name as `threadName` (default
    /// `false`; an unnamed thread gives its id, unless ids are written
    /// anyway). Front ends then record the thread in each event.
    ///
    /// # Examples
    ///
    /// ```
    /// let _json = nowait_core::Json::new().with_thread_names(true);
    /// ```
    pub fn with_thread_names(mut self, on: bool) -> Json {
        self.options.thread_names = on;
        self
    }

    /// Whether to write the logging thread's id as `threadId` (default
    /// `false`). Front ends then record the thread in each event.
    ///
    /// # Examples
    ///
    /// ```
    /// let _json = nowait_core::Json::new().with_thread_ids(true);
    /// ```
    pub fn with_thread_ids(mut self, on: bool) -> Json {
        self.options.thread_ids = on;
        self
    }
}

impl MakeFormat for Json {
    fn make_format(&self, _sink: &SinkInfo) -> Box<dyn Format> {
        match self.schema {
            JsonSchema::Nowait => Box::<JsonFormat>::default(),
            JsonSchema::TracingSubscriber => Box::new(FmtJson::new(*self)),
        }
    }

    fn needs_thread(&self) -> bool {
        self.schema == JsonSchema::TracingSubscriber && self.options.needs_thread()
    }

    fn needs_location(&self) -> bool {
        self.schema == JsonSchema::TracingSubscriber && self.options.needs_location()
    }
}

/// The per-sink state of [`JsonSchema::Nowait`].
#[derive(Debug, Default)]
struct JsonFormat {
    sites: SiteCache,
    clock: Clock,
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
                    if Location::default().take(ev.site.is_some(), name, value) {
                        continue;
                    }
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
        Value::F64(x) if x.is_finite() => crate::floatfmt::write_debug(x, out),
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

/// Appends `bytes` as a JSON string (RFC 8259), with DEL, C1 controls,
/// U+2028/U+2029 and bidi controls escaped too and invalid UTF-8 replaced
/// by U+FFFD.
///
/// Runs of printable ASCII other than `"` and `\\` (nearly every byte of a
/// log line) are found by `plain_len` and copied whole; the rest goes one
/// ASCII byte, or one run of non-ASCII bytes, at a time. A run of
/// non-ASCII bytes is decoded on its own: an ASCII byte never belongs to a
/// UTF-8 sequence or to the maximal invalid subpart that becomes one
/// U+FFFD, so cutting there changes nothing.
pub(crate) fn json_str(bytes: &[u8], out: &mut Vec<u8>) {
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut rest = bytes;
    loop {
        let plain = plain_len(rest, true);
        out.extend_from_slice(&rest[..plain]);
        rest = &rest[plain..];
        let Some(&b) = rest.first() else { break };
        if b < 0x80 {
            match b {
                b'"' => out.extend_from_slice(b"\\\""),
                b'\\' => out.extend_from_slice(b"\\\\"),
                b'\n' => out.extend_from_slice(b"\\n"),
                b'\r' => out.extend_from_slice(b"\\r"),
                b'\t' => out.extend_from_slice(b"\\t"),
                0x08 => out.extend_from_slice(b"\\b"),
                0x0c => out.extend_from_slice(b"\\f"),
                _ => u_escape(u32::from(b), out),
            }
            rest = &rest[1..];
        } else {
            let end = rest.iter().position(|&b| b < 0x80).unwrap_or(rest.len());
            non_ascii(&rest[..end], out);
            rest = &rest[end..];
        }
    }
    out.push(b'"');
}

/// `\\u` and four hex digits.
fn u_escape(code: u32, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.extend_from_slice(b"\\u");
    for shift in [12, 8, 4, 0] {
        out.push(HEX[(code >> shift & 0xf) as usize]);
    }
}

/// A run of non-ASCII bytes: C1 controls, U+2028/U+2029 and bidi controls
/// escaped, other characters copied, invalid sequences replaced by U+FFFD.
#[cold]
fn non_ascii(bytes: &[u8], out: &mut Vec<u8>) {
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '\u{80}'..='\u{9f}' | '\u{2028}' | '\u{2029}' => u_escape(c as u32, out),
                c if is_bidi_control(c) => u_escape(c as u32, out),
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

    fn format_kept(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
        let start = out.len();
        self.format(record, out);
        mark_kept(out, start);
    }

    fn kept_notice(&mut self, _notice: &Notice<'_>, _out: &mut Vec<u8>) {}
}

/// Adds the key `"backtrace":true` last to the line appended to `out`
/// since `start` (a record a backtrace released; see
/// [`Backtrace`](crate::Backtrace)).
fn mark_kept(out: &mut Vec<u8>, start: usize) {
    if out.len() < start + 3 || !out.ends_with(b"}\n") {
        return;
    }
    out.truncate(out.len() - 2);
    if out.last() != Some(&b'{') {
        out.push(b',');
    }
    out.extend_from_slice(b"\"backtrace\":true}\n");
}

/// The per-sink state of [`JsonSchema::TracingSubscriber`].
#[derive(Debug)]
struct FmtJson {
    json: Json,
    clock: Clock,
    sites: SiteCache,
    threads: ThreadCache,
    scratch: (String, String),
    /// The event's fields, rendered during the single pass over its items.
    fields: Vec<u8>,
    /// The span list, and the last (innermost) span alone.
    spans: Vec<u8>,
    span: Vec<u8>,
    /// One span's fields as raw name and rendered value, and their places
    /// there (name start, name end, value end), to sort by name.
    vals: Vec<u8>,
    sorted: Vec<(usize, usize, usize)>,
    /// A deferred message's text before escaping.
    raw: Vec<u8>,
    /// Per call site, what the line shows of it, rendered once.
    known: KnownSites<JsonSite>,
    /// Tests only: render the call site's part with each event, as the
    /// reference the cache is compared with.
    #[cfg(test)]
    uncached: bool,
}

impl FmtJson {
    fn new(json: Json) -> FmtJson {
        FmtJson {
            json,
            clock: Clock::new(json.options.timer),
            sites: SiteCache::default(),
            threads: ThreadCache::default(),
            scratch: Default::default(),
            fields: Vec::new(),
            spans: Vec::new(),
            span: Vec::new(),
            vals: Vec::new(),
            sorted: Vec::new(),
            raw: Vec::new(),
            known: KnownSites::default(),
            #[cfg(test)]
            uncached: false,
        }
    }
}

/// What a line in the `tracing-subscriber` schema shows of a call site,
/// rendered (escaped) once per call site instead of once per event.
#[derive(Debug)]
struct JsonSite {
    /// The target as a JSON string.
    target: Piece,
    /// Each field's `"name":`.
    names: Vec<Piece>,
    /// The message format as a JSON string, if it has no placeholders:
    /// what an event without arguments shows as its message.
    literal: Option<Piece>,
}

impl JsonSite {
    #[cold]
    fn new(site: &Callsite) -> JsonSite {
        let json = |text: &str, colon: bool| {
            let mut out = Vec::new();
            json_str(text.as_bytes(), &mut out);
            if colon {
                out.push(b':');
            }
            Piece::new(&out)
        };
        JsonSite {
            target: json(site.target(), false),
            names: (0..)
                .map_while(|i| site.field(i))
                .map(|name| json(name, true))
                .collect(),
            literal: site
                .pieces()
                .and_then(|p| p.literal())
                .map(|text| json(text, false)),
        }
    }
}

/// Appends `,` unless `out` has nothing after `start` (the `{`), then
/// `"name":` (a constant key that needs no escaping).
fn key(out: &mut Vec<u8>, start: usize, name: &str) {
    debug_assert!(name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'));
    if out.len() > start + 1 {
        out.push(b',');
    }
    out.push(b'"');
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":");
}

/// A value as `serde_json` writes what `tracing-subscriber` makes of it.
fn fmt_value(
    value: Value<'_>,
    site: Option<&std::sync::Arc<crate::event::Callsite>>,
    scratch: &mut (String, String),
    raw: &mut Vec<u8>,
    out: &mut Vec<u8>,
) {
    match value {
        Value::U64(n) => out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes()),
        Value::I64(n) => out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes()),
        Value::F64(x) if x.is_finite() => {
            out.extend_from_slice(zmij::Buffer::new().format_finite(x).as_bytes());
        }
        Value::F64(_) => out.extend_from_slice(b"null"),
        Value::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
        Value::Str(s) | Value::Rendered(s) => json_str(s, out),
        Value::Char(c) => json_str(c.encode_utf8(&mut [0u8; 4]).as_bytes(), out),
        Value::Args(_) => {
            raw.clear();
            message_with(value, site, raw, scratch, copy_into);
            json_str(raw, out);
        }
    }
}

impl FmtJson {
    /// `{` and the keys before `fields`.
    fn head(&mut self, nanos: u64, level: Level, out: &mut Vec<u8>) -> usize {
        let start = out.len();
        out.push(b'{');
        if self.clock.on() {
            key(out, start, "timestamp");
            out.push(b'"');
            self.clock.write(nanos, out);
            out.push(b'"');
        }
        if self.json.options.level {
            key(out, start, "level");
            out.push(b'"');
            out.extend_from_slice(level.as_str().as_bytes());
            out.push(b'"');
        }
        start
    }

    /// `fields` (or the flattened fields) from `self.fields`.
    fn fields(&self, start: usize, out: &mut Vec<u8>) {
        if self.json.flatten {
            if !self.fields.is_empty() {
                if out.len() > start + 1 {
                    out.push(b',');
                }
                out.extend_from_slice(&self.fields);
            }
        } else {
            key(out, start, "fields");
            out.push(b'{');
            out.extend_from_slice(&self.fields);
            out.push(b'}');
        }
    }

    /// A line for something that is not an event: a notice, a text record.
    fn line(&mut self, nanos: u64, level: Level, target: &[u8], message: &[u8], out: &mut Vec<u8>) {
        let start = self.head(nanos, level, out);
        self.fields.clear();
        self.fields.extend_from_slice(b"\"message\":");
        json_str(message, &mut self.fields);
        self.fields(start, out);
        if self.json.options.target {
            key(out, start, "target");
            json_str(target, out);
        }
        out.extend_from_slice(b"}\n");
    }

    /// Renders one span into `self.span`: its fields by name, the last
    /// value of a repeated one, then `name`.
    fn span(
        &mut self,
        site: Option<&std::sync::Arc<crate::event::Callsite>>,
        fields: crate::event::SpanFields<'_>,
    ) {
        // Raw names and rendered values go to `vals`, their places to
        // `sorted`, sorted by name into `span`.
        let FmtJson {
            scratch,
            raw,
            vals,
            sorted,
            span,
            ..
        } = self;
        vals.clear();
        sorted.clear();
        for f in fields.items() {
            let Item::Field { name, value } = f else {
                continue;
            };
            let name = decode_field_name(name, site);
            let name_start = vals.len();
            vals.extend_from_slice(name.as_bytes());
            let name_end = vals.len();
            fmt_value(value, site, scratch, raw, vals);
            sorted.push((name_start, name_end, vals.len()));
        }
        // By name, then by position: among equal names the last recorded
        // stays last (an unstable sort with a total order: no allocation).
        sorted.sort_unstable_by(|a, b| vals[a.0..a.1].cmp(&vals[b.0..b.1]).then(a.0.cmp(&b.0)));
        span.clear();
        span.push(b'{');
        for (i, &(ns, ne, ve)) in sorted.iter().enumerate() {
            if let Some(&(ns2, ne2, _)) = sorted.get(i + 1) {
                if vals[ns..ne] == vals[ns2..ne2] {
                    continue;
                }
            }
            json_str(&vals[ns..ne], span);
            span.push(b':');
            span.extend_from_slice(&vals[ne..ve]);
            span.push(b',');
        }
        span.extend_from_slice(b"\"name\":");
        json_str(site.map_or("?", |s| s.name()).as_bytes(), span);
        span.push(b'}');
    }

    fn event(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
        let Some(event) = Event::parse(record.payload()) else {
            let now = system_nanos(std::time::SystemTime::now());
            self.line(now, record.level(), b"nowait", b"<malformed event>", out);
            return;
        };
        let site = event.site().and_then(|k| self.sites.get(k.get()));
        #[cfg(test)]
        let site_for_cache = site.as_ref().filter(|_| !self.uncached);
        #[cfg(not(test))]
        let site_for_cache = site.as_ref();
        let known = match site_for_cache {
            Some(s) => {
                let key = event.site().map_or(0, |k| k.get());
                Some(match self.known.find(key) {
                    Some(i) => i,
                    None => self.known.add(key, JsonSite::new(s)),
                })
            }
            None => None,
        };
        let ev = Resolved { site, event };
        let start = self.head(event.time_nanos(), record.level(), out);

        self.fields.clear();
        self.spans.clear();
        let mut any_span = false;
        let mut at = Location::default();
        for item in event.items() {
            match item {
                Item::Field { name, value } => {
                    let known = known.map(|i| &self.known.texts[i]);
                    let name_text = match (name, known) {
                        (FieldName::Index(j), Some(k)) => k.names.get(j),
                        _ => None,
                    };
                    let name = ev.name_of(name);
                    if at.take(ev.site.is_some(), name, value) {
                        continue;
                    }
                    let fields = &mut self.fields;
                    if !fields.is_empty() {
                        fields.push(b',');
                    }
                    match name_text {
                        Some(text) => text.append_to(fields),
                        None => {
                            json_str(name.as_bytes(), fields);
                            fields.push(b':');
                        }
                    }
                    match (value, known.and_then(|k| k.literal.as_ref())) {
                        (Value::Args(args), Some(literal)) if args.is_empty() => {
                            literal.append_to(fields);
                        }
                        _ => fmt_value(
                            value,
                            ev.site.as_ref(),
                            &mut self.scratch,
                            &mut self.raw,
                            fields,
                        ),
                    }
                }
                Item::Malformed => {
                    if !self.fields.is_empty() {
                        self.fields.push(b',');
                    }
                    self.fields.extend_from_slice(b"\"nowait.malformed\":true");
                }
                Item::Span { site, fields } => {
                    let span_site = self.sites.get(site.get());
                    self.span(span_site.as_ref(), fields);
                    if any_span {
                        self.spans.push(b',');
                    }
                    any_span = true;
                    self.spans.extend_from_slice(&self.span);
                }
            }
        }
        self.fields(start, out);
        let o = self.json.options;
        if o.target {
            key(out, start, "target");
            match known {
                Some(i) => self.known.texts[i].target.append_to(out),
                None => json_str(ev.target(), out),
            }
        }
        let at = at.of(ev.site.as_deref());
        if let Some(file) = at.file.filter(|_| o.file) {
            key(out, start, "filename");
            json_str(file, out);
        }
        if let Some(line) = at.line.filter(|_| o.line) {
            key(out, start, "line_number");
            out.extend_from_slice(itoa::Buffer::new().format(line).as_bytes());
        }
        if any_span {
            if self.json.current_span {
                key(out, start, "span");
                out.extend_from_slice(&self.span);
            }
            if self.json.span_list {
                key(out, start, "spans");
                out.push(b'[');
                out.extend_from_slice(&self.spans);
                out.push(b']');
            }
        }
        if o.needs_thread() {
            self.thread(event.thread(), start, out);
        }
        out.extend_from_slice(b"}\n");
    }

    #[cold]
    fn thread(&mut self, thread: Option<u32>, start: usize, out: &mut Vec<u8>) {
        let o = self.json.options;
        let Some(info) = thread.and_then(|n| self.threads.get(n)) else {
            return;
        };
        if o.thread_names {
            match &info.name {
                Some(name) => {
                    key(out, start, "threadName");
                    json_str(name.as_bytes(), out);
                }
                None if !o.thread_ids => {
                    key(out, start, "threadName");
                    json_str(info.id.as_bytes(), out);
                }
                None => {}
            }
        }
        if o.thread_ids {
            key(out, start, "threadId");
            json_str(info.id.as_bytes(), out);
        }
    }
}

impl Format for FmtJson {
    fn format(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
        match record.kind() {
            kind::EVENT => self.event(record, out),
            k => {
                let now = system_nanos(std::time::SystemTime::now());
                if k == kind::TEXT {
                    self.line(now, record.level(), b"", record.payload(), out);
                } else {
                    let msg = format!("<kind {k} record>");
                    self.line(now, record.level(), b"nowait", msg.as_bytes(), out);
                }
            }
        }
    }

    fn notice(&mut self, notice: &Notice<'_>, out: &mut Vec<u8>) {
        let time = system_nanos(notice.time());
        self.line(
            time,
            notice.level(),
            b"nowait",
            notice.message().as_bytes(),
            out,
        );
    }

    fn format_kept(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
        let start = out.len();
        self.format(record, out);
        mark_kept(out, start);
    }

    fn kept_notice(&mut self, _notice: &Notice<'_>, _out: &mut Vec<u8>) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{register_callsite, SiteKey};
    use std::io::Write as _;

    static SITE: u8 = 0;
    static LITERAL: u8 = 0;
    static SPAN: u8 = 0;

    /// The call site's part of the line rendered once (target, `"name":`,
    /// a message format without placeholders) gives the bytes of
    /// rendering it with each event, on random event shapes, with and
    /// without flattening, file and line.
    #[test]
    fn site_cache_matches_rendering_each_time() {
        let fields = vec!["message", "rows", "ta\"ble", "ratio"];
        let key = SiteKey::of(&SITE);
        register_callsite(
            key,
            Callsite::new(Level::Info, "app::db\u{2028}", "event")
                .fields(fields.clone())
                .location(Some("app::db"), Some("src/db.rs"), Some(42))
                .message_format("took {} ms"),
        );
        let literal = SiteKey::of(&LITERAL);
        register_callsite(
            literal,
            Callsite::new(Level::Info, "app", "event")
                .fields(fields)
                .message_format("done \"now\"\n"),
        );
        register_callsite(
            SiteKey::of(&SPAN),
            Callsite::new(Level::Info, "app", "conn").fields(vec!["peer"]),
        );
        let jsons = [
            Json::new(),
            Json::new()
                .flatten_event(true)
                .with_file(true)
                .with_line_number(true),
        ];
        let mut next = crate::format::test_rng();
        for _ in 0..2000 {
            let payload =
                crate::format::random_event(&mut next, [key, literal], SiteKey::of(&SPAN));
            let record = Record::new(Level::Warn, kind::EVENT, &payload);
            for json in &jsons {
                let mut cached = json.make_format(&SinkInfo::new("test", false));
                let mut reference = FmtJson {
                    uncached: true,
                    ..FmtJson::new(*json)
                };
                let (mut a, mut b) = (Vec::new(), Vec::new());
                // Twice: the first event fills the cache, the second uses it.
                for _ in 0..2 {
                    cached.format(&record, &mut a);
                    reference.format(&record, &mut b);
                }
                assert_eq!(String::from_utf8_lossy(&a), String::from_utf8_lossy(&b));
            }
        }
    }

    /// The character-by-character version that `json_str` replaced.
    fn json_str_reference(bytes: &[u8], out: &mut Vec<u8>) {
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
                    '\0'..='\u{1f}'
                    | '\u{7f}'..='\u{9f}'
                    | '\u{2028}'
                    | '\u{2029}'
                    | '\u{61c}'
                    | '\u{200e}'
                    | '\u{200f}'
                    | '\u{202a}'..='\u{202e}'
                    | '\u{2066}'..='\u{2069}' => {
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

    /// The fast `json_str` gives the bytes of the one it replaced, on
    /// strings mixing plain ASCII, JSON specials, controls, DEL, C1
    /// controls, U+2028/U+2029, bidi controls and their neighbours, other
    /// UTF-8 and invalid sequences (cut
    /// ones included), at every length around the eight-byte steps.
    #[test]
    fn json_str_matches_reference() {
        let pieces: &[&[u8]] = &[
            b"a",
            b"plain text ",
            b"\"",
            b"\\",
            b"\n",
            b"\r",
            b"\t",
            b"\x08",
            b"\x0c",
            b"\x00",
            b"\x1b[31m",
            b"\x1f",
            b"\x7f",
            b" ",
            b"~",
            "é".as_bytes(),
            "\u{85}".as_bytes(),
            "\u{9f}".as_bytes(),
            "\u{a0}".as_bytes(),
            "\u{2028}".as_bytes(),
            "\u{2029}".as_bytes(),
            "\u{61b}\u{61c}\u{61d}".as_bytes(),
            "\u{200d}\u{200e}\u{200f}\u{2010}".as_bytes(),
            "\u{2029}\u{202a}\u{202b}\u{202c}\u{202d}\u{202e}\u{202f}".as_bytes(),
            "\u{2065}\u{2066}\u{2067}\u{2068}\u{2069}\u{206a}".as_bytes(),
            "€".as_bytes(),
            "😀".as_bytes(),
            b"\xff",
            b"\xc3",
            b"\xe2\x82",
            b"\xf0\x9f\x98",
            b"\xed\xa0\x80",
            b"\x80\x80",
            b"\xc0\xaf",
            b"\xf4\x90\x80\x80",
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let (mut got, mut want) = (Vec::new(), Vec::new());
        for round in 0..20_000 {
            let mut input = Vec::new();
            for _ in 0..(round % 12) {
                input.extend_from_slice(pieces[next() as usize % pieces.len()]);
            }
            for len in [input.len(), input.len() / 2, input.len().saturating_sub(1)] {
                let s = &input[..len];
                got.clear();
                want.clear();
                json_str(s, &mut got);
                json_str_reference(s, &mut want);
                assert_eq!(got, want, "input {s:?}");
            }
        }
    }
}
