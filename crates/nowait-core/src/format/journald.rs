//! journald's native protocol: each record becomes one journal entry of
//! `KEY=value` fields, sent as one datagram by `Sink::journald`.
//!
//! 1. An entry is a sequence of fields, each either `KEY=value\n` or, for
//!    a value that holds a newline, the binary form `KEY\n`, the value's
//!    length as a little-endian `u64`, the value, `\n`. The binary form is
//!    length-framed, so no value can end its field early or forge another
//!    field or entry, whatever bytes it holds.
//! 2. Field names are what journald accepts from a client: `A`–`Z`, `0`–`9`
//!    and `_`, not starting with `_` or a digit, at most 64 bytes.
//!    journald silently drops any other name; [`field_name`] makes every
//!    name acceptable instead (see [`Journald`] for the mapping).
//! 3. A field's value is the value's text: strings as their bytes (not
//!    escaped: journald stores bytes, and `journalctl` shows a value with
//!    control characters as a blob, never as raw terminal escapes), numbers
//!    in decimal, booleans as `true`/`false`.
//!

use std::path::{Path, PathBuf};

use super::{message_with, scalar_text, Format, Location, MakeFormat, Resolved, SinkInfo};
use crate::event::{decode_field_name, Event, Item, SiteCache, ThreadCache, Value};
use crate::level::Level;
use crate::record::{kind, Notice, Record};

/// Where journald listens for native-protocol datagrams.
pub(crate) const DEFAULT_SOCKET: &str = "/run/systemd/journal/socket";

/// The longest field name journald accepts.
const MAX_NAME: usize = 64;

/// The names nowait writes itself: a user's field that maps to one of
/// them gets `F_` in front, so that it cannot replace or double them.
const RESERVED: [&[u8]; 11] = [
    b"MESSAGE",
    b"PRIORITY",
    b"SYSLOG_IDENTIFIER",
    b"TARGET",
    b"CODE_FILE",
    b"CODE_LINE",
    b"THREAD_NAME",
    b"THREAD_ID",
    b"SPAN_NAME",
    b"NOWAIT_NOTICE",
    b"NOWAIT_MALFORMED",
];

/// A journald sink's settings (`Sink::journald_with`), and its format.
///
/// Each record becomes one journal entry with these fields, in this order:
///
/// * `MESSAGE`: the event's message (the first field named `message`),
///   empty if it has none; a text record's line.
/// * `PRIORITY`: the syslog severity, ERROR → `3`, WARN → `4`, INFO → `6`,
///   DEBUG and TRACE → `7`.
/// * `SYSLOG_IDENTIFIER`: [`Journald::syslog_identifier`], by default the
///   program's name (the file name of `argv[0]`); `journalctl -t NAME`
///   selects by it.
/// * `TARGET`: the event's target (usually its module path); absent for
///   text records.
/// * `CODE_FILE` and `CODE_LINE`: the call site's source file and line,
///   where known. (`CODE_FUNC` is never written: Rust call sites do not
///   record their function.)
/// * `THREAD_NAME` and `THREAD_ID` (the number of `ThreadId(N)`), with
///   [`Journald::with_thread_names`] and [`Journald::with_thread_ids`].
/// * For each enclosing span, outermost first: `SPAN_NAME` and the span's
///   fields; then the event's other fields, in order. journald keeps every
///   value of a name that appears more than once (`journalctl -o json`
///   shows them as an array).
///
/// journald adds its own trusted fields (`_PID`, `_UID`, `_COMM`, the
/// reception time...); names starting with `_` cannot be sent by a client.
///
/// Field names become what journald accepts, since it silently drops the
/// others: ASCII letters are upper-cased, every other byte that is not a
/// digit becomes `_` (`http.status` → `HTTP_STATUS`); a name that does
/// not start with a letter (journald drops those starting with `_` or a
/// digit) gets `F` in front (`_pid` → `F_PID`, `2xx` → `F2XX`, the empty
/// name → `F`); a name longer than 64 bytes, which
/// journald drops, is cut to 64; a name equal to one nowait writes
/// (`message` after the first, `priority`, `target`...) gets `F_` in front
/// (`priority` → `F_PRIORITY`), so that it cannot change the entry's
/// priority or identifier.
///
/// Values are sent as they are, in journald's binary form when they hold a
/// newline (so a value can never end its field or forge another one);
/// control characters are kept (journald stores bytes, and `journalctl`
/// shows such a value as `[N blob data]`, never as terminal escapes).
///
/// nowait's own notices (losses, sink failures) become entries too, with
/// `PRIORITY` from their level (`4` for losses, `3` for failures),
/// `TARGET=nowait` and `NOWAIT_NOTICE=1`: `journalctl NOWAIT_NOTICE=1`
/// lists every gap.
///
/// `Journald` is also a [`MakeFormat`], which renders the same entries
/// into any sink (a file of native-protocol entries, for tests).
///
///
/// # Examples
///
/// ```
/// use nowait_core::Level;
/// use nowait_core::format::{Format, Journald, MakeFormat, SinkInfo};
/// use nowait_core::record::Record;
///
/// let mut format = Journald::new()
///     .syslog_identifier("web")
///     .make_format(&SinkInfo::new("journald", false));
/// let mut entry = Vec::new();
/// format.format(&Record::new(Level::Warn, nowait_core::record::kind::TEXT, b"disk 91% full"), &mut entry);
/// assert_eq!(entry, b"MESSAGE=disk 91% full\nPRIORITY=4\nSYSLOG_IDENTIFIER=web\n");
/// ```
#[derive(Clone, Debug)]
pub struct Journald {
    socket: PathBuf,
    identifier: Option<String>,
    thread_names: bool,
    thread_ids: bool,
}

