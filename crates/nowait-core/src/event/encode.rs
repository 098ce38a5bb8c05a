//! Writing events in the binary form (front-end side, hot path).
//!
//! # The encoding ([`kind::EVENT`](crate::record::kind::EVENT) payloads)
//!
//! All integers are little-endian.
//!
//! ```text
//! event   := time:u64 site:u64 [target] [thread] [trace] item*
//! time    := ns since the Unix epoch | raw clock ticks with the top bit set
//! target  := len:u16 bytes                      (only when site == 0)
//! thread  := 0xFF number:u32                    (the producer thread, see below)
//! trace   := 0xFC trace_id:[u8; 16] span_id:[u8; 8] flags:u8
//!                                               (the OpenTelemetry span it was logged in)
//! item    := index:u8 value                     (0..=251: the call site's field #index)
//!          | 0xFD len:u8 name value             (a field named inline)
//!          | 0xFE site:u64 len:u32 field-items  (one enclosing span, outermost first)
//! value   := 0 len:u32 bytes    a string, printed quoted in text
//!          | 1 len:u32 bytes    text rendered on the caller (Debug/Display), printed as is
//!          | 2 u64 | 3 i64 | 4 f64 | 5 bool:u8 | 6 char:u32
//!          | 7 n:u8 value{n}    the arguments of the call site's deferred message format
//! ```
//!
//! The thread item is there only when a sink's format prints thread names
//! or ids (`MakeFormat::needs_thread`,
//! read by front ends through `Logger::records_thread`): a small number
//! given to each thread on its first event, whose name and `ThreadId` the
//! thread registers then, once, for the writer to look up (see
//! [`EventBuf::thread`]).
//!
//! The trace item is there only when the front end knows the
//! OpenTelemetry span the event was logged in ([`EventBuf::trace_context`],
//! read back as [`Event::trace_context`]): an event without one is not a
//! byte longer. Its tag is one a field index cannot take, and it is read
//! only in the header, so an item list never contains it.
//!
//! Front ends without call sites (the `log` facade's) give the source file
//! and line, when a format prints them, as the inline fields
//! [`LOCATION_FILE`] and [`LOCATION_LINE`], which formats show as the
//! location and not as fields.
//!
//! Call sites are identified by a [`SiteKey`]: the address of a `'static`
//! item that describes them (a `tracing` `Metadata`, a macro's static). The
//! front end registers a [`Callsite`] under that key once; the writer looks
//! names up by key, so an event carries no names, only values.
//!
//! An event larger than a record may be (`Logger::max_record_len`) is
//! cut by its front end with [`EventBuf::truncate_to`] before it is pushed,
//! into an event of the same form: the decoder sees nothing special, only
//! values that end in `… [truncated]`.
//!

use std::cell::RefCell;
use std::fmt::{self, Write as _};

use super::*;

/// How an event item names its field.
///
/// # Examples
///
/// ```
/// use nowait_core::event::FieldName;
///
/// let by_index = FieldName::Index(2);
/// let inline = FieldName::Inline("user_id");
/// assert_ne!(by_index, inline);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldName<'a> {
    /// The call site's field number `n` (see [`Callsite::field`]). Indices
    /// above 251 cannot be encoded; use `Inline` for those.
    Index(usize),
    /// A name carried in the event itself (up to 255 bytes), for front ends
    /// without static field lists (the `log` facade's key-values).
    Inline(&'a str),
}

