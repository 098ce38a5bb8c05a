//! File names of a rolling sink: periods, names, and parsing them back.
//!
//! A name joins with `.` the non-empty parts, in this order:
//!
//! 1. the prefix (`filename_prefix`),
//! 2. the period (`YYYY-MM-DD`, `YYYY-MM-DD-HH` or `YYYY-MM-DD-HH-MM`;
//!    for [`Rotation::Weekly`] the `YYYY-MM-DD` of the Sunday the week
//!    starts on, as `tracing_appender`'s `Rotation::WEEKLY`; none for
//!    [`Rotation::Never`]),
//! 3. the index within the period, for the second and later files of one
//!    period (size rotation): `1`, `2`, ...; the first file has none,
//! 4. the suffix (`filename_suffix`),
//!
//! then `.gz` or `.zst` once compressed. These are the names `tracing_appender::rolling`
//! gives (`prefix.2026-11-23.suffix`) plus the index, so that a glob on
//! `prefix.*` or `*.suffix` still finds every file.

use crate::text::time::civil_from_days;

use super::{Compression, Rotation};

/// A file's place in the sequence: period text, then index. Ordered
/// chronologically (period texts are fixed-width and zero-padded).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Key {
    pub(crate) period: String,
    pub(crate) index: u32,
}

/// Days from the Sunday on or before day `days` (since 1970-01-01, a
/// Thursday) to it.
fn since_sunday(days: i64) -> i64 {
    (days + 4).rem_euclid(7)
}

/// The period text of the instant `secs` (Unix seconds, already shifted by
/// the UTC offset for local time and back by the time of day rotations
/// happen at).
pub(crate) fn period(rotation: Rotation, secs: i64) -> String {
    let mut days = secs.div_euclid(86_400);
    if rotation == Rotation::Weekly {
        days -= since_sunday(days);
    }
    let (y, m, d) = civil_from_days(days);
    let sod = secs.rem_euclid(86_400);
    let (hh, mm) = (sod / 3600, sod / 60 % 60);
    match rotation {
        Rotation::Never => String::new(),
        Rotation::Daily | Rotation::Weekly => format!("{y:04}-{m:02}-{d:02}"),
        Rotation::Hourly => format!("{y:04}-{m:02}-{d:02}-{hh:02}"),
        Rotation::Minutely => format!("{y:04}-{m:02}-{d:02}-{hh:02}-{mm:02}"),
    }
}

/// The start of the period after the one holding `secs` (same clock as
/// `secs`), or `None` for [`Rotation::Never`].
pub(crate) fn next_boundary(rotation: Rotation, secs: i64) -> Option<i64> {
    let len = match rotation {
        Rotation::Never => return None,
        Rotation::Minutely => 60,
        Rotation::Hourly => 3600,
        Rotation::Daily => 86_400,
        Rotation::Weekly => {
            let day = secs.div_euclid(86_400);
            return Some((day - since_sunday(day) + 7) * 86_400);
        }
    };
    Some(secs - secs.rem_euclid(len) + len)
}

/// How a rolling sink names its files.
#[derive(Debug, Clone)]
pub(crate) struct Naming {
    pub(crate) prefix: Option<String>,
    pub(crate) suffix: Option<String>,
    pub(crate) rotation: Rotation,
}

impl Naming {
    /// The file name for `key` (uncompressed).
    pub(crate) fn name(&self, key: &Key) -> String {
        let index = (key.index > 0).then(|| key.index.to_string());
        let parts = [
            self.prefix.as_deref(),
            Some(key.period.as_str()).filter(|p| !p.is_empty()),
            index.as_deref(),
            self.suffix.as_deref(),
        ];
        let mut name = String::new();
        for part in parts.into_iter().flatten() {
            if !name.is_empty() {
                name.push('.');
            }
            name.push_str(part);
        }
        name
    }

