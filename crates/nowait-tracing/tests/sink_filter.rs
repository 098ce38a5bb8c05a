//! Sinks' target directives (`Sink::filter`) through the `tracing` layer:
//! the layer's call-site interest is the union of the sinks' filters, so an
//! event no sink wants is never pushed; a reload of a sink's filter
//! rebuilds `tracing`'s interest cache, so call sites already registered
//! follow it.

use nowait_core::format::Text;
use nowait_core::{Builder, Sink};
use nowait_testkit::MemoryWriter;
use tracing_subscriber::prelude::*;

fn calls(step: u32) {
    tracing::debug!(target: "my_app::db", step, "query");
    tracing::info!(target: "hyper::proto", step, "hyper info");
    tracing::warn!(target: "hyper::proto", step, "hyper warn");
}

#[test]
fn layer_events_follow_the_sinks_filters_and_their_reload() {
    let out = MemoryWriter::default();
    let (layer, _guard) = nowait_tracing::layer(
        Builder::new()
            .catch_panics(false)
            .flush_on_exit(false)
            .sink(
                Sink::writer(out.clone())
                    .format(Text::new().ansi(false).with_time(false))
                    .filter("my_app=debug,hyper=warn"),
            ),
    )
    .unwrap();
    let logger = layer.logger().clone();
    tracing_subscriber::registry().with(layer).init();
    calls(1);
    logger.flush().unwrap();
    assert_eq!(
        out.take(),
        "DEBUG my_app::db: query step=1\n WARN hyper::proto: hyper warn step=1\n"
    );
    assert_eq!(logger.stats().records_written, 2, "hyper info never pushed");

    logger.reload_sink_filter(0, "hyper=info").unwrap();
    calls(2);
    logger.flush().unwrap();
    assert_eq!(
        out.take(),
        " INFO hyper::proto: hyper info step=2\n WARN hyper::proto: hyper warn step=2\n"
    );
    assert_eq!(
        logger.stats().records_written,
        4,
        "the db query never pushed"
    );
}
