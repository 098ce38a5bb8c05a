//! Compact text, close to `tracing-subscriber`'s default format.

use std::io::Write as _;
use std::sync::Arc;

use super::{
    append, escape_into, is_message, message_with, plain_len, push_u64, renamed_trace_key,
    scalar_text, system_nanos, Clock, Format, KnownSites, Location, MakeFormat, Options, Piece,
    Resolved, SinkInfo,
};
use crate::event::{
    decode_field_name, Callsite, Event, FieldName, Item, SiteCache, SiteKey, SpanFields,
    ThreadCache, Value,
};
use crate::level::Level;
use crate::record::{kind, Notice, Record};
use crate::text::float;

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
/// Control characters, the Unicode line and paragraph separators
/// (U+2028, U+2029) and the bidirectional formatting characters (U+202E
/// and its kin) in messages, values, targets, names (of fields, spans and
/// threads), thread ids and file paths are escaped (see [`escape_into`]);
/// strings are quoted and escaped as `Debug` does. No value can start a
/// new line, not even in a log viewer that breaks lines at U+2028, reach
/// the terminal as an escape sequence, or reorder how the rest of the
/// line reads.
///
/// ANSI colours are used only on sinks that are terminals, and only if the
/// `NO_COLOR` environment variable is unset or empty; [`Text::with_ansi`]
/// overrides that.
///
/// The options have the names of `tracing_subscriber::fmt()`'s builder and
/// give the same bytes for the same events (thread names, thread ids,
/// file, line, target, level, time; colours included): a test compares
/// every combination with `tracing-subscriber` itself. Two differences:
/// control and bidi characters are escaped everywhere (see above), and a thread
/// name is padded to the longest name this sink has printed, where
/// `tracing-subscriber` takes the longest of the process.
///
/// What the shared options show (their methods are below): the time
/// ([`with_timer`](Text::with_timer)) first, the level padded to five
/// columns ([`with_level`](Text::with_level)), the thread name padded to
/// the longest name this sink has printed, and the id as `ThreadId(01)`
/// ([`with_thread_names`](Text::with_thread_names),
/// [`with_thread_ids`](Text::with_thread_ids)), the spans, the target
/// ([`with_target`](Text::with_target)), then the call site's file and
/// line as `src/main.rs:42:` ([`with_file`](Text::with_file),
/// [`with_line_number`](Text::with_line_number)), the message and fields.
/// [`with_trace_ids`](Text::with_trace_ids) (default `false`, as
/// `tracing_subscriber::fmt()` prints neither) ends the line with
/// `trace_id=<32 hex digits> span_id=<16 hex digits>` on events that carry
/// a trace context; on such a line an event field a program logs as
/// `trace_id` or `span_id` is written `fields.trace_id=`
/// (`fields.span_id=`), so that the line's `trace_id=` is always the
/// span's; elsewhere those fields print as any field:
///
/// ```
/// use nowait_core::event::TraceContext;
/// use nowait_core::{Builder, Level, Sink};
/// use nowait_core::format::Text;
/// use nowait_core::record::kind;
///
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("app.log");
/// let text = Text::new().without_time().with_trace_ids(true);
/// let (logger, guard) = Builder::new().sink(Sink::file(&path).format(text)).build()?;
/// let mut buf = nowait_core::__private::event::EventBuf::new();
/// buf.begin_inline(0, "app");
/// buf.trace_context(TraceContext::new([0xab; 16], [0xcd; 8], 1));
/// buf.str(nowait_core::event::FieldName::Inline("message"), "hi");
/// nowait_core::__private::logger::push(&logger, Level::Info, kind::EVENT, &[buf.as_bytes()])?;
/// drop(guard);
/// let line = std::fs::read_to_string(&path)?;
/// assert_eq!(
///     line,
///     format!(" INFO app: hi trace_id={} span_id={}\n", "ab".repeat(16), "cd".repeat(8))
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// # Examples
///
/// ```
/// use nowait_core::{Builder, Sink};
/// use nowait_core::format::Text;
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
    options: Options,
}

