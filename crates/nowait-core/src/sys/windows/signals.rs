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
