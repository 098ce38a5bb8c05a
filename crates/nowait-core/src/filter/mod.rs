//! Filtering by target and level: `RUST_LOG`-style directives for nowait's
//! macros and the `log` front end, installed once for the process and
//! reloadable at run time. How a call is decided, and the cache's
//! consistency, are in [`Filter`]'s documentation.

mod directive;
pub(crate) mod routes;
#[cfg(test)]
mod tests;

use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use directive::{Directive, Directives, OFF};

use crate::level::Level;
pub use crate::limit::set_sample_seed;

/// Levels below this are compiled out of the macros: set at build time
/// with the environment variable `NOWAIT_STATIC_MAX_LEVEL` (`trace`,
/// `debug`, `info`, `warn` or `error`; default `trace`: everything is
/// compiled in). An environment variable rather than cargo features, so
/// that `--all-features` builds keep every level.
///
/// A macro call below this level expands to nothing that runs: its
/// arguments are not evaluated, and it costs nothing, not even the
/// call site's relaxed load. The `tracing` and `log` front ends have their
/// own compile-time switches (`tracing`'s and `log`'s `max_level_*`
/// features); this one is for nowait's macros only.
///
/// # Examples
///
/// ```
/// use nowait_core::filter::STATIC_MAX_LEVEL;
/// use nowait_core::Level;
///
/// // Trace unless the build set `NOWAIT_STATIC_MAX_LEVEL`.
/// assert!(STATIC_MAX_LEVEL <= Level::Error);
/// let debug_compiled_in = STATIC_MAX_LEVEL <= Level::Debug;
/// # let _ = debug_compiled_in;
/// ```
pub const STATIC_MAX_LEVEL: Level = match option_env!("NOWAIT_STATIC_MAX_LEVEL") {
    Some(s) => parse_level(s.as_bytes()),
    None => Level::Trace,
};

const fn parse_level(s: &[u8]) -> Level {
    if eq_ignore_case(s, b"trace") {
        Level::Trace
    } else if eq_ignore_case(s, b"debug") {
        Level::Debug
    } else if eq_ignore_case(s, b"info") {
        Level::Info
    } else if eq_ignore_case(s, b"warn") {
        Level::Warn
    } else if eq_ignore_case(s, b"error") {
        Level::Error
    } else {
        panic!("NOWAIT_STATIC_MAX_LEVEL must be trace, debug, info, warn or error")
    }
}

