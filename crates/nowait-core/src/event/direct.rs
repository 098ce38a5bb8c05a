//! Encoding an event straight into the space claimed for it in the ring:
//! the macros' fast path for events whose values are all plain (numbers,
//! `bool`, `char`, strings, deferred message arguments).
//!
//! The layout is [`EventBuf`](super::EventBuf)'s, byte for byte (a test
//! checks it): the front end adds up the sizes first ([`size`]), claims
//! that many bytes, then writes them with a [`Cursor`]. This skips the
//! thread-local buffer, its capacity checks and the copy into the ring.

use super::{SiteKey, ITEM_THREAD, T_ARGS, T_BOOL, T_CHAR, T_F64, T_I64, T_STR, T_U64};

/// Bytes of an event's header: time, call site and, when asked for, the
/// thread item.
#[inline]
pub(crate) fn header_size(thread: bool) -> usize {
    super::HEADER + if thread { 5 } else { 0 }
}

/// Sizes of the encoded values (tag included, field name not).
pub(crate) mod size {
    #[inline(always)]
    pub(crate) fn u64(_: u64) -> usize {
        9
    }
    #[inline(always)]
    pub(crate) fn i64(_: i64) -> usize {
        9
    }
    #[inline(always)]
    pub(crate) fn f64(_: f64) -> usize {
        9
    }
    #[inline(always)]
    pub(crate) fn bool(_: bool) -> usize {
        2
    }
    #[inline(always)]
    pub(crate) fn char(_: char) -> usize {
        5
    }
    /// A string longer than `u32::MAX` bytes keeps its first `u32::MAX`
    /// (as [`EventBuf`](super::super::EventBuf) does), and is cut further
    /// before it is pushed.
    #[inline(always)]
    pub(crate) fn str(s: &str) -> usize {
        5 + s.len().min(u32::MAX as usize)
    }
    /// A field's index byte, or the message's index, tag and count.
    pub(crate) const NAME: usize = 1;
    pub(crate) const ARGS: usize = 3;
}

/// Writes an event's bytes into a claimed region of exactly the size the
/// front end computed. Not a public API (the macros pass it along).
#[doc(hidden)]
#[derive(Debug)]
pub struct Cursor<'a> {
    /// What is left of the region.
    rest: &'a mut [u8],
}

impl<'a> Cursor<'a> {
    #[inline(always)]
    pub(crate) fn new(dst: &'a mut [u8]) -> Cursor<'a> {
        Cursor { rest: dst }
    }

    /// Whether the region is exactly filled.
    #[inline(always)]
    pub(crate) fn is_done(&self) -> bool {
        self.rest.is_empty()
    }

    #[inline(always)]
    fn put(&mut self, bytes: &[u8]) {
        let (head, rest) = std::mem::take(&mut self.rest).split_at_mut(bytes.len());
        head.copy_from_slice(bytes);
        self.rest = rest;
    }

    #[inline(always)]
    fn tagged(&mut self, tag: u8, value: [u8; 8]) {
        let mut b = [0u8; 9];
        b[0] = tag;
        b[1..].copy_from_slice(&value);
        self.put(&b);
    }

    /// Time, call site and the optional thread number.
    #[inline(always)]
    pub(crate) fn header(&mut self, time: u64, site: SiteKey, thread: Option<u32>) {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&time.to_le_bytes());
        b[8..].copy_from_slice(&site.get().to_le_bytes());
        self.put(&b);
        if let Some(number) = thread {
            let mut t = [ITEM_THREAD, 0, 0, 0, 0];
            t[1..].copy_from_slice(&number.to_le_bytes());
            self.put(&t);
        }
    }

    /// A field of the call site's field list (index at most 251).
    #[inline(always)]
    pub(crate) fn name(&mut self, index: u8) {
        debug_assert!(usize::from(index) <= super::MAX_FIELD_INDEX);
        self.put(&[index]);
    }

    /// The message: field 0, holding `count` deferred arguments.
    #[inline(always)]
    pub(crate) fn args(&mut self, count: u8) {
        self.put(&[0, T_ARGS, count]);
    }

