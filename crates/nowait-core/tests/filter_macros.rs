//! Filtering through nowait's macros: per-target directives cached per
//! call site, the sinks' levels, `set_max_level`, and reloading the
//! directives at run time (a call disabled before a reload is enabled
//! after it and vice versa), with exact output bytes. One global logger
//! per process, so one test.

use nowait_core::filter::FilterHandle;
use nowait_core::format::Text;
use nowait_core::{debug, error, info, trace, warn, Builder, Level, Sink};
use nowait_testkit::MemoryWriter;

/// Drops the 27-byte timestamp and the space after it.
fn strip_times(text: &str) -> String {
    text.lines().map(|l| format!("{}\n", &l[28..])).collect()
}

/// One call site per target and level, called at every step, so that a
/// reload must change the cached interest of sites already registered.
fn calls(step: u32) {
    trace!(target: "app::db", "trace db {}", step);
    debug!(target: "app::db", "debug db {}", step);
    debug!(target: "app::dbx", "debug dbx {}", step);
    debug!(target: "app::http", "debug http {}", step);
    info!(target: "hyper::proto", "info hyper {}", step);
    warn!(target: "hyper::proto", "warn hyper {}", step);
    error!(target: "other", "error other {}", step);
}

#[test]
fn macros_follow_directives_sink_levels_and_reloads() {
    let (all, warn) = (MemoryWriter::default(), MemoryWriter::default());
    let (logger, _guard) = Builder::new()
        .catch_panics(false)
        .flush_on_exit(false)
        .sink(
            Sink::writer(all.clone())
                .format(Text::new().ansi(false))
                .level(Level::Debug),
        )
        .sink(
            Sink::writer(warn.clone())
                .format(Text::new().ansi(false))
                .level(Level::Warn),
        )
        .build()
        .unwrap();
    assert_eq!(logger.min_level(), Level::Debug);
    let handle = FilterHandle::new();
    // Before the global logger: nothing, whatever the filter.
    handle.reload("trace").unwrap();
    calls(0);
    nowait_core::set_global(logger.clone()).unwrap();

    // Step 1: no sink takes TRACE, so `trace db` stays off under `trace`.
    calls(1);
    handle.reload("info,app::db=trace").unwrap();
    calls(2);
    handle.reload("warn,app::http=debug").unwrap();
    calls(3);
    nowait_core::filter::set_max_level(Level::Error);
    calls(4);
    nowait_core::filter::set_max_level(Level::Trace);
    handle.reload("off").unwrap();
    calls(5);
    logger.flush().unwrap();
    assert_eq!(
        strip_times(&all.take()),
        concat!(
            "DEBUG app::db: debug db 1\n",
            "DEBUG app::dbx: debug dbx 1\n",
            "DEBUG app::http: debug http 1\n",
            " INFO hyper::proto: info hyper 1\n",
            " WARN hyper::proto: warn hyper 1\n",
            "ERROR other: error other 1\n",
            "DEBUG app::db: debug db 2\n",
            " INFO hyper::proto: info hyper 2\n",
            " WARN hyper::proto: warn hyper 2\n",
            "ERROR other: error other 2\n",
            "DEBUG app::http: debug http 3\n",
            " WARN hyper::proto: warn hyper 3\n",
            "ERROR other: error other 3\n",
            "ERROR other: error other 4\n",
        )
    );
    assert_eq!(
        strip_times(&warn.take()),
        concat!(
            " WARN hyper::proto: warn hyper 1\n",
            "ERROR other: error other 1\n",
            " WARN hyper::proto: warn hyper 2\n",
            "ERROR other: error other 2\n",
            " WARN hyper::proto: warn hyper 3\n",
            "ERROR other: error other 3\n",
            "ERROR other: error other 4\n",
        )
    );
    let stats = logger.stats();
    assert_eq!(stats.records_written, 14, "nothing disabled was pushed");

    // A disabled call evaluates none of its arguments.
    let evaluated = std::cell::Cell::new(0);
    let arg = || evaluated.set(evaluated.get() + 1);
    trace!(target: "app::db", "trace db {:?}", arg());
    assert_eq!(evaluated.get(), 0, "a disabled call evaluated its argument");
    assert_eq!(stats.sinks[1].filtered, 7);

    // Reloads racing first calls (registration) and later calls: no
    // deadlock, and once the last reload returns every site obeys it.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let threads: Vec<_> = (0..2)
        .map(|_| {
            let stop = std::sync::Arc::clone(&stop);
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    calls(6);
                    warn!(target: "race", "fresh site");
                }
            })
        })
        .collect();
    for i in 0..200 {
        handle
            .reload(if i % 2 == 0 { "trace" } else { "off" })
            .unwrap();
    }
    handle.reload("off").unwrap();
    // A call that loaded its interest just before the last reload may
    // still push: let those finish.
    std::thread::sleep(std::time::Duration::from_millis(10));
    logger.flush().unwrap();
    let before = logger.stats().records_written;
    std::thread::sleep(std::time::Duration::from_millis(20));
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    logger.flush().unwrap();
    assert_eq!(
        logger.stats().records_written,
        before,
        "a call after the last reload (`off`) was pushed"
    );
    all.take();
    warn.take();
}