impl Default for Journald {
    fn default() -> Journald {
        Journald {
            socket: PathBuf::from(DEFAULT_SOCKET),
            identifier: None,
            thread_names: false,
            thread_ids: false,
        }
    }
}

impl Journald {
    /// journald at `/run/systemd/journal/socket`, the program's name as
    /// `SYSLOG_IDENTIFIER`, no thread fields.
    ///
    /// # Examples
    ///
    /// ```
    /// let _journald = nowait_core::format::Journald::new();
    /// ```
    pub fn new() -> Journald {
        Journald::default()
    }

    /// The `SYSLOG_IDENTIFIER` of every entry (default: the file name of
    /// `argv[0]`). Sent as given (a newline in it is framed like any
    /// value's).
    ///
    /// # Examples
    ///
    /// ```
    /// let _journald = nowait_core::format::Journald::new().syslog_identifier("billing");
    /// ```
    pub fn syslog_identifier(mut self, name: impl Into<String>) -> Journald {
        self.identifier = Some(name.into());
        self
    }

    /// The socket to send to (default `/run/systemd/journal/socket`); a
    /// journald namespace instance listens at
    /// `/run/systemd/journal.NAMESPACE/socket`, and tests use their own.
    ///
    /// # Examples
    ///
    /// ```
    /// let _journald = nowait_core::format::Journald::new()
    ///     .socket_path("/run/systemd/journal.billing/socket");
    /// ```
    pub fn socket_path(mut self, path: impl Into<PathBuf>) -> Journald {
        self.socket = path.into();
        self
    }

    /// Whether to write the logging thread's name as `THREAD_NAME`
    /// (default `false`; nothing for an unnamed thread). Front ends then
    /// record the thread in each event.
    ///
    /// # Examples
    ///
    /// ```
    /// let _journald = nowait_core::format::Journald::new().with_thread_names(true);
    /// ```
    pub fn with_thread_names(mut self, on: bool) -> Journald {
        self.thread_names = on;
        self
    }

    /// Whether to write the logging thread's id as `THREAD_ID` (`7` for
    /// `ThreadId(7)`; default `false`). Front ends then record the thread
    /// in each event.
    ///
    /// # Examples
    ///
    /// ```
    /// let _journald = nowait_core::format::Journald::new().with_thread_ids(true);
    /// ```
    pub fn with_thread_ids(mut self, on: bool) -> Journald {
        self.thread_ids = on;
        self
    }

