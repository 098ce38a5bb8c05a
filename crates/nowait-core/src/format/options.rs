//! The options [`Text`](super::Text), [`Json`](super::Json) and
//! [`Logfmt`](super::Logfmt) share.
//!
//! `tracing-subscriber` keeps these options once, in
//! `fmt::format::Format<F, T>`, whatever the format `F` (`Full`, `Json`, …),
//! and implements each builder method once there. nowait's formats are
//! separate public types (each with options of its own: colours, the JSON
//! schema, span keys, fixed fields), so each holds an [`Options`] in a
//! field named `options`, and [`shared_options!`] writes the public
//! builder methods that set it, once for every format: a new shared option
//! is one field and one method on [`Options`], and one method in the
//! macro. What each option shows on a line (a column, a key) is in each
//! format's own docs.

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

/// Writes the builder methods of the [`Options`] every format shares
/// (`with_time`, `without_time`, `with_timer`, `with_level`, `with_target`,
/// `with_file`, `with_line_number`, `with_thread_names`,
/// `with_thread_ids`, `with_trace_ids`) on a format type that holds them in
/// a field `options` and has a `new()` constructor, with their docs and
/// examples.
macro_rules! shared_options {
    ($ty:ident) => {
        impl $ty {
            /// Whether to write the event's time (default `true`); `false`
            /// is `without_time`, `true` brings back the default
            #[doc = concat!("[`Timer::Utc`](crate::format::Timer::Utc). See [`", stringify!($ty), "`] for where it goes.")]
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("let _no_time = nowait_core::format::", stringify!($ty), "::new().with_time(false);")]
            /// ```
            pub fn with_time(self, on: bool) -> $ty {
                self.options(|o| o.with_time(on))
            }

            /// Writes no time (the same as
            /// `with_timer(Timer::None)`).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("let _no_time = nowait_core::format::", stringify!($ty), "::new().without_time();")]
            /// ```
            pub fn without_time(self) -> $ty {
                self.options($crate::format::options::Options::without_time)
            }

            /// How to write the event's time (default
            /// [`Timer::Utc`](crate::format::Timer::Utc);
            /// [`Timer::None`](crate::format::Timer::None) leaves it out).
            ///
            /// # Examples
            ///
            /// ```
            /// use nowait_core::format::Timer;
            ///
            #[doc = concat!("let _uptime = nowait_core::format::", stringify!($ty), "::new().with_timer(Timer::Uptime);")]
            /// ```
            pub fn with_timer(self, timer: $crate::format::options::Timer) -> $ty {
                self.options(|o| o.with_timer(timer))
            }

            /// Whether to write the level (default `true`).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("let _no_level = nowait_core::format::", stringify!($ty), "::new().with_level(false);")]
            /// ```
            pub fn with_level(self, on: bool) -> $ty {
                self.options(|o| o.with_level(on))
            }

            /// Whether to write the target (default `true`).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("let _no_target = nowait_core::format::", stringify!($ty), "::new().with_target(false);")]
            /// ```
            pub fn with_target(self, on: bool) -> $ty {
                self.options(|o| o.with_target(on))
            }

            /// Whether to write the call site's source file (default
            /// `false`). The `log` front end, whose records have no call
            /// site, then adds file and line to each event (see
            /// [`MakeFormat::needs_location`](crate::format::MakeFormat::needs_location)).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("let _file = nowait_core::format::", stringify!($ty), "::new().with_file(true);")]
            /// ```
            pub fn with_file(self, on: bool) -> $ty {
                self.options(|o| o.with_file(on))
            }

            /// Whether to write the call site's line number (default
            /// `false`).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("let _line = nowait_core::format::", stringify!($ty), "::new().with_line_number(true);")]
            /// ```
            pub fn with_line_number(self, on: bool) -> $ty {
                self.options(|o| o.with_line_number(on))
            }

            /// Whether to write the name of the thread that logged (default
            /// `false`); an unnamed thread shows its id instead, unless ids
            /// are written anyway. Front ends then record the thread in
            /// each event (see
            /// [`MakeFormat::needs_thread`](crate::format::MakeFormat::needs_thread)).
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("let _names = nowait_core::format::", stringify!($ty), "::new().with_thread_names(true);")]
            /// ```
            pub fn with_thread_names(self, on: bool) -> $ty {
                self.options(|o| o.with_thread_names(on))
            }

            /// Whether to write the id of the thread that logged (default
            /// `false`), from `ThreadId`. Front ends then record the thread
            /// in each event.
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("let _ids = nowait_core::format::", stringify!($ty), "::new().with_thread_ids(true);")]
            /// ```
            pub fn with_thread_ids(self, on: bool) -> $ty {
                self.options(|o| o.with_thread_ids(on))
            }

            /// Whether to write the ids of the OpenTelemetry span the event
            /// was logged in (see [`TraceContext`](crate::event::TraceContext);
            /// only events whose front end recorded the span have them).
            /// On such a line the ids are always the span's: a field a
            /// program logs under the same key is written under another
            #[doc = concat!("(see [`", stringify!($ty), "`] for the keys and the default).")]
            ///
            /// # Examples
            ///
            /// ```
            #[doc = concat!("let _ids = nowait_core::format::", stringify!($ty), "::new().with_trace_ids(true);")]
            /// ```
            pub fn with_trace_ids(self, on: bool) -> $ty {
                self.options(|o| o.with_trace_ids(on))
            }

            /// Sets the options shared with the other formats.
            fn options(
                mut self,
                set: impl FnOnce(
                    $crate::format::options::Options,
                ) -> $crate::format::options::Options,
            ) -> $ty {
                self.options = set(self.options);
                self
            }
        }
    };
}
pub(crate) use shared_options;
