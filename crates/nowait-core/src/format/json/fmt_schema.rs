//! `tracing-subscriber`'s JSON schema
//! ([`JsonSchema::TracingSubscriber`](super::JsonSchema::TracingSubscriber)):
//! the bytes `tracing_subscriber::fmt().json()` prints for the same options
//! and events.

use super::{json_str, mark_kept, Json};
use crate::event::{
    decode_field_name, Callsite, Event, FieldName, Item, SiteCache, ThreadCache, Value,
};
use crate::format::flat::{each_field, TopKeys};
use crate::format::{
    copy_into, message_with, renamed_trace_key, system_nanos, Clock, Format, KnownSites, Location,
    Piece, Resolved,
};
use crate::level::Level;
use crate::record::{kind, Notice, Record};

/// The per-sink state of [`JsonSchema::TracingSubscriber`].
#[derive(Debug)]
pub(super) struct FmtJson {
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
    /// With fixed fields or flattened spans: the keys the line has.
    keys: TopKeys,
    /// Flattened span fields, rendered during the pass over the items.
    span_fields: Vec<u8>,
    /// Formatting a record a backtrace released (its line gets
    /// `backtrace`).
    kept: bool,
    /// Tests only: render the call site's part with each event, as the
    /// reference the cache is compared with.
    #[cfg(test)]
    uncached: bool,
}

