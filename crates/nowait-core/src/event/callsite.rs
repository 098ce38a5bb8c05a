//! The process-wide call-site registry.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, Mutex, OnceLock};

use crate::level::Level;

/// Identifies a call site: the address of a `'static` item describing it.
///
/// Two distinct `'static` items never share an address while the program
/// runs, so keys are unique without coordination. `0` means "no call site"
/// (the event names its target inline).
///
/// # Examples
///
/// ```
/// use nowait_core::event::SiteKey;
///
/// static SITE: u8 = 0;
/// let key = SiteKey::of(&SITE);
/// assert_eq!(key, SiteKey::of(&SITE));
/// assert_ne!(key.get(), 0);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SiteKey(u64);

impl SiteKey {
    /// The key of the call site described by `item`.
    ///
    /// # Examples
    ///
    /// ```
    /// static SITE: &str = "x";
    /// let _ = nowait_core::event::SiteKey::of(&SITE);
    /// ```
    #[doc(hidden)]
    pub fn of<T: ?Sized>(item: &'static T) -> SiteKey {
        // A zero-sized static may share its address with another item; the
        // one-byte minimum below keeps keys nonzero, and front ends describe
        // call sites with sized statics.
        SiteKey((item as *const T as *const u8 as usize as u64).max(1))
    }

    /// The key as a number (what the encoding stores).
    ///
    /// # Examples
    ///
    /// ```
    /// static SITE: u8 = 0;
    /// assert!(nowait_core::event::SiteKey::of(&SITE).get() > 0);
    /// ```
    pub fn get(self) -> u64 {
        self.0
    }

    pub(crate) fn from_raw(raw: u64) -> SiteKey {
        SiteKey(raw)
    }
}

/// What the writer needs to know about a call site to print its events:
/// level, target, name, source location and field names.
///
/// # Examples
///
/// ```
/// use nowait_core::event::Callsite;
/// use nowait_core::Level;
///
/// let site = Callsite::new(Level::Info, "app::http", "request")
///     .fields(vec!["message", "status"])
///     .location(Some("app::http"), Some("src/http.rs"), Some(42));
/// assert_eq!(site.target(), "app::http");
/// assert_eq!(site.field(1), Some("status"));
/// ```
#[derive(Debug)]
pub struct Callsite {
    level: Level,
    target: &'static str,
    name: &'static str,
    module_path: Option<&'static str>,
    file: Option<&'static str>,
    line: Option<u32>,
    fields: Vec<&'static str>,
    format: Option<&'static str>,
    pieces: OnceLock<super::message::Pieces>,
}

impl Callsite {
    /// A call site with no fields and no source location.
    ///
    /// # Examples
    ///
    /// ```
    /// let site = nowait_core::event::Callsite::new(nowait_core::Level::Warn, "db", "slow query");
    /// assert_eq!(site.name(), "slow query");
    /// ```
    #[doc(hidden)]
    pub fn new(level: Level, target: &'static str, name: &'static str) -> Callsite {
        Callsite {
            level,
            target,
            name,
            module_path: None,
            file: None,
            line: None,
            fields: Vec::new(),
            format: None,
            pieces: OnceLock::new(),
        }
    }

    /// Sets the field names, in the order events refer to them by index.
    /// Only the first 252 can be referred to by index.
    ///
    /// # Examples
    ///
    /// ```
    /// let site = nowait_core::event::Callsite::new(nowait_core::Level::Info, "t", "n")
    ///     .fields(vec!["message"]);
    /// assert_eq!(site.field(0), Some("message"));
    /// ```
    #[doc(hidden)]
    pub fn fields(mut self, names: Vec<&'static str>) -> Callsite {
        self.fields = names;
        self
    }

    /// Sets the source location.
    ///
    /// # Examples
    ///
    /// ```
    /// let site = nowait_core::event::Callsite::new(nowait_core::Level::Info, "t", "n")
    ///     .location(Some("app"), Some("src/main.rs"), Some(7));
    /// assert_eq!(site.line(), Some(7));
    /// ```
    #[doc(hidden)]
    pub fn location(
        mut self,
        module_path: Option<&'static str>,
        file: Option<&'static str>,
        line: Option<u32>,
    ) -> Callsite {
        self.module_path = module_path;
        self.file = file;
        self.line = line;
        self
    }

