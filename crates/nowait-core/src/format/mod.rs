//! Formats: the contract between the writer thread and the bytes a sink
//! receives, and nowait's own formats.
//!
//! * The contract: a [`MakeFormat`] makes one [`Format`] per sink when the
//!   logger is built, told what the sink is ([`SinkInfo`]); the writer
//!   thread then hands it each [`Record`] and [`Notice`] and writes what
//!   it appends. [`escape_into`] is the escaping every text format uses.
//! * The formats: [`Plain`] (text records only), [`Text`] (close to
//!   `tracing-subscriber`'s default), [`Json`] (one object per line:
//!   `tracing-subscriber`'s schema, nowait's, and the layouts Elastic
//!   ([`Json::ecs`]) and Google Cloud Logging ([`Json::cloud_logging`])
//!   ingest as is), [`Logfmt`], [`Syslog`] and [`Journald`] (framing for
//!   those receivers). `Text`, `Json` and `Logfmt` share their common
//!   builder options (`options`) as `tracing-subscriber`'s
//!   `fmt::format::Format` does, and the flattened layouts one rule for
//!   their keys (`flat`): every key once, no field dropped.

mod escape;
mod fixed;
mod flat;
pub(crate) mod journald;
mod json;
mod logfmt;
mod options;
mod plain;
mod syslog;
mod text;

pub use escape::escape_into;
pub(crate) use escape::{append, is_bidi_control, plain_len};
pub use journald::Journald;
pub use json::{Json, JsonSchema};
pub use logfmt::Logfmt;
pub(crate) use options::Options;
pub use options::Timer;
pub use plain::Plain;
pub(crate) use syslog::Framing;
pub use syslog::{Facility, Syslog};
pub use text::Text;

use std::collections::HashMap;
use std::fmt;
use std::hash::BuildHasherDefault;
use std::sync::Arc;

use crate::event::{Callsite, Event, KeyHasher, Value};
use crate::record::{Notice, Record};
use crate::text::{float, time};

// === the contract ===

/// What a sink is, as far as a [`Format`] needs to know (for example, to
/// decide on ANSI colours).
///
/// # Examples
///
/// ```
/// let info = nowait_core::format::SinkInfo::new("stdout", true);
/// assert!(info.is_terminal());
/// ```
#[derive(Clone, Debug)]
pub struct SinkInfo {
    name: String,
    terminal: bool,
}

impl SinkInfo {
    /// Describes a sink.
    ///
    /// # Examples
    ///
    /// ```
    /// let info = nowait_core::format::SinkInfo::new("file:/var/log/app.log", false);
    /// assert_eq!(info.name(), "file:/var/log/app.log");
    /// ```
    pub fn new(name: impl Into<String>, terminal: bool) -> Self {
        SinkInfo {
            name: name.into(),
            terminal,
        }
    }

    /// The sink's name as shown in notices and [`Stats`](crate::accounting::stats::Stats).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(nowait_core::format::SinkInfo::new("stderr", false).name(), "stderr");
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the sink is a terminal (a tty), where colours may be used.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(!nowait_core::format::SinkInfo::new("file:x", false).is_terminal());
    /// ```
    pub fn is_terminal(&self) -> bool {
        self.terminal
    }
}

