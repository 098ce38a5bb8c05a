//! The reading side: one total parser of the frames, and the decoded
//! [`Entry`] a format renders.
//!
//! 1. Bytes come from any [`Read`] in chunks into one buffer; a frame is
//!    taken only once all of its bytes are there, so a cut file ends at
//!    its last whole frame. Memory grows with the bytes read, never with
//!    what a length field claims, and a frame longer than
//!    [`MAX_FRAME`](super::MAX_FRAME) is an error before any of it is read.
//! 2. Header frames check the magic and version (each version's frames
//!    are read as that version wrote them), and start a new scope: the
//!    call-site and thread numbers after it are those of the entries
//!    after it, and compact times count from zero until an anchor.
//! 3. Site and thread frames go to the catalog reader
//!    (`event::catalog`), which registers them here, deduplicated by
//!    content and capped in bytes.
//! 4. A compact event is decoded back into the event encoding (`compact`:
//!    checked lengths, output bounded by a small multiple of the input);
//!    then every event is rewritten for this process (keys and numbers of
//!    the catalog) by the one walk of the event grammar that recovery also
//!    uses; notices are decoded field by field.
//!
//! Nothing recurses; every length is checked against the bytes there.

use std::fmt;
use std::io::{self, Read};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::{
    compact, FLAG_COMPACT, FLAG_KEPT, FLAG_KIND, FLAG_SUPPRESSED, FLAG_TIME, F_ANCHOR, F_NOTICE,
    F_RECORD, F_SITE, F_THREAD, HEADER_LEN, LEVEL_SHIFT, MAGIC, MAX_FRAME, VERSION, VERSION_1,
};
use crate::event::catalog::{rewrite_event, Catalog};
use crate::event::{lookup_callsite, ByteReader, Event, FieldName, Item, SiteKey, Value};
use crate::format::Format;
use crate::level::Level;
use crate::record::{kind, Notice, Record, SuppressReason, Suppressed};

/// Bytes asked of the input per read.
const CHUNK: usize = 64 * 1024;
/// Catalog bytes one reader may register (and so keep for the life of
/// the process): far more than any program's call sites.
const CATALOG_BUDGET: usize = 16 << 20;

/// A call-site key registered nowhere: what an event's unknown call site
/// is rewritten to, so that it cannot name one of this process's.
static UNKNOWN_SITE: u8 = 0;

/// Reads a binary log file (see [`binary`](super)): an iterator of
/// [`Entry`]s, in file order.
///
/// The iterator ends (`None`) at the end of the input, after the last
/// whole frame; [`stop`](Reader::stop) then says whether bytes of a frame
/// were left over. Calling [`next`](Iterator::next) again reads on, which
/// is how a file that is still being written is followed. After an error
/// (`Some(Err(..))`) it ends for good.
///
/// # Examples
///
/// ```
/// use nowait_core::binary::{Reader, Stop};
///
/// let mut reader = Reader::new(&b"\x89NWB\r\n\x1a\n\x01\0\0\0\0\0\0\0"[..]);
/// assert!(reader.next().is_none());
/// assert_eq!(reader.stop(), Stop::End);
///
/// let mut reader = Reader::new(&b"hello, world"[..]);
/// let err = reader.next().unwrap().unwrap_err();
/// assert_eq!(err.offset(), 0);
/// ```
pub struct Reader<R> {
    input: R,
    /// Bytes read are `buf[..end]`; the rest is room, zeroed once when
    /// the buffer grew.
    buf: Vec<u8>,
    end: usize,
    /// `buf[pos..end]` is not yet consumed.
    pos: usize,
    /// Input offset of `buf[pos]`.
    offset: u64,
    catalog: Catalog,
    /// Whether a header has been read (the input starts with one).
    started: bool,
    /// The format version the last header stated.
    version: u32,
    /// The time the next compact event's difference counts from.
    prev_time: u64,
    failed: bool,
}

