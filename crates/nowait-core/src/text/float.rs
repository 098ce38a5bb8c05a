//! `f64` printed exactly as `std::fmt` prints it (`{:?}` and `{}`), from
//! the shortest round-trip digits that `zmij` (Schubfach) finds.
//!
//! `std` and `zmij` find the same digits: the shortest decimal that reads
//! back as the same `f64`, the closest to the exact value among those,
//! with the interval's ends included when the significand is even. They
//! lay the digits out differently (where scientific notation starts, `+`
//! in exponents), so only the digits are taken from `zmij`'s text and laid
//! out here as `std` does (`zmij` is the crate `serde_json` prints floats
//! with; this is 3-4 times faster than `std::fmt`'s Grisu through
//! `write!`):
//!
//! 1. Non-finite values: `NaN` (whatever its sign), `inf`, `-inf`.
//! 2. The sign: `-` whenever the sign bit is set, `-0.0` included.
//! 3. `Debug`: scientific (`1.5e-7`, `1e16`: no `+`, no padding) when the
//!    magnitude is nonzero and below `1e-4`, or at least `1e16`; otherwise
//!    plain decimal with at least one fractional digit (`1.0`, `0.0001`).
//!    `Display`: always plain decimal, no forced fractional digit (`1`,
//!    `10000000000000000`, `0.0000001`).
//!
//! 4. The digits are only taken when the choice was clear: where the exact
//!    value lies halfway between two shortest candidates (`std`'s Grisu
//!    and `zmij` break such ties differently) or the digits fall on the
//!    rounding interval's edge, `std` formats the number itself. Both
//!    need a value with a short exact decimal expansion and are rare.
//!
//! The test below compares both against `format!` on edge values and on a
//! few hundred thousand random bit patterns.

/// A number's shortest decimal digits: the value is `0.d1d2… × 10^point`,
/// and `n × 10^(point - len)` with `n` the digits as an integer.
struct Digits {
    buf: [u8; 17],
    len: usize,
    point: i32,
    n: u64,
}

/// The digits in `zmij`'s text for a finite, nonzero, positive number.
fn digits(text: &[u8]) -> Digits {
    let (mantissa, exp) = match text.iter().position(|&b| b == b'e') {
        Some(e) => (&text[..e], parse_exp(&text[e + 1..])),
        None => (text, 0),
    };
    let mut d = Digits {
        buf: [0; 17],
        len: 0,
        point: 0,
        n: 0,
    };
    let mut point = None;
    for &b in mantissa {
        if b == b'.' {
            point = Some(d.len as i32);
        } else if b == b'0' && d.len == 0 {
            // A leading zero ("0.00123") moves the point left once it is
            // seen (zeros before it are only the integer part's "0").
            if point.is_some() {
                d.point -= 1;
            }
        } else if d.len < d.buf.len() {
            // At most 17 significant digits: any further ones are the
            // zeros of a fixed layout ("1000000000000000.0"), dropped here
            // as trailing zeros would be below.
            d.buf[d.len] = b;
            d.len += 1;
        }
    }
    let int_digits = point.unwrap_or(d.len as i32);
    d.point += int_digits + exp;
    while d.len > 1 && d.buf[d.len - 1] == b'0' {
        d.len -= 1;
    }
    d.n = d.buf[..d.len]
        .iter()
        .fold(0u64, |n, &b| n * 10 + u64::from(b - b'0'));
    d
}

/// Whether `d` (the digits of `abs`) sits on a tie or on the edge of the
/// rounding interval, where `std` may choose other digits.
#[inline]
fn ambiguous(abs: f64, text: &[u8]) -> bool {
    let (m, e) = decode(abs);
    // A tie or an edge is a number A × 2^f (A odd) with a decimal
    // expansion of at most 18 digits: for f < 0 that is A × 5^-f, so
    // 5^-f <= 10^18 + 5, f >= -25. The edges tried below have f = e - 1
    // or e - 2, a tie f = e + tz(m) (x itself): most values (1.37:
    // e = -52) skip the test.
    if e - 1 < -25 && e + (m.trailing_zeros() as i32) < -25 {
        return false;
    }
    tie_or_edge(m, e, text)
}

