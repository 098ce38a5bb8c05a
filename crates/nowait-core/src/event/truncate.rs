//! Cutting an oversized event down to a logger's record limit, so that it
//! is written shortened instead of dropped whole: the longest values are
//! cut to a common cap with a mark, then whole items are dropped behind a
//! `nowait.truncated` field, and an inline target is cut only when it alone
//! leaves no room. The result always decodes.

use super::encode::{EventBuf, HEADER};
use super::*;

impl EventBuf {
    /// Cuts the encoded event down to at most `max` bytes (a logger's
    /// `max_record_len`), so that an
    /// oversized event is written shortened instead of dropped whole.
    /// Front ends call it last, just before pushing; it does nothing to an
    /// event that fits.
    ///
    /// The header (timestamp, call site) stays. The longest string and
    /// rendered values, including span fields and message arguments, are
    /// cut first: every value longer than a common cap is cut to the cap,
    /// at a UTF-8 character boundary, and ends in `… [truncated]`, so the
    /// text and JSON outputs show where the cut is. If that is not enough
    /// (many small fields), the leading items that fit are kept and a
    /// field `nowait.truncated = true` replaces the rest. An inline target
    /// is cut only if it alone leaves no room, and then the event ends in
    /// that field too.
    ///
    /// Returns whether anything was cut. If `max` is too small for even the
    /// header and that field (under 40 bytes), the event is left as is and
    /// pushing it will fail as too large.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::__private::event::EventBuf;
    /// use nowait_core::event::{Event, FieldName, Item, Value};
    ///
    /// let mut buf = EventBuf::new();
    /// buf.begin_inline(0, "app");
    /// buf.str(FieldName::Inline("message"), "upload done");
    /// buf.str(FieldName::Inline("body"), &"x".repeat(10_000));
    /// assert!(buf.truncate_to(200));
    /// assert!(buf.len() <= 200);
    ///
    /// let event = Event::parse(buf.as_bytes()).unwrap();
    /// let Some(Item::Field { value: Value::Str(body), .. }) = event.items().nth(1) else { panic!() };
    /// assert!(body.starts_with(b"xxx"));
    /// assert!(body.ends_with("… [truncated]".as_bytes()));
    /// ```
    #[inline]
    pub fn truncate_to(&mut self, max: usize) -> bool {
        self.end_span();
        self.bytes.len() > max && self.cut_to(max)
    }