impl<R> fmt::Debug for Reader<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reader")
            .field("offset", &self.offset)
            .field("buffered", &(self.end - self.pos))
            .finish()
    }
}

/// Where a [`Reader`] stopped, once its iterator has ended.
///
/// # Examples
///
/// ```
/// use nowait_core::binary::{Reader, Stop};
///
/// // A header cut after 5 bytes.
/// let mut reader = Reader::new(&b"\x89NWB\r"[..]);
/// assert!(reader.next().is_none());
/// assert_eq!(reader.stop(), Stop::Cut { at: 0, len: 5 });
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Stop {
    /// At the end of the input, after a whole frame (or of an empty input).
    End,
    /// The input ends inside a frame: the `len` bytes from offset `at` are
    /// the start of a frame whose rest is missing (a file cut short, or
    /// one still being written).
    Cut {
        /// Offset of the incomplete frame.
        at: u64,
        /// Its bytes that are there.
        len: u64,
    },
    /// An error was returned (a file that is not nowait's, or damaged
    /// there): nothing after it is read.
    Failed,
}

/// Why a [`Reader`] could not read on.
///
/// # Examples
///
/// ```
/// use nowait_core::binary::{ReadErrorKind, Reader};
///
/// let err = Reader::new(&b"not a log"[..]).next().unwrap().unwrap_err();
/// assert!(matches!(err.kind(), ReadErrorKind::NotBinaryLog));
/// assert!(err.to_string().contains("not a nowait binary log"));
/// ```
#[derive(Debug)]
pub struct ReadError {
    offset: u64,
    kind: ReadErrorKind,
}

/// What a [`ReadError`] is.
///
/// # Examples
///
/// ```
/// use nowait_core::binary::ReadErrorKind;
///
/// let kind = ReadErrorKind::Version(9);
/// assert!(matches!(kind, ReadErrorKind::Version(9)));
/// ```
#[derive(Debug)]
#[non_exhaustive]
pub enum ReadErrorKind {
    /// The input does not start with a binary log's magic.
    NotBinaryLog,
    /// A header states a version this reader does not know.
    Version(u32),
    /// A frame has a tag no file of its version has: the file is damaged
    /// here.
    UnknownFrame(u8),
    /// A frame states a length past the limit: the file is damaged here.
    TooLong(u64),
    /// A record or notice frame's body does not parse: damaged here.
    Malformed,
    /// Reading the input failed.
    Io(io::Error),
}

impl ReadError {
    /// The input offset of the frame that could not be read: everything
    /// before it was read.
    ///
    /// # Examples
    ///
    /// ```
    /// let err = nowait_core::binary::Reader::new(&b"x"[..]).next().unwrap().unwrap_err();
    /// assert_eq!(err.offset(), 0);
    /// ```
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// What went wrong.
    ///
    /// # Examples
    ///
    /// ```
    /// let err = nowait_core::binary::Reader::new(&b"x"[..]).next().unwrap().unwrap_err();
    /// assert!(matches!(err.kind(), nowait_core::binary::ReadErrorKind::NotBinaryLog));
    /// ```
    pub fn kind(&self) -> &ReadErrorKind {
        &self.kind
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = self.offset;
        match &self.kind {
            ReadErrorKind::NotBinaryLog => write!(f, "not a nowait binary log file"),
            ReadErrorKind::Version(v) => write!(
                f,
                "at byte {at}: binary log format version {v}, this reader knows versions {VERSION_1} to {VERSION}"
            ),
            ReadErrorKind::UnknownFrame(tag) => {
                write!(f, "damaged at byte {at}: unknown frame tag {tag:#04x}")
            }
            ReadErrorKind::TooLong(len) => {
                write!(f, "damaged at byte {at}: a frame of {len} bytes")
            }
            ReadErrorKind::Malformed => write!(f, "damaged at byte {at}: a malformed frame"),
            ReadErrorKind::Io(e) => write!(f, "at byte {at}: {e}"),
        }
    }
}

