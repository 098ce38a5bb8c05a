//! nowait's own logging macros, with deferred formatting.
//!
//! `info!("GET {} {}", path, status)` copies the call site's address and the
//! raw arguments into the ring; the writer thread formats the message. A
//! format string or argument that cannot be deferred is rendered on the
//! caller instead, with the same result.

/// Logs an event at the given level (a constant expression, as in
/// `tracing`) through the global logger (see
/// [`set_global`](crate::process::global::set_global)); before one is set, events are
/// disabled and cost one relaxed load.
///
/// ```text
/// event!(Level::Info, "GET {} {}", path, status);
/// event!(Level::Info, target: "http", user = "ana", "login");
/// event!(Level::Warn, retries = 3, delay_ms = 1.5, reason = %err, state = ?s);
/// ```
///
/// Fields come first (`name = value`, `name = %display`, `name = ?debug`,
/// or the shorthands `name`, `%name`, `?name` for a variable of that name),
/// then an optional message: a `std::fmt` format string and its arguments.
/// Integers, floats, `bool`, `char`, `&str` and `String` (and references to
/// them) are copied and formatted on the writer thread; other values are
/// rendered on the calling thread. A message whose format uses named
/// arguments, captured identifiers (`{x}`) or runtime width/precision is
/// rendered on the calling thread too.
///
/// Whether a call site is enabled is decided once (the process
/// [`Filter`](crate::filter::Filter) on its target and level, [`set_max_level`](crate::filter::set_max_level),
/// the global logger's [`min_level`](crate::logger::Logger::min_level)) and cached
/// in the call site's `static`, recomputed when one of them changes: a
/// disabled call costs one relaxed atomic load and a branch (and nothing
/// at all below [`STATIC_MAX_LEVEL`](crate::filter::STATIC_MAX_LEVEL)). A value whose `Display` or
/// `Debug` panics discards the event and counts it in
/// [`Stats::discarded`](crate::accounting::stats::Stats::discarded). An event larger than
/// [`Logger::max_record_len`](crate::logger::Logger::max_record_len) is written
/// with its longest values cut and marked `… [truncated]`.
///
/// # Rate limits and sampling
///
/// After the level (and `target:`, if any), a call site may take a rule:
///
/// ```text
/// warn!(limit = 100 per 1s, "query failed: {}", err);   // at most 100 a second
/// warn!(limit = 1 per 5m, "disk {} nearly full", disk);  // periods: 250ms, 1s, 5m, 1h, 100us
/// debug!(target: "cache", sample = 1 in 100, "hit {}", key);  // keep 1 call in 100
/// ```
///
/// A call over its limit, or not kept by sampling, is suppressed before
/// its arguments and fields are evaluated: it encodes nothing, takes no
/// ring space and costs a clock read, one load and one counter increment
/// (a fixed window per call site: a compare-exchange only when the window
/// turns over; the suppressed counters are split across threads). Nothing is lost
/// silently: suppressed calls are counted in
/// [`Stats::suppressed_rate_limit`](crate::accounting::stats::Stats::suppressed_rate_limit)
/// and [`Stats::suppressed_sampled`](crate::accounting::stats::Stats::suppressed_sampled), and
/// every sink gets a notice per call site, at least once a second while the
/// count grows, at once when it stops, on every flush and at shutdown:
///
/// ```text
/// INFO nowait: suppressed 41230 records from src/db.rs:88 (limit 100 per 1s) between 2026-11-26T18:50:04.738695Z and 2026-11-26T18:50:05.738695Z
/// ```
///
/// (JSON adds `suppressed`, `site`, `reason` and `rule` to the notice's
/// fields; OTLP sends them as attributes.) A kept call of a sampled site
/// carries a `sample_rate` field (N), for consumers that re-weight; the
/// draws are per thread and seeded with
/// [`set_sample_seed`](crate::limit::set_sample_seed). A limit admits at most N
/// calls per window, whatever the number of threads; a call that read the
/// clock just before a window's turn counts in the new window.
///
/// # Examples
///
/// ```
/// use nowait_core::{event, Level};
///
/// let path = "/index.html";
/// event!(Level::Info, "GET {} {}", path, 200);
/// event!(Level::Debug, target: "cache", hit = true, "lookup");
/// for attempt in 0..10u32 {
///     event!(Level::Warn, limit = 1 per 1s, attempt, "retrying");
///     event!(Level::Debug, sample = 1 in 4, attempt, "sampled");
/// }
/// ```
#[macro_export]
macro_rules! event {
    ($lvl:expr, target: $target:expr, limit = $n:literal per $p:tt, $($rest:tt)+) => {
        $crate::__nowait_fields!(($lvl, $target, (rate $n $p)) [] $($rest)+)
    };
    ($lvl:expr, target: $target:expr, sample = 1 in $n:literal, $($rest:tt)+) => {
        $crate::__nowait_fields!(
            ($lvl, $target, (sample $n)) [(value sample_rate ($n as u64))] $($rest)+
        )
    };
    ($lvl:expr, target: $target:expr, $($rest:tt)+) => {
        $crate::__nowait_fields!(($lvl, $target, ()) [] $($rest)+)
    };
    ($lvl:expr, limit = $n:literal per $p:tt, $($rest:tt)+) => {
        $crate::__nowait_fields!(($lvl, ::core::module_path!(), (rate $n $p)) [] $($rest)+)
    };
    ($lvl:expr, sample = 1 in $n:literal, $($rest:tt)+) => {
        $crate::__nowait_fields!(
            ($lvl, ::core::module_path!(), (sample $n)) [(value sample_rate ($n as u64))] $($rest)+
        )
    };
    ($lvl:expr, $($rest:tt)+) => {
        $crate::__nowait_fields!(($lvl, ::core::module_path!(), ()) [] $($rest)+)
    };
}

