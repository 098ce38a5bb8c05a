//! Per-sink target directives (`Sink::filter`): a record goes to the sinks
//! whose filter takes its target and to no other; a record no sink wants
//! is rejected on the request thread (never pushed, so neither dropped nor
//! counted by a sink); a reload changes the routing at once and the
//! macros' cached interest with it; invalid directives fail the build.
//! One global logger per process: the macros' test is the only one that
//! sets it.

use nowait_core::format::Text;
use nowait_core::{debug, error, info, warn, Builder, Level, Sink};
use nowait_testkit::MemoryWriter;

fn text() -> Text {
    Text::new().without_time().ansi(false)
}

/// One call site per target, called at every step, so that a reload must
/// change the cached interest of sites already registered.
fn calls(step: u32) {
    debug!(target: "my_app::db", "db {}", step);
    info!(target: "my_app", "app {}", step);
    info!(target: "hyper::proto", "hyper info {}", step);
    warn!(target: "hyper::proto", "hyper warn {}", step);
    debug!(target: "other", "other debug {}", step);
    error!(target: "other", "other error {}", step);
}

#[test]
fn macros_route_by_target_and_reject_what_no_sink_wants() {
    let (app, errors) = (MemoryWriter::default(), MemoryWriter::default());
    let (logger, _guard) = Builder::new()
        .catch_panics(false)
        .flush_on_exit(false)
        .sink(
            Sink::writer(app.clone())
                .format(text())
                .filter("my_app=debug,hyper=warn"),
        )
        .sink(
            Sink::writer(errors.clone())
                .format(text())
                .level(Level::Error),
        )
        .build()
        .unwrap();
    nowait_core::set_global(logger.clone()).unwrap();

    calls(1);
    logger.flush().unwrap();
    assert_eq!(
        app.take(),
        "DEBUG my_app::db: db 1\n INFO my_app: app 1\n WARN hyper::proto: hyper warn 1\n"
    );
    assert_eq!(errors.take(), "ERROR other: other error 1\n");
    let stats = logger.stats();
    // `hyper info` and `other debug` were wanted by no sink: never pushed.
    assert_eq!(stats.records_written, 4, "{stats:#?}");
    assert_eq!(stats.dropped(), 0);
    // What one sink took and the other did not is filtered there.
    assert_eq!(stats.sinks[0].filtered, 1, "other error, in the app's sink");
    assert_eq!(stats.sinks[1].filtered, 3, "db, app, hyper warn");

    // Reload: the app's sink now takes `other` from INFO, not `my_app::db`.
    logger
        .reload_sink_filter(0, "my_app=info,hyper=warn,other=info")
        .unwrap();
    calls(2);
    logger.flush().unwrap();
    assert_eq!(
        app.take(),
        " INFO my_app: app 2\n WARN hyper::proto: hyper warn 2\nERROR other: other error 2\n"
    );
    assert_eq!(errors.take(), "ERROR other: other error 2\n");
    let stats = logger.stats();
    assert_eq!(stats.records_written, 4 + 3, "db and other debug rejected");
    assert_eq!(stats.dropped(), 0);

    // Removing the filter: the app's sink takes everything again.
    logger.set_sink_filter(0, None).unwrap();
    calls(3);
    logger.flush().unwrap();
    assert_eq!(app.take().lines().count(), 6);
    assert_eq!(logger.stats().records_written, 7 + 6);
}

/// A sink's filter applies on the writer thread to records any front end
/// pushed, and the `Logger::enabled_for` answer front ends ask follows it.
#[test]
fn enabled_for_is_the_union_of_the_sinks() {
    let (logger, _guard) = Builder::new()
        .flush_on_exit(false)
        .sink(Sink::writer(std::io::sink()).filter("a=info"))
        .sink(
            Sink::writer(std::io::sink())
                .filter("b=warn")
                .level(Level::Error),
        )
        .sink(
            Sink::writer(std::io::sink())
                .filter("c::d=trace")
                .level(Level::Debug),
        )
        .build()
        .unwrap();
    let cases = [
        ("a", Level::Info, true),
        ("a::x", Level::Debug, false),
        ("b", Level::Warn, false),
        ("b", Level::Error, true),
        ("c::d::e", Level::Debug, true),
        ("c::d", Level::Trace, false),
        ("c", Level::Error, false),
        ("", Level::Error, false),
    ];
    for (target, level, wanted) in cases {
        assert_eq!(
            logger.enabled_for(target, level),
            wanted,
            "{target} {level}"
        );
    }
    logger.reload_sink_filter(1, "error").unwrap();
    assert!(logger.enabled_for("anything", Level::Error));
    assert!(!logger.enabled_for("anything", Level::Warn));
}

/// Lines without a target (`Logger::log`) are judged by a filter's bare
/// level; a reload is seen by the very next record (each one is flushed
/// before the next reload: records still in the ring during a reload may
/// be routed by either filter).
#[test]
fn lines_without_a_target_follow_the_bare_level_and_reloads() {
    let (a, b) = (MemoryWriter::default(), MemoryWriter::default());
    let (logger, guard) = Builder::new()
        .flush_on_exit(false)
        .sink(
            Sink::writer(a.clone())
                .format(text())
                .filter("warn,db=debug"),
        )
        .sink(Sink::writer(b.clone()).format(text()).filter("db=debug"))
        .build()
        .unwrap();
    logger.log(Level::Info, "info line").unwrap();
    logger.log(Level::Warn, "warn line").unwrap();
    logger.flush().unwrap();
    for i in 0..100 {
        logger
            .reload_sink_filter(1, if i % 2 == 0 { "info" } else { "off" })
            .unwrap();
        logger.log(Level::Info, &format!("n{i}")).unwrap();
        logger.flush().unwrap();
    }
    drop(guard);
    assert_eq!(a.text(), "warn line\n");
    let expected: String = (0..100).step_by(2).map(|i| format!("n{i}\n")).collect();
    assert_eq!(b.text(), expected);
    let stats = logger.stats();
    assert_eq!(stats.sinks[0].filtered, 101);
    assert_eq!(stats.sinks[1].filtered, 52);
}

#[test]
fn invalid_directives_are_a_build_error_naming_the_sink() {
    let err = Builder::new()
        .sink(Sink::stderr().filter("my_app=debug,hyper=loud"))
        .build()
        .unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("sink stderr") && msg.contains("hyper=loud"),
        "{msg}"
    );
    let (logger, _guard) = Builder::new()
        .flush_on_exit(false)
        .sink(Sink::writer(std::io::sink()).filter("app=info"))
        .build()
        .unwrap();
    let err = logger.reload_sink_filter(0, "app=[x]").unwrap_err();
    assert!(err.to_string().contains("app=[x]"), "{err}");
    assert!(
        logger.enabled_for("app", Level::Info),
        "the old filter stays"
    );
    assert!(logger.reload_sink_filter(1, "info").is_err());
}
