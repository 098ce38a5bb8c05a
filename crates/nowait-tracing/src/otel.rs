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
//!
//! Where no span this layer tracks answers, the context attached with
//! OpenTelemetry's own API ([`opentelemetry::Context::attach`]) does:
//! [`current`] reads it, guarded so that a call from a thread-local
//! destructor never touches OpenTelemetry's thread-local once it is gone
//! (which would panic).

use std::cell::Cell;
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
    of_context(&tracing_opentelemetry::get_otel_context(id, dispatch)?)
}

/// The ids of `cx`'s span, if valid.
fn of_context(cx: &opentelemetry::Context) -> Option<TraceContext> {
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
    crate::scope::trace_context(*layer, read)
        .flatten()
        .or_else(current)
}

/// Whether this thread may read OpenTelemetry's current context.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Readable {
    /// Not asked yet on this thread.
    Unknown,
    /// OpenTelemetry's thread-local is alive: [`Sentinel`]'s destructor,
    /// registered after it, has not run.
    Yes,
    /// The thread is ending: [`Sentinel`]'s destructor ran, and
    /// OpenTelemetry's may have.
    No,
}

/// Marks the context unreadable when its destructor runs.
struct Sentinel;

impl Drop for Sentinel {
    fn drop(&mut self) {
        let _ = READABLE.try_with(|r| r.set(Readable::No));
    }
}

thread_local! {
    // No destructor: readable until the thread's very end.
    static READABLE: Cell<Readable> = const { Cell::new(Readable::Unknown) };
    static SENTINEL: Sentinel = const { Sentinel };
}

/// The span context attached on this thread with OpenTelemetry's API
/// (`Context::attach`, which `tracing-opentelemetry` also does when a span
/// is entered), if valid.
///
/// The first call on a thread reads OpenTelemetry's thread-local, which
/// registers its destructor if it was not yet, and then registers
/// [`Sentinel`]'s. Thread-local destructors run in the reverse order of
/// their registration (glibc's `__cxa_thread_atexit_impl`, macOS'
/// `_tlv_atexit` and the standard library's own list, which the others
/// use, all run the last registered first), so the sentinel marks the
/// context unreadable before OpenTelemetry's goes, and a macro run by a
/// later destructor does not read it.
///
/// One case stays unguarded: on a thread where OpenTelemetry's
/// thread-local was used but neither a macro nor an event of this layer
/// ran before the thread began to end, a first call from a destructor
/// that runs after OpenTelemetry's panics there, as `Context::current()`
/// itself would.
pub(crate) fn current() -> Option<TraceContext> {
    match READABLE.try_with(Cell::get).ok()? {
        Readable::No => None,
        Readable::Yes => read_current(),
        Readable::Unknown => {
            let cx = read_current();
            let alive = SENTINEL.try_with(|_| ()).is_ok();
            let _ = READABLE.try_with(|r| {
                r.set(if alive { Readable::Yes } else { Readable::No });
            });
            cx
        }
    }
}

fn read_current() -> Option<TraceContext> {
    opentelemetry::Context::map_current(of_context)
}
