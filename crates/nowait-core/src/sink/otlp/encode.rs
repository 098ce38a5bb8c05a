//! OTLP's protobuf messages, written by hand: three wire types (varint,
//! 64-bit, length-delimited) are all the logs service needs.
//!
//! The format writes each record as one `ScopeLogs.log_records` field:
//! its tag, its length, and the `LogRecord`. Repeated fields concatenate
//! in protobuf, so a run of such fields is the tail of a `ScopeLogs`
//! message as it is, and the sink's buffer keeps one entry per record:
//! the writer's per-record accounting (what is written, what is dropped)
//! works unchanged, and the client ([`super::client`]) only puts the
//! request's envelope around the run it sends ([`Envelope`]).
//!
//! Field numbers are those of `opentelemetry/proto/logs/v1/logs.proto`,
//! `common/v1/common.proto` and `resource/v1/resource.proto` (OTLP 1.x).
//!
//! Strings must be valid UTF-8 in protobuf (receivers written in Go or
//! Python refuse the whole request otherwise): invalid sequences become
//! U+FFFD here. Nothing else is changed: the framing is by length, so a
//! value cannot break out of its field, and what a viewer does with the
//! characters of a value is the viewer's (as for a JSON value once parsed).

use std::borrow::Cow;
use std::sync::Arc;
use std::time::SystemTime;

use crate::event::{decode_field_name, Callsite, Event, Item, SiteCache, ThreadCache, Value};
use crate::format::{copy_into, is_message, message_with, system_nanos, Location, Resolved};
use crate::format::{Format, MakeFormat, SinkInfo};
use crate::level::Level;
use crate::record::{kind, Notice, Record};

/// Wire types.
const VARINT: u8 = 0;
const I64: u8 = 1;
const LEN: u8 = 2;
const I32: u8 = 5;

/// The tag of `ScopeLogs.log_records` (field 2, length-delimited): the
/// first byte of every entry the format writes.
pub(crate) const LOG_RECORD_TAG: u8 = tag(2, LEN);

const fn tag(field: u8, wire: u8) -> u8 {
    field << 3 | wire
}

