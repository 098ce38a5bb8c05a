//! The writing side: a [`Format`] that frames records instead of
//! rendering them.
//!
//! Per record, on the writer thread: an event is rewritten in the compact
//! form (`compact`) as it is walked, its time converted to wall-clock
//! nanoseconds; each call site and thread it names for the first time is
//! looked up once and its entry put before the record. An event the
//! compact form does not take, and any other record, is copied as the
//! ring holds it. Every entry emitted is also kept, so that
//! [`Format::file_start`] can start a new file with all of them.

use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;

use super::compact::{self, put_varint, SITE_FIRST, SITE_UNKNOWN};
use super::{
    header, FLAG_COMPACT, FLAG_KEPT, FLAG_KIND, FLAG_SUPPRESSED, FLAG_TIME, F_ANCHOR, F_NOTICE,
    F_RECORD, F_SITE, F_THREAD, LEVEL_SHIFT, MAGIC,
};
use crate::event::catalog::{site_entry, thread_entry};
use crate::event::{offset_in, Event, Item, KeyHasher, SiteCache, SiteKey, ThreadCache};
use crate::format::{Format, MakeFormat, SinkInfo};
use crate::record::{kind, Notice, Record};

/// The binary format (see [`binary`](crate::binary)): a [`MakeFormat`] for
/// file and rolling sinks whose files [`Reader`](super::Reader) reads.
///
/// Like the text formats, it asks front ends for the thread of each event
/// only when told to ([`with_thread_names`](Binary::with_thread_names)),
/// and for the source file and line of `log` records only with
/// [`with_location`](Binary::with_location), so that a binary sink costs
/// the request threads what a text sink without those costs.
///
/// # Examples
///
/// ```
/// use nowait_core::binary::Binary;
/// use nowait_core::sink::{Rolling, Sink};
///
/// # let dir = tempfile::tempdir()?;
/// let sink = Sink::rolling(Rolling::new(dir.path()).filename_suffix("nwb"))
///     .format(Binary::new().with_thread_names(true));
/// let (_logger, _guard) = nowait_core::Builder::new().sink(sink).build()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Binary {
    threads: bool,
    location: bool,
}

impl Binary {
    /// The binary format, recording neither threads nor `log` locations.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::format::MakeFormat;
    ///
    /// assert!(!nowait_core::binary::Binary::new().needs_thread());
    /// ```
    pub const fn new() -> Binary {
        Binary {
            threads: false,
            location: false,
        }
    }

    /// Whether events record the thread they were logged on (its name and
    /// id are written once per file), so that a rendering can show them.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::format::MakeFormat;
    ///
    /// assert!(nowait_core::binary::Binary::new().with_thread_names(true).needs_thread());
    /// ```
    pub const fn with_thread_names(mut self, on: bool) -> Binary {
        self.threads = on;
        self
    }

    /// Whether `log` records carry their source file and line (events
    /// with a call site have them there anyway).
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::format::MakeFormat;
    ///
    /// assert!(nowait_core::binary::Binary::new().with_location(true).needs_location());
    /// ```
    pub const fn with_location(mut self, on: bool) -> Binary {
        self.location = on;
        self
    }
}

impl MakeFormat for Binary {
    fn make_format(&self, _sink: &SinkInfo) -> Box<dyn Format> {
        Box::new(BinaryFormat::default())
    }

    fn needs_thread(&self) -> bool {
        self.threads
    }

    fn needs_location(&self) -> bool {
        self.location
    }
}

type KeyMap<K, V> = HashMap<K, V, BuildHasherDefault<KeyHasher>>;
type KeySet<T> = HashSet<T, BuildHasherDefault<KeyHasher>>;

/// One sink's binary format: what it has described so far.
#[derive(Debug)]
pub(crate) struct BinaryFormat {
    names: Names,
    /// Room the compact encoder writes a record's event into before it is
    /// appended: made once, reused for every record.
    scratch: Vec<u8>,
    /// The time of the last compact event written: what the next one's
    /// time is the difference from.
    prev_time: u64,
}