impl std::error::Error for ReadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            ReadErrorKind::Io(e) => Some(e),
            _ => None,
        }
    }
}

/// One record or notice read from a binary log, with its call site and
/// thread registered in this process, ready to render.
///
/// # Examples
///
/// ```
/// # use nowait_core::binary::Reader;
/// # use nowait_core::{Builder, Sink, Level};
/// # let dir = tempfile::tempdir()?;
/// # let path = dir.path().join("app.nwb");
/// # let (logger, guard) = Builder::new().sink(Sink::binary(&path)).build()?;
/// # logger.log(Level::Warn, "disk almost full")?;
/// # drop(guard);
/// let entry = Reader::new(std::fs::File::open(&path)?).next().unwrap()?;
/// assert_eq!(entry.level(), Level::Warn);
/// assert_eq!(entry.target(), "");
/// assert!(!entry.is_notice());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct Entry {
    offset: u64,
    level: Level,
    kept: bool,
    body: Body,
}

#[derive(Clone, Debug)]
enum Body {
    Record {
        kind: u8,
        /// When the writer handled it, for a record without a time of
        /// its own.
        stamp: Option<u64>,
        payload: Vec<u8>,
    },
    Notice {
        time: u64,
        message: String,
        suppressed: Option<(u64, String, SuppressReason, String)>,
    },
}

