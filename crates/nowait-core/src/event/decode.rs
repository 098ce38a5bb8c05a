//! Reading events back (writer side). Never panics on malformed input: a
//! truncated or corrupt payload ends the iteration with
//! [`Item::Malformed`].

use std::sync::Arc;

use super::callsite::SiteKey;
use super::*;

/// A decoded event, borrowed from a record's payload.
///
/// # Examples
///
/// ```
/// # use nowait_core::__private::event::EventBuf;
/// use nowait_core::event::{Event, FieldName, Item, Value};
///
/// # let mut buf = EventBuf::new();
/// # buf.begin_inline(1_000, "app");
/// # buf.u64(FieldName::Inline("n"), 3);
/// # let payload = buf.as_bytes();
/// // A record's payload (`Record::payload`) of kind `EVENT`: target "app",
/// // one field `n = 3`.
/// let event = Event::parse(payload).unwrap();
/// assert_eq!(event.target(), Some("app"));
/// let items: Vec<_> = event.items().collect();
/// assert!(matches!(items[..], [Item::Field { value: Value::U64(3), .. }]));
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Event<'a> {
    time_nanos: u64,
    site: u64,
    target: Option<&'a [u8]>,
    thread: Option<u32>,
    trace: Option<TraceContext>,
    items: &'a [u8],
}

impl<'a> Event<'a> {
    /// Parses the header of an event payload; `None` if it is too short.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(nowait_core::event::Event::parse(b"short").is_none());
    /// ```
    pub fn parse(payload: &'a [u8]) -> Option<Event<'a>> {
        let mut r = Reader(payload);
        let time_nanos = r.u64()?;
        let site = r.u64()?;
        let target = if site == 0 {
            let len = r.u16()?;
            Some(r.take(usize::from(len))?)
        } else {
            None
        };
        let thread = match r.0 {
            [ITEM_THREAD, a, b, c, d, ..] => {
                let number = u32::from_le_bytes([*a, *b, *c, *d]);
                r.0 = &r.0[5..];
                Some(number)
            }
            _ => None,
        };
        // One compare when there is none.
        let trace = match r.0.first() {
            Some(&ITEM_TRACE) => TraceContext::decode(r.0),
            _ => None,
        };
        if trace.is_some() {
            r.0 = &r.0[TraceContext::ENCODED_LEN..];
        }
        Some(Event {
            time_nanos,
            site,
            target,
            thread,
            trace,
            items: r.0,
        })
    }

    /// The timestamp, in nanoseconds since the Unix epoch.
    ///
    /// # Examples
    ///
    /// ```
    /// # let mut buf = nowait_core::__private::event::EventBuf::new();
    /// # buf.begin_inline(5, "t");
    /// # let payload = buf.as_bytes();
    /// assert_eq!(nowait_core::event::Event::parse(payload).unwrap().time_nanos(), 5);
    /// ```
    pub fn time_nanos(&self) -> u64 {
        crate::record::clock::to_unix_nanos(self.time_nanos)
    }

    /// The call site's key, if the event has one.
    ///
    /// # Examples
    ///
    /// ```
    /// # let mut buf = nowait_core::__private::event::EventBuf::new();
    /// # buf.begin_inline(5, "t");
    /// # let payload = buf.as_bytes();
    /// assert_eq!(nowait_core::event::Event::parse(payload).unwrap().site(), None);
    /// ```
    pub fn site(&self) -> Option<SiteKey> {
        (self.site != 0).then(|| SiteKey::from_raw(self.site))
    }

    /// The inline target (events without a call site), lossily as UTF-8
    /// would need allocation, so invalid UTF-8 gives `None`.
    ///
    /// # Examples
    ///
    /// ```
    /// # let mut buf = nowait_core::__private::event::EventBuf::new();
    /// # buf.begin_inline(5, "db");
    /// # let payload = buf.as_bytes();
    /// assert_eq!(nowait_core::event::Event::parse(payload).unwrap().target(), Some("db"));
    /// ```
    pub fn target(&self) -> Option<&'a str> {
        std::str::from_utf8(self.target?).ok()
    }

    /// The number of the thread that recorded the event, if it did (see
    /// `Logger::records_thread`).
    ///
    /// # Examples
    ///
    /// ```
    /// # let mut buf = nowait_core::__private::event::EventBuf::new();
    /// # buf.begin_inline(5, "db");
    /// # let payload = buf.as_bytes();
    /// assert_eq!(nowait_core::event::Event::parse(payload).unwrap().thread(), None);
    /// ```
    pub fn thread(&self) -> Option<u32> {
        self.thread
    }

