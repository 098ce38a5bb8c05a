//! Formats: the contract between the writer thread and the bytes a sink
//! receives, and nowait's own formats.
//!
//! * The contract: a [`MakeFormat`] makes one [`Format`] per sink when the
//!   logger is built, told what the sink is ([`SinkInfo`]); the writer
//!   thread then hands it each [`Record`] and [`Notice`] and writes what
//!   it appends. [`escape_into`] is the escaping every text format uses.
//! * The formats: [`Plain`] (text records only), [`Text`] (close to
//!   `tracing-subscriber`'s default), [`Json`] (one object per line:
//!   `tracing-subscriber`'s schema, nowait's, and the layouts Elastic
//!   ([`Json::ecs`]) and Google Cloud Logging ([`Json::cloud_logging`])
//!   ingest as is), [`Logfmt`], [`Syslog`] and [`Journald`] (framing for
//!   those receivers). `Text`, `Json` and `Logfmt` share their common
//!   builder options (`options`) as `tracing-subscriber`'s
//!   `fmt::format::Format` does, and the flattened layouts one rule for
//!   their keys (`flat`): every key once, no field dropped.
//! * What the formats share, a file each: the time they print
//!   (`timestamp`), an event's fields as they all read them (`fields`),
//!   decimal digits (`digits`), and what they render once per call site
//!   (`site_cache`). Tests that span every format, and the generators
//!   other modules' tests use, are in `tests`.

mod escape;
mod fields;
mod fixed;
mod flat;
pub(crate) mod journald;
mod json;
mod logfmt;
mod options;
mod plain;
mod site_cache;
mod syslog;
#[cfg(test)]
mod tests;
mod text;
mod timestamp;

pub(crate) use crate::text::digits::push_u64;
pub use escape::escape_into;
#[cfg(any(test, fuzzing))]
pub(crate) use escape::unescaped_at;
pub(crate) use escape::{append, is_bidi_control, plain_len};
pub(crate) use fields::{
    copy_into, is_message, message_with, renamed_trace_key, scalar_text, Location, Resolved,
};
pub use journald::Journald;
pub use json::{Json, JsonSchema};
pub use logfmt::Logfmt;
pub(crate) use options::Options;
pub use options::Timer;
pub use plain::Plain;
pub(crate) use site_cache::{KnownSites, Piece};
pub(crate) use syslog::Framing;
pub use syslog::{Facility, Syslog};
#[cfg(test)]
pub(crate) use tests::{random_event, test_rng};
pub use text::Text;
pub(crate) use timestamp::{render_time, system_nanos, with_render_time, Clock};

use std::fmt;

use crate::record::{Notice, Record};

// === the contract ===

/// What a sink is, as far as a [`Format`] needs to know (for example, to
/// decide on ANSI colours).
///
/// # Examples
///
/// ```
/// let info = nowait_core::format::SinkInfo::new("stdout", true);
/// assert!(info.is_terminal());
/// ```
#[derive(Clone, Debug)]
pub struct SinkInfo {
    name: String,
    terminal: bool,
}

impl SinkInfo {
    /// Describes a sink.
    ///
    /// # Examples
    ///
    /// ```
    /// let info = nowait_core::format::SinkInfo::new("file:/var/log/app.log", false);
    /// assert_eq!(info.name(), "file:/var/log/app.log");
    /// ```
    pub fn new(name: impl Into<String>, terminal: bool) -> Self {
        SinkInfo {
            name: name.into(),
            terminal,
        }
    }

    /// The sink's name as shown in notices and [`Stats`](crate::accounting::stats::Stats).
    ///
    /// # Examples
    ///
    /// ```
    /// assert_eq!(nowait_core::format::SinkInfo::new("stderr", false).name(), "stderr");
    /// ```
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether the sink is a terminal (a tty), where colours may be used.
    ///
    /// # Examples
    ///
    /// ```
    /// assert!(!nowait_core::format::SinkInfo::new("file:x", false).is_terminal());
    /// ```
    pub fn is_terminal(&self) -> bool {
        self.terminal
    }
}

