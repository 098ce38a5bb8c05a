//! Rate limits and sampling by target and level ([`NowaitLayer::with_limits`]),
//! kept per call site.
//!
//! 1. [`Limits::parse`] reads the directives once, when the layer is built.
//! 2. The first time the layer sees a call site (`register_callsite`, or
//!    its first event), the most specific directive that matches its
//!    target and level gives it a [`SiteLimit`] (leaked: call sites are
//!    `'static` and finite, and so are their limits), or none; the answer
//!    goes into a fixed table of [`OnceLock`] slots keyed by the call
//!    site's address, under a mutex that only inserts take.
//! 3. Each event finds its call site's answer in the table with one
//!    acquire load per probed slot (most sites: one), no lock.
//!
//! Invariant: a slot, once set, never changes, and a call site has at most
//! one slot (inserts re-probe under the mutex), so all of a site's calls
//! count against one limit. A site whose probe window is full keeps its
//! answer in the mutex's overflow map: correct, slower.
//!
//! [`NowaitLayer::with_limits`]: crate::NowaitLayer::with_limits

use std::collections::HashMap;
use std::fmt;
use std::sync::{Mutex, OnceLock};

use nowait_core::__private::{period_nanos_checked, SiteLimit};
use nowait_core::event::SiteKey;
use nowait_core::{Level, Logger};
use tracing_core::Metadata;

/// Slots in a layer's table (a power of two).
const SLOTS: usize = 4096;
/// Slots looked at from a key's hash.
const PROBES: usize = 8;

type Slot = OnceLock<(u64, Option<&'static SiteLimit>)>;

/// A rule of a directive.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rule {
    Rate { per: u32, period_ns: u64 },
    Sample { one_in: u32 },
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Directive {
    /// Empty: every target.
    target: String,
    level: Option<Level>,
    rule: Rule,
}

impl Directive {
    fn matches(&self, target: &str, level: Level) -> bool {
        let t = &self.target;
        let target_ok = t.is_empty()
            || target == t
            || (target.starts_with(t.as_str()) && target[t.len()..].starts_with("::"));
        target_ok && !matches!(self.level, Some(l) if l != level)
    }

    /// Longer targets first, then a directive with a level.
    fn specificity(&self) -> (usize, bool) {
        (self.target.len(), self.level.is_some())
    }
}

/// A directive of [`NowaitLayer::with_limits`](crate::NowaitLayer::with_limits)
/// that could not be read.
///
/// # Examples
///
/// ```
/// # let (logger, _guard) = nowait_core::Builder::new().sink(nowait_core::Sink::writer(std::io::sink())).build().unwrap();
/// let err = nowait_tracing::NowaitLayer::new(logger).with_limits("db=ten/s").unwrap_err();
/// assert!(err.to_string().contains("db=ten/s"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimitsError {
    directive: String,
    why: &'static str,
}

impl fmt::Display for LimitsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid limit directive `{}`: {}",
            self.directive, self.why
        )
    }
}

impl std::error::Error for LimitsError {}

/// A layer's limits: the directives and the per-call-site answers.
pub(crate) struct Limits {
    directives: Vec<Directive>,
    logger: Logger,
    table: Box<[Slot]>,
    /// Taken by inserts only; holds the answers that found no slot.
    overflow: Mutex<HashMap<u64, Option<&'static SiteLimit>>>,
}

impl fmt::Debug for Limits {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Limits")
            .field("directives", &self.directives)
            .finish_non_exhaustive()
    }
}

fn start(key: u64) -> usize {
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SLOTS.trailing_zeros())) as usize
}