    /// The socket this sink sends to.
    pub(crate) fn path(&self) -> &Path {
        &self.socket
    }
}

impl MakeFormat for Journald {
    fn make_format(&self, _sink: &SinkInfo) -> Box<dyn Format> {
        let identifier = match &self.identifier {
            Some(name) => name.clone(),
            None => std::env::args_os()
                .next()
                .and_then(|a| {
                    Path::new(&a)
                        .file_name()
                        .map(|f| f.to_string_lossy().into_owned())
                })
                .unwrap_or_default(),
        };
        let mut head = Vec::new();
        field(b"SYSLOG_IDENTIFIER", identifier.as_bytes(), &mut head);
        Box::new(JournaldFormat {
            identifier: head,
            thread_names: self.thread_names,
            thread_ids: self.thread_ids,
            sites: SiteCache::default(),
            threads: ThreadCache::default(),
            scratch: Default::default(),
            msg: Vec::new(),
            fields: Vec::new(),
            name: Vec::new(),
            value: Vec::new(),
        })
    }

    fn needs_thread(&self) -> bool {
        self.thread_names || self.thread_ids
    }

    /// `CODE_FILE` and `CODE_LINE` are always written.
    fn needs_location(&self) -> bool {
        true
    }
}

/// The syslog severity of a level (as `PRIORITY=`).
fn priority(level: Level) -> &'static [u8] {
    match level {
        Level::Error => b"PRIORITY=3\n",
        Level::Warn => b"PRIORITY=4\n",
        Level::Info => b"PRIORITY=6\n",
        Level::Debug | Level::Trace => b"PRIORITY=7\n",
    }
}

/// Appends one field: `NAME=value\n`, or the binary form if `value` holds
/// a newline. `name` must already be a valid name.
pub(crate) fn field(name: &[u8], value: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(name);
    if value.contains(&b'\n') {
        out.push(b'\n');
        out.extend_from_slice(&(value.len() as u64).to_le_bytes());
    } else {
        out.push(b'=');
    }
    out.extend_from_slice(value);
    out.push(b'\n');
}

/// Appends `name` as a name journald accepts (see [`Journald`]).
pub(crate) fn field_name(name: &str, out: &mut Vec<u8>) {
    let start = out.len();
    // Any byte that is not a letter or a digit becomes `_`, so only a
    // letter can start a name as it is.
    if !name.as_bytes().first().is_some_and(u8::is_ascii_alphabetic) {
        out.push(b'F');
    }
    out.extend(name.bytes().map(|b| match b {
        b'a'..=b'z' => b.to_ascii_uppercase(),
        b'A'..=b'Z' | b'0'..=b'9' => b,
        _ => b'_',
    }));
    out.truncate((start + MAX_NAME).min(out.len()));
    if RESERVED.contains(&&out[start..]) {
        out.splice(start..start, *b"F_");
        out.truncate(start + MAX_NAME);
    }
}

/// The text of a field's value: strings as they are, characters as
/// themselves, numbers and booleans as `Debug` prints them.
fn value_text(
    value: Value<'_>,
    site: Option<&std::sync::Arc<crate::event::Callsite>>,
    scratch: &mut (String, String),
    out: &mut Vec<u8>,
) {
    match value {
        Value::Str(s) | Value::Rendered(s) => out.extend_from_slice(s),
        Value::Char(c) => out.extend_from_slice(c.encode_utf8(&mut [0u8; 4]).as_bytes()),
        Value::Args(_) => message_with(value, site, out, scratch, super::copy_into),
        other => scalar_text(other, out),
    }
}

/// The per-sink state of the journald format.
#[derive(Debug)]
struct JournaldFormat {
    /// `SYSLOG_IDENTIFIER=...\n`, rendered once.
    identifier: Vec<u8>,
    thread_names: bool,
    thread_ids: bool,
    sites: SiteCache,
    threads: ThreadCache,
    scratch: (String, String),
    /// The message's text.
    msg: Vec<u8>,
    /// Span and event fields, rendered during the pass over the items.
    fields: Vec<u8>,
    /// One field's name and value.
    name: Vec<u8>,
    value: Vec<u8>,
}