    /// Sets the deferred message format (`std::fmt` syntax, positional `{}`
    /// placeholders only) whose arguments events carry as a
    /// [`Value::Args`](super::Value::Args) item.
    ///
    /// # Examples
    ///
    /// ```
    /// let site = nowait_core::event::Callsite::new(nowait_core::Level::Info, "t", "n")
    ///     .message_format("GET {} {}");
    /// assert_eq!(site.message_format_str(), Some("GET {} {}"));
    /// ```
    #[doc(hidden)]
    pub fn message_format(mut self, format: &'static str) -> Callsite {
        self.format = Some(format);
        self
    }

    /// The level the call site was declared with.
    ///
    /// # Examples
    ///
    /// ```
    /// let site = nowait_core::event::Callsite::new(nowait_core::Level::Info, "t", "n");
    /// assert_eq!(site.level(), nowait_core::Level::Info);
    /// ```
    pub fn level(&self) -> Level {
        self.level
    }

    /// The target (by convention the module path).
    ///
    /// # Examples
    ///
    /// ```
    /// let site = nowait_core::event::Callsite::new(nowait_core::Level::Info, "t", "n");
    /// assert_eq!(site.target(), "t");
    /// ```
    pub fn target(&self) -> &'static str {
        self.target
    }

    /// The name (for spans, the span's name).
    ///
    /// # Examples
    ///
    /// ```
    /// let site = nowait_core::event::Callsite::new(nowait_core::Level::Info, "t", "request");
    /// assert_eq!(site.name(), "request");
    /// ```
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The module path, if known.
    ///
    /// # Examples
    ///
    /// ```
    /// let site = nowait_core::event::Callsite::new(nowait_core::Level::Info, "t", "n");
    /// assert_eq!(site.module_path(), None);
    /// ```
    pub fn module_path(&self) -> Option<&'static str> {
        self.module_path
    }

    /// The source file, if known.
    ///
    /// # Examples
    ///
    /// ```
    /// let site = nowait_core::event::Callsite::new(nowait_core::Level::Info, "t", "n");
    /// assert_eq!(site.file(), None);
    /// ```
    pub fn file(&self) -> Option<&'static str> {
        self.file
    }

    /// The source line, if known.
    ///
    /// # Examples
    ///
    /// ```
    /// let site = nowait_core::event::Callsite::new(nowait_core::Level::Info, "t", "n");
    /// assert_eq!(site.line(), None);
    /// ```
    pub fn line(&self) -> Option<u32> {
        self.line
    }

    /// The name of field `index`.
    ///
    /// # Examples
    ///
    /// ```
    /// let site = nowait_core::event::Callsite::new(nowait_core::Level::Info, "t", "n")
    ///     .fields(vec!["a"]);
    /// assert_eq!(site.field(0), Some("a"));
    /// assert_eq!(site.field(1), None);
    /// ```
    pub fn field(&self, index: usize) -> Option<&'static str> {
        self.fields.get(index).copied()
    }

    /// The deferred message format, if any.
    ///
    /// # Examples
    ///
    /// ```
    /// let site = nowait_core::event::Callsite::new(nowait_core::Level::Info, "t", "n");
    /// assert_eq!(site.message_format_str(), None);
    /// ```
    pub fn message_format_str(&self) -> Option<&'static str> {
        self.format
    }

    /// The parsed message format (parsed once, on the writer thread).
    pub(crate) fn pieces(&self) -> Option<&super::message::Pieces> {
        let format = self.format?;
        Some(
            self.pieces
                .get_or_init(|| super::message::Pieces::parse(format)),
        )
    }
}

