//! Support for the macros. Not a public API: no stability guarantees.

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::event::{register_callsite, with_event_buf, Callsite, EventBuf, FieldName, SiteKey};
use crate::{kind, Level};

pub use crate::event::message::deferrable;

/// Levels below this are compiled out of the macros: set at build time
/// with the environment variable `NOWAIT_STATIC_MAX_LEVEL` (`trace`,
/// `debug`, `info`, `warn` or `error`; default `trace`: everything is
/// compiled in). An environment variable rather than cargo features, so
/// that `--all-features` builds keep every level.
///
/// # Examples
///
/// ```
/// assert!(nowait_core::STATIC_MAX_LEVEL <= nowait_core::Level::Error);
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
#[doc(hidden)]
#[inline]
pub fn emit(site: &'static MacroSite, encode: impl FnOnce(&mut EventBuf) -> fmt::Result) {
    let Some(logger) = crate::global() else {
        return;
    };
    if !site.registered.load(Ordering::Acquire) {
        site.register();
    }
    with_event_buf(|buf| {
        buf.begin(SiteKey::of(site));
        if logger.records_thread() {
            buf.thread();
        }
        if encode(buf).is_err() {
            logger.discarded();
            return;
        }
        if buf.truncate_to(logger.max_record_len()) {
            logger.truncated();
        }
        let _ = logger.push(site.level, kind::EVENT, &[buf.as_bytes()]);
    });
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
}

#[doc(hidden)]
pub trait ArgOther {
    fn nowait_plain(&self) -> bool {
        false
    }
    fn nowait_encode(&self, _buf: &mut EventBuf) {}
}

impl<T: ?Sized> ArgOther for &Wrap<'_, T> {}

#[doc(hidden)]
pub trait FieldPlain {
    fn nowait_field(&self, buf: &mut EventBuf, name: FieldName<'_>) -> fmt::Result;
}

#[doc(hidden)]
pub trait FieldOther {
    fn nowait_field(&self, buf: &mut EventBuf, name: FieldName<'_>) -> fmt::Result;
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
        }
        impl ArgPlain for Wrap<'_, &$t> {
            #[inline(always)]
            fn nowait_encode(&self, buf: &mut EventBuf) {
                let $v = *self.0;
                buf.$arg($e);
            }
        }
        impl FieldPlain for Wrap<'_, $t> {
            #[inline(always)]
            fn nowait_field(&self, buf: &mut EventBuf, name: FieldName<'_>) -> fmt::Result {
                let $v = self.0;
                buf.$field(name, $e);
                Ok(())
            }
        }
        impl FieldPlain for Wrap<'_, &$t> {
            #[inline(always)]
            fn nowait_field(&self, buf: &mut EventBuf, name: FieldName<'_>) -> fmt::Result {
                let $v = *self.0;
                buf.$field(name, $e);
                Ok(())
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
