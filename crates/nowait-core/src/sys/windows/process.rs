//! Registration with the C runtime on Windows: `atexit` (the CRT runs it
//! from `exit`, so `std::process::exit` and a return from `main` drain).
//! There is no `fork`.

use std::sync::OnceLock;

static AT_EXIT: OnceLock<fn()> = OnceLock::new();

extern "C" fn run_at_exit() {
    if let Some(f) = AT_EXIT.get() {
        // Unwinding out of an `extern "C"` function aborts; never let it.
        let _ = std::panic::catch_unwind(f);
    }
}

/// Runs `f` from `atexit`. At most once per process.
pub(crate) fn at_exit(f: fn()) {
    if cfg!(miri) || AT_EXIT.set(f).is_err() {
        return;
    }
    // SAFETY: `run_at_exit` is an `extern "C" fn()` that takes no arguments
    // and never unwinds, which is all `atexit` requires; it stays valid for
    // the life of the process.
    let rc = unsafe { libc::atexit(run_at_exit) };
    debug_assert_eq!(rc, 0, "atexit registration failed");
}

/// Windows has no `fork`: nothing to register.
pub(crate) fn at_fork(_prepare: fn(), _parent: fn(), _child: fn()) {}

/// The computer's name (`COMPUTERNAME`), for syslog.
pub(crate) fn hostname() -> String {
    std::env::var("COMPUTERNAME").unwrap_or_else(|_| "localhost".into())
}
