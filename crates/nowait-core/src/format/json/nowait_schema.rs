//! nowait's own JSON schema ([`JsonSchema::Nowait`](super::JsonSchema::Nowait)):
//! all six keys on every line, the message apart from the fields.

use super::{json_str, mark_kept};
use crate::event::{decode_field_name, Event, Item, SiteCache, Value};
use crate::format::{
    copy_into, is_message, message_with, system_nanos, Clock, Format, Location, Resolved,
};
use crate::level::Level;
use crate::record::{kind, Notice, Record};

/// The per-sink state of [`JsonSchema::Nowait`].
#[derive(Debug, Default)]
pub(super) struct NowaitJson {
    sites: SiteCache,
    clock: Clock,
    scratch: (String, String),
    msg: Vec<u8>,
    /// Rendered during the single pass over an event's items.
    fields: Vec<u8>,
    spans: Vec<u8>,
}

impl NowaitJson {
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
            let now = crate::format::render_time();
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
        out.push(b']');
        if let Some(cx) = event.trace_context() {
            out.extend_from_slice(b",\"trace_id\":\"");
            cx.write_trace_id_hex(out);
            out.extend_from_slice(b"\",\"span_id\":\"");
            cx.write_span_id_hex(out);
            out.push(b'"');
        }
        out.extend_from_slice(b"}\n");
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
        Value::F64(x) if x.is_finite() => crate::text::float::write_debug(x, out),
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

impl Format for NowaitJson {
    fn format(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
        match record.kind() {
            kind::EVENT => self.event(record, out),
            k => {
                let now = crate::format::render_time();
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
        out.extend_from_slice(b",\"fields\":{");
        if let Some(s) = notice.suppressed() {
            super::suppressed_fields(&s, out);
        }
        out.extend_from_slice(b"},\"spans\":[]}\n");
    }

    fn format_kept(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
        let start = out.len();
        self.format(record, out);
        mark_kept(out, start);
    }

    fn kept_notice(&mut self, _notice: &Notice<'_>, _out: &mut Vec<u8>) {}
}
