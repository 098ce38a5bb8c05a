//! The options [`Text`](super::Text) and [`Json`](super::Json) share.
//!
//! `tracing-subscriber` keeps these options once, in
//! `fmt::format::Format<F, T>`, whatever the format `F` (`Full`, `Json`, …),
//! and implements each builder method once there. nowait's `Text` and
//! `Json` are separate public types (each with options of its own: colours,
//! the JSON schema and span keys), so each holds an [`Options`] and its
//! builder methods forward to the one implementation of each option here.
//! A new shared option is one field and one method here, and a forwarding
//! method with its own docs on each format.

/// How a format prints an event's time: the timers of
/// `tracing_subscriber::fmt::time` that print the same bytes.
///
/// # Examples
///
/// ```
/// use nowait_core::format::{Text, Timer};
///
/// let _uptime = Text::new().with_timer(Timer::Uptime);
/// let _none = Text::new().with_timer(Timer::None); // same as `without_time()`
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Timer {
    /// RFC 3339 in UTC with microseconds, `2026-11-22T12:00:01.123456Z`
    /// (the default, as `tracing_subscriber::fmt::time::SystemTime`).
    #[default]
    Utc,
    /// Time since the format was made (when the logger was built), as
    /// seconds padded to four columns and nanoseconds, `   3.000123456s`
    /// (as `tracing_subscriber::fmt::time::Uptime`).
    Uptime,
    /// Local time with its UTC offset, RFC 3339 with as many fractional
    /// digits as needed (0, 3, 6 or 9), `2026-11-22T13:00:01.123456789+01:00`
    /// (as `tracing_subscriber::fmt::time::ChronoLocal::rfc_3339()`).
    ///
    /// The offset comes from `chrono::Local` on the writer thread, computed
    /// once per second of event time, so a change of daylight saving time
    /// shows at once. `chrono` reads the `TZ` variable and the zone files
    /// itself: unlike the C library's `localtime_r` (which the `time`
    /// crate declines to call in a multi-threaded program because another
    /// thread may be changing the environment), this is sound in a
    /// program with threads. Needs the `local-time` feature.
    #[cfg(feature = "local-time")]
    #[cfg_attr(docsrs, doc(cfg(feature = "local-time")))]
    Local,
    /// No timestamp (as `without_time()`).
    None,
}

/// The options `Text` and `Json` share, with `tracing-subscriber`'s names.
///
/// Invariant: a field is only ever set through the methods below, so an
/// option means the same in both formats (`with_time(true)` brings back
/// [`Timer::Utc`] in both, thread names and ids both make
/// [`needs_thread`](Options::needs_thread) true, and so on).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Options {
    pub(crate) timer: Timer,
    pub(crate) level: bool,
    pub(crate) target: bool,
    pub(crate) file: bool,
    pub(crate) line: bool,
    pub(crate) thread_ids: bool,
    pub(crate) thread_names: bool,
    /// The OpenTelemetry trace and span ids of events that carry them.
    pub(crate) trace_ids: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            timer: Timer::Utc,
            level: true,
            target: true,
            file: false,
            line: false,
            thread_ids: false,
            thread_names: false,
            trace_ids: false,
        }
    }
}

impl Options {
    /// How timestamps are printed ([`Timer::None`]: not at all).
    pub(crate) fn with_timer(self, timer: Timer) -> Options {
        Options { timer, ..self }
    }

    /// [`Timer::Utc`] if `on`, else [`Timer::None`].
    pub(crate) fn with_time(self, on: bool) -> Options {
        self.with_timer(if on { Timer::Utc } else { Timer::None })
    }

    /// No timestamps.
    pub(crate) fn without_time(self) -> Options {
        self.with_timer(Timer::None)
    }

    /// Whether the level is printed.
    pub(crate) fn with_level(self, level: bool) -> Options {
        Options { level, ..self }
    }

    /// Whether the target is printed.
    pub(crate) fn with_target(self, target: bool) -> Options {
        Options { target, ..self }
    }

    /// Whether the call site's source file is printed.
    pub(crate) fn with_file(self, file: bool) -> Options {
        Options { file, ..self }
    }

    /// Whether the call site's line is printed.
    pub(crate) fn with_line_number(self, line: bool) -> Options {
        Options { line, ..self }
    }

    /// Whether the logging thread's name is printed.
    pub(crate) fn with_thread_names(self, thread_names: bool) -> Options {
        Options {
            thread_names,
            ..self
        }
    }

    /// Whether the logging thread's id is printed.
    pub(crate) fn with_thread_ids(self, thread_ids: bool) -> Options {
        Options { thread_ids, ..self }
    }

    /// Whether the ids of the OpenTelemetry span an event was logged in
    /// are printed.
    pub(crate) fn with_trace_ids(self, trace_ids: bool) -> Options {
        Options { trace_ids, ..self }
    }

    /// Whether front ends must record the thread in each event.
    pub(crate) fn needs_thread(&self) -> bool {
        self.thread_ids || self.thread_names
    }

    /// Whether front ends without call sites must add file and line.
    pub(crate) fn needs_location(&self) -> bool {
        self.file || self.line
    }
}
