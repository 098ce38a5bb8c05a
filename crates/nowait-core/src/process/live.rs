//! The live loggers of the process (weak references), for the hooks that
//! act on all of them: panics, `process::exit`, signals and `fork()`.

use std::sync::{Arc, Mutex, MutexGuard, Weak};

use crate::shared::Shared;

/// What a logger asked the hooks for.
#[derive(Clone, Copy, Debug)]
pub(crate) struct HookOptions {
    pub(crate) catch_panics: bool,
    pub(crate) flush_on_exit: bool,
    #[cfg_attr(not(feature = "signals"), allow(dead_code))]
    pub(crate) drain_on_signals: bool,
    #[cfg_attr(not(feature = "signals"), allow(dead_code))]
    pub(crate) reopen_on_sighup: bool,
    #[cfg_attr(not(feature = "signals"), allow(dead_code))]
    pub(crate) dump_on_sigusr1: bool,
    pub(crate) drain_on_crash: bool,
}

pub(crate) struct Entry {
    pub(crate) shared: Weak<Shared>,
    pub(crate) options: HookOptions,
}

static REGISTRY: Mutex<Vec<Entry>> = Mutex::new(Vec::new());

/// Locks the registry (poisoning ignored: entries are only ever pushed and
/// pruned whole).
pub(crate) fn lock() -> MutexGuard<'static, Vec<Entry>> {
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

pub(crate) fn add(shared: &Arc<Shared>, options: HookOptions) {
    let mut registry = lock();
    registry.retain(|e| e.shared.strong_count() > 0);
    registry.push(Entry {
        shared: Arc::downgrade(shared),
        options,
    });
}

/// Calls `f` on each live logger whose options pass `wanted`, without
/// allocating or blocking (a fatal signal's handler): if the registry is
/// locked (the crash came inside `add`), does nothing and returns false.
pub(crate) fn try_for_each(
    wanted: impl Fn(&HookOptions) -> bool,
    mut f: impl FnMut(&Arc<Shared>),
) -> bool {
    let Ok(registry) = REGISTRY.try_lock() else {
        return false;
    };
    for e in registry.iter().filter(|e| wanted(&e.options)) {
        if let Some(shared) = e.shared.upgrade() {
            f(&shared);
        }
    }
    true
}

/// Live loggers whose options pass `wanted`. Never blocks: a hook that runs
/// while the registry is locked (a panic inside `add`) skips it.
pub(crate) fn live(wanted: impl Fn(&HookOptions) -> bool) -> Vec<Arc<Shared>> {
    let Ok(registry) = REGISTRY.try_lock() else {
        return Vec::new();
    };
    registry
        .iter()
        .filter(|e| wanted(&e.options))
        .filter_map(|e| e.shared.upgrade())
        .collect()
}