/// Turns records into bytes on the writer thread.
///
/// Each sink owns one `Format` (made by a [`MakeFormat`]), so a terminal can
/// get colours while a file gets plain text or JSON. Implementations must
/// append exactly one line per record and per notice, ending in `\n`, and
/// escape control characters so that no payload can forge a second line or a
/// terminal escape.
///
/// # Examples
///
/// ```
/// use nowait_core::format::Format;
/// use nowait_core::record::{Notice, Record};
///
/// struct Upper;
/// impl Format for Upper {
///     fn format(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
///         nowait_core::format::escape_into(record.payload(), out);
///         out.make_ascii_uppercase();
///         out.push(b'\n');
///     }
///     fn notice(&mut self, notice: &Notice<'_>, out: &mut Vec<u8>) {
///         out.extend_from_slice(b"nowait: ");
///         out.extend_from_slice(notice.message().as_bytes());
///         out.push(b'\n');
///     }
/// }
///
/// let mut out = Vec::new();
/// Upper.format(&Record::new(nowait_core::Level::Info, 0, b"hi"), &mut out);
/// assert_eq!(out, b"HI\n");
/// ```
pub trait Format: Send + 'static {
    /// Appends the rendering of `record` to `out`: one line ending in `\n`.
    fn format(&mut self, record: &Record<'_>, out: &mut Vec<u8>);

    /// Appends the rendering of a notice from nowait itself: one line ending
    /// in `\n`.
    fn notice(&mut self, notice: &Notice<'_>, out: &mut Vec<u8>);

    /// Appends the rendering of a record that a sink's
    /// `BacktraceBuffer` kept and a trigger released: one
    /// line ending in `\n`. The default is [`format`](Format::format); the
    /// lines of [`kept_notice`](Format::kept_notice) around the released
    /// records then mark them. [`Json`] adds a key instead.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::Level;
    /// use nowait_core::format::{Format, Plain};
    /// use nowait_core::record::Record;
    ///
    /// let mut out = Vec::new();
    /// Plain.format_kept(&Record::new(Level::Debug, 0, b"connecting"), &mut out);
    /// assert_eq!(out, b"connecting\n");
    /// ```
    fn format_kept(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
        self.format(record, out)
    }

    /// Appends the line written before the records a backtrace releases
    /// (`--- 3 earlier records below INFO, kept for this ERROR ---`) and
    /// the one after them (`--- end of the 3 earlier records ---`). The
    /// default is [`notice`](Format::notice). A format that marks each
    /// released record itself in [`format_kept`](Format::format_kept) may
    /// append nothing (as [`Json`] does), or one line.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::Level;
    /// use nowait_core::format::{Format, Plain};
    /// use nowait_core::record::Notice;
    ///
    /// let mut out = Vec::new();
    /// let n = Notice::new(Level::Info, std::time::SystemTime::UNIX_EPOCH, "--- end ---");
    /// Plain.kept_notice(&n, &mut out);
    /// assert_eq!(out, b"nowait: INFO --- end ---\n");
    /// ```
    fn kept_notice(&mut self, notice: &Notice<'_>, out: &mut Vec<u8>) {
        self.notice(notice, out)
    }

    /// Appends what each file the sink writes starts with: called when the
    /// sink opens, and before the first byte of each later file (a
    /// rotation, a reopen). The default appends nothing; the binary
    /// format writes its header and catalog here.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::format::{Format, Plain};
    ///
    /// let mut out = Vec::new();
    /// Plain.file_start(&mut out);
    /// assert!(out.is_empty());
    /// ```
    fn file_start(&mut self, out: &mut Vec<u8>) {
        let _ = out;
    }
}

impl fmt::Debug for dyn Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("dyn Format")
    }
}

/// Makes the [`Format`] of each sink, once, when the logger is built.
///
/// Implemented for closures `Fn(&SinkInfo) -> Box<dyn Format>`.
///
/// # Examples
///
/// ```
/// use nowait_core::format::{Format, MakeFormat, Plain, SinkInfo};
///
/// let make = |_: &SinkInfo| -> Box<dyn Format> { Box::new(Plain) };
/// let _format = make.make_format(&SinkInfo::new("stdout", false));
/// ```
pub trait MakeFormat: Send + Sync + 'static {
    /// Makes the format for one sink.
    fn make_format(&self, sink: &SinkInfo) -> Box<dyn Format>;

    /// Whether the formats made print which thread an event came from
    /// (default `false`). The builder asks every sink's `MakeFormat` once;
    /// if one says yes, front ends record the thread in each event (see
    /// `Logger::records_thread`), which
    /// costs them a thread-local read and five bytes per event. Otherwise
    /// they record nothing and pay nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::format::{MakeFormat, Text};
    ///
    /// assert!(!Text::new().needs_thread());
    /// assert!(Text::new().with_thread_names(true).needs_thread());
    /// ```
    fn needs_thread(&self) -> bool {
        false
    }

    /// Whether the formats made print the source file or line (default
    /// `false`). Events with a call site have them there; front ends
    /// without call sites (`log`) then add them to each event as the
    /// fields `event::LOCATION_FILE` and
    /// `event::LOCATION_LINE` (see
    /// `Logger::records_location`).
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::format::{Json, MakeFormat};
    ///
    /// assert!(!Json::new().needs_location());
    /// assert!(Json::new().with_line_number(true).needs_location());
    /// ```
    fn needs_location(&self) -> bool {
        false
    }
}

impl<F> MakeFormat for F
where
    F: Fn(&SinkInfo) -> Box<dyn Format> + Send + Sync + 'static,
{
    fn make_format(&self, sink: &SinkInfo) -> Box<dyn Format> {
        self(sink)
    }
}

// === what the formats share ===

/// Per-sink timestamp writer: per-second cache of the date and time of day
/// (a comparison and a few digits per event, not a calendar conversion).
#[derive(Debug, Default)]
pub(crate) struct Clock {
    timer: Timer,
    /// For [`Timer::Uptime`]: when the format was made, in ns since the
    /// epoch.
    start: u64,
    /// The second (since the epoch) that `prefix` shows.
    second: Option<u64>,
    /// `YYYY-MM-DDTHH:MM:SS` of `second`.
    prefix: [u8; 19],
    /// For `Timer::Local`: `+HH:MM` for `second`.
    #[cfg(feature = "local-time")]
    offset: Vec<u8>,
}

impl Clock {
    pub(crate) fn new(timer: Timer) -> Clock {
        Clock {
            timer,
            start: system_nanos(std::time::SystemTime::now()),
            ..Clock::default()
        }
    }