impl Default for BinaryFormat {
    fn default() -> Self {
        BinaryFormat {
            names: Names {
                sites: SiteCache::default(),
                threads: ThreadCache::default(),
                site_codes: KeyMap::default(),
                recent_sites: Box::new([(0, 0); RECENT_SITES]),
                next_site: SITE_FIRST,
                seen_threads: KeySet::default(),
                catalog: Vec::new(),
                pending: Vec::new(),
            },
            scratch: Vec::new(),
            prev_time: 0,
        }
    }
}

/// Appends a frame: `tag`, the body's length as a varint, the body.
fn frame(out: &mut Vec<u8>, tag: u8, body: &[u8]) {
    out.push(tag);
    put_varint(out, body.len() as u64);
    out.extend_from_slice(body);
}

/// The file's catalog: the call sites and threads described so far, and
/// what the encoder asks of it as it meets them.
#[derive(Debug)]
struct Names {
    sites: SiteCache,
    threads: ThreadCache,
    /// Each call site met so far, and its code in events: the number its
    /// site frame gives it, or [`SITE_UNKNOWN`] (looked up once, not
    /// registered here, never described).
    site_codes: KeyMap<u64, u64>,
    /// The last codes looked up, by key: one compare per event for a call
    /// site seen recently, before `site_codes`' hash lookup.
    recent_sites: Box<[(u64, u64); RECENT_SITES]>,
    /// The number the next call site described gets.
    next_site: u64,
    seen_threads: KeySet<u32>,
    /// Every entry emitted, framed, in order: what a new file starts with.
    catalog: Vec<u8>,
    /// Entries the record at hand describes for the first time, framed.
    pending: Vec<u8>,
}

impl compact::Names for Names {
    #[inline]
    fn site(&mut self, key: u64) -> u64 {
        // Keys are addresses of statics: the bits above the alignment
        // spread them over the slots.
        let slot = (key >> 3) as usize % RECENT_SITES;
        if self.recent_sites[slot].0 == key {
            return self.recent_sites[slot].1;
        }
        let code = self.site_code(key);
        self.recent_sites[slot] = (key, code);
        code
    }

    #[inline]
    fn thread(&mut self, number: u32) {
        if number == 0 || !self.seen_threads.insert(number) {
            return;
        }
        if let Some(info) = self.threads.get(number) {
            let entry = thread_entry(number, info.name.as_deref(), &info.id, &info.id_padded);
            debug_assert_eq!(entry[0], F_THREAD);
            let at = self.pending.len();
            frame(&mut self.pending, F_THREAD, &entry[ENTRY_HEAD..]);
            self.catalog.extend_from_slice(&self.pending[at..]);
        }
    }
}

impl Names {
    /// [`compact::Names::site`] past the recent codes.
    #[inline(never)]
    fn site_code(&mut self, key: u64) -> u64 {
        if let Some(&code) = self.site_codes.get(&key) {
            return code;
        }
        let code = match self.sites.get(key) {
            Some(site) => {
                let number = self.next_site;
                self.next_site += 1;
                // The site entry, its key replaced by the number events
                // name it by.
                let entry = site_entry(SiteKey::from_raw(number), &site);
                debug_assert_eq!(entry[0], F_SITE);
                let at = self.pending.len();
                frame(&mut self.pending, F_SITE, &entry[ENTRY_HEAD..]);
                self.catalog.extend_from_slice(&self.pending[at..]);
                number
            }
            None => SITE_UNKNOWN,
        };
        self.site_codes.insert(key, code);
        code
    }
}

/// Bytes before an entry's body as the catalog builds it (tag, u32 length).
const ENTRY_HEAD: usize = 5;

/// The most scratch room [`BinaryFormat`] keeps between records.
const SCRATCH_KEPT: usize = 64 * 1024;

/// Slots of [`Names::recent_sites`].
const RECENT_SITES: usize = 64;

