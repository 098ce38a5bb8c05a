//! A sink's backtrace through the `tracing` layer: the
//! DEBUG events inside spans that the file's level filters out come back,
//! exact, before the ERROR; an `EnvFilter` at INFO in front of the layer
//! stops them before they are pushed, and there is nothing to show.

use nowait_core::format::Text;
use nowait_core::sink::BacktraceBuffer;
use nowait_core::{Builder, Level, Sink};
use nowait_testkit::MemoryWriter;
use tracing::{debug, error, info, info_span};
use tracing_subscriber::{prelude::*, EnvFilter};

fn workload() {
    let span = info_span!("request", id = 7u64);
    let _e = span.enter();
    debug!(host = "db1", "connecting");
    info!("accepted");
    debug!(rows = 0u64, "empty result");
    error!(code = 57u64, "query failed");
    debug!("after the error: kept, never written");
}

fn run(filter: Option<&str>) -> (String, nowait_core::stats::Stats) {
    let out = MemoryWriter::default();
    let (logger, guard) = Builder::new()
        .catch_panics(false)
        .flush_on_exit(false)
        .sink(
            Sink::writer(out.clone())
                .format(Text::new().without_time().with_ansi(false))
                .level(Level::Info)
                .backtrace(BacktraceBuffer::records(10)),
        )
        .build()
        .unwrap();
    let layer = nowait_tracing::NowaitLayer::new(logger.clone());
    match filter {
        Some(f) => tracing::subscriber::with_default(
            tracing_subscriber::registry()
                .with(EnvFilter::new(f))
                .with(layer),
            workload,
        ),
        None => {
            tracing::subscriber::with_default(tracing_subscriber::registry().with(layer), workload)
        }
    }
    drop(guard);
    (out.take(), logger.stats())
}

#[test]
fn debug_events_come_back_before_the_error() {
    let (out, s) = run(None);
    let t = "backtrace";
    assert_eq!(
        out,
        format!(
            " INFO request{{id=7}}: {t}: accepted\n \
             INFO nowait: --- 2 earlier records below INFO, kept for this ERROR ---\n\
             DEBUG request{{id=7}}: {t}: connecting host=\"db1\"\n\
             DEBUG request{{id=7}}: {t}: empty result rows=0\n \
             INFO nowait: --- end of the 2 earlier records ---\n\
             ERROR request{{id=7}}: {t}: query failed code=57\n"
        )
    );
    let sink = &s.sinks[0];
    assert_eq!(s.records_written, 5);
    assert_eq!(
        (
            sink.records_written,
            sink.filtered,
            sink.backtrace_released,
            sink.backtrace_kept
        ),
        (4, 1, 2, 0)
    );
}

/// What a filter in front of the layer stops is never pushed: the
/// backtrace cannot show it (documented on `Sink::backtrace`).
#[test]
fn an_env_filter_at_info_leaves_nothing_to_keep() {
    let (out, s) = run(Some("info"));
    let t = "backtrace";
    assert_eq!(
        out,
        format!(
            " INFO request{{id=7}}: {t}: accepted\n\
             ERROR request{{id=7}}: {t}: query failed code=57\n"
        )
    );
    assert_eq!((s.records_written, s.sinks[0].filtered), (2, 0));
}
