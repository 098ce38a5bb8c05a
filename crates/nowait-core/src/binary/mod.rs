//! Binary log files: records written as typed values, compactly, and
//! rendered later.
//!
//! A text or JSON sink formats every record on the writer thread. A binary
//! sink (`Sink::binary`, or any file sink
//! with the [`Binary`] format, rolling files included) stores each record's
//! values as the front end encoded them, in a compact form (a time
//! difference, a call-site number, varints), with the call sites and
//! threads it names described once per file, and leaves the formatting to
//! whoever reads the file: [`Reader`] decodes it into [`Entry`]s, which render through
//! [`Text`](crate::format::Text) or [`Json`](crate::format::Json) to the
//! bytes those sinks would have written (the `nowait cat` command does
//! this).
//!
//! Choose a binary file when the writer thread's formatting is the cost
//! that matters (many records per second, one core to spare for logging),
//! or to keep the typed values and render them several ways later. Choose
//! text when people or tools read the file as it is written.
//!
//! # The file (version 2)
//!
//! All fixed-size integers are little-endian; a varint is unsigned LEB128
//! in its shortest form. A file is a sequence of frames; the first is the
//! header, and a header may appear again later (a process that appends to
//! the file starts with one), after which the call-site numbers, thread
//! numbers and the time chain mean what the frames after it say.
//!
//! ```text
//! header  := 0x89 "NWB" 0x0D 0x0A 0x1A 0x0A version:u32 0:u32   (16 bytes)
//! frame   := header | tag:u8 len:varint body[len]
//! site    := tag 1: a call site, as the catalog encodes it (number, level, names,
//!            fields): events name it by its number (2, 3, ...)
//! thread  := tag 2: a thread's number, name and id
//! record  := tag 3: head:u8 [kind:u8] [time:u64] payload
//!            head: bits 5-7 the level; bit 0 released from a backtrace buffer;
//!            bit 2 the time is there (the writer's, for a record without one of
//!            its own); bit 3 the kind is there (else an event); bit 4 the payload
//!            is a compact event
//! notice  := tag 4: flags:u8 level:u8 time:u64 len:u32 message
//!            [count:u64 reason:u8 site:len:u16 bytes rule:len:u16 bytes]
//!            (flags bit 0: a backtrace's marker line; bit 1: the
//!            suppressed-calls part is there)
//! anchor  := tag 5: time:u64, what the next compact event's time differs from
//! ```
//!
//! A compact event (`compact`) stores its time as the difference from the
//! previous compact event's (or the last anchor's), its call sites as
//! site-frame numbers, and its lengths and integers as varints; it reads
//! back into the event encoding (`event`), byte for byte what the writer
//! was handed, with its time in wall-clock nanoseconds. Any other record's
//! payload is the ring's, byte for byte, except that an event's time is
//! wall-clock nanoseconds and its call-site keys are site-frame numbers.
//! Every file starts with a header, the site and thread frames its writer
//! has emitted so far and an anchor, so each file of a rolling set reads
//! on its own.
//!
//! Version 1 (read, no longer written) framed with a `u32` length, stored
//! every record's payload as the ring's, and named call sites by key.
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

mod compact;
mod read;
mod write;

pub use read::{Entry, ReadError, ReadErrorKind, Reader, Stop};
pub use write::Binary;

/// The first eight bytes of a file (and of every header frame).
pub(crate) const MAGIC: [u8; 8] = *b"\x89NWB\r\n\x1a\n";
/// The format version this module writes (it reads this one and every
/// earlier one).
pub const VERSION: u32 = 2;
/// The first format version.
pub(crate) const VERSION_1: u32 = 1;
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
/// The time the next compact event's time differs from (version 2).
pub(crate) const F_ANCHOR: u8 = 5;

/// Record and notice flag: released from a backtrace buffer (a record), or
/// a backtrace's marker line (a notice).
pub(crate) const FLAG_KEPT: u8 = 1;
/// Notice flag: the suppressed-calls part follows the message.
pub(crate) const FLAG_SUPPRESSED: u8 = 2;
/// Record flag: the writer's time precedes the payload.
pub(crate) const FLAG_TIME: u8 = 4;
/// Record flag (version 2): the kind precedes the payload (else an event).
pub(crate) const FLAG_KIND: u8 = 8;
/// Record flag (version 2): the payload is a compact event.
pub(crate) const FLAG_COMPACT: u8 = 16;
/// Where the level is in a version-2 record's head byte.
pub(crate) const LEVEL_SHIFT: u8 = 5;

/// The longest frame body a reader accepts.
pub(crate) const MAX_FRAME: usize = crate::ring::MAX_CAPACITY;

/// The header frame.
pub(crate) fn header() -> [u8; HEADER_LEN] {
    let mut h = [0u8; HEADER_LEN];
    h[..8].copy_from_slice(&MAGIC);
    h[8..12].copy_from_slice(&VERSION.to_le_bytes());
    h
}

/// The compact form's fuzz target (see `__private::fuzz::binary_compact`).
#[cfg(any(fuzzing, test))]
pub(crate) fn fuzz_compact(data: &[u8]) {
    let Some((&control, bytes)) = data.split_first() else {
        return;
    };
    let prev = u64::from(control).wrapping_mul(0x0123_4567_89AB_CDEF);
    let mut payload = vec![0x5A];
    if let Some(time) = compact::decode(bytes, prev, &compact::AsIs, &mut payload) {
        let mut again = vec![0xA5];
        assert!(compact::encode(
            &payload[1..],
            time,
            prev,
            &mut compact::AsIs,
            &mut again
        ));
        assert_eq!(again[1..], *bytes);
    } else {
        assert_eq!(payload, [0x5A]);
    }
    if bytes.len() >= 8 {
        let time = u64::from_le_bytes(bytes[..8].try_into().unwrap_or_default());
        let mut body = vec![0xA5];
        if compact::encode(bytes, time, prev, &mut compact::AsIs, &mut body) {
            let mut back = vec![0x5A];
            assert_eq!(
                compact::decode(&body[1..], prev, &compact::AsIs, &mut back),
                Some(time)
            );
            assert_eq!(back[1..], *bytes);
        } else {
            assert_eq!(body, [0xA5]);
        }
    }
}

#[cfg(test)]
mod tests;
