//! The writing side: a [`Format`] that frames records instead of
//! rendering them.
//!
//! Per record, on the writer thread: the event header is parsed (time,
//! call site, thread) and its items walked for span call sites; each call
//! site and thread met for the first time is looked up once and its entry
//! appended before the record; then the record is copied with its time
//! converted to wall-clock nanoseconds. Every entry emitted is also kept,
//! so that [`Format::file_start`] can start a new file with all of them.

use std::collections::HashSet;
use std::hash::BuildHasherDefault;

use super::{header, FLAG_KEPT, FLAG_SUPPRESSED, FLAG_TIME, F_NOTICE, F_RECORD, F_SITE, F_THREAD};
use crate::event::catalog::{site_entry, thread_entry};
use crate::event::{Event, Item, KeyHasher, SiteCache, SiteKey, ThreadCache};
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

type KeySet<T> = HashSet<T, BuildHasherDefault<KeyHasher>>;

/// One sink's binary format: what it has described so far.
#[derive(Debug, Default)]
pub(crate) struct BinaryFormat {
    sites: SiteCache,
    threads: ThreadCache,
    /// Call sites whose entry is in `catalog` (or that are unknown here:
    /// looked up once, never described).
    seen_sites: KeySet<u64>,
    seen_threads: KeySet<u32>,
    /// Every entry emitted, in order: what a new file starts with.
    catalog: Vec<u8>,
    /// Span call sites of the record at hand (reused).
    spans: Vec<u64>,
}

impl BinaryFormat {
    fn describe_site(&mut self, key: u64, out: &mut Vec<u8>) {
        if key == 0 || !self.seen_sites.insert(key) {
            return;
        }
        if let Some(site) = self.sites.get(key) {
            let entry = site_entry(SiteKey::from_raw(key), &site);
            debug_assert_eq!(entry[0], F_SITE);
            out.extend_from_slice(&entry);
            self.catalog.extend_from_slice(&entry);
        }
    }

    fn describe_thread(&mut self, number: u32, out: &mut Vec<u8>) {
        if number == 0 || !self.seen_threads.insert(number) {
            return;
        }
        if let Some(info) = self.threads.get(number) {
            let entry = thread_entry(number, info.name.as_deref(), &info.id, &info.id_padded);
            debug_assert_eq!(entry[0], F_THREAD);
            out.extend_from_slice(&entry);
            self.catalog.extend_from_slice(&entry);
        }
    }

    fn record(&mut self, record: &Record<'_>, mut flags: u8, out: &mut Vec<u8>) {
        let payload = record.payload();
        let mut wall = None;
        if record.kind() == kind::EVENT {
            if let Some(event) = Event::parse(payload) {
                wall = Some(event.time_nanos());
                if let Some(site) = event.site() {
                    self.describe_site(site.get(), out);
                }
                if let Some(n) = event.thread() {
                    self.describe_thread(n, out);
                }
                self.spans.clear();
                for item in event.items() {
                    match item {
                        Item::Span { site, .. } => self.spans.push(site.get()),
                        Item::Field { .. } => {}
                        Item::Malformed => break,
                    }
                }
                for i in 0..self.spans.len() {
                    self.describe_site(self.spans[i], out);
                }
            }
        }
        // A record without a time of its own is stamped when it is
        // handled, as the formats stamp it.
        let stamp = wall.is_none().then(crate::format::render_time);
        let extra = if stamp.is_some() { 3 + 8 } else { 3 };
        if stamp.is_some() {
            flags |= FLAG_TIME;
        }
        let len = u32::try_from(payload.len().saturating_add(extra)).unwrap_or(u32::MAX);
        out.push(F_RECORD);
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(&[flags, record.level() as u8, record.kind()]);
        if let Some(stamp) = stamp {
            out.extend_from_slice(&stamp.to_le_bytes());
        }
        let at = out.len();
        out.extend_from_slice(payload);
        if let Some(wall) = wall {
            out[at..at + 8].copy_from_slice(&wall.to_le_bytes());
        }
    }

    fn notice_frame(notice: &Notice<'_>, mut flags: u8, out: &mut Vec<u8>) {
        let message = clip(notice.message(), u32::MAX as usize);
        if notice.suppressed().is_some() {
            flags |= FLAG_SUPPRESSED;
        }
        out.push(F_NOTICE);
        let len_at = out.len();
        out.extend_from_slice(&[0; 4]);
        out.extend_from_slice(&[flags, notice.level() as u8]);
        let time = crate::format::system_nanos(notice.time());
        out.extend_from_slice(&time.to_le_bytes());
        out.extend_from_slice(&(message.len() as u32).to_le_bytes());
        out.extend_from_slice(message.as_bytes());
        if let Some(s) = notice.suppressed() {
            out.extend_from_slice(&s.count().to_le_bytes());
            out.push(match s.reason() {
                crate::record::SuppressReason::RateLimit => 0,
                crate::record::SuppressReason::Sampling => 1,
            });
            for part in [s.site(), s.rule()] {
                let part = clip(part, u16::MAX as usize);
                out.extend_from_slice(&(part.len() as u16).to_le_bytes());
                out.extend_from_slice(part.as_bytes());
            }
        }
        let len = u32::try_from(out.len() - len_at - 4).unwrap_or(u32::MAX);
        out[len_at..len_at + 4].copy_from_slice(&len.to_le_bytes());
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

    fn file_start(&mut self, out: &mut Vec<u8>) {
        out.extend_from_slice(&header());
        out.extend_from_slice(&self.catalog);
    }
}
