//! Rate-limit and sampling directives read at run time (the `tracing`
//! layer's `NowaitLayer::with_limits`): comma-separated
//! `TARGET[@LEVEL]=RULE`, `RULE` being `N/PERIOD` (`10/s`, `100/250ms`) or
//! `1inN`.
//!
//! A directive list is untrusted input (an operator's environment, a
//! configuration file others can write), read by one total parser, capped
//! as the filter's directives are:
//!
//! 1. The list is split on commas; each item is trimmed, empty ones are
//!    skipped. At most [`MAX_DIRECTIVES`] directives: the one past it is an
//!    error, before it is read.
//! 2. A directive is at most [`MAX_DIRECTIVE_LEN`] bytes, its target at
//!    most [`MAX_TARGET_LEN`]: checked first, before anything is copied
//!    (an error then quotes the first 32 characters only).
//! 3. The directive is split at its last `=` (selector, rule), the
//!    selector at its first `@` (target, level); numbers are read with
//!    checked arithmetic, periods by [`period_nanos_checked`].
//! 4. An error quotes the directive escaped
//!    ([`escape_into`](crate::format::escape_into)): no control character,
//!    line break or bidi control from the input reaches the terminal that
//!    prints it.
//!
//! Parsing is linear in the list's length; matching a call site is
//! linear in the number of directives (once per call site).

use std::fmt;

use super::{period_nanos_checked, period_text, SiteLimit, MAX_PER};
use crate::level::Level;

/// The most directives a list may have (empty items do not count), as
/// many as a filter may (`Filter::MAX_DIRECTIVES`).
pub const MAX_DIRECTIVES: usize = 4096;
/// The longest target a directive may name, in bytes, as for a filter
/// (`Filter::MAX_TARGET_LEN`).
pub const MAX_TARGET_LEN: usize = 1024;
/// The longest directive, in bytes: a target and room for `@LEVEL=RULE`.
pub const MAX_DIRECTIVE_LEN: usize = MAX_TARGET_LEN + 64;

/// What a directive does to the call sites it matches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitRule {
    /// At most `per` records per `period_ns` (`per` in 1..=2^23,
    /// `period_ns` above 0).
    Rate {
        /// Records per period.
        per: u32,
        /// The period in nanoseconds.
        period_ns: u64,
    },
    /// Keep one call in `one_in` (at least 1), at random.
    Sample {
        /// N of "1 in N".
        one_in: u32,
    },
}

/// One `TARGET[@LEVEL]=RULE` directive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimitDirective {
    /// Empty: every target. At most [`MAX_TARGET_LEN`] bytes.
    pub target: Box<str>,
    /// Only events of this level, if set.
    pub level: Option<Level>,
    /// The rule.
    pub rule: LimitRule,
}

/// Why a directive list could not be read; its message quotes the input
/// escaped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimitDirectiveError {
    message: String,
}

impl LimitDirectiveError {
    fn invalid(directive: &str, why: &str) -> LimitDirectiveError {
        LimitDirectiveError {
            message: format!("invalid limit directive `{}`: {why}", escaped(directive)),
        }
    }
}

impl fmt::Display for LimitDirectiveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for LimitDirectiveError {}

/// `text` with control, line-breaking and bidi characters escaped.
fn escaped(text: &str) -> String {
    let mut out = Vec::with_capacity(text.len());
    crate::format::escape_into(text.as_bytes(), &mut out);
    // Escaping keeps UTF-8 valid (invalid bytes become `\xNN`).
    String::from_utf8_lossy(&out).into_owned()
}

/// Parses a comma-separated list of `TARGET[@LEVEL]=RULE` directives
/// (`RULE`: `N/PERIOD` or `1inN`), empty items skipped.
///
/// # Errors
///
/// The first directive that is invalid or too long, or a list of more
/// than [`MAX_DIRECTIVES`].
pub fn parse_limit_directives(spec: &str) -> Result<Vec<LimitDirective>, LimitDirectiveError> {
    let items = spec.split(',').map(str::trim).filter(|d| !d.is_empty());
    let mut out = Vec::new();
    for (n, item) in items.enumerate() {
        if n == MAX_DIRECTIVES {
            return Err(LimitDirectiveError {
                message: format!("too many limit directives (at most {MAX_DIRECTIVES})"),
            });
        }
        out.push(LimitDirective::parse(item)?);
    }
    Ok(out)
}

