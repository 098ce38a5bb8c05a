//! An event as every format reads it, and the rules they share for its
//! fields.
//!
//! * [`Resolved`]: the event with its call site, which names its target
//!   and its fields.
//! * [`Location`]: the source file and line, from the call site, or from
//!   the location fields of an event without one (those fields are then
//!   not printed as fields).
//! * The message: the field named `message` ([`is_message`]), rendered by
//!   [`message_with`], which formats a deferred message and hands the text
//!   to the caller's escaping exactly once.
//! * [`renamed_trace_key`]: a field that would clash with the trace
//!   context's own keys is written under another key, so each key appears
//!   once on a line and the context's id cannot be forged.
//! * [`scalar_text`]: numbers, booleans and characters as `Debug` prints
//!   them, strings escaped.

use std::sync::Arc;

use super::escape::escape_into;
use crate::event::{Callsite, Event, Value};
use crate::text::digits::push_u64;
use crate::text::float;

/// An event's parts resolved against the call-site registry.
pub(crate) struct Resolved<'a> {
    pub(crate) site: Option<Arc<Callsite>>,
    pub(crate) event: Event<'a>,
}

impl<'a> Resolved<'a> {
    pub(crate) fn target(&self) -> &[u8] {
        match (&self.site, self.event.target_bytes()) {
            (Some(site), _) => site.target().as_bytes(),
            (None, Some(t)) => t,
            (None, None) => b"?",
        }
    }

    pub(crate) fn name_of(&self, name: crate::event::FieldName<'a>) -> &str {
        crate::event::decode_field_name(name, self.site.as_ref())
    }
}

/// The key under which a field named like one of the trace context's own
/// keys (`trace_id`, `span_id`) is written when the line also writes the
/// context's: `fields.trace_id`, `fields.span_id`, where an unflattened
/// JSON line keeps it (`"fields":{"trace_id":…}`). `None` for any other
/// name. The context's key is then written once, with the real id: a
/// field (a request header logged as `trace_id`, say) can neither replace
/// the id nor make a line that holds the key twice.
pub(crate) fn renamed_trace_key(name: &str) -> Option<&'static str> {
    match name {
        "trace_id" => Some("fields.trace_id"),
        "span_id" => Some("fields.span_id"),
        _ => None,
    }
}

/// A source location that an event without call site carries as fields
/// (see [`LOCATION_FILE`](crate::__private::event::LOCATION_FILE)).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Location<'a> {
    pub(crate) file: Option<&'a [u8]>,
    pub(crate) line: Option<u64>,
}

impl<'a> Location<'a> {
    /// Keeps the field if it is a location field (only events without call
    /// site have them); whether it was one.
    pub(crate) fn take(&mut self, has_site: bool, name: &str, value: Value<'a>) -> bool {
        if has_site {
            return false;
        }
        match (name, value) {
            (crate::event::LOCATION_FILE, Value::Str(s)) => self.file = Some(s),
            (crate::event::LOCATION_LINE, Value::U64(n)) => self.line = Some(n),
            _ => return false,
        }
        true
    }

    /// The event's location: its call site's, or the fields'.
    pub(crate) fn of(self, site: Option<&'a Callsite>) -> Location<'a> {
        match site {
            Some(s) => Location {
                file: s.file().map(str::as_bytes),
                line: s.line().map(u64::from),
            },
            None => self,
        }
    }
}

/// Whether a field is the event's message (by `tracing` convention, the
/// field named `message`).
pub(crate) fn is_message(name: &str) -> bool {
    name == "message"
}

/// Renders a message value (a deferred format is formatted here), handing
/// the text to `emit`: `escape_into` for text, a plain copy for JSON, which
/// escapes the whole message afterwards.
pub(crate) fn message_with(
    value: Value<'_>,
    site: Option<&Arc<Callsite>>,
    out: &mut Vec<u8>,
    scratch: &mut (String, String),
    emit: fn(&[u8], &mut Vec<u8>),
) {
    match value {
        Value::Str(s) | Value::Rendered(s) => emit(s, out),
        Value::Args(args) => {
            let pieces = site.and_then(|s| s.pieces());
            // A message without placeholders goes straight to `emit`.
            if let Some(text) = pieces.and_then(|p| p.literal()).filter(|_| args.is_empty()) {
                return emit(text.as_bytes(), out);
            }
            let (msg, tmp) = scratch;
            msg.clear();
            match pieces {
                Some(pieces) => pieces.render(args.iter(), msg, tmp),
                None => msg.push_str("<no format>"),
            }
            emit(msg.as_bytes(), out);
        }
        other => scalar_text(other, out),
    }
}

/// Appends bytes as they are (see [`message_with`]).
pub(crate) fn copy_into(bytes: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(bytes);
}

/// Numbers, booleans and characters as `Debug` prints them (which is what
/// `tracing-subscriber` shows).
pub(crate) fn scalar_text(value: Value<'_>, out: &mut Vec<u8>) {
    use std::io::Write as _;
    match value {
        Value::U64(n) => push_u64(n, out),
        Value::I64(n) => {
            if n < 0 {
                out.push(b'-');
            }
            push_u64(n.unsigned_abs(), out);
        }
        Value::F64(x) => float::write_debug(x, out),
        Value::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
        Value::Char(c) => {
            let _ = write!(out, "{c:?}");
        }
        Value::Str(s) | Value::Rendered(s) => escape_into(s, out),
        Value::Args(_) => out.extend_from_slice(b"<args>"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalar_text_prints_signed_integers_as_display() {
        let mut out = Vec::new();
        scalar_text(Value::I64(i64::MIN), &mut out);
        scalar_text(Value::I64(-7), &mut out);
        scalar_text(Value::I64(0), &mut out);
        assert_eq!(out, format!("{}-70", i64::MIN).as_bytes());
    }
}
