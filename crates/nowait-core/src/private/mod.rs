//! What nowait's own crates share and users do not: the event wire
//! encoding and the call-site registry for the front ends (`nowait-tracing`,
//! `nowait-log`), the process filter's hooks for the `log` front end, and
//! the support code of the macros.
//!
//! **Not a public API.** Nothing here is covered by semver: any item may
//! change or go in any release, patch releases included. It is public only
//! because the sibling crates and the macros' expansions must name it.
//! Users write formats with the public [`event`](mod@crate::event) module and
//! [`Format`](crate::format::Format).

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::PushError;
use crate::event::{
    header_size, register_callsite, size, with_event_buf, Callsite, EventBuf, FieldName, SiteKey,
    TraceContext,
};
use crate::level::Level;
use crate::logger::Logger;
use crate::record::kind;
use crate::ring::Payload;

use crate::event::Cursor;

pub use crate::event::message::deferrable;
pub use crate::limit::{
    parse_limit_directives, period_nanos, period_nanos_checked, LimitDirective,
    LimitDirectiveError, LimitRule, SiteLimit, MAX_LIMIT_DIRECTIVES, MAX_LIMIT_DIRECTIVE_LEN,
    MAX_LIMIT_TARGET_LEN, MAX_PER as MAX_RATE,
};

/// The macros' rate limit or sample at a call site: whether this call may
/// log; a suppressed call is counted, and the site is handed to the global
/// logger the first time there is one.
#[inline]
pub fn admit(site: &'static SiteLimit) -> bool {
    site.admit_or_hand_off(|site| {
        if let Some(logger) = crate::process::global::global() {
            watch_limit(site, logger);
        }
    })
}

/// Hands a limited call site to `logger`'s writer thread, which reports
/// its suppressed calls from then on (once per site; later calls keep the
/// first logger).
#[cold]
pub fn watch_limit(site: &'static SiteLimit, logger: &Logger) {
    site.hand_off(|site| logger.watch_limit(site));
}

/// The event wire encoding, as front ends write it (see the grammar in
/// `event/encode.rs`).
pub mod event {
    pub use crate::event::callsite::register_callsite;
    pub use crate::event::direct::Cursor;
    pub use crate::event::encode::{
        timestamp, with_event_buf, EventBuf, LOCATION_FILE, LOCATION_LINE,
    };
}

/// The process filter's hooks for front ends without `'static` call sites
/// (the `log` front end), and the macros' cached call-site interest.
pub mod filter {
    use crate::filter::Filter;
    use crate::level::Level;

    pub use crate::filter::Site;

    /// The process filter installed now, if any.
    pub fn current() -> Option<Filter> {
        crate::filter::current()
    }

    /// Installs `filter` unless one is installed already; whether it was.
    pub fn install_default(filter: Filter) -> bool {
        crate::filter::install_default(filter)
    }

    /// Calls `hook` with the new filter each time one is installed.
    pub fn on_change(hook: fn(Option<&Filter>)) {
        crate::filter::on_change(hook)
    }

    /// Whether the process filter lets `target` log at `level`.
    pub fn enabled(target: &str, level: Level) -> bool {
        crate::filter::enabled(target, level)
    }
}

/// The entry points of the repository's fuzz targets and of the tests
/// that replay their regressions.
#[cfg(fuzzing)]
pub mod fuzz {
    pub use crate::__fuzz::{
        binary_compact, binary_read, durable_recover, durable_sinks, filter_parse, format_event,
        limit_directives, rolling_housekeeping, rolling_names,
    };
    #[cfg(feature = "otlp")]
    pub use crate::__fuzz::{otlp_env, otlp_response};
    #[cfg(feature = "otlp-tls")]
    pub use crate::__fuzz::{otlp_exchange, ExchangeCerts};
}

/// Where the macros find the OpenTelemetry span they are called in: a
/// front end that knows it (the `tracing` layer with its `opentelemetry`
/// feature: the span it tracks on this thread) installs it once.
static TRACE_SOURCE: std::sync::OnceLock<fn() -> Option<TraceContext>> = std::sync::OnceLock::new();
/// Whether [`TRACE_SOURCE`] is set: the macros' one load and branch when
/// it is not.
static HAS_TRACE_SOURCE: AtomicBool = AtomicBool::new(false);

/// Installs the function the macros ask for the trace context of the span
/// they are called in; the first one stays. Returns whether this one was
/// installed. It must not panic nor block, and must answer from the
/// calling thread's own state (a macro may run in a thread-local
/// destructor).
pub fn set_trace_source(source: fn() -> Option<TraceContext>) -> bool {
    let set = TRACE_SOURCE.set(source).is_ok();
    HAS_TRACE_SOURCE.store(true, Ordering::Release);
    set
}