    /// The OpenTelemetry span the event was logged in, if its front end
    /// recorded one (the `tracing` layer with its `opentelemetry` feature).
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::event::{Event, TraceContext};
    ///
    /// # let mut buf = nowait_core::__private::event::EventBuf::new();
    /// # buf.begin_inline(5, "db");
    /// # buf.trace_context(TraceContext::new([1; 16], [2; 8], 1));
    /// # let payload = buf.as_bytes();
    /// let cx = Event::parse(payload).unwrap().trace_context().unwrap();
    /// assert_eq!(cx.span_id(), [2; 8]);
    /// ```
    pub fn trace_context(&self) -> Option<TraceContext> {
        self.trace
    }

    pub(crate) fn target_bytes(&self) -> Option<&'a [u8]> {
        self.target
    }

    /// The encoded items (after the header and the thread and trace items).
    pub(crate) fn items_bytes(&self) -> &'a [u8] {
        self.items
    }

    /// The event's items: its enclosing spans, then its fields.
    ///
    /// # Examples
    ///
    /// ```
    /// # let mut buf = nowait_core::__private::event::EventBuf::new();
    /// # buf.begin_inline(5, "db");
    /// # let payload = buf.as_bytes();
    /// assert_eq!(nowait_core::event::Event::parse(payload).unwrap().items().count(), 0);
    /// ```
    pub fn items(&self) -> Items<'a> {
        Items {
            r: Reader(self.items),
        }
    }
}

/// One item of an event (see [`Event::items`]).
#[derive(Clone, Copy, Debug)]
pub enum Item<'a> {
    /// A field of the event, or of a span (inside [`SpanFields`]).
    Field {
        /// How the field is named.
        name: FieldName<'a>,
        /// Its value.
        value: Value<'a>,
    },
    /// An enclosing span, outermost first.
    Span {
        /// The span's call site.
        site: SiteKey,
        /// The span's fields.
        fields: SpanFields<'a>,
    },
    /// The rest of the payload could not be decoded.
    Malformed,
}

/// A field value.
#[derive(Clone, Copy, Debug)]
pub enum Value<'a> {
    /// A string (bytes as pushed; UTF-8 unless the encoder was misused).
    Str(&'a [u8]),
    /// Text rendered on the caller.
    Rendered(&'a [u8]),
    /// An unsigned integer.
    U64(u64),
    /// A signed integer.
    I64(i64),
    /// A floating-point number.
    F64(f64),
    /// A boolean.
    Bool(bool),
    /// A character (an invalid scalar decodes as U+FFFD).
    Char(char),
    /// The arguments of the call site's deferred message format.
    Args(Args<'a>),
}

/// The arguments of a deferred message.
#[derive(Clone, Copy, Debug)]
pub struct Args<'a> {
    count: u8,
    bytes: &'a [u8],
}

impl<'a> Args<'a> {
    /// The arguments in order; `None` items mark a malformed tail.
    ///
    /// # Examples
    ///
    /// ```
    /// # use nowait_core::__private::event::EventBuf;
    /// use nowait_core::event::{Event, FieldName, Item, Value};
    ///
    /// # let mut buf = EventBuf::new();
    /// # buf.begin_inline(0, "t");
    /// # buf.args(FieldName::Index(0), 1);
    /// # buf.arg_u64(7);
    /// # let payload = buf.as_bytes();
    /// let ev = Event::parse(payload).unwrap();
    /// let Some(Item::Field { value: Value::Args(args), .. }) = ev.items().next() else { panic!() };
    /// assert!(matches!(args.iter().next(), Some(Some(Value::U64(7)))));
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = Option<Value<'a>>> + 'a {
        let mut r = Reader(self.bytes);
        let mut left = self.count;
        std::iter::from_fn(move || {
            if left == 0 {
                return None;
            }
            left -= 1;
            let v = r.arg();
            if v.is_none() {
                left = 0;
            }
            Some(v)
        })
    }

    /// How many arguments the event carries.
    ///
    /// # Examples
    ///
    /// ```
    /// # use nowait_core::__private::event::EventBuf;
    /// # use nowait_core::event::{Event, FieldName, Item, Value};
    /// # let mut buf = EventBuf::new();
    /// # buf.begin_inline(0, "t");
    /// # buf.args(FieldName::Index(0), 0);
    /// # let ev = Event::parse(buf.as_bytes()).unwrap();
    /// # let Some(Item::Field { value: Value::Args(args), .. }) = ev.items().next() else { panic!() };
    /// assert_eq!(args.len(), 0);
    /// ```
    pub fn len(&self) -> usize {
        usize::from(self.count)
    }

    /// Whether there are no arguments.
    ///
    /// # Examples
    ///
    /// ```
    /// # use nowait_core::__private::event::EventBuf;
    /// # use nowait_core::event::{Event, FieldName, Item, Value};
    /// # let mut buf = EventBuf::new();
    /// # buf.begin_inline(0, "t");
    /// # buf.args(FieldName::Index(0), 0);
    /// # let ev = Event::parse(buf.as_bytes()).unwrap();
    /// # let Some(Item::Field { value: Value::Args(args), .. }) = ev.items().next() else { panic!() };
    /// assert!(args.is_empty());
    /// ```
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
}

/// The fields of one span (see [`Item::Span`]).
#[derive(Clone, Copy, Debug)]
pub struct SpanFields<'a> {
    bytes: &'a [u8],
}

