//! An invalid `RUST_LOG` directive does not stop `init`; the
//! valid directives apply and the output says which one was ignored and
//! why (escaped: the variable is untrusted input).

use nowait_core::format::Text;
use nowait_core::{Builder, Sink};
use nowait_testkit::MemoryWriter;

#[test]
fn invalid_rust_log_is_reported_and_the_rest_applies() {
    std::env::set_var("RUST_LOG", "warn,app=trace,db=loud\u{1b}[2J");
    let out = MemoryWriter::default();
    let (logger, _guard) = Builder::new()
        .catch_panics(false)
        .flush_on_exit(false)
        .sink(Sink::writer(out.clone()).format(Text::new().ansi(false).with_time(false)))
        .build()
        .unwrap();
    assert!(nowait_core::filter::Filter::from_env().is_err());
    nowait_log::init(logger.clone()).unwrap();
    assert_eq!(log::max_level(), log::LevelFilter::Trace);
    log::trace!(target: "app::x", "on");
    log::info!(target: "db", "off");
    log::warn!(target: "db", "on too");
    logger.flush().unwrap();
    let text = out.take();
    assert_eq!(
        text,
        concat!(
            " WARN nowait_log: invalid filter directive \"db=loud\\u{1b}[2J\": ",
            "span and field filters are not supported (tracing users: use ",
            "tracing_subscriber::EnvFilter); the other RUST_LOG directives apply\n",
            "TRACE app::x: on\n",
            " WARN db: on too\n",
        ),
        "{text}"
    );
}