pub(crate) fn varint(mut n: u64, out: &mut Vec<u8>) {
    while n >= 0x80 {
        out.push(n as u8 | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

pub(crate) fn varint_len(n: u64) -> usize {
    // 1 + floor(log2(n)) / 7, with 0 taking one byte.
    (64 - (n | 1).leading_zeros() as usize).div_ceil(7)
}

fn bytes_field(field: u8, bytes: &[u8], out: &mut Vec<u8>) {
    out.push(tag(field, LEN));
    varint(bytes.len() as u64, out);
    out.extend_from_slice(bytes);
}

fn fixed64_field(field: u8, n: u64, out: &mut Vec<u8>) {
    out.push(tag(field, I64));
    out.extend_from_slice(&n.to_le_bytes());
}

fn varint_field(field: u8, n: u64, out: &mut Vec<u8>) {
    out.push(tag(field, VARINT));
    varint(n, out);
}

/// Valid UTF-8 as it is; anything else with U+FFFD in place of the invalid
/// sequences.
fn utf8(bytes: &[u8]) -> Cow<'_, [u8]> {
    match std::str::from_utf8(bytes) {
        Ok(_) => Cow::Borrowed(bytes),
        Err(_) => Cow::Owned(String::from_utf8_lossy(bytes).into_owned().into_bytes()),
    }
}

/// An `AnyValue` of one of the scalar kinds.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Scalar<'a> {
    /// Bytes that may not be UTF-8 (from the ring): checked.
    Str(&'a [u8]),
    /// A `str`: UTF-8 by its type, sent without a check.
    Text(&'a str),
    Int(i64),
    Double(f64),
    Bool(bool),
}

impl Scalar<'_> {
    /// `AnyValue { string_value = 1 | bool_value = 2 | int_value = 3 | double_value = 4 }`.
    fn write(self, out: &mut Vec<u8>) {
        match self {
            Scalar::Str(s) => bytes_field(1, &utf8(s), out),
            Scalar::Text(s) => bytes_field(1, s.as_bytes(), out),
            Scalar::Bool(b) => varint_field(2, u64::from(b), out),
            Scalar::Int(n) => varint_field(3, n as u64, out),
            Scalar::Double(x) => fixed64_field(4, x.to_bits(), out),
        }
    }
}

/// Writes `KeyValue { key = 1; value = 2 (AnyValue) }` as field `field`
/// of the enclosing message, through `scratch` (for the lengths).
pub(crate) fn key_value(
    field: u8,
    key: &str,
    value: Scalar<'_>,
    scratch: &mut Vec<u8>,
    out: &mut Vec<u8>,
) {
    scratch.clear();
    value.write(scratch);
    let key = key.as_bytes();
    let inner = 1 + varint_len(key.len() as u64) + key.len();
    let inner = inner + 1 + varint_len(scratch.len() as u64) + scratch.len();
    out.push(tag(field, LEN));
    varint(inner as u64, out);
    bytes_field(1, key, out);
    bytes_field(2, scratch, out);
}

/// OTLP's `SeverityNumber` for a level (the first of each range).
pub(crate) fn severity_number(level: Level) -> u64 {
    match level {
        Level::Trace => 1,
        Level::Debug => 5,
        Level::Info => 9,
        Level::Warn => 13,
        Level::Error => 17,
    }
}

/// The request's envelope around a run of `log_records` fields:
/// `ExportLogsServiceRequest { resource_logs = 1: ResourceLogs { resource
/// = 1; scope_logs = 2: ScopeLogs { scope = 1; log_records = 2... } } }`.
/// The resource and scope are encoded once, when the sink is built.
#[derive(Debug, Clone)]
pub(crate) struct Envelope {
    /// `ResourceLogs.resource` as a whole field (tag, length, message).
    resource: Vec<u8>,
    /// `ScopeLogs.scope` as a whole field.
    scope: Vec<u8>,
}

impl Envelope {
    pub(crate) fn new(attributes: &[(String, String)]) -> Envelope {
        let (mut scratch, mut body) = (Vec::new(), Vec::new());
        for (k, v) in attributes {
            // Resource { attributes = 1 }
            key_value(1, k, Scalar::Text(v), &mut scratch, &mut body);
        }
        let mut resource = Vec::new();
        bytes_field(1, &body, &mut resource);
        // InstrumentationScope { name = 1; version = 2 }
        let mut scope_body = Vec::new();
        bytes_field(1, b"nowait", &mut scope_body);
        bytes_field(2, env!("CARGO_PKG_VERSION").as_bytes(), &mut scope_body);
        let mut scope = Vec::new();
        bytes_field(1, &scope_body, &mut scope);
        Envelope { resource, scope }
    }

    /// The request around `records` (a run of whole `log_records` fields).
    pub(crate) fn wrap(&self, records: &[u8], out: &mut Vec<u8>) {
        let scope_logs = self.scope.len() + records.len();
        let resource_logs = self.resource.len() + 1 + varint_len(scope_logs as u64) + scope_logs;
        out.reserve(resource_logs + 16);
        out.push(tag(1, LEN));
        varint(resource_logs as u64, out);
        out.extend_from_slice(&self.resource);
        out.push(tag(2, LEN));
        varint(scope_logs as u64, out);
        out.extend_from_slice(&self.scope);
        out.extend_from_slice(records);
    }
}

/// The length of the `log_records` field at the start of `buf` (tag,
/// length and record), if `buf` starts with a whole one.
pub(crate) fn entry_len(buf: &[u8]) -> Option<usize> {
    if buf.first() != Some(&LOG_RECORD_TAG) {
        return None;
    }
    let mut len = 0u64;
    for (i, &b) in buf[1..].iter().enumerate().take(10) {
        len |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            let total = 1 + i + 1 + usize::try_from(len).ok()?;
            return (total <= buf.len()).then_some(total);
        }
    }
    None
}

/// Reads a varint at the start of `buf`: its value and length.
pub(crate) fn read_varint(buf: &[u8]) -> Option<(u64, usize)> {
    let mut n = 0u64;
    for (i, &b) in buf.iter().enumerate().take(10) {
        n |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            return Some((n, i + 1));
        }
    }
    None
}

