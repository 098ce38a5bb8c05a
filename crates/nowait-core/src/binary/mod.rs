//! Binary log files: records written as the ring holds them, rendered
//! later.
//!
//! A text or JSON sink formats every record on the writer thread. A binary
//! sink (`Sink::binary`, or any file sink
//! with the [`Binary`] format, rolling files included) copies each record
//! as the front end encoded it, with the call sites and threads it names
//! described once per file, and leaves the formatting to whoever reads the
//! file: [`Reader`] decodes it into [`Entry`]s, which render through
//! [`Text`](crate::format::Text) or [`Json`](crate::format::Json) to the
//! bytes those sinks would have written (the `nowait cat` command does
//! this).
//!
//! Choose a binary file when the writer thread's formatting is the cost
//! that matters (many records per second, one core to spare for logging),
//! or to keep the typed values and render them several ways later. Choose
//! text when people or tools read the file as it is written.
//!
//! # The file (version 1)
//!
//! All integers are little-endian. A file is a sequence of frames; the
//! first is the header, and a header may appear again later (a process
//! that appends to the file starts with one), after which the keys of
//! call sites and numbers of threads mean what the entries after it say.
//!
//! ```text
//! header  := 0x89 "NWB" 0x0D 0x0A 0x1A 0x0A version:u32 0:u32   (16 bytes)
//! frame   := header | tag:u8 len:u32 body[len]
//! site    := tag 1: a call site, as the catalog encodes it (key, level, names, fields)
//! thread  := tag 2: a thread's number, name and id
//! record  := tag 3: flags:u8 level:u8 kind:u8 [time:u64] payload
//!            (flags bit 0: released from a backtrace buffer; bit 2: the
//!            time is there, when the writer handled a record that does
//!            not carry its own: a plain text record, a malformed event)
//! notice  := tag 4: flags:u8 level:u8 time:u64 len:u32 message
//!            [count:u64 reason:u8 site:len:u16 bytes rule:len:u16 bytes]
//!            (flags bit 0: a backtrace's marker line; bit 1: the
//!            suppressed-calls part is there)
//! ```
//!
//! A record's payload is the ring's, byte for byte, except that its time
//! is wall-clock nanoseconds (the writer converts a raw clock reading as
//! the text formats do, so a rendering shows the same instant). Event
//! payloads follow the event encoding (`event`); their call-site keys and
//! thread numbers refer to the site and thread frames since the last
//! header. Every file starts with a header and the site and thread frames
//! its writer has emitted so far, so each file of a rolling set reads on
//! its own.
//!
//! # Reading untrusted files
//!
//! [`Reader`] is total: frame lengths are checked against a cap and
//! against the bytes really there (memory grows with what is read, not
//! with what a length claims), nothing recurses, and call-site strings,
//! which the registry keeps for the life of the process, are capped per
//! reader. A file cut at any byte reads up to its last whole frame and
//! [`Reader::stop`] says where it stopped.
//!
//! # Examples
//!
//! ```
//! use nowait_core::binary::Reader;
//! use nowait_core::format::{Format, MakeFormat, SinkInfo, Text};
//! use nowait_core::{Builder, Sink};
//!
//! # let dir = tempfile::tempdir()?;
//! # let path = dir.path().join("app.nwb");
//! let (logger, guard) = Builder::new().sink(Sink::binary(&path)).build()?;
//! nowait_core::set_global(logger)?;
//! nowait_core::info!(target: "app", rows = 3u64, "done");
//! drop(guard);
//!
//! let mut text = Text::new().with_ansi(false).without_time().make_format(&SinkInfo::new("cat", false));
//! let mut out = Vec::new();
//! for entry in Reader::new(std::fs::File::open(&path)?) {
//!     entry?.render(&mut *text, &mut out);
//! }
//! assert_eq!(String::from_utf8(out)?, " INFO app: done rows=3\n");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod read;
mod write;

pub use read::{Entry, ReadError, ReadErrorKind, Reader, Stop};
pub use write::Binary;

/// The first eight bytes of a file (and of every header frame).
pub(crate) const MAGIC: [u8; 8] = *b"\x89NWB\r\n\x1a\n";
/// The format version this module writes, and the only one it reads.
pub const VERSION: u32 = 1;
/// Bytes in a header frame.
pub(crate) const HEADER_LEN: usize = 16;

/// A call site (the catalog's site entry).
pub(crate) const F_SITE: u8 = crate::event::catalog::E_SITE;
/// A thread (the catalog's thread entry).
pub(crate) const F_THREAD: u8 = crate::event::catalog::E_THREAD;
/// A record.
pub(crate) const F_RECORD: u8 = 3;
/// A notice.
pub(crate) const F_NOTICE: u8 = 4;

/// Record and notice flag: released from a backtrace buffer (a record), or
/// a backtrace's marker line (a notice).
pub(crate) const FLAG_KEPT: u8 = 1;
/// Notice flag: the suppressed-calls part follows the message.
pub(crate) const FLAG_SUPPRESSED: u8 = 2;
/// Record flag: the writer's time precedes the payload.
pub(crate) const FLAG_TIME: u8 = 4;

/// The longest frame body a reader accepts.
pub(crate) const MAX_FRAME: usize = crate::ring::MAX_CAPACITY;

/// The header frame.
pub(crate) fn header() -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..8].copy_from_slice(&MAGIC);
    h[8..12].copy_from_slice(&VERSION.to_le_bytes());
    h
}

#[cfg(test)]
mod tests;
