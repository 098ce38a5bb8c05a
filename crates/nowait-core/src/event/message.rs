//! Deferred messages: the macros store a `std::fmt` format string in the
//! call site and copy the raw arguments; the writer thread formats them.
//!
//! Supported placeholders: `{}` and `{:spec}` with implicit positions, where
//! spec is `[[fill]align][+][#][0][width][.precision][type]`, width and
//! precision are literal numbers, and type is one of `? x X o b e E`. Any
//! other format string (named or numbered arguments, `{:1$}`, `{x}`
//! captures) is not deferred: the macro renders it on the caller.

use std::fmt::Write as _;

use super::Value;

/// Whether `format` can be deferred with `args` arguments (evaluated at
/// compile time by the macros).
pub const fn deferrable(format: &str, args: usize) -> bool {
    let b = format.as_bytes();
    let mut i = 0;
    let mut count = 0;
    while i < b.len() {
        if b[i] == b'{' {
            if i + 1 < b.len() && b[i + 1] == b'{' {
                i += 2;
                continue;
            }
            // Find the closing brace.
            let mut j = i + 1;
            while j < b.len() && b[j] != b'}' {
                j += 1;
            }
            if j >= b.len() {
                return false;
            }
            if j > i + 1 {
                // Must be `:spec`.
                if b[i + 1] != b':' || !spec_ok(b, i + 2, j) {
                    return false;
                }
            }
            count += 1;
            i = j + 1;
        } else if b[i] == b'}' {
            if i + 1 < b.len() && b[i + 1] == b'}' {
                i += 2;
                continue;
            }
            return false;
        } else {
            i += 1;
        }
    }
    count == args && args <= 255
}

const fn spec_ok(b: &[u8], mut i: usize, end: usize) -> bool {
    // [[fill]align]: fill is any ASCII char here (multi-byte fills are not
    // deferred).
    if i + 1 < end && is_align(b[i + 1]) && b[i] < 0x80 {
        i += 2;
    } else if i < end && is_align(b[i]) {
        i += 1;
    }
    if i < end && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    if i < end && b[i] == b'#' {
        i += 1;
    }
    if i < end && b[i] == b'0' {
        i += 1;
    }
    while i < end && b[i].is_ascii_digit() {
        i += 1;
    }
    if i < end && b[i] == b'.' {
        i += 1;
        let start = i;
        while i < end && b[i].is_ascii_digit() {
            i += 1;
        }
        if i == start {
            return false;
        }
    }
    if i < end && matches!(b[i], b'?' | b'x' | b'X' | b'o' | b'b' | b'e' | b'E') {
        i += 1;
    }
    i == end
}