/// A reusable buffer that encodes one event.
///
/// Front ends take the calling thread's buffer with [`with_event_buf`] (no
/// allocation once it has grown), encode the event, and push
/// [`as_bytes`](EventBuf::as_bytes) as a [`kind::EVENT`](crate::record::kind::EVENT)
/// record.
///
/// # Examples
///
/// ```
/// use nowait_core::__private::event::{register_callsite, EventBuf};
/// use nowait_core::event::{Callsite, FieldName, SiteKey};
/// use nowait_core::{Builder, Level, Sink};
/// use nowait_core::record::kind;
///
/// static SITE: u8 = 0;
/// let key = SiteKey::of(&SITE);
/// register_callsite(key, Callsite::new(Level::Info, "app", "ev").fields(vec!["message", "n"]));
///
/// # let (logger, _guard) = Builder::new().sink(Sink::writer(std::io::sink())).build().unwrap();
/// let mut buf = EventBuf::new();
/// buf.begin(key);
/// buf.str(FieldName::Index(0), "hello");
/// buf.u64(FieldName::Index(1), 42);
/// # nowait_core::__private::logger::try_push(&logger, Level::Info, kind::EVENT, &[buf.as_bytes()]).unwrap();
/// ```
#[derive(Debug, Default)]
pub struct EventBuf {
    pub(super) bytes: Vec<u8>,
    /// Where the length of the span being encoded goes, while one is open.
    span_len_at: Option<usize>,
    /// Length of the event header (time, site and inline target): 0 for a
    /// buffer used without `begin`.
    pub(super) head: usize,
    /// Whether the header has a thread item.
    pub(super) thread: bool,
    /// Whether the header ends in a trace item.
    pub(super) trace: bool,
}

impl EventBuf {
    /// An empty buffer.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(nowait_core::__private::event::EventBuf::new().as_bytes().is_empty());
    /// ```
    pub fn new() -> EventBuf {
        EventBuf::default()
    }

    /// Starts an event of call site `site`, timestamped now.
    ///
    /// # Examples
    ///
    /// ```
    /// # static SITE: u8 = 0;
    /// let mut buf = nowait_core::__private::event::EventBuf::new();
    /// buf.begin(nowait_core::event::SiteKey::of(&SITE));
    /// assert_eq!(buf.as_bytes().len(), 16);
    /// ```
    #[inline]
    pub fn begin(&mut self, site: SiteKey) {
        self.begin_at(crate::record::clock::now(), site);
    }

    /// Starts an event of call site `site` with an explicit timestamp
    /// (nanoseconds since the Unix epoch, or a [`timestamp`]); for tests,
    /// replays and front ends that read the clock themselves.
    ///
    /// # Examples
    ///
    /// ```
    /// # static SITE: u8 = 0;
    /// let mut buf = nowait_core::__private::event::EventBuf::new();
    /// buf.begin_at(0, nowait_core::event::SiteKey::of(&SITE));
    /// ```
    #[inline]
    pub fn begin_at(&mut self, time_nanos: u64, site: SiteKey) {
        self.bytes.clear();
        self.span_len_at = None;
        let mut b = [0u8; HEADER];
        b[..8].copy_from_slice(&time_nanos.to_le_bytes());
        b[8..].copy_from_slice(&site.get().to_le_bytes());
        self.bytes.extend_from_slice(&b);
        self.head = HEADER;
        self.thread = false;
        self.trace = false;
    }

    /// Replaces the contents with an event `payload` writes, whose header
    /// is time, call site and, with `thread`, the thread item (the macros'
    /// direct encoding, when the event is too large for a record and must
    /// be cut here first).
    /// Puts `cx`'s trace item at the end of the header of an event loaded
    /// with [`load_encoded`](EventBuf::load_encoded) (the items after it
    /// move); nothing if it has one.
    pub(crate) fn insert_trace_context(&mut self, cx: TraceContext) {
        if self.head == 0 || self.trace {
            return;
        }
        let head = self.head;
        self.bytes.splice(head..head, cx.encode());
        self.head = head + TraceContext::ENCODED_LEN;
        self.trace = true;
    }

    pub(crate) fn load_encoded(&mut self, payload: &dyn crate::ring::Payload, thread: bool) {
        self.bytes.clear();
        self.bytes.resize(payload.payload_len(), 0);
        payload.write_to(&mut self.bytes);
        self.span_len_at = None;
        self.head = super::header_size(thread);
        self.thread = thread;
        self.trace = false;
    }