const fn eq_ignore_case(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i].to_ascii_lowercase() != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// A set of `RUST_LOG`-style directives: which targets log at which
/// levels.
///
/// `info,hyper=warn,my_app::db=debug` lets INFO and above through
/// everywhere, only WARN and above from `hyper` and its submodules, and
/// DEBUG and above from `my_app::db`. A directive is `LEVEL` (the
/// default), `TARGET=LEVEL`, or a bare `TARGET` (meaning `TARGET=trace`);
/// levels are `trace`, `debug`, `info`, `warn`, `error` and `off` (any
/// case) or `0`-`5` as in `tracing` (`0` is off). A target matches itself
/// and the targets below it on a `::` boundary (`hyper` matches
/// `hyper::proto`, not `hyperlocal`); the most specific directive wins; a
/// target no directive matches is off. A list holds at most
/// [`MAX_DIRECTIVES`](Filter::MAX_DIRECTIVES) directives, each target at
/// most [`MAX_TARGET_LEN`](Filter::MAX_TARGET_LEN) bytes long.
///
/// Install it for the process with [`set_filter`]; change it later with a
/// [`FilterHandle`]. `tracing` users filter with
/// `tracing_subscriber::EnvFilter` instead (see `nowait-tracing`).
///
/// # How a call is decided
///
/// 1. **Macros** ([`info!`](crate::info!) and friends). Each call site is a
///    `static` holding its cached interest (unknown, never, always) in an
///    atomic. A call loads it (relaxed) and branches: a disabled call costs
///    one load and one compare. The first call of a site registers it here
///    (under the filter's lock) and computes its interest; every change of
///    the inputs walks the registered sites and recomputes theirs, as
///    `tracing-core`'s `rebuild_interest_cache` does. The inputs: the
///    process filter, [`set_max_level`], and the global logger's
///    `min_level` (no global logger: nothing
///    is enabled).
/// 2. **`log`** records have no `'static` call site: the front end asks
///    the process filter with the target string. The directives are evaluated on
///    it (a few prefix compares, no allocation), with the filter taken from
///    a per-thread cache that is refreshed only after a reload (one acquire
///    load of the filter's generation per call, a plain load on x86; the
///    refresh `try_lock`s, so the call never waits for a lock). The `log` crate's own global maximum level,
///    which its macros test first, is kept at the filter's most verbose
///    level by the front end through a hook the filter runs on every change.
///
/// The interest cache's consistency: registration and every rebuild run
/// under one lock, so a site registered during a reload sees either the
/// old or the new inputs and is then rebuilt with the new ones; each site's
/// atomic is stored with the answer for the latest inputs before the lock
/// is released.
///
/// Until a filter is installed, every target passes (the macros then obey
/// only [`set_max_level`] and the sinks' levels); `nowait_log::init`
/// installs one from `RUST_LOG` (default `info`) if none is.
///
/// # Examples
///
/// ```
/// use nowait_core::Level;
/// use nowait_core::filter::Filter;
///
/// let filter: Filter = "info,hyper=warn,my_app::db=debug".parse()?;
/// assert!(filter.enabled("my_app::http", Level::Info));
/// assert!(!filter.enabled("my_app::http", Level::Debug));
/// assert!(filter.enabled("my_app::db::pool", Level::Debug));
/// assert!(!filter.enabled("hyper::proto", Level::Info));
/// assert_eq!(filter.max_level(), Some(Level::Debug));
/// # Ok::<(), nowait_core::filter::FilterError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    directives: Directives,
}

/// Why a filter could not be made.
///
/// # Examples
///
/// ```
/// let err = nowait_core::filter::Filter::parse("info,hyper=loud").unwrap_err();
/// assert!(err.to_string().contains("hyper=loud"));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FilterError {
    /// A directive is not valid.
    #[non_exhaustive]
    Directive {
        /// The directive, as written.
        directive: String,
        /// What is wrong with it.
        reason: String,
    },
    /// The environment variable is set but is not valid Unicode.
    #[non_exhaustive]
    NotUnicode {
        /// The variable's name.
        var: String,
    },
    /// The list has more than [`Filter::MAX_DIRECTIVES`] directives.
    #[non_exhaustive]
    TooManyDirectives {
        /// The most a filter may have ([`Filter::MAX_DIRECTIVES`]).
        max: usize,
    },
    /// A directive's target is longer than [`Filter::MAX_TARGET_LEN`]
    /// bytes.
    #[non_exhaustive]
    TargetTooLong {
        /// The target's first characters (at most 32).
        start: String,
        /// Its length in bytes.
        len: usize,
        /// The longest a target may be ([`Filter::MAX_TARGET_LEN`]).
        max: usize,
    },
}

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FilterError::Directive { directive, reason } => {
                write!(f, "invalid filter directive {directive:?}: {reason}")
            }
            FilterError::NotUnicode { var } => {
                write!(f, "environment variable {var} is not valid Unicode")
            }
            FilterError::TooManyDirectives { max } => {
                write!(f, "too many filter directives (at most {max})")
            }
            FilterError::TargetTooLong { start, len, max } => write!(
                f,
                "filter directive target starting {start:?} is {len} bytes long (at most {max})"
            ),
        }
    }
}

impl std::error::Error for FilterError {}

/// The variable [`Filter::from_env`] reads.
const ENV: &str = "RUST_LOG";
/// What [`Filter::from_env`] uses when the variable is unset or empty.
const ENV_DEFAULT: &str = "info";

