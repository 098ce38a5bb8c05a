//! Structured events as a `Format` reads them.
//!
//! Front ends (the `tracing` layer, the `log` front end, the macros) push
//! structured events as records of kind [`kind::EVENT`](crate::record::kind::EVENT)
//! in a compact binary form: a timestamp, the call site's [`SiteKey`], and
//! the typed values, copied as they are. The encoding is nowait's own and
//! may change between versions; what stays is this module's decoded view.
//! A custom format reads an event with [`Event::parse`], walks its
//! [`items`](Event::items) (fields, enclosing spans), and names the fields
//! from the event's [`Callsite`], found with [`lookup_callsite`] (once per
//! call site: the registry takes a lock).
//!
//! Decoding never panics: a truncated or corrupt payload ends the
//! iteration with [`Item::Malformed`].
//!
//! # Examples
//!
//! A format that writes the level, the target and each field as
//! `name=value`:
//!
//! ```
//! use nowait_core::event::{lookup_callsite, Event, FieldName, Item, Value};
//! use nowait_core::{Builder, Level, Sink};
//! use nowait_core::format::Format;
//! use nowait_core::record::{kind, Notice, Record};
//!
//! struct Fields;
//!
//! impl Format for Fields {
//!     fn format(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
//!         out.extend_from_slice(record.level().as_str().as_bytes());
//!         let event = (record.kind() == kind::EVENT)
//!             .then(|| Event::parse(record.payload()))
//!             .flatten();
//!         if let Some(event) = event {
//!             let site = event.site().and_then(lookup_callsite);
//!             let target = site.as_ref().map(|s| s.target()).or(event.target());
//!             out.push(b' ');
//!             out.extend_from_slice(target.unwrap_or("?").as_bytes());
//!             for item in event.items() {
//!                 let Item::Field { name, value } = item else { continue };
//!                 let name = match name {
//!                     FieldName::Index(i) => site.as_ref().and_then(|s| s.field(i)),
//!                     FieldName::Inline(name) => Some(name),
//!                 };
//!                 out.push(b' ');
//!                 nowait_core::format::escape_into(name.unwrap_or("?").as_bytes(), out);
//!                 out.push(b'=');
//!                 match value {
//!                     Value::U64(n) => out.extend_from_slice(n.to_string().as_bytes()),
//!                     Value::Str(s) => nowait_core::format::escape_into(s, out),
//!                     _ => out.extend_from_slice(b"..."),
//!                 }
//!             }
//!         }
//!         out.push(b'\n');
//!     }
//!
//!     fn notice(&mut self, notice: &Notice<'_>, out: &mut Vec<u8>) {
//!         out.extend_from_slice(notice.message().as_bytes());
//!         out.push(b'\n');
//!     }
//! }
//!
//! # let dir = tempfile::tempdir()?;
//! # let path = dir.path().join("app.log");
//! let make = |_: &nowait_core::format::SinkInfo| -> Box<dyn Format> { Box::new(Fields) };
//! let (logger, guard) = Builder::new().sink(Sink::file(&path).format(make)).build()?;
//! nowait_core::set_global(logger)?;
//! nowait_core::info!(target: "app", rows = 3u64, "done");
//! drop(guard);
//! assert_eq!(std::fs::read_to_string(&path)?, "INFO app message=... rows=3\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub(crate) mod callsite;
pub(crate) mod catalog;
mod decode;
pub(crate) mod direct;
pub(crate) mod encode;
pub(crate) mod message;
mod thread;
mod trace;
mod truncate;

pub use callsite::{lookup_callsite, Callsite, SiteKey};
pub use decode::{Args, Event, Item, Items, SpanFields, Value};
pub use encode::FieldName;
pub use trace::TraceContext;

// The encoding side, for nowait's own front ends through `__private`.
pub(crate) use callsite::register_callsite;
pub(crate) use encode::{with_event_buf, EventBuf, LOCATION_FILE, LOCATION_LINE};

pub(crate) use callsite::{each_registered, listen as listen_callsites, registered_len};
pub(crate) use direct::Cursor;
pub(crate) use direct::{header_size, size};
use encode::HEADER;
pub(crate) use thread::current as thread_number;
pub(crate) use thread::{
    each as each_thread, len as thread_count, listen as listen_threads,
    register_foreign as register_foreign_thread,
};

pub(crate) use callsite::{KeyHasher, SiteCache};
#[cfg(test)]
pub(crate) use decode::assert_decodes;
pub(crate) use decode::field_name as decode_field_name;
pub(crate) use decode::offset_in;
pub(crate) use decode::Reader as ByteReader;
pub(crate) use thread::ThreadCache;

pub(crate) const ITEM_TRACE: u8 = 0xFC;
pub(crate) const ITEM_INLINE: u8 = 0xFD;
pub(crate) const ITEM_SPAN: u8 = 0xFE;
pub(crate) const ITEM_THREAD: u8 = 0xFF;
/// Highest field index an event can refer to.
pub(crate) const MAX_FIELD_INDEX: usize = 0xFB;

pub(crate) const T_STR: u8 = 0;
pub(crate) const T_RENDERED: u8 = 1;
pub(crate) const T_U64: u8 = 2;
pub(crate) const T_I64: u8 = 3;
pub(crate) const T_F64: u8 = 4;
pub(crate) const T_BOOL: u8 = 5;
pub(crate) const T_CHAR: u8 = 6;
pub(crate) const T_ARGS: u8 = 7;
