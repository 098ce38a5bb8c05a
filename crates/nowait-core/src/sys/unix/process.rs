//! Registration with the C runtime on Unix: `atexit` and `pthread_atfork`.
//! The callbacks are plain Rust functions stored in statics.

use std::sync::OnceLock;

static AT_EXIT: OnceLock<fn()> = OnceLock::new();
static AT_FORK: OnceLock<[fn(); 3]> = OnceLock::new();

extern "C" fn run_at_exit() {
    if let Some(f) = AT_EXIT.get() {
        // Unwinding out of an `extern "C"` function aborts; never let it.
        let _ = std::panic::catch_unwind(f);
    }
}

fn fork_hook(i: usize) {
    if let Some(hooks) = AT_FORK.get() {
        let _ = std::panic::catch_unwind(hooks[i]);
    }
}

extern "C" fn run_prepare() {
    fork_hook(0);
}

extern "C" fn run_parent() {
    fork_hook(1);
}

extern "C" fn run_child() {
    fork_hook(2);
}

/// Runs `f` from `atexit` (`std::process::exit`, a return from `main`).
/// At most once per process; later calls are ignored.
pub(crate) fn at_exit(f: fn()) {
    // Miri does not model `atexit`; the hook is tested in a child process.
    if cfg!(miri) || AT_EXIT.set(f).is_err() {
        return;
    }
    // SAFETY: `run_at_exit` is an `extern "C" fn()` that takes no arguments
    // and never unwinds, which is all `atexit` requires; it stays valid for
    // the life of the process.
    let rc = unsafe { libc::atexit(run_at_exit) };
    debug_assert_eq!(rc, 0, "atexit registration failed");
}

/// Runs `prepare` before `fork()` in the parent, `parent` after it in the
/// parent, and `child` after it in the child (where only the forking thread
/// exists). At most once per process.
pub(crate) fn at_fork(prepare: fn(), parent: fn(), child: fn()) {
    if cfg!(miri) || AT_FORK.set([prepare, parent, child]).is_err() {
        return;
    }
    // SAFETY: the three handlers are `extern "C" fn()`s that take no
    // arguments and never unwind, as `pthread_atfork` requires; they stay
    // valid for the life of the process.
    let rc = unsafe { libc::pthread_atfork(Some(run_prepare), Some(run_parent), Some(run_child)) };
    debug_assert_eq!(rc, 0, "pthread_atfork registration failed");
}

/// The host's name (`uname`'s node name), for syslog.
pub(crate) fn hostname() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}