impl LimitDirective {
    /// Parses one directive (trimmed, not empty).
    fn parse(d: &str) -> Result<LimitDirective, LimitDirectiveError> {
        // Step 2, before anything copies the directive.
        let target = d.rsplit_once('=').map_or(d, |(selector, _)| selector);
        let target = target.split_once('@').map_or(target, |(t, _)| t);
        let too_long = |what: &str, len: usize, max: usize| LimitDirectiveError {
            message: format!(
                "limit directive starting `{}`: its {what} is {len} bytes long (at most {max})",
                escaped(&d.chars().take(32).collect::<String>())
            ),
        };
        if target.len() > MAX_TARGET_LEN {
            return Err(too_long("target", target.len(), MAX_TARGET_LEN));
        }
        if d.len() > MAX_DIRECTIVE_LEN {
            return Err(too_long("whole", d.len(), MAX_DIRECTIVE_LEN));
        }
        let err = |why| LimitDirectiveError::invalid(d, why);
        // Step 3.
        let (selector, rule) = d
            .rsplit_once('=')
            .ok_or_else(|| err("expected TARGET[@LEVEL]=RULE"))?;
        let (target, level) = match selector.split_once('@') {
            Some((t, l)) => (
                t,
                Some(
                    l.trim()
                        .parse::<Level>()
                        .map_err(|_| err("unknown level"))?,
                ),
            ),
            None => (selector, None),
        };
        let rule = rule.trim();
        let rule = if let Some(n) = rule.strip_prefix("1in") {
            let one_in = n
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|&n| n > 0)
                .ok_or_else(|| err("sampling is 1inN, N from 1 to 4294967295"))?;
            LimitRule::Sample { one_in }
        } else {
            let (per, period) = rule
                .split_once('/')
                .ok_or_else(|| err("a rule is N/PERIOD (10/s, 100/250ms) or 1inN"))?;
            let per = per
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|&n| n > 0 && n <= MAX_PER)
                .ok_or_else(|| err("a rate keeps 1 to 8388608 records per period"))?;
            let period = period.trim();
            // `10/s` reads as `10/1s`.
            let period_ns = if period.starts_with(|c: char| c.is_ascii_digit()) {
                period_nanos_checked(period)
            } else {
                period_nanos_checked(&format!("1{period}"))
            }
            .ok_or_else(|| err("a period is a number and a unit: 250ms, 1s, 5m, 1h"))?;
            LimitRule::Rate { per, period_ns }
        };
        Ok(LimitDirective {
            target: target.trim().into(),
            level,
            rule,
        })
    }

    /// Whether the directive applies to an event of `target` at `level`:
    /// its target is empty, equal, or a parent on a `::` boundary.
    pub fn matches(&self, target: &str, level: Level) -> bool {
        let t = &*self.target;
        let target_ok = t.is_empty()
            || target == t
            || (target.starts_with(t) && target[t.len()..].starts_with("::"));
        target_ok && !matches!(self.level, Some(l) if l != level)
    }

    /// Of two matching directives the greater wins: the longer target,
    /// then one with a level.
    pub fn specificity(&self) -> (usize, bool) {
        (self.target.len(), self.level.is_some())
    }

    /// The call site's limit this directive gives.
    pub fn site_limit(&self, file: &'static str, line: u32) -> SiteLimit {
        match self.rule {
            LimitRule::Rate { per, period_ns } => SiteLimit::rate(per, period_ns, file, line),
            LimitRule::Sample { one_in } => SiteLimit::sample(one_in, file, line),
        }
    }
}

/// The directive as it parses back: `TARGET[@LEVEL]=N/PERIOD` or
/// `TARGET[@LEVEL]=1inN`.
impl fmt::Display for LimitDirective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.target)?;
        if let Some(level) = self.level {
            write!(f, "@{}", level.as_str())?;
        }
        match self.rule {
            LimitRule::Rate { per, period_ns } => {
                write!(f, "={per}/{}", period_text(period_ns))
            }
            LimitRule::Sample { one_in } => write!(f, "=1in{one_in}"),
        }
    }
}

