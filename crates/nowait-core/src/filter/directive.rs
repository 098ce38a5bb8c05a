//! `RUST_LOG`-style directives: parsing and matching.
//!
//! A directive list is comma-separated; each directive is one of
//!
//! 1. `LEVEL`: the default for targets no other directive names
//!    (`trace`, `debug`, `info`, `warn`, `error`, `off`, any case, or the
//!    numbers `0`-`5` as in `tracing`: `0` is `off`, `5` is `trace`);
//! 2. `TARGET=LEVEL`: for `TARGET` and every target below it;
//! 3. `TARGET`: the same as `TARGET=trace`.
//!
//! `TARGET` matches a record's target when it is equal to it or a prefix
//! of it that ends on a `::` boundary: `hyper` matches `hyper` and
//! `hyper::proto::h1`, not `hyperlocal`. (`tracing_subscriber::EnvFilter`
//! and `env_logger` compare plain string prefixes, so there `hyper` also
//! matches `hyperlocal`; on targets made of whole module names the two
//! agree, which `tests.rs` checks against `EnvFilter` itself.)
//!
//! The most specific directive wins: the one with the longest matching
//! target, the bare level when none matches. Of two directives with the
//! same target the later one wins. A target no directive matches is off.
//!
//! Invariant: [`Directives::list`] is sorted by target length, longest
//! first, bare levels (no target) last, without two equal targets, so the
//! first match is the most specific one. A list is built once, from all
//! its directives ([`Directives::new`]): a hash map keeps the last of each
//! target and one stable sort orders them, O(n log n) for n directives.
//! A list holds at most [`Filter::MAX_DIRECTIVES`] directives, each target
//! at most [`Filter::MAX_TARGET_LEN`] bytes long.

use std::collections::hash_map::{Entry, HashMap};
use std::fmt;

use super::{Filter, FilterError};
use crate::level::Level;

const MAX_DIRECTIVES: usize = Filter::MAX_DIRECTIVES;
const MAX_TARGET_LEN: usize = Filter::MAX_TARGET_LEN;

/// A level threshold: a record at `level` passes if `level as u8 >= min`;
/// [`OFF`] lets nothing through.
pub(crate) type Min = u8;

/// The threshold that lets nothing through.
pub(crate) const OFF: Min = 5;

/// One parsed directive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Directive {
    /// `None` for a bare level.
    pub(crate) target: Option<Box<str>>,
    pub(crate) min: Min,
}

/// A sorted directive list (see the module docs for the invariant).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Directives {
    list: Vec<Directive>,
    /// `list[i]`'s target head (see [`head`]) and the mask of the bytes
    /// it covers: rejects a directive without a `memcmp` call (which
    /// dominated a disabled `log::debug!`).
    heads: Vec<(u64, u64)>,
}

/// The first eight bytes of `s` as a little-endian word, zero-padded.
#[inline]
fn head(s: &[u8]) -> u64 {
    if let Some(first) = s.first_chunk::<8>() {
        return u64::from_le_bytes(*first);
    }
    // Shorter than a word: byte by byte (a `copy_from_slice` of a
    // variable length is a `memmove` call).
    s.iter()
        .enumerate()
        .fold(0, |word, (i, &b)| word | u64::from(b) << (8 * i))
}

/// The mask of the first `min(len, 8)` bytes of a [`head`].
fn head_mask(len: usize) -> u64 {
    match len {
        0 => 0,
        1..=7 => (1u64 << (8 * len)) - 1,
        _ => u64::MAX,
    }
}

fn parse_level(s: &str) -> Option<Min> {
    if s.eq_ignore_ascii_case("off") || s == "0" {
        return Some(OFF);
    }
    let level = match s {
        "1" => Level::Error,
        "2" => Level::Warn,
        "3" => Level::Info,
        "4" => Level::Debug,
        "5" => Level::Trace,
        _ => Level::ALL
            .into_iter()
            .find(|l| l.as_str().eq_ignore_ascii_case(s))?,
    };
    Some(level as u8)
}

fn min_name(min: Min) -> &'static str {
    match Level::from_u8(min) {
        Some(Level::Trace) => "trace",
        Some(Level::Debug) => "debug",
        Some(Level::Info) => "info",
        Some(Level::Warn) => "warn",
        Some(Level::Error) => "error",
        None => "off",
    }
}

fn invalid(directive: &str, reason: impl Into<String>) -> FilterError {
    FilterError::Directive {
        directive: directive.to_owned(),
        reason: reason.into(),
    }
}

