//! Decimal digits without a digit buffer.
//!
//! [`push_u64`] appends what `Display` prints for a `u64`: eight digits at
//! a time, computed in a register (SWAR) and stored as one 8-byte word cut
//! to length. `eight_digits` gives the digits of a number below 10^8 as
//! the bytes of a `u64`, most significant digit in the lowest byte, each
//! byte the digit's value (0 to 9); the formats' clock uses it for the
//! microseconds of a timestamp.

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

/// [`push_u64`] for a `String`.
#[inline]
pub(crate) fn push_u64_str(n: u64, out: &mut String) {
    if n >= 100_000_000 {
        return push_u64_str_long(n, out);
    }
    let digits = eight_digits(n as u32);
    let skip = (digits.trailing_zeros() / 8).min(7) as usize;
    let bytes = ((digits | ASCII_ZEROS) >> (8 * skip)).to_le_bytes();
    // ASCII digits: always UTF-8.
    out.push_str(std::str::from_utf8(&bytes[..8 - skip]).unwrap_or_default());
}

/// [`push_u64_long`] for a `String`: the high digits, then the low eight,
/// with no buffer on the heap.
#[inline(never)]
fn push_u64_str_long(n: u64, out: &mut String) {
    push_u64_str(n / 100_000_000, out);
    let low = (eight_digits((n % 100_000_000) as u32) | ASCII_ZEROS).to_le_bytes();
    out.push_str(std::str::from_utf8(&low).unwrap_or_default());
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
pub(crate) fn eight_digits(n: u32) -> u64 {
    let x = u64::from(n / 10_000) | u64::from(n % 10_000) << 32;
    let hundreds = ((x * 10_486) >> 20) & 0x0000_007F_0000_007F;
    let x = hundreds | (x - hundreds * 100) << 16;
    let tens = ((x * 103) >> 10) & 0x000F_000F_000F_000F;
    tens | (x - tens * 10) << 8
}

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
            let mut s = "x".to_owned();
            push_u64_str(n, &mut s);
            assert_eq!(s, format!("x{n}"));
        }
    }
}