/// Walks the fields of a message: `(field, wire type, value)`, where the
/// value is the varint or the bytes of a length-delimited field (64- and
/// 32-bit fields give their bytes). `None` at the first malformed field.
pub(crate) fn fields(mut buf: &[u8]) -> impl Iterator<Item = Option<(u64, u8, u64, &[u8])>> {
    std::iter::from_fn(move || {
        if buf.is_empty() {
            return None;
        }
        let Some((key, n)) = read_varint(buf) else {
            buf = &[];
            return Some(None);
        };
        buf = &buf[n..];
        let (field, wire) = (key >> 3, (key & 7) as u8);
        let item = match wire {
            0 => read_varint(buf).map(|(v, n)| {
                buf = &buf[n..];
                (field, wire, v, &[][..])
            }),
            1 | 5 => {
                let n = if wire == 1 { 8 } else { 4 };
                (buf.len() >= n).then(|| {
                    let (v, rest) = buf.split_at(n);
                    buf = rest;
                    (field, wire, 0, v)
                })
            }
            2 => read_varint(buf).and_then(|(len, n)| {
                let len = usize::try_from(len).ok()?;
                let end = n.checked_add(len).filter(|&e| e <= buf.len())?;
                let v = &buf[n..end];
                buf = &buf[end..];
                Some((field, wire, len as u64, v))
            }),
            _ => None,
        };
        if item.is_none() {
            buf = &[];
        }
        Some(item)
    })
}

// === impl OtlpFormat ===

/// The format of every OTLP sink: each record a `LogRecord`, in a
/// `ScopeLogs.log_records` field (see the module docs).
#[derive(Debug, Clone, Copy)]
pub(crate) struct MakeOtlp;

impl MakeFormat for MakeOtlp {
    fn make_format(&self, _sink: &SinkInfo) -> Box<dyn Format> {
        Box::<OtlpFormat>::default()
    }

    /// `thread.name` is an attribute of every record.
    fn needs_thread(&self) -> bool {
        true
    }

    /// `code.filepath` and `code.lineno` too.
    fn needs_location(&self) -> bool {
        true
    }
}

/// The per-sink state: call-site and thread caches, reused buffers.
#[derive(Debug, Default)]
pub(crate) struct OtlpFormat {
    sites: SiteCache,
    threads: ThreadCache,
    scratch: (String, String),
    /// The record being written (its length goes before it).
    rec: Vec<u8>,
    /// The attributes, written while the items are walked.
    attrs: Vec<u8>,
    /// The message, rendered.
    msg: Vec<u8>,
    /// A value's `AnyValue`, for its length.
    val: Vec<u8>,
    /// A rendered value (deferred arguments, characters, big integers).
    text: Vec<u8>,
}

/// A record's trace context: `LogRecord.trace_id`, `span_id` and `flags`,
/// each written if known.
#[derive(Clone, Copy, Debug, Default)]
struct Ids {
    trace: Option<[u8; 16]>,
    span: Option<[u8; 8]>,
    flags: Option<u8>,
}

/// A trace or span id from a field of that name: its hex text as bytes, if
/// it is `N` bytes of hex (all zeros is "no id" in OTLP, kept as it is).
fn hex_id<const N: usize>(value: Value<'_>) -> Option<[u8; N]> {
    let (Value::Str(s) | Value::Rendered(s)) = value else {
        return None;
    };
    if s.len() != 2 * N {
        return None;
    }
    let mut id = [0u8; N];
    for (i, pair) in s.chunks_exact(2).enumerate() {
        let hi = (pair[0] as char).to_digit(16)?;
        let lo = (pair[1] as char).to_digit(16)?;
        id[i] = (hi << 4 | lo) as u8;
    }
    Some(id)
}

