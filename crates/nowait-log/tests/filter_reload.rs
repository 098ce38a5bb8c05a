//! Filtering through the `log` front end: per-target directives, per-sink
//! levels, and reloading the directives at run time, with exact output
//! bytes. One `log` logger per process, so one test.

use nowait_core::filter::{Filter, FilterHandle};
use nowait_core::format::Text;
use nowait_core::{Builder, Level, Sink};
use nowait_testkit::MemoryWriter;

#[test]
fn directives_sink_levels_and_reload() {
    let (all, warn) = (MemoryWriter::default(), MemoryWriter::default());
    let text = || Text::new().ansi(false).with_time(false);
    let (logger, _guard) = Builder::new()
        .catch_panics(false)
        .flush_on_exit(false)
        .sink(Sink::writer(all.clone()).format(text()))
        .sink(Sink::writer(warn.clone()).format(text()).level(Level::Warn))
        .build()
        .unwrap();
    nowait_log::init_with_filter(logger.clone(), Filter::parse("info,app::db=debug").unwrap())
        .unwrap();
    assert_eq!(log::max_level(), log::LevelFilter::Debug);

    log::debug!(target: "app::db", "d1 on");
    log::debug!(target: "app::db::pool", "d2 on");
    log::debug!(target: "app::dbx", "d3 off: not a module of app::db");
    log::debug!(target: "app::http", "h1 off");
    log::trace!(target: "app::db", "t1 off");
    log::info!(target: "hyper", "i1 on");
    log::warn!(target: "hyper", "w1 on");

    let handle = FilterHandle::new();
    handle.reload("warn,app::http=debug").unwrap();
    assert_eq!(log::max_level(), log::LevelFilter::Debug);
    log::debug!(target: "app::db", "d4 off after reload");
    log::debug!(target: "app::http", "h2 on after reload");
    log::info!(target: "hyper", "i2 off after reload");
    log::warn!(target: "hyper", "w2 on");

    // An invalid reload names the directive and changes nothing.
    let err = handle.reload("trace,app=sometimes").unwrap_err();
    assert!(err.to_string().contains("\"app=sometimes\""), "{err}");
    log::debug!(target: "app::http", "h3 on");
    log::trace!(target: "app::http", "t2 off");

    handle.reload("trace").unwrap();
    assert_eq!(log::max_level(), log::LevelFilter::Trace);
    log::trace!(target: "app::http", "t3 on");

    handle.reload("off").unwrap();
    assert_eq!(log::max_level(), log::LevelFilter::Off);
    log::error!(target: "app", "e1 off");

    logger.flush().unwrap();
    assert_eq!(
        all.take(),
        concat!(
            "DEBUG app::db: d1 on\n",
            "DEBUG app::db::pool: d2 on\n",
            " INFO hyper: i1 on\n",
            " WARN hyper: w1 on\n",
            "DEBUG app::http: h2 on after reload\n",
            " WARN hyper: w2 on\n",
            "DEBUG app::http: h3 on\n",
            "TRACE app::http: t3 on\n",
        )
    );
    assert_eq!(warn.take(), " WARN hyper: w1 on\n WARN hyper: w2 on\n");
    let stats = logger.stats();
    assert_eq!(stats.records_written, 8, "nothing filtered out was pushed");
    assert_eq!(stats.sinks[0].records_written, 8);
    assert_eq!(stats.sinks[0].filtered, 0);
    assert_eq!(stats.sinks[1].records_written, 2);
    assert_eq!(stats.sinks[1].filtered, 6);
}