/// Whether `logger` is the global logger, the one the macros log to.
pub fn is_global(logger: &Logger) -> bool {
    crate::process::global::global()
        .is_some_and(|g| std::sync::Arc::ptr_eq(&g.shared, &logger.shared))
}

/// The trace context of the span a macro is called in, from the installed
/// source.
#[cold]
#[inline(never)]
fn current_trace() -> Option<TraceContext> {
    TRACE_SOURCE.get().and_then(|source| source())
}

/// Pushes an encoded event ([`kind::EVENT`]) like
/// `Logger::push`, after cutting it to
/// [`Logger::max_record_len`] with [`EventBuf::truncate_to`] (counted in
/// [`Stats::truncated`](crate::accounting::stats::Stats::truncated)): what front ends do with
/// each event, in one call that copies the buffer into the ring as one
/// piece.
///
/// # Errors
///
/// As `Logger::push`.
#[inline]
pub fn push_event(logger: &Logger, level: Level, event: &mut EventBuf) -> Result<(), PushError> {
    logger.push_event(level, event)
}

/// A macro call site: a `static` per call. The macro tests
/// `SITE.filter.enabled()` (one relaxed load) before anything else.
#[doc(hidden)]
#[derive(Debug)]
pub struct MacroSite {
    level: Level,
    target: &'static str,
    module_path: &'static str,
    file: &'static str,
    line: u32,
    format: &'static str,
    fields: &'static [&'static str],
    registered: AtomicBool,
    /// Level, target and the cached interest (see the `filter` module).
    pub filter: crate::filter::Site,
}

impl MacroSite {
    #[doc(hidden)]
    pub const fn new(
        level: Level,
        target: &'static str,
        module_path: &'static str,
        file: &'static str,
        line: u32,
        format: &'static str,
        fields: &'static [&'static str],
    ) -> MacroSite {
        MacroSite {
            level,
            target,
            module_path,
            file,
            line,
            format,
            fields,
            registered: AtomicBool::new(false),
            filter: crate::filter::Site::new(level, target),
        }
    }

    #[cold]
    fn register(&'static self) {
        let mut site = Callsite::new(self.level, self.target, "event")
            .fields(self.fields.to_vec())
            .location(Some(self.module_path), Some(self.file), Some(self.line));
        if !self.format.is_empty() {
            site = site.message_format(self.format);
        }
        register_callsite(SiteKey::of(self), site);
        self.registered.store(true, Ordering::Release);
    }
}

/// Encodes one macro event and pushes it to the global logger.
///
/// When every value is plain (`plain`: numbers, `bool`, `char`, strings,
/// a deferred message), the event is written straight into the ring:
/// `size` adds up the items' encoded bytes, the record is claimed at that
/// size, and `write` fills it (an event too large for a record is written
/// into the thread's [`EventBuf`] instead, cut there, then copied).
/// Otherwise `encode` writes it into the thread's [`EventBuf`], which is
/// copied into the ring.
#[doc(hidden)]
#[inline]
pub fn emit(
    site: &'static MacroSite,
    plain: bool,
    size: impl FnOnce() -> usize,
    write: impl Fn(&mut Cursor<'_>),
    encode: impl FnOnce(&mut EventBuf) -> fmt::Result,
) {
    let Some(logger) = crate::process::global::global() else {
        return;
    };
    if !site.registered.load(Ordering::Acquire) {
        site.register();
    }
    let trace = if HAS_TRACE_SOURCE.load(Ordering::Relaxed) {
        current_trace()
    } else {
        None
    };
    if plain {
        let thread = logger.records_thread().then(crate::event::thread_number);
        let event = Direct {
            len: header_size(thread.is_some()) + size(),
            time: crate::record::clock::now(),
            site: SiteKey::of(site),
            thread,
            write,
        };
        if let Some(cx) = trace {
            // In a span a tracer knows: the event goes through the
            // thread's buffer, which puts the trace item in.
            push_traced(logger, site.level, &event, event.thread.is_some(), cx);
        } else if event.len <= logger.max_record_len() {
            let _ = logger.push_payload(site.level, kind::EVENT, &event);
        } else {
            push_cut(logger, site.level, &event, event.thread.is_some());
        }
        // A call site whose values are all plain never reaches the general
        // encoder below: `plain` is a constant there, so `encode` is not
        // compiled into it (and `size`/`write` not into the others).
        return;
    }
    with_event_buf(|buf| {
        buf.begin(SiteKey::of(site));
        if logger.records_thread() {
            buf.thread();
        }
        if let Some(cx) = trace {
            buf.trace_context(cx);
        }
        if encode(buf).is_err() {
            logger.discarded();
            return;
        }
        let _ = logger.push_event(site.level, buf);
    });
}

/// A plain event larger than a record: written into the thread's buffer,
/// cut there like any other oversized event, then pushed. Not generic, so
/// that call sites share it.
#[cold]
#[inline(never)]
fn push_cut(logger: &crate::logger::Logger, level: Level, event: &dyn Payload, thread: bool) {
    with_event_buf(|buf| {
        buf.load_encoded(event, thread);
        let _ = logger.push_event(level, buf);
    });
}

/// A plain event with a trace context: written into the thread's buffer,
/// the trace item put into its header, then pushed (cut if too large).
#[cold]
#[inline(never)]
fn push_traced(
    logger: &crate::logger::Logger,
    level: Level,
    event: &dyn Payload,
    thread: bool,
    cx: TraceContext,
) {
    with_event_buf(|buf| {
        buf.load_encoded(event, thread);
        buf.insert_trace_context(cx);
        let _ = logger.push_event(level, buf);
    });
}

/// A macro event of plain values, written straight into its ring record.
struct Direct<W> {
    /// The encoded length, header included.
    len: usize,
    time: u64,
    site: SiteKey,
    thread: Option<u32>,
    /// Writes the items after the header.
    write: W,
}

impl<W: Fn(&mut Cursor<'_>)> Payload for Direct<W> {
    #[inline]
    fn payload_len(&self) -> usize {
        self.len
    }

    #[inline]
    fn write_to(&self, dst: &mut [u8]) {
        let mut cursor = Cursor::new(dst);
        cursor.header(self.time, self.site, self.thread);
        (self.write)(&mut cursor);
        debug_assert!(
            cursor.is_done(),
            "nowait bug: a macro event's size was miscounted"
        );
    }
}

/// Autoref specialisation: `(&Wrap(x)).method()` picks the `*Plain`
/// impl for the supported types and falls back to `*Other`.
#[doc(hidden)]
#[derive(Debug)]
pub struct Wrap<'a, T: ?Sized>(pub &'a T);

