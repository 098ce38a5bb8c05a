//! Structured events: the compact binary form the front ends write into the
//! ring, the call-site registry the writer reads names from, and the decoder.
//!
//! # Encoding ([`kind::EVENT`](crate::kind::EVENT) payloads)
//!
//! All integers are little-endian.
//!
//! ```text
//! event   := time:u64 site:u64 [target] [thread] item*
//! time    := ns since the Unix epoch | raw clock ticks with the top bit set
//! target  := len:u16 bytes                      (only when site == 0)
//! thread  := 0xFF number:u32                    (the producer thread, see below)
//! item    := index:u8 value                     (0..=252: the call site's field #index)
//!          | 0xFD len:u8 name value             (a field named inline)
//!          | 0xFE site:u64 len:u32 field-items  (one enclosing span, outermost first)
//! value   := 0 len:u32 bytes    a string, printed quoted in text
//!          | 1 len:u32 bytes    text rendered on the caller (Debug/Display), printed as is
//!          | 2 u64 | 3 i64 | 4 f64 | 5 bool:u8 | 6 char:u32
//!          | 7 n:u8 value{n}    the arguments of the call site's deferred message format
//! ```
//!
//! The thread item is there only when a sink's format prints thread names
//! or ids ([`MakeFormat::needs_thread`](crate::MakeFormat::needs_thread),
//! read by front ends through [`Logger::records_thread`]): a small number
//! given to each thread on its first event, whose name and `ThreadId` the
//! thread registers then, once, for the writer to look up (see
//! [`EventBuf::thread`]).
//!
//! Front ends without call sites (the `log` facade's) give the source file
//! and line, when a format prints them, as the inline fields
//! [`LOCATION_FILE`] and [`LOCATION_LINE`], which formats show as the
//! location and not as fields.
//!
//! Call sites are identified by a [`SiteKey`]: the address of a `'static`
//! item that describes them (a `tracing` `Metadata`, a macro's static). The
//! front end registers a [`Callsite`] under that key once; the writer looks
//! names up by key, so an event carries no names, only values.
//!
//! An event larger than a record may be ([`Logger::max_record_len`]) is
//! cut by its front end with [`EventBuf::truncate_to`] before it is pushed,
//! into an event of the same form: the decoder sees nothing special, only
//! values that end in `… [truncated]`.
//!
//! [`Logger::max_record_len`]: crate::Logger::max_record_len
//! [`Logger::records_thread`]: crate::Logger::records_thread

mod callsite;
mod decode;
mod direct;
mod encode;
pub(crate) mod message;
mod thread;

pub use callsite::{register_callsite, Callsite, SiteKey};
pub use decode::{Args, Event, Item, Items, SpanFields, Value};
pub use encode::{with_event_buf, EventBuf, FieldName};

pub(crate) use callsite::{each_registered, listen as listen_callsites};
#[doc(hidden)]
pub use direct::Cursor;
pub(crate) use direct::{header_size, size};
use encode::HEADER;
pub(crate) use thread::current as thread_number;
pub(crate) use thread::{
    each as each_thread, listen as listen_threads, register_foreign as register_foreign_thread,
};

pub(crate) use callsite::{KeyHasher, SiteCache};
pub(crate) use decode::field_name as decode_field_name;
pub(crate) use decode::offset_in;
pub(crate) use decode::Reader as ByteReader;
pub(crate) use thread::ThreadCache;

/// The time field of an event happening now, for
/// [`EventBuf::begin_at`] and [`EventBuf::begin_inline`]: raw clock ticks
/// (one TSC read) once a logger has been built, which the writer thread
/// converts to wall-clock time.
///
/// # Examples
///
/// ```
/// let mut buf = nowait_core::event::EventBuf::new();
/// buf.begin_inline(nowait_core::event::timestamp(), "app");
/// ```
#[inline]
pub fn timestamp() -> u64 {
    crate::clock::now()
}

/// The inline field in which a front end without call sites (the `log`
/// facade's) gives an event's source file, when
/// [`Logger::records_location`](crate::Logger::records_location) asks for
/// it: first among the event's fields, a string. Formats show it as the
/// file ([`Text::with_file`](crate::Text::with_file)), never as a field.
/// The name is the one `tracing-log` uses.
///
/// # Examples
///
/// ```
/// use nowait_core::event::{EventBuf, FieldName, LOCATION_FILE, LOCATION_LINE};
///
/// let mut buf = EventBuf::new();
/// buf.begin_inline(0, "app");
/// buf.str(FieldName::Inline(LOCATION_FILE), "src/main.rs");
/// buf.u64(FieldName::Inline(LOCATION_LINE), 7);
/// ```
pub const LOCATION_FILE: &str = "log.file";
/// The inline field with the source line (a `u64`), next to
/// [`LOCATION_FILE`].
///
/// # Examples
///
/// ```
/// assert_eq!(nowait_core::event::LOCATION_LINE, "log.line");
/// ```
pub const LOCATION_LINE: &str = "log.line";

pub(crate) const ITEM_INLINE: u8 = 0xFD;
pub(crate) const ITEM_SPAN: u8 = 0xFE;
pub(crate) const ITEM_THREAD: u8 = 0xFF;
/// Highest field index an event can refer to.
pub(crate) const MAX_FIELD_INDEX: usize = 0xFC;

pub(crate) const T_STR: u8 = 0;
pub(crate) const T_RENDERED: u8 = 1;
pub(crate) const T_U64: u8 = 2;
pub(crate) const T_I64: u8 = 3;
pub(crate) const T_F64: u8 = 4;
pub(crate) const T_BOOL: u8 = 5;
pub(crate) const T_CHAR: u8 = 6;
pub(crate) const T_ARGS: u8 = 7;

#[cfg(test)]
mod tests;