impl JournaldFormat {
    /// `MESSAGE`, `PRIORITY`, `SYSLOG_IDENTIFIER`.
    fn head(&self, message: &[u8], level: Level, out: &mut Vec<u8>) {
        field(b"MESSAGE", message, out);
        out.extend_from_slice(priority(level));
        out.extend_from_slice(&self.identifier);
    }

    /// Renders one field (name sanitised) into `self.fields`.
    fn push_field(
        &mut self,
        name: &str,
        value: Value<'_>,
        site: Option<&std::sync::Arc<crate::event::Callsite>>,
    ) {
        self.name.clear();
        field_name(name, &mut self.name);
        self.value.clear();
        value_text(value, site, &mut self.scratch, &mut self.value);
        field(&self.name, &self.value, &mut self.fields);
    }

    fn event(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
        let Some(event) = Event::parse(record.payload()) else {
            self.head(b"<malformed event>", record.level(), out);
            out.extend_from_slice(b"TARGET=nowait\nNOWAIT_MALFORMED=1\n");
            return;
        };
        let site = event.site().and_then(|k| self.sites.get(k.get()));
        let ev = Resolved { site, event };
        self.fields.clear();
        self.msg.clear();
        let mut message = None;
        let mut at = Location::default();
        for item in event.items() {
            match item {
                Item::Field { name, value } => {
                    let name = ev.name_of(name);
                    if at.take(ev.site.is_some(), name, value) {
                        continue;
                    }
                    if message.is_none() && super::is_message(name) {
                        message = Some(value);
                        continue;
                    }
                    self.push_field(name, value, ev.site.as_ref());
                }
                Item::Malformed => self.fields.extend_from_slice(b"NOWAIT_MALFORMED=1\n"),
                Item::Span { site, fields } => {
                    let span_site = self.sites.get(site.get());
                    let name = span_site.as_ref().map_or("?", |s| s.name());
                    field(b"SPAN_NAME", name.as_bytes(), &mut self.fields);
                    for f in fields.items() {
                        if let Item::Field { name, value } = f {
                            let name = decode_field_name(name, span_site.as_ref());
                            self.push_field(name, value, span_site.as_ref());
                        }
                    }
                }
            }
        }
        if let Some(value) = message {
            let mut msg = std::mem::take(&mut self.msg);
            value_text(value, ev.site.as_ref(), &mut self.scratch, &mut msg);
            self.msg = msg;
        }
        self.head(&self.msg, record.level(), out);
        field(b"TARGET", ev.target(), out);
        let at = at.of(ev.site.as_deref());
        if let Some(file) = at.file {
            field(b"CODE_FILE", file, out);
        }
        if let Some(line) = at.line {
            out.extend_from_slice(b"CODE_LINE=");
            super::push_u64(line, out);
            out.push(b'\n');
        }
        if self.thread_names || self.thread_ids {
            self.thread(event.thread(), out);
        }
        out.extend_from_slice(&self.fields);
    }

    #[cold]
    fn thread(&mut self, thread: Option<u32>, out: &mut Vec<u8>) {
        let Some(info) = thread.and_then(|n| self.threads.get(n)) else {
            return;
        };
        if self.thread_names {
            if let Some(name) = &info.name {
                field(b"THREAD_NAME", name.as_bytes(), out);
            }
        }
        if self.thread_ids {
            let id = info
                .id
                .trim_start_matches("ThreadId(")
                .trim_end_matches(')');
            field(b"THREAD_ID", id.as_bytes(), out);
        }
    }
}

impl Format for JournaldFormat {
    fn format(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
        match record.kind() {
            kind::EVENT => self.event(record, out),
            kind::TEXT => self.head(record.payload(), record.level(), out),
            k => {
                let text = format!("<kind {k} record>");
                self.head(text.as_bytes(), record.level(), out);
            }
        }
    }

    fn notice(&mut self, notice: &Notice<'_>, out: &mut Vec<u8>) {
        self.head(notice.message().as_bytes(), notice.level(), out);
        out.extend_from_slice(b"TARGET=nowait\nNOWAIT_NOTICE=1\n");
    }
}