impl OtlpFormat {
    /// One attribute from a field; `trace_id` and `span_id` in hex are
    /// taken as the record's ids instead, unless `ids` came from the
    /// event's trace context (`from_context`), which wins: the field is
    /// then an attribute of that name, and the ids stay the context's.
    fn attribute(
        &mut self,
        name: &str,
        value: Value<'_>,
        site: Option<&Arc<Callsite>>,
        (ids, from_context): (&mut Ids, bool),
    ) {
        match name {
            _ if from_context => {}
            "trace_id" => {
                if let Some(id) = hex_id::<16>(value) {
                    ids.trace = Some(id);
                    return;
                }
            }
            "span_id" => {
                if let Some(id) = hex_id::<8>(value) {
                    ids.span = Some(id);
                    return;
                }
            }
            _ => {}
        }
        let scalar = match value {
            Value::I64(n) => Scalar::Int(n),
            Value::U64(n) if i64::try_from(n).is_ok() => Scalar::Int(n as i64),
            Value::F64(x) => Scalar::Double(x),
            Value::Bool(b) => Scalar::Bool(b),
            Value::Str(s) | Value::Rendered(s) => Scalar::Str(s),
            Value::Char(c) => {
                let mut b = [0u8; 4];
                let s = c.encode_utf8(&mut b);
                key_value(6, name, Scalar::Text(s), &mut self.val, &mut self.attrs);
                return;
            }
            other => {
                // Integers past i64 (as decimal text) and deferred
                // arguments: their text.
                self.text.clear();
                message_with(other, site, &mut self.text, &mut self.scratch, copy_into);
                let text = std::mem::take(&mut self.text);
                key_value(6, name, Scalar::Str(&text), &mut self.val, &mut self.attrs);
                self.text = text;
                return;
            }
        };
        // LogRecord { attributes = 6 }
        key_value(6, name, scalar, &mut self.val, &mut self.attrs);
    }

    /// The attribute `target = "nowait"`: a notice, or an event that could
    /// not be read, is nowait's own record.
    fn nowait_target(&mut self) {
        key_value(
            6,
            "target",
            Scalar::Text("nowait"),
            &mut self.val,
            &mut self.attrs,
        );
    }

    /// The record's fields, around the attributes gathered in `self.attrs`
    /// and the message in `self.msg`, as one `log_records` entry.
    fn finish(&mut self, time: u64, observed: u64, level: Level, ids: Ids, out: &mut Vec<u8>) {
        let rec = &mut self.rec;
        rec.clear();
        if time != 0 {
            fixed64_field(1, time, rec);
        }
        varint_field(2, severity_number(level), rec);
        bytes_field(3, level.as_str().as_bytes(), rec);
        // body = 5: AnyValue { string_value = 1 }
        self.val.clear();
        bytes_field(1, &utf8(&self.msg), &mut self.val);
        bytes_field(5, &self.val, rec);
        rec.extend_from_slice(&self.attrs);
        if let Some(flags) = ids.flags {
            // flags = 8 (fixed32): the W3C trace flags in the low byte.
            rec.push(tag(8, I32));
            rec.extend_from_slice(&u32::from(flags).to_le_bytes());
        }
        if let Some(id) = ids.trace {
            bytes_field(9, &id, rec);
        }
        if let Some(id) = ids.span {
            bytes_field(10, &id, rec);
        }
        fixed64_field(11, observed, rec);
        out.push(LOG_RECORD_TAG);
        varint(rec.len() as u64, out);
        out.extend_from_slice(rec);
    }