/// The rate limit or sampling check of a macro call site: `true` without
/// one; with one, a `static` [`SiteLimit`](crate::__private::SiteLimit)
/// beside the call site and its check.
#[doc(hidden)]
#[macro_export]
macro_rules! __nowait_limit {
    (()) => {
        true
    };
    ((rate $n:literal $p:tt)) => {{
        static __LIMIT: $crate::__private::SiteLimit = $crate::__private::SiteLimit::rate(
            $n,
            $crate::__private::period_nanos(::core::stringify!($p)),
            ::core::file!(),
            ::core::line!(),
        );
        $crate::__private::admit(&__LIMIT)
    }};
    ((sample $n:literal)) => {{
        static __LIMIT: $crate::__private::SiteLimit =
            $crate::__private::SiteLimit::sample($n, ::core::file!(), ::core::line!());
        $crate::__private::admit(&__LIMIT)
    }};
}

/// Logs at TRACE level; see [`event!`](crate::event!) for the syntax.
///
/// # Examples
///
/// ```
/// nowait_core::trace!(bytes = 512usize, "read");
/// ```
#[macro_export]
macro_rules! trace {
    ($($arg:tt)+) => { $crate::event!($crate::Level::Trace, $($arg)+) };
}

/// Logs at DEBUG level; see [`event!`](crate::event!) for the syntax.
///
/// # Examples
///
/// ```
/// nowait_core::debug!("cache miss for {}", "key");
/// ```
#[macro_export]
macro_rules! debug {
    ($($arg:tt)+) => { $crate::event!($crate::Level::Debug, $($arg)+) };
}

/// Logs at INFO level; see [`event!`](crate::event!) for the syntax.
///
/// # Examples
///
/// ```
/// nowait_core::info!(status = 200u16, "GET {}", "/");
/// ```
#[macro_export]
macro_rules! info {
    ($($arg:tt)+) => { $crate::event!($crate::Level::Info, $($arg)+) };
}

/// Logs at WARN level; see [`event!`](crate::event!) for the syntax.
///
/// # Examples
///
/// ```
/// nowait_core::warn!(target: "db", millis = 812u64, "slow query");
/// ```
#[macro_export]
macro_rules! warn {
    ($($arg:tt)+) => { $crate::event!($crate::Level::Warn, $($arg)+) };
}

/// Logs at ERROR level; see [`event!`](crate::event!) for the syntax.
///
/// # Examples
///
/// ```
/// let err = std::io::Error::other("disk full");
/// nowait_core::error!(error = %err, "write failed");
/// ```
#[macro_export]
macro_rules! error {
    ($($arg:tt)+) => { $crate::event!($crate::Level::Error, $($arg)+) };
}