impl<'a> SpanFields<'a> {
    /// The encoded field items.
    pub(crate) fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The span's fields ([`Item::Field`] or [`Item::Malformed`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # use nowait_core::__private::event::EventBuf;
    /// use nowait_core::event::{Event, FieldName, Item, SiteKey};
    ///
    /// static SPAN: u8 = 0;
    /// # let mut buf = EventBuf::new();
    /// # buf.begin_inline(0, "t");
    /// # buf.begin_span(SiteKey::of(&SPAN));
    /// # buf.u64(FieldName::Index(0), 1);
    /// # let payload = buf.as_bytes();
    /// let ev = Event::parse(payload).unwrap();
    /// let Some(Item::Span { fields, .. }) = ev.items().next() else { panic!() };
    /// assert_eq!(fields.items().count(), 1);
    /// ```
    pub fn items(&self) -> Items<'a> {
        Items {
            r: Reader(self.bytes),
        }
    }
}

/// Iterator over an event's items.
#[derive(Clone, Debug)]
pub struct Items<'a> {
    r: Reader<'a>,
}

impl<'a> Iterator for Items<'a> {
    type Item = Item<'a>;

    // Inlined into the formats' loops: returned through memory, the item's
    // fields were read back across store-forwarding stalls (a fifth of the
    // writer's time in a profile).
    #[inline(always)]
    fn next(&mut self) -> Option<Item<'a>> {
        if self.r.0.is_empty() {
            return None;
        }
        let item = self.r.item();
        if item.is_none() {
            self.r.0 = &[];
        }
        Some(item.unwrap_or(Item::Malformed))
    }
}

/// Reads little-endian fields off the front of a byte slice (the
/// payloads here; a crash-durable file's catalog in `durable`; a binary
/// log's frames in `binary`).
#[derive(Clone, Debug)]
pub(crate) struct Reader<'a>(pub(crate) &'a [u8]);

impl<'a> Reader<'a> {
    pub(crate) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }
    pub(crate) fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    pub(crate) fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.take(2)?.try_into().ok()?))
    }
    pub(crate) fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    pub(crate) fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    /// An unsigned LEB128 varint of at most ten bytes that fits 64 bits,
    /// in its shortest form (so that decoding and encoding again give the
    /// same bytes): a binary log's lengths and numbers.
    #[inline]
    pub(crate) fn varint(&mut self) -> Option<u64> {
        let mut v = 0u64;
        for i in 0..10 {
            let b = self.u8()?;
            let bits = u64::from(b & 0x7F);
            if i == 9 && bits > 1 {
                return None;
            }
            v |= bits << (7 * i);
            if b & 0x80 == 0 {
                if b == 0 && i > 0 {
                    return None;
                }
                return Some(v);
            }
        }
        None
    }

    #[inline(always)]
    fn item(&mut self) -> Option<Item<'a>> {
        let tag = self.u8()?;
        let name = match tag {
            ITEM_SPAN => {
                let site = self.u64()?;
                let len = self.u32()? as usize;
                let bytes = self.take(len)?;
                return Some(Item::Span {
                    site: SiteKey::from_raw(site),
                    fields: SpanFields { bytes },
                });
            }
            ITEM_INLINE => {
                let len = self.u8()?;
                let name = std::str::from_utf8(self.take(usize::from(len))?).ok()?;
                FieldName::Inline(name)
            }
            i if usize::from(i) <= MAX_FIELD_INDEX => FieldName::Index(usize::from(i)),
            _ => return None,
        };
        let value = self.value(true)?;
        Some(Item::Field { name, value })
    }

    #[inline(always)]
    fn value(&mut self, allow_args: bool) -> Option<Value<'a>> {
        Some(match self.u8()? {
            T_STR => {
                let len = self.u32()? as usize;
                Value::Str(self.take(len)?)
            }
            T_RENDERED => {
                let len = self.u32()? as usize;
                Value::Rendered(self.take(len)?)
            }
            T_U64 => Value::U64(self.u64()?),
            T_I64 => Value::I64(self.u64()? as i64),
            T_F64 => Value::F64(f64::from_bits(self.u64()?)),
            T_BOOL => Value::Bool(self.u8()? != 0),
            T_CHAR => Value::Char(char::from_u32(self.u32()?).unwrap_or('\u{fffd}')),
            // A message without arguments (most) needs no call.
            T_ARGS if allow_args && self.0.first() == Some(&0) => {
                self.0 = &self.0[1..];
                Value::Args(Args {
                    count: 0,
                    bytes: &[],
                })
            }
            T_ARGS if allow_args => self.args()?,
            _ => return None,
        })
    }

    /// The arguments of a deferred message, measured so that the next item
    /// starts after them.
    #[inline(never)]
    fn args(&mut self) -> Option<Value<'a>> {
        let count = self.u8()?;
        let start = self.0;
        for _ in 0..count {
            self.arg()?;
        }
        let used = start.len() - self.0.len();
        Some(Value::Args(Args {
            count,
            bytes: &start[..used],
        }))
    }

    /// One argument (no nested arguments).
    fn arg(&mut self) -> Option<Value<'a>> {
        self.value(false)
    }
}