const fn is_align(c: u8) -> bool {
    c == b'<' || c == b'^' || c == b'>'
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
enum Align {
    #[default]
    None,
    Left,
    Center,
    Right,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Spec {
    fill: char,
    align: Align,
    plus: bool,
    alternate: bool,
    zero: bool,
    width: usize,
    precision: Option<usize>,
    ty: u8,
}

impl Spec {
    /// `{}`: nothing but the value's `Display`.
    fn is_plain(&self) -> bool {
        self.width == 0
            && !self.plus
            && !self.zero
            && !self.alternate
            && self.precision.is_none()
            && self.ty == 0
    }
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Piece {
    Lit(String),
    Arg(Spec),
}

/// A parsed deferred format.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Pieces(Vec<Piece>);

impl Pieces {
    /// Parses a format string the macros accepted as deferrable. Anything
    /// unexpected is kept as literal text (never panics).
    pub(crate) fn parse(format: &str) -> Pieces {
        let mut pieces = Vec::new();
        let mut lit = String::new();
        let mut chars = format.char_indices().peekable();
        while let Some((at, c)) = chars.next() {
            match c {
                '{' if chars.peek().map(|p| p.1) == Some('{') => {
                    chars.next();
                    lit.push('{');
                }
                '}' if chars.peek().map(|p| p.1) == Some('}') => {
                    chars.next();
                    lit.push('}');
                }
                '{' => {
                    let rest = &format[at + 1..];
                    let Some(close) = rest.find('}') else {
                        lit.push_str(&format[at..]);
                        break;
                    };
                    let inner = &rest[..close];
                    let spec = inner
                        .strip_prefix(':')
                        .map_or(Some(Spec::default()), parse_spec);
                    match spec {
                        Some(spec) if inner.is_empty() || inner.starts_with(':') => {
                            if !lit.is_empty() {
                                pieces.push(Piece::Lit(std::mem::take(&mut lit)));
                            }
                            pieces.push(Piece::Arg(spec));
                        }
                        _ => lit.push_str(&format[at..at + close + 2]),
                    }
                    while let Some(&(i, _)) = chars.peek() {
                        if i > at + close + 1 {
                            break;
                        }
                        chars.next();
                    }
                }
                c => lit.push(c),
            }
        }
        if !lit.is_empty() {
            pieces.push(Piece::Lit(lit));
        }
        Pieces(pieces)
    }

    /// Writes the message: literal pieces and the arguments formatted per
    /// their spec (into `out`, unescaped; the caller escapes).
    /// The text of a format without placeholders (most messages).
    pub(crate) fn literal(&self) -> Option<&str> {
        match &self.0[..] {
            [] => Some(""),
            [Piece::Lit(s)] => Some(s),
            _ => None,
        }
    }

    pub(crate) fn render<'v>(
        &self,
        args: impl Iterator<Item = Option<Value<'v>>>,
        out: &mut String,
        tmp: &mut String,
    ) {
        let mut args = args;
        for piece in &self.0 {
            match piece {
                Piece::Lit(s) => out.push_str(s),
                Piece::Arg(spec) => match args.next() {
                    Some(Some(v)) => render_arg(v, spec, out, tmp),
                    _ => out.push_str("<missing>"),
                },
            }
        }
    }
}

fn parse_spec(s: &str) -> Option<Spec> {
    let mut spec = Spec {
        fill: ' ',
        ..Spec::default()
    };
    let mut rest = s;
    let mut it = rest.chars();
    let first = it.next();
    let second = it.next();
    let align_of = |c: char| match c {
        '<' => Some(Align::Left),
        '^' => Some(Align::Center),
        '>' => Some(Align::Right),
        _ => None,
    };
    if let (Some(f), Some(a)) = (first, second.and_then(align_of)) {
        spec.fill = f;
        spec.align = a;
        rest = &rest[f.len_utf8() + 1..];
    } else if let Some(a) = first.and_then(align_of) {
        spec.align = a;
        rest = &rest[1..];
    }
    if let Some(r) = rest.strip_prefix('+') {
        spec.plus = true;
        rest = r;
    } else if let Some(r) = rest.strip_prefix('-') {
        rest = r;
    }
    if let Some(r) = rest.strip_prefix('#') {
        spec.alternate = true;
        rest = r;
    }
    if let Some(r) = rest.strip_prefix('0') {
        spec.zero = true;
        rest = r;
    }
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 {
        spec.width = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
    }
    if let Some(r) = rest.strip_prefix('.') {
        let digits = r.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        spec.precision = Some(r[..digits].parse().ok()?);
        rest = &r[digits..];
    }
    match rest.as_bytes() {
        [] => {}
        [t @ (b'?' | b'x' | b'X' | b'o' | b'b' | b'e' | b'E')] => spec.ty = *t,
        _ => return None,
    }
    Some(spec)
}

fn render_arg(v: Value<'_>, spec: &Spec, out: &mut String, tmp: &mut String) {
    // `{}` of an integer or a string, the usual argument: straight into
    // `out`, nothing to pad.
    if spec.is_plain() {
        match v {
            Value::U64(n) => return crate::text::digits::push_u64_str(n, out),
            Value::I64(n) => {
                if n < 0 {
                    out.push('-');
                }
                return crate::text::digits::push_u64_str(n.unsigned_abs(), out);
            }
            Value::Str(s) | Value::Rendered(s) => {
                return out.push_str(&String::from_utf8_lossy(s));
            }
            _ => {}
        }
    }
    tmp.clear();
    let mut numeric = true;
    // The body, without padding. `std::fmt` does the number formatting; the
    // runtime spec only picks among a few static formats.
    let _ = match (v, spec.ty) {
        (Value::U64(n), b'x') => fmt_radix(tmp, spec, "0x", format_args!("{n:x}")),
        (Value::U64(n), b'X') => fmt_radix(tmp, spec, "0x", format_args!("{n:X}")),
        (Value::U64(n), b'o') => fmt_radix(tmp, spec, "0o", format_args!("{n:o}")),
        (Value::U64(n), b'b') => fmt_radix(tmp, spec, "0b", format_args!("{n:b}")),
        (Value::I64(n), b'x') => fmt_radix(tmp, spec, "0x", format_args!("{n:x}")),
        (Value::I64(n), b'X') => fmt_radix(tmp, spec, "0x", format_args!("{n:X}")),
        (Value::I64(n), b'o') => fmt_radix(tmp, spec, "0o", format_args!("{n:o}")),
        (Value::I64(n), b'b') => fmt_radix(tmp, spec, "0b", format_args!("{n:b}")),
        (Value::U64(n), b'e') => write!(tmp, "{n:e}"),
        (Value::U64(n), b'E') => write!(tmp, "{n:E}"),
        (Value::I64(n), b'e') => write!(tmp, "{n:e}"),
        (Value::I64(n), b'E') => write!(tmp, "{n:E}"),
        (Value::U64(n), _) => write!(tmp, "{n}"),
        (Value::I64(n), _) => write!(tmp, "{n}"),
        (Value::F64(x), b'e') => match spec.precision {
            Some(p) => write!(tmp, "{x:.p$e}"),
            None => write!(tmp, "{x:e}"),
        },
        (Value::F64(x), b'E') => match spec.precision {
            Some(p) => write!(tmp, "{x:.p$E}"),
            None => write!(tmp, "{x:E}"),
        },
        (Value::F64(x), b'?') => match spec.precision {
            Some(p) => write!(tmp, "{x:.p$?}"),
            None => {
                crate::text::float::push_debug(x, tmp);
                Ok(())
            }
        },
        (Value::F64(x), _) => match spec.precision {
            Some(p) => write!(tmp, "{x:.p$}"),
            None => {
                crate::text::float::push_display(x, tmp);
                Ok(())
            }
        },
        (Value::Bool(b), _) => {
            numeric = false;
            write!(tmp, "{b}")
        }
        (Value::Char(c), b'?') => {
            numeric = false;
            write!(tmp, "{c:?}")
        }
        (Value::Char(c), _) => {
            numeric = false;
            write!(tmp, "{c}")
        }
        (Value::Str(s), b'?') => {
            numeric = false;
            write!(tmp, "{:?}", String::from_utf8_lossy(s))
        }
        (Value::Str(s) | Value::Rendered(s), _) => {
            numeric = false;
            let s = String::from_utf8_lossy(s);
            match spec.precision {
                Some(p) => tmp.extend(s.chars().take(p)),
                None => tmp.push_str(&s),
            }
            Ok(())
        }
        (Value::Args(_), _) => {
            numeric = false;
            tmp.push_str("<args>");
            Ok(())
        }
    };
    if spec.plus && numeric && !tmp.starts_with('-') {
        tmp.insert(0, '+');
    }
    let len = tmp.chars().count();
    if len >= spec.width {
        out.push_str(tmp);
        return;
    }
    let pad = spec.width - len;
    if spec.zero && numeric {
        // Zeros go after the sign and radix prefix.
        let sign = tmp.starts_with(['+', '-']) as usize;
        let prefix = if tmp[sign..].starts_with("0x")
            || tmp[sign..].starts_with("0o")
            || tmp[sign..].starts_with("0b")
        {
            sign + 2
        } else {
            sign
        };
        out.push_str(&tmp[..prefix]);
        out.extend(std::iter::repeat('0').take(pad));
        out.push_str(&tmp[prefix..]);
        return;
    }
    let align = match spec.align {
        Align::None if numeric => Align::Right,
        Align::None => Align::Left,
        a => a,
    };
    let (before, after) = match align {
        Align::Right => (pad, 0),
        Align::Center => (pad / 2, pad - pad / 2),
        _ => (0, pad),
    };
    let fill = if spec.fill == '\0' { ' ' } else { spec.fill };
    out.extend(std::iter::repeat(fill).take(before));
    out.push_str(tmp);
    out.extend(std::iter::repeat(fill).take(after));
}

fn fmt_radix(
    tmp: &mut String,
    spec: &Spec,
    prefix: &str,
    digits: std::fmt::Arguments<'_>,
) -> std::fmt::Result {
    if spec.alternate {
        tmp.push_str(prefix);
    }
    tmp.write_fmt(digits)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(format: &str, args: &[Value<'_>]) -> String {
        let mut out = String::new();
        Pieces::parse(format).render(args.iter().map(|v| Some(*v)), &mut out, &mut String::new());
        out
    }

    #[test]
    fn deferrable_formats() {
        assert!(deferrable("plain", 0));
        assert!(deferrable("GET {} {}", 2));
        assert!(deferrable("{{literal}} {:>8.3} {:#x} {:?} {:08}", 4));
        assert!(deferrable("{:*^9}", 1));
        assert!(!deferrable("GET {}", 2));
        assert!(!deferrable("{name}", 1));
        assert!(!deferrable("{0}", 1));
        assert!(!deferrable("{:1$}", 2));
        assert!(!deferrable("{:.*}", 2));
        assert!(!deferrable("unclosed {", 0));
        assert!(!deferrable("stray }", 0));
    }

    /// Every supported spec renders exactly as `std::fmt` does.
    #[test]
    #[allow(clippy::useless_format, clippy::approx_constant)]
    fn matches_std_fmt() {
        let cases: Vec<(&str, Value<'_>, String)> = vec![
            ("{}", Value::U64(42), format!("{}", 42u64)),
            ("{:5}|", Value::U64(42), format!("{:5}|", 42u64)),
            ("{:<5}|", Value::U64(42), format!("{:<5}|", 42u64)),
            ("{:^6}|", Value::I64(-42), format!("{:^6}|", -42i64)),
            ("{:08}", Value::I64(-42), format!("{:08}", -42i64)),
            ("{:+}", Value::I64(42), format!("{:+}", 42i64)),
            ("{:#x}", Value::U64(255), format!("{:#x}", 255u64)),
            ("{:#010x}", Value::U64(255), format!("{:#010x}", 255u64)),
            ("{:X}", Value::U64(255), format!("{:X}", 255u64)),
            ("{:o}", Value::U64(8), format!("{:o}", 8u64)),
            ("{:#b}", Value::U64(5), format!("{:#b}", 5u64)),
            ("{:x}", Value::I64(-1), format!("{:x}", -1i64)),
            ("{}", Value::F64(0.1), format!("{}", 0.1f64)),
            ("{}", Value::F64(1.0), format!("{}", 1.0f64)),
            ("{:?}", Value::F64(1.0), format!("{:?}", 1.0f64)),
            (
                "{:.3}",
                Value::F64(2.0 / 3.0),
                format!("{:.3}", 2.0f64 / 3.0),
            ),
            (
                "{:8.2}|",
                Value::F64(2.71828),
                format!("{:8.2}|", 2.71828f64),
            ),
            ("{:e}", Value::F64(1234.5), format!("{:e}", 1234.5f64)),
            ("{}", Value::F64(f64::NAN), format!("{}", f64::NAN)),
            ("{}", Value::Bool(true), format!("{}", true)),
            ("{:>6}|", Value::Bool(false), format!("{:>6}|", false)),
            ("{}", Value::Char('é'), format!("{}", 'é')),
            ("{:?}", Value::Char('\n'), format!("{:?}", '\n')),
            ("{}", Value::Str(b"hi"), format!("{}", "hi")),
            ("{:?}", Value::Str(b"a\"b\n"), format!("{:?}", "a\"b\n")),
            ("{:*^7}", Value::Str(b"mid"), format!("{:*^7}", "mid")),
            ("{:.2}", Value::Str(b"abcdef"), format!("{:.2}", "abcdef")),
            ("{:5}|", Value::Str(b"ab"), format!("{:5}|", "ab")),
            ("{{{}}}", Value::U64(1), format!("{{{}}}", 1)),
            ("{:#}", Value::U64(7), format!("{:#}", 7u64)),
            ("{}", Value::Rendered(b"r\xC3"), "r\u{FFFD}".to_owned()),
        ];
        for (format, value, want) in cases {
            assert_eq!(render(format, &[value]), want, "format {format:?}");
        }
        // `{}` of integers and strings takes a path of its own.
        let mut ints: Vec<i128> = vec![0, 1, -1, i64::MIN.into(), i64::MAX.into()];
        ints.extend([u64::MAX - 1, u64::MAX].map(i128::from));
        for k in 0..20 {
            let p = 10i128.pow(k);
            ints.extend([p - 1, p, p + 1, -p, -(p - 1)]);
        }
        for n in ints {
            if let Ok(u) = u64::try_from(n) {
                assert_eq!(render("<{}>", &[Value::U64(u)]), format!("<{u}>"));
            }
            if let Ok(i) = i64::try_from(n) {
                assert_eq!(render("<{}>", &[Value::I64(i)]), format!("<{i}>"));
            }
        }
        let s = "é\u{1F600}\\n\"";
        assert_eq!(render("{}", &[Value::Str(s.as_bytes())]), s);
    }

    #[test]
    fn missing_arguments_are_marked_not_panicking() {
        assert_eq!(render("a {} b {}", &[Value::U64(1)]), "a 1 b <missing>");
    }
}
