//! A program built with `panic = "abort"` that panics after logging:
//! `tests/crash.rs` builds it with the workspace's `panic-abort` profile
//! and checks that every record reaches the file before the process dies
//! of SIGABRT.
//!
//! Run: `cargo run --profile panic-abort -p nowait-core --example crash_panic_abort -- FILE`

use nowait_core::format::Plain;
use nowait_core::{Builder, FullPolicy, Level, Sink};

fn main() {
    let Some(path) = std::env::args_os().nth(1) else {
        eprintln!("usage: crash_panic_abort FILE");
        std::process::exit(2);
    };
    let catch_panics = std::env::var_os("NOWAIT_NO_PANIC_HOOK").is_none();
    let (logger, guard) = Builder::new()
        .format(Plain)
        .full_policy(FullPolicy::Block)
        .catch_panics(catch_panics)
        .sink(Sink::file(path))
        .build()
        .expect("a logger");
    // One CPU for this process: the writer thread only runs when this
    // thread gives way, as on a loaded machine.
    #[cfg(target_os = "linux")]
    // SAFETY: a zeroed cpu_set_t is empty; the call only reads it.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(0, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set);
    }
    for i in 0..10_000 {
        logger.log(Level::Info, &format!("line {i}")).unwrap();
    }
    std::mem::forget(guard);
    panic!("a panic in a panic = \"abort\" build");
}
