//! The OpenTelemetry span an event is logged in, as `tracing-opentelemetry`
//! keeps it (feature `opentelemetry`).
//!
//! `tracing-opentelemetry`'s layer keeps each span's OpenTelemetry data in
//! the span's extensions, behind a type of its own; its one reader is
//! [`tracing_opentelemetry::get_otel_context`], which needs the
//! subscriber's `Dispatch`. The layer is handed that when the subscriber
//! becomes one, and keeps a weak reference: a strong one would keep the
//! subscriber, which owns the layer, alive for ever.
//!
//! Reading the context starts the OpenTelemetry span if it was not yet
//! (as `tracing-opentelemetry`'s own `on_event` does), so the ids are
//! those the exported span has.

use std::sync::OnceLock;

use nowait_core::event::TraceContext;
use opentelemetry::trace::TraceContextExt;
use tracing_core::dispatcher::{Dispatch, WeakDispatch};
use tracing_core::span::Id;

/// The subscriber the layer is part of, once it is a `Dispatch`.
#[derive(Debug, Default)]
pub(crate) struct Otel {
    dispatch: OnceLock<WeakDispatch>,
}

impl Clone for Otel {
    /// A clone is a layer of another subscriber, registered anew.
    fn clone(&self) -> Otel {
        Otel::default()
    }
}

impl Otel {
    /// Called once, when the subscriber becomes a `Dispatch`.
    pub(crate) fn register(&self, dispatch: &Dispatch) {
        let _ = self.dispatch.set(dispatch.downgrade());
    }

    /// The trace context of span `id`: `None` if the subscriber has no
    /// `tracing-opentelemetry` layer, the span none of its data, or its
    /// OpenTelemetry span is not valid (no tracer provider).
    pub(crate) fn context(&self, id: &Id) -> Option<TraceContext> {
        let dispatch = self.dispatch.get()?.upgrade()?;
        let cx = tracing_opentelemetry::get_otel_context(id, &dispatch)?;
        let span = cx.span();
        let sc = span.span_context();
        sc.is_valid().then(|| {
            TraceContext::new(
                sc.trace_id().to_bytes(),
                sc.span_id().to_bytes(),
                sc.trace_flags().to_u8(),
            )
        })
    }
}
