//! SIGTERM/SIGINT (drain, then die of the signal), SIGHUP (reopen) and
//! SIGUSR1 (dump the backtraces) on
//! Unix, through `signal-hook`: the handlers only wake a thread of ours
//! (a self-pipe); the work is done on that thread, never in a handler.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGUSR1};
use signal_hook::iterator::Signals;

/// On the first SIGTERM or SIGINT, runs `drain` on a thread of its own,
/// then lets the signal take its default action (the process dies of it,
/// as if nowait had not been there). A second signal during the drain
/// kills at once.
pub(crate) fn on_terminate(drain: fn()) {
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
                drain();
                // Die of the signal as if nowait had not been there.
                if signal_hook::low_level::emulate_default_handler(signal).is_err() {
                    std::process::exit(128 + signal);
                }
            }
        });
    drop(spawned);
}

/// On every SIGHUP, runs `reopen` on a thread of its own. Signals that
/// arrive meanwhile are merged into one more call.
pub(crate) fn on_hangup(reopen: fn()) {
    let Ok(mut signals) = Signals::new([SIGHUP]) else {
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("nowait-sighup".into())
        .spawn(move || {
            for _ in signals.forever() {
                reopen();
            }
        });
    drop(spawned);
}

/// On every SIGUSR1, runs `dump` on a thread of its own. Signals that
/// arrive meanwhile are merged into one more call.
pub(crate) fn on_user1(dump: fn()) {
    let Ok(mut signals) = Signals::new([SIGUSR1]) else {
        return;
    };
    let spawned = std::thread::Builder::new()
        .name("nowait-sigusr1".into())
        .spawn(move || {
            for _ in signals.forever() {
                dump();
            }
        });
    drop(spawned);
}