impl Text {
    /// The default text format: colours decided per sink, time, level and
    /// target shown.
    ///
    /// # Examples
    ///
    /// ```
    /// let _text = nowait_core::format::Text::new();
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
    /// let _plain = nowait_core::format::Text::new().with_ansi(false);
    /// ```
    pub fn with_ansi(mut self, on: bool) -> Text {
        self.ansi = Some(on);
        self
    }

    /// The same as [`with_ansi`](Text::with_ansi) (its older name).
    ///
    /// # Examples
    ///
    /// ```
    /// let _plain = nowait_core::format::Text::new().ansi(false);
    /// ```
    pub fn ansi(self, on: bool) -> Text {
        self.with_ansi(on)
    }
}

super::options::shared_options!(Text);

impl MakeFormat for Text {
    fn make_format(&self, sink: &SinkInfo) -> Box<dyn Format> {
        let ansi = self
            .ansi
            .unwrap_or_else(|| sink.is_terminal() && !no_color());
        Box::new(TextFormat {
            ansi,
            options: self.options,
            clock: Clock::new(self.options.timer),
            ..TextFormat::default()
        })
    }

    fn needs_thread(&self) -> bool {
        self.options.needs_thread()
    }

    fn needs_location(&self) -> bool {
        self.options.needs_location()
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
    options: Options,
    sites: SiteCache,
    threads: ThreadCache,
    /// The longest thread name printed so far.
    thread_width: usize,
    clock: Clock,
    scratch: (String, String),
    /// The fields after the message, rendered during the single pass (for
    /// events without a known call site), or a span or message that has
    /// to go before what is already written.
    rest: Vec<u8>,
    /// Per call site, what the line shows of it, rendered once.
    known: KnownSites<SiteText>,
    /// Per span call site, what the line shows of it, rendered once.
    known_spans: KnownSites<SpanText>,
    /// Tests only: render the call site's part with each event, as the
    /// reference the cache is compared with.
    #[cfg(test)]
    uncached: bool,
}

/// What a line shows of its call site, rendered (escaped, painted) once
/// per call site instead of once per event.
#[derive(Debug)]
struct SiteText {
    site: Arc<Callsite>,
    /// Target, file and line, as [`TextFormat::target`] writes them.
    target: Piece,
    /// Each field's ` name=`, as [`TextFormat::field`] writes it after a
    /// space.
    names: Vec<Piece>,
    /// Each field's name is `message`.
    message: Vec<bool>,
    /// The message format escaped, if it has no placeholders: what an
    /// event without arguments shows as its message.
    literal: Option<Piece>,
}

/// What a line shows of an enclosing span's call site, rendered once per
/// call site instead of once per event.
#[derive(Debug)]
struct SpanText {
    site: Arc<Callsite>,
    /// The name, painted: a span without fields.
    bare: Piece,
    /// The name, then `{`, painted: what opens a span's fields.
    open: Piece,
    /// Each field's `name=`, as [`TextFormat::field_name`] writes it.
    names: Vec<Piece>,
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

    /// `text` painted with `code`, as `nu_ansi_term`'s `paint` writes it.
    fn painted(&self, code: &[u8], text: &[u8], out: &mut Vec<u8>) {
        self.paint(out, code);
        escape_into(text, out);
        self.reset(out);
    }

    /// A painted punctuation mark (no escaping needed).
    fn painted_mark(&self, code: &[u8], mark: u8, out: &mut Vec<u8>) {
        self.paint(out, code);
        out.push(mark);
        self.reset(out);
    }