    /// Whether timestamps are printed at all.
    pub(crate) fn on(&self) -> bool {
        self.timer != Timer::None
    }

    /// Appends the time `nanos` (since the epoch) as the timer prints it.
    pub(crate) fn write(&mut self, nanos: u64, out: &mut Vec<u8>) {
        match self.timer {
            Timer::Utc => out.extend_from_slice(&self.utc(nanos)),
            Timer::Uptime => {
                let e = nanos.saturating_sub(self.start);
                let mut buf = itoa::Buffer::new();
                let secs = buf.format(e / 1_000_000_000);
                for _ in secs.len()..4 {
                    out.push(b' ');
                }
                out.extend_from_slice(secs.as_bytes());
                write_fraction(e, 9, out);
                out.push(b's');
            }
            #[cfg(feature = "local-time")]
            Timer::Local => {
                self.local(nanos, out);
            }
            Timer::None => {}
        }
    }

    /// Whether the timer is [`Timer::Utc`] (whose stamps [`Clock::utc`]
    /// gives).
    pub(crate) fn is_utc(&self) -> bool {
        self.timer == Timer::Utc
    }

    /// `nanos` as [`Timer::Utc`] prints it, `YYYY-MM-DDTHH:MM:SS.ffffffZ`:
    /// the cached date and time of day, and the microseconds.
    pub(crate) fn utc(&mut self, nanos: u64) -> [u8; 27] {
        let (prefix, tail) = self.utc_parts(nanos);
        let mut stamp = [0u8; 27];
        stamp[..19].copy_from_slice(prefix);
        stamp[19..].copy_from_slice(&tail.to_le_bytes());
        stamp
    }

    /// [`Clock::utc`] in two parts: `YYYY-MM-DDTHH:MM:SS`, and `.ffffffZ`
    /// as the bytes of a `u64` (computed in a register, stored at once).
    #[inline]
    pub(crate) fn utc_parts(&mut self, nanos: u64) -> (&[u8; 19], u64) {
        self.renew(nanos, 0);
        let micros = (nanos % 1_000_000_000 / 1_000) as u32;
        // Six digits: the eight of `eight_digits` less two leading zeros.
        let digits = eight_digits(micros) >> 16 | 0x0000_3030_3030_3030;
        let tail = u64::from(b'.') | digits << 8 | u64::from(b'Z') << 56;
        (&self.prefix, tail)
    }

    /// `YYYY-MM-DDTHH:MM:SS` of `nanos` shifted by `offset` seconds.
    #[cfg(feature = "local-time")]
    fn date_time(&mut self, nanos: u64, offset: i64, out: &mut Vec<u8>) {
        self.renew(nanos, offset);
        out.extend_from_slice(&self.prefix);
    }

    /// Renders `prefix` for the second of `nanos` (shifted by `offset`
    /// seconds) unless it holds that second already.
    fn renew(&mut self, nanos: u64, offset: i64) {
        let second = nanos / 1_000_000_000;
        if self.second != Some(second) {
            self.render_prefix(second, offset);
        }
    }

    #[cold]
    fn render_prefix(&mut self, second: u64, offset: i64) {
        let shifted = (second as i64).saturating_add(offset).max(0) as u64;
        let time = std::time::UNIX_EPOCH + std::time::Duration::from_secs(shifted);
        let mut text = Vec::with_capacity(27);
        time::write_rfc3339_micros(time, &mut text);
        self.prefix.copy_from_slice(&text[..19]);
        self.second = Some(second);
    }

    #[cfg(feature = "local-time")]
    fn local(&mut self, nanos: u64, out: &mut Vec<u8>) {
        let second = nanos / 1_000_000_000;
        if self.second != Some(second) {
            let offset = local_offset(second as i64);
            self.offset.clear();
            self.offset.push(if offset < 0 { b'-' } else { b'+' });
            let abs = offset.unsigned_abs();
            for v in [abs / 3600, abs / 60 % 60] {
                self.offset.push(b'0' + (v / 10 % 10) as u8);
                self.offset.push(b'0' + (v % 10) as u8);
                self.offset.push(b':');
            }
            self.offset.pop();
            self.second = None;
            self.date_time(nanos, i64::from(offset), out);
        } else {
            out.extend_from_slice(&self.prefix);
        }
        let sub = nanos % 1_000_000_000;
        let digits = if sub == 0 {
            0
        } else if sub % 1_000_000 == 0 {
            3
        } else if sub % 1_000 == 0 {
            6
        } else {
            9
        };
        if digits > 0 {
            write_fraction(nanos, digits, out);
        }
        out.extend_from_slice(&self.offset);
    }
}

