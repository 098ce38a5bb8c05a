//! Console control events on Windows: Ctrl-C, Ctrl-Break, closing the
//! console window, logoff and shutdown drain the loggers, then the event's
//! default handling ends the process. Windows calls the handler on a new
//! thread of its own; the drain runs there, bounded by each logger's
//! shutdown timeout (Windows allows a close event about 5 s, and ends the
//! process at once after that). There is no SIGHUP: `on_hangup` does
//! nothing, and `Logger::reopen` is the way to reopen files.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use windows_sys::core::BOOL;
use windows_sys::Win32::System::Console::{
    SetConsoleCtrlHandler, CTRL_BREAK_EVENT, CTRL_CLOSE_EVENT, CTRL_C_EVENT, CTRL_LOGOFF_EVENT,
    CTRL_SHUTDOWN_EVENT,
};

static DRAIN: OnceLock<fn()> = OnceLock::new();
static DRAINING: AtomicBool = AtomicBool::new(false);

unsafe extern "system" fn handler(event: u32) -> BOOL {
    match event {
        CTRL_C_EVENT | CTRL_BREAK_EVENT | CTRL_CLOSE_EVENT | CTRL_LOGOFF_EVENT
        | CTRL_SHUTDOWN_EVENT => {
            // A second event during the drain: let the default act at once.
            if !DRAINING.swap(true, Ordering::SeqCst) {
                if let Some(drain) = DRAIN.get() {
                    let _ = std::panic::catch_unwind(drain);
                }
            }
            // FALSE: the next handler (the default one ends the process).
            0
        }
        _ => 0,
    }
}

/// On the first console control event that ends the process, runs `drain`.
pub(crate) fn on_terminate(drain: fn()) {
    if DRAIN.set(drain).is_err() {
        return;
    }
    // SAFETY: `handler` is a valid `PHANDLER_ROUTINE` for the life of the
    // process and never unwinds (the drain is caught).
    let ok = unsafe { SetConsoleCtrlHandler(Some(handler), 1) };
    debug_assert_ne!(ok, 0, "SetConsoleCtrlHandler failed");
}

/// Windows has no SIGHUP: nothing to install.
pub(crate) fn on_hangup(_reopen: fn()) {}

/// Windows has no SIGUSR1 (and no other signal a process may send another
/// for this): nothing to install.
pub(crate) fn on_user1(_dump: fn()) {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    static DRAINS: AtomicUsize = AtomicUsize::new(0);

    fn count_drain() {
        DRAINS.fetch_add(1, Ordering::SeqCst);
    }

    /// The handler's logic (the delivery of console events is Windows'
    /// own, and Wine's test runs have no console to send them from): the
    /// first event that ends the process drains, later ones do not, and
    /// every one is passed on to the default handling.
    #[test]
    fn the_first_closing_event_drains_and_every_event_is_passed_on() {
        on_terminate(count_drain);
        for (event, drains) in [
            (CTRL_C_EVENT, 1),
            (CTRL_CLOSE_EVENT, 1),
            (CTRL_SHUTDOWN_EVENT, 1),
        ] {
            // SAFETY: the handler takes any event code and touches only
            // statics; calling it directly is what Windows does.
            let passed_on = unsafe { handler(event) } == 0;
            assert!(passed_on);
            assert_eq!(DRAINS.load(Ordering::SeqCst), drains);
        }
    }
}
