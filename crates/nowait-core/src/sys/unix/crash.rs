//! Fatal signals on Unix (SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT,
//! SIGTRAP): a handler that runs the crate's drain, then hands the signal
//! to whatever handled it before nowait, so the exit status, core dumps,
//! Rust's own stack-overflow message and crash reporters installed earlier
//! behave as without nowait.
//!
//! # The handler, step by step (each step async-signal-safe)
//!
//! 1. `FIRST.swap(true)`: only the first fatal signal of the process
//!    drains. A second one (a crash during the drain, on this thread or
//!    another) skips straight to step 3, so no crash can hang the process.
//! 2. The drain (the crate's `crash` module): atomics, a doorbell `write(2)`,
//!    `clock_gettime`, `nanosleep`; no allocation, no lock (see there).
//! 3. The previous action is put back with `sigaction`. A signal the kernel
//!    raised for a faulting instruction (`si_code > 0`) is left to fault
//!    again when the handler returns, now under the previous action, with
//!    its own address and context (what Rust's stack-overflow handler
//!    needs); a signal sent by `kill`, `raise` or `abort()` (`si_code <= 0`)
//!    is raised again, and is delivered under the previous action as soon
//!    as the handler returns (it is blocked until then).
//!
//! The handler runs on the thread's alternate signal stack where there is
//! one (`SA_ONSTACK`; Rust gives every thread it starts one), so a stack
//! overflow is handled too; it needs well under a page of stack.

use std::cell::UnsafeCell;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Once, OnceLock};

/// The signals that end a process with a crash.
pub(crate) const FATAL: [i32; 6] = [
    libc::SIGSEGV,
    libc::SIGBUS,
    libc::SIGILL,
    libc::SIGFPE,
    libc::SIGABRT,
    libc::SIGTRAP,
];

/// The actions in place before nowait's, per entry of [`FATAL`]; written
/// once, before the handler is installed, read by the handler only.
struct Previous(UnsafeCell<[MaybeUninit<libc::sigaction>; 6]>);

// SAFETY: written once inside `INSTALL.call_once` before any handler that
// reads it is installed, and never written again.
unsafe impl Sync for Previous {}

static PREVIOUS: Previous = Previous(UnsafeCell::new([const { MaybeUninit::uninit() }; 6]));
static INSTALL: Once = Once::new();
static FIRST: AtomicBool = AtomicBool::new(false);
static DRAIN: OnceLock<fn(i32)> = OnceLock::new();

/// The name of a fatal signal.
pub(crate) fn signal_name(sig: i32) -> &'static str {
    match sig {
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGBUS => "SIGBUS",
        libc::SIGILL => "SIGILL",
        libc::SIGFPE => "SIGFPE",
        libc::SIGABRT => "SIGABRT",
        libc::SIGTRAP => "SIGTRAP",
        _ => "a fatal signal",
    }
}

extern "C" fn on_fatal(sig: i32, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    if !FIRST.swap(true, Ordering::SeqCst) {
        // An initialised `OnceLock` is read with one atomic load.
        if let Some(drain) = DRAIN.get() {
            drain(sig);
        }
    }
    let Some(i) = FATAL.iter().position(|&s| s == sig) else {
        return;
    };
    // SAFETY: entry `i` was initialised by `sigaction` before this handler
    // was installed for `sig`; restoring it is what `sigaction` is for.
    unsafe {
        let previous = (*PREVIOUS.0.get())[i].as_ptr();
        libc::sigaction(sig, previous, std::ptr::null_mut());
    }
    // SAFETY: `info` is the kernel's siginfo for this delivery (SA_SIGINFO).
    let sent = info.is_null() || unsafe { (*info).si_code } <= 0;
    if sent {
        // SAFETY: raising a signal is async-signal-safe; it stays pending
        // until this handler returns.
        unsafe {
            libc::raise(sig);
        }
    }
}

/// Installs the handler for every fatal signal; `drain` runs once, on the
/// first of them. At most once per process.
pub(crate) fn on_fatal_signals(drain: fn(i32)) {
    if cfg!(miri) {
        return;
    }
    INSTALL.call_once(|| {
        let _ = DRAIN.set(drain);
        for (i, &sig) in FATAL.iter().enumerate() {
            // SAFETY: a zeroed `sigaction` is a valid value (empty mask, no
            // flags); the handler is an `extern "C"` function with the
            // SA_SIGINFO signature; `PREVIOUS[i]` is written by the kernel
            // before anything reads it.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_fatal as *const () as libc::sighandler_t;
                action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut action.sa_mask);
                let previous = (*PREVIOUS.0.get())[i].as_mut_ptr();
                if libc::sigaction(sig, std::ptr::null(), previous) != 0 {
                    continue;
                }
                // A signal the program ignores stays ignored.
                if (*previous).sa_sigaction == libc::SIG_IGN {
                    continue;
                }
                libc::sigaction(sig, &action, std::ptr::null_mut());
            }
        }
    });
}

/// The calling thread's name as the system keeps it (at most 15 bytes on
/// Linux), without allocating: `prctl(PR_GET_NAME)` on Linux,
/// `pthread_getname_np` on Apple systems; `?` elsewhere.
pub(crate) fn thread_name(buf: &mut [u8; 64]) -> &[u8] {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    // SAFETY: PR_GET_NAME writes at most 16 bytes (NUL included) into the
    // buffer, which holds 64.
    let ok = unsafe { libc::prctl(libc::PR_GET_NAME, buf.as_mut_ptr()) } == 0;
    #[cfg(any(target_os = "macos", target_os = "ios"))]
    // SAFETY: the buffer and its length are valid; the call NUL-terminates.
    let ok = unsafe {
        libc::pthread_getname_np(libc::pthread_self(), buf.as_mut_ptr().cast(), buf.len())
    } == 0;
    #[cfg(not(any(
        target_os = "linux",
        target_os = "android",
        target_os = "macos",
        target_os = "ios"
    )))]
    let ok = false;
    if !ok {
        return b"?";
    }
    let len = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    &buf[..len]
}
