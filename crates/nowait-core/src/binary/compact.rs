//! The compact event encoding of version-2 files, and its exact inverse.
//!
//! The writer turns an event payload (the ring's encoding, `event`) into
//! the compact form; the reader turns it back into the ring's encoding,
//! byte for byte what the writer started from (its time converted to wall
//! clock), so that everything downstream of the reader is the one event
//! decoder the formats use. What the compact form saves:
//!
//! - the time is the difference from the previous compact event's time
//!   in the file (zigzag varint: a few bytes instead of eight);
//! - the call site is its number in the file's site frames (a varint)
//!   instead of a 64-bit key;
//! - lengths, unsigned and signed integers and characters are varints.
//!
//! ```text
//! cevent := dtime:zigzag site:varint [tlen:varint target] [0xFF thread:varint]
//!           [trace: 26 bytes as in the event] citem*
//!           (site: 0 none, then the target follows; 1 a site no frame describes;
//!            n >= 2 the site frame numbered n)
//! citem  := index:u8 cvalue | 0xFD len:u8 name cvalue | 0xFE site:varint len:varint citem*
//! cvalue := 0 len:varint bytes | 1 len:varint bytes | 2 varint | 3 zigzag | 4 f64:8
//!         | 5 u8 | 6 varint | 7 n:u8 cvalue{n}   (no arguments inside arguments)
//! ```
//!
//! [`encode_into`] refuses (returns `None`; what it wrote is not used) any
//! payload that is not exactly what nowait's encoders write, so that the
//! writer stores those as they are; [`decode`] is total over untrusted
//! bytes: every length is checked against the bytes there, the output is
//! at most a small multiple of the input, and nothing recurses.

use crate::event::{
    ByteReader, TraceContext, ITEM_INLINE, ITEM_SPAN, ITEM_THREAD, ITEM_TRACE, MAX_FIELD_INDEX,
    T_ARGS, T_BOOL, T_CHAR, T_F64, T_I64, T_RENDERED, T_STR, T_U64,
};

/// The site code of an event without a call site (its target follows).
pub(crate) const SITE_NONE: u64 = 0;
/// The site code of a call site no site frame describes.
pub(crate) const SITE_UNKNOWN: u64 = 1;
/// The first number the writer gives a described call site.
pub(crate) const SITE_FIRST: u64 = 2;

/// Appends `v` as an unsigned LEB128 varint (byte by byte: a stack
/// buffer copied whole stalls on its byte stores).
#[inline]
pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// `v` as an unsigned LEB128 varint in a stack buffer: the buffer and how
/// many of its bytes the varint takes.
#[inline]
pub(crate) fn varint_bytes(mut v: u64) -> ([u8; 10], usize) {
    let mut b = [0u8; 10];
    let mut n = 0;
    while v >= 0x80 && n < 9 {
        b[n] = v as u8 | 0x80;
        v >>= 7;
        n += 1;
    }
    b[n] = v as u8;
    (b, n + 1)
}

/// Zigzag: small magnitudes of either sign become small unsigned numbers.
#[inline]
pub(crate) fn zigzag(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

#[inline]
fn unzigzag(v: u64) -> i64 {
    (v >> 1) as i64 ^ -((v & 1) as i64)
}

/// A varint read as a length.
#[inline]
fn varint_usize(r: &mut ByteReader<'_>) -> Option<usize> {
    usize::try_from(r.varint()?).ok()
}

/// What the encoder tells the file's catalog as it meets call sites and
/// threads.
pub(crate) trait Names {
    /// The code a call site's key is written as: [`SITE_UNKNOWN`], or the
    /// number of the site frame that describes it (put before the record
    /// if this is its first).
    fn site(&mut self, key: u64) -> u64;
    /// A thread the event names (described before the record if new).
    fn thread(&mut self, number: u32);
}

/// Encodes the event `payload` (the ring's encoding) with time `wall`
/// against the previous compact event's time `prev`, naming call sites
/// and threads through `names`. `false`, with `out` as it was, if the
/// payload is not exactly what nowait's encoders write.
#[cfg(any(test, fuzzing))]
pub(crate) fn encode(
    payload: &[u8],
    wall: u64,
    prev: u64,
    names: &mut impl Names,
    out: &mut Vec<u8>,
) -> bool {
    let start = out.len();
    out.resize(start + room_for(payload.len()), 0);
    match encode_into(payload, wall, prev, names, &mut out[start..]) {
        Some(n) => {
            out.truncate(start + n);
            true
        }
        None => {
            out.truncate(start);
            false
        }
    }
}

/// The most bytes the compact form of a payload of `len` bytes takes:
/// each value that grows (a varint of ten bytes for eight, of five for
/// four) is nine bytes or more in the payload, and the head grows by five
/// at most.
#[inline]
pub(crate) const fn room_for(len: usize) -> usize {
    len + len / 4 + 16
}

/// Encodes the event `payload` as `encode` does, into `room` ([`room_for`]
/// the payload's length, or more): how many bytes of it the compact form
/// takes, or `None` if the payload is not exactly what nowait's encoders
/// write. Writing into room made
/// first keeps the cursor in a register.
#[inline]
pub(crate) fn encode_into(
    payload: &[u8],
    wall: u64,
    prev: u64,
    names: &mut impl Names,
    room: &mut [u8],
) -> Option<usize> {
    let mut w = Out { b: room, at: 0 };
    encode_inner(payload, wall, prev, names, &mut w)?;
    Some(w.at)
}

/// A cursor over room made in the output; every write is checked.
struct Out<'a> {
    b: &'a mut [u8],
    at: usize,
}

