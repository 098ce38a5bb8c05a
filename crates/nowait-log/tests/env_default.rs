//! With `RUST_LOG` unset, the `log` front end lets INFO and
//! above through (not TRACE), and `log::max_level` says so.

use nowait_core::format::Text;
use nowait_core::{Builder, Sink};
use nowait_testkit::MemoryWriter;

#[test]
fn rust_log_unset_means_info() {
    std::env::remove_var("RUST_LOG");
    let out = MemoryWriter::default();
    let (logger, _guard) = Builder::new()
        .catch_panics(false)
        .flush_on_exit(false)
        .sink(Sink::writer(out.clone()).format(Text::new().ansi(false).with_time(false)))
        .build()
        .unwrap();
    nowait_log::init(logger.clone()).unwrap();
    assert_eq!(log::max_level(), log::LevelFilter::Info);
    log::trace!(target: "dep::io", "off");
    log::debug!(target: "dep::io", "off");
    log::info!(target: "dep::io", "on");
    logger.flush().unwrap();
    assert_eq!(out.take(), " INFO dep::io: on\n");
    assert_eq!(logger.stats().records_written, 1);
}
