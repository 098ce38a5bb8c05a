//! The call-site catalog as bytes: the entries that describe a process's
//! call sites and threads to another process (a file left by a process
//! that died, a log file read later), and the reading side,
//! which registers them here and rewrites that process's events to name
//! them.
//!
//! ```text
//! entry   := tag:u8 len:u32 body
//! site    := key:u64 level:u8 line:u32 target:str name:str module:opt file:opt
//!            format:opt n:u16 field:str{n}             (tag 1; line u32::MAX: none)
//! thread  := number:u32 name:opt id:str id_padded:str  (tag 2)
//! str     := len:u16 UTF-8 bytes
//! opt     := 0 | 1 str
//! ```
//!
//! Reading is total: an entry that does not parse is skipped, strings
//! are length-checked against the bytes there, and what the entries may
//! register (and leak, for the registries' `'static` names) is capped.

use std::collections::HashMap;

use super::decode::{offset_in, Reader};
use super::{register_callsite, Callsite, Event, Item, SiteKey};
use crate::level::Level;

/// Entry bytes all catalogs of the process may register (and leak), so
/// that reading file after file of foreign call sites (a fuzzer, a
/// reader of untrusted logs) cannot grow the registries without bound.
const PROCESS_BUDGET: usize = 256 << 20;

static REGISTERED: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Takes `n` bytes of [`PROCESS_BUDGET`]; `false` when it is spent.
fn take_process_budget(n: usize) -> bool {
    use std::sync::atomic::Ordering::Relaxed;
    REGISTERED
        .fetch_update(Relaxed, Relaxed, |used| {
            used.checked_add(n).filter(|&u| u <= PROCESS_BUDGET)
        })
        .is_ok()
}

/// A key no call site of this process can have: the address of a byte
/// allocated for it, kept for the life of the process.
fn fresh_key() -> Option<SiteKey> {
    // The boxes are the point: each byte's address is a key, and must
    // not move when the list grows.
    #[allow(clippy::vec_box)]
    static KEYS: std::sync::Mutex<Vec<Box<u8>>> = std::sync::Mutex::new(Vec::new());
    let byte = Box::new(0u8);
    let key = SiteKey::from_raw(&*byte as *const u8 as u64);
    KEYS.lock().ok()?.push(byte);
    Some(key)
}

/// This process's call sites and threads by content (an entry's bytes
/// after its key or number), and their keys and numbers: what catalog
/// entries are matched against, so that a site or thread read again
/// (another file of the same program, the same file read twice) maps to
/// the one registered before instead of registering again.
static INDEX: std::sync::Mutex<Index> = std::sync::Mutex::new(Index {
    sites: None,
    threads: None,
    seen: (usize::MAX, usize::MAX),
});

/// Keys or numbers by an entry's content.
type ByContent<V> = HashMap<Vec<u8>, V>;

struct Index {
    sites: Option<ByContent<u64>>,
    threads: Option<ByContent<u32>>,
    /// How many call sites and threads the registries held when the maps
    /// last matched them.
    seen: (usize, usize),
}

impl Index {
    /// Rebuilds a map from its registry if anything but a catalog
    /// registered since (a call site of this program met for the first
    /// time, a new thread): each catalog entry costs a lookup, and only
    /// a registration the index did not make costs a walk of the registry.
    /// Returns the two maps, and the counts to bump for what the caller
    /// registers.
    fn sync(
        &mut self,
    ) -> (
        &mut ByContent<u64>,
        &mut ByContent<u32>,
        &mut (usize, usize),
    ) {
        let sites = crate::event::registered_len();
        if sites != self.seen.0 || self.sites.is_none() {
            let mut map = HashMap::new();
            crate::event::each_registered(|key, site| {
                map.insert(site_entry(key, site)[SITE_CONTENT..].to_vec(), key.get());
            });
            self.sites = Some(map);
            self.seen.0 = sites;
        }
        let threads = crate::event::thread_count();
        if threads != self.seen.1 || self.threads.is_none() {
            let mut map = HashMap::new();
            crate::event::each_thread(|n, name, id, padded| {
                map.insert(
                    thread_entry(n, name, id, padded)[THREAD_CONTENT..].to_vec(),
                    n,
                );
            });
            self.threads = Some(map);
            self.seen.1 = threads;
        }
        let Index {
            sites,
            threads,
            seen,
        } = self;
        (
            sites.get_or_insert_with(HashMap::new),
            threads.get_or_insert_with(HashMap::new),
            seen,
        )
    }
}