/// Fuzzing: arbitrary text as a directive list. The parser returns; an
/// accepted list keeps its caps and prints back to itself; an error is
/// bounded and quotes nothing raw; matching any target returns.
#[cfg(fuzzing)]
pub(crate) fn fuzz_limit_directives(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    match parse_limit_directives(&text) {
        Ok(list) => {
            assert!(list.len() <= MAX_DIRECTIVES);
            for d in &list {
                assert!(d.target.len() <= MAX_TARGET_LEN, "{d:?}");
                match d.rule {
                    LimitRule::Rate { per, period_ns } => {
                        assert!((1..=MAX_PER).contains(&per) && period_ns > 0, "{d:?}");
                    }
                    LimitRule::Sample { one_in } => assert!(one_in > 0, "{d:?}"),
                }
            }
            let shown: Vec<String> = list.iter().map(ToString::to_string).collect();
            let again = parse_limit_directives(&shown.join(","));
            assert_eq!(again.as_ref(), Ok(&list), "{shown:?}");
            for target in text.split([',', '=', '@']).chain(["", "a", "a::b"]) {
                for level in Level::ALL {
                    let best = list
                        .iter()
                        .filter(|d| d.matches(target, level))
                        .max_by_key(|d| d.specificity());
                    assert!(!best.is_some_and(|d| d.target.len() > target.len()));
                }
            }
        }
        Err(e) => {
            let message = e.to_string();
            assert_eq!(
                crate::format::unescaped_at(message.as_bytes(), &[]),
                None,
                "{message:?}"
            );
            // An escaped character takes at most 10 bytes (`\u{10ffff}`).
            assert!(message.len() <= 10 * MAX_DIRECTIVE_LEN + 200, "{message:?}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directives_parse() {
        let one = |s| parse_limit_directives(s).map(|mut v| v.remove(0));
        assert_eq!(
            one("my_crate::db=10/s").unwrap(),
            LimitDirective {
                target: "my_crate::db".into(),
                level: None,
                rule: LimitRule::Rate {
                    per: 10,
                    period_ns: 1_000_000_000
                }
            }
        );
        assert_eq!(
            one("@debug=1in100").unwrap(),
            LimitDirective {
                target: "".into(),
                level: Some(Level::Debug),
                rule: LimitRule::Sample { one_in: 100 }
            }
        );
        assert_eq!(
            one("db@warn = 5/250ms").unwrap().rule,
            LimitRule::Rate {
                per: 5,
                period_ns: 250_000_000
            }
        );
        for bad in [
            "db",
            "db=",
            "db=0/s",
            "db=1/0s",
            "db=1/x",
            "db=1in0",
            "db@loud=1/s",
            "=ten/s",
        ] {
            assert!(one(bad).is_err(), "{bad}");
        }
        let list = parse_limit_directives(" a=1/s, ,b@warn=1in7,,").unwrap();
        let shown: Vec<String> = list.iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["a=1/1s", "b@WARN=1in7"]);
        assert_eq!(parse_limit_directives(&shown.join(",")), Ok(list));
    }

    #[test]
    fn the_most_specific_directive_wins() {
        let all = parse_limit_directives("=100/s, db=10/s, db@warn=1/s, dbx=2/s").unwrap();
        let pick = |target, level| {
            all.iter()
                .filter(|x| x.matches(target, level))
                .max_by_key(|x| x.specificity())
                .map(|x| x.rule)
        };
        let rate = |per| {
            Some(LimitRule::Rate {
                per,
                period_ns: 1_000_000_000,
            })
        };
        assert_eq!(pick("db::pool", Level::Info), rate(10));
        assert_eq!(pick("db", Level::Warn), rate(1));
        assert_eq!(pick("dbx", Level::Warn), rate(2));
        assert_eq!(pick("http", Level::Info), rate(100));
    }

    /// Lists are capped as the filter's are: at most [`MAX_DIRECTIVES`]
    /// directives (empty items free), a target of at most
    /// [`MAX_TARGET_LEN`] bytes, a directive of at most
    /// [`MAX_DIRECTIVE_LEN`]; a longer one is refused, its error quoting
    /// its start only.
    #[test]
    #[cfg_attr(
        miri,
        ignore = "parses 4096 directives three times: minutes under Miri, and no unsafe code or atomics are involved"
    )]
    fn lists_and_directives_are_capped() {
        let at_cap = vec!["a=1/s"; MAX_DIRECTIVES].join(",");
        assert_eq!(
            parse_limit_directives(&at_cap).unwrap().len(),
            MAX_DIRECTIVES
        );
        let with_empties = format!("{at_cap},,, ,");
        assert!(parse_limit_directives(&with_empties).is_ok());
        let over = format!("{at_cap},a=1/s");
        let e = parse_limit_directives(&over).unwrap_err().to_string();
        assert!(e.contains("too many"), "{e}");

        let target = "t".repeat(MAX_TARGET_LEN);
        assert!(parse_limit_directives(&format!("{target}=1/s")).is_ok());
        let long = format!("{target}x@warn=1/s");
        let e = parse_limit_directives(&long).unwrap_err().to_string();
        assert!(e.contains("target") && e.len() < 200, "{e}");
        // A rule padded with zeros past the directive's bound.
        let padded = format!("a=1in{}1", "0".repeat(MAX_DIRECTIVE_LEN));
        let e = parse_limit_directives(&padded).unwrap_err().to_string();
        assert!(e.contains("whole") && e.len() < 200, "{e}");
    }

    /// An error quotes the directive escaped: no terminal escape or line
    /// break from the list reaches the terminal that prints it.
    #[test]
    fn errors_quote_the_directive_escaped() {
        for bad in [
            "db\x1b[2J\nforged=ten/s",
            "db@\u{202e}warn=1/s",
            "x=1/\r\x07",
        ] {
            let e = parse_limit_directives(bad).unwrap_err().to_string();
            assert_eq!(
                crate::format::unescaped_at(e.as_bytes(), &[]),
                None,
                "{e:?}"
            );
        }
    }
}