    /// [`truncate_to`](EventBuf::truncate_to) for an event that does not
    /// fit.
    #[cold]
    fn cut_to(&mut self, max: usize) -> bool {
        // A cut target has no mark of its own: the event then ends in the
        // `nowait.truncated` field, so leave room for it.
        let mut budget = max;
        if self.head + DROPPED_LEN > max {
            if !self.cut_target(max) {
                return false;
            }
            budget = max - DROPPED_LEN;
        }
        // Find the largest cap (the most text kept) with which the event
        // fits: the length after cutting only decreases as the cap does.
        let len_with = |bytes: &mut Vec<u8>, head: usize, cap: usize| {
            Compact::run(bytes, head, cap, max, false).0
        };
        let (mut lo, mut hi) = (MIN_CAP, self.bytes.len());
        if len_with(&mut self.bytes, self.head, lo) <= budget {
            // Invariant: the event fits with cap `lo`, not with cap `hi`.
            while hi > lo + 1 {
                let mid = lo + (hi - lo) / 2;
                if len_with(&mut self.bytes, self.head, mid) <= budget {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
        }
        let (len, last_fit) = Compact::run(&mut self.bytes, self.head, lo, max, true);
        if len <= budget {
            self.bytes.truncate(len);
        } else {
            // Even values cut to the minimum do not fit: keep the leading
            // items that do, and say that the rest was dropped.
            self.bytes.truncate(last_fit);
        }
        if len > budget || budget < max {
            self.bool(FieldName::Inline(DROPPED_NAME), true);
        }
        debug_assert!(self.bytes.len() <= max, "nowait bug: truncate_to overshot");
        true
    }

    /// Cuts an inline target so that the header and the dropped-items field
    /// fit in `max`; false if that is impossible.
    fn cut_target(&mut self, max: usize) -> bool {
        let inline = self.head >= HEADER + 2 && self.bytes[8..HEADER] == [0; 8];
        let Some(room) = max.checked_sub(HEADER + 2 + DROPPED_LEN) else {
            return false;
        };
        if !inline {
            return false;
        }
        // The target, then possibly a thread item, which moves with the
        // rest.
        let len = usize::from(u16::from_le_bytes([
            self.bytes[HEADER],
            self.bytes[HEADER + 1],
        ]));
        let extra = self.head - (HEADER + 2 + len);
        let Some(room) = room.checked_sub(extra) else {
            return false;
        };
        let target = &self.bytes[HEADER + 2..HEADER + 2 + len];
        let keep = floor_char_boundary(target, room);
        self.bytes
            .copy_within(HEADER + 2 + len.., HEADER + 2 + keep);
        let cut = len - keep;
        self.bytes.truncate(self.bytes.len() - cut);
        self.bytes[HEADER..HEADER + 2].copy_from_slice(&(keep as u16).to_le_bytes());
        self.head -= cut;
        true
    }
}

/// What [`EventBuf::truncate_to`] appends to a value it cuts.
const CUT_MARK: &str = "… [truncated]";
/// The smallest cap on cut values: 32 bytes of text and the mark. Below
/// that, whole items are dropped instead.
const MIN_CAP: usize = 32 + CUT_MARK.len();
/// The field that replaces dropped items (or follows a cut target), and
/// its encoded length.
const DROPPED_NAME: &str = "nowait.truncated";
const DROPPED_LEN: usize = 2 + DROPPED_NAME.len() + 2;

/// The largest `i <= at` that does not split a UTF-8 sequence of `bytes`.
fn floor_char_boundary(bytes: &[u8], at: usize) -> usize {
    let mut i = at.min(bytes.len());
    while i > 0 && i < bytes.len() && bytes[i] & 0xC0 == 0x80 {
        i -= 1;
    }
    i
}

/// One pass of [`EventBuf::truncate_to`] over the items of an encoded
/// event, in place: every string or rendered value longer than `cap` is cut
/// to `cap` bytes (mark included) and the bytes after it move down.
///
/// 1. The read cursor `r` walks the items as encoded; the write cursor
///    `w <= r` is where each piece goes. Only the read side is parsed, and
///    every piece is read before anything is written over it.
/// 2. A span's length is rewritten once its fields have been compacted.
/// 3. Bytes that do not parse (a malformed span or tail, possible only
///    through [`EventBuf::span`]) are moved as they are, never cut, so the
///    decoder reports them exactly as before.
///
/// With `write` false nothing moves: the pass only measures, for the search
/// of the cap.
struct Compact<'a> {
    b: &'a mut [u8],
    r: usize,
    w: usize,
    cap: usize,
    write: bool,
}

impl Compact<'_> {
    /// Returns the compacted length and the end of the last leading item
    /// that ends within `max` less room for the dropped-items field.
    fn run(bytes: &mut [u8], head: usize, cap: usize, max: usize, write: bool) -> (usize, usize) {
        let end = bytes.len();
        let mut c = Compact {
            b: bytes,
            r: head,
            w: head,
            cap,
            write,
        };
        let limit = max.saturating_sub(DROPPED_LEN);
        let mut last_fit = head;
        while c.r < end {
            let ok = c.item(end, true).is_some();
            if !ok {
                c.copy(end - c.r);
            }
            if c.w <= limit {
                last_fit = c.w;
            }
            if !ok {
                break;
            }
        }
        (c.w, last_fit)
    }

    /// Moves `n` bytes from the read cursor to the write cursor.
    fn copy(&mut self, n: usize) {
        if self.write && self.r != self.w {
            self.b.copy_within(self.r..self.r + n, self.w);
        }
        self.r += n;
        self.w += n;
    }

    /// One item, read with the decoder's cursor; `None` (nothing moved)
    /// if the rest until `end` does not decode. Spans are items only at
    /// the top level.
    fn item(&mut self, end: usize, top: bool) -> Option<()> {
        // What the item is, and where its parts are: the decoder reads,
        // this writes.
        let (span_end, name_len) = {
            let (item, stop) = super::decode::item_at(self.b, self.r, end)?;
            match item {
                Item::Span { fields, .. } if top => {
                    let content = fields.bytes();
                    (Some(offset_in(self.b, content) + content.len()), 0)
                }
                Item::Field { value, .. } => (None, stop - self.r - value.encoded_len()),
                _ => return None,
            }
        };
        if let Some(content_end) = span_end {
            // `0xFE site:u64 len:u32`, then the span's fields.
            let at = self.w;
            self.copy(13);
            while self.r < content_end {
                if self.item(content_end, false).is_none() {
                    self.copy(content_end - self.r);
                }
            }
            if self.write {
                let len = (self.w - at - 13) as u32;
                self.b[at + 9..at + 13].copy_from_slice(&len.to_le_bytes());
            }
            return Some(());
        }
        self.copy(name_len);
        self.value(end, true)
    }