/// The item of an event's item list that starts at `at` in `bytes` and
/// ends by `end`, and where it ends: the decoder's cursor, for readers that
/// walk the encoding by position (the truncation walker, which rewrites
/// the bytes as it goes). `None` if it does not decode.
pub(crate) fn item_at(bytes: &[u8], at: usize, end: usize) -> Option<(Item<'_>, usize)> {
    let mut r = Reader(bytes.get(at..end)?);
    let item = r.item()?;
    Some((item, end - r.0.len()))
}

/// The value that starts at `at` in `bytes` and ends by `end` (deferred
/// message arguments only if `allow_args`), and where it ends.
pub(crate) fn value_at(
    bytes: &[u8],
    at: usize,
    end: usize,
    allow_args: bool,
) -> Option<(Value<'_>, usize)> {
    let mut r = Reader(bytes.get(at..end)?);
    let value = r.value(allow_args)?;
    Some((value, end - r.0.len()))
}

impl Value<'_> {
    /// The bytes its encoding takes, tag included.
    pub(crate) fn encoded_len(&self) -> usize {
        match self {
            Value::Str(b) | Value::Rendered(b) => 5 + b.len(),
            Value::U64(_) | Value::I64(_) | Value::F64(_) => 9,
            Value::Bool(_) => 2,
            Value::Char(_) => 5,
            Value::Args(a) => 2 + a.bytes.len(),
        }
    }
}

/// Where `inner`, a slice borrowed from `outer` (as every slice the
/// decoder hands out is from its payload), starts in `outer`.
pub(crate) fn offset_in(outer: &[u8], inner: &[u8]) -> usize {
    let at = (inner.as_ptr() as usize).wrapping_sub(outer.as_ptr() as usize);
    debug_assert!(
        at <= outer.len() && inner.len() <= outer.len() - at,
        "nowait bug: a slice not borrowed from the payload"
    );
    at
}

/// Resolves an item's field name against its call site.
pub(crate) fn field_name<'a>(name: FieldName<'a>, site: Option<&'a Arc<Callsite>>) -> &'a str {
    match name {
        FieldName::Inline(s) => s,
        FieldName::Index(i) => site.and_then(|s| s.field(i)).unwrap_or("?"),
    }
}

/// Every item, span field and argument of `payload` decodes, and every
/// string is UTF-8. Tests only: the check every cut or generated event
/// must pass.
#[cfg(test)]
pub(crate) fn assert_decodes(payload: &[u8]) {
    fn value_ok(v: Value<'_>) {
        match v {
            Value::Str(s) | Value::Rendered(s) => {
                assert!(std::str::from_utf8(s).is_ok(), "cut inside a character");
            }
            Value::Args(args) => {
                for a in args.iter() {
                    value_ok(a.expect("argument decodes"));
                }
            }
            _ => {}
        }
    }
    let event = Event::parse(payload).expect("header decodes");
    for item in event.items() {
        match item {
            Item::Field { value, .. } => value_ok(value),
            Item::Span { fields, .. } => {
                for f in fields.items() {
                    let Item::Field { value, .. } = f else {
                        panic!("malformed span field in {payload:?}")
                    };
                    value_ok(value);
                }
            }
            Item::Malformed => panic!("malformed item in {payload:?}"),
        }
    }
}