    #[inline(always)]
    pub(crate) fn u64(&mut self, v: u64) {
        self.tagged(T_U64, v.to_le_bytes());
    }

    #[inline(always)]
    pub(crate) fn i64(&mut self, v: i64) {
        self.tagged(T_I64, v.to_le_bytes());
    }

    #[inline(always)]
    pub(crate) fn f64(&mut self, v: f64) {
        self.tagged(T_F64, v.to_bits().to_le_bytes());
    }

    #[inline(always)]
    pub(crate) fn bool(&mut self, v: bool) {
        self.put(&[T_BOOL, v as u8]);
    }

    #[inline(always)]
    pub(crate) fn char(&mut self, v: char) {
        let mut b = [T_CHAR, 0, 0, 0, 0];
        b[1..].copy_from_slice(&u32::from(v).to_le_bytes());
        self.put(&b);
    }

    /// A string, at most its first `u32::MAX` bytes (as [`size::str`]
    /// counts it).
    #[inline(always)]
    pub(crate) fn str(&mut self, v: &str) {
        let len = v.len().min(u32::MAX as usize);
        let mut b = [T_STR, 0, 0, 0, 0];
        b[1..].copy_from_slice(&(len as u32).to_le_bytes());
        self.put(&b);
        self.put(&v.as_bytes()[..len]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{EventBuf, FieldName};

    /// Every plain value, as a field and as a deferred argument, with and
    /// without the thread item: the cursor writes exactly the bytes the
    /// general encoder writes, and the sizes add up to them.
    #[test]
    fn writes_what_event_buf_writes() {
        static SITE: u8 = 0;
        let site = SiteKey::of(&SITE);
        for thread in [false, true] {
            let mut buf = EventBuf::new();
            buf.begin_at(0x8000_0000_1234_5678, site);
            if thread {
                buf.thread();
            }
            buf.args(FieldName::Index(0), 6);
            buf.arg_u64(u64::MAX);
            buf.arg_i64(i64::MIN);
            buf.arg_f64(-0.5);
            buf.arg_bool(true);
            buf.arg_char('é');
            buf.arg_str("héllo\n");
            buf.u64(FieldName::Index(1), 7);
            buf.i64(FieldName::Index(2), -7);
            buf.f64(FieldName::Index(3), 1e300);
            buf.bool(FieldName::Index(4), false);
            buf.char(FieldName::Index(5), '\u{1b}');
            buf.str(FieldName::Index(251), "x\"y");
            buf.str(FieldName::Index(6), "");
            let expected = buf.as_bytes().to_vec();

            let len = header_size(thread)
                + size::ARGS
                + size::u64(u64::MAX)
                + size::i64(i64::MIN)
                + size::f64(-0.5)
                + size::bool(true)
                + size::char('é')
                + size::str("héllo\n")
                + 7 * size::NAME
                + size::u64(7)
                + size::i64(-7)
                + size::f64(1e300)
                + size::bool(false)
                + size::char('\u{1b}')
                + size::str("x\"y")
                + size::str("");
            assert_eq!(len, expected.len(), "sizes, thread item {thread}");
            let mut dst = vec![0xAA; len];
            let mut c = Cursor::new(&mut dst);
            c.header(
                0x8000_0000_1234_5678,
                site,
                thread.then(crate::event::thread_number),
            );
            c.args(6);
            c.u64(u64::MAX);
            c.i64(i64::MIN);
            c.f64(-0.5);
            c.bool(true);
            c.char('é');
            c.str("héllo\n");
            c.name(1);
            c.u64(7);
            c.name(2);
            c.i64(-7);
            c.name(3);
            c.f64(1e300);
            c.name(4);
            c.bool(false);
            c.name(5);
            c.char('\u{1b}');
            c.name(251);
            c.str("x\"y");
            c.name(6);
            c.str("");
            assert!(c.is_done());
            assert_eq!(dst, expected, "thread item {thread}");
        }
    }
}
