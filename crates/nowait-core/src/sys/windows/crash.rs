//! Fatal errors on Windows: a top-level exception filter
//! (`SetUnhandledExceptionFilter`) runs when an exception no handler took
//! is about to end the process: an access violation, an illegal or
//! privileged instruction, an integer division by zero, an in-page error
//! (a mapped file gone), an array bound exceeded. It drains on the thread
//! that faulted, then hands the exception to the filter installed before
//! nowait's, or to the system, so the exit code and crash reporters see
//! the same exception.
//!
//! Not covered: a stack overflow (too little stack left to drain; Rust's
//! own handler prints its message), `std::process::abort` and a panic with
//! `panic = "abort"` (both `__fastfail`, which runs no handler at all).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Once, OnceLock};

use windows_sys::Win32::Foundation::{
    EXCEPTION_ACCESS_VIOLATION, EXCEPTION_ARRAY_BOUNDS_EXCEEDED, EXCEPTION_ILLEGAL_INSTRUCTION,
    EXCEPTION_INT_DIVIDE_BY_ZERO, EXCEPTION_IN_PAGE_ERROR, EXCEPTION_PRIV_INSTRUCTION,
};
use windows_sys::Win32::System::Diagnostics::Debug::{
    SetUnhandledExceptionFilter, EXCEPTION_CONTINUE_SEARCH, EXCEPTION_POINTERS,
    LPTOP_LEVEL_EXCEPTION_FILTER,
};
use windows_sys::Win32::System::Threading::GetCurrentThreadId;

/// The exceptions that end a process and leave its memory usable.
const FATAL: [i32; 6] = [
    EXCEPTION_ACCESS_VIOLATION,
    EXCEPTION_ILLEGAL_INSTRUCTION,
    EXCEPTION_PRIV_INSTRUCTION,
    EXCEPTION_INT_DIVIDE_BY_ZERO,
    EXCEPTION_IN_PAGE_ERROR,
    EXCEPTION_ARRAY_BOUNDS_EXCEEDED,
];

static INSTALL: Once = Once::new();
static FIRST: AtomicBool = AtomicBool::new(false);
static DRAIN: OnceLock<fn(i32)> = OnceLock::new();
/// The filter installed before nowait's (a function address, or 0).
static PREVIOUS: AtomicUsize = AtomicUsize::new(0);

/// The name of a fatal exception.
pub(crate) fn signal_name(code: i32) -> &'static str {
    match code {
        EXCEPTION_ACCESS_VIOLATION => "EXCEPTION_ACCESS_VIOLATION",
        EXCEPTION_ILLEGAL_INSTRUCTION => "EXCEPTION_ILLEGAL_INSTRUCTION",
        EXCEPTION_PRIV_INSTRUCTION => "EXCEPTION_PRIV_INSTRUCTION",
        EXCEPTION_INT_DIVIDE_BY_ZERO => "EXCEPTION_INT_DIVIDE_BY_ZERO",
        EXCEPTION_IN_PAGE_ERROR => "EXCEPTION_IN_PAGE_ERROR",
        EXCEPTION_ARRAY_BOUNDS_EXCEEDED => "EXCEPTION_ARRAY_BOUNDS_EXCEEDED",
        _ => "a fatal exception",
    }
}

unsafe extern "system" fn on_fatal(info: *const EXCEPTION_POINTERS) -> i32 {
    // SAFETY: the system passes the exception's pointers, valid for the
    // call; either may be null only in a broken caller, which is checked.
    let code = unsafe {
        if info.is_null() || (*info).ExceptionRecord.is_null() {
            0
        } else {
            (*(*info).ExceptionRecord).ExceptionCode
        }
    };
    if FATAL.contains(&code) && !FIRST.swap(true, Ordering::SeqCst) {
        if let Some(drain) = DRAIN.get() {
            drain(code);
        }
    }
    let previous = PREVIOUS.load(Ordering::SeqCst);
    if previous != 0 {
        // SAFETY: `previous` is the address `SetUnhandledExceptionFilter`
        // returned, a filter with this very signature.
        let previous: unsafe extern "system" fn(*const EXCEPTION_POINTERS) -> i32 =
            unsafe { std::mem::transmute::<usize, _>(previous) };
        // SAFETY: chaining with the arguments we were given.
        return unsafe { previous(info) };
    }
    EXCEPTION_CONTINUE_SEARCH
}

/// Installs the filter; `drain` runs once, on the first fatal exception.
pub(crate) fn on_fatal_signals(drain: fn(i32)) {
    if cfg!(miri) {
        return;
    }
    INSTALL.call_once(|| {
        let _ = DRAIN.set(drain);
        let filter: LPTOP_LEVEL_EXCEPTION_FILTER = Some(on_fatal);
        // SAFETY: installs a filter with the signature the system expects;
        // the previous one (if any) is kept to chain to.
        let previous = unsafe { SetUnhandledExceptionFilter(filter) };
        if let Some(previous) = previous {
            PREVIOUS.store(previous as usize, Ordering::SeqCst);
        }
    });
}

/// The calling thread's id (`GetCurrentThreadId`), written without
/// allocating: Windows keeps thread names (`GetThreadDescription`) in a
/// string it allocates, which a crashed process should not do.
pub(crate) fn thread_name(buf: &mut [u8; 64]) -> &[u8] {
    // SAFETY: no arguments, no failure.
    let id = unsafe { GetCurrentThreadId() };
    let mut b = itoa::Buffer::new();
    let s = b.format(id).as_bytes();
    let n = s.len().min(buf.len());
    buf[..n].copy_from_slice(&s[..n]);
    &buf[..n]
}