/// A call-site entry's tag.
pub(crate) const E_SITE: u8 = 1;
/// A thread entry's tag.
pub(crate) const E_THREAD: u8 = 2;

fn u64_at(b: &[u8], at: usize) -> u64 {
    b.get(at..at.saturating_add(8))
        .and_then(|w| w.try_into().ok())
        .map_or(0, u64::from_le_bytes)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    b.get(at..at.saturating_add(4))
        .and_then(|w| w.try_into().ok())
        .map_or(0, u32::from_le_bytes)
}

pub(crate) struct Entry(pub(crate) Vec<u8>);

impl Entry {
    pub(crate) fn new(tag: u8) -> Entry {
        Entry(vec![tag, 0, 0, 0, 0])
    }
    pub(crate) fn str(&mut self, s: &str) {
        let s = &s.as_bytes()[..s.len().min(u16::MAX as usize)];
        self.0.extend_from_slice(&(s.len() as u16).to_le_bytes());
        self.0.extend_from_slice(s);
    }
    pub(crate) fn opt(&mut self, s: Option<&str>) {
        match s {
            Some(s) => {
                self.0.push(1);
                self.str(s);
            }
            None => self.0.push(0),
        }
    }
    pub(crate) fn done(mut self) -> Vec<u8> {
        let len = (self.0.len() - 5) as u32;
        self.0[1..5].copy_from_slice(&len.to_le_bytes());
        self.0
    }
}

/// Where a site entry's content starts (after tag, length and key).
pub(crate) const SITE_CONTENT: usize = 1 + 4 + 8;
/// Where a thread entry's content starts (after tag, length and number).
pub(crate) const THREAD_CONTENT: usize = 1 + 4 + 4;

pub(crate) fn site_entry(key: SiteKey, site: &Callsite) -> Vec<u8> {
    let mut e = Entry::new(E_SITE);
    e.0.extend_from_slice(&key.get().to_le_bytes());
    e.0.push(site.level() as u8);
    e.0.extend_from_slice(&site.line().unwrap_or(u32::MAX).to_le_bytes());
    e.str(site.target());
    e.str(site.name());
    e.opt(site.module_path());
    e.opt(site.file());
    e.opt(site.message_format_str());
    let fields: Vec<&str> = (0..).map_while(|i| site.field(i)).collect();
    e.0.extend_from_slice(&(fields.len() as u16).to_le_bytes());
    for f in fields {
        e.str(f);
    }
    e.done()
}

pub(crate) fn thread_entry(number: u32, name: Option<&str>, id: &str, id_padded: &str) -> Vec<u8> {
    let mut e = Entry::new(E_THREAD);
    e.0.extend_from_slice(&number.to_le_bytes());
    e.opt(name);
    e.str(id);
    e.str(id_padded);
    e.done()
}

/// The catalog's strings, on top of the payload reader's fields.
trait ReadStr<'a> {
    /// A string of the other process, checked against the bytes there.
    fn str(&mut self) -> Option<&'a str>;
    fn opt(&mut self) -> Option<Option<&'a str>>;
}

impl<'a> ReadStr<'a> for Reader<'a> {
    fn str(&mut self) -> Option<&'a str> {
        let len = self.u16()?;
        std::str::from_utf8(self.take(usize::from(len))?).ok()
    }
    fn opt(&mut self) -> Option<Option<&'a str>> {
        match self.u8()? {
            0 => Some(None),
            _ => Some(Some(self.str()?)),
        }
    }
}

/// Another process's call sites and threads, registered again here under
/// new keys and numbers.
///
/// A site or thread that is also one of this process's (the same program,
/// restarted), or that an earlier entry registered already, maps to that
/// one instead of registering again, so reading the same catalog twice
/// (a crash loop's files, each file of a rolling set) does not grow the
/// registries. Strings of new entries are leaked for the registries'
/// `'static` names, at most `budget` bytes of entries per catalog and
/// [`PROCESS_BUDGET`] for the whole process.
#[derive(Default)]
pub(crate) struct Catalog {
    /// The other process's site keys, and the keys registered here.
    pub(crate) sites: HashMap<u64, u64>,
    /// The other process's thread numbers, and the numbers registered here.
    pub(crate) threads: HashMap<u32, u32>,
    /// Entry bytes that may still be registered (and leaked).
    budget: usize,
    /// What the key of a call site no entry describes becomes (a key
    /// registered nowhere), or `None` to keep it.
    pub(crate) unknown_site: Option<u64>,
}

impl std::fmt::Debug for Catalog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Catalog")
            .field("sites", &self.sites.len())
            .field("threads", &self.threads.len())
            .finish()
    }
}

