//! The catalog: this process's live crash-durable files, and the hooks
//! that append each call site and thread to their catalogs as it
//! registers, so that a later process can name what the dead one's
//! records refer to.
//!
//! Invariant: a file is in the list from the moment `open` has written its
//! header until it is dropped (the list holds it weakly). `open` installs
//! the hooks, then appends everything registered before, so the file's
//! catalog names every call site and thread registered while it lives.

use std::sync::atomic::Ordering;
use std::sync::{Mutex, OnceLock, Weak};

use super::file::DurableFile;
use crate::event::catalog::{site_entry, thread_entry};
use crate::event::{Callsite, SiteKey};
use crate::sys::FileId;

pub(super) fn active() -> &'static Mutex<Vec<Weak<DurableFile>>> {
    static ACTIVE: OnceLock<Mutex<Vec<Weak<DurableFile>>>> = OnceLock::new();
    ACTIVE.get_or_init(Default::default)
}

/// Whether the file `id` belongs to a logger of this process that was
/// shut down (its handles may live on, so its mapping must stay).
pub(super) fn retired_here(id: FileId) -> bool {
    let Ok(list) = active().lock() else {
        return false;
    };
    list.iter()
        .filter_map(Weak::upgrade)
        .any(|f| f.id == Some(id) && f.retired.load(Ordering::SeqCst))
}

fn each_active(f: impl Fn(&DurableFile)) {
    let Ok(mut list) = active().lock() else {
        return;
    };
    list.retain(|w| w.strong_count() > 0);
    for file in list.iter().filter_map(Weak::upgrade) {
        f(&file);
    }
}

/// Called by the call-site registry when a site registers (under its lock).
pub(super) fn note_callsite(key: SiteKey, site: &Callsite) {
    each_active(|file| file.append_entry(&site_entry(key, site)));
}

/// Called by the thread registry when a thread registers.
pub(super) fn note_thread(number: u32, name: Option<&str>, id: &str, id_padded: &str) {
    each_active(|file| file.append_entry(&thread_entry(number, name, id, id_padded)));
}
