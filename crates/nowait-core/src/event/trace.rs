//! The OpenTelemetry span an event was logged in (the header's trace
//! item, see [`encode`](super::encode)).

/// The trace and span an event was logged in: what OpenTelemetry's
/// `SpanContext` holds that a log record carries (OTLP's
/// `LogRecord.trace_id`, `span_id` and `flags`).
///
/// Front ends record it with
/// [`EventBuf::trace_context`](crate::__private::event::EventBuf::trace_context)
/// (the `tracing` layer does with its `opentelemetry` feature); formats
/// read it with [`Event::trace_context`](super::Event::trace_context).
///
/// # Examples
///
/// ```
/// use nowait_core::event::TraceContext;
///
/// let trace_id = *b"\x4b\xf9\x2f\x35\x77\xb3\x4d\xa6\xa3\xce\x92\x9d\x0e\x0e\x47\x36";
/// let span_id = *b"\x00\xf0\x67\xaa\x0b\xa9\x02\xb7";
/// let cx = TraceContext::new(trace_id, span_id, 1);
/// assert_eq!(cx.trace_id(), trace_id);
/// assert!(cx.is_sampled());
/// let mut hex = Vec::new();
/// cx.write_span_id_hex(&mut hex);
/// assert_eq!(hex, b"00f067aa0ba902b7");
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TraceContext {
    trace_id: [u8; 16],
    span_id: [u8; 8],
    flags: u8,
}

impl TraceContext {
    /// The trace item's length: tag, ids and flags.
    pub(crate) const ENCODED_LEN: usize = 1 + 16 + 8 + 1;

    /// A context of these ids (big-endian bytes, as OpenTelemetry's
    /// `TraceId::to_bytes` and `SpanId::to_bytes` give them) and W3C
    /// trace flags (bit 0: sampled).
    ///
    /// # Examples
    ///
    /// ```
    /// let cx = nowait_core::event::TraceContext::new([1; 16], [2; 8], 0);
    /// assert!(!cx.is_sampled());
    /// ```
    pub const fn new(trace_id: [u8; 16], span_id: [u8; 8], flags: u8) -> TraceContext {
        TraceContext {
            trace_id,
            span_id,
            flags,
        }
    }

    /// The trace's id.
    ///
    /// # Examples
    ///
    /// ```
    /// let cx = nowait_core::event::TraceContext::new([1; 16], [2; 8], 0);
    /// assert_eq!(cx.trace_id(), [1; 16]);
    /// ```
    pub const fn trace_id(&self) -> [u8; 16] {
        self.trace_id
    }

    /// The span's id.
    ///
    /// # Examples
    ///
    /// ```
    /// let cx = nowait_core::event::TraceContext::new([1; 16], [2; 8], 0);
    /// assert_eq!(cx.span_id(), [2; 8]);
    /// ```
    pub const fn span_id(&self) -> [u8; 8] {
        self.span_id
    }

    /// The W3C trace flags.
    ///
    /// # Examples
    ///
    /// ```
    /// let cx = nowait_core::event::TraceContext::new([1; 16], [2; 8], 1);
    /// assert_eq!(cx.flags(), 1);
    /// ```
    pub const fn flags(&self) -> u8 {
        self.flags
    }

    /// Whether the sampled flag is set.
    ///
    /// # Examples
    ///
    /// ```
    /// let cx = nowait_core::event::TraceContext::new([1; 16], [2; 8], 1);
    /// assert!(cx.is_sampled());
    /// ```
    pub const fn is_sampled(&self) -> bool {
        self.flags & 1 != 0
    }

    /// Appends the trace id as 32 lowercase hex digits (the W3C form).
    ///
    /// # Examples
    ///
    /// ```
    /// let mut out = Vec::new();
    /// nowait_core::event::TraceContext::new([0xab; 16], [0; 8], 0).write_trace_id_hex(&mut out);
    /// assert_eq!(out, "ab".repeat(16).as_bytes());
    /// ```
    pub fn write_trace_id_hex(&self, out: &mut Vec<u8>) {
        hex(&self.trace_id, out);
    }

    /// Appends the span id as 16 lowercase hex digits.
    ///
    /// # Examples
    ///
    /// ```
    /// let mut out = Vec::new();
    /// nowait_core::event::TraceContext::new([0; 16], [0x0f; 8], 0).write_span_id_hex(&mut out);
    /// assert_eq!(out, "0f".repeat(8).as_bytes());
    /// ```
    pub fn write_span_id_hex(&self, out: &mut Vec<u8>) {
        hex(&self.span_id, out);
    }

    /// The trace item, as the encoding has it.
    pub(crate) fn encode(&self) -> [u8; Self::ENCODED_LEN] {
        let mut b = [0u8; Self::ENCODED_LEN];
        b[0] = super::ITEM_TRACE;
        b[1..17].copy_from_slice(&self.trace_id);
        b[17..25].copy_from_slice(&self.span_id);
        b[25] = self.flags;
        b
    }

    /// The trace item at the start of `bytes`, if it starts with a whole one.
    pub(crate) fn decode(bytes: &[u8]) -> Option<TraceContext> {
        let b: &[u8; Self::ENCODED_LEN] = bytes.get(..Self::ENCODED_LEN)?.try_into().ok()?;
        if b[0] != super::ITEM_TRACE {
            return None;
        }
        let mut cx = TraceContext::new([0; 16], [0; 8], b[25]);
        cx.trace_id.copy_from_slice(&b[1..17]);
        cx.span_id.copy_from_slice(&b[17..25]);
        Some(cx)
    }
}

fn hex(bytes: &[u8], out: &mut Vec<u8>) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for &b in bytes {
        out.push(DIGITS[usize::from(b >> 4)]);
        out.push(DIGITS[usize::from(b & 15)]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_trace_item_round_trips() {
        let cx = TraceContext::new([7; 16], [9; 8], 1);
        let item = cx.encode();
        assert_eq!(TraceContext::decode(&item), Some(cx));
        assert_eq!(TraceContext::decode(&item[..25]), None, "cut short");
        let mut other = item;
        other[0] = super::super::ITEM_THREAD;
        assert_eq!(TraceContext::decode(&other), None, "another tag");
    }
}