impl BinaryFormat {
    fn record(&mut self, record: &Record<'_>, flags: u8, out: &mut Vec<u8>) {
        let payload = record.payload();
        let level = (record.level() as u8) << LEVEL_SHIFT;
        let at = out.len();
        let mut written = false;
        if record.kind() == kind::EVENT && payload.len() >= 8 {
            let raw = u64::from_le_bytes(payload[..8].try_into().unwrap_or_default());
            // The thread's conversion, which every sink of the writer
            // shares: a binary log shows the instant a text sink beside it
            // prints.
            let wall = crate::record::clock::to_unix_nanos(raw);
            let room = compact::room_for(payload.len());
            if self.scratch.len() < room {
                self.scratch.resize(room, 0);
            }
            let encoded = compact::encode_into(
                payload,
                wall,
                self.prev_time,
                &mut self.names,
                &mut self.scratch,
            );
            if let Some(n) = encoded {
                self.prev_time = wall;
                let body = &self.scratch[..n];
                // The frame: its tag, the body's length (the head byte and
                // the compact event), the head byte, the event.
                out.reserve(n + 12);
                out.push(F_RECORD);
                compact::put_varint(out, n as u64 + 1);
                out.push(flags | FLAG_COMPACT | level);
                out.extend_from_slice(body);
                written = true;
            }
            // Room made for a record far larger than usual is given back,
            // not kept for the sink's life.
            if self.scratch.len() > SCRATCH_KEPT {
                self.scratch = Vec::new();
            }
        }
        if !written {
            out.push(F_RECORD);
            // The body's length, one byte reserved (more made room for below).
            out.push(0);
            let body_at = out.len();
            self.raw_record(record, flags | level, out);
            let len = out.len() - body_at;
            if len < 0x80 {
                out[body_at - 1] = len as u8;
            } else {
                let (v, n) = compact::varint_bytes(len as u64);
                out.splice(body_at - 1..body_at, v[..n].iter().copied());
            }
        }
        // Call sites and threads the record named for the first time are
        // described before it.
        if !self.names.pending.is_empty() {
            out.splice(at..at, self.names.pending.drain(..));
        }
    }

    /// A record stored as the ring holds it: an event the compact form
    /// does not take (malformed), a plain text record, any other kind.
    fn raw_record(&mut self, record: &Record<'_>, mut flags: u8, out: &mut Vec<u8>) {
        let payload = record.payload();
        let mut wall = None;
        // Where call-site keys are in the payload, with the codes they
        // are written as (the reader maps codes, not keys).
        let mut keys: Vec<(usize, u64)> = Vec::new();
        if record.kind() == kind::EVENT {
            if let Some(event) = Event::parse(payload) {
                use compact::Names as _;
                wall = Some(event.time_nanos());
                let names = &mut self.names;
                if let Some(site) = event.site() {
                    keys.push((8, names.site(site.get())));
                }
                if let Some(n) = event.thread() {
                    names.thread(n);
                }
                for item in event.items() {
                    match item {
                        Item::Span { site, fields } => {
                            // `0xFE site:u64 len:u32` precede the fields.
                            let Some(at) = offset_in(payload, fields.bytes()).checked_sub(12)
                            else {
                                break;
                            };
                            keys.push((at, names.site(site.get())));
                        }
                        Item::Field { .. } => {}
                        Item::Malformed => break,
                    }
                }
            }
        }
        let kind = record.kind();
        if kind != kind::EVENT {
            flags |= FLAG_KIND;
        }
        // A record without a time of its own is stamped when it is
        // handled, as the formats stamp it.
        let stamp = wall.is_none().then(crate::format::render_time);
        if stamp.is_some() {
            flags |= FLAG_TIME;
        }
        out.push(flags);
        if kind != kind::EVENT {
            out.push(kind);
        }
        if let Some(stamp) = stamp {
            out.extend_from_slice(&stamp.to_le_bytes());
        }
        let at = out.len();
        out.extend_from_slice(payload);
        if let Some(wall) = wall {
            out[at..at + 8].copy_from_slice(&wall.to_le_bytes());
        }
        for (key_at, code) in keys {
            out[at + key_at..at + key_at + 8].copy_from_slice(&code.to_le_bytes());
        }
    }

    fn notice_frame(notice: &Notice<'_>, mut flags: u8, out: &mut Vec<u8>) {
        let message = clip(notice.message(), u32::MAX as usize);
        if notice.suppressed().is_some() {
            flags |= FLAG_SUPPRESSED;
        }
        let mut body = Vec::with_capacity(16 + message.len());
        body.extend_from_slice(&[flags, notice.level() as u8]);
        let time = crate::format::system_nanos(notice.time());
        body.extend_from_slice(&time.to_le_bytes());
        body.extend_from_slice(&(message.len() as u32).to_le_bytes());
        body.extend_from_slice(message.as_bytes());
        if let Some(s) = notice.suppressed() {
            body.extend_from_slice(&s.count().to_le_bytes());
            body.push(match s.reason() {
                crate::record::SuppressReason::RateLimit => 0,
                crate::record::SuppressReason::Sampling => 1,
            });
            for part in [s.site(), s.rule()] {
                let part = clip(part, u16::MAX as usize);
                body.extend_from_slice(&(part.len() as u16).to_le_bytes());
                body.extend_from_slice(part.as_bytes());
            }
        }
        frame(out, F_NOTICE, &body);
    }
}