    /// The key of a file name of this sink, and whether it is compressed
    /// (`.gz` or `.zst`);
    /// `None` for any other name (never touched by retention).
    pub(crate) fn parse(&self, name: &str) -> Option<(Key, bool)> {
        let (name, gz) = match Compression::ALL
            .iter()
            .find_map(|c| name.strip_suffix(c.extension()))
        {
            Some(stem) => (stem, true),
            None => (name, false),
        };
        let mut rest = name;
        if let Some(prefix) = &self.prefix {
            rest = rest.strip_prefix(prefix.as_str())?;
            if !rest.is_empty() {
                rest = rest.strip_prefix('.')?;
            }
        }
        if let Some(suffix) = &self.suffix {
            rest = rest.strip_suffix(suffix.as_str())?;
            if !rest.is_empty() {
                rest = rest.strip_suffix('.')?;
            }
        }
        let mut tokens = rest.split('.').filter(|_| !rest.is_empty());
        let period = if self.rotation == Rotation::Never {
            String::new()
        } else {
            let p = tokens.next()?;
            if !self.is_period(p) {
                return None;
            }
            p.to_owned()
        };
        let index = match tokens.next() {
            None => 0,
            Some(t)
                if !t.is_empty()
                    && t.bytes().all(|b| b.is_ascii_digit())
                    && !t.starts_with('0') =>
            {
                t.parse().ok()?
            }
            Some(_) => return None,
        };
        if tokens.next().is_some() {
            return None;
        }
        let key = Key { period, index };
        // Exactly the name this key gets: the steps above alone let a
        // separator be taken twice (`app..log` for `app.log`).
        (self.name(&key) == name).then_some((key, gz))
    }

    /// Whether `s` has the shape of this rotation's period text.
    fn is_period(&self, s: &str) -> bool {
        let shape: &[u8] = match self.rotation {
            Rotation::Never => b"",
            Rotation::Daily | Rotation::Weekly => b"dddd-dd-dd",
            Rotation::Hourly => b"dddd-dd-dd-dd",
            Rotation::Minutely => b"dddd-dd-dd-dd-dd",
        };
        s.len() == shape.len()
            && s.bytes().zip(shape).all(|(c, &k)| match k {
                b'd' => c.is_ascii_digit(),
                _ => c == k,
            })
    }
}