impl Catalog {
    /// An empty catalog that registers at most `budget` bytes of new
    /// entries.
    pub(crate) fn with_budget(budget: usize) -> Catalog {
        Catalog {
            budget,
            ..Catalog::default()
        }
    }

    /// Reads a run of entries (`tag:u8 len:u32 body`), up to the first
    /// that is cut short.
    pub(crate) fn load(bytes: &[u8]) -> Catalog {
        let mut catalog = Catalog::with_budget(bytes.len());
        let mut r = Reader(bytes);
        while let (Some(tag), Some(len)) = (r.u8(), r.u32()) {
            let Some(body) = usize::try_from(len).ok().and_then(|len| r.take(len)) else {
                break;
            };
            catalog.add(tag, body);
        }
        catalog
    }

    /// Forgets the other process's keys and numbers (a new process starts
    /// writing: its keys mean other things), keeping what was registered.
    pub(crate) fn forget_keys(&mut self) {
        self.sites.clear();
        self.threads.clear();
    }

    /// Adds one entry: `tag` ([`E_SITE`] or [`E_THREAD`]) and its body.
    /// An entry that does not parse, or past the budget, is ignored (the
    /// events naming it show an unknown call site or thread).
    pub(crate) fn add(&mut self, tag: u8, body: &[u8]) {
        let mut index = INDEX
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (own_sites, own_threads, seen) = index.sync();
        let mut b = Reader(body);
        match tag {
            E_SITE => {
                let Some(old) = b.u64() else { return };
                if let Some(&key) = own_sites.get(b.0) {
                    self.sites.insert(old, key);
                    return;
                }
                if body.len() > self.budget || !take_process_budget(body.len()) {
                    return;
                }
                let content = b.0.to_vec();
                if let Some(site) = Self::site(&mut b) {
                    self.budget -= body.len();
                    let Some(key) = fresh_key() else { return };
                    register_callsite(key, site);
                    self.sites.insert(old, key.get());
                    own_sites.insert(content, key.get());
                    seen.0 += 1;
                }
            }
            E_THREAD => {
                let Some(old) = b.u32() else { return };
                if let Some(&number) = own_threads.get(b.0) {
                    self.threads.insert(old, number);
                    return;
                }
                if body.len() > self.budget || !take_process_budget(body.len()) {
                    return;
                }
                let content = b.0.to_vec();
                if let (Some(name), Some(id), Some(padded)) = (b.opt(), b.str(), b.str()) {
                    self.budget -= body.len();
                    let number = crate::event::register_foreign_thread(name, id, padded);
                    self.threads.insert(old, number);
                    own_threads.insert(content, number);
                    seen.1 += 1;
                }
            }
            _ => {}
        }
    }

    /// A site entry's call site, its strings made `'static` for the
    /// registry (one copy each, leaked) once the whole entry has parsed.
    fn site(b: &mut Reader<'_>) -> Option<Callsite> {
        let level = Level::from_u8(b.u8()?)?;
        let line = b.u32()?;
        let (target, name) = (b.str()?, b.str()?);
        let (module, file, format) = (b.opt()?, b.opt()?, b.opt()?);
        let n = b.u16()?;
        let mut fields = Vec::new();
        for _ in 0..n {
            fields.push(b.str()?);
        }
        let leak = |s: &str| -> &'static str { Box::leak(s.into()) };
        let mut site = Callsite::new(level, leak(target), leak(name))
            .fields(fields.into_iter().map(leak).collect())
            .location(
                module.map(leak),
                file.map(leak),
                (line != u32::MAX).then_some(line),
            );
        if let Some(format) = format {
            site = site.message_format(leak(format));
        }
        Some(site)
    }
}

// === the ring's events ===

