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

/// The layer nowait's own macros take the trace context from: the first
/// layer with this feature, pushing to the global logger (the macros'),
/// that became part of a subscriber (its id in the per-thread span stack,
/// and that subscriber).
static FOR_MACROS: OnceLock<(u64, WeakDispatch)> = OnceLock::new();

impl Otel {
    /// Called once, when the subscriber of layer `layer` becomes a
    /// `Dispatch`. If the layer pushes to the global logger
    /// (`for_macros`), the first such layer also answers nowait's macros.
    pub(crate) fn register(&self, dispatch: &Dispatch, layer: u64, for_macros: bool) {
        let _ = self.dispatch.set(dispatch.downgrade());
        if for_macros && FOR_MACROS.set((layer, dispatch.downgrade())).is_ok() {
            nowait_core::__private::set_trace_source(macros_trace_context);
        }
    }

    /// The trace context of span `id`: `None` if the subscriber has no
    /// `tracing-opentelemetry` layer, the span none of its data, or its
    /// OpenTelemetry span is not valid (no tracer provider).
    pub(crate) fn context(&self, id: &Id) -> Option<TraceContext> {
        context_of(id, &self.dispatch.get()?.upgrade()?)
    }
}

fn context_of(id: &Id, dispatch: &Dispatch) -> Option<TraceContext> {
    let cx = tracing_opentelemetry::get_otel_context(id, dispatch)?;
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

/// For nowait's macros (`nowait::info!`, ...): the trace context of the
/// span entered on this thread, as the first layer tracks it, kept for
/// the `enter` like the layer's own events'. Nothing when no span is
/// entered (one thread-local read), or when the thread's stack cannot
/// answer (an `enter` went unrecorded): the macros do not walk the
/// registry.
fn macros_trace_context() -> Option<TraceContext> {
    let (layer, dispatch) = FOR_MACROS.get()?;
    let read = |id| context_of(&Id::from_u64(id), &dispatch.upgrade()?);
    crate::scope::trace_context(*layer, read).flatten()
}