/// The local time's offset from UTC at `secs` since the epoch, in seconds.
#[cfg(feature = "local-time")]
fn local_offset(secs: i64) -> i32 {
    use chrono::{Offset as _, TimeZone as _};
    chrono::DateTime::from_timestamp(secs, 0).map_or(0, |utc| {
        chrono::Local
            .offset_from_utc_datetime(&utc.naive_utc())
            .fix()
            .local_minus_utc()
    })
}

/// Appends `.` and the first `digits` (1 to 9) digits of the nanoseconds.
fn write_fraction(nanos: u64, digits: usize, out: &mut Vec<u8>) {
    let mut buf = [b'.', b'0', b'0', b'0', b'0', b'0', b'0', b'0', b'0', b'0'];
    let mut v = nanos % 1_000_000_000;
    for d in buf[1..10].iter_mut().rev() {
        *d = b'0' + (v % 10) as u8;
        v /= 10;
    }
    out.extend_from_slice(&buf[..=digits]);
}

/// The width a thread name is padded to: the longest name this sink has
/// printed so far (`tracing-subscriber` keeps the longest of the process).
pub(crate) fn thread_width(width: &mut usize, name: &str) -> usize {
    let len = name.chars().count();
    *width = (*width).max(len);
    *width
}

thread_local! {
    /// The time [`render_time`] gives instead of now, while set.
    static RECORD_TIME: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
}

/// The time a record that carries none (a plain text record, a malformed
/// event) is stamped with: now, or while a binary log is rendered
/// ([`with_render_time`]), when its writer handled it.
pub(crate) fn render_time() -> u64 {
    RECORD_TIME
        .try_with(std::cell::Cell::get)
        .ok()
        .flatten()
        .unwrap_or_else(|| system_nanos(std::time::SystemTime::now()))
}

/// Runs `f` with [`render_time`] giving `nanos`.
pub(crate) fn with_render_time<R>(nanos: u64, f: impl FnOnce() -> R) -> R {
    let before = RECORD_TIME
        .try_with(|t| t.replace(Some(nanos)))
        .ok()
        .flatten();
    let r = f();
    let _ = RECORD_TIME.try_with(|t| t.set(before));
    r
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

/// Appends `n` in decimal, eight digits at a time computed in a register
/// (SWAR) and appended as one 8-byte store, cut to length: no digit
/// buffer in memory that a wide load would read back.
#[inline]
pub(crate) fn push_u64(n: u64, out: &mut Vec<u8>) {
    if n >= 100_000_000 {
        return push_u64_long(n, out);
    }
    let digits = eight_digits(n as u32);
    // Leading zeros are the low bytes (the first in memory); keep one
    // digit for 0.
    let skip = (digits.trailing_zeros() / 8).min(7);
    let at = out.len();
    out.extend_from_slice(&((digits | ASCII_ZEROS) >> (8 * skip)).to_le_bytes());
    out.truncate(at + 8 - skip as usize);
}

#[inline(never)]
fn push_u64_long(n: u64, out: &mut Vec<u8>) {
    push_u64(n / 100_000_000, out);
    let low = eight_digits((n % 100_000_000) as u32);
    out.extend_from_slice(&(low | ASCII_ZEROS).to_le_bytes());
}

const ASCII_ZEROS: u64 = 0x3030_3030_3030_3030;

/// The eight decimal digits of `n` (below 10^8, zero-padded) as the bytes
/// of a `u64`, most significant digit in the lowest byte, each byte the
/// digit's value (0 to 9): two 4-digit halves, split into pairs, split
/// into digits, each step by a multiply and shift per lane
/// (`x * 10486 >> 20` is `x / 100` for `x < 10^4`, `x * 103 >> 10` is
/// `x / 10` for `x < 100`).
#[inline]
fn eight_digits(n: u32) -> u64 {
    let x = u64::from(n / 10_000) | u64::from(n % 10_000) << 32;
    let hundreds = ((x * 10_486) >> 20) & 0x0000_007F_0000_007F;
    let x = hundreds | (x - hundreds * 100) << 16;
    let tens = ((x * 103) >> 10) & 0x000F_000F_000F_000F;
    tens | (x - tens * 10) << 8
}

/// What a format renders once per call site (`T`), found by the call
/// site's key; the last one found is tried first (events of one call site
/// tend to come in runs).
#[derive(Debug)]
pub(crate) struct KnownSites<T> {
    /// The key and index of the last site found.
    last: Option<(u64, usize)>,
    index: HashMap<u64, usize, BuildHasherDefault<KeyHasher>>,
    pub(crate) texts: Vec<T>,
}

impl<T> Default for KnownSites<T> {
    fn default() -> Self {
        KnownSites {
            last: None,
            index: HashMap::default(),
            texts: Vec::new(),
        }
    }
}

impl<T> KnownSites<T> {
    /// The index in `texts` of call site `key`'s, if rendered.
    #[inline]
    pub(crate) fn find(&mut self, key: u64) -> Option<usize> {
        match self.last {
            Some((last, i)) if last == key => Some(i),
            _ => {
                let i = *self.index.get(&key)?;
                self.last = Some((key, i));
                Some(i)
            }
        }
    }

    /// Keeps `text` for call site `key`; its index.
    #[cold]
    pub(crate) fn add(&mut self, key: u64, text: T) -> usize {
        self.texts.push(text);
        let i = self.texts.len() - 1;
        self.index.insert(key, i);
        self.last = Some((key, i));
        i
    }
}

/// A short piece of text kept in a fixed array, so that appending it is
/// one fixed-size copy (cut to length after) rather than a call to
/// `memcpy`; longer text is kept as it is.
#[derive(Clone, Debug)]
pub(crate) enum Piece {
    Short([u8; 32], usize),
    Long(Vec<u8>),
}

impl Piece {
    pub(crate) fn new(bytes: &[u8]) -> Piece {
        let mut short = [0; 32];
        match short.get_mut(..bytes.len()) {
            Some(head) => {
                head.copy_from_slice(bytes);
                Piece::Short(short, bytes.len())
            }
            None => Piece::Long(bytes.to_vec()),
        }
    }

    #[inline]
    pub(crate) fn append_to(&self, out: &mut Vec<u8>) {
        match self {
            Piece::Short(bytes, len) => {
                let at = out.len();
                out.extend_from_slice(bytes);
                out.truncate(at + len);
            }
            Piece::Long(bytes) => out.extend_from_slice(bytes),
        }
    }
}

/// The offset of the first character in `out` that no format may write
/// raw: a C0 control, DEL, a C1 control, U+2028/U+2029, a bidi control
/// ([`is_bidi_control`]), or a byte that
/// is not valid UTF-8. `allowed` lists the C0 bytes the caller's framing puts
/// there itself (a line's `\n`). Tests and fuzz targets check every
/// format's output with it.
#[cfg(any(test, fuzzing))]
pub(crate) fn unescaped_at(out: &[u8], allowed: &[u8]) -> Option<usize> {
    let mut at = 0;
    for chunk in out.utf8_chunks() {
        for (i, c) in chunk.valid().char_indices() {
            let raw = match c {
                '\0'..='\u{1f}' => !allowed.contains(&(c as u8)),
                '\u{7f}'..='\u{9f}' | '\u{2028}' | '\u{2029}' => true,
                c => is_bidi_control(c),
            };
            if raw {
                return Some(at + i);
            }
        }
        if !chunk.invalid().is_empty() {
            return Some(at + chunk.valid().len());
        }
        at += chunk.valid().len() + chunk.invalid().len();
    }
    None
}

/// Tests only: a seeded xorshift generator; `next(n)` is in `0..n`.
#[cfg(test)]
pub(crate) fn test_rng() -> impl FnMut(u64) -> u64 {
    let mut state = 0x853c_49e6_748f_ea9bu64;
    move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    }
}