impl Filter {
    /// The most directives a list may have (empty items do not count):
    /// far more than a `RUST_LOG` holds, few enough that a filter from an
    /// admin endpoint or a configuration file others can write is parsed
    /// in milliseconds. A longer list is refused
    /// ([`FilterError::TooManyDirectives`]) by every way of parsing one,
    /// [`FilterHandle::reload`] included.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::filter::{Filter, FilterError};
    ///
    /// let list = vec!["app=debug"; Filter::MAX_DIRECTIVES + 1].join(",");
    /// assert!(matches!(Filter::parse(&list), Err(FilterError::TooManyDirectives { .. })));
    /// ```
    pub const MAX_DIRECTIVES: usize = 4096;

    /// The longest target a directive may name, in bytes: longer than any
    /// module path. A longer one is refused
    /// ([`FilterError::TargetTooLong`]), and the error holds only its
    /// start. (The rest of a directive is `=` and a level: a filter's
    /// [`Display`](std::fmt::Display) form parses back.)
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::filter::{Filter, FilterError};
    ///
    /// let long = format!("{}=debug", "a".repeat(Filter::MAX_TARGET_LEN + 1));
    /// assert!(matches!(Filter::parse(&long), Err(FilterError::TargetTooLong { .. })));
    /// ```
    pub const MAX_TARGET_LEN: usize = 1024;

    /// Parses a comma-separated directive list (see [`Filter`]). Empty
    /// items are ignored; an empty list enables nothing. Parsing takes
    /// O(n log n) time in the number of directives.
    ///
    /// # Errors
    ///
    /// [`FilterError::Directive`] naming the first invalid directive,
    /// [`FilterError::TooManyDirectives`] for more than
    /// [`MAX_DIRECTIVES`](Filter::MAX_DIRECTIVES),
    /// [`FilterError::TargetTooLong`] for a target longer than
    /// [`MAX_TARGET_LEN`](Filter::MAX_TARGET_LEN).
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::Level;
    /// use nowait_core::filter::Filter;
    ///
    /// let filter = Filter::parse("warn,app=debug")?;
    /// assert!(filter.enabled("app::db", Level::Debug));
    /// assert!(Filter::parse("app=verbose").is_err());
    /// # Ok::<(), nowait_core::filter::FilterError>(())
    /// ```
    pub fn parse(directives: &str) -> Result<Filter, FilterError> {
        let (directives, _) = Directives::parse(directives, false)?;
        Ok(Filter { directives })
    }

    /// Parses like [`parse`](Filter::parse) but leaves invalid directives
    /// out, and returns them as errors beside the filter made of the rest.
    /// Of a list longer than [`MAX_DIRECTIVES`](Filter::MAX_DIRECTIVES),
    /// the first `MAX_DIRECTIVES` are read and the rest are left out, with
    /// one [`FilterError::TooManyDirectives`].
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::Level;
    /// use nowait_core::filter::Filter;
    ///
    /// let (filter, errors) = Filter::parse_lossy("info,db=loud");
    /// assert!(filter.enabled("db", Level::Info));
    /// assert_eq!(errors.len(), 1);
    /// ```
    pub fn parse_lossy(directives: &str) -> (Filter, Vec<FilterError>) {
        match Directives::parse(directives, true) {
            Ok((directives, errors)) => (Filter { directives }, errors),
            // Unreachable with `lossy`; keep the error rather than panic.
            Err(e) => (Filter::default(), vec![e]),
        }
    }

    /// A filter that lets `level` and above through for every target.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::Level;
    /// use nowait_core::filter::Filter;
    ///
    /// assert!(!Filter::level(Level::Warn).enabled("any", Level::Info));
    /// ```
    pub fn level(level: Level) -> Filter {
        let directives = Directives::new(vec![Directive {
            target: None,
            min: level as u8,
        }]);
        Filter { directives }
    }