    /// Starts an event without a registered call site: its target travels in
    /// the event (cut at 65535 bytes). Used by the `log` front end, whose
    /// records have no `'static` description.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut buf = nowait_core::__private::event::EventBuf::new();
    /// buf.begin_inline(0, "hyper::proto");
    /// ```
    pub fn begin_inline(&mut self, time_nanos: u64, target: &str) {
        self.bytes.clear();
        self.span_len_at = None;
        self.bytes.extend_from_slice(&time_nanos.to_le_bytes());
        self.bytes.extend_from_slice(&0u64.to_le_bytes());
        let target = cut(target, u16::MAX as usize);
        self.bytes
            .extend_from_slice(&(target.len() as u16).to_le_bytes());
        self.bytes.extend_from_slice(target.as_bytes());
        self.head = self.bytes.len();
        self.thread = false;
        self.trace = false;
    }

    /// Records the calling thread (for formats that print thread names or
    /// ids): call it right after [`begin`](EventBuf::begin) or
    /// [`begin_inline`](EventBuf::begin_inline), when
    /// `Logger::records_thread` says a
    /// sink needs it. Anywhere else it does nothing.
    ///
    /// Adds five bytes. The thread's first call gives it a number and
    /// registers its name and `ThreadId` (one allocation and a lock, once
    /// per thread); later calls read a thread-local.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut buf = nowait_core::__private::event::EventBuf::new();
    /// buf.begin_inline(0, "app");
    /// buf.thread();
    /// let event = nowait_core::event::Event::parse(buf.as_bytes()).unwrap();
    /// assert!(event.thread().is_some());
    /// ```
    #[inline]
    pub fn thread(&mut self) {
        if self.head == 0 || self.bytes.len() != self.head || self.thread || self.trace {
            return;
        }
        let number = super::thread::current();
        self.bytes.push(ITEM_THREAD);
        self.bytes.extend_from_slice(&number.to_le_bytes());
        self.head = self.bytes.len();
        self.thread = true;
    }

    /// Records the OpenTelemetry span the event is logged in: call it
    /// after [`begin`](EventBuf::begin) or
    /// [`begin_inline`](EventBuf::begin_inline) and
    /// [`thread`](EventBuf::thread), before any item. Anywhere else, or a
    /// second time, it does nothing.
    ///
    /// Adds 26 bytes; every format shows it (OTLP's `trace_id`, `span_id`
    /// and `flags`; `trace_id` and `span_id` in JSON, and in text when
    /// asked, see `Text::with_trace_ids`).
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::event::{Event, TraceContext};
    ///
    /// let cx = TraceContext::new([1; 16], [2; 8], 1);
    /// let mut buf = nowait_core::__private::event::EventBuf::new();
    /// buf.begin_inline(0, "app");
    /// buf.thread();
    /// buf.trace_context(cx);
    /// let event = Event::parse(buf.as_bytes()).unwrap();
    /// assert_eq!(event.trace_context(), Some(cx));
    /// assert!(event.thread().is_some());
    /// ```
    #[inline]
    pub fn trace_context(&mut self, cx: TraceContext) {
        if self.head == 0 || self.bytes.len() != self.head || self.trace {
            return;
        }
        self.bytes.extend_from_slice(&cx.encode());
        self.head = self.bytes.len();
        self.trace = true;
    }

    /// Opens an enclosing span (outermost first): the fields that follow,
    /// until [`end_span`](EventBuf::end_span), belong to it and name
    /// themselves after the span's call site.
    ///
    /// # Examples
    ///
    /// ```
    /// # use nowait_core::__private::event::EventBuf;
    /// # use nowait_core::event::{FieldName, SiteKey};
    /// # static EV: u8 = 0; static SPAN: u8 = 0;
    /// let mut buf = EventBuf::new();
    /// buf.begin(SiteKey::of(&EV));
    /// buf.begin_span(SiteKey::of(&SPAN));
    /// buf.u64(FieldName::Index(0), 7);
    /// buf.end_span();
    /// ```
    pub fn begin_span(&mut self, site: SiteKey) {
        self.end_span();
        self.bytes.push(ITEM_SPAN);
        self.bytes.extend_from_slice(&site.get().to_le_bytes());
        self.span_len_at = Some(self.bytes.len());
        self.bytes.extend_from_slice(&0u32.to_le_bytes());
    }

