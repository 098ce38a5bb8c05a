//! Shows that a push makes no system call on the request thread, idle
//! writer or not: run under `strace -f` and look at the main thread's calls
//! between the two `getppid` markers (only the `clock_nanosleep` of the
//! spacing should appear).
//!
//! Run: `cargo build --release -p nowait-examples --example push_syscalls &&
//! strace -f -o /tmp/trace target/release/examples/push_syscalls`, then
//! `bash examples/push_syscalls.sh /tmp/trace` prints the main thread's
//! calls between the markers, counted.

use std::time::Duration;

use nowait::{Builder, Level, Sink};

fn main() {
    let dir = std::env::temp_dir().join(format!("nowait-push-syscalls-{}", std::process::id()));
    let (logger, guard) = Builder::new()
        .sink(Sink::file(dir.join("app.log")))
        .build()
        .unwrap();
    let lines: Vec<String> = (0..200).map(|i| format!("request {i} served")).collect();
    // Let the writer go idle (its sleep grows to the idle interval).
    std::thread::sleep(Duration::from_millis(300));
    let _ = std::os::unix::process::parent_id(); // marker: start
    for (i, line) in lines.iter().enumerate() {
        logger.log(Level::Info, line).unwrap();
        // Spaced like a server at low traffic: the writer sleeps between.
        if i % 20 == 19 {
            std::thread::sleep(Duration::from_millis(150));
        }
    }
    let _ = std::os::unix::process::parent_id(); // marker: end
    drop(guard);
    let _ = std::fs::remove_dir_all(&dir);
}