impl Out<'_> {
    #[inline(always)]
    fn byte(&mut self, v: u8) -> Option<()> {
        *self.b.get_mut(self.at)? = v;
        self.at += 1;
        Some(())
    }
    #[inline(always)]
    fn bytes(&mut self, s: &[u8]) -> Option<()> {
        let end = self.at.checked_add(s.len())?;
        self.b.get_mut(self.at..end)?.copy_from_slice(s);
        self.at = end;
        Some(())
    }
    #[inline(always)]
    fn varint(&mut self, mut v: u64) -> Option<()> {
        // Written byte by byte: the hot path (a copy of a stack buffer
        // counted 18 % more instructions per record on the writer).
        while v >= 0x80 {
            self.byte(v as u8 | 0x80)?;
            v >>= 7;
        }
        self.byte(v as u8)
    }
}

#[inline(always)]
fn encode_inner(
    payload: &[u8],
    wall: u64,
    prev: u64,
    names: &mut impl Names,
    w: &mut Out<'_>,
) -> Option<()> {
    let mut r = ByteReader(payload);
    r.u64()?;
    w.varint(zigzag(wall.wrapping_sub(prev) as i64))?;
    let site = r.u64()?;
    if site == 0 {
        w.byte(SITE_NONE as u8)?;
        let len = r.u16()?;
        w.varint(u64::from(len))?;
        w.bytes(r.take(usize::from(len))?)?;
    } else {
        let code = names.site(site);
        debug_assert!(code != SITE_NONE);
        w.varint(code)?;
    }
    if let [ITEM_THREAD, a, b, c, d, ..] = r.0 {
        let number = u32::from_le_bytes([*a, *b, *c, *d]);
        names.thread(number);
        w.byte(ITEM_THREAD)?;
        w.varint(u64::from(number))?;
        r.0 = &r.0[5..];
    }
    if r.0.first() == Some(&ITEM_TRACE) {
        // A trace item the decoder would not take is not the encoder's.
        TraceContext::decode(r.0)?;
        w.bytes(r.take(TraceContext::ENCODED_LEN)?)?;
    }
    while let Some(tag) = r.u8() {
        if tag == ITEM_SPAN {
            let key = r.u64()?;
            let len = usize::try_from(r.u32()?).ok()?;
            let mut fields = ByteReader(r.take(len)?);
            w.byte(ITEM_SPAN)?;
            w.varint(names.site(key))?;
            // The compact length is known once the fields are written:
            // one byte is reserved, more are made room for if needed.
            let len_at = w.at;
            w.byte(0)?;
            while let Some(tag) = fields.u8() {
                if tag == ITEM_SPAN {
                    return None;
                }
                encode_field(tag, &mut fields, w)?;
            }
            let (v, n) = varint_bytes((w.at - len_at - 1) as u64);
            let end = w.at.checked_add(n - 1)?;
            w.b.get(..end)?;
            w.b.copy_within(len_at + 1..w.at, len_at + n);
            w.b[len_at..len_at + n].copy_from_slice(&v[..n]);
            w.at = end;
        } else {
            encode_field(tag, &mut r, w)?;
        }
    }
    Some(())
}

/// One field item (its tag already read).
#[inline(always)]
fn encode_field(tag: u8, r: &mut ByteReader<'_>, w: &mut Out<'_>) -> Option<()> {
    w.byte(tag)?;
    if tag == ITEM_INLINE {
        let len = r.u8()?;
        w.byte(len)?;
        w.bytes(r.take(usize::from(len))?)?;
    } else if usize::from(tag) > MAX_FIELD_INDEX {
        return None;
    }
    let t = r.u8()?;
    if t == T_ARGS {
        let n = r.u8()?;
        w.byte(T_ARGS)?;
        w.byte(n)?;
        for _ in 0..n {
            let t = r.u8()?;
            if t == T_ARGS {
                return None;
            }
            encode_value(t, r, w)?;
        }
        Some(())
    } else {
        encode_value(t, r, w)
    }
}

