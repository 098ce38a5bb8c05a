//! Escaping for the formats: control characters, line breaks and
//! bidirectional formatting characters never reach an output raw.
//!
//! Every format escapes what it did not write itself: [`escape_into`] for
//! text, `json_str` (in `json`) for JSON strings. Both find runs of plain
//! ASCII eight bytes at a time ([`plain_len`]) and copy them whole.
//! Tests and fuzz targets check every format's output with `unescaped_at`:
//! the first character that escaping should have caught, if any.

/// Appends `bytes` to `out` with every control character and line break
/// escaped, so that the result holds no newline, carriage return, ESC, other
/// C0/C1 control, Unicode line or paragraph separator, or bidirectional
/// formatting character.
///
/// `\n`, `\r` and `\t` become those two-character escapes, other C0
/// controls and DEL become `\xNN`, C1 controls (U+0080–U+009F) become
/// `\u{NN}`, U+2028 LINE SEPARATOR and U+2029 PARAGRAPH SEPARATOR become
/// `\u{2028}` and `\u{2029}` (log viewers written in JavaScript break lines
/// there, and `Debug` escapes them the same way), the bidirectional
/// formatting characters (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F,
/// U+061C, which can make a line read in another order than its bytes')
/// become `\u{202e}` and so on, as `Debug` writes them, and bytes that are not
/// valid UTF-8 become `\xNN`. Everything else is copied as is, backslashes
/// included (as `tracing-subscriber` does, so paths stay readable): an
/// escape in the output may also be literal text, but never a control
/// character or a line break.
///
/// # Examples
///
/// ```
/// let mut out = Vec::new();
/// nowait_core::format::escape_into("a\x1b[31mred\r\nC:\\dir\u{2028}\u{202e}".as_bytes(), &mut out);
/// assert_eq!(out, br"a\x1b[31mred\r\nC:\dir\u{2028}\u{202e}");
/// ```
#[inline]
pub fn escape_into(bytes: &[u8], out: &mut Vec<u8>) {
    // Most values are plain ASCII throughout: one scan and one copy,
    // inlined into the caller; the rest goes out of line.
    let plain = plain_len(bytes, false);
    if plain == bytes.len() {
        append(bytes, out);
    } else {
        append(&bytes[..plain], out);
        escape_rest(&bytes[plain..], out);
    }
}

/// [`escape_into`] from the first byte that is not plain ASCII.
#[inline(never)]
fn escape_rest(bytes: &[u8], out: &mut Vec<u8>) {
    // Runs of plain ASCII are copied in one go.
    let mut rest = bytes;
    while !rest.is_empty() {
        let plain = plain_len(rest, false);
        append(&rest[..plain], out);
        rest = &rest[plain..];
        let Some(&b) = rest.first() else { break };
        if b < 0x80 {
            match b {
                b'\n' => out.extend_from_slice(b"\\n"),
                b'\r' => out.extend_from_slice(b"\\r"),
                b'\t' => out.extend_from_slice(b"\\t"),
                _ => push_hex_escape(b, out),
            }
            rest = &rest[1..];
            continue;
        }
        // Non-ASCII: decode one UTF-8 scalar, escaping C1 controls and
        // invalid bytes.
        let len = utf8_len(rest);
        match std::str::from_utf8(&rest[..len]) {
            Ok(s) => {
                let c = s.chars().next().unwrap_or('\u{fffd}');
                if matches!(c, '\u{80}'..='\u{9f}' | '\u{2028}' | '\u{2029}') || is_bidi_control(c)
                {
                    push_unicode_escape(c, out);
                } else {
                    out.extend_from_slice(s.as_bytes());
                }
                rest = &rest[len..];
            }
            Err(_) => {
                push_hex_escape(b, out);
                rest = &rest[1..];
            }
        }
    }
}

/// Whether `c` is one of Unicode's bidirectional formatting characters
/// (UAX #9): the embeddings and overrides U+202A–U+202E, the isolates
/// U+2066–U+2069, the marks U+200E, U+200F and U+061C. They reorder how
/// the text after them is displayed, so a value holding one could make
/// the rest of a line read differently from its bytes; the formats
/// escape them like control characters.
#[inline]
pub(crate) fn is_bidi_control(c: char) -> bool {
    matches!(
        c,
        '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'
    )
}