impl Limits {
    /// Reads comma-separated `TARGET[@LEVEL]=RULE` directives.
    pub(crate) fn parse(spec: &str, logger: Logger) -> Result<Limits, LimitsError> {
        let directives = spec
            .split(',')
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(parse_directive)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Limits {
            directives,
            logger,
            table: (0..SLOTS).map(|_| OnceLock::new()).collect(),
            overflow: Mutex::new(HashMap::new()),
        })
    }

    /// The limit of `meta`'s call site, if a directive gives it one.
    #[inline]
    pub(crate) fn get(&self, meta: &'static Metadata<'static>) -> Option<&'static SiteLimit> {
        let key = SiteKey::of(meta).get();
        match self.find(key) {
            Some(answer) => answer,
            None => self.insert(key, meta),
        }
    }

    #[inline]
    fn find(&self, key: u64) -> Option<Option<&'static SiteLimit>> {
        let at = start(key);
        for i in 0..PROBES {
            match self.table[(at + i) % SLOTS].get() {
                Some(&(k, limit)) if k == key => return Some(limit),
                Some(_) => {}
                None => return None,
            }
        }
        None
    }

    #[cold]
    fn insert(&self, key: u64, meta: &'static Metadata<'static>) -> Option<&'static SiteLimit> {
        let mut overflow = self
            .overflow
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(answer) = self.find(key) {
            return answer;
        }
        if let Some(&answer) = overflow.get(&key) {
            return answer;
        }
        let answer = self.limit_for(meta);
        let at = start(key);
        let placed = (0..PROBES).any(|i| self.table[(at + i) % SLOTS].set((key, answer)).is_ok());
        if !placed {
            overflow.insert(key, answer);
        }
        answer
    }

    fn limit_for(&self, meta: &'static Metadata<'static>) -> Option<&'static SiteLimit> {
        let level = crate::level_of(meta);
        let directive = self
            .directives
            .iter()
            .filter(|d| d.matches(meta.target(), level))
            .max_by_key(|d| d.specificity())?;
        let (file, line) = (meta.file().unwrap_or("?"), meta.line().unwrap_or(0));
        let limit = match directive.rule {
            Rule::Rate { per, period_ns } => SiteLimit::rate(per, period_ns, file, line),
            Rule::Sample { one_in } => SiteLimit::sample(one_in, file, line),
        };
        let limit: &'static SiteLimit = Box::leak(Box::new(limit));
        nowait_core::__private::watch_limit(limit, &self.logger);
        Some(limit)
    }
}

fn parse_directive(d: &str) -> Result<Directive, LimitsError> {
    let err = |why| LimitsError {
        directive: d.to_owned(),
        why,
    };
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
        Rule::Sample { one_in }
    } else {
        let (per, period) = rule
            .split_once('/')
            .ok_or_else(|| err("a rule is N/PERIOD (10/s, 100/250ms) or 1inN"))?;
        let per = per
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|&n| n > 0 && n <= nowait_core::__private::MAX_RATE)
            .ok_or_else(|| err("a rate keeps 1 to 8388608 records per period"))?;
        let period = period.trim();
        // `10/s` reads as `10/1s`.
        let period_ns = if period.starts_with(|c: char| c.is_ascii_digit()) {
            period_nanos_checked(period)
        } else {
            period_nanos_checked(&format!("1{period}"))
        }
        .ok_or_else(|| err("a period is a number and a unit: 250ms, 1s, 5m, 1h"))?;
        Rule::Rate { per, period_ns }
    };
    Ok(Directive {
        target: target.trim().to_owned(),
        level,
        rule,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn directives_parse() {
        assert_eq!(
            parse_directive("my_crate::db=10/s").unwrap(),
            Directive {
                target: "my_crate::db".into(),
                level: None,
                rule: Rule::Rate {
                    per: 10,
                    period_ns: 1_000_000_000
                }
            }
        );
        assert_eq!(
            parse_directive("@debug=1in100").unwrap(),
            Directive {
                target: String::new(),
                level: Some(Level::Debug),
                rule: Rule::Sample { one_in: 100 }
            }
        );
        assert_eq!(
            parse_directive("db@warn = 5/250ms").unwrap().rule,
            Rule::Rate {
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
            assert!(parse_directive(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_most_specific_directive_wins() {
        let d = |s| parse_directive(s).unwrap();
        let all = [d("=100/s"), d("db=10/s"), d("db@warn=1/s"), d("dbx=2/s")];
        let pick = |target, level| {
            all.iter()
                .filter(|x| x.matches(target, level))
                .max_by_key(|x| x.specificity())
                .map(|x| x.rule)
        };
        let rate = |per| {
            Some(Rule::Rate {
                per,
                period_ns: 1_000_000_000,
            })
        };
        assert_eq!(pick("db::pool", Level::Info), rate(10));
        assert_eq!(pick("db", Level::Warn), rate(1));
        assert_eq!(pick("dbx", Level::Warn), rate(2));
        assert_eq!(pick("http", Level::Info), rate(100));
    }
}