/// The fuzz target `rolling_names`: names found in a directory others
/// can write are matched exactly. The first byte picks the rotation and
/// whether there is a prefix and a suffix; the rest, split at `0xff`, is
/// the prefix, the suffix and a file name. Whatever [`Naming::parse`]
/// accepts must be exactly the name the sink gives that key (plus `.gz` or
/// `.zst` when it says compressed), so retention and compression can never
/// take a name that is not the sink's.
#[cfg(fuzzing)]
pub(crate) fn fuzz_names(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let rotation = [
        Rotation::Minutely,
        Rotation::Hourly,
        Rotation::Daily,
        Rotation::Weekly,
        Rotation::Never,
    ][usize::from(first % 5)];
    let mut parts = rest.split(|&b| b == 0xff).map(String::from_utf8_lossy);
    let (prefix, suffix, name) = (parts.next(), parts.next(), parts.next());
    let Some(name) = name else { return };
    // As `filename_prefix` and `filename_suffix` keep them.
    let keep = |p: Option<std::borrow::Cow<'_, str>>, on: bool| {
        p.filter(|p| on && !p.is_empty()).map(|p| p.into_owned())
    };
    let naming = Naming {
        prefix: keep(prefix, first & 0x10 != 0),
        suffix: keep(suffix, first & 0x20 != 0),
        rotation,
    };
    if let Some((key, compressed)) = naming.parse(&name) {
        let plain = naming.name(&key);
        let exact = if compressed {
            Compression::ALL
                .iter()
                .any(|c| name.strip_suffix(c.extension()) == Some(plain.as_str()))
        } else {
            name == plain
        };
        assert!(
            exact,
            "{name:?} parsed as {key:?} of {naming:?}, named {plain:?}"
        );
        assert!(key.period.is_empty() == (rotation == Rotation::Never));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naming(prefix: Option<&str>, suffix: Option<&str>, rotation: Rotation) -> Naming {
        Naming {
            prefix: prefix.map(Into::into),
            suffix: suffix.map(Into::into),
            rotation,
        }
    }

    fn key(period: &str, index: u32) -> Key {
        Key {
            period: period.into(),
            index,
        }
    }

    #[test]
    fn periods_and_boundaries() {
        // 2026-11-23T09:41:07Z
        let t = 1_795_426_867;
        assert_eq!(period(Rotation::Daily, t), "2026-11-23");
        assert_eq!(period(Rotation::Hourly, t), "2026-11-23-09");
        assert_eq!(period(Rotation::Minutely, t), "2026-11-23-09-41");
        assert_eq!(period(Rotation::Never, t), "");
        assert_eq!(next_boundary(Rotation::Minutely, t), Some(t - 7 + 60));
        assert_eq!(
            period(
                Rotation::Hourly,
                next_boundary(Rotation::Hourly, t).unwrap()
            ),
            "2026-11-23-10"
        );
        assert_eq!(
            period(Rotation::Daily, next_boundary(Rotation::Daily, t).unwrap()),
            "2026-11-24"
        );
        assert_eq!(next_boundary(Rotation::Never, t), None);
    }

    /// Weeks start on Sunday at midnight and are named after that Sunday,
    /// as `tracing_appender`'s weekly rotation names them.
    #[test]
    fn weeks_start_on_sunday_and_are_named_after_it() {
        // 2026-11-22 is a Sunday; 2026-11-23T09:41:07Z a Monday.
        let sunday = 1_795_305_600;
        for t in [sunday, sunday + 1, 1_795_426_867, sunday + 7 * 86_400 - 1] {
            assert_eq!(period(Rotation::Weekly, t), "2026-11-22", "{t}");
            assert_eq!(
                next_boundary(Rotation::Weekly, t),
                Some(sunday + 7 * 86_400)
            );
        }
        assert_eq!(period(Rotation::Weekly, sunday - 1), "2026-11-15");
        assert_eq!(period(Rotation::Weekly, sunday + 7 * 86_400), "2026-11-29");
        // Before 1970 too (a clock set wrong is no reason to misname).
        assert_eq!(period(Rotation::Weekly, -1), "1969-12-28");
    }

    #[test]
    fn names_match_tracing_appender_and_parse_back() {
        // tracing_appender::rolling::daily(dir, "app.log") names
        // `app.log.2026-11-23`; with a suffix `app.2026-11-23.log`; with
        // no prefix the date alone.
        let cases = [
            (
                naming(Some("app.log"), None, Rotation::Daily),
                key("2026-11-23", 0),
                "app.log.2026-11-23",
            ),
            (
                naming(Some("app"), Some("log"), Rotation::Daily),
                key("2026-11-23", 0),
                "app.2026-11-23.log",
            ),
            (
                naming(None, Some("log"), Rotation::Hourly),
                key("2026-11-23-09", 0),
                "2026-11-23-09.log",
            ),
            (
                naming(None, None, Rotation::Minutely),
                key("2026-11-23-09-41", 0),
                "2026-11-23-09-41",
            ),
            (
                naming(Some("app"), Some("log"), Rotation::Daily),
                key("2026-11-23", 12),
                "app.2026-11-23.12.log",
            ),
            (
                naming(Some("app.log"), None, Rotation::Never),
                key("", 0),
                "app.log",
            ),
            (
                naming(Some("app.log"), None, Rotation::Never),
                key("", 3),
                "app.log.3",
            ),
            (
                naming(Some("app"), Some("log"), Rotation::Never),
                key("", 0),
                "app.log",
            ),
        ];
        for (n, k, name) in cases {
            assert_eq!(n.name(&k), name);
            assert_eq!(n.parse(name), Some((k.clone(), false)), "{name}");
            assert_eq!(
                n.parse(&format!("{name}.gz")),
                Some((k.clone(), true)),
                "{name}.gz"
            );
            assert_eq!(
                n.parse(&format!("{name}.zst")),
                Some((k, true)),
                "{name}.zst"
            );
        }
    }

    /// With a prefix and a suffix and no period, the dot between them
    /// must not be taken twice: `app..log` is not `app.log`.
    #[test]
    fn a_doubled_separator_is_not_ours() {
        let n = naming(Some("app"), Some("log"), Rotation::Never);
        assert_eq!(n.parse("app.log"), Some((key("", 0), false)));
        for name in ["app..log", "app..log.gz", "app..log.zst", "app.1..log"] {
            assert_eq!(n.parse(name), None, "{name}");
        }
    }

    #[test]
    fn foreign_names_are_not_ours() {
        let n = naming(Some("app"), Some("log"), Rotation::Daily);
        for name in [
            "app.log",
            "app.2026-11-23.xlog",
            "app.2026-11-23.log.tmp",
            "app.2026-11-23.gz.tmp",
            "app.2026-11-23.log.zst.tmp",
            "app.2026-11-23.log.gz.zst",
            "app.2026-1-23.log",
            "app.2026-11-23.01.log",
            "app.2026-11-23.1.2.log",
            "other.2026-11-23.log",
            "app.2026-11-23-09.log",
            "appx.2026-11-23.log",
        ] {
            assert_eq!(n.parse(name), None, "{name}");
        }
        assert!(key("2026-11-23", 2) < key("2026-11-23", 10));
        assert!(key("2026-11-23", 10) < key("2026-11-24", 0));
    }
}