    /// Appends a span whose fields were encoded earlier (for example when
    /// the span was created) with an `EventBuf` used through
    /// [`field_bytes`](EventBuf::field_bytes).
    ///
    /// # Examples
    ///
    /// ```
    /// # use nowait_core::__private::event::EventBuf;
    /// # use nowait_core::event::{FieldName, SiteKey};
    /// # static EV: u8 = 0; static SPAN: u8 = 0;
    /// let mut fields = EventBuf::new();
    /// fields.u64(FieldName::Index(0), 7);
    /// let mut buf = EventBuf::new();
    /// buf.begin(SiteKey::of(&EV));
    /// buf.span(SiteKey::of(&SPAN), fields.field_bytes());
    /// ```
    pub fn span(&mut self, site: SiteKey, encoded_fields: &[u8]) {
        self.end_span();
        self.bytes.push(ITEM_SPAN);
        self.bytes.extend_from_slice(&site.get().to_le_bytes());
        self.bytes
            .extend_from_slice(&(encoded_fields.len() as u32).to_le_bytes());
        self.bytes.extend_from_slice(encoded_fields);
    }

    /// Appends spans encoded earlier, in order, by [`span`](EventBuf::span)
    /// calls on a buffer used through [`field_bytes`](EventBuf::field_bytes)
    /// (a front end's cached chain of enclosing spans: one copy per event
    /// instead of one lookup per span).
    ///
    /// # Examples
    ///
    /// ```
    /// # use nowait_core::__private::event::EventBuf;
    /// # use nowait_core::event::{FieldName, SiteKey};
    /// # static EV: u8 = 0; static OUTER: u8 = 0; static INNER: u8 = 0;
    /// let mut chain = EventBuf::new();
    /// chain.clear();
    /// chain.span(SiteKey::of(&OUTER), &[]);
    /// chain.span(SiteKey::of(&INNER), &[]);
    /// let (mut a, mut b) = (EventBuf::new(), EventBuf::new());
    /// a.begin_at(1, SiteKey::of(&EV));
    /// a.spans(chain.field_bytes());
    /// b.begin_at(1, SiteKey::of(&EV));
    /// b.span(SiteKey::of(&OUTER), &[]);
    /// b.span(SiteKey::of(&INNER), &[]);
    /// assert_eq!(a.as_bytes(), b.as_bytes());
    /// ```
    #[inline]
    pub fn spans(&mut self, encoded_spans: &[u8]) {
        self.end_span();
        self.bytes.extend_from_slice(encoded_spans);
    }

    /// Closes the span opened by [`begin_span`](EventBuf::begin_span); the
    /// fields that follow belong to the event. Does nothing if no span is
    /// open.
    ///
    /// # Examples
    ///
    /// ```
    /// nowait_core::__private::event::EventBuf::new().end_span();
    /// ```
    #[inline]
    pub fn end_span(&mut self) {
        if let Some(at) = self.span_len_at.take() {
            let len = (self.bytes.len() - at - 4) as u32;
            self.bytes[at..at + 4].copy_from_slice(&len.to_le_bytes());
        }
    }