/// The length of the leading run of printable ASCII bytes (0x20 to 0x7e),
/// `"` and `\\` excluded if `quotes`: eight bytes at a time as a `u64`
/// (SWAR), a short tail as one word too.
#[inline]
pub(crate) fn plain_len(bytes: &[u8], quotes: bool) -> usize {
    let n = bytes.len();
    if n < 8 {
        let mask = not_plain(short_word(bytes), quotes);
        return if mask == 0 {
            n
        } else {
            (mask.trailing_zeros() / 8) as usize
        };
    }
    let mut chunks = bytes.chunks_exact(8);
    let mut at = 0;
    for chunk in &mut chunks {
        let mut word = [0; 8];
        word.copy_from_slice(chunk);
        let mask = not_plain(u64::from_le_bytes(word), quotes);
        if mask != 0 {
            return at + (mask.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    if chunks.remainder().is_empty() {
        return n;
    }
    // The last eight bytes, overlapping plain ones already seen.
    let last = bytes.last_chunk::<8>().copied().unwrap_or([b'a'; 8]);
    let mask = not_plain(u64::from_le_bytes(last), quotes);
    if mask == 0 {
        n
    } else {
        n - 8 + (mask.trailing_zeros() / 8) as usize
    }
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// The high bit of each byte of `word` that is not plain (see
/// [`plain_len`]), exact up to the first such byte (little-endian: the
/// lowest set bit); bytes after it may be flagged wrongly (borrows and
/// carries), which the callers never look at. The tests of
/// <https://graphics.stanford.edu/~seander/bithacks.html#HasLessInWord>.
#[inline]
fn not_plain(word: u64, quotes: bool) -> u64 {
    let below = word.wrapping_sub(ONES * 0x20) & !word;
    let above = word.wrapping_add(ONES) | word;
    let mut mask = below | above;
    if quotes {
        let q = word ^ (ONES * u64::from(b'"'));
        let b = word ^ (ONES * u64::from(b'\\'));
        mask |= q.wrapping_sub(ONES) & !q | b.wrapping_sub(ONES) & !b;
    }
    mask & HIGH
}

/// Appends `bytes`; fewer than eight with one 8-byte store cut to length
/// instead of a call to `memcpy`.
#[inline]
pub(crate) fn append(bytes: &[u8], out: &mut Vec<u8>) {
    if bytes.len() < 8 {
        let at = out.len();
        out.extend_from_slice(&short_word(bytes).to_le_bytes());
        out.truncate(at + bytes.len());
    } else {
        out.extend_from_slice(bytes);
    }
}

/// Fewer than eight bytes as the low bytes of a word, in order, padded
/// with `a`: two overlapping 4-byte loads, or three single bytes.
#[inline]
fn short_word(bytes: &[u8]) -> u64 {
    const PAD: u64 = 0x6161_6161_6161_6161;
    let n = bytes.len();
    match (bytes.first_chunk::<4>(), bytes.last_chunk::<4>()) {
        (Some(first), Some(last)) if n < 8 => {
            let (lo, hi) = (u32::from_le_bytes(*first), u32::from_le_bytes(*last));
            // `hi` less the bytes `lo` has: the bytes from 4 on.
            let tail = u64::from(hi) >> (8 * (8 - n));
            u64::from(lo) | tail << 32 | PAD << (8 * n)
        }
        _ => match bytes {
            [] => PAD,
            [a, rest @ ..] if n < 4 => {
                let (mid, last) = (bytes[n / 2], rest.last().unwrap_or(a));
                u64::from(*a) | u64::from(mid) << 8 | u64::from(*last) << 16 | PAD << 24
            }
            _ => PAD,
        },
    }
}

/// Length of the UTF-8 sequence the lead byte announces, clamped to what is
/// there (at least 1).
fn utf8_len(s: &[u8]) -> usize {
    let want = match s[0] {
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => 1,
    };
    want.min(s.len())
}

/// `\u{...}` with the code point in lower-case hex without leading zeros,
/// as `Debug` writes it.
fn push_unicode_escape(c: char, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let code = c as u32;
    out.extend_from_slice(b"\\u{");
    let digits = (32 - (code | 1).leading_zeros()).div_ceil(4);
    for shift in (0..digits).rev() {
        out.push(HEX[(code >> (4 * shift) & 0xf) as usize]);
    }
    out.push(b'}');
}

fn push_hex_escape(b: u8, out: &mut Vec<u8>) {
    out.extend_from_slice(b"\\x");
    push_hex_digits(b, out);
}

fn push_hex_digits(b: u8, out: &mut Vec<u8>) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(HEX[usize::from(b >> 4)]);
    out.push(HEX[usize::from(b & 0xf)]);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every character [`is_bidi_control`] names.
    const BIDI: [char; 12] = [
        '\u{61c}', '\u{200e}', '\u{200f}', '\u{202a}', '\u{202b}', '\u{202c}', '\u{202d}',
        '\u{202e}', '\u{2066}', '\u{2067}', '\u{2068}', '\u{2069}',
    ];

    /// The eight-at-a-time scan finds the run a byte-by-byte scan finds
    /// (the only step the escapers took from it: the rest of their loops
    /// is what it was), for both predicates the escapers use, on random
    /// mixes of plain ASCII, quotes, backslashes, controls, DEL, C1,
    /// U+2028/9, other UTF-8 and invalid or cut sequences, at lengths
    /// around the eight-byte steps.
    #[test]
    fn plain_len_matches_byte_scan() {
        let pieces: &[&[u8]] = &[
            b"a",
            b"plain text ",
            b"\"",
            b"\\",
            b"\n",
            b"\r",
            b"\t",
            b"\x00",
            b"\x1b[31m",
            b"\x7f",
            b"~",
            "\u{85}".as_bytes(),
            "\u{2028}".as_bytes(),
            "\u{2029}".as_bytes(),
            "é€😀".as_bytes(),
            b"\xff",
            b"\xc3",
            b"\xe2\x82",
            b"\xed\xa0\x80",
            b"\x80",
        ];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let byte_scan = |s: &[u8], keep: &dyn Fn(u8) -> bool| {
            s.iter()
                .position(|&b| !((0x20..0x7f).contains(&b) && keep(b)))
                .unwrap_or(s.len())
        };
        let unquoted = |b: u8| b != b'"' && b != b'\\';
        for round in 0..20_000 {
            let mut input = Vec::new();
            for _ in 0..(round % 12) {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                input.extend_from_slice(pieces[state as usize % pieces.len()]);
            }
            for len in [input.len(), input.len() / 2, input.len().saturating_sub(1)] {
                for from in 0..len.min(9) {
                    let s = &input[from..len];
                    assert_eq!(plain_len(s, false), byte_scan(s, &|_| true), "{s:?}");
                    assert_eq!(plain_len(s, true), byte_scan(s, &unquoted), "{s:?}");
                }
            }
        }
    }

    #[test]
    fn append_copies_every_length() {
        let text: Vec<u8> = (0u8..20).map(|i| b'A' + i).collect();
        for len in 0..text.len() {
            let mut out = b"x".to_vec();
            append(&text[..len], &mut out);
            assert_eq!(out[1..], text[..len]);
        }
    }

    fn esc(b: &[u8]) -> String {
        let mut out = Vec::new();
        escape_into(b, &mut out);
        String::from_utf8(out).expect("escape output is UTF-8")
    }

    #[test]
    fn escapes_c0_c1_del_and_invalid_utf8() {
        assert_eq!(esc(b"plain text"), "plain text");
        assert_eq!(esc(b"a\nb"), "a\\nb");
        assert_eq!(esc(b"\x1b]0;title\x07"), "\\x1b]0;title\\x07");
        assert_eq!(esc(b"\x7f"), "\\x7f");
        assert_eq!(esc("\u{9b}31m".as_bytes()), "\\u{9b}31m");
        assert_eq!(esc("caf\u{e9} \u{1f600}".as_bytes()), "caf\u{e9} \u{1f600}");
        assert_eq!(esc(b"\xff\xc3"), "\\xff\\xc3");
        assert_eq!(esc(b"back\\slash"), "back\\slash");
    }

    #[test]
    fn escapes_unicode_line_and_paragraph_separators() {
        assert_eq!(esc("a\u{2028}b".as_bytes()), "a\\u{2028}b");
        assert_eq!(esc("a\u{2029}b".as_bytes()), "a\\u{2029}b");
        // Their neighbours are printable and stay as they are.
        assert_eq!(esc("\u{2027}\u{2030}".as_bytes()), "\u{2027}\u{2030}");
        // A cut separator is invalid UTF-8, escaped byte by byte.
        assert_eq!(esc(b"\xe2\x80"), "\\xe2\\x80");
    }

    /// The bidirectional formatting characters, which can make a line
    /// read in an order other than its bytes', are escaped as `Debug`
    /// escapes them; their neighbours are not.
    #[test]
    fn escapes_bidi_controls() {
        for c in BIDI {
            assert_eq!(
                esc(format!("a{c}b").as_bytes()),
                format!("a{c:?}b").replace('\'', "")
            );
        }
        assert_eq!(esc("x\u{202e}gnp.exe".as_bytes()), "x\\u{202e}gnp.exe");
        assert_eq!(esc("\u{61c}".as_bytes()), "\\u{61c}");
        for c in [
            '\u{61b}', '\u{61d}', '\u{200d}', '\u{2010}', '\u{2065}', '\u{206a}',
        ] {
            assert_eq!(esc(c.to_string().as_bytes()), c.to_string(), "{c:?}");
        }
    }

    #[test]
    fn escaped_output_has_no_control_characters() {
        // Every byte pair, including all controls and broken sequences.
        for a in 0..=255u8 {
            for b in [0u8, b'a', 0x80, 0x9b, 0xc2, 0xff] {
                let s = esc(&[a, b, 0xc2, a]);
                assert!(
                    !s.chars()
                        .any(|c| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}')),
                    "control char or line break left in {s:?}"
                );
            }
        }
        // Every character of the blocks of U+2028 and U+2066 (E2 80 xx,
        // E2 81 xx) and of U+061C (D8 xx).
        for c in 0x80..=0xbfu8 {
            for bytes in [&[0xe2, 0x80, c][..], &[0xe2, 0x81, c], &[0xd8, c]] {
                let s = esc(bytes);
                assert!(!s.contains(['\u{2028}', '\u{2029}']), "{s:?}");
                assert!(!s.contains(BIDI), "{s:?}");
            }
        }
    }
}