    fn event(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
        let observed = system_nanos(SystemTime::now());
        self.attrs.clear();
        self.msg.clear();
        let mut ids = Ids::default();
        let Some(event) = Event::parse(record.payload()) else {
            self.msg.extend_from_slice(b"<malformed event>");
            self.nowait_target();
            return self.finish(observed, observed, record.level(), ids, out);
        };
        // The span the event was logged in. Its ids win over fields named
        // `trace_id` and `span_id` (a request header logged under that
        // name cannot forge the correlation); without one, hex fields of
        // those names give the ids.
        let from_context = event.trace_context().is_some();
        if let Some(cx) = event.trace_context() {
            ids = Ids {
                trace: Some(cx.trace_id()),
                span: Some(cx.span_id()),
                flags: Some(cx.flags()),
            };
        }
        let site = event.site().and_then(|k| self.sites.get(k.get()));
        let ev = Resolved { site, event };
        let mut location = Location::default();
        let mut message = None;
        // Event fields first, then span fields, outermost span first.
        let mut spans = Vec::new();
        for item in event.items() {
            match item {
                Item::Field { name, value } => {
                    let name = ev.name_of(name);
                    if location.take(ev.site.is_some(), name, value) {
                        continue;
                    }
                    if message.is_none() && is_message(name) {
                        message = Some(value);
                        continue;
                    }
                    self.attribute(name, value, ev.site.as_ref(), (&mut ids, from_context));
                }
                Item::Malformed => {
                    let mut val = std::mem::take(&mut self.val);
                    key_value(
                        6,
                        "nowait.malformed",
                        Scalar::Bool(true),
                        &mut val,
                        &mut self.attrs,
                    );
                    self.val = val;
                }
                Item::Span { site, fields } => spans.push((site, fields)),
            }
        }
        for (site, fields) in spans {
            let span_site = self.sites.get(site.get());
            for f in fields.items() {
                if let Item::Field { name, value } = f {
                    let name = decode_field_name(name, span_site.as_ref());
                    self.attribute(name, value, span_site.as_ref(), (&mut ids, from_context));
                }
            }
        }
        if let Some(value) = message {
            let mut msg = std::mem::take(&mut self.msg);
            message_with(
                value,
                ev.site.as_ref(),
                &mut msg,
                &mut self.scratch,
                copy_into,
            );
            self.msg = msg;
        }
        let mut val = std::mem::take(&mut self.val);
        let target = ev.target();
        if !target.is_empty() {
            key_value(6, "target", Scalar::Str(target), &mut val, &mut self.attrs);
        }
        let at = location.of(ev.site.as_deref());
        if let Some(file) = at.file {
            key_value(
                6,
                "code.filepath",
                Scalar::Str(file),
                &mut val,
                &mut self.attrs,
            );
        }
        if let Some(line) = at.line {
            key_value(
                6,
                "code.lineno",
                Scalar::Int(line as i64),
                &mut val,
                &mut self.attrs,
            );
        }
        if let Some(info) = event.thread().and_then(|n| self.threads.get(n)) {
            let name = info.name.as_deref().unwrap_or(&info.id);
            key_value(
                6,
                "thread.name",
                Scalar::Text(name),
                &mut val,
                &mut self.attrs,
            );
        }
        self.val = val;
        self.finish(event.time_nanos(), observed, record.level(), ids, out);
    }
}

impl Format for OtlpFormat {
    fn format(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
        if record.kind() == kind::EVENT {
            return self.event(record, out);
        }
        let now = system_nanos(SystemTime::now());
        self.attrs.clear();
        self.msg.clear();
        if record.kind() == kind::TEXT {
            self.msg.extend_from_slice(record.payload());
        } else {
            self.msg
                .extend_from_slice(format!("<kind {} record>", record.kind()).as_bytes());
        }
        let ids = Ids::default();
        self.finish(now, now, record.level(), ids, out);
    }