    /// The filter in the `RUST_LOG` environment variable, or `info` when
    /// it is unset or empty.
    ///
    /// # Errors
    ///
    /// [`FilterError::Directive`] for an invalid directive (the caller
    /// chooses: fail, or fall back to [`from_env_lossy`](Filter::from_env_lossy)),
    /// [`FilterError::NotUnicode`] if the variable is not valid Unicode.
    ///
    /// # Examples
    ///
    /// ```
    /// let filter = nowait_core::filter::Filter::from_env().unwrap_or_else(|e| {
    ///     eprintln!("{e}; using RUST_LOG's valid directives only");
    ///     nowait_core::filter::Filter::from_env_lossy()
    /// });
    /// # let _ = filter;
    /// ```
    pub fn from_env() -> Result<Filter, FilterError> {
        match std::env::var(ENV) {
            Ok(v) if !v.trim().is_empty() => Filter::parse(&v),
            Ok(_) | Err(std::env::VarError::NotPresent) => Filter::parse(ENV_DEFAULT),
            Err(std::env::VarError::NotUnicode(_)) => {
                Err(FilterError::NotUnicode { var: ENV.into() })
            }
        }
    }

    /// The lenient [`from_env`](Filter::from_env): invalid directives in
    /// `RUST_LOG` are ignored (the valid ones apply), and a variable that
    /// is not valid Unicode counts as unset. Nothing is reported: call
    /// `from_env` first to learn what was wrong.
    ///
    /// # Examples
    ///
    /// ```
    /// let _filter = nowait_core::filter::Filter::from_env_lossy();
    /// ```
    pub fn from_env_lossy() -> Filter {
        match std::env::var(ENV) {
            Ok(v) if !v.trim().is_empty() => Filter::parse_lossy(&v).0,
            _ => Filter::level(Level::Info),
        }
    }

    /// Whether a record at `level` from `target` passes. No allocation:
    /// a prefix compare per directive, most specific first, until one
    /// matches.
    ///
    /// # Examples
    ///
    /// ```
    /// let filter = nowait_core::filter::Filter::parse("off,app")?;
    /// assert!(filter.enabled("app", nowait_core::Level::Trace));
    /// assert!(!filter.enabled("other", nowait_core::Level::Error));
    /// # Ok::<(), nowait_core::filter::FilterError>(())
    /// ```
    #[inline]
    pub fn enabled(&self, target: &str, level: Level) -> bool {
        self.directives.enabled(target, level)
    }

    /// The most verbose level any directive lets through, or `None` if
    /// none lets anything through. Front ends use it as a global cut-off
    /// (the `log` front end sets `log::max_level` to it).
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::Level;
    /// use nowait_core::filter::Filter;
    ///
    /// assert_eq!(Filter::parse("warn,db=trace")?.max_level(), Some(Level::Trace));
    /// assert_eq!(Filter::parse("off")?.max_level(), None);
    /// # Ok::<(), nowait_core::filter::FilterError>(())
    /// ```
    pub fn max_level(&self) -> Option<Level> {
        Level::from_u8(self.directives.most_verbose())
    }
}

impl FromStr for Filter {
    type Err = FilterError;

    fn from_str(s: &str) -> Result<Filter, FilterError> {
        Filter::parse(s)
    }
}

/// The directives, most specific first (the form they are matched in).
impl fmt::Display for Filter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.directives.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}

// === process-wide state ===

/// What the interest of a macro call site depends on, and the sites.
struct State {
    filter: Option<Arc<Filter>>,
    /// The global logger's per-sink filters: their union is one more
    /// input of the macros' interest.
    routes: Option<Arc<routes::Routes>>,
    sites: Vec<&'static Site>,
    hooks: Vec<fn(Option<&Filter>)>,
}

/// Registration, rebuilds and filter changes. Never taken on a hot path.
static STATE: Mutex<State> = Mutex::new(State {
    filter: None,
    routes: None,
    sites: Vec::new(),
    hooks: Vec::new(),
});

/// Bumped (under [`STATE`]'s lock) each time the filter changes; the
/// `log` front end's per-thread cache compares it.
static GENERATION: AtomicU64 = AtomicU64::new(0);
/// The least severe level the macros emit ([`set_max_level`]).
static WANTED: AtomicU8 = AtomicU8::new(Level::Trace as u8);
/// The global logger's `min_level`, or [`OFF`] before there is one.
static LOGGER_MIN: AtomicU8 = AtomicU8::new(OFF);
/// The filter's most verbose level ([`OFF`]: none; `0`, TRACE, before any
/// filter is installed): the answer of [`enabled`] when it can reach
/// neither its thread's cache nor the lock.
static MOST_VERBOSE: AtomicU8 = AtomicU8::new(0);