/// The test of [`ambiguous`] for the numbers that need it.
fn tie_or_edge(m: u64, e: i32, text: &[u8]) -> bool {
    let d = digits(text);
    let n = d.n;
    // The digits are n × 10^k.
    let k = d.point - d.len as i32;
    let tie = exact_eq(10 * n + 5, k - 1, m, e) || exact_eq(10 * n - 5, k - 1, m, e);
    // The interval's edges: halfway to the neighbours (a quarter below
    // at a power of two, where the spacing halves).
    let edge = exact_eq(n, k, 2 * m + 1, e - 1)
        || exact_eq(n, k, 2 * m - 1, e - 1)
        || exact_eq(n, k, 4 * m - 1, e - 2);
    tie || edge
}

/// `abs` as `m × 2^e` exactly.
fn decode(abs: f64) -> (u64, i32) {
    let bits = abs.to_bits();
    let (frac, exp_bits) = (bits & ((1 << 52) - 1), (bits >> 52) as i32);
    if exp_bits == 0 {
        (frac, -1074)
    } else {
        (frac | 1 << 52, exp_bits - 1075)
    }
}

/// Whether `n × 10^j == m × 2^e` exactly (`n`, `m` nonzero).
fn exact_eq(n: u64, j: i32, m: u64, e: i32) -> bool {
    // n·5^j·2^j == m·2^e: the same power of two and the same odd part.
    let (tn, tm) = (n.trailing_zeros(), m.trailing_zeros());
    if tn as i32 + j != tm as i32 + e {
        return false;
    }
    let (on, om) = (u128::from(n >> tn), u128::from(m >> tm));
    // odd(n)·5^j == odd(m), or odd(n) == odd(m)·5^-j.
    let (small, big) = if j >= 0 { (on, om) } else { (om, on) };
    5u128
        .checked_pow(j.unsigned_abs())
        .and_then(|p| small.checked_mul(p))
        == Some(big)
}

/// `std`'s own rendering, for the ambiguous cases.
#[cold]
fn fallback(x: f64, debug: bool, out: &mut Vec<u8>) {
    use std::io::Write as _;
    let _ = if debug {
        write!(out, "{x:?}")
    } else {
        write!(out, "{x}")
    };
}

/// `+12`, `-7` or `12` after the `e`.
fn parse_exp(s: &[u8]) -> i32 {
    let (neg, s) = match s.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, s),
    };
    let n = s
        .iter()
        .fold(0i32, |n, &b| n * 10 + i32::from(b.wrapping_sub(b'0')));
    if neg {
        -n
    } else {
        n
    }
}

/// Appends `x` exactly as `format!("{x:?}")` does.
#[inline]
pub(crate) fn write_debug(x: f64, out: &mut Vec<u8>) {
    let abs = x.abs();
    // The common case inline: a number that `Debug` prints without
    // exponent, as `zmij` does (see `render`).
    if (1e-4..1e16).contains(&abs) {
        let mut zbuf = zmij::Buffer::new();
        let text = zbuf.format_finite(abs).as_bytes();
        if !ambiguous(abs, text) {
            if x.is_sign_negative() {
                out.push(b'-');
            }
            return out.extend_from_slice(text);
        }
    }
    render(x, true, out);
}

/// Appends `x` exactly as `format!("{x}")` does.
pub(crate) fn push_display(x: f64, out: &mut String) {
    push(x, false, out);
}

/// Appends `x` exactly as `format!("{x:?}")` does.
pub(crate) fn push_debug(x: f64, out: &mut String) {
    push(x, true, out);
}