/// A value other than arguments (its type already read).
#[inline(always)]
fn encode_value(t: u8, r: &mut ByteReader<'_>, w: &mut Out<'_>) -> Option<()> {
    w.byte(t)?;
    match t {
        T_STR | T_RENDERED => {
            let len = r.u32()?;
            w.varint(u64::from(len))?;
            w.bytes(r.take(usize::try_from(len).ok()?)?)?;
        }
        T_U64 => w.varint(r.u64()?)?,
        T_I64 => w.varint(zigzag(r.u64()? as i64))?,
        T_F64 => w.bytes(r.take(8)?)?,
        T_BOOL => w.byte(r.u8()?)?,
        T_CHAR => w.varint(u64::from(r.u32()?))?,
        _ => return None,
    }
    Some(())
}

/// Decodes a compact event into the ring's encoding (appended to `out`),
/// its time `prev` plus the stored difference, its call sites written as
/// their numbers (which the reader's catalog maps to keys of this
/// process). Returns the event's time, or `None` if the bytes are not a
/// compact event (`out` is then cut back to where it was).
pub(crate) fn decode(body: &[u8], prev: u64, keys: &impl Keys, out: &mut Vec<u8>) -> Option<u64> {
    let start = out.len();
    let mut w = Grow { v: out, at: start };
    let time = decode_inner(body, prev, keys, &mut w);
    let end = if time.is_some() { w.at } else { start };
    out.truncate(end);
    time
}

/// A cursor that writes into a vector's room, making more as it goes:
/// room grows with what is written (twice over at most), never with a
/// length read.
struct Grow<'a> {
    v: &'a mut Vec<u8>,
    at: usize,
}

impl Grow<'_> {
    /// At least `n` more bytes of room.
    #[inline(always)]
    fn room(&mut self, n: usize) -> Option<()> {
        let need = self.at.checked_add(n)?;
        if need > self.v.len() {
            let grown = need.max(self.v.len().saturating_mul(2)).max(64);
            self.v.resize(grown, 0);
        }
        Some(())
    }
    #[inline(always)]
    fn byte(&mut self, b: u8) -> Option<()> {
        *self.v.get_mut(self.at)? = b;
        self.at += 1;
        Some(())
    }
    #[inline(always)]
    fn bytes(&mut self, s: &[u8]) -> Option<()> {
        let end = self.at.checked_add(s.len())?;
        self.v.get_mut(self.at..end)?.copy_from_slice(s);
        self.at = end;
        Some(())
    }
}

/// The most a field's tag, name length, value type and fixed-size value
/// take, before any bytes of a name or string.
const FIELD_ROOM: usize = 16;

/// What the decoder writes for the call-site codes and thread numbers it
/// reads: the keys and numbers they stand for in this process.
pub(crate) trait Keys {
    /// The key a call-site code (never [`SITE_NONE`]) stands for.
    fn site(&self, code: u64) -> u64;
    /// The number a thread number of the file stands for.
    fn thread(&self, number: u32) -> u32;
}

/// Keys, codes and numbers as they are, both ways: what the fuzz target
/// and the tests encode and decode with, so that a round trip gives back
/// the very bytes.
#[cfg(any(fuzzing, test))]
pub(crate) struct AsIs;

#[cfg(any(fuzzing, test))]
impl Names for AsIs {
    fn site(&mut self, key: u64) -> u64 {
        key
    }
    fn thread(&mut self, _number: u32) {}
}

#[cfg(any(fuzzing, test))]
impl Keys for AsIs {
    fn site(&self, code: u64) -> u64 {
        code
    }
    fn thread(&self, number: u32) -> u32 {
        number
    }
}