fn state() -> MutexGuard<'static, State> {
    // A panic while the lock was held (in a hook) leaves consistent data.
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Installs `filter` as the process's filter for nowait's macros and the
/// `log` front end, replacing any previous one: every registered call
/// site's cached interest is recomputed before this returns, and the
/// front ends' hooks run (the `log` front end updates `log::max_level`).
///
/// # Examples
///
/// ```
/// use nowait_core::Level;
/// use nowait_core::filter::Filter;
///
/// nowait_core::filter::set_filter(Filter::parse("info,my_app::db=debug").unwrap());
/// let current = nowait_core::filter::FilterHandle::new().current().unwrap();
/// assert!(current.enabled("my_app::db", Level::Debug));
/// assert!(!current.enabled("my_app::http", Level::Debug));
/// ```
pub fn set_filter(filter: Filter) {
    install(&mut state(), filter);
}

/// Installs `filter` under the lock: the generation, the fallback level,
/// every site's interest, then the hooks.
fn install(st: &mut State, filter: Filter) {
    MOST_VERBOSE.store(filter.directives.most_verbose(), Ordering::Relaxed);
    st.filter = Some(Arc::new(filter));
    GENERATION.fetch_add(1, Ordering::Release);
    rebuild(st);
    for hook in st.hooks.clone() {
        hook(st.filter.as_deref());
    }
}

/// The process's filter, if one was installed.
///
/// # Examples
///
/// ```
/// nowait_core::filter::set_filter(nowait_core::filter::Filter::parse("warn").unwrap());
/// assert_eq!(nowait_core::__private::filter::current().unwrap().to_string(), "warn");
/// ```
pub(crate) fn current() -> Option<Filter> {
    state().filter.as_deref().cloned()
}

/// Installs `filter` unless one is installed already. Returns whether it
/// was installed. (What `nowait_log::init` uses for its default.)
///
/// # Examples
///
/// ```
/// use nowait_core::__private::filter;
/// use nowait_core::filter::Filter;
///
/// filter::install_default(Filter::parse("info").unwrap());
/// assert!(!filter::install_default(Filter::parse("trace").unwrap()));
/// ```
pub(crate) fn install_default(filter: Filter) -> bool {
    let mut st = state();
    if st.filter.is_some() {
        return false;
    }
    install(&mut st, filter);
    true
}

/// Registers `hook` to run after every change of the process filter (and
/// once now, with the current one). Front ends that keep a global cut-off
/// of their own use it: the `log` front end sets `log::max_level` from
/// [`Filter::max_level`]. Hooks run under the filter's lock: a hook must
/// not change the filter.
///
/// # Examples
///
/// ```
/// fn changed(filter: Option<&nowait_core::filter::Filter>) {
///     let _ = filter.and_then(|f| f.max_level());
/// }
/// nowait_core::__private::filter::on_change(changed);
/// ```
pub(crate) fn on_change(hook: fn(Option<&Filter>)) {
    let mut st = state();
    st.hooks.push(hook);
    hook(st.filter.as_deref());
}

thread_local! {
    /// This thread's copy of the filter and the generation it is of.
    static CACHE: std::cell::RefCell<(u64, Option<Arc<Filter>>)> =
        const { std::cell::RefCell::new((0, None)) };
}

