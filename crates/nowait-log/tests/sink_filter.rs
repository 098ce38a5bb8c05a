//! Sinks' target directives (`Sink::filter`) through the `log` front end:
//! a record goes to the sinks whose filter takes it; one no sink wants is
//! not pushed at all; a reload of a sink's filter reaches the front end's
//! check on the next call.

use nowait_core::filter::Filter;
use nowait_core::format::Text;
use nowait_core::{Builder, Sink};
use nowait_testkit::MemoryWriter;

#[test]
fn log_records_follow_the_sinks_filters_and_their_reload() {
    let (app, hyper) = (MemoryWriter::default(), MemoryWriter::default());
    let text = || Text::new().ansi(false).with_time(false);
    let (logger, _guard) = Builder::new()
        .catch_panics(false)
        .flush_on_exit(false)
        .sink(
            Sink::writer(app.clone())
                .format(text())
                .filter("my_app=debug"),
        )
        .sink(
            Sink::writer(hyper.clone())
                .format(text())
                .filter("hyper=warn"),
        )
        .build()
        .unwrap();
    nowait_log::init_with_filter(logger.clone(), Filter::parse("trace").unwrap()).unwrap();
    log::debug!(target: "my_app::db", "query");
    log::info!(target: "hyper::proto", "not wanted");
    log::warn!(target: "hyper::proto", "reset");
    log::error!(target: "other", "not wanted either");
    logger.flush().unwrap();
    assert_eq!(app.take(), "DEBUG my_app::db: query\n");
    assert_eq!(hyper.take(), " WARN hyper::proto: reset\n");
    assert_eq!(
        logger.stats().records_written,
        2,
        "two rejected before the push"
    );

    logger
        .reload_sink_filter(1, "hyper=info,other=error")
        .unwrap();
    log::info!(target: "hyper::proto", "wanted now");
    log::error!(target: "other", "and this");
    log::debug!(target: "my_app", "still here");
    logger.flush().unwrap();
    assert_eq!(app.take(), "DEBUG my_app: still here\n");
    assert_eq!(
        hyper.take(),
        " INFO hyper::proto: wanted now\nERROR other: and this\n"
    );
    let stats = logger.stats();
    assert_eq!(stats.records_written, 5);
    assert_eq!(stats.dropped(), 0);
}
