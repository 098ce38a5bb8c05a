//! An event whose call site the layer was never told of in
//! `register_callsite` (as when `tracing-core` lets one thread dispatch an
//! event before another thread's registration of its call site has run)
//! still comes out with its target and field names.

use nowait_core::format::Text;
use nowait_core::{Builder, Sink};
use nowait_testkit::MemoryWriter;
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Metadata, Subscriber};
use tracing_subscriber::prelude::*;

/// Forwards everything to `S` except `register_callsite`, which it
/// answers itself: the layer sees events of call sites it never
/// registered.
struct SkipsRegistration<S>(S);

impl<S: Subscriber> Subscriber for SkipsRegistration<S> {
    fn register_callsite(&self, _: &'static Metadata<'static>) -> Interest {
        Interest::always()
    }
    fn enabled(&self, meta: &Metadata<'_>) -> bool {
        self.0.enabled(meta)
    }
    fn new_span(&self, attrs: &Attributes<'_>) -> Id {
        self.0.new_span(attrs)
    }
    fn record(&self, span: &Id, values: &Record<'_>) {
        self.0.record(span, values)
    }
    fn record_follows_from(&self, span: &Id, follows: &Id) {
        self.0.record_follows_from(span, follows)
    }
    fn event(&self, event: &Event<'_>) {
        self.0.event(event)
    }
    fn enter(&self, span: &Id) {
        self.0.enter(span)
    }
    fn exit(&self, span: &Id) {
        self.0.exit(span)
    }
    fn clone_span(&self, id: &Id) -> Id {
        self.0.clone_span(id)
    }
    fn try_close(&self, id: Id) -> bool {
        self.0.try_close(id)
    }
}

#[test]
fn event_of_a_call_site_never_registered_keeps_its_names() {
    let out = MemoryWriter::default();
    let (logger, _guard) = Builder::new()
        .flush_on_exit(false)
        .sink(Sink::writer(out.clone()).format(Text::new().ansi(false).with_time(false)))
        .build()
        .unwrap();
    let layer = nowait_tracing::NowaitLayer::new(logger.clone());
    let subscriber = SkipsRegistration(tracing_subscriber::registry().with(layer));
    tracing::subscriber::with_default(subscriber, || {
        let span = tracing::info_span!("conn", peer = "10.0.0.7");
        let _entered = span.enter();
        tracing::info!(target: "app", status = 200u64, "served");
    });
    logger.flush().unwrap();
    assert_eq!(
        out.take(),
        " INFO conn{peer=\"10.0.0.7\"}: app: served status=200\n"
    );
}