/// Whether the process filter lets a record at `level` from `target`
/// through (`true` when no filter is installed). For front ends without
/// `'static` call sites (the `log` front end).
///
/// Cost: one acquire load of the filter's generation, a thread-local
/// access, and the directives' prefix compares; no allocation and no lock,
/// except once per thread after each change of the filter (a `try_lock`:
/// if the lock is busy, the previous filter answers this call).
///
/// # Examples
///
/// ```
/// use nowait_core::__private::filter;
/// use nowait_core::Level;
/// use nowait_core::filter::Filter;
///
/// nowait_core::filter::set_filter(Filter::parse("warn,db=debug").unwrap());
/// assert!(filter::enabled("db::pool", Level::Debug));
/// assert!(!filter::enabled("http", Level::Info));
/// ```
#[inline]
pub(crate) fn enabled(target: &str, level: Level) -> bool {
    let generation = GENERATION.load(Ordering::Acquire);
    CACHE
        .try_with(|cache| {
            let Ok(mut cache) = cache.try_borrow_mut() else {
                return enabled_uncached(target, level);
            };
            if cache.0 != generation {
                refresh(&mut cache, generation);
            }
            cache.1.as_ref().map_or(true, |f| f.enabled(target, level))
        })
        .unwrap_or_else(|_| enabled_uncached(target, level))
}

#[cold]
#[inline(never)]
fn refresh(cache: &mut (u64, Option<Arc<Filter>>), generation: u64) {
    if let Ok(st) = STATE.try_lock() {
        cache.1.clone_from(&st.filter);
        cache.0 = generation;
    }
}

/// Thread-local storage gone (a thread's destructors) or re-entered: ask
/// the filter itself, or, if its lock is busy, the filter's most verbose
/// level.
#[cold]
#[inline(never)]
fn enabled_uncached(target: &str, level: Level) -> bool {
    match STATE.try_lock() {
        Ok(st) => st
            .filter
            .as_ref()
            .map_or(true, |f| f.enabled(target, level)),
        Err(_) => level as u8 >= MOST_VERBOSE.load(Ordering::Relaxed),
    }
}

/// Sets the least severe level nowait's macros emit (default: every
/// level), on top of the filter and the sinks' levels. Takes effect at
/// once on every thread (every call site's cached interest is recomputed
/// before this returns); a disabled macro costs one relaxed load.
///
/// # Examples
///
/// ```
/// nowait_core::filter::set_max_level(nowait_core::Level::Info);
/// nowait_core::debug!("not even evaluated: {}", 1 + 1);
/// ```
pub fn set_max_level(level: Level) {
    let st = state();
    WANTED.store(level as u8, Ordering::Relaxed);
    rebuild(&st);
}

/// A global logger was installed (its sinks' least severe level and
/// their filters).
pub(crate) fn logger_installed(min_level: Level, routes: &Arc<routes::Routes>) {
    let mut st = state();
    LOGGER_MIN.store(min_level as u8, Ordering::Relaxed);
    st.routes = Some(Arc::clone(routes));
    rebuild(&st);
}

/// A logger's per-sink filters changed: if it is the global logger, every
/// call site's interest is recomputed before this returns.
pub(crate) fn routes_changed(routes: &Arc<routes::Routes>) {
    let st = state();
    if st.routes.as_ref().is_some_and(|r| Arc::ptr_eq(r, routes)) {
        rebuild(&st);
    }
}

/// A handle to change the process filter at run time (what
/// `tracing_subscriber::reload` does for `EnvFilter`), cheap to copy and
/// pass to an admin endpoint or a signal handler thread.
///
/// # Examples
///
/// ```
/// use nowait_core::Level;
/// use nowait_core::filter::FilterHandle;
///
/// let handle = FilterHandle::new();
/// handle.reload("info")?;
/// assert!(!handle.current().unwrap().enabled("app", Level::Debug));
/// handle.reload("info,app=debug")?;
/// assert!(handle.current().unwrap().enabled("app", Level::Debug));
/// # Ok::<(), nowait_core::filter::FilterError>(())
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct FilterHandle(());

impl FilterHandle {
    /// A handle to the process filter.
    ///
    /// # Examples
    ///
    /// ```
    /// let _handle = nowait_core::filter::FilterHandle::new();
    /// ```
    pub fn new() -> FilterHandle {
        FilterHandle(())
    }