fn decode_inner(body: &[u8], prev: u64, keys: &impl Keys, w: &mut Grow<'_>) -> Option<u64> {
    let mut r = ByteReader(body);
    let time = prev.wrapping_add(unzigzag(r.varint()?) as u64);
    let site = r.varint()?;
    w.room(8 + 8 + 2 + 5 + TraceContext::ENCODED_LEN)?;
    w.bytes(&time.to_le_bytes())?;
    let key = if site == SITE_NONE {
        0
    } else {
        keys.site(site)
    };
    w.bytes(&key.to_le_bytes())?;
    if site == SITE_NONE {
        let len = u16::try_from(r.varint()?).ok()?;
        let target = r.take(usize::from(len))?;
        w.bytes(&len.to_le_bytes())?;
        w.room(target.len())?;
        w.bytes(target)?;
    }
    if r.0.first() == Some(&ITEM_THREAD) {
        r.u8()?;
        let number = u32::try_from(r.varint()?).ok()?;
        w.byte(ITEM_THREAD)?;
        w.bytes(&keys.thread(number).to_le_bytes())?;
    }
    if r.0.first() == Some(&ITEM_TRACE) {
        TraceContext::decode(r.0)?;
        w.bytes(r.take(TraceContext::ENCODED_LEN)?)?;
    }
    while let Some(tag) = r.u8() {
        if tag == ITEM_SPAN {
            let site = r.varint()?;
            let len = varint_usize(&mut r)?;
            let mut fields = ByteReader(r.take(len)?);
            w.room(13)?;
            w.byte(ITEM_SPAN)?;
            w.bytes(&keys.site(site).to_le_bytes())?;
            let len_at = w.at;
            w.bytes(&[0; 4])?;
            while let Some(tag) = fields.u8() {
                if tag == ITEM_SPAN {
                    return None;
                }
                decode_field(tag, &mut fields, w)?;
            }
            let len = u32::try_from(w.at - len_at - 4).ok()?;
            w.v.get_mut(len_at..len_at + 4)?
                .copy_from_slice(&len.to_le_bytes());
        } else {
            decode_field(tag, &mut r, w)?;
        }
    }
    Some(time)
}

#[inline(always)]
fn decode_field(tag: u8, r: &mut ByteReader<'_>, w: &mut Grow<'_>) -> Option<()> {
    w.room(FIELD_ROOM)?;
    w.byte(tag)?;
    if tag == ITEM_INLINE {
        let len = r.u8()?;
        let name = r.take(usize::from(len))?;
        w.byte(len)?;
        w.room(name.len() + FIELD_ROOM)?;
        w.bytes(name)?;
    } else if usize::from(tag) > MAX_FIELD_INDEX {
        return None;
    }
    let t = r.u8()?;
    if t == T_ARGS {
        let n = r.u8()?;
        w.byte(T_ARGS)?;
        w.byte(n)?;
        for _ in 0..n {
            let t = r.u8()?;
            if t == T_ARGS {
                return None;
            }
            w.room(FIELD_ROOM)?;
            decode_value(t, r, w)?;
        }
        Some(())
    } else {
        decode_value(t, r, w)
    }
}

/// A value other than arguments (its type already read), with room for
/// [`FIELD_ROOM`] bytes made.
#[inline(always)]
fn decode_value(t: u8, r: &mut ByteReader<'_>, w: &mut Grow<'_>) -> Option<()> {
    w.byte(t)?;
    match t {
        T_STR | T_RENDERED => {
            let len = varint_usize(r)?;
            let bytes = r.take(len)?;
            w.bytes(&u32::try_from(len).ok()?.to_le_bytes())?;
            w.room(bytes.len())?;
            w.bytes(bytes)?;
        }
        T_U64 => w.bytes(&r.varint()?.to_le_bytes())?,
        T_I64 => w.bytes(&unzigzag(r.varint()?).to_le_bytes())?,
        T_F64 => w.bytes(r.take(8)?)?,
        T_BOOL => w.byte(r.u8()?)?,
        T_CHAR => w.bytes(&u32::try_from(r.varint()?).ok()?.to_le_bytes())?,
        _ => return None,
    }
    Some(())
}

/// The time difference a compact event's body starts with (for
/// a new file's anchor, counted back over frames without decoding
/// them).
pub(crate) fn time_delta(body: &[u8]) -> Option<i64> {
    ByteReader(body).varint().map(unzigzag)
}

/// Reads a varint at the start of `bytes`: its value and length, `None`
/// if it is not there whole (or not in shortest form).
pub(crate) fn varint_at(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut r = ByteReader(bytes);
    let v = r.varint()?;
    Some((v, bytes.len() - r.0.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_round_trip_and_refuse_what_an_encoder_does_not_write() {
        for v in [
            0,
            1,
            127,
            128,
            300,
            u64::from(u32::MAX),
            u64::MAX - 1,
            u64::MAX,
        ] {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            assert_eq!(varint_at(&b), Some((v, b.len())));
            assert!(varint_at(&b[..b.len() - 1]).is_none());
        }
        // Not the shortest form, and eleven bytes or more than 64 bits.
        assert!(varint_at(&[0x80, 0x00]).is_none());
        assert!(varint_at(&[0xFF; 11]).is_none());
        assert!(varint_at(&[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02]).is_none());
        for v in [0i64, 1, -1, i64::MAX, i64::MIN, 12345, -98765] {
            assert_eq!(unzigzag(zigzag(v)), v);
        }
        assert_eq!(zigzag(-1), 1);
        assert_eq!(zigzag(1), 2);
    }
}