    /// A notice is a record of target `nowait`, so that a receiver sees the
    /// gaps reported where they are.
    fn notice(&mut self, notice: &Notice<'_>, out: &mut Vec<u8>) {
        let time = system_nanos(notice.time());
        self.attrs.clear();
        self.msg.clear();
        self.msg.extend_from_slice(notice.message().as_bytes());
        self.nowait_target();
        if let Some(s) = notice.suppressed() {
            let count = i64::try_from(s.count()).unwrap_or(i64::MAX);
            for (name, value) in [
                ("suppressed", Scalar::Int(count)),
                ("site", Scalar::Text(s.site())),
                ("reason", Scalar::Text(s.reason().as_str())),
                ("rule", Scalar::Text(s.rule())),
            ] {
                key_value(6, name, value, &mut self.val, &mut self.attrs);
            }
        }
        let ids = Ids::default();
        self.finish(
            time,
            system_nanos(SystemTime::now()),
            notice.level(),
            ids,
            out,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_match_the_spec_examples() {
        for (n, want) in [
            (0u64, &[0u8][..]),
            (1, &[1]),
            (150, &[0x96, 0x01]),
            (300, &[0xac, 0x02]),
            (
                u64::MAX,
                &[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
            ),
        ] {
            let mut out = Vec::new();
            varint(n, &mut out);
            assert_eq!(out, want, "{n}");
            assert_eq!(varint_len(n), want.len(), "{n}");
            assert_eq!(read_varint(&out), Some((n, want.len())));
        }
    }

    #[test]
    fn a_text_record_is_one_whole_log_records_entry() {
        let mut f = OtlpFormat::default();
        let mut out = Vec::new();
        f.format(
            &Record::new(Level::Warn, kind::TEXT, b"disk \xff full"),
            &mut out,
        );
        assert_eq!(entry_len(&out), Some(out.len()));
        // Cut anywhere, it is not whole.
        assert_eq!(entry_len(&out[..out.len() - 1]), None);
        let body = &out[1 + read_varint(&out[1..]).unwrap().1..];
        let got: Vec<_> = fields(body).map(Option::unwrap).collect();
        let numbers: Vec<u64> = got.iter().map(|f| f.0).collect();
        assert_eq!(numbers, [1, 2, 3, 5, 11]);
        assert_eq!(got[1].2, 13, "WARN is severity 13");
        assert_eq!(got[2].3, b"WARN");
        // The body's string, invalid UTF-8 replaced.
        let body: Vec<_> = fields(got[3].3).map(Option::unwrap).collect();
        assert_eq!(body[0].3, "disk \u{fffd} full".as_bytes());
    }

    #[test]
    fn the_envelope_nests_the_records_with_the_right_lengths() {
        let env = Envelope::new(&[("service.name".into(), "web".into())]);
        let mut f = OtlpFormat::default();
        let mut records = Vec::new();
        f.format(&Record::new(Level::Info, kind::TEXT, b"a"), &mut records);
        f.format(&Record::new(Level::Info, kind::TEXT, b"b"), &mut records);
        let mut req = Vec::new();
        env.wrap(&records, &mut req);
        let top: Vec<_> = fields(&req).map(Option::unwrap).collect();
        assert_eq!(top.len(), 1);
        let rl: Vec<_> = fields(top[0].3).map(Option::unwrap).collect();
        assert_eq!((rl[0].0, rl[1].0), (1, 2));
        let sl: Vec<_> = fields(rl[1].3).map(Option::unwrap).collect();
        let numbers: Vec<u64> = sl.iter().map(|f| f.0).collect();
        assert_eq!(numbers, [1, 2, 2]);
    }

    #[test]
    fn a_suppression_notice_carries_its_count_site_reason_and_rule_as_attributes() {
        let mut f = OtlpFormat::default();
        let mut out = Vec::new();
        let info = crate::record::Suppressed::new(
            41230,
            "src/db.rs:88",
            crate::record::SuppressReason::RateLimit,
            "1 per 1s",
        );
        let notice =
            Notice::new(Level::Info, SystemTime::UNIX_EPOCH, "suppressed").with_suppressed(info);
        f.notice(&notice, &mut out);
        let body = &out[1 + read_varint(&out[1..]).unwrap().1..];
        let attrs: Vec<(Vec<u8>, Vec<u8>)> = fields(body)
            .map(Option::unwrap)
            .filter(|f| f.0 == 6)
            .map(|kv| {
                let kv: Vec<_> = fields(kv.3).map(Option::unwrap).collect();
                let value: Vec<_> = fields(kv[1].3).map(Option::unwrap).collect();
                let v = if value[0].0 == 3 {
                    value[0].2.to_string().into_bytes()
                } else {
                    value[0].3.to_vec()
                };
                (kv[0].3.to_vec(), v)
            })
            .collect();
        let want: Vec<(Vec<u8>, Vec<u8>)> = [
            ("target", "nowait"),
            ("suppressed", "41230"),
            ("site", "src/db.rs:88"),
            ("reason", "rate_limit"),
            ("rule", "1 per 1s"),
        ]
        .iter()
        .map(|(k, v)| (k.as_bytes().to_vec(), v.as_bytes().to_vec()))
        .collect();
        assert_eq!(attrs, want);
    }

    #[test]
    fn ids_come_from_hex_fields_of_the_right_length() {
        assert_eq!(
            hex_id::<8>(Value::Str(b"00f067aa0ba902b7")),
            Some([0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7])
        );
        assert_eq!(hex_id::<8>(Value::Str(b"00f067aa0ba902b")), None);
        assert_eq!(hex_id::<8>(Value::Str(b"00f067aa0ba902bz")), None);
        assert_eq!(hex_id::<8>(Value::U64(7)), None);
    }

    #[test]
    fn the_trace_context_gives_trace_id_span_id_and_flags() {
        let cx = crate::event::TraceContext::new([0xab; 16], [0xcd; 8], 1);
        let mut buf = crate::__private::event::EventBuf::new();
        buf.begin_inline(1, "t");
        buf.trace_context(cx);
        let mut f = OtlpFormat::default();
        let mut out = Vec::new();
        f.format(
            &Record::new(Level::Info, kind::EVENT, buf.as_bytes()),
            &mut out,
        );
        let body = &out[1 + read_varint(&out[1..]).unwrap().1..];
        let got: Vec<_> = fields(body).map(Option::unwrap).collect();
        let find = |n: u64| got.iter().find(|f| f.0 == n).map(|f| (f.1, f.3));
        assert_eq!(find(8), Some((I32, &[1, 0, 0, 0][..])), "flags, fixed32");
        assert_eq!(find(9), Some((LEN, &[0xab; 16][..])));
        assert_eq!(find(10), Some((LEN, &[0xcd; 8][..])));
        // Without one: none of the three.
        buf.begin_inline(1, "t");
        out.clear();
        f.format(
            &Record::new(Level::Info, kind::EVENT, buf.as_bytes()),
            &mut out,
        );
        let body = &out[1 + read_varint(&out[1..]).unwrap().1..];
        assert!(fields(body).all(|f| !matches!(f.unwrap().0, 8..=10)));
    }

    /// The event's trace context wins over fields named `trace_id` and
    /// `span_id`, hex or not: they stay attributes, the record's ids are
    /// the context's. Without a context, hex fields of those names give
    /// the ids.
    #[test]
    fn the_trace_context_wins_over_fields_of_its_names() {
        let record_fields = |with_context: bool| {
            let mut buf = crate::__private::event::EventBuf::new();
            buf.begin_inline(1, "t");
            if with_context {
                buf.trace_context(crate::event::TraceContext::new([0xab; 16], [0xcd; 8], 1));
            }
            buf.str(
                crate::event::FieldName::Inline("trace_id"),
                &"11".repeat(16),
            );
            buf.str(crate::event::FieldName::Inline("span_id"), &"22".repeat(8));
            let mut out = Vec::new();
            OtlpFormat::default().format(
                &Record::new(Level::Info, kind::EVENT, buf.as_bytes()),
                &mut out,
            );
            let body = out[1 + read_varint(&out[1..]).unwrap().1..].to_vec();
            let got: Vec<(u64, Vec<u8>)> = fields(&body)
                .map(Option::unwrap)
                .map(|f| (f.0, f.3.to_vec()))
                .collect();
            got
        };
        let find = |got: &[(u64, Vec<u8>)], n: u64| {
            got.iter()
                .filter(|f| f.0 == n)
                .map(|f| f.1.clone())
                .collect::<Vec<_>>()
        };
        let got = record_fields(true);
        assert_eq!(find(&got, 9), [vec![0xab; 16]]);
        assert_eq!(find(&got, 10), [vec![0xcd; 8]]);
        // Attributes (6) named like the ids: the fields, kept.
        let named = |got: &[(u64, Vec<u8>)], name: &[u8]| {
            find(got, 6)
                .iter()
                .filter(|a| a.windows(name.len()).any(|w| w == name))
                .count()
        };
        assert_eq!((named(&got, b"trace_id"), named(&got, b"span_id")), (1, 1));
        let got = record_fields(false);
        assert_eq!(find(&got, 9), [vec![0x11; 16]]);
        assert_eq!(find(&got, 10), [vec![0x22; 8]]);
        assert_eq!((named(&got, b"trace_id"), named(&got, b"span_id")), (0, 0));
    }
}