/// journald's parser, as the native protocol defines it: the fields of
/// one entry, or `None` if the bytes are not one well-formed entry. Tests
/// and fuzz targets read the format's output back with it.
#[cfg(any(test, fuzzing))]
pub(crate) fn parse_entry(mut entry: &[u8]) -> Option<Vec<(String, Vec<u8>)>> {
    let mut fields = Vec::new();
    while !entry.is_empty() {
        let nl = entry.iter().position(|&b| b == b'\n')?;
        let line = &entry[..nl];
        if let Some(eq) = line.iter().position(|&b| b == b'=') {
            fields.push((
                String::from_utf8(line[..eq].to_vec()).ok()?,
                line[eq + 1..].to_vec(),
            ));
            entry = &entry[nl + 1..];
        } else {
            let rest = &entry[nl + 1..];
            let len = u64::from_le_bytes(*rest.first_chunk::<8>()?);
            let end = usize::try_from(len).ok()?.checked_add(8)?;
            let value = rest.get(8..end)?;
            if rest.get(end) != Some(&b'\n') {
                return None;
            }
            fields.push((String::from_utf8(line.to_vec()).ok()?, value.to_vec()));
            entry = &rest[end + 1..];
        }
    }
    Some(fields)
}

/// Whether journald accepts `name` from a client (see [`field_name`]).
#[cfg(any(test, fuzzing))]
pub(crate) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_NAME
        && !name.starts_with('_')
        && !name.as_bytes()[0].is_ascii_digit()
        && name
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{register_callsite, Callsite, EventBuf, FieldName, SiteKey};

    static SITE: u8 = 0;
    static SPAN: u8 = 0;

    /// The event's call site (fields `message`, `status`, `_pid`,
    /// `priority`, at src/http.rs:42) and the span's (`conn`, field
    /// `peer`); returns the event's key.
    fn register_sites() -> SiteKey {
        let key = SiteKey::of(&SITE);
        register_callsite(
            key,
            Callsite::new(Level::Info, "app::http", "event")
                .fields(vec!["message", "status", "_pid", "priority"])
                .location(Some("app::http"), Some("src/http.rs"), Some(42)),
        );
        register_callsite(
            SiteKey::of(&SPAN),
            Callsite::new(Level::Info, "app", "conn").fields(vec!["peer"]),
        );
        key
    }

    fn name(raw: &str) -> String {
        let mut out = Vec::new();
        field_name(raw, &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn names_become_what_journald_accepts() {
        assert_eq!(name("status"), "STATUS");
        assert_eq!(name("http.status-code"), "HTTP_STATUS_CODE");
        assert_eq!(name("_pid"), "F_PID");
        assert_eq!(name("2xx"), "F2XX");
        assert_eq!(name(""), "F");
        assert_eq!(name("priority"), "F_PRIORITY");
        assert_eq!(name("MESSAGE"), "F_MESSAGE");
        assert_eq!(name("message_id"), "MESSAGE_ID");
        assert_eq!(name("é"), "F__");
        assert_eq!(name("a.é"), "A___");
        assert_eq!(name(&"a".repeat(100)), "A".repeat(64));
        assert_eq!(name(&format!("_{}", "a".repeat(100))).len(), 64);
        for raw in [
            "",
            "_",
            "9",
            "a b",
            "\n",
            "über",
            "target",
            "x".repeat(70).as_str(),
        ] {
            assert!(valid_name(&name(raw)), "{raw:?} -> {}", name(raw));
        }
    }

    #[test]
    fn event_entry_is_exact() {
        let key = register_sites();
        let mut buf = EventBuf::new();
        buf.begin_at(1_000, key);
        buf.begin_span(SiteKey::of(&SPAN));
        buf.str(FieldName::Index(0), "10.0.0.7");
        buf.end_span();
        buf.str(FieldName::Index(0), "GET /\nforged=1");
        buf.u64(FieldName::Index(1), 200);
        buf.i64(FieldName::Index(2), -7);
        buf.bool(FieldName::Index(3), true);
        buf.str(FieldName::Inline("user.name"), "\x1b[31mroot");
        buf.char(FieldName::Inline("c"), 'é');
        buf.str(FieldName::Inline("message"), "second");
        let mut f = Journald::new()
            .syslog_identifier("web")
            .make_format(&SinkInfo::new("journald", false));
        let mut out = Vec::new();
        f.format(
            &Record::new(Level::Warn, kind::EVENT, buf.as_bytes()),
            &mut out,
        );
        let mut want = b"MESSAGE\n".to_vec();
        want.extend_from_slice(&14u64.to_le_bytes());
        want.extend_from_slice(
            b"GET /\nforged=1\nPRIORITY=4\nSYSLOG_IDENTIFIER=web\nTARGET=app::http\n\
              CODE_FILE=src/http.rs\nCODE_LINE=42\nSPAN_NAME=conn\nPEER=10.0.0.7\n\
              STATUS=200\nF_PID=-7\nF_PRIORITY=true\nUSER_NAME=\x1b[31mroot\nC=\xc3\xa9\n\
              F_MESSAGE=second\n",
        );
        assert_eq!(
            String::from_utf8_lossy(&out),
            String::from_utf8_lossy(&want)
        );
        assert_eq!(out, want);
    }

    #[test]
    fn text_records_notices_and_malformed_events() {
        let mut f = Journald::new()
            .syslog_identifier("a\nb")
            .make_format(&SinkInfo::new("journald", false));
        let mut out = Vec::new();
        f.notice(
            &Notice::new(
                Level::Warn,
                std::time::SystemTime::UNIX_EPOCH,
                "3 records dropped",
            ),
            &mut out,
        );
        let mut ident = b"SYSLOG_IDENTIFIER\n".to_vec();
        ident.extend_from_slice(&3u64.to_le_bytes());
        ident.extend_from_slice(b"a\nb\n");
        let want = [
            b"MESSAGE=3 records dropped\nPRIORITY=4\n".to_vec(),
            ident.clone(),
            b"TARGET=nowait\nNOWAIT_NOTICE=1\n".to_vec(),
        ]
        .concat();
        assert_eq!(out, want);
        for (level, p) in [
            (Level::Error, 3),
            (Level::Warn, 4),
            (Level::Info, 6),
            (Level::Debug, 7),
            (Level::Trace, 7),
        ] {
            out.clear();
            f.format(&Record::new(level, kind::TEXT, b"t"), &mut out);
            let want = [
                format!("MESSAGE=t\nPRIORITY={p}\n").into_bytes(),
                ident.clone(),
            ]
            .concat();
            assert_eq!(out, want);
        }
        out.clear();
        f.format(&Record::new(Level::Info, kind::EVENT, b"short"), &mut out);
        let fields = parse_entry(&out).unwrap();
        assert_eq!(fields[0], ("MESSAGE".into(), b"<malformed event>".to_vec()));
        assert_eq!(fields.last().unwrap().0, "NOWAIT_MALFORMED");
    }

    /// Random events of every shape give one well-formed entry each, every
    /// name valid, and nothing can add a field: a value's bytes come back
    /// whole from the parser.
    #[test]
    fn random_events_parse_back_as_one_entry_of_valid_names() {
        let key = register_sites();
        let mut f = Journald::new()
            .with_thread_ids(true)
            .make_format(&SinkInfo::new("journald", false));
        let mut next = crate::format::test_rng();
        for _ in 0..2000 {
            let payload = crate::format::random_event(&mut next, [key, key], SiteKey::of(&SPAN));
            let mut out = Vec::new();
            f.format(&Record::new(Level::Info, kind::EVENT, &payload), &mut out);
            let fields =
                parse_entry(&out).unwrap_or_else(|| panic!("{:?}", String::from_utf8_lossy(&out)));
            assert_eq!(fields[0].0, "MESSAGE");
            assert_eq!(fields[1], ("PRIORITY".into(), b"6".to_vec()));
            for (n, _) in &fields {
                assert!(valid_name(n), "{n}");
            }
            assert_eq!(fields.iter().filter(|(n, _)| n == "PRIORITY").count(), 1);
        }
    }
}
