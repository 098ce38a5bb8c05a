//! Per-sink filters (`Sink::filter`) and their union, the one filter the
//! request path asks.
//!
//! A sink takes a record when the record is at or above the sink's level
//! and the sink's filter (if it has one) lets its target through; a sink
//! with a backtrace also keeps what it does not take down to the
//! backtrace's lowest level. The writer thread applies each sink's own
//! filter. The request path asks only whether *some* sink wants a record:
//! the union of the sinks' rules, itself a directive list.
//!
//! # The union is a directive list
//!
//! For a target `t`, sink `i` wants levels from a threshold `m_i(t)`: the
//! sink's level raised to its filter's threshold for `t` (off where no
//! directive matches), lowered to its backtrace's lowest level. The union
//! wants `min_i m_i(t)`. It is written as directives: one per target named
//! by any sink's filter, with `min_i m_i(T)` evaluated at that target `T`
//! itself, plus a bare level, the least of the sinks' thresholds for a
//! target none of their directives names. This is exact: for any `t`, the
//! union's most specific directive matching `t` is the longest named target
//! `T*` that is a `::`-prefix of `t`; every directive of any sink that
//! matches `t` is a prefix of `t` no longer than `T*`, so it matches `T*`,
//! and each sink's most specific match for `t` is its most specific match
//! for `T*`: `m_i(T*) = m_i(t)`.
//!
//! # Consistency
//!
//! Changes run under [`Routes`]' lock and bump [`GENERATION`] (release)
//! after the new rules are in place. The writer compares the generation
//! (acquire) before each record it routes, so a record pushed after a
//! change returned is routed by the new rules. The request path's cache
//! ([`Routes::enabled`]) is refreshed on the first call after a change
//! with a `try_lock`; a call that finds the lock busy answers `true`
//! (the record is pushed and the writer decides), never waits.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use super::directive::{Directive, Directives, Min, OFF};
use super::Filter;
use crate::level::Level;

/// Bumped after every change of any logger's routes.
static GENERATION: AtomicU64 = AtomicU64::new(1);
/// Numbers the [`Routes`] of the process, for the request path's cache.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// What one sink takes.
#[derive(Clone, Debug)]
pub(crate) struct Rule {
    /// The sink's target directives (`None`: every target).
    pub(crate) filter: Option<Arc<Filter>>,
    /// The sink's level.
    pub(crate) level: Level,
    /// Its backtrace's lowest level, if it has one.
    pub(crate) lowest: Option<Level>,
}

impl Rule {
    /// The sink's threshold for `target`, where `filter_min` is its
    /// filter's (`None`: no directive matches).
    fn threshold(&self, filter_min: Option<Min>) -> Min {
        let taken = match &self.filter {
            None => self.level as u8,
            Some(_) => filter_min.unwrap_or(OFF).max(self.level as u8),
        };
        match self.lowest {
            Some(lowest) => taken.min(lowest as u8),
            None => taken,
        }
    }
}

struct Inner {
    rules: Vec<Rule>,
    /// The union, `None` while no sink has a filter (the sinks' levels
    /// alone then decide: `Logger::min_level`).
    union: Option<Arc<Filter>>,
    /// Run after every change (the `tracing` layer rebuilds `tracing`'s
    /// interest cache).
    hooks: Vec<fn()>,
}

/// One logger's per-sink filters and their union.
pub(crate) struct Routes {
    id: u64,
    /// Whether some sink has a filter (the union is then not just levels).
    filtered: AtomicBool,
    inner: Mutex<Inner>,
}

impl std::fmt::Debug for Routes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Routes")
            .field("id", &self.id)
            .field("filtered", &self.filtered)
            .finish_non_exhaustive()
    }
}

thread_local! {
    /// This thread's copy of one logger's union: the logger's id, the
    /// generation it is of, the union.
    static CACHE: RefCell<(u64, u64, Option<Arc<Filter>>)> = const { RefCell::new((0, 0, None)) };
}

/// The current generation of every logger's routes (the writer compares
/// it before each record).
#[inline]
pub(crate) fn generation() -> u64 {
    GENERATION.load(Ordering::Acquire)
}