impl FmtJson {
    pub(super) fn new(json: Json) -> FmtJson {
        FmtJson {
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
            keys: TopKeys::default(),
            span_fields: Vec::new(),
            kept: false,
            json,
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
pub(super) fn fmt_value(
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

    /// Whether keys are resolved (see `flat`): with fixed fields or
    /// flattened spans.
    fn resolving(&self) -> bool {
        !self.json.fixed.is_empty() || self.json.flatten_spans
    }

    /// Takes the keys the options give every line (`fields` or, flattened,
    /// `extra`), and `backtrace` on a released record.
    fn take_own_keys(&mut self, extra: &[&str]) {
        let o = self.json.options;
        let keys = &mut self.keys;
        keys.clear(false, &[]);
        for (on, key) in [
            (self.clock.on(), "timestamp"),
            (o.level, "level"),
            (!self.json.flatten, "fields"),
            (o.target, "target"),
            (self.kept, "backtrace"),
        ] {
            if on {
                keys.take(key);
            }
        }
        if self.json.flatten {
            extra.iter().for_each(|k| keys.take(k));
        }
    }

    /// The fixed fields, each under the key it claims (after the line's
    /// own keys are taken).
    fn fixed(&mut self, start: usize, out: &mut Vec<u8>) {
        for (name, value) in self.json.fixed.iter() {
            if out.len() > start + 1 {
                out.push(b',');
            }
            json_str(self.keys.claim(name, "fields."), out);
            out.push(b':');
            json_str(value.as_bytes(), out);
        }
    }

    /// A line for something that is not an event: a notice, a text record.
    fn line(&mut self, nanos: u64, level: Level, target: &[u8], message: &[u8], out: &mut Vec<u8>) {
        let start = self.head(nanos, level, out);
        if self.resolving() {
            self.take_own_keys(&["message"]);
            self.fixed(start, out);
        }
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
            let now = crate::format::render_time();
            self.line(now, record.level(), b"nowait", b"<malformed event>", out);
            return;
        };
        if self.resolving() {
            return self.event_flat(record.level(), event, out);
        }
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
        // Flattened beside the trace context's keys, a field named like
        // one of them is renamed (`fields.trace_id`): the context's key is
        // written once, with the real id.
        let trace = event
            .trace_context()
            .filter(|_| self.json.options.trace_ids);
        let rename = trace.is_some() && self.json.flatten;
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
                    let renamed = renamed_trace_key(name).filter(|_| rename);
                    let fields = &mut self.fields;
                    if !fields.is_empty() {
                        fields.push(b',');
                    }
                    match (renamed, name_text) {
                        (None, Some(text)) => text.append_to(fields),
                        (renamed, _) => {
                            json_str(renamed.unwrap_or(name).as_bytes(), fields);
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
        if let Some(cx) = trace {
            key(out, start, "trace_id");
            out.push(b'"');
            cx.write_trace_id_hex(out);
            out.push(b'"');
            key(out, start, "span_id");
            out.push(b'"');
            cx.write_span_id_hex(out);
            out.push(b'"');
        }
        out.extend_from_slice(b"}\n");
    }

    /// An event's line with fixed fields or flattened spans: every
    /// top-level key once (see `flat`), in the layout of `event` with the
    /// fixed fields after `level` and the flattened span fields after the
    /// event's.
    fn event_flat(&mut self, level: Level, event: crate::event::Event<'_>, out: &mut Vec<u8>) {
        let site = event.site().and_then(|k| self.sites.get(k.get()));
        let ev = Resolved { site, event };
        let o = self.json.options;
        let trace = event.trace_context().filter(|_| o.trace_ids);
        self.take_own_keys(&[]);
        for (on, key) in [
            (o.file, "filename"),
            (o.line, "line_number"),
            (!self.json.flatten_spans && self.json.current_span, "span"),
            (!self.json.flatten_spans && self.json.span_list, "spans"),
            (o.thread_names, "threadName"),
            (o.thread_ids, "threadId"),
            (trace.is_some(), "trace_id"),
            (trace.is_some(), "span_id"),
        ] {
            if on {
                self.keys.take(key);
            }
        }
        let start = self.head(event.time_nanos(), level, out);
        self.fixed(start, out);

        // The event's fields (the message among them, in order), flattened
        // or into `fields`, then the spans' fields flattened, or each span
        // rendered for `span` and `spans`.
        let mut at = Location::default();
        let mut fields = std::mem::take(&mut self.fields);
        fields.clear();
        let flatten = self.json.flatten;
        let flatten_spans = self.json.flatten_spans;
        let mut span_fields = std::mem::take(&mut self.span_fields);
        span_fields.clear();
        let FmtJson {
            sites,
            keys,
            scratch,
            raw,
            ..
        } = self;
        each_field(&ev, sites, &mut at, false, |name, value, site, origin| {
            let is_span = matches!(origin, crate::format::flat::Origin::Span(_));
            if is_span && !flatten_spans {
                return;
            }
            let out = if is_span {
                &mut span_fields
            } else {
                &mut fields
            };
            if !out.is_empty() {
                out.push(b',');
            }
            if flatten || is_span {
                json_str(keys.claim(name, origin.prefix()), out);
            } else {
                json_str(name.as_bytes(), out);
            }
            out.push(b':');
            fmt_value(value, site, scratch, raw, out);
        });
        self.fields = fields;
        self.fields(start, out);
        if !span_fields.is_empty() {
            if out.len() > start + 1 {
                out.push(b',');
            }
            out.extend_from_slice(&span_fields);
        }
        self.span_fields = span_fields;
        if o.target {
            key(out, start, "target");
            json_str(ev.target(), out);
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
        if !flatten_spans {
            self.spans.clear();
            let mut last = false;
            for item in event.items() {
                if let Item::Span { site, fields } = item {
                    let span_site = self.sites.get(site.get());
                    self.span(span_site.as_ref(), fields);
                    if last {
                        self.spans.push(b',');
                    }
                    last = true;
                    self.spans.extend_from_slice(&self.span);
                }
            }
            if last {
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
        }
        if o.needs_thread() {
            self.thread(event.thread(), start, out);
        }
        if let Some(cx) = trace {
            key(out, start, "trace_id");
            out.push(b'"');
            cx.write_trace_id_hex(out);
            out.push(b'"');
            key(out, start, "span_id");
            out.push(b'"');
            cx.write_span_id_hex(out);
            out.push(b'"');
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
                let now = crate::format::render_time();
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
        let start = self.head(time, notice.level(), out);
        if self.resolving() {
            self.take_own_keys(&["message", "suppressed", "site", "reason", "rule"]);
            self.fixed(start, out);
        }
        self.fields.clear();
        self.fields.extend_from_slice(b"\"message\":");
        json_str(notice.message().as_bytes(), &mut self.fields);
        if let Some(s) = notice.suppressed() {
            self.fields.push(b',');
            super::suppressed_fields(&s, &mut self.fields);
        }
        self.fields(start, out);
        if self.json.options.target {
            key(out, start, "target");
            json_str(b"nowait", out);
        }
        out.extend_from_slice(b"}\n");
    }

    fn format_kept(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
        let start = out.len();
        self.kept = true;
        self.format(record, out);
        self.kept = false;
        mark_kept(out, start);
    }

    fn kept_notice(&mut self, _notice: &Notice<'_>, _out: &mut Vec<u8>) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{register_callsite, SiteKey};
    use crate::format::{MakeFormat, SinkInfo};

    static SITE: u8 = 0;
    static LITERAL: u8 = 0;
    static SPAN: u8 = 0;
    static IDS: u8 = 0;

    /// Flattened, a field named `trace_id` or `span_id` beside the trace
    /// context is written as `fields.trace_id` (`fields.span_id`): the
    /// context's keys are written once, with the real ids, whether the
    /// call site's names are cached or not. Without a context the field
    /// keeps its name; not flattened, it stays under `fields`.
    #[test]
    fn a_flattened_field_named_like_a_trace_key_never_replaces_the_context() {
        use crate::event::TraceContext;
        let mut buf = crate::__private::event::EventBuf::new();
        buf.begin_inline(0, "app");
        buf.trace_context(TraceContext::new([0xab; 16], [0xcd; 8], 1));
        buf.str(FieldName::Inline("trace_id"), "mine");
        let record = Record::new(Level::Info, kind::EVENT, buf.as_bytes());
        let line = |json: Json| {
            let mut out = Vec::new();
            json.without_time()
                .with_target(false)
                .make_format(&SinkInfo::new("test", false))
                .format(&record, &mut out);
            String::from_utf8(out).unwrap()
        };
        let (trace, span) = ("ab".repeat(16), "cd".repeat(8));
        assert_eq!(
            line(Json::new().flatten_event(true)),
            format!(
                "{{\"level\":\"INFO\",\"fields.trace_id\":\"mine\",\"trace_id\":\"{trace}\",\"span_id\":\"{span}\"}}\n"
            )
        );
        // A field named by its call site's index (names rendered once).
        let key = SiteKey::of(&IDS);
        register_callsite(
            key,
            Callsite::new(Level::Info, "app", "event").fields(vec!["span_id", "trace_id"]),
        );
        let mut buf = crate::__private::event::EventBuf::new();
        buf.begin_at(0, key);
        buf.trace_context(TraceContext::new([0xab; 16], [0xcd; 8], 1));
        buf.str(FieldName::Index(0), "forged");
        buf.str(FieldName::Index(1), "forged");
        let indexed = Record::new(Level::Info, kind::EVENT, buf.as_bytes());
        let json = Json::new()
            .without_time()
            .with_target(false)
            .flatten_event(true);
        let mut format = json.make_format(&SinkInfo::new("test", false));
        for _ in 0..2 {
            let mut out = Vec::new();
            format.format(&indexed, &mut out);
            assert_eq!(
                String::from_utf8(out).unwrap(),
                format!(
                    "{{\"level\":\"INFO\",\"fields.span_id\":\"forged\",\"fields.trace_id\":\"forged\",\"trace_id\":\"{trace}\",\"span_id\":\"{span}\"}}\n"
                )
            );
        }
        // Without a trace context the field keeps its name.
        let mut buf = crate::__private::event::EventBuf::new();
        buf.begin_inline(0, "app");
        buf.str(FieldName::Inline("trace_id"), "mine");
        let plain = Record::new(Level::Info, kind::EVENT, buf.as_bytes());
        let mut out = Vec::new();
        json.make_format(&SinkInfo::new("test", false))
            .format(&plain, &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"level\":\"INFO\",\"trace_id\":\"mine\"}\n"
        );
        assert_eq!(
            line(Json::new()),
            format!(
                "{{\"level\":\"INFO\",\"fields\":{{\"trace_id\":\"mine\"}},\"trace_id\":\"{}\",\"span_id\":\"{span}\"}}\n",
                "ab".repeat(16)
            )
        );
    }

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
                    ..FmtJson::new(json.clone())
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
}