impl Directive {
    /// Parses one directive (already trimmed, not empty).
    pub(crate) fn parse(s: &str) -> Result<Directive, FilterError> {
        // Before anything that copies the directive into an error. (A bare
        // level is at most five bytes: never too long.)
        let target = s.split_once('=').map_or(s, |(target, _)| target);
        if target.len() > MAX_TARGET_LEN {
            return Err(FilterError::TargetTooLong {
                start: target.chars().take(32).collect(),
                len: target.len(),
                max: MAX_TARGET_LEN,
            });
        }
        if s.contains(['[', ']', '{', '}']) {
            return Err(invalid(
                s,
                "span and field filters are not supported (tracing users: use \
                 tracing_subscriber::EnvFilter)",
            ));
        }
        if let Some(c) = s.chars().find(|c| c.is_whitespace() || c.is_control()) {
            return Err(invalid(s, format!("unexpected character {c:?}")));
        }
        match s.split_once('=') {
            Some((target, level)) => {
                if target.is_empty() {
                    return Err(invalid(s, "missing target before `=`"));
                }
                let min = parse_level(level).ok_or_else(|| {
                    invalid(
                        s,
                        format!(
                            "unknown level {level:?} (expected trace, debug, info, warn, \
                             error, off or 0-5)"
                        ),
                    )
                })?;
                if level.contains('=') {
                    return Err(invalid(s, "more than one `=`"));
                }
                Ok(Directive {
                    target: Some(target.into()),
                    min,
                })
            }
            None => Ok(match parse_level(s) {
                Some(min) => Directive { target: None, min },
                None => Directive {
                    target: Some(s.into()),
                    min: Level::Trace as u8,
                },
            }),
        }
    }

    /// Whether this directive applies to `target`.
    #[inline]
    pub(crate) fn matches(&self, target: &str) -> bool {
        match &self.target {
            None => true,
            Some(t) => {
                target.starts_with(&**t)
                    && (target.len() == t.len() || target[t.len()..].starts_with("::"))
            }
        }
    }
}

impl fmt::Display for Directive {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.target {
            Some(t) => write!(f, "{t}={}", min_name(self.min)),
            None => f.write_str(min_name(self.min)),
        }
    }
}

impl Directives {
    /// Parses a comma-separated list; empty items are skipped. With
    /// `lossy`, invalid directives are left out and returned, and a list
    /// past [`MAX_DIRECTIVES`] is cut there (with one error); otherwise
    /// the first error is returned.
    ///
    /// O(n log n) in the number of directives: each is parsed once, then
    /// [`Directives::new`] sorts them once.
    ///
    /// [`MAX_DIRECTIVES`]: super::Filter::MAX_DIRECTIVES
    pub(crate) fn parse(
        s: &str,
        lossy: bool,
    ) -> Result<(Directives, Vec<FilterError>), FilterError> {
        let mut list = Vec::new();
        let mut errors = Vec::new();
        let items = s.split(',').map(str::trim).filter(|d| !d.is_empty());
        for (n, item) in items.enumerate() {
            let parsed = if n == MAX_DIRECTIVES {
                Err(FilterError::TooManyDirectives {
                    max: MAX_DIRECTIVES,
                })
            } else {
                Directive::parse(item)
            };
            match parsed {
                Ok(d) => list.push(d),
                Err(e) if !lossy => return Err(e),
                Err(e @ FilterError::TooManyDirectives { .. }) => {
                    errors.push(e);
                    break;
                }
                Err(e) => errors.push(e),
            }
        }
        Ok((Directives::new(list), errors))
    }

    /// The directives of `list`, given in the order written: of two for
    /// one target the later replaces the earlier, in its place. Sorted
    /// once, stably, by target length (see the module docs): directives
    /// equally specific keep the order of their first appearance.
    pub(crate) fn new(list: Vec<Directive>) -> Directives {
        let mut kept: Vec<Directive> = Vec::with_capacity(list.len());
        let mut place: HashMap<Option<Box<str>>, usize> = HashMap::with_capacity(list.len());
        for d in list {
            match place.entry(d.target.clone()) {
                Entry::Occupied(at) => kept[*at.get()] = d,
                Entry::Vacant(at) => {
                    at.insert(kept.len());
                    kept.push(d);
                }
            }
        }
        kept.sort_by_key(|d| std::cmp::Reverse(d.target.as_ref().map(|t| t.len())));
        let heads = kept
            .iter()
            .map(|d| match &d.target {
                Some(t) => (head(t.as_bytes()), head_mask(t.len())),
                None => (0, 0),
            })
            .collect();
        Directives { list: kept, heads }
    }

    /// Whether a record at `level` from `target` passes. No allocation;
    /// one string prefix test per directive until the first match.
    #[inline]
    pub(crate) fn enabled(&self, target: &str, level: Level) -> bool {
        self.min_for(target)
            .is_some_and(|min| level as u8 >= min && min != OFF)
    }

    /// The threshold of the most specific directive for `target`, if any.
    #[inline]
    pub(crate) fn min_for(&self, target: &str) -> Option<Min> {
        let word = head(target.as_bytes());
        self.list
            .iter()
            .zip(&self.heads)
            .find(|(d, &(h, mask))| word & mask == h && d.matches(target))
            .map(|(d, _)| d.min)
    }

    /// The threshold of the bare level (for targets no directive names),
    /// if there is one.
    pub(crate) fn default_min(&self) -> Option<Min> {
        self.list.iter().find(|d| d.target.is_none()).map(|d| d.min)
    }

    /// The most verbose level any directive lets through ([`OFF`] if none).
    pub(crate) fn most_verbose(&self) -> Min {
        self.list.iter().map(|d| d.min).min().unwrap_or(OFF)
    }

    pub(crate) fn iter(&self) -> impl Iterator<Item = &Directive> {
        self.list.iter()
    }
}