/// Collects `name = value` fields, then hands over to the message.
#[doc(hidden)]
#[macro_export]
macro_rules! __nowait_fields {
    // A message follows.
    ($head:tt [$($f:tt)*] $fmt:literal $(, $arg:expr)* $(,)?) => {
        $crate::__nowait_emit!($head [$($f)*] ($fmt) [] $($arg,)*)
    };
    // Fields.
    ($head:tt [$($f:tt)*] $k:ident = % $v:expr $(, $($rest:tt)*)?) => {
        $crate::__nowait_fields!($head [$($f)* (display $k $v)] $($($rest)*)?)
    };
    ($head:tt [$($f:tt)*] $k:ident = ? $v:expr $(, $($rest:tt)*)?) => {
        $crate::__nowait_fields!($head [$($f)* (debug $k $v)] $($($rest)*)?)
    };
    ($head:tt [$($f:tt)*] $k:ident = $v:expr $(, $($rest:tt)*)?) => {
        $crate::__nowait_fields!($head [$($f)* (value $k $v)] $($($rest)*)?)
    };
    // Shorthands: `name` for `name = name`, `%name`, `?name`.
    ($head:tt [$($f:tt)*] % $k:ident $(, $($rest:tt)*)?) => {
        $crate::__nowait_fields!($head [$($f)* (display $k $k)] $($($rest)*)?)
    };
    ($head:tt [$($f:tt)*] ? $k:ident $(, $($rest:tt)*)?) => {
        $crate::__nowait_fields!($head [$($f)* (debug $k $k)] $($($rest)*)?)
    };
    ($head:tt [$($f:tt)*] $k:ident $(, $($rest:tt)*)?) => {
        $crate::__nowait_fields!($head [$($f)* (value $k $k)] $($($rest)*)?)
    };
    // Fields only, no message.
    ($head:tt [$($f:tt)*]) => {
        $crate::__nowait_emit!($head [$($f)*] () [])
    };
}

/// Declares the call site, checks it (level, filter, rule), and only then
/// binds the message's arguments and the fields and emits the event.
#[doc(hidden)]
#[macro_export]
macro_rules! __nowait_emit {
    (($lvl:expr, $target:expr, $limit:tt) [$($field:tt)*] ($($fmt:literal)?) [] $($arg:expr,)*) => {{
        const __LEVEL: $crate::Level = $lvl;
        const __DEFERRED: bool = $crate::__nowait_deferrable!(($($fmt)?) [$($arg,)*]);
        static __SITE: $crate::__private::MacroSite = $crate::__private::MacroSite::new(
            __LEVEL,
            $target,
            ::core::module_path!(),
            ::core::file!(),
            ::core::line!(),
            $crate::__nowait_format!(__DEFERRED, $($fmt)?),
            $crate::__nowait_field_names!($($field)*),
        );
        if __LEVEL as u8 >= $crate::filter::STATIC_MAX_LEVEL as u8
            && __SITE.filter.enabled()
            && $crate::__nowait_limit!($limit)
        {
            #[allow(unused_imports)]
            use $crate::__private::{ArgOther as _, ArgPlain as _, FieldOther as _, FieldPlain as _};
            $crate::__nowait_args!(__SITE __DEFERRED ($($fmt)?) [] [$($field)*] $($arg,)*)
        }
    }};
}

/// The call site's field names: `message`, then each field's.
#[doc(hidden)]
#[macro_export]
macro_rules! __nowait_field_names {
    ($(($how:ident $k:ident $v:expr))*) => {
        &["message" $(, ::core::stringify!($k))*]
    };
}

/// Binds each message argument once (a fresh hygienic `__a` per step, only
/// once the call site is known to be enabled), then the fields.
#[doc(hidden)]
#[macro_export]
macro_rules! __nowait_args {
    ($site:ident $def:ident $fmt:tt [$($bound:ident)*] $fields:tt $next:expr, $($rest:expr,)*) => {
        match &$next {
            __a => $crate::__nowait_args!($site $def $fmt [$($bound)* __a] $fields $($rest,)*),
        }
    };
    ($site:ident $def:ident $fmt:tt [$($bound:ident)*] [$($field:tt)*]) => {
        $crate::__nowait_bind!($site $def $fmt [$($bound)*] [] $($field)*)
    };
}