#[doc(hidden)]
pub trait ArgPlain {
    fn nowait_plain(&self) -> bool {
        true
    }
    fn nowait_encode(&self, buf: &mut EventBuf);
    fn nowait_size(&self) -> usize;
    fn nowait_write(&self, w: &mut Cursor<'_>);
}

#[doc(hidden)]
pub trait ArgOther {
    fn nowait_plain(&self) -> bool {
        false
    }
    fn nowait_encode(&self, _buf: &mut EventBuf) {}
    fn nowait_size(&self) -> usize {
        0
    }
    fn nowait_write(&self, _w: &mut Cursor<'_>) {}
}

impl<T: ?Sized> ArgOther for &Wrap<'_, T> {}

#[doc(hidden)]
pub trait FieldPlain {
    fn nowait_field(&self, buf: &mut EventBuf, name: FieldName<'_>) -> fmt::Result;
    fn nowait_field_plain(&self) -> bool {
        true
    }
    /// Encoded size, the field's index byte included.
    fn nowait_field_size(&self) -> usize;
    fn nowait_field_write(&self, w: &mut Cursor<'_>, index: u8);
}

#[doc(hidden)]
pub trait FieldOther {
    fn nowait_field(&self, buf: &mut EventBuf, name: FieldName<'_>) -> fmt::Result;
    fn nowait_field_plain(&self) -> bool {
        false
    }
    fn nowait_field_size(&self) -> usize {
        0
    }
    fn nowait_field_write(&self, _w: &mut Cursor<'_>, _index: u8) {}
}

impl<T: fmt::Debug + ?Sized> FieldOther for &Wrap<'_, T> {
    fn nowait_field(&self, buf: &mut EventBuf, name: FieldName<'_>) -> fmt::Result {
        buf.rendered(name, format_args!("{:?}", self.0))
    }
}

macro_rules! plain {
    ($($t:ty => |$v:ident| $arg:ident($e:expr), $field:ident;)*) => {$(
        impl ArgPlain for Wrap<'_, $t> {
            #[inline(always)]
            fn nowait_encode(&self, buf: &mut EventBuf) {
                let $v = self.0;
                buf.$arg($e);
            }
            #[inline(always)]
            fn nowait_size(&self) -> usize {
                let $v = self.0;
                size::$field($e)
            }
            #[inline(always)]
            fn nowait_write(&self, w: &mut Cursor<'_>) {
                let $v = self.0;
                w.$field($e);
            }
        }
        impl ArgPlain for Wrap<'_, &$t> {
            #[inline(always)]
            fn nowait_encode(&self, buf: &mut EventBuf) {
                let $v = *self.0;
                buf.$arg($e);
            }
            #[inline(always)]
            fn nowait_size(&self) -> usize {
                let $v = *self.0;
                size::$field($e)
            }
            #[inline(always)]
            fn nowait_write(&self, w: &mut Cursor<'_>) {
                let $v = *self.0;
                w.$field($e);
            }
        }
        impl FieldPlain for Wrap<'_, $t> {
            #[inline(always)]
            fn nowait_field(&self, buf: &mut EventBuf, name: FieldName<'_>) -> fmt::Result {
                let $v = self.0;
                buf.$field(name, $e);
                Ok(())
            }
            #[inline(always)]
            fn nowait_field_size(&self) -> usize {
                let $v = self.0;
                size::NAME + size::$field($e)
            }
            #[inline(always)]
            fn nowait_field_write(&self, w: &mut Cursor<'_>, index: u8) {
                let $v = self.0;
                w.name(index);
                w.$field($e);
            }
        }
        impl FieldPlain for Wrap<'_, &$t> {
            #[inline(always)]
            fn nowait_field(&self, buf: &mut EventBuf, name: FieldName<'_>) -> fmt::Result {
                let $v = *self.0;
                buf.$field(name, $e);
                Ok(())
            }
            #[inline(always)]
            fn nowait_field_size(&self) -> usize {
                let $v = *self.0;
                size::NAME + size::$field($e)
            }
            #[inline(always)]
            fn nowait_field_write(&self, w: &mut Cursor<'_>, index: u8) {
                let $v = *self.0;
                w.name(index);
                w.$field($e);
            }
        }
    )*};
}

plain! {
    u8 => |v| arg_u64(u64::from(*v)), u64;
    u16 => |v| arg_u64(u64::from(*v)), u64;
    u32 => |v| arg_u64(u64::from(*v)), u64;
    u64 => |v| arg_u64(*v), u64;
    usize => |v| arg_u64(*v as u64), u64;
    i8 => |v| arg_i64(i64::from(*v)), i64;
    i16 => |v| arg_i64(i64::from(*v)), i64;
    i32 => |v| arg_i64(i64::from(*v)), i64;
    i64 => |v| arg_i64(*v), i64;
    isize => |v| arg_i64(*v as i64), i64;
    f64 => |v| arg_f64(*v), f64;
    bool => |v| arg_bool(*v), bool;
    char => |v| arg_char(*v), char;
    str => |v| arg_str(v), str;
    String => |v| arg_str(v.as_str()), str;
}

/// Bytes of a deferred message's header (field 0, tag, count), for the
/// macros' size of a plain event.
#[doc(hidden)]
pub const MESSAGE_SIZE: usize = size::ARGS;

/// Writes a deferred message's header with `count` arguments.
#[doc(hidden)]
#[inline(always)]
pub fn message(w: &mut Cursor<'_>, count: u8) {
    w.args(count);
}

/// Front-end plumbing on a [`Logger`]: what the `tracing` and `log` front
/// ends and the macros need and a user who holds a logger does not.
pub mod logger {
    use crate::error::PushError;
    use crate::level::Level;
    use crate::logger::Logger;