    /// Time, level and thread: what comes before the spans.
    fn head(&mut self, nanos: u64, level: Level, thread: Option<u32>, out: &mut Vec<u8>) {
        if !self.ansi && self.options.level && self.clock.is_utc() && !self.options.needs_thread() {
            // The default head, `<stamp> <level> `, in three fixed-size
            // pieces.
            let (prefix, tail) = self.clock.utc_parts(nanos);
            out.reserve(34);
            out.extend_from_slice(prefix);
            out.extend_from_slice(&tail.to_le_bytes());
            out.extend_from_slice(match level {
                Level::Trace => b" TRACE ",
                Level::Debug => b" DEBUG ",
                Level::Info => b"  INFO ",
                Level::Warn => b"  WARN ",
                Level::Error => b" ERROR ",
            });
            return;
        }
        if self.clock.on() {
            self.paint(out, b"2");
            self.clock.write(nanos, out);
            self.reset(out);
            out.push(b' ');
        }
        if self.options.level {
            self.paint(out, level_colour(level));
            out.extend_from_slice(level_text(level));
            self.reset(out);
            out.push(b' ');
        }
        if self.options.needs_thread() {
            self.thread(thread, out);
        }
    }

    #[cold]
    fn thread(&mut self, thread: Option<u32>, out: &mut Vec<u8>) {
        let (names, ids) = (self.options.thread_names, self.options.thread_ids);
        let Some(info) = thread.and_then(|n| self.threads.get(n)) else {
            return;
        };
        if names {
            match &info.name {
                Some(name) => {
                    let width = thread_width(&mut self.thread_width, name);
                    for _ in name.chars().count()..width {
                        out.push(b' ');
                    }
                    escape_into(name.as_bytes(), out);
                    out.push(b' ');
                }
                None if !ids => {
                    escape_into(info.id_padded.as_bytes(), out);
                    out.push(b' ');
                }
                None => {}
            }
        }
        if ids {
            // A recovered catalog's id is any text the file held.
            escape_into(info.id_padded.as_bytes(), out);
            out.push(b' ');
        }
    }

    /// Target, file and line: what comes after the spans.
    fn target(&self, target: &[u8], at: Location<'_>, out: &mut Vec<u8>) {
        if self.options.target {
            self.painted(b"2", target, out);
            self.painted_mark(b"2", b':', out);
            out.push(b' ');
        }
        let line = at.line.filter(|_| self.options.line);
        if self.options.file {
            if let Some(file) = at.file {
                self.painted(b"2", file, out);
                self.painted_mark(b"2", b':', out);
                if line.is_none() {
                    out.push(b' ');
                }
            }
        }
        if let Some(line) = line {
            self.paint(out, b"2");
            out.extend_from_slice(itoa::Buffer::new().format(line).as_bytes());
            out.push(b':');
            self.reset(out);
            out.push(b' ');
        }
    }

    fn field(&self, name: &str, value: Value<'_>, out: &mut Vec<u8>) {
        self.field_name(name, out);
        field_value(value, out);
    }

    /// `name=`, painted.
    fn field_name(&self, name: &str, out: &mut Vec<u8>) {
        self.paint(out, b"3");
        escape_into(name.as_bytes(), out);
        self.reset(out);
        self.paint(out, b"2");
        out.push(b'=');
        self.reset(out);
    }

    /// Renders what the lines of `site`'s events show of it.
    #[cold]
    fn site_text(&self, site: Arc<Callsite>) -> SiteText {
        let mut target = Vec::new();
        self.target(
            site.target().as_bytes(),
            Location::default().of(Some(&site)),
            &mut target,
        );
        let fields = || (0..).map_while(|i| site.field(i));
        let names = fields()
            .map(|name| {
                let mut text = vec![b' '];
                self.field_name(name, &mut text);
                Piece::new(&text)
            })
            .collect();
        let message = fields().map(is_message).collect();
        let literal = site.pieces().and_then(|p| p.literal()).map(|text| {
            let mut escaped = Vec::new();
            escape_into(text.as_bytes(), &mut escaped);
            Piece::new(&escaped)
        });
        SiteText {
            site,
            target: Piece::new(&target),
            names,
            message,
            literal,
        }
    }

    /// The index in `known.texts` of the call site `key`, rendering its
    /// text the first time; `None` for events without (registered) call
    /// site.
    fn known_site(&mut self, key: u64) -> Option<usize> {
        #[cfg(test)]
        if self.uncached {
            return None;
        }
        if let Some(i) = self.known.find(key) {
            return Some(i);
        }
        let site = self.sites.get(key)?;
        let text = self.site_text(site);
        Some(self.known.add(key, text))
    }