/// Turns records into bytes on the writer thread.
///
/// Each sink owns one `Format` (made by a [`MakeFormat`]), so a terminal can
/// get colours while a file gets plain text or JSON. Implementations must
/// append exactly one line per record and per notice, ending in `\n`, and
/// escape control characters so that no payload can forge a second line or a
/// terminal escape.
///
/// # Examples
///
/// ```
/// use nowait_core::format::Format;
/// use nowait_core::record::{Notice, Record};
///
/// struct Upper;
/// impl Format for Upper {
///     fn format(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
///         nowait_core::format::escape_into(record.payload(), out);
///         out.make_ascii_uppercase();
///         out.push(b'\n');
///     }
///     fn notice(&mut self, notice: &Notice<'_>, out: &mut Vec<u8>) {
///         out.extend_from_slice(b"nowait: ");
///         out.extend_from_slice(notice.message().as_bytes());
///         out.push(b'\n');
///     }
/// }
///
/// let mut out = Vec::new();
/// Upper.format(&Record::new(nowait_core::Level::Info, 0, b"hi"), &mut out);
/// assert_eq!(out, b"HI\n");
/// ```
pub trait Format: Send + 'static {
    /// Appends the rendering of `record` to `out`: one line ending in `\n`.
    fn format(&mut self, record: &Record<'_>, out: &mut Vec<u8>);

    /// Appends the rendering of a notice from nowait itself: one line ending
    /// in `\n`.
    fn notice(&mut self, notice: &Notice<'_>, out: &mut Vec<u8>);

    /// Appends the rendering of a record that a sink's
    /// `BacktraceBuffer` kept and a trigger released: one
    /// line ending in `\n`. The default is [`format`](Format::format); the
    /// lines of [`kept_notice`](Format::kept_notice) around the released
    /// records then mark them. [`Json`] adds a key instead.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::Level;
    /// use nowait_core::format::{Format, Plain};
    /// use nowait_core::record::Record;
    ///
    /// let mut out = Vec::new();
    /// Plain.format_kept(&Record::new(Level::Debug, 0, b"connecting"), &mut out);
    /// assert_eq!(out, b"connecting\n");
    /// ```
    fn format_kept(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
        self.format(record, out)
    }

    /// Appends the line written before the records a backtrace releases
    /// (`--- 3 earlier records below INFO, kept for this ERROR ---`) and
    /// the one after them (`--- end of the 3 earlier records ---`). The
    /// default is [`notice`](Format::notice). A format that marks each
    /// released record itself in [`format_kept`](Format::format_kept) may
    /// append nothing (as [`Json`] does), or one line.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::Level;
    /// use nowait_core::format::{Format, Plain};
    /// use nowait_core::record::Notice;
    ///
    /// let mut out = Vec::new();
    /// let n = Notice::new(Level::Info, std::time::SystemTime::UNIX_EPOCH, "--- end ---");
    /// Plain.kept_notice(&n, &mut out);
    /// assert_eq!(out, b"nowait: INFO --- end ---\n");
    /// ```
    fn kept_notice(&mut self, notice: &Notice<'_>, out: &mut Vec<u8>) {
        self.notice(notice, out)
    }

    /// Appends what each file the sink writes starts with: called when the
    /// sink opens, and before the first byte of each later file (a
    /// rotation, a reopen). `unsent` is what this format already formatted
    /// that the new file gets right after `out` (records formatted before
    /// a rotation and written after it), for a format whose output depends
    /// on what came before it (the binary format's time differences). The
    /// default appends nothing; the binary format writes its header and
    /// catalog here.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::format::{Format, Plain};
    ///
    /// let mut out = Vec::new();
    /// Plain.file_start(&mut out, &[]);
    /// assert!(out.is_empty());
    /// ```
    fn file_start(&mut self, out: &mut Vec<u8>, unsent: &[u8]) {
        let _ = (out, unsent);
    }
}

impl fmt::Debug for dyn Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("dyn Format")
    }
}

/// Makes the [`Format`] of each sink, once, when the logger is built.
///
/// Implemented for closures `Fn(&SinkInfo) -> Box<dyn Format>`.
///
/// # Examples
///
/// ```
/// use nowait_core::format::{Format, MakeFormat, Plain, SinkInfo};
///
/// let make = |_: &SinkInfo| -> Box<dyn Format> { Box::new(Plain) };
/// let _format = make.make_format(&SinkInfo::new("stdout", false));
/// ```
pub trait MakeFormat: Send + Sync + 'static {
    /// Makes the format for one sink.
    fn make_format(&self, sink: &SinkInfo) -> Box<dyn Format>;

    /// Whether the formats made print which thread an event came from
    /// (default `false`). The builder asks every sink's `MakeFormat` once;
    /// if one says yes, front ends record the thread in each event (see
    /// `Logger::records_thread`), which
    /// costs them a thread-local read and five bytes per event. Otherwise
    /// they record nothing and pay nothing.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::format::{MakeFormat, Text};
    ///
    /// assert!(!Text::new().needs_thread());
    /// assert!(Text::new().with_thread_names(true).needs_thread());
    /// ```
    fn needs_thread(&self) -> bool {
        false
    }

    /// Whether the formats made print the source file or line (default
    /// `false`). Events with a call site have them there; front ends
    /// without call sites (`log`) then add them to each event as the
    /// fields `event::LOCATION_FILE` and
    /// `event::LOCATION_LINE` (see
    /// `Logger::records_location`).
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::format::{Json, MakeFormat};
    ///
    /// assert!(!Json::new().needs_location());
    /// assert!(Json::new().with_line_number(true).needs_location());
    /// ```
    fn needs_location(&self) -> bool {
        false
    }
}

impl<F> MakeFormat for F
where
    F: Fn(&SinkInfo) -> Box<dyn Format> + Send + Sync + 'static,
{
    fn make_format(&self, sink: &SinkInfo) -> Box<dyn Format> {
        self(sink)
    }
}

#[cfg(test)]
mod event_tests;