impl Entry {
    /// The input offset of the entry's frame.
    ///
    /// # Examples
    ///
    /// ```
    /// # use nowait_core::binary::Reader;
    /// # use nowait_core::{Builder, Sink, Level};
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("app.nwb");
    /// # let (logger, guard) = Builder::new().sink(Sink::binary(&path)).build()?;
    /// # logger.log(Level::Warn, "w")?;
    /// # drop(guard);
    /// let entry = Reader::new(std::fs::File::open(&path)?).next().unwrap()?;
    /// // After the 16-byte header and the 10-byte anchor frame (this record
    /// // names no call site, so the file describes none before it).
    /// assert_eq!(entry.offset(), 26);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// The record's or notice's level.
    ///
    /// # Examples
    ///
    /// ```
    /// # use nowait_core::binary::Reader;
    /// # use nowait_core::{Builder, Sink, Level};
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("app.nwb");
    /// # let (logger, guard) = Builder::new().sink(Sink::binary(&path)).build()?;
    /// # logger.log(Level::Error, "e")?;
    /// # drop(guard);
    /// let entry = Reader::new(std::fs::File::open(&path)?).next().unwrap()?;
    /// assert_eq!(entry.level(), Level::Error);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn level(&self) -> Level {
        self.level
    }

    /// Whether it is a notice from nowait itself (a loss, a sink error,
    /// suppressed calls).
    ///
    /// # Examples
    ///
    /// ```
    /// # use nowait_core::binary::Reader;
    /// # use nowait_core::{Builder, Sink, Level};
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("app.nwb");
    /// # let (logger, guard) = Builder::new().sink(Sink::binary(&path)).build()?;
    /// # logger.log(Level::Error, "e")?;
    /// # drop(guard);
    /// let entry = Reader::new(std::fs::File::open(&path)?).next().unwrap()?;
    /// assert!(!entry.is_notice());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_notice(&self) -> bool {
        matches!(self.body, Body::Notice { .. })
    }

    /// When it happened, in nanoseconds since the Unix epoch: an event's
    /// time, a notice's, or for a record without one (a plain text
    /// record) when the writer handled it.
    ///
    /// # Examples
    ///
    /// ```
    /// # use nowait_core::binary::Reader;
    /// # use nowait_core::{Builder, Sink};
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("app.nwb");
    /// # let (logger, guard) = Builder::new().sink(Sink::binary(&path)).build()?;
    /// # nowait_core::set_global(logger)?;
    /// nowait_core::info!("now");
    /// # drop(guard);
    /// let entry = Reader::new(std::fs::File::open(&path)?).next().unwrap()?;
    /// assert!(entry.time_nanos().is_some());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn time_nanos(&self) -> Option<u64> {
        match &self.body {
            Body::Record {
                kind,
                payload,
                stamp,
            } if *kind == kind::EVENT => Event::parse(payload).map(|e| e.time_nanos()).or(*stamp),
            Body::Record { stamp, .. } => *stamp,
            Body::Notice { time, .. } => Some(*time),
        }
    }

    /// The target, as the formats print it: an event's, `nowait` for a
    /// notice, `""` for a plain text record, `?` for an event whose call
    /// site is unknown.
    ///
    /// # Examples
    ///
    /// ```
    /// # use nowait_core::binary::Reader;
    /// # use nowait_core::{Builder, Sink};
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("app.nwb");
    /// # let (logger, guard) = Builder::new().sink(Sink::binary(&path)).build()?;
    /// # nowait_core::set_global(logger)?;
    /// nowait_core::info!(target: "db", "connected");
    /// # drop(guard);
    /// let entry = Reader::new(std::fs::File::open(&path)?).next().unwrap()?;
    /// assert_eq!(entry.target(), "db");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn target(&self) -> String {
        match &self.body {
            Body::Record { kind, payload, .. } if *kind == kind::EVENT => {
                let Some(event) = Event::parse(payload) else {
                    return "?".into();
                };
                if let Some(site) = event.site().and_then(lookup_callsite) {
                    return site.target().into();
                }
                match event.target_bytes() {
                    Some(t) => String::from_utf8_lossy(t).into_owned(),
                    None => "?".into(),
                }
            }
            Body::Record { .. } => String::new(),
            Body::Notice { .. } => "nowait".into(),
        }
    }

    /// The value of an event's field `name` as text (a string as it is,
    /// a number or boolean as `Display` writes it), the first if several
    /// have the name, the event's own before its spans'. `None` for other
    /// entries, a field it does not have, and a deferred message (its
    /// arguments are not a value).
    ///
    /// # Examples
    ///
    /// ```
    /// # use nowait_core::binary::Reader;
    /// # use nowait_core::{Builder, Sink};
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("app.nwb");
    /// # let (logger, guard) = Builder::new().sink(Sink::binary(&path)).build()?;
    /// # nowait_core::set_global(logger)?;
    /// nowait_core::info!(user = "ann", rows = 3u64, "done");
    /// # drop(guard);
    /// let entry = Reader::new(std::fs::File::open(&path)?).next().unwrap()?;
    /// assert_eq!(entry.field("user").as_deref(), Some("ann"));
    /// assert_eq!(entry.field("rows").as_deref(), Some("3"));
    /// assert_eq!(entry.field("none"), None);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn field(&self, name: &str) -> Option<String> {
        let Body::Record { kind, payload, .. } = &self.body else {
            return None;
        };
        if *kind != kind::EVENT {
            return None;
        }
        let event = Event::parse(payload)?;
        let site = event.site().and_then(lookup_callsite);
        let mut in_spans = None;
        for item in event.items() {
            match item {
                Item::Field { name: n, value } => {
                    if field_name(n, site.as_deref()) == Some(name) {
                        if let Some(text) = value_text(value) {
                            return Some(text);
                        }
                    }
                }
                Item::Span { site, fields } => {
                    if in_spans.is_some() {
                        continue;
                    }
                    let span_site = lookup_callsite(site);
                    for inner in fields.items() {
                        if let Item::Field { name: n, value } = inner {
                            if field_name(n, span_site.as_deref()) == Some(name) {
                                in_spans = value_text(value);
                                if in_spans.is_some() {
                                    break;
                                }
                            }
                        }
                    }
                }
                Item::Malformed => break,
            }
        }
        in_spans
    }

    /// Appends what `format` makes of the entry: what a sink with that
    /// format would have written for the record or notice.
    ///
    /// # Examples
    ///
    /// ```
    /// # use nowait_core::binary::Reader;
    /// # use nowait_core::{Builder, Sink, Level};
    /// use nowait_core::format::{MakeFormat, Plain, SinkInfo};
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("app.nwb");
    /// # let (logger, guard) = Builder::new().sink(Sink::binary(&path)).build()?;
    /// # logger.log(Level::Info, "hello")?;
    /// # drop(guard);
    /// let entry = Reader::new(std::fs::File::open(&path)?).next().unwrap()?;
    /// let mut out = Vec::new();
    /// entry.render(&mut *Plain.make_format(&SinkInfo::new("cat", false)), &mut out);
    /// assert_eq!(out, b"hello\n");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn render(&self, format: &mut dyn Format, out: &mut Vec<u8>) {
        match &self.body {
            Body::Record {
                kind,
                payload,
                stamp,
            } => {
                let record = Record::new(self.level, *kind, payload);
                let mut render = || {
                    if self.kept {
                        format.format_kept(&record, out);
                    } else {
                        format.format(&record, out);
                    }
                };
                match stamp {
                    Some(t) => crate::format::with_render_time(*t, render),
                    None => render(),
                }
            }
            Body::Notice {
                time,
                message,
                suppressed,
            } => {
                let time = UNIX_EPOCH + Duration::from_nanos(*time);
                let mut notice = Notice::new(self.level, time, message);
                if let Some((count, site, reason, rule)) = suppressed {
                    notice = notice.with_suppressed(Suppressed::new(*count, site, *reason, rule));
                }
                if self.kept {
                    format.kept_notice(&notice, out);
                } else {
                    format.notice(&notice, out);
                }
            }
        }
    }
}