    /// Pushes one record of `kind` made of `parts`, without waiting.
    #[inline]
    pub fn try_push(
        logger: &Logger,
        level: Level,
        kind: u8,
        parts: &[&[u8]],
    ) -> Result<(), PushError> {
        logger.try_push(level, kind, parts)
    }

    /// Pushes one record of `kind` made of `parts`, waiting as the full
    /// policy says.
    #[inline]
    pub fn push(logger: &Logger, level: Level, kind: u8, parts: &[&[u8]]) -> Result<(), PushError> {
        logger.push(level, kind, parts)
    }

    /// Runs `hook` after every change of a sink's filter of `logger`
    /// (`Logger::reload_sink_filter`): the `tracing` layer rebuilds
    /// `tracing`'s interest cache, which holds the answers of
    /// `Logger::enabled_for` per call site.
    pub fn on_sink_filter_change(logger: &Logger, hook: fn()) {
        logger.shared.routes.on_change(hook);
    }

    /// Counts a record the front end gave up on.
    #[inline]
    pub fn count_discarded(logger: &Logger) {
        logger.discarded()
    }

    /// Counts a record the front end cut to fit.
    #[inline]
    pub fn count_truncated(logger: &Logger) {
        logger.truncated()
    }

    /// Whether events should carry the calling thread.
    #[inline]
    pub fn records_thread(logger: &Logger) -> bool {
        logger.records_thread()
    }

    /// Whether events without call sites should carry file and line.
    #[inline]
    pub fn records_location(logger: &Logger) -> bool {
        logger.records_location()
    }
}
