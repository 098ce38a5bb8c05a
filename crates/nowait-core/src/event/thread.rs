//! Which thread an event came from, for formats that print thread names
//! or ids (see `MakeFormat::needs_thread`).
//!
//! 1. A producer thread gets a small number (1, 2, …) from a global counter
//!    the first time it records an event with its thread, kept in a
//!    `const`-initialised thread-local `Cell`: later events read it, with no
//!    allocation, lock or system call.
//! 2. On that first use only, the thread registers its name and `ThreadId`
//!    under the number, in a registry behind a mutex (as call sites are).
//! 3. The writer's formats look numbers up through a per-sink
//!    [`ThreadCache`], a vector indexed by number: the registry lock is taken
//!    once per thread and sink, not per event.
//!
//! Numbers are never reused: a thread pool that keeps creating threads
//! keeps one small entry (name and id text) per thread ever seen.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// A registered thread, as the writer prints it.
#[derive(Debug)]
pub(crate) struct ThreadInfo {
    /// The thread's name, if it has one.
    pub(crate) name: Option<Box<str>>,
    /// `ThreadId` as `{:?}` prints it: `ThreadId(7)`.
    pub(crate) id: Box<str>,
    /// `ThreadId` as `{:0>2?}` prints it: `ThreadId(07)` (what
    /// `tracing-subscriber`'s text format shows).
    pub(crate) id_padded: Box<str>,
}

static NEXT: AtomicU32 = AtomicU32::new(1);

thread_local! {
    static NUMBER: Cell<u32> = const { Cell::new(0) };
}

type Registry = Mutex<HashMap<u32, Arc<ThreadInfo>>>;

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(Default::default)
}

/// The calling thread's number, registering the thread on first use; 0 if
/// the thread-local is gone (a thread being torn down).
#[inline]
pub(crate) fn current() -> u32 {
    NUMBER
        .try_with(|n| match n.get() {
            0 => {
                let number = register_current();
                n.set(number);
                number
            }
            number => number,
        })
        .unwrap_or(0)
}

#[cold]
fn register_current() -> u32 {
    let number = NEXT.fetch_add(1, Ordering::Relaxed);
    let thread = std::thread::current();
    let info = ThreadInfo {
        name: thread.name().map(Into::into),
        id: format!("{:?}", thread.id()).into(),
        id_padded: format!("{:0>2?}", thread.id()).into(),
    };
    insert(number, info);
    number
}

/// Called with each thread when it registers (a crash-durable file
/// appends it to its catalog): number, name, id, padded id.
static LISTENER: std::sync::OnceLock<Listener> = std::sync::OnceLock::new();

/// Number, name, id and padded id of a thread that registered.
type Listener = fn(u32, Option<&str>, &str, &str);

/// Sets the function told of each thread that registers from now on (once
/// per process; later calls keep the first).
pub(crate) fn listen(f: Listener) {
    let _ = LISTENER.set(f);
}

fn insert(number: u32, info: ThreadInfo) {
    if let Ok(mut map) = registry().lock() {
        if let Some(listen) = LISTENER.get() {
            listen(number, info.name.as_deref(), &info.id, &info.id_padded);
        }
        map.insert(number, Arc::new(info));
    }
}

/// Registers a thread of a process that died (read back from a
/// crash-durable file) under a new number.
pub(crate) fn register_foreign(name: Option<&str>, id: &str, id_padded: &str) -> u32 {
    let number = NEXT.fetch_add(1, Ordering::Relaxed);
    insert(
        number,
        ThreadInfo {
            name: name.map(Into::into),
            id: id.into(),
            id_padded: id_padded.into(),
        },
    );
    number
}

/// How many threads are registered.
pub(crate) fn len() -> usize {
    registry().lock().map_or(0, |map| map.len())
}

/// Every registered thread (for a crash-durable file's catalog).
pub(crate) fn each(mut f: impl FnMut(u32, Option<&str>, &str, &str)) {
    if let Ok(map) = registry().lock() {
        for (n, info) in map.iter() {
            f(*n, info.name.as_deref(), &info.id, &info.id_padded);
        }
    }
}

fn lookup(number: u32) -> Option<Arc<ThreadInfo>> {
    registry().lock().ok()?.get(&number).cloned()
}

/// A per-format cache in front of the registry (see the module docs).
#[derive(Debug, Default)]
pub(crate) struct ThreadCache {
    by_number: Vec<Option<Arc<ThreadInfo>>>,
}

impl ThreadCache {
    pub(crate) fn get(&mut self, number: u32) -> Option<&ThreadInfo> {
        let i = usize::try_from(number).ok()?;
        if number == 0 {
            return None;
        }
        if !matches!(self.by_number.get(i), Some(Some(_))) {
            let info = lookup(number)?;
            if self.by_number.len() <= i {
                self.by_number.resize(i + 1, None);
            }
            self.by_number[i] = Some(info);
        }
        self.by_number[i].as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_per_thread_and_stable() {
        let here = current();
        assert_ne!(here, 0);
        assert_eq!(current(), here);
        let there = std::thread::Builder::new()
            .name("numbered".into())
            .spawn(current)
            .unwrap()
            .join()
            .unwrap();
        assert_ne!(there, here);
        let mut cache = ThreadCache::default();
        let info = cache.get(there).unwrap();
        assert_eq!(info.name.as_deref(), Some("numbered"));
        assert!(info.id.starts_with("ThreadId("), "{}", info.id);
        assert!(cache.get(0).is_none());
        assert!(cache.get(u32::MAX).is_none());
    }
}
