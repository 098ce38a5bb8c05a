//! The macros' two encodings (plain values written straight into the ring,
//! anything else through the thread's buffer) carry the same thread item:
//! a sink that prints thread names and ids shows the same thread for both,
//! and for a plain event too large for a record (cut in the thread's buffer
//! before it is pushed), and the lines are otherwise what the format makes
//! of their values.
//!
//! One process-wide logger, so everything runs in one test.

use nowait_core::format::Text;
use nowait_core::{info, Builder, Sink};
use nowait_testkit::MemoryWriter;

#[test]
fn plain_and_rendered_events_name_the_same_thread() {
    let text = MemoryWriter::default();
    let (logger, _guard) = Builder::new()
        // Records of at most 2040 bytes.
        .capacity(4096)
        .flush_on_exit(false)
        .sink(
            Sink::writer(text.clone()).format(
                Text::new()
                    .ansi(false)
                    .without_time()
                    .with_thread_names(true)
                    .with_thread_ids(true),
            ),
        )
        .build()
        .unwrap();
    assert!(nowait_core::__private::logger::records_thread(&logger));
    nowait_core::set_global(logger.clone()).unwrap();

    let id = std::thread::Builder::new()
        .name("worker-7".into())
        .spawn(|| {
            // Plain: a deferred message and plain fields.
            info!(n = 5u64, path = "/a", "plain {}", 1.5);
            // Rendered on the caller: a Debug field.
            info!(v = ?[1, 2], "rendered");
            // Plain, but larger than a record: cut, then pushed.
            let big = "x".repeat(10 * 1024);
            info!(body = big.as_str(), "big");
            std::thread::current().id()
        })
        .unwrap()
        .join()
        .unwrap();
    logger.flush().unwrap();
    let out = text.take();
    let lines: Vec<&str> = out.lines().collect();
    // Ids are padded to two digits, as tracing-subscriber prints them.
    let thread = format!("worker-7 {id:0>2?} ");
    assert_eq!(lines.len(), 3, "{out}");
    let cut = nowait_testkit::expect_cut(lines[2], nowait_testkit::CUT_MARK);
    assert_eq!(
        lines,
        [
            format!(" INFO {thread}macros_thread: plain 1.5 n=5 path=\"/a\""),
            format!(" INFO {thread}macros_thread: rendered v=[1, 2]"),
            format!(" INFO {thread}macros_thread: big body=\"{cut}\""),
        ],
    );
    assert_eq!(logger.stats().truncated, 1);
}