/// The longest prefix of `s` of at most `max` bytes that ends on a
/// character boundary.
fn clip(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

impl Format for BinaryFormat {
    fn format(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
        self.record(record, 0, out);
    }

    fn notice(&mut self, notice: &Notice<'_>, out: &mut Vec<u8>) {
        Self::notice_frame(notice, 0, out);
    }

    fn format_kept(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
        self.record(record, FLAG_KEPT, out);
    }

    fn kept_notice(&mut self, notice: &Notice<'_>, out: &mut Vec<u8>) {
        Self::notice_frame(notice, FLAG_KEPT, out);
    }

    fn file_start(&mut self, out: &mut Vec<u8>, unsent: &[u8]) {
        out.extend_from_slice(&header());
        out.extend_from_slice(&self.names.catalog);
        // The time the first compact event after these counts from: the
        // format's time now, less the differences of the records it
        // formatted before that the file gets after this (their times
        // were counted from the old file's events).
        let anchor = self.prev_time.wrapping_sub(time_since(unsent));
        frame(out, F_ANCHOR, &anchor.to_le_bytes());
    }
}

/// The sum of the time differences of the compact events in `unsent`
/// (whole frames this format wrote), up to the first header (what follows
/// a header counts from its own anchor); 0 for bytes that are not such
/// frames.
fn time_since(unsent: &[u8]) -> u64 {
    let mut sum = 0u64;
    let mut rest = unsent;
    while let Some(&tag) = rest.first() {
        if tag == MAGIC[0] {
            break;
        }
        let Some((len, used)) = compact::varint_at(&rest[1..]) else {
            return 0;
        };
        let Some(body) = usize::try_from(len)
            .ok()
            .and_then(|len| rest.get(1 + used..(1 + used).checked_add(len)?))
        else {
            return 0;
        };
        if tag == F_RECORD {
            if let Some((&head, event)) = body.split_first() {
                if head & FLAG_COMPACT != 0 {
                    let Some(d) = compact::time_delta(event) else {
                        return 0;
                    };
                    sum = sum.wrapping_add(d as u64);
                }
            }
        }
        rest = &rest[1 + used + body.len()..];
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{EventBuf, FieldName};
    use crate::format::Format;
    use crate::Level;

    /// One INFO event with a string field of `len` bytes, as a sink
    /// formats it.
    fn format_event(format: &mut BinaryFormat, len: usize, out: &mut Vec<u8>) {
        let mut buf = EventBuf::new();
        buf.begin_inline(5, "app");
        buf.str(FieldName::Inline("s"), &"x".repeat(len));
        format.format(&Record::new(Level::Info, kind::EVENT, buf.as_bytes()), out);
    }

    #[test]
    fn scratch_room_for_a_large_record_is_given_back() {
        let mut format = BinaryFormat::default();
        let mut out = Vec::new();
        format.file_start(&mut out, &[]);
        format_event(&mut format, 100, &mut out);
        let usual = format.scratch.capacity();
        assert!(usual > 0 && usual <= SCRATCH_KEPT);
        format_event(&mut format, 4 * SCRATCH_KEPT, &mut out);
        assert!(format.scratch.capacity() <= SCRATCH_KEPT);
        // Both were written compact, the large one whole.
        format_event(&mut format, 100, &mut out);
        let entries: Vec<_> = super::super::Reader::new(&out[..])
            .map(|e| e.expect("reads"))
            .filter(|e| !e.is_notice())
            .collect();
        assert_eq!(entries.len(), 3);
        let lens: Vec<_> = entries
            .iter()
            .map(|e| e.field("s").map(|s| s.len()))
            .collect();
        assert_eq!(lens, [Some(100), Some(4 * SCRATCH_KEPT), Some(100)]);
    }
}