    /// Clears the buffer to encode a list of fields alone (see
    /// [`span`](EventBuf::span)).
    ///
    /// # Examples
    ///
    /// ```
    /// let mut fields = nowait_core::__private::event::EventBuf::new();
    /// fields.clear();
    /// fields.bool(nowait_core::event::FieldName::Index(0), true);
    /// assert_eq!(fields.field_bytes().len(), 3);
    /// ```
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.span_len_at = None;
        self.head = 0;
        self.thread = false;
        self.trace = false;
    }

    /// The encoded fields of a buffer used without `begin` (see
    /// [`span`](EventBuf::span)).
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(nowait_core::__private::event::EventBuf::new().field_bytes().is_empty());
    /// ```
    pub fn field_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The encoded event, to push as one record.
    ///
    /// # Examples
    ///
    /// ```
    /// # static SITE: u8 = 0;
    /// let mut buf = nowait_core::__private::event::EventBuf::new();
    /// buf.begin_at(1, nowait_core::event::SiteKey::of(&SITE));
    /// assert_eq!(&buf.as_bytes()[..8], &1u64.to_le_bytes());
    /// ```
    pub fn as_bytes(&mut self) -> &[u8] {
        self.end_span();
        &self.bytes
    }

    /// Current encoded length in bytes.
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(nowait_core::__private::event::EventBuf::new().len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Whether nothing is encoded.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(nowait_core::__private::event::EventBuf::new().is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    #[inline]
    fn name(&mut self, name: FieldName<'_>) {
        match name {
            FieldName::Index(i) if i <= MAX_FIELD_INDEX => self.bytes.push(i as u8),
            _ => self.name_slow(name),
        }
    }

    /// A field of a fixed-size value, `item` being its name byte (left
    /// 0 by the caller), tag and value: one capacity check for a field
    /// named by index.
    #[inline(always)]
    fn fixed<const N: usize>(&mut self, name: FieldName<'_>, mut item: [u8; N]) {
        match name {
            FieldName::Index(i) if i <= MAX_FIELD_INDEX => {
                item[0] = i as u8;
                self.bytes.extend_from_slice(&item);
            }
            _ => {
                self.name_slow(name);
                self.bytes.extend_from_slice(&item[1..]);
            }
        }
    }

    /// A name that is not a plain field index: kept out of line, so that
    /// the callers' fast path stays small.
    #[cold]
    #[inline(never)]
    fn name_slow(&mut self, name: FieldName<'_>) {
        match name {
            FieldName::Index(i) if i <= MAX_FIELD_INDEX => self.bytes.push(i as u8),
            FieldName::Index(i) => {
                // Not addressable by index: name it by number instead of
                // losing it.
                let mut b = itoa::Buffer::new();
                let s = b.format(i);
                self.bytes.push(ITEM_INLINE);
                self.bytes.push(s.len() as u8);
                self.bytes.extend_from_slice(s.as_bytes());
            }
            FieldName::Inline(s) => {
                let s = cut(s, u8::MAX as usize);
                self.bytes.push(ITEM_INLINE);
                self.bytes.push(s.len() as u8);
                self.bytes.extend_from_slice(s.as_bytes());
            }
        }
    }

    /// Appends a string field (printed quoted and escaped in text).
    ///
    /// # Examples
    ///
    /// ```
    /// nowait_core::__private::event::EventBuf::new().str(nowait_core::event::FieldName::Inline("user"), "ana");
    /// ```
    #[inline]
    pub fn str(&mut self, name: FieldName<'_>, value: &str) {
        let len = value.len().min(u32::MAX as usize);
        let mut item = [0, T_STR, 0, 0, 0, 0];
        item[2..].copy_from_slice(&(len as u32).to_le_bytes());
        self.fixed(name, item);
        self.bytes.extend_from_slice(&value.as_bytes()[..len]);
    }

    /// Appends an unsigned integer field.
    ///
    /// # Examples
    ///
    /// ```
    /// nowait_core::__private::event::EventBuf::new().u64(nowait_core::event::FieldName::Index(0), 200);
    /// ```
    #[inline]
    pub fn u64(&mut self, name: FieldName<'_>, value: u64) {
        let mut item = [0, T_U64, 0, 0, 0, 0, 0, 0, 0, 0];
        item[2..].copy_from_slice(&value.to_le_bytes());
        self.fixed(name, item);
    }

    /// Appends a signed integer field.
    ///
    /// # Examples
    ///
    /// ```
    /// nowait_core::__private::event::EventBuf::new().i64(nowait_core::event::FieldName::Index(0), -1);
    /// ```
    #[inline]
    pub fn i64(&mut self, name: FieldName<'_>, value: i64) {
        let mut item = [0, T_I64, 0, 0, 0, 0, 0, 0, 0, 0];
        item[2..].copy_from_slice(&value.to_le_bytes());
        self.fixed(name, item);
    }

    /// Appends a floating-point field.
    ///
    /// # Examples
    ///
    /// ```
    /// nowait_core::__private::event::EventBuf::new().f64(nowait_core::event::FieldName::Index(0), 0.25);
    /// ```
    #[inline]
    pub fn f64(&mut self, name: FieldName<'_>, value: f64) {
        let mut item = [0, T_F64, 0, 0, 0, 0, 0, 0, 0, 0];
        item[2..].copy_from_slice(&value.to_bits().to_le_bytes());
        self.fixed(name, item);
    }

    /// Appends a boolean field.
    ///
    /// # Examples
    ///
    /// ```
    /// nowait_core::__private::event::EventBuf::new().bool(nowait_core::event::FieldName::Index(0), true);
    /// ```
    #[inline]
    pub fn bool(&mut self, name: FieldName<'_>, value: bool) {
        self.fixed(name, [0, T_BOOL, value as u8]);
    }

    /// Appends a character field.
    ///
    /// # Examples
    ///
    /// ```
    /// nowait_core::__private::event::EventBuf::new().char(nowait_core::event::FieldName::Index(0), 'x');
    /// ```
    #[inline]
    pub fn char(&mut self, name: FieldName<'_>, value: char) {
        let mut item = [0, T_CHAR, 0, 0, 0, 0];
        item[2..].copy_from_slice(&u32::from(value).to_le_bytes());
        self.fixed(name, item);
    }

    /// Appends a field rendered now, on the calling thread, with `Display`
    /// or `Debug` (`format_args!("{:?}", v)`): for values that cannot be
    /// copied as one of the typed forms. Printed as is (escaped) in text.
    ///
    /// Returns `Err` if the value's formatting failed or panicked; the
    /// field then holds what was written before the failure, and the caller
    /// should discard the event (see `Logger::discarded`).
    ///
    /// # Errors
    ///
    /// [`fmt::Error`] if the value's `Display`/`Debug` returned an error or
    /// panicked.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut buf = nowait_core::__private::event::EventBuf::new();
    /// buf.rendered(nowait_core::event::FieldName::Index(0), format_args!("{:?}", [1, 2])).unwrap();
    /// ```
    pub fn rendered(&mut self, name: FieldName<'_>, value: fmt::Arguments<'_>) -> fmt::Result {
        self.name(name);
        self.rendered_value(value)
    }

    /// Appends a field rendered now with its `Debug` implementation: what
    /// [`rendered`](EventBuf::rendered) with `format_args!("{:?}", value)`
    /// writes, by a shorter path (a front end's visitor handed a
    /// `&dyn Debug`, such as `tracing`'s message).
    ///
    /// # Errors
    ///
    /// As [`rendered`](EventBuf::rendered).
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::__private::event::EventBuf;
    /// use nowait_core::event::FieldName;
    ///
    /// let (mut a, mut b) = (EventBuf::new(), EventBuf::new());
    /// a.debug(FieldName::Index(0), &[1, 2]).unwrap();
    /// b.rendered(FieldName::Index(0), format_args!("{:?}", [1, 2])).unwrap();
    /// assert_eq!(a.field_bytes(), b.field_bytes());
    /// ```
    pub fn debug(&mut self, name: FieldName<'_>, value: &dyn fmt::Debug) -> fmt::Result {
        self.fixed(name, [0, T_RENDERED, 0, 0, 0, 0]);
        let start = self.bytes.len();
        let result = render_debug(&mut self.bytes, value);
        let len = u32::try_from(self.bytes.len() - start).unwrap_or(u32::MAX);
        self.bytes[start - 4..start].copy_from_slice(&len.to_le_bytes());
        result
    }

    /// Appends the arguments of the call site's deferred message format:
    /// `count` values follow, written with the `arg_*` methods.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut buf = nowait_core::__private::event::EventBuf::new();
    /// buf.args(nowait_core::event::FieldName::Index(0), 2);
    /// buf.arg_u64(200);
    /// buf.arg_str("/index.html");
    /// ```
    #[inline]
    pub fn args(&mut self, name: FieldName<'_>, count: u8) {
        self.fixed(name, [0, T_ARGS, count]);
    }

    /// A deferred argument: unsigned integer.
    ///
    /// # Examples
    ///
    /// ```
    /// nowait_core::__private::event::EventBuf::new().arg_u64(1);
    /// ```
    #[inline]
    pub fn arg_u64(&mut self, value: u64) {
        let mut item = [T_U64, 0, 0, 0, 0, 0, 0, 0, 0];
        item[1..].copy_from_slice(&value.to_le_bytes());
        self.bytes.extend_from_slice(&item);
    }

    /// A deferred argument: signed integer.
    ///
    /// # Examples
    ///
    /// ```
    /// nowait_core::__private::event::EventBuf::new().arg_i64(-1);
    /// ```
    #[inline]
    pub fn arg_i64(&mut self, value: i64) {
        let mut item = [T_I64, 0, 0, 0, 0, 0, 0, 0, 0];
        item[1..].copy_from_slice(&value.to_le_bytes());
        self.bytes.extend_from_slice(&item);
    }

    /// A deferred argument: floating point.
    ///
    /// # Examples
    ///
    /// ```
    /// nowait_core::__private::event::EventBuf::new().arg_f64(0.5);
    /// ```
    #[inline]
    pub fn arg_f64(&mut self, value: f64) {
        let mut item = [T_F64, 0, 0, 0, 0, 0, 0, 0, 0];
        item[1..].copy_from_slice(&value.to_bits().to_le_bytes());
        self.bytes.extend_from_slice(&item);
    }

    /// A deferred argument: boolean.
    ///
    /// # Examples
    ///
    /// ```
    /// nowait_core::__private::event::EventBuf::new().arg_bool(true);
    /// ```
    #[inline]
    pub fn arg_bool(&mut self, value: bool) {
        self.bytes.extend_from_slice(&[T_BOOL, value as u8]);
    }

    /// A deferred argument: character.
    ///
    /// # Examples
    ///
    /// ```
    /// nowait_core::__private::event::EventBuf::new().arg_char('x');
    /// ```
    #[inline]
    pub fn arg_char(&mut self, value: char) {
        let mut item = [T_CHAR, 0, 0, 0, 0];
        item[1..].copy_from_slice(&u32::from(value).to_le_bytes());
        self.bytes.extend_from_slice(&item);
    }

    /// A deferred argument: string.
    ///
    /// # Examples
    ///
    /// ```
    /// nowait_core::__private::event::EventBuf::new().arg_str("x");
    /// ```
    #[inline]
    pub fn arg_str(&mut self, value: &str) {
        self.str_value(T_STR, value.as_bytes());
    }

    /// A deferred argument rendered now (a type the writer cannot format).
    ///
    /// # Errors
    ///
    /// As [`rendered`](EventBuf::rendered).
    ///
    /// # Examples
    ///
    /// ```
    /// nowait_core::__private::event::EventBuf::new().arg_rendered(format_args!("{:?}", ())).unwrap();
    /// ```
    pub fn arg_rendered(&mut self, value: fmt::Arguments<'_>) -> fmt::Result {
        self.rendered_value(value)
    }

    #[inline]
    fn str_value(&mut self, tag: u8, bytes: &[u8]) {
        let len = bytes.len().min(u32::MAX as usize);
        let mut head = [tag, 0, 0, 0, 0];
        head[1..].copy_from_slice(&(len as u32).to_le_bytes());
        self.bytes.extend_from_slice(&head);
        self.bytes.extend_from_slice(&bytes[..len]);
    }

    fn rendered_value(&mut self, value: fmt::Arguments<'_>) -> fmt::Result {
        let at = self.bytes.len() + 1;
        self.bytes.extend_from_slice(&[T_RENDERED, 0, 0, 0, 0]);
        let result = match value.as_str() {
            Some(s) => {
                self.bytes.extend_from_slice(s.as_bytes());
                Ok(())
            }
            None => render(&mut self.bytes, value),
        };
        let len = (self.bytes.len() - at - 4).min(u32::MAX as usize) as u32;
        if let Some(len_bytes) = self.bytes.get_mut(at..at + 4) {
            len_bytes.copy_from_slice(&len.to_le_bytes());
        }
        result
    }
}

/// Renders `value` at the end of `bytes`; `Err` if its formatting failed
/// or panicked. Inline: one call less for each rendered value.
#[inline]
fn render(bytes: &mut Vec<u8>, value: fmt::Arguments<'_>) -> fmt::Result {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        Utf8Sink(bytes).write_fmt(value)
    }))
    .unwrap_or(Err(fmt::Error))
}