/// Tests only: a random event of one of two call sites (`sites`), with up
/// to six items: a span (call site `span`, up to three fields: `peer` by
/// index, an index past the call site's names, an inline name), messages plain,
/// deferred and empty, typed fields by index and inline (one of them
/// named `message`), a rendered value with a newline; one in ten ends in
/// a byte that does not decode.
#[cfg(test)]
pub(crate) fn random_event(
    next: &mut impl FnMut(u64) -> u64,
    sites: [crate::event::SiteKey; 2],
    span: crate::event::SiteKey,
) -> Vec<u8> {
    use crate::event::{EventBuf, FieldName};
    let mut buf = EventBuf::new();
    let site = sites[next(2) as usize];
    buf.begin_at(1_795_392_000_000_001_000 + next(5_000_000_000), site);
    for _ in 0..next(7) {
        match next(12) {
            0 => {
                // Zero to three fields: by index (one past the call site's
                // names too) and inline.
                buf.begin_span(span);
                for _ in 0..next(4) {
                    match next(4) {
                        0 | 1 => {
                            let peer = ["10.0.0.7", "10.0.0.8"][next(2) as usize];
                            buf.str(FieldName::Index(0), peer);
                        }
                        2 => buf.u64(FieldName::Index(1), next(100)),
                        _ => buf
                            .rendered(FieldName::Inline("x\ny"), format_args!("GET\r"))
                            .unwrap(),
                    }
                }
                buf.end_span();
            }
            1 => buf.str(FieldName::Index(0), "plain message"),
            2 => {
                buf.args(FieldName::Index(0), 1);
                buf.arg_f64(1.5);
            }
            3 => buf.u64(FieldName::Index(1), next(1000)),
            4 => buf.str(FieldName::Index(2), "us\"ers"),
            5 => buf.f64(FieldName::Index(3), next(1000) as f64 / 7.0),
            6 => buf.i64(FieldName::Index(4), -1),
            7 => buf.bool(FieldName::Inline("ok"), true),
            8 => buf.char(FieldName::Inline("rows"), '\u{1b}'),
            9 => buf.args(FieldName::Index(0), 0),
            10 => buf.u64(FieldName::Inline("message"), 7),
            _ => buf
                .rendered(FieldName::Index(1), format_args!("a\nb"))
                .unwrap(),
        }
    }
    let mut payload = buf.as_bytes().to_vec();
    if next(10) == 0 {
        payload.push(0xFF);
    }
    payload
}