    /// Renders what the lines show of the span call site `site`.
    #[cold]
    fn span_text(&self, site: Arc<Callsite>) -> SpanText {
        let mut bare = Vec::new();
        self.painted(b"1", site.name().as_bytes(), &mut bare);
        let mut open = bare.clone();
        self.painted_mark(b"1", b'{', &mut open);
        let names = (0..)
            .map_while(|i| site.field(i))
            .map(|name| {
                let mut text = Vec::new();
                self.field_name(name, &mut text);
                Piece::new(&text)
            })
            .collect();
        SpanText {
            site,
            bare: Piece::new(&bare),
            open: Piece::new(&open),
            names,
        }
    }

    /// The index in `known_spans.texts` of the span call site `key`,
    /// rendering its text the first time; `None` if not registered.
    fn known_span(&mut self, key: u64) -> Option<usize> {
        #[cfg(test)]
        if self.uncached {
            return None;
        }
        if let Some(i) = self.known_spans.find(key) {
            return Some(i);
        }
        let site = self.sites.get(key)?;
        let text = self.span_text(site);
        Some(self.known_spans.add(key, text))
    }

    /// An enclosing span: its name and fields, painted.
    fn span(&mut self, site: SiteKey, fields: SpanFields<'_>, out: &mut Vec<u8>) {
        let Some(i) = self.known_span(site.get()) else {
            return self.span_uncached(site, fields, out);
        };
        let text = &self.known_spans.texts[i];
        let mut first = true;
        for f in fields.items() {
            let Item::Field { name, value } = f else {
                continue;
            };
            if first {
                text.open.append_to(out);
            } else {
                out.push(b' ');
            }
            first = false;
            match name {
                FieldName::Index(j) if j < text.names.len() => text.names[j].append_to(out),
                _ => {
                    let name = crate::event::decode_field_name(name, Some(&text.site));
                    self.field_name(name, out);
                }
            }
            field_value(value, out);
        }
        if first {
            text.bare.append_to(out);
        } else {
            self.painted_mark(b"1", b'}', out);
        }
        self.painted_mark(b"2", b':', out);
    }

    /// [`span`](TextFormat::span) for a call site not registered (and in
    /// tests, the reference the cache is compared with).
    fn span_uncached(&mut self, site: SiteKey, fields: SpanFields<'_>, out: &mut Vec<u8>) {
        let span_site = self.sites.get(site.get());
        let name = span_site.as_ref().map_or("?", |s| s.name());
        self.painted(b"1", name.as_bytes(), out);
        let mut first = true;
        for f in fields.items() {
            let Item::Field { name, value } = f else {
                continue;
            };
            if first {
                self.painted_mark(b"1", b'{', out);
            } else {
                out.push(b' ');
            }
            first = false;
            let name = crate::event::decode_field_name(name, span_site.as_ref());
            self.field(name, value, out);
        }
        if !first {
            self.painted_mark(b"1", b'}', out);
        }
        self.painted_mark(b"2", b':', out);
    }

    fn event(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
        let Some(event) = Event::parse(record.payload()) else {
            out.extend_from_slice(b"<malformed event>\n");
            return;
        };
        self.head(event.time_nanos(), record.level(), event.thread(), out);
        match event.site().and_then(|k| self.known_site(k.get())) {
            Some(i) => self.known_event(event, i, out),
            None => self.other_event(event, out),
        }
    }