fn field_name<'a>(name: FieldName<'a>, site: Option<&crate::event::Callsite>) -> Option<&'a str> {
    match name {
        FieldName::Index(i) => site.and_then(|s| s.field(i)),
        FieldName::Inline(n) => Some(n),
    }
}

fn value_text(value: Value<'_>) -> Option<String> {
    Some(match value {
        Value::Str(s) | Value::Rendered(s) => String::from_utf8_lossy(s).into_owned(),
        Value::U64(n) => n.to_string(),
        Value::I64(n) => n.to_string(),
        Value::F64(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Char(c) => c.to_string(),
        Value::Args(_) => return None,
    })
}

impl<R: Read> Reader<R> {
    /// A reader of `input`, which must start with a binary log's header.
    ///
    /// # Examples
    ///
    /// ```
    /// let reader = nowait_core::binary::Reader::new(std::io::empty());
    /// assert_eq!(reader.offset(), 0);
    /// ```
    pub fn new(input: R) -> Reader<R> {
        let mut catalog = Catalog::with_budget(CATALOG_BUDGET);
        catalog.unknown_site = Some(SiteKey::of(&UNKNOWN_SITE).get());
        Reader {
            input,
            buf: Vec::new(),
            end: 0,
            pos: 0,
            offset: 0,
            catalog,
            started: false,
            version: VERSION,
            prev_time: 0,
            failed: false,
        }
    }

    /// The input offset up to which frames have been read.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut reader = nowait_core::binary::Reader::new(&b"\x89NWB\r\n\x1a\n\x01\0\0\0\0\0\0\0"[..]);
    /// assert!(reader.next().is_none());
    /// assert_eq!(reader.offset(), 16);
    /// ```
    pub fn offset(&self) -> u64 {
        self.offset
    }

    /// Where the reader stopped (meaningful once [`next`](Iterator::next)
    /// returned `None` or an error).
    ///
    /// # Examples
    ///
    /// ```
    /// let mut reader = nowait_core::binary::Reader::new(std::io::empty());
    /// assert!(reader.next().is_none());
    /// assert_eq!(reader.stop(), nowait_core::binary::Stop::End);
    /// ```
    pub fn stop(&self) -> Stop {
        if self.failed {
            Stop::Failed
        } else if self.pos < self.end {
            Stop::Cut {
                at: self.offset,
                len: (self.end - self.pos) as u64,
            }
        } else {
            Stop::End
        }
    }

    /// Makes `n` unconsumed bytes available; `false` if the input ends
    /// first (what it had is kept for the next try).
    fn fill(&mut self, n: usize) -> io::Result<bool> {
        while self.end - self.pos < n {
            if self.pos > 0 && (self.pos >= self.end / 2 || self.buf.len() - self.pos < n) {
                self.buf.copy_within(self.pos..self.end, 0);
                self.end -= self.pos;
                self.pos = 0;
            }
            let missing = n - (self.end - self.pos);
            if self.buf.len() - self.end < missing.min(CHUNK) {
                // Room for what is missing, at most a megabyte at a time:
                // the buffer grows with the bytes that arrive, not with a
                // length the input states.
                let want = missing.clamp(CHUNK, 1 << 20);
                self.buf.resize(self.end + want, 0);
            }
            let got = loop {
                match self.input.read(&mut self.buf[self.end..]) {
                    Ok(got) => break got,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                }
            };
            self.end += got;
            if got == 0 {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn fail(&mut self, kind: ReadErrorKind) -> Option<Result<Entry, ReadError>> {
        self.failed = true;
        Some(Err(ReadError {
            offset: self.offset,
            kind,
        }))
    }

    fn consume(&mut self, n: usize) {
        self.pos += n;
        self.offset += n as u64;
    }

    /// The next frame's tag, the bytes before its body and its bytes in
    /// all (`None`: the input ends first), or an error.
    fn frame(&mut self) -> Result<Option<(u8, usize, usize)>, ReadErrorKind> {
        if !self.fill(1).map_err(ReadErrorKind::Io)? {
            return Ok(None);
        }
        let tag = self.buf[self.pos];
        if tag == MAGIC[0] || !self.started {
            // A header: checked as far as it is there, so that a file
            // that is not a binary log says so even when it is short.
            let have = (self.end - self.pos).min(HEADER_LEN);
            let avail = &self.buf[self.pos..self.pos + have];
            let not_ours = if self.offset == 0 {
                ReadErrorKind::NotBinaryLog
            } else {
                ReadErrorKind::Malformed
            };
            if avail[..have.min(8)] != MAGIC[..have.min(8)] {
                return Err(not_ours);
            }
            if !self.fill(HEADER_LEN).map_err(ReadErrorKind::Io)? {
                let have = (self.end - self.pos).min(8);
                if self.buf[self.pos..self.pos + have] != MAGIC[..have] {
                    return Err(not_ours);
                }
                return Ok(None);
            }
            let h = &self.buf[self.pos..self.pos + HEADER_LEN];
            if h[..8] != MAGIC {
                return Err(not_ours);
            }
            let version = u32::from_le_bytes([h[8], h[9], h[10], h[11]]);
            if !(VERSION_1..=VERSION).contains(&version) {
                return Err(ReadErrorKind::Version(version));
            }
            return Ok(Some((MAGIC[0], 0, HEADER_LEN)));
        }
        let known = match self.version {
            VERSION_1 => matches!(tag, F_SITE | F_THREAD | F_RECORD | F_NOTICE),
            _ => matches!(tag, F_SITE | F_THREAD | F_RECORD | F_NOTICE | F_ANCHOR),
        };
        if !known {
            return Err(ReadErrorKind::UnknownFrame(tag));
        }
        let (len, head) = if self.version == VERSION_1 {
            if !self.fill(5).map_err(ReadErrorKind::Io)? {
                return Ok(None);
            }
            let b = &self.buf[self.pos + 1..self.pos + 5];
            (u64::from(u32::from_le_bytes([b[0], b[1], b[2], b[3]])), 5)
        } else {
            // The varint's bytes, as many as it has (ten at most).
            let mut have = 1;
            loop {
                if !self.fill(1 + have).map_err(ReadErrorKind::Io)? {
                    return Ok(None);
                }
                if self.buf[self.pos + have] & 0x80 == 0 || have == 10 {
                    break;
                }
                have += 1;
            }
            let bytes = &self.buf[self.pos + 1..self.pos + 1 + have];
            let (len, used) = compact::varint_at(bytes).ok_or(ReadErrorKind::Malformed)?;
            (len, 1 + used)
        };
        let len = usize::try_from(len)
            .ok()
            .filter(|&l| l <= MAX_FRAME)
            .ok_or(ReadErrorKind::TooLong(len))?;
        if !self.fill(head + len).map_err(ReadErrorKind::Io)? {
            return Ok(None);
        }
        Ok(Some((tag, head, head + len)))
    }
}

impl<R: Read> Iterator for Reader<R> {
    type Item = Result<Entry, ReadError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        loop {
            let (tag, head, len) = match self.frame() {
                Ok(Some(frame)) => frame,
                Ok(None) => return None,
                Err(kind) => return self.fail(kind),
            };
            let at = self.offset;
            let frame = &self.buf[self.pos..self.pos + len];
            let body = &frame[head..];
            match tag {
                t if t == MAGIC[0] => {
                    self.started = true;
                    self.version = u32::from_le_bytes([frame[8], frame[9], frame[10], frame[11]]);
                    self.prev_time = 0;
                    self.catalog.forget_keys();
                }
                F_SITE | F_THREAD => self.catalog.add(tag, body),
                F_ANCHOR => {
                    let Ok(time) = <[u8; 8]>::try_from(body) else {
                        return self.fail(ReadErrorKind::Malformed);
                    };
                    self.prev_time = u64::from_le_bytes(time);
                }
                F_RECORD => {
                    let entry = if self.version == VERSION_1 {
                        record(at, body, &self.catalog)
                    } else {
                        record_v2(at, body, &self.catalog, &mut self.prev_time)
                    };
                    let Some(entry) = entry else {
                        return self.fail(ReadErrorKind::Malformed);
                    };
                    self.consume(len);
                    return Some(Ok(entry));
                }
                _ => {
                    let Some(entry) = notice(at, body) else {
                        return self.fail(ReadErrorKind::Malformed);
                    };
                    self.consume(len);
                    return Some(Ok(entry));
                }
            }
            self.consume(len);
        }
    }
}

/// The call sites and threads of this process that a file's codes and
/// numbers stand for (as `rewrite_event` maps them).
struct Here<'a>(&'a Catalog);

impl compact::Keys for Here<'_> {
    fn site(&self, code: u64) -> u64 {
        let cat = self.0;
        cat.sites
            .get(&code)
            .or(cat.unknown_site.as_ref())
            .copied()
            .unwrap_or(code)
    }
    fn thread(&self, number: u32) -> u32 {
        self.0.threads.get(&number).copied().unwrap_or(0)
    }
}

/// A raw clock reading has no meaning here (the writer converts them):
/// shown as the epoch, not as this process's clock.
fn wall_only(t: u64) -> u64 {
    if t >> 63 == 0 {
        t
    } else {
        0
    }
}

/// A version-2 record frame's body: `head [kind] [time] payload`, the
/// payload a compact event or as the ring held it.
fn record_v2(offset: u64, body: &[u8], catalog: &Catalog, prev: &mut u64) -> Option<Entry> {
    let (&head, mut rest) = body.split_first()?;
    let flags = head & ((1 << LEVEL_SHIFT) - 1);
    if flags & !(FLAG_KEPT | FLAG_TIME | FLAG_KIND | FLAG_COMPACT) != 0 {
        return None;
    }
    let level = Level::from_u8(head >> LEVEL_SHIFT)?;
    let kind = if flags & FLAG_KIND != 0 {
        let (&k, r) = rest.split_first()?;
        rest = r;
        k
    } else {
        kind::EVENT
    };
    let stamp = if flags & FLAG_TIME != 0 {
        let (t, r) = rest.split_first_chunk::<8>()?;
        rest = r;
        Some(u64::from_le_bytes(*t))
    } else {
        None
    };
    let payload = if flags & FLAG_COMPACT != 0 {
        if kind != kind::EVENT || stamp.is_some() {
            return None;
        }
        // A compact event decodes to about three times its size (a
        // one-byte varint becomes eight bytes): room for that at once, no
        // more than a frame's bound for what a length claims.
        let mut payload = Vec::with_capacity(
            rest.len()
                .saturating_mul(4)
                .saturating_add(32)
                .min(MAX_FRAME),
        );
        let time = compact::decode(rest, *prev, &Here(catalog), &mut payload)?;
        *prev = time;
        payload[..8].copy_from_slice(&wall_only(time).to_le_bytes());
        payload
    } else {
        let mut payload = rest.to_vec();
        if kind == kind::EVENT {
            rewrite_event(&mut payload, wall_only, catalog);
        }
        payload
    };
    Some(Entry {
        offset,
        level,
        kept: flags & FLAG_KEPT != 0,
        body: Body::Record {
            kind,
            stamp,
            payload,
        },
    })
}

/// A version-1 record frame's body: `flags level kind payload`.
fn record(offset: u64, body: &[u8], catalog: &Catalog) -> Option<Entry> {
    let [flags, level, kind, rest @ ..] = body else {
        return None;
    };
    let level = Level::from_u8(*level)?;
    let (stamp, payload) = if flags & FLAG_TIME != 0 {
        let (t, payload) = rest.split_first_chunk::<8>()?;
        (Some(u64::from_le_bytes(*t)), payload)
    } else {
        (None, rest)
    };
    let mut payload = payload.to_vec();
    if *kind == kind::EVENT {
        rewrite_event(&mut payload, wall_only, catalog);
    }
    Some(Entry {
        offset,
        level,
        kept: flags & FLAG_KEPT != 0,
        body: Body::Record {
            kind: *kind,
            stamp,
            payload,
        },
    })
}

/// A notice frame's body (see the module docs).
fn notice(offset: u64, body: &[u8]) -> Option<Entry> {
    let mut r = ByteReader(body);
    let flags = r.u8()?;
    let level = Level::from_u8(r.u8()?)?;
    let time = r.u64()?;
    let len = usize::try_from(r.u32()?).ok()?;
    let message = std::str::from_utf8(r.take(len)?).ok()?.to_owned();
    let suppressed = if flags & FLAG_SUPPRESSED != 0 {
        let count = r.u64()?;
        let reason = match r.u8()? {
            0 => SuppressReason::RateLimit,
            1 => SuppressReason::Sampling,
            _ => return None,
        };
        let site = str16(&mut r)?;
        let rule = str16(&mut r)?;
        Some((count, site, reason, rule))
    } else {
        None
    };
    if !r.0.is_empty() {
        return None;
    }
    // A time past what `SystemTime` holds cannot come from a writer.
    SystemTime::UNIX_EPOCH.checked_add(Duration::from_nanos(time))?;
    Some(Entry {
        offset,
        level,
        kept: flags & FLAG_KEPT != 0,
        body: Body::Notice {
            time,
            message,
            suppressed,
        },
    })
}

/// A string of at most 64 KiB after its `u16` length.
fn str16(r: &mut ByteReader<'_>) -> Option<String> {
    let len = r.u16()?;
    Some(
        std::str::from_utf8(r.take(usize::from(len))?)
            .ok()?
            .to_owned(),
    )
}