    /// One value (each argument of a deferred message, cut on its own).
    fn value(&mut self, end: usize, allow_args: bool) -> Option<()> {
        let (args, len) = {
            let (value, stop) = super::decode::value_at(self.b, self.r, end, allow_args)?;
            match value {
                Value::Str(_) | Value::Rendered(_) => return self.text(),
                Value::Args(a) => (Some(a.len()), stop - self.r),
                _ => (None, stop - self.r),
            }
        };
        match args {
            Some(count) => {
                self.copy(2);
                for _ in 0..count {
                    self.value(end, false)?;
                }
            }
            None => self.copy(len),
        }
        Some(())
    }

    /// A string or rendered value (tag, length, bytes), which the decoder
    /// has read whole at the cursor.
    fn text(&mut self) -> Option<()> {
        let n = u32::from_le_bytes(self.b.get(self.r + 1..self.r + 5)?.try_into().ok()?) as usize;
        if n <= self.cap {
            self.copy(5 + n);
            return Some(());
        }
        let (r, w) = (self.r, self.w);
        let keep = floor_char_boundary(&self.b[r + 5..r + 5 + n], self.cap - CUT_MARK.len());
        let new_len = keep + CUT_MARK.len();
        if self.write {
            // `w <= r`: the new tag and length end before the kept text
            // starts, and the mark goes where the dropped text was.
            self.b[w] = self.b[r];
            self.b[w + 1..w + 5].copy_from_slice(&(new_len as u32).to_le_bytes());
            self.b.copy_within(r + 5..r + 5 + keep, w + 5);
            self.b[w + 5 + keep..w + 5 + new_len].copy_from_slice(CUT_MARK.as_bytes());
        }
        self.r += 5 + n;
        self.w += 5 + new_len;
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MARK: &str = "… [truncated]";

    /// Call-site keys; truncation never looks them up.
    static SITE: u8 = 0;
    static SPAN: u8 = 0;

    #[test]
    fn truncate_to_leaves_a_fitting_event_alone() {
        let mut buf = EventBuf::new();
        buf.begin_at(1_795_392_000_000_001_000, SiteKey::of(&SITE));
        buf.begin_span(SiteKey::of(&SPAN));
        buf.u64(FieldName::Index(0), 7);
        buf.end_span();
        buf.str(FieldName::Index(2), "x");
        let before = buf.as_bytes().to_vec();
        assert!(!buf.truncate_to(before.len()));
        assert_eq!(buf.as_bytes(), &before[..]);
        // Too small for even the header: left as is (the push will fail).
        let mut big = EventBuf::new();
        big.begin_at(0, SiteKey::of(&SITE));
        big.str(FieldName::Index(2), &"a".repeat(100));
        let len = big.len();
        assert!(!big.truncate_to(30));
        assert_eq!(big.len(), len);
    }

    #[test]
    fn shorter_values_stay_whole_and_cuts_keep_whole_characters() {
        let mut buf = EventBuf::new();
        buf.begin_inline(0, "t");
        buf.str(FieldName::Inline("small"), &"s".repeat(300));
        buf.str(FieldName::Inline("wide"), &"é€😀".repeat(1000));
        buf.rendered(
            FieldName::Inline("dbg"),
            format_args!("{:?}", vec![1u8; 2000]),
        )
        .unwrap();
        assert!(buf.truncate_to(1000));
        assert!(buf.len() <= 1000);
        let payload = buf.as_bytes().to_vec();
        assert_decodes(&payload);
        let values: Vec<&[u8]> = Event::parse(&payload)
            .unwrap()
            .items()
            .map(|i| match i {
                Item::Field {
                    value: Value::Str(s) | Value::Rendered(s),
                    ..
                } => s,
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(values[0], "s".repeat(300).as_bytes());
        for cut in &values[1..] {
            let cut = std::str::from_utf8(cut).unwrap();
            assert!(cut.ends_with(MARK), "{cut}");
        }
        assert!(values[1].starts_with("é€😀é".as_bytes()));
        assert!(values[2].starts_with(b"[1, 1, 1"));
        // The two cut values share one cap (the wide one may keep up to three
        // bytes less, to end on a character).
        assert!(values[2].len() - values[1].len() < 4);
    }
}