    /// Parses `directives` and installs them ([`set_filter`]); on error
    /// the filter in place stays.
    ///
    /// # Errors
    ///
    /// As [`Filter::parse`]: [`FilterError::Directive`] naming the first
    /// invalid directive, [`FilterError::TooManyDirectives`] and
    /// [`FilterError::TargetTooLong`] beyond the limits
    /// ([`Filter::MAX_DIRECTIVES`], [`Filter::MAX_TARGET_LEN`]).
    ///
    /// # Examples
    ///
    /// ```
    /// let handle = nowait_core::filter::FilterHandle::new();
    /// assert!(handle.reload("info,db=sometimes").is_err());
    /// handle.reload("debug")?;
    /// # Ok::<(), nowait_core::filter::FilterError>(())
    /// ```
    pub fn reload(&self, directives: &str) -> Result<(), FilterError> {
        set_filter(Filter::parse(directives)?);
        Ok(())
    }

    /// Installs `filter` ([`set_filter`]).
    ///
    /// # Examples
    ///
    /// ```
    /// nowait_core::filter::FilterHandle::new().set(nowait_core::filter::Filter::level(nowait_core::Level::Warn));
    /// ```
    pub fn set(&self, filter: Filter) {
        set_filter(filter);
    }

    /// The filter in place (`current`).
    ///
    /// # Examples
    ///
    /// ```
    /// let handle = nowait_core::filter::FilterHandle::new();
    /// handle.reload("error").unwrap();
    /// assert_eq!(handle.current().unwrap().to_string(), "error");
    /// ```
    pub fn current(&self) -> Option<Filter> {
        current()
    }
}

// === call sites ===

/// Values of [`Site::interest`].
mod interest {
    /// Not registered yet: the next call registers the site.
    pub(super) const UNKNOWN: u8 = 0;
    pub(super) const NEVER: u8 = 1;
    pub(super) const ALWAYS: u8 = 2;
}

/// The filter's view of one macro call site: its level and target, and its
/// cached interest. Part of the macros' per-call-site `static`. Not a
/// public API: no stability guarantees.
#[doc(hidden)]
#[derive(Debug)]
#[doc(hidden)]
pub struct Site {
    level: Level,
    target: &'static str,
    /// See `interest`. Written under the filter's lock, read relaxed: a
    /// call racing a rebuild may see the previous answer.
    interest: AtomicU8,
}

impl Site {
    #[doc(hidden)]
    pub const fn new(level: Level, target: &'static str) -> Site {
        Site {
            level,
            target,
            interest: AtomicU8::new(interest::UNKNOWN),
        }
    }

    /// Whether the call site is enabled: one relaxed load and a compare
    /// once registered.
    #[doc(hidden)]
    #[inline(always)]
    pub fn enabled(&'static self) -> bool {
        match self.interest.load(Ordering::Relaxed) {
            interest::NEVER => false,
            interest::ALWAYS => true,
            _ => self.register(),
        }
    }

    #[cold]
    #[inline(never)]
    fn register(&'static self) -> bool {
        let mut st = state();
        if self.interest.load(Ordering::Relaxed) == interest::UNKNOWN {
            st.sites.push(self);
        }
        let union = sinks_union(&st);
        let on = interest_of(&st, union.as_deref(), self);
        self.interest.store(on, Ordering::Relaxed);
        on == interest::ALWAYS
    }
}

/// The global logger's union of its sinks' filters, if one has any.
fn sinks_union(st: &State) -> Option<Arc<Filter>> {
    st.routes.as_ref().and_then(|r| r.union())
}

fn interest_of(st: &State, union: Option<&Filter>, site: &Site) -> u8 {
    let min = WANTED
        .load(Ordering::Relaxed)
        .max(LOGGER_MIN.load(Ordering::Relaxed));
    let on = site.level as u8 >= min
        && st
            .filter
            .as_ref()
            .map_or(true, |f| f.enabled(site.target, site.level))
        && union.map_or(true, |u| u.enabled(site.target, site.level));
    if on {
        interest::ALWAYS
    } else {
        interest::NEVER
    }
}

/// Recomputes every registered site's interest (under the lock).
fn rebuild(st: &State) {
    let union = sinks_union(st);
    for site in &st.sites {
        site.interest
            .store(interest_of(st, union.as_deref(), site), Ordering::Relaxed);
    }
}