/// [`render`] of one `Debug` value: its `Debug::fmt` runs under the one
/// formatter `fmt::write` makes, with no `Arguments` of our own around it.
#[inline]
fn render_debug(bytes: &mut Vec<u8>, value: &dyn fmt::Debug) -> fmt::Result {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        fmt::write(&mut Utf8Sink(bytes), format_args!("{value:?}"))
    }))
    .unwrap_or(Err(fmt::Error))
}

struct Utf8Sink<'a>(&'a mut Vec<u8>);

impl fmt::Write for Utf8Sink<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.0.extend_from_slice(s.as_bytes());
        Ok(())
    }
}

/// Length of an event header without inline target: time and site.
pub(super) const HEADER: usize = 16;
/// Cuts `s` to at most `max` bytes on a character boundary.
pub(super) fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

thread_local! {
    static BUF: RefCell<EventBuf> = RefCell::new(EventBuf::new());
}

/// Runs `f` with the calling thread's reusable [`EventBuf`].
///
/// The buffer keeps its capacity between events, so encoding allocates
/// nothing once it has grown to the largest event. If `f` logs again (a
/// `Display` impl that logs), the inner call gets a fresh buffer instead of
/// deadlocking or panicking; during thread teardown, too.
///
/// # Examples
///
/// ```
/// use nowait_core::__private::event::with_event_buf;
/// use nowait_core::event::FieldName;
///
/// let len = with_event_buf(|buf| {
///     buf.clear();
///     buf.u64(FieldName::Index(0), 1);
///     buf.len()
/// });
/// assert_eq!(len, 10);
/// ```
#[inline]
pub fn with_event_buf<R>(f: impl FnOnce(&mut EventBuf) -> R) -> R {
    let mut f = Some(f);
    let done = BUF.try_with(|cell| {
        cell.try_borrow_mut()
            .ok()
            .map(|mut buf| (f.take().expect("called once"))(&mut buf))
    });
    match done {
        Ok(Some(r)) => r,
        _ => (f.take().expect("not called yet"))(&mut EventBuf::new()),
    }
}

