//! Rate limits and sampling by target and level ([`NowaitLayer::with_limits`]),
//! kept per call site.
//!
//! 1. [`Limits::parse`] reads the directives once, when the layer is built,
//!    with nowait-core's parser (`__private::parse_limit_directives`): the
//!    one total parser of this grammar, fuzzed there (`limit_directives`)
//!    and capped as the filter's directives are (4096 directives, a target
//!    of 1024 bytes, a directive of 1088), its errors escaped.
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

use nowait_core::__private::{
    parse_limit_directives, LimitDirective as Directive, LimitDirectiveError, SiteLimit,
};
use nowait_core::event::SiteKey;
use nowait_core::Logger;
use tracing_core::Metadata;

/// Slots in a layer's table (a power of two).
const SLOTS: usize = 4096;
/// Slots looked at from a key's hash.
const PROBES: usize = 8;

type Slot = OnceLock<(u64, Option<&'static SiteLimit>)>;

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
///
/// A list of more than 4096 directives, a target longer than 1024 bytes
/// or a directive longer than 1088 is refused as well; the message quotes
/// the input with its control characters escaped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LimitsError(LimitDirectiveError);

impl fmt::Display for LimitsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
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
        let directives = parse_limit_directives(spec).map_err(LimitsError)?;
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
        let limit: &'static SiteLimit = Box::leak(Box::new(directive.site_limit(file, line)));
        nowait_core::__private::watch_limit(limit, &self.logger);
        Some(limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nowait_core::__private::{MAX_LIMIT_DIRECTIVES, MAX_LIMIT_TARGET_LEN};

    fn logger() -> (Logger, nowait_core::Guard) {
        nowait_core::Builder::new()
            .sink(nowait_core::Sink::writer(std::io::sink()))
            .build()
            .unwrap()
    }

    /// The layer's directives are capped as the filter's are: a list past
    /// the count, or a target past the length, is refused.
    #[test]
    #[cfg_attr(
        miri,
        ignore = "parses 4096 directives three times: minutes under Miri, and no unsafe code or atomics are involved"
    )]
    fn directive_lists_are_capped() {
        let (logger, _guard) = logger();
        let at_cap = vec!["a=1/s"; MAX_LIMIT_DIRECTIVES].join(",");
        assert!(Limits::parse(&at_cap, logger.clone()).is_ok());
        let e = Limits::parse(&format!("{at_cap},b=1/s"), logger.clone()).unwrap_err();
        assert!(e.to_string().contains("too many"), "{e}");
        let long = format!("{}=1/s", "t".repeat(MAX_LIMIT_TARGET_LEN + 1));
        let e = Limits::parse(&long, logger).unwrap_err().to_string();
        assert!(e.contains("target") && e.len() < 200, "{e}");
    }

    /// An error quotes the directive with its control characters escaped.
    #[test]
    fn errors_are_escaped() {
        let (logger, _guard) = logger();
        let e = Limits::parse("db\x1b[2J\n=ten/s", logger)
            .unwrap_err()
            .to_string();
        assert!(e.contains(r"db\x1b[2J\n=ten/s"), "{e}");
    }
}