/// Rewrites an event payload of another process for this one: raw clock
/// ticks become wall-clock time, call-site keys and thread numbers become
/// the ones registered here. The payload is walked by the event decoder,
/// the one reader of the wire grammar. In a payload that turns out
/// malformed part-way, the keys before the damage (the ones a format
/// reads: it shows the event up to there) are rewritten all the same, so
/// that no key of the other process is ever looked up here.
/// Returns the event's wall-clock time.
pub(crate) fn rewrite_event(p: &mut [u8], time: impl Fn(u64) -> u64, cat: &Catalog) -> Option<u64> {
    let wall = time(u64_at(p, 0));
    p.get_mut(..8)?.copy_from_slice(&wall.to_le_bytes());
    // Where each key is, found first, written after.
    let mut sites = Vec::new();
    let mut thread = None;
    {
        let event = Event::parse(p)?;
        if event.site().is_some() {
            sites.push(8);
        }
        if event.thread().is_some() {
            // The thread item ends the header, or comes before a trace
            // item that does.
            let trace = event
                .trace_context()
                .map_or(0, |_| crate::event::TraceContext::ENCODED_LEN);
            thread = Some(offset_in(p, event.items_bytes()) - trace - 4);
        }
        'items: for item in event.items() {
            match item {
                Item::Span { fields, .. } => {
                    // `0xFE site:u64 len:u32` precede the fields.
                    sites.push(offset_in(p, fields.bytes()).checked_sub(12)?);
                    // A span's items are fields only: the encoder nests no
                    // span in a span, and neither does this walk.
                    for inner in fields.items() {
                        if !matches!(inner, Item::Field { .. }) {
                            break 'items;
                        }
                    }
                }
                Item::Field { .. } => {}
                _ => break,
            }
        }
    }
    for at in sites {
        let old = u64_at(p, at);
        if let Some(new) = cat.sites.get(&old).or(cat.unknown_site.as_ref()) {
            p.get_mut(at..at + 8)?.copy_from_slice(&new.to_le_bytes());
        }
    }
    if let Some(at) = thread {
        debug_assert_eq!(p.get(at - 1), Some(&crate::event::ITEM_THREAD));
        let new = cat.threads.get(&u32_at(p, at)).copied().unwrap_or(0);
        p.get_mut(at..at + 4)?.copy_from_slice(&new.to_le_bytes());
    }
    Some(wall)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{EventBuf, FieldName, TraceContext};

    #[test]
    fn a_recovered_event_keeps_its_trace_context_and_gets_its_thread_renumbered() {
        let cx = TraceContext::new([7; 16], [9; 8], 1);
        let mut buf = EventBuf::new();
        buf.begin_inline(5, "app");
        buf.thread();
        buf.trace_context(cx);
        buf.u64(FieldName::Inline("n"), 1);
        let mut p = buf.as_bytes().to_vec();
        let old = Event::parse(&p).unwrap().thread().unwrap();
        let mut catalog = Catalog::default();
        catalog.threads.insert(old, old + 1000);
        assert_eq!(rewrite_event(&mut p, |t| t, &catalog), Some(5));
        let event = Event::parse(&p).unwrap();
        assert_eq!(event.thread(), Some(old + 1000));
        assert_eq!(event.trace_context(), Some(cx));
        assert_eq!(event.items().count(), 1);
    }

    /// An entry's body as [`Catalog::add`] takes it (no tag, no length).
    fn body(entry: &[u8]) -> &[u8] {
        // The tag and the u32 length.
        &entry[5..]
    }

    #[test]
    fn catalogs_share_what_the_process_registered_and_see_sites_registered_since() {
        // A site of another process, read by two catalogs (two files of
        // the same program): registered once, both map to that key.
        let site = Callsite::new(Level::Warn, "catalog::shared", "shared site");
        let entry = site_entry(SiteKey::from_raw(0x1111_0000), &site);
        let (mut a, mut b) = (Catalog::with_budget(1 << 20), Catalog::with_budget(1 << 20));
        a.add(E_SITE, body(&entry));
        let key = a.sites[&0x1111_0000];
        let before = crate::event::registered_len();
        b.add(E_SITE, body(&entry));
        assert_eq!(b.sites[&0x1111_0000], key);
        assert_eq!(crate::event::registered_len(), before, "registered again");

        // A site this process registers after the index was built (a call
        // site met for the first time) is matched, not registered again.
        static LATER: u8 = 0;
        let later = || Callsite::new(Level::Info, "catalog::later", "registered later");
        register_callsite(SiteKey::of(&LATER), later());
        let entry = site_entry(SiteKey::from_raw(0x2222_0000), &later());
        let mut c = Catalog::with_budget(1 << 20);
        c.add(E_SITE, body(&entry));
        assert_eq!(c.sites[&0x2222_0000], SiteKey::of(&LATER).get());

        // The same for threads.
        let entry = thread_entry(
            77,
            Some("catalog-worker"),
            "ThreadId(9001)",
            "ThreadId(9001)",
        );
        let (mut d, mut e) = (Catalog::with_budget(1 << 20), Catalog::with_budget(1 << 20));
        d.add(E_THREAD, body(&entry));
        e.add(E_THREAD, body(&entry));
        assert_eq!(d.threads[&77], e.threads[&77]);
    }
}
