//! Registration of the `atexit` handler: the one other place with `unsafe`
//! (a single FFI call), kept apart from the ring so each unsafe site is
//! small and obvious.

extern "C" fn run_exit_hooks() {
    // Unwinding out of an `extern "C"` function aborts; never let it.
    let _ = std::panic::catch_unwind(crate::hooks::on_exit);
}

/// Registers [`run_exit_hooks`] with the C runtime, so that
/// `std::process::exit` and a return from `main` drain the loggers.
pub(crate) fn install() {
    // Miri does not model `atexit`; the hook is tested in a child process.
    if cfg!(miri) {
        return;
    }
    // SAFETY: `run_exit_hooks` is an `extern "C" fn()` that takes no
    // arguments and never unwinds, which is all `atexit` requires; it stays
    // valid for the life of the process.
    let rc = unsafe { libc::atexit(run_exit_hooks) };
    debug_assert_eq!(rc, 0, "atexit registration failed");
}