/// The time field of an event happening now, for
/// [`EventBuf::begin_at`] and [`EventBuf::begin_inline`]: raw clock ticks
/// (one TSC read) once a logger has been built, which the writer thread
/// converts to wall-clock time.
///
/// # Examples
///
/// ```
/// let mut buf = nowait_core::__private::event::EventBuf::new();
/// buf.begin_inline(nowait_core::__private::event::timestamp(), "app");
/// ```
#[inline]
pub fn timestamp() -> u64 {
    crate::record::clock::now()
}

/// The inline field in which a front end without call sites (the `log`
/// facade's) gives an event's source file, when
/// `Logger::records_location` asks for
/// it: first among the event's fields, a string. Formats show it as the
/// file (`Text::with_file`), never as a field.
/// The name is the one `tracing-log` uses.
///
/// # Examples
///
/// ```
/// use nowait_core::__private::event::{EventBuf, LOCATION_FILE, LOCATION_LINE};
/// use nowait_core::event::FieldName;
///
/// let mut buf = EventBuf::new();
/// buf.begin_inline(0, "app");
/// buf.str(FieldName::Inline(LOCATION_FILE), "src/main.rs");
/// buf.u64(FieldName::Inline(LOCATION_LINE), 7);
/// ```
pub const LOCATION_FILE: &str = "log.file";
/// The inline field with the source line (a `u64`), next to
/// [`LOCATION_FILE`].
///
/// # Examples
///
/// ```
/// assert_eq!(nowait_core::__private::event::LOCATION_LINE, "log.line");
/// ```
pub const LOCATION_LINE: &str = "log.line";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reentrant_event_buf_gets_a_fresh_buffer() {
        let outer = with_event_buf(|a| {
            a.clear();
            a.u64(FieldName::Index(0), 1);
            let inner = with_event_buf(|b| {
                assert!(b.is_empty());
                b.u64(FieldName::Index(0), 2);
                b.len()
            });
            assert_eq!(a.len(), 10);
            inner
        });
        assert_eq!(outer, 10);
    }
}
