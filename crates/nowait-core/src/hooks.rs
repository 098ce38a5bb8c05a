//! Process-wide hooks: panics, `process::exit`, SIGTERM/SIGINT.
//!
//! One registry of live loggers (weak references) serves all three, and each
//! hook is installed at most once per process, the first time a logger asks
//! for it.

use std::panic::{self, PanicHookInfo};
use std::sync::{Arc, Mutex, Once, Weak};
use std::time::Duration;

use crate::logger::{Logger, Shared};
use crate::{kind, Level};

#[derive(Clone, Copy, Debug)]
pub(crate) struct Options {
    pub(crate) catch_panics: bool,
    pub(crate) flush_on_exit: bool,
    #[cfg_attr(not(feature = "signals"), allow(dead_code))]
    pub(crate) drain_on_signals: bool,
    pub(crate) timeout: Duration,
}

struct Entry {
    shared: Weak<Shared>,
    options: Options,
}

static REGISTRY: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
static PANIC_HOOK: Once = Once::new();
static EXIT_HOOK: Once = Once::new();
#[cfg(feature = "signals")]
static SIGNALS: Once = Once::new();

pub(crate) fn register(shared: &Arc<Shared>, options: Options) {
    if let Ok(mut registry) = REGISTRY.lock() {
        registry.retain(|e| e.shared.strong_count() > 0);
        registry.push(Entry {
            shared: Arc::downgrade(shared),
            options,
        });
    }
    if options.catch_panics {
        PANIC_HOOK.call_once(install_panic_hook);
    }
    if options.flush_on_exit {
        EXIT_HOOK.call_once(crate::exit_hook::install);
    }
    #[cfg(feature = "signals")]
    if options.drain_on_signals {
        SIGNALS.call_once(install_signal_thread);
    }
}

/// Live loggers whose options pass `wanted`. Never blocks: a hook that runs
/// while the registry is locked (a panic inside `register`) skips it.
fn live(wanted: impl Fn(&Options) -> bool) -> Vec<(Logger, Duration)> {
    let Ok(registry) = REGISTRY.try_lock() else {
        return Vec::new();
    };
    registry
        .iter()
        .filter(|e| wanted(&e.options))
        .filter_map(|e| {
            let shared = e.shared.upgrade()?;
            Some((Logger { shared }, e.options.timeout))
        })
        .collect()
}

fn install_panic_hook() {
    let previous = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        on_panic(info);
        previous(info);
    }));
}

fn on_panic(info: &PanicHookInfo<'_>) {
    let loggers = live(|o| o.catch_panics);
    if loggers.is_empty() {
        return;
    }
    let thread = std::thread::current();
    let payload = info
        .payload()
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| info.payload().downcast_ref::<String>().map(String::as_str))
        .unwrap_or("Box<dyn Any>");
    let location = info
        .location()
        .map(|l| format!(" at {}:{}:{}", l.file(), l.line(), l.column()))
        .unwrap_or_default();
    let line = format!(
        "thread '{}' panicked{location}: {payload}",
        thread.name().unwrap_or("<unnamed>")
    );
    for (logger, timeout) in loggers {
        // `push` never waits on the writer thread itself; `flush` returns
        // at once there.
        let _ = logger.push(Level::Error, kind::TEXT, &[line.as_bytes()]);
        let _ = logger.flush_timeout(timeout);
    }
}

/// Runs from `atexit`: drain every logger that asked for it.
pub(crate) fn on_exit() {
    for (logger, timeout) in live(|o| o.flush_on_exit) {
        let _ = logger.flush_timeout(timeout);
    }
}

#[cfg(feature = "signals")]
fn install_signal_thread() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    use signal_hook::iterator::Signals;

    let Ok(mut signals) = Signals::new([SIGTERM, SIGINT]) else {
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("nowait-signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                for (logger, timeout) in live(|o| o.drain_on_signals) {
                    let _ = logger.flush_timeout(timeout);
                }
                // Die of the signal as if nowait had not been there.
                let _ = signal_hook::low_level::emulate_default_handler(signal);
                std::process::exit(128 + signal);
            }
        });
    drop(spawned);
}