    /// The rest of the line (after the head) of an event whose call site
    /// has its [`SiteText`] at `i`: written straight into `out` in one
    /// pass. The message goes right after the target, where front ends put
    /// it first anyway; when it comes after other fields, or a span after
    /// fields, it is moved into place.
    fn known_event(&mut self, event: Event<'_>, i: usize, out: &mut Vec<u8>) {
        // Beside the trace context's keys, a field named like one of them
        // is renamed (`fields.trace_id`): the line's `trace_id=` is the
        // context's.
        let rename = self.options.trace_ids && event.trace_context().is_some();
        // Where the spans end, and where the target ends (once written).
        let mut spans_end = out.len();
        let mut body: Option<usize> = None;
        let mut any_span = false;
        let mut message_seen = false;
        for item in event.items() {
            match item {
                Item::Span { site, fields } => {
                    match body {
                        None => {
                            self.span(site, fields, out);
                            spans_end = out.len();
                        }
                        Some(at) => {
                            let mut late = std::mem::take(&mut self.rest);
                            late.clear();
                            self.span(site, fields, &mut late);
                            let len = late.len();
                            if !any_span {
                                late.push(b' ');
                            }
                            out.splice(spans_end..spans_end, late.iter().copied());
                            spans_end += len;
                            body = Some(at + late.len());
                            self.rest = late;
                        }
                    }
                    any_span = true;
                }
                Item::Field { name, value } => {
                    let text = &self.known.texts[i];
                    let at = match body {
                        Some(at) => at,
                        None => *body.insert(open_body(any_span, &text.target, out)),
                    };
                    let (is_msg, known) = match name {
                        FieldName::Index(j) => (
                            text.message.get(j).copied().unwrap_or(false),
                            text.names.get(j),
                        ),
                        FieldName::Inline(name) => (is_message(name), None),
                    };
                    if is_msg && !message_seen {
                        message_seen = true;
                        if out.len() == at {
                            message(value, text, out, &mut self.scratch);
                        } else {
                            let mut msg = std::mem::take(&mut self.rest);
                            msg.clear();
                            message(value, text, &mut msg, &mut self.scratch);
                            out.splice(at..at, msg.iter().copied());
                            self.rest = msg;
                        }
                        continue;
                    }
                    let renamed = match rename {
                        true => renamed_trace_key(decode_field_name(name, Some(&text.site))),
                        false => None,
                    };
                    match (renamed, known) {
                        (None, Some(known)) => known.append_to(out),
                        (renamed, _) => {
                            out.push(b' ');
                            let name = decode_field_name(name, Some(&text.site));
                            self.field_name(renamed.unwrap_or(name), out);
                        }
                    }
                    field_value(value, out);
                }
                Item::Malformed => {
                    if body.is_none() {
                        let target = &self.known.texts[i].target;
                        body = Some(open_body(any_span, target, out));
                    }
                    out.extend_from_slice(b" <malformed>");
                }
            }
        }
        let at = match body {
            Some(at) => at,
            None => open_body(any_span, &self.known.texts[i].target, out),
        };
        // Without a message the fields' leading space goes.
        if !message_seen && out.len() > at {
            out.remove(at);
        }
        self.trace_ids(event, at, out);
        out.push(b'\n');
    }

    /// ` trace_id=… span_id=…` at the end of the line, if asked for and
    /// the event has them; `at` is where the message and fields start.
    #[inline]
    fn trace_ids(&self, event: Event<'_>, at: usize, out: &mut Vec<u8>) {
        if !self.options.trace_ids {
            return;
        }
        let Some(cx) = event.trace_context() else {
            return;
        };
        if out.len() > at {
            out.push(b' ');
        }
        self.field_name("trace_id", out);
        cx.write_trace_id_hex(out);
        out.push(b' ');
        self.field_name("span_id", out);
        cx.write_span_id_hex(out);
    }