#[cfg(test)]
mod event_tests;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_u64_matches_display() {
        let mut cases = vec![0, u64::MAX, u64::MAX - 1];
        // Around each power of ten, and each length's largest number.
        for n in (0..20).map(|k| 10u64.pow(k)) {
            cases.extend([n - 1, n, n + 1, n.wrapping_mul(3), n.wrapping_mul(10) - 1]);
        }
        // Every 4-digit group, and steps through the 8-digit range.
        cases.extend(0..10_000);
        cases.extend((0..100_000_000).step_by(9_973));
        cases.extend((0..10_000).map(|k| k * 100_000_000 + 99_999_999));
        for n in cases {
            let mut out = b"x".to_vec();
            push_u64(n, &mut out);
            assert_eq!(out, format!("x{n}").as_bytes());
        }
        let mut out = Vec::new();
        scalar_text(Value::I64(i64::MIN), &mut out);
        scalar_text(Value::I64(-7), &mut out);
        scalar_text(Value::I64(0), &mut out);
        assert_eq!(out, format!("{}-70", i64::MIN).as_bytes());
    }

    /// Strings that a recovered catalog hands the formats (a dead
    /// process's thread names and ids, call-site targets and names, field
    /// and span names, source files, message formats) reach no output
    /// raw: Text escapes them as it escapes values, JSON as strings,
    /// syslog carries Text's escaped line.
    #[test]
    fn catalog_strings_are_escaped_in_every_format() {
        use crate::event::{register_callsite, EventBuf, FieldName, SiteKey};
        use crate::format::{MakeFormat, SinkInfo};
        use crate::level::Level;
        use crate::record::{kind, Record};

        static SITE: u8 = 0;
        static SPAN: u8 = 0;
        let key = SiteKey::of(&SITE);
        register_callsite(
            key,
            Callsite::new(Level::Info, "app\x1b[2J\n", "ev\x1b\n")
                .fields(vec!["message", "f\x1b]0;t\x07\n"])
                .location(Some("app"), Some("src/\x1b[1m\n.rs"), Some(7))
                .message_format("m\x1b[5m\n{}"),
        );
        register_callsite(
            SiteKey::of(&SPAN),
            Callsite::new(Level::Info, "app", "sp\x1b[7m\nan").fields(vec!["p\x1b\n"]),
        );
        let named = crate::event::register_foreign_thread(
            Some("w\x1b[2J\nforged\u{202e}"),
            "ThreadId(\x1b[31m\n7)",
            "ThreadId(\x1b[31m\n07)",
        );
        let unnamed = crate::event::register_foreign_thread(
            None,
            "ThreadId(\x1b[32m\n8)",
            "ThreadId(\x1b[32m\n08)",
        );
        let event = |thread: u32| {
            let mut buf = EventBuf::new();
            buf.begin_at(1_795_392_000_000_001_000, key);
            buf.thread();
            buf.begin_span(SiteKey::of(&SPAN));
            buf.u64(FieldName::Index(0), 1);
            buf.end_span();
            buf.args(FieldName::Index(0), 1);
            buf.arg_u64(2);
            buf.u64(FieldName::Index(1), 3);
            let mut payload = buf.as_bytes().to_vec();
            // The thread item, right after the 16-byte header, names the
            // recovered thread instead of this one.
            assert_eq!(payload[16], crate::event::ITEM_THREAD);
            payload[17..21].copy_from_slice(&thread.to_le_bytes());
            payload
        };
        let formats: Vec<(&str, Box<dyn MakeFormat>)> = vec![
            (
                "text, names and ids",
                Box::new(
                    Text::new()
                        .with_ansi(false)
                        .with_thread_names(true)
                        .with_thread_ids(true)
                        .with_file(true)
                        .with_line_number(true),
                ),
            ),
            (
                "text, names",
                Box::new(Text::new().with_ansi(false).with_thread_names(true)),
            ),
            (
                "text, ids",
                Box::new(Text::new().with_ansi(false).with_thread_ids(true)),
            ),
            (
                "json, names and ids",
                Box::new(
                    Json::new()
                        .with_thread_names(true)
                        .with_thread_ids(true)
                        .with_file(true)
                        .with_line_number(true),
                ),
            ),
            ("json, names", Box::new(Json::new().with_thread_names(true))),
            ("json, nowait schema", Box::new(Json::nowait_schema())),
            (
                "json, fixed and flattened",
                Box::new(
                    Json::new()
                        .field("se\x1b[1m\nrvice", "a\u{202e}\n")
                        .flatten_event(true)
                        .flatten_spans(true)
                        .with_thread_names(true)
                        .with_thread_ids(true)
                        .with_file(true)
                        .with_line_number(true),
                ),
            ),
            (
                // ECS's thread id is a number: a recovered `ThreadId(…)`
                // that holds none is left out, so names only here.
                "ecs",
                Box::new(
                    Json::ecs()
                        .with_thread_names(true)
                        .with_file(true)
                        .with_line_number(true),
                ),
            ),
            (
                "cloud logging",
                Box::new(
                    Json::cloud_logging()
                        .with_cloud_project("p\x1b\n")
                        .with_thread_names(true)
                        .with_thread_ids(true)
                        .with_file(true)
                        .with_line_number(true),
                ),
            ),
            (
                "logfmt",
                Box::new(
                    Logfmt::new()
                        .field("k\x1b\n", "v\u{2028}")
                        .with_thread_names(true)
                        .with_thread_ids(true)
                        .with_file(true)
                        .with_line_number(true),
                ),
            ),
        ];
        let sink = SinkInfo::new("test", false);
        for (what, make) in &formats {
            for thread in [named, unnamed] {
                let payload = event(thread);
                let record = Record::new(Level::Info, kind::EVENT, &payload);
                let mut plain = make.make_format(&sink);
                let mut syslog = Syslog::new().wrap(make.make_format(&sink), Framing::Datagram);
                for (framing, format) in [("", &mut plain), (" in syslog", &mut syslog)] {
                    let mut out = Vec::new();
                    format.format(&record, &mut out);
                    let line = out.strip_suffix(b"\n").unwrap_or(&out);
                    let shown = String::from_utf8_lossy(&out);
                    assert_eq!(
                        unescaped_at(line, &[]),
                        None,
                        "{what}{framing}, thread {thread}: {shown:?}"
                    );
                    if make.needs_thread() {
                        // The thread is shown (its name or its id).
                        assert!(
                            shown.contains("forged") || shown.contains("ThreadId("),
                            "{what}: {shown:?}"
                        );
                    }
                }
            }
        }
    }

    /// Bidi controls in values and messages (plain, deferred, literal,
    /// rendered, characters, text records) come out escaped in Text
    /// (`\u{202e}`, as `Debug` writes them) and in every JSON schema and
    /// logfmt (`\u202e`), never raw.
    #[test]
    fn bidi_controls_are_escaped_in_text_and_json() {
        use crate::event::{register_callsite, EventBuf, FieldName, SiteKey};
        use crate::format::{MakeFormat, SinkInfo};
        use crate::level::Level;
        use crate::record::{kind, Record};

        static DEFERRED: u8 = 0;
        static LITERAL: u8 = 0;
        register_callsite(
            SiteKey::of(&DEFERRED),
            Callsite::new(Level::Info, "app", "ev")
                .fields(vec!["message", "v"])
                .message_format("user {} logged in"),
        );
        register_callsite(
            SiteKey::of(&LITERAL),
            Callsite::new(Level::Info, "app", "ev")
                .fields(vec!["message"])
                .message_format("done\u{2067}"),
        );
        let mut payloads = Vec::new();
        let mut buf = EventBuf::new();
        buf.begin_inline(1, "app");
        buf.str(FieldName::Inline("message"), "invoice\u{202e}fdp.exe");
        buf.str(FieldName::Inline("s"), "a\u{202d}b\u{2066}c\u{61c}");
        buf.rendered(FieldName::Inline("r"), format_args!("x\u{200f}y"))
            .unwrap();
        buf.char(FieldName::Inline("c"), '\u{202b}');
        payloads.push((kind::EVENT, buf.as_bytes().to_vec()));
        let mut buf = EventBuf::new();
        buf.begin_at(1, SiteKey::of(&DEFERRED));
        buf.args(FieldName::Index(0), 1);
        buf.arg_str("admin\u{202e}\u{2069}");
        buf.str(FieldName::Index(1), "\u{200e}");
        payloads.push((kind::EVENT, buf.as_bytes().to_vec()));
        let mut buf = EventBuf::new();
        buf.begin_at(1, SiteKey::of(&LITERAL));
        buf.args(FieldName::Index(0), 0);
        payloads.push((kind::EVENT, buf.as_bytes().to_vec()));
        payloads.push((kind::TEXT, "line\u{202a}".as_bytes().to_vec()));

        let formats: Vec<(Box<dyn MakeFormat>, &str)> = vec![
            (Box::new(Text::new().with_ansi(false)), "\\u{2"),
            (Box::new(Json::new()), "\\u2"),
            (Box::new(Json::nowait_schema()), "\\u2"),
            (Box::new(Json::ecs()), "\\u2"),
            (Box::new(Json::cloud_logging()), "\\u2"),
            (Box::new(Logfmt::new()), "\\u2"),
        ];
        let sink = SinkInfo::new("test", false);
        for (make, escape) in &formats {
            let mut format = make.make_format(&sink);
            for (kind, payload) in &payloads {
                let mut out = Vec::new();
                format.format(&Record::new(Level::Info, *kind, payload), &mut out);
                let line = out.strip_suffix(b"\n").unwrap_or(&out);
                let shown = String::from_utf8_lossy(&out);
                assert_eq!(unescaped_at(line, &[]), None, "{shown:?}");
                assert!(shown.contains(escape), "{shown:?}");
            }
        }
    }

    #[test]
    fn pieces_append_their_bytes() {
        for len in [0, 1, 16, 31, 32, 33, 100] {
            let text: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            let mut out = b"x".to_vec();
            Piece::new(&text).append_to(&mut out);
            assert_eq!(out[1..], text[..]);
        }
    }

    fn render(timer: Timer, nanos: u64) -> String {
        let mut clock = Clock::new(timer);
        clock.start = 1_000_000_000;
        let mut out = Vec::new();
        clock.write(nanos, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn utc_and_uptime() {
        assert_eq!(
            render(Timer::Utc, 1_763_800_000_123_456_789),
            "2025-11-22T08:26:40.123456Z"
        );
        assert_eq!(render(Timer::Uptime, 3_000_000_042), "   2.000000042s");
        assert_eq!(
            render(Timer::Uptime, 12_346_000_000_000),
            "12345.000000000s"
        );
        // An event stamped before the format was made.
        assert_eq!(render(Timer::Uptime, 5), "   0.000000000s");
        assert_eq!(render(Timer::None, 5), "");
    }

    /// The cached date and time of day give what formatting each instant
    /// from scratch gives, through one clock (so the cache is reused and
    /// renewed) across second, minute, hour, day, month and year
    /// boundaries, leap days (2024, 2000) and a non-leap century (2100),
    /// going forward and backward in time.
    #[test]
    fn cached_prefix_matches_from_scratch() {
        let boundaries: [u64; 9] = [
            1_795_392_000,      // 2026-11-23T00:00:00
            1_795_395_600 - 60, // an hour's last minute
            1_798_761_600,      // 2027-01-01T00:00:00
            1_709_164_800,      // 2024-02-29T00:00:00
            1_709_251_200,      // 2024-03-01T00:00:00
            951_782_400,        // 2000-02-29T00:00:00
            4_107_542_400,      // 2100-03-01T00:00:00 (no 2100-02-29)
            0,                  // 1970-01-01T00:00:00
            16_725_225_600,     // 2500-01-01T00:00:00
        ];
        let mut clock = Clock::new(Timer::Utc);
        let mut instants = Vec::new();
        for b in boundaries {
            for delta in [
                -1_000_000_000i64,
                -1_000,
                -1,
                0,
                1,
                999,
                1_000_000,
                60_000_000_000,
            ] {
                let nanos = (b * 1_000_000_000) as i64 + delta;
                if nanos >= 0 {
                    instants.push(nanos as u64);
                }
            }
        }
        // Forward, then backward through the same instants.
        let backward: Vec<u64> = instants.iter().rev().copied().collect();
        instants.extend(backward);
        for nanos in instants {
            let mut cached = Vec::new();
            clock.write(nanos, &mut cached);
            let mut scratch = Vec::new();
            let time = std::time::UNIX_EPOCH + std::time::Duration::from_nanos(nanos);
            time::write_rfc3339_micros(time, &mut scratch);
            assert_eq!(
                String::from_utf8(cached).unwrap(),
                String::from_utf8(scratch).unwrap(),
                "at {nanos} ns"
            );
        }
    }

    /// The same bytes as `chrono::Local`'s RFC 3339 (what
    /// `tracing-subscriber`'s `ChronoLocal::rfc_3339()` prints), in
    /// whatever zone the machine is in, for each number of fractional
    /// digits; and the cached second is recomputed when it changes.
    #[cfg(feature = "local-time")]
    #[test]
    fn local_time_matches_chrono() {
        let mut clock = Clock::new(Timer::Local);
        for nanos in [
            1_763_800_000_000_000_000u64,
            1_763_800_000_120_000_000,
            1_763_800_000_123_456_000,
            1_763_800_000_123_456_789,
            1_763_800_001_000_000_001,
            1_750_000_000_500_000_000, // another season
        ] {
            let mut out = Vec::new();
            clock.write(nanos, &mut out);
            let want = chrono::DateTime::from_timestamp(
                (nanos / 1_000_000_000) as i64,
                (nanos % 1_000_000_000) as u32,
            )
            .unwrap()
            .with_timezone(&chrono::Local)
            .to_rfc3339();
            assert_eq!(String::from_utf8(out).unwrap(), want);
        }
    }
}
