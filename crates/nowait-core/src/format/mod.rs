//! The formats the writer thread renders records with: [`Text`] (close to
//! `tracing-subscriber`'s default) and [`Json`] (one object per line).

mod json;
mod syslog;
mod text;

pub use json::Json;
pub(crate) use syslog::Framing;
pub use syslog::{Facility, Syslog};
pub use text::Text;

use std::sync::Arc;

use crate::event::{Callsite, Event, Value};
use crate::record::escape_into;
use crate::timefmt;

/// Per-second cache of the `YYYY-MM-DDTHH:MM:SS` prefix: formatting a
/// timestamp costs a comparison and six digits, not a calendar conversion.
#[derive(Debug, Default)]
pub(crate) struct TimeCache {
    second: Option<u64>,
    prefix: Vec<u8>,
}

impl TimeCache {
    /// Appends `YYYY-MM-DDTHH:MM:SS.ffffffZ` for `nanos` since the epoch.
    pub(crate) fn write(&mut self, nanos: u64, out: &mut Vec<u8>) {
        let second = nanos / 1_000_000_000;
        if self.second != Some(second) {
            self.prefix.clear();
            let time = std::time::UNIX_EPOCH + std::time::Duration::from_secs(second);
            timefmt::write_rfc3339_micros(time, &mut self.prefix);
            self.prefix.truncate(19);
            self.second = Some(second);
        }
        out.extend_from_slice(&self.prefix);
        let micros = (nanos / 1_000 % 1_000_000) as u32;
        let mut digits = [b'.', b'0', b'0', b'0', b'0', b'0', b'0', b'Z'];
        let mut v = micros;
        for d in digits[1..7].iter_mut().rev() {
            *d = b'0' + (v % 10) as u8;
            v /= 10;
        }
        out.extend_from_slice(&digits);
    }
}

pub(crate) fn system_nanos(time: std::time::SystemTime) -> u64 {
    time.duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

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
            let (msg, tmp) = scratch;
            msg.clear();
            match site.and_then(|s| s.pieces()) {
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
        Value::U64(n) => out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes()),
        Value::I64(n) => out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes()),
        Value::F64(x) => {
            let _ = write!(out, "{x:?}");
        }
        Value::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
        Value::Char(c) => {
            let _ = write!(out, "{c:?}");
        }
        Value::Str(s) | Value::Rendered(s) => escape_into(s, out),
        Value::Args(_) => out.extend_from_slice(b"<args>"),
    }
}