/// Binds each field's value once (a fresh hygienic `__f` per step, only
/// once the call site is known to be enabled), then emits the event: its
/// plain form written straight into the ring when every value is plain,
/// or its general form through the thread's buffer.
#[doc(hidden)]
#[macro_export]
macro_rules! __nowait_bind {
    ($site:ident $def:ident $fmt:tt $args:tt [$($done:tt)*] ($how:ident $k:ident $v:expr) $($rest:tt)*) => {
        match &$v {
            __f => $crate::__nowait_bind!($site $def $fmt $args [$($done)* ($how __f)] $($rest)*),
        }
    };
    ($site:ident $def:ident ($($fmt:literal)?) [$($bound:ident)*] [$(($how:ident $f:ident))*]) => {
        $crate::__private::emit(
            &$site,
            $crate::__nowait_plain_message!($def ($($fmt)?) [$($bound)*])
                $(&& $crate::__nowait_field_plain!($how $f))*
                && [""$(, ::core::stringify!($how))*].len() <= 252,
            || {
                let mut __n = $crate::__nowait_message_size!(($($fmt)?) [$($bound)*]);
                $(__n += $crate::__nowait_field_size!($how $f);)*
                __n
            },
            |__w| {
                $crate::__nowait_message_write!(__w ($($fmt)?) [$($bound)*]);
                let mut __i = 0u8;
                $(
                    __i += 1;
                    $crate::__nowait_field_write!(__w __i $how $f);
                )*
                let _ = __i;
            },
            |__buf| {
                $crate::__nowait_message!(__buf, $def, ($($fmt)?) [$($bound)*]);
                let mut __i = 0usize;
                $(
                    __i += 1;
                    $crate::__nowait_field!(__buf, __i, $how, $f);
                )*
                let _ = __i;
                ::core::result::Result::Ok(())
            },
        )
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __nowait_plain_message {
    ($def:ident () []) => {
        true
    };
    ($def:ident ($fmt:literal) [$($bound:ident)*]) => {
        $def $(&& (&$crate::__private::Wrap($bound)).nowait_plain())*
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __nowait_message_size {
    (() []) => {
        0usize
    };
    (($fmt:literal) [$($bound:ident)*]) => {
        $crate::__private::MESSAGE_SIZE $(+ (&$crate::__private::Wrap($bound)).nowait_size())*
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __nowait_message_write {
    ($w:ident () []) => {};
    ($w:ident ($fmt:literal) [$($bound:ident)*]) => {
        $crate::__private::message($w, $crate::__nowait_count!($($bound)*));
        $((&$crate::__private::Wrap($bound)).nowait_write($w);)*
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __nowait_field_plain {
    (value $f:ident) => {
        (&$crate::__private::Wrap($f)).nowait_field_plain()
    };
    ($how:ident $f:ident) => {
        false
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __nowait_field_size {
    (value $f:ident) => {
        (&$crate::__private::Wrap($f)).nowait_field_size()
    };
    ($how:ident $f:ident) => {
        0usize
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __nowait_field_write {
    ($w:ident $i:ident value $f:ident) => {
        (&$crate::__private::Wrap($f)).nowait_field_write($w, $i)
    };
    ($w:ident $i:ident $how:ident $f:ident) => {};
}

#[doc(hidden)]
#[macro_export]
macro_rules! __nowait_message {
    ($buf:ident, $deferred:ident, () []) => {};
    ($buf:ident, $deferred:ident, ($fmt:literal) [$($bound:ident)*]) => {
        if $deferred $(&& (&$crate::__private::Wrap($bound)).nowait_plain())* {
            $buf.args($crate::event::FieldName::Index(0), $crate::__nowait_count!($($bound)*));
            $((&$crate::__private::Wrap($bound)).nowait_encode($buf);)*
        } else {
            $buf.rendered(
                $crate::event::FieldName::Index(0),
                ::core::format_args!($fmt $(, $bound)*),
            )?;
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __nowait_field {
    ($buf:ident, $i:ident, value, $v:expr) => {
        (&$crate::__private::Wrap($v)).nowait_field($buf, $crate::event::FieldName::Index($i))?
    };
    ($buf:ident, $i:ident, display, $v:expr) => {
        $buf.rendered(
            $crate::event::FieldName::Index($i),
            ::core::format_args!("{}", $v),
        )?
    };
    ($buf:ident, $i:ident, debug, $v:expr) => {
        $buf.rendered(
            $crate::event::FieldName::Index($i),
            ::core::format_args!("{:?}", $v),
        )?
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __nowait_deferrable {
    (() [$($arg:expr,)*]) => {
        false
    };
    (($fmt:literal) [$($arg:expr,)*]) => {
        $crate::__private::deferrable($fmt, $crate::__nowait_count_args!($($arg,)*) as usize)
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __nowait_count_args {
    () => { 0u8 };
    ($head:expr, $($rest:expr,)*) => { 1u8 + $crate::__nowait_count_args!($($rest,)*) };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __nowait_format {
    ($deferred:ident,) => {
        ""
    };
    ($deferred:ident, $fmt:literal) => {
        if $deferred {
            $fmt
        } else {
            ""
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __nowait_count {
    () => { 0u8 };
    ($head:ident $($rest:ident)*) => { 1u8 + $crate::__nowait_count!($($rest)*) };
}