impl Routes {
    pub(crate) fn new(rules: Vec<Rule>) -> Routes {
        let union = union(&rules).map(Arc::new);
        Routes {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            filtered: AtomicBool::new(union.is_some()),
            inner: Mutex::new(Inner {
                rules,
                union,
                hooks: Vec::new(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Nothing user-supplied runs under the lock: its data is whole.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The number of sinks.
    pub(crate) fn len(&self) -> usize {
        self.lock().rules.len()
    }

    /// Sink `index`'s filter.
    pub(crate) fn filter(&self, index: usize) -> Option<Arc<Filter>> {
        self.lock().rules.get(index)?.filter.clone()
    }

    /// The union, `None` when no sink has a filter.
    pub(crate) fn union(&self) -> Option<Arc<Filter>> {
        self.lock().union.clone()
    }

    /// Replaces sink `index`'s filter (`None`: every target) and the
    /// union; then the hooks run. Returns `false` if there is no such sink.
    /// The caller updates the macros' interest (the process filter's
    /// state) after this returns.
    pub(crate) fn set(&self, index: usize, filter: Option<Filter>) -> bool {
        let hooks = {
            let mut inner = self.lock();
            let Some(rule) = inner.rules.get_mut(index) else {
                return false;
            };
            rule.filter = filter.map(Arc::new);
            inner.union = union(&inner.rules).map(Arc::new);
            self.filtered
                .store(inner.union.is_some(), Ordering::Relaxed);
            GENERATION.fetch_add(1, Ordering::Release);
            inner.hooks.clone()
        };
        for hook in hooks {
            hook();
        }
        true
    }

    /// Registers `hook` to run after every change.
    pub(crate) fn on_change(&self, hook: fn()) {
        let mut inner = self.lock();
        if !inner.hooks.contains(&hook) {
            inner.hooks.push(hook);
        }
    }

    /// Whether some sink's filter lets `target` through at `level` (the
    /// sinks' levels are the caller's: `Logger::min_level`). No lock and
    /// no allocation, except once per thread after a change (a
    /// `try_lock`: if it is busy, `true`).
    #[inline]
    pub(crate) fn enabled(&self, target: &str, level: Level) -> bool {
        if !self.filtered.load(Ordering::Relaxed) {
            return true;
        }
        let generation = generation();
        CACHE
            .try_with(|cache| {
                let Ok(mut cache) = cache.try_borrow_mut() else {
                    return true;
                };
                if cache.0 != self.id || cache.1 != generation {
                    let Ok(inner) = self.inner.try_lock() else {
                        return true;
                    };
                    *cache = (self.id, generation, inner.union.clone());
                }
                cache.2.as_ref().map_or(true, |u| u.enabled(target, level))
            })
            .unwrap_or(true)
    }
}

/// The union of `rules` (see the module docs), or `None` if no rule has a
/// filter.
pub(crate) fn union(rules: &[Rule]) -> Option<Filter> {
    if rules.iter().all(|r| r.filter.is_none()) {
        return None;
    }
    let mut targets: Vec<&str> = rules
        .iter()
        .filter_map(|r| r.filter.as_deref())
        .flat_map(|f| f.directives.iter().filter_map(|d| d.target.as_deref()))
        .collect();
    targets.sort_unstable();
    targets.dedup();
    let at = |target: Option<&str>| -> Min {
        rules
            .iter()
            .map(|r| {
                let filter_min = r.filter.as_deref().and_then(|f| match target {
                    Some(t) => f.directives.min_for(t),
                    None => f.directives.default_min(),
                });
                r.threshold(filter_min)
            })
            .min()
            .unwrap_or(OFF)
    };
    let mut list: Vec<Directive> = targets
        .iter()
        .map(|t| Directive {
            target: Some((*t).into()),
            min: at(Some(t)),
        })
        .collect();
    list.push(Directive {
        target: None,
        min: at(None),
    });
    Some(Filter {
        directives: Directives::new(list),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(filter: Option<&str>, level: Level, lowest: Option<Level>) -> Rule {
        Rule {
            filter: filter.map(|f| Arc::new(Filter::parse(f).unwrap())),
            level,
            lowest,
        }
    }

    /// Whether some rule takes (or keeps) `target` at `level`, directly.
    fn wanted(rules: &[Rule], target: &str, level: Level) -> bool {
        rules.iter().any(|r| {
            let taken =
                level >= r.level && r.filter.as_ref().map_or(true, |f| f.enabled(target, level));
            taken || r.lowest.is_some_and(|l| level >= l)
        })
    }

    #[test]
    fn the_union_wants_exactly_what_some_sink_wants() {
        let sets: Vec<Vec<Rule>> = vec![
            vec![
                rule(Some("my_app=debug,hyper=warn"), Level::Trace, None),
                rule(Some("hyper::proto=trace"), Level::Info, None),
            ],
            vec![
                rule(Some("warn,db=debug"), Level::Trace, None),
                rule(None, Level::Error, None),
            ],
            vec![
                rule(Some("off,a::b=info"), Level::Trace, Some(Level::Debug)),
                rule(Some("a=error,a::b::c=trace"), Level::Warn, None),
            ],
            vec![rule(Some("x=off"), Level::Info, None)],
        ];
        let targets = [
            "",
            "my_app",
            "my_app::db",
            "my_appx",
            "hyper",
            "hyper::proto",
            "hyper::proto::h1",
            "db",
            "db::pool",
            "other",
            "a",
            "a::b",
            "a::b::c",
            "a::b::c::d",
            "a::x",
            "x",
            "x::y",
        ];
        for rules in &sets {
            let union = union(rules).unwrap();
            for t in targets {
                for level in Level::ALL {
                    assert_eq!(
                        union.enabled(t, level),
                        wanted(rules, t, level),
                        "{t} at {level} with union {union}"
                    );
                }
            }
        }
    }

    #[test]
    fn without_filters_there_is_no_union() {
        assert!(union(&[rule(None, Level::Info, None)]).is_none());
        let routes = Routes::new(vec![rule(None, Level::Info, None)]);
        assert!(routes.enabled("any", Level::Trace));
    }

    #[test]
    fn a_change_reaches_the_request_paths_cache() {
        let routes = Routes::new(vec![rule(Some("app=info"), Level::Trace, None)]);
        assert!(routes.enabled("app", Level::Info));
        assert!(!routes.enabled("other", Level::Error));
        assert!(routes.set(0, Some(Filter::parse("other=warn").unwrap())));
        assert!(!routes.enabled("app", Level::Info));
        assert!(routes.enabled("other", Level::Error));
        assert!(!routes.set(1, None));
        assert!(routes.set(0, None));
        assert!(routes.enabled("app", Level::Trace));
    }
}