    /// The rest of the line of an event without a known call site: its
    /// target and location may come from its fields.
    fn other_event(&mut self, event: Event<'_>, out: &mut Vec<u8>) {
        let site = event.site().and_then(|k| self.sites.get(k.get()));
        let ev = Resolved { site, event };
        // One pass over the items: spans (they come first) go straight to
        // the line, the message is kept aside, the other fields go to
        // `rest`, each with a leading space.
        let mut rest = std::mem::take(&mut self.rest);
        rest.clear();
        let mut any_span = false;
        let mut message = None;
        let mut at = Location::default();
        // As in `known_event`.
        let rename = self.options.trace_ids && event.trace_context().is_some();
        for item in event.items() {
            match item {
                Item::Span { site, fields } => {
                    any_span = true;
                    self.span(site, fields, out);
                }
                Item::Field { name: field, value } => {
                    let name = ev.name_of(field);
                    if at.take(ev.site.is_some(), name, value) {
                        continue;
                    }
                    if message.is_none() && is_message(name) {
                        message = Some(value);
                        continue;
                    }
                    rest.push(b' ');
                    let renamed = renamed_trace_key(name).filter(|_| rename);
                    self.field(renamed.unwrap_or(name), value, &mut rest);
                }
                Item::Malformed => rest.extend_from_slice(b" <malformed>"),
            }
        }
        if any_span {
            out.push(b' ');
        }
        self.target(ev.target(), at.of(ev.site.as_deref()), out);
        let body = out.len();
        match message {
            Some(value) => {
                message_with(value, ev.site.as_ref(), out, &mut self.scratch, escape_into);
                out.extend_from_slice(&rest);
            }
            None => out.extend_from_slice(rest.strip_prefix(b" ").unwrap_or(&rest)),
        }
        self.rest = rest;
        self.trace_ids(event, body, out);
        out.push(b'\n');
    }
}

/// Writes what comes between the spans and the fields (a space after the
/// spans, then target, file and line); where the message goes.
fn open_body(any_span: bool, target: &Piece, out: &mut Vec<u8>) -> usize {
    if any_span {
        out.push(b' ');
    }
    target.append_to(out);
    out.len()
}

/// An event's message, its format's escaped text if it has no
/// placeholders and the event no arguments.
fn message(value: Value<'_>, text: &SiteText, out: &mut Vec<u8>, scratch: &mut (String, String)) {
    match (value, &text.literal) {
        (Value::Args(args), Some(literal)) if args.is_empty() => literal.append_to(out),
        _ => message_with(value, Some(&text.site), out, scratch, escape_into),
    }
}

/// A field's value: strings quoted, the rest as `Debug` prints them (the
/// common kinds here, inlined into the caller's loop).
#[inline(always)]
fn field_value(value: Value<'_>, out: &mut Vec<u8>) {
    match value {
        Value::Str(s) => quoted(s, out),
        Value::U64(n) => push_u64(n, out),
        Value::F64(x) => float::write_debug(x, out),
        other => scalar_text(other, out),
    }
}

/// A string value quoted and escaped exactly as `Debug` does (what
/// `tracing-subscriber` prints), with a fast path for plain ASCII.
fn quoted(s: &[u8], out: &mut Vec<u8>) {
    if plain_len(s, true) == s.len() {
        out.push(b'"');
        append(s, out);
        out.push(b'"');
    } else {
        let _ = write!(out, "{:?}", String::from_utf8_lossy(s));
    }
}

/// The level padded to five columns.
fn level_text(level: Level) -> &'static [u8; 5] {
    match level {
        Level::Trace => b"TRACE",
        Level::Debug => b"DEBUG",
        Level::Info => b" INFO",
        Level::Warn => b" WARN",
        Level::Error => b"ERROR",
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
        self.head(system_nanos(notice.time()), notice.level(), None, out);
        self.target(b"nowait", Location::default(), out);
        escape_into(notice.message().as_bytes(), out);
        out.push(b'\n');
    }
}