fn push(x: f64, debug: bool, out: &mut String) {
    let mut bytes = std::mem::take(out).into_bytes();
    render(x, debug, &mut bytes);
    *out = match String::from_utf8(bytes) {
        Ok(s) => s,
        // Never: the rendering is ASCII.
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
}

/// Appends `x` as `Debug` (or `Display`) would.
fn render(x: f64, debug: bool, out: &mut Vec<u8>) {
    if x.is_nan() {
        out.extend_from_slice(b"NaN");
        return;
    }
    if x.is_sign_negative() {
        out.push(b'-');
    }
    let abs = x.abs();
    if abs.is_infinite() {
        out.extend_from_slice(b"inf");
        return;
    }
    if abs == 0.0 {
        out.extend_from_slice(if debug { b"0.0" } else { b"0" });
        return;
    }
    let mut zbuf = zmij::Buffer::new();
    let text = zbuf.format_finite(abs).as_bytes();
    if ambiguous(abs, text) {
        if x.is_sign_negative() {
            out.pop();
        }
        return fallback(x, debug, out);
    }
    let scientific = debug && !(1e-4..1e16).contains(&abs);
    if debug && !scientific {
        // Between 1e-4 and 1e16 `zmij` lays the digits out as `Debug`
        // does ("0.001234", "12.34", "1000.0"), without exponent.
        debug_assert!(!text.contains(&b'e'));
        return out.extend_from_slice(text);
    }
    let d = digits(text);
    let digits = &d.buf[..d.len];
    let len = d.len as i32;
    if scientific {
        // d[.ddd]e[-]N.
        out.push(digits[0]);
        if d.len > 1 {
            out.push(b'.');
            out.extend_from_slice(&digits[1..]);
        }
        out.push(b'e');
        out.extend_from_slice(itoa::Buffer::new().format(d.point - 1).as_bytes());
    } else if d.point <= 0 {
        out.extend_from_slice(b"0.");
        out.resize(out.len() + d.point.unsigned_abs() as usize, b'0');
        out.extend_from_slice(digits);
    } else if d.point >= len {
        out.extend_from_slice(digits);
        out.resize(out.len() + (d.point - len) as usize, b'0');
        if debug {
            out.extend_from_slice(b".0");
        }
    } else {
        let (int, frac) = digits.split_at(d.point as usize);
        out.extend_from_slice(int);
        out.push(b'.');
        out.extend_from_slice(frac);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(x: f64) {
        let mut out = Vec::new();
        write_debug(x, &mut out);
        let debug = format!("{x:?}");
        assert_eq!(out, debug.as_bytes(), "Debug of {:#018x}", x.to_bits());
        let mut s = String::from("=");
        push_debug(x, &mut s);
        assert_eq!(s[1..], debug, "Debug of {:#018x}", x.to_bits());
        s.truncate(1);
        push_display(x, &mut s);
        assert_eq!(s[1..], format!("{x}"), "Display of {:#018x}", x.to_bits());
    }

    #[test]
    fn edge_values_match_std() {
        let mut values = vec![
            0.0,
            -0.0,
            1.0,
            -1.0,
            0.1,
            0.3,
            1.5,
            100.0,
            123.456,
            1e-4,
            9.999e-5,
            1.0001e-4,
            0.000_100_000_000_000_01,
            1e-5,
            1e-7,
            1.5e-7,
            1e15,
            1e16,
            9_999_999_999_999_998.0,
            1.5e16,
            1e17,
            1e21,
            1e22,
            1e23,
            123_456_789_012_345_680.0,
            2f64.powi(53),
            2f64.powi(63),
            2f64.powi(64),
            2f64.powi(-1074),
            2f64.powi(-1022),
            f64::MIN_POSITIVE,
            f64::MIN_POSITIVE / 3.0,
            f64::MAX,
            f64::MIN,
            f64::EPSILON,
            f64::NAN,
            -f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::from_bits(1),
            f64::from_bits(0x000f_ffff_ffff_ffff),
            std::f64::consts::PI,
            std::f64::consts::E,
            5e-324,
            1.7976931348623157e308,
            0.001_37,
            4.35,
            2.675,
            // Exactly halfway between ...396.2 and ...396.3 (std: .3).
            f64::from_bits(0x4308_f95b_3379_1ce2),
            0.5,
            2.5,
            1e23 + 0.5,
            9_007_199_254_740_993.0,
        ];
        for i in -330..=310 {
            let p = 10f64.powi(i);
            values.extend([p, p * 1.5, p * 9.999, p.next_up(), p.next_down()]);
        }
        for i in 0..=2000u64 {
            values.push(i as f64);
            values.push(i as f64 / 1000.0);
            values.push(i as f64 * 0.001_37);
        }
        for x in values {
            check(x);
            check(-x);
        }
    }

    /// Random bit patterns (every exponent equally likely) and random
    /// values of everyday magnitude, against `format!`.
    #[test]
    fn random_values_match_std() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            // xorshift64*
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            state.wrapping_mul(0x2545_f491_4f6c_dd1d)
        };
        // NOWAIT_FLOAT_CASES=100000000 for a long run.
        let n = std::env::var("NOWAIT_FLOAT_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(if cfg!(miri) { 200 } else { 100_000 });
        for _ in 0..n {
            check(f64::from_bits(next()));
            let everyday = (next() >> 11) as f64 / (1u64 << 53) as f64;
            check(everyday * 10f64.powi((next() % 24) as i32 - 8));
        }
    }
}