/// The call site registered under `key`, if one is: what a
/// `Format` names an event's fields and spans with.
///
/// Takes the registry's lock: a format looks each key up once and keeps
/// the answer (a call site, once registered, never changes).
///
/// # Examples
///
/// ```
/// use nowait_core::event::{lookup_callsite, Event, FieldName, Item};
/// use nowait_core::format::Format;
/// use nowait_core::record::{kind, Notice, Record};
///
/// /// Writes the name of each field of an event, one per line.
/// struct Names;
///
/// impl Format for Names {
///     fn format(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
///         let Some(event) = Event::parse(record.payload()).filter(|_| record.kind() == kind::EVENT)
///         else {
///             return out.extend_from_slice(b"-\n");
///         };
///         let site = event.site().and_then(lookup_callsite);
///         for item in event.items() {
///             if let Item::Field { name: FieldName::Index(i), .. } = item {
///                 let name = site.as_ref().and_then(|s| s.field(i)).unwrap_or("?");
///                 nowait_core::format::escape_into(name.as_bytes(), out);
///             }
///         }
///         out.push(b'\n');
///     }
///
///     fn notice(&mut self, _: &Notice<'_>, out: &mut Vec<u8>) {
///         out.extend_from_slice(b"-\n");
///     }
/// }
/// # let _ = Names;
/// ```
pub fn lookup_callsite(key: SiteKey) -> Option<Arc<Callsite>> {
    lookup(key.0)
}

type Registry = Mutex<HashMap<u64, Arc<Callsite>>>;

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(Default::default)
}

/// Registers `site` under `key` so that the writer thread can print events
/// that refer to it. Registering a key again keeps the first description.
///
/// Front ends call this once per call site, before its first event (a
/// `tracing` layer from `register_callsite`, a macro the first time it
/// fires). It takes a lock and may allocate: it is not for the hot path.
///
/// # Examples
///
/// ```
/// use nowait_core::__private::event::register_callsite;
/// use nowait_core::event::{Callsite, SiteKey};
/// use nowait_core::Level;
///
/// static SITE: u8 = 0;
/// register_callsite(SiteKey::of(&SITE), Callsite::new(Level::Info, "app", "started"));
/// ```
pub fn register_callsite(key: SiteKey, site: Callsite) {
    if let Ok(mut map) = registry().lock() {
        if let std::collections::hash_map::Entry::Vacant(e) = map.entry(key.0) {
            if let Some(listen) = LISTENER.get() {
                listen(key, &site);
            }
            e.insert(Arc::new(site));
        }
    }
}

/// Called with each call site when it first registers, under the
/// registry's lock (a crash-durable file appends it to its catalog).
static LISTENER: OnceLock<fn(SiteKey, &Callsite)> = OnceLock::new();

/// Sets the function told of each call site that registers from now on
/// (once per process; later calls keep the first).
pub(crate) fn listen(f: fn(SiteKey, &Callsite)) {
    let _ = LISTENER.set(f);
}

/// How many call sites are registered.
pub(crate) fn registered_len() -> usize {
    registry().lock().map_or(0, |map| map.len())
}

/// Every registered call site (for a crash-durable file's catalog).
pub(crate) fn each_registered(mut f: impl FnMut(SiteKey, &Callsite)) {
    if let Ok(map) = registry().lock() {
        for (key, site) in map.iter() {
            f(SiteKey(*key), site);
        }
    }
}

/// Looks a call site up (writer side; formats cache the answer).
pub(crate) fn lookup(key: u64) -> Option<Arc<Callsite>> {
    registry().lock().ok()?.get(&key).cloned()
}

/// A per-format cache in front of the registry, so that the writer thread
/// takes the registry lock once per call site, not once per event.
#[derive(Debug, Default)]
pub(crate) struct SiteCache {
    map: HashMap<u64, Arc<Callsite>, BuildHasherDefault<KeyHasher>>,
}

/// Keys are addresses, already unique and well spread: one multiply
/// (Fibonacci hashing) instead of SipHash.
#[derive(Debug, Default)]
pub(crate) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8 | u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

impl SiteCache {
    pub(crate) fn get(&mut self, key: u64) -> Option<Arc<Callsite>> {
        if key == 0 {
            return None;
        }
        if let Some(site) = self.map.get(&key) {
            return Some(site.clone());
        }
        let site = lookup(key)?;
        self.map.insert(key, site.clone());
        Some(site)
    }
}
