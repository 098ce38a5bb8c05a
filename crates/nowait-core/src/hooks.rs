//! Process-wide hooks: panics, `process::exit`, SIGTERM/SIGINT, `fork()`.
//!
//! Each hook is installed at most once per process, the first time a logger
//! asks for it, and acts on the live loggers of the
//! [`registry`](crate::registry). Every wait a hook does is bounded:
//!
//! * panic: the panic record is pushed without waiting for room, then the
//!   hook waits at most [`Builder::panic_timeout`] (500 ms) for the durable
//!   sinks (files, custom writers) only, never for a terminal or pipe; on a
//!   writer thread (a panicking user `Format`) it neither pushes nor waits
//!   nor prints: the writer reports the panic in the output;
//! * `process::exit` / return from `main`: a shutdown of each logger within
//!   its [`Builder::shutdown_timeout`];
//! * SIGTERM/SIGINT (opt-in): the same shutdown, then the signal's default
//!   action; a second signal during the drain kills at once;
//! * SIGHUP (opt-in): a reopen of the file sinks, waited for on the signal
//!   thread (at most the flush timeout), never on a request thread.
//!
//! [`Builder::panic_timeout`]: crate::Builder::panic_timeout
//! [`Builder::shutdown_timeout`]: crate::Builder::shutdown_timeout

use std::panic::{self, PanicHookInfo};
use std::sync::{Arc, Once};

use crate::registry::{self, Options};
use crate::shared::{FlushScope, Shared};
use crate::{kind, Level};

static PANIC_HOOK: Once = Once::new();
static EXIT_HOOK: Once = Once::new();
static FORK_HOOK: Once = Once::new();
#[cfg(feature = "signals")]
static SIGNALS: Once = Once::new();
#[cfg(feature = "signals")]
static SIGHUP: Once = Once::new();

pub(crate) fn register(shared: &Arc<Shared>, options: Options) {
    registry::add(shared, options);
    FORK_HOOK.call_once(|| {
        crate::ffi::at_fork(
            crate::fork::prepare,
            crate::fork::parent,
            crate::fork::child,
        )
    });
    if options.catch_panics {
        PANIC_HOOK.call_once(install_panic_hook);
    }
    if options.flush_on_exit {
        EXIT_HOOK.call_once(|| crate::ffi::at_exit(on_exit));
    }
    #[cfg(feature = "signals")]
    if options.drain_on_signals {
        SIGNALS.call_once(install_signal_thread);
    }
    #[cfg(feature = "signals")]
    if options.reopen_on_sighup {
        SIGHUP.call_once(install_sighup_thread);
    }
}

fn install_panic_hook() {
    let previous = panic::take_hook();
    panic::set_hook(Box::new(move |info| {
        if Shared::on_writer_thread() {
            // A user's Format or writer panicked on the writer thread: the
            // writer catches it and reports it in the output. Printing it
            // here would write to a stderr that may be stalled.
            Shared::note_writer_panic(describe(info, false));
            return;
        }
        on_panic(info);
        previous(info);
    }));
}

/// `thread 'NAME' panicked at FILE:LINE:COL: PAYLOAD`.
fn describe(info: &PanicHookInfo<'_>, with_thread: bool) -> String {
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
    if with_thread {
        let thread = std::thread::current();
        format!(
            "thread '{}' panicked{location}: {payload}",
            thread.name().unwrap_or("<unnamed>")
        )
    } else {
        format!("panicked{location}: {payload}")
    }
}

fn on_panic(info: &PanicHookInfo<'_>) {
    let loggers = registry::live(|o| o.catch_panics);
    if loggers.is_empty() {
        return;
    }
    let line = describe(info, true);
    for shared in loggers {
        // Never wait for room here: a panicking thread must not be held by
        // a full ring. Then wait (bounded) for the durable sinks only.
        let _ = shared.push(Level::Error, kind::TEXT, &[line.as_bytes()], false);
        let _ = shared.flush(FlushScope::Durable, shared.panic_timeout);
    }
}

/// Runs from `atexit`: shut every logger down that asked for it.
fn on_exit() {
    for shared in registry::live(|o| o.flush_on_exit) {
        shared.shutdown(shared.shutdown_timeout);
    }
}

#[cfg(feature = "signals")]
fn install_signal_thread() {
    use std::sync::atomic::{AtomicBool, Ordering};

    use signal_hook::consts::{SIGINT, SIGTERM};
    use signal_hook::iterator::Signals;

    // Set once the first signal arrives: a second one then takes its
    // default action at once (a second Ctrl-C kills).
    let draining = Arc::new(AtomicBool::new(false));
    for sig in [SIGTERM, SIGINT] {
        let _ = signal_hook::flag::register_conditional_default(sig, Arc::clone(&draining));
    }
    let Ok(mut signals) = Signals::new([SIGTERM, SIGINT]) else {
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("nowait-signals".into())
        .spawn(move || {
            if let Some(signal) = signals.forever().next() {
                draining.store(true, Ordering::SeqCst);
                for shared in registry::live(|o| o.drain_on_signals) {
                    shared.shutdown(shared.shutdown_timeout);
                }
                // Die of the signal as if nowait had not been there.
                if signal_hook::low_level::emulate_default_handler(signal).is_err() {
                    std::process::exit(128 + signal);
                }
            }
        });
    drop(spawned);
}

/// SIGHUP: reopen the files of every logger that asked for it (after
/// logrotate renamed them). The handler only wakes this thread (signal-hook's
/// self-pipe); the thread asks each writer for a reopen and waits for it,
/// at most each logger's flush timeout. Signals that arrive meanwhile are
/// merged into one more reopen.
#[cfg(feature = "signals")]
fn install_sighup_thread() {
    use signal_hook::consts::SIGHUP;
    use signal_hook::iterator::Signals;

    let Ok(mut signals) = Signals::new([SIGHUP]) else {
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("nowait-sighup".into())
        .spawn(move || {
            for _ in signals.forever() {
                for shared in registry::live(|o| o.reopen_on_sighup) {
                    // A failure is reported by the writer in-band.
                    let _ = shared.reopen();
                }
            }
        });
    drop(spawned);
}
