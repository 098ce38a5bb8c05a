//! Process-wide hooks: panics, `process::exit`, SIGTERM/SIGINT, `fork()`.
//!
//! Each hook is installed at most once per process, the first time a logger
//! asks for it, and acts on the live loggers of the
//! [`registry`](crate::process::live). Every wait a hook does is bounded:
//!
//! * panic: the panic record is pushed without waiting for room, then the
//!   hook waits at most `Builder::panic_timeout` (500 ms) for the durable
//!   sinks (files, custom writers) only, never for a terminal or pipe; on a
//!   writer thread (a panicking user `Format`) it neither pushes nor waits
//!   nor prints: the writer reports the panic in the output;
//! * `process::exit` / return from `main`: a shutdown of each logger within
//!   its `Builder::shutdown_timeout`;
//! * SIGTERM/SIGINT (opt-in; on Windows Ctrl-C, Ctrl-Break, console close,
//!   logoff and shutdown): the same shutdown, then the signal's default
//!   action; a second signal during the drain kills at once;
//! * SIGHUP (opt-in, Unix): a reopen of the file sinks, waited for on the
//!   signal thread (at most the flush timeout), never on a request thread;
//! * SIGUSR1 (opt-in, Unix): a dump of the backtraces' records, likewise.
//!

use std::panic::{self, PanicHookInfo};
use std::sync::{Arc, Once};

use crate::level::Level;
use crate::process::live::{self, HookOptions};
use crate::record::kind;
use crate::shared::{FlushScope, Shared};

static PANIC_HOOK: Once = Once::new();
static EXIT_HOOK: Once = Once::new();
static FORK_HOOK: Once = Once::new();
static CRASH_HOOK: Once = Once::new();
#[cfg(feature = "signals")]
static SIGNALS: Once = Once::new();
#[cfg(feature = "signals")]
static SIGHUP: Once = Once::new();
#[cfg(feature = "signals")]
static SIGUSR1: Once = Once::new();

pub(crate) fn register(shared: &Arc<Shared>, options: HookOptions) {
    live::add(shared, options);
    FORK_HOOK.call_once(|| {
        crate::sys::at_fork(
            crate::process::fork::prepare,
            crate::process::fork::parent,
            crate::process::fork::child,
        )
    });
    if options.catch_panics {
        PANIC_HOOK.call_once(install_panic_hook);
    }
    if options.drain_on_crash {
        CRASH_HOOK.call_once(|| crate::sys::on_fatal_signals(crate::process::crash::drain));
    }
    if options.flush_on_exit {
        EXIT_HOOK.call_once(|| crate::sys::at_exit(on_exit));
    }
    #[cfg(feature = "signals")]
    if options.drain_on_signals {
        SIGNALS.call_once(install_signal_thread);
    }
    #[cfg(feature = "signals")]
    if options.reopen_on_sighup {
        SIGHUP.call_once(install_sighup_thread);
    }
    #[cfg(feature = "signals")]
    if options.dump_on_sigusr1 {
        SIGUSR1.call_once(install_sigusr1_thread);
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
    let loggers = live::live(|o| o.catch_panics);
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
    for shared in live::live(|o| o.flush_on_exit) {
        shared.shutdown(shared.shutdown_timeout);
    }
}

/// SIGTERM/SIGINT (Windows: console control events): shut every logger
/// down that asked for it, then the process dies as it would have.
#[cfg(feature = "signals")]
fn install_signal_thread() {
    crate::sys::on_terminate(|| {
        for shared in live::live(|o| o.drain_on_signals) {
            shared.shutdown(shared.shutdown_timeout);
        }
    });
}

/// SIGHUP: reopen the files of every logger that asked for it (after
/// logrotate renamed them). The handler only wakes a thread; the thread
/// asks each writer for a reopen and waits for it, at most each logger's
/// flush timeout. Windows has no SIGHUP: nothing is installed there.
#[cfg(feature = "signals")]
fn install_sighup_thread() {
    crate::sys::on_hangup(|| {
        for shared in live::live(|o| o.reopen_on_sighup) {
            // A failure is reported by the writer in-band.
            let _ = shared.reopen();
        }
    });
}

/// SIGUSR1: dump the backtraces of every logger that asked for it
/// (`Logger::dump_recent`). The handler only wakes a thread; the thread
/// asks each writer and waits, at most each logger's flush timeout.
/// Windows has no SIGUSR1: nothing is installed there.
#[cfg(feature = "signals")]
fn install_sigusr1_thread() {
    crate::sys::on_user1(|| {
        for shared in live::live(|o| o.dump_on_sigusr1) {
            // A failure is reported by the writer in-band.
            let _ = shared.dump_recent();
        }
    });
}