/// The width a thread name is padded to: the longest name this sink has
/// printed so far (`tracing-subscriber` keeps the longest of the process).
fn thread_width(width: &mut usize, name: &str) -> usize {
    let len = name.chars().count();
    *width = (*width).max(len);
    *width
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{register_callsite, SiteKey};

    static SITE: u8 = 0;
    static LITERAL: u8 = 0;
    static SPAN: u8 = 0;
    static IDS: u8 = 0;

    /// With trace ids shown, an event field named `trace_id` or `span_id`
    /// beside the trace context is written as `fields.trace_id`
    /// (`fields.span_id`): the line's `trace_id=` is the context's, once,
    /// whether the call site's names are cached or not. Without a context,
    /// or without trace ids shown, the field keeps its name.
    #[test]
    fn a_field_named_like_a_trace_key_never_stands_for_the_context() {
        use crate::event::TraceContext;
        let key = SiteKey::of(&IDS);
        register_callsite(
            key,
            Callsite::new(Level::Info, "app", "event").fields(vec!["message", "trace_id"]),
        );
        let event = |context: bool, by_index: bool| {
            let mut buf = crate::__private::event::EventBuf::new();
            match by_index {
                true => buf.begin_at(0, key),
                false => buf.begin_inline(0, "app"),
            }
            if context {
                buf.trace_context(TraceContext::new([0xab; 16], [0xcd; 8], 1));
            }
            buf.str(FieldName::Inline("message"), "hi");
            match by_index {
                true => buf.str(FieldName::Index(1), "forged"),
                false => buf.str(FieldName::Inline("trace_id"), "forged"),
            }
            buf.str(FieldName::Inline("span_id"), "forged");
            buf.as_bytes().to_vec()
        };
        let line = |text: &Text, payload: &[u8]| {
            let mut format = text.make_format(&SinkInfo::new("test", false));
            let record = Record::new(Level::Info, kind::EVENT, payload);
            let (mut first, mut second) = (Vec::new(), Vec::new());
            format.format(&record, &mut first);
            format.format(&record, &mut second);
            assert_eq!(first, second, "cached names");
            String::from_utf8(first).unwrap()
        };
        let ids = Text::new().without_time().with_trace_ids(true);
        let (trace, span) = ("ab".repeat(16), "cd".repeat(8));
        for by_index in [false, true] {
            assert_eq!(
                line(&ids, &event(true, by_index)),
                format!(
                    " INFO app: hi fields.trace_id=\"forged\" fields.span_id=\"forged\" \
                     trace_id={trace} span_id={span}\n"
                )
            );
            assert_eq!(
                line(&ids, &event(false, by_index)),
                " INFO app: hi trace_id=\"forged\" span_id=\"forged\"\n"
            );
            assert_eq!(
                line(&Text::new().without_time(), &event(true, by_index)),
                " INFO app: hi trace_id=\"forged\" span_id=\"forged\"\n"
            );
        }
    }

    /// The call site's part of the line rendered once (target, file,
    /// line, `name=`) gives the bytes of rendering it with each event, on
    /// random event shapes: spans, the message anywhere or missing, fields
    /// by index (one past the call site's names too) and inline (`message`
    /// too), every kind of value, a malformed tail, a message format with
    /// placeholders and one without; plain, and with colours, file and
    /// line, and without target.
    #[test]
    fn site_text_cache_matches_rendering_each_time() {
        let key = SiteKey::of(&SITE);
        register_callsite(
            key,
            Callsite::new(Level::Info, "app::db\x1b[2J", "event")
                .fields(vec!["message", "rows", "ta\nble", "ratio"])
                .location(Some("app::db"), Some("src/db.rs"), Some(42))
                .message_format("took {} ms"),
        );
        let literal = SiteKey::of(&LITERAL);
        register_callsite(
            literal,
            Callsite::new(Level::Info, "app", "event")
                .fields(vec!["message", "rows", "ta\nble", "ratio"])
                .message_format("done\u{2028}"),
        );
        register_callsite(
            SiteKey::of(&SPAN),
            Callsite::new(Level::Info, "app", "co\x1bnn").fields(vec!["peer"]),
        );
        let texts = [
            Text::new(),
            Text::new()
                .with_ansi(true)
                .with_file(true)
                .with_line_number(true),
            Text::new().with_target(false).with_line_number(true),
        ];
        let mut next = crate::format::test_rng();
        for _ in 0..2000 {
            let payload =
                crate::format::random_event(&mut next, [key, literal], SiteKey::of(&SPAN));
            let record = Record::new(Level::Warn, kind::EVENT, &payload);
            for text in &texts {
                let make = |uncached| TextFormat {
                    ansi: text.ansi.unwrap_or(false),
                    options: text.options,
                    clock: Clock::new(text.options.timer),
                    uncached,
                    ..TextFormat::default()
                };
                let (mut cached, mut reference) = (make(false), make(true));
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
}
