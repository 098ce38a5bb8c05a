//! This thread's entered spans, each with its chain of enclosing spans
//! encoded once (on the first event inside it), so that further events
//! inside the same `enter` copy the chain instead of looking up every
//! enclosing span in the registry and taking its extensions' lock.
//!
//! The stack mirrors the registry's per-thread stack of entered spans:
//! `on_enter` pushes, `on_exit` removes the innermost entry of that span
//! (an `Entered` guard is `!Send`, so enter and exit happen on one thread).
//! Like the registry, a span entered while already on the stack does not
//! become the current one. An entry belongs to one layer instance
//! (`layer`, assigned when the layer is added to a subscriber: span ids
//! are per subscriber). A contextual event uses the innermost entry that
//! is not such a duplicate, and only if it belongs to the same layer;
//! anything else (an explicit parent, another subscriber's span on top, a
//! re-entrant call) walks the registry as before.
//!
//! Memory: one entry per level of nesting this thread has reached, each
//! keeping a chain buffer of at most [`MAX_KEPT`] bytes between enters.
//!
//! With the `opentelemetry` feature, an entry also keeps its span's trace
//! context, read on the first event of the `enter` (it cannot change once
//! read: reading starts the OpenTelemetry span, whose ids are then fixed).
//!
//! `Span::record` can change a span's fields after a chain was encoded:
//! every record bumps [`EPOCH`], and a chain encoded at an older epoch is
//! encoded again.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU64, Ordering};

use nowait_core::__private::event::EventBuf;

/// Bumped (release) after every change of a span's recorded fields.
static EPOCH: AtomicU64 = AtomicU64::new(0);

/// Layer instances, so that each subscriber's span ids stay apart.
static LAYERS: AtomicU64 = AtomicU64::new(1);

/// A chain longer than this is not kept between enters (its buffer is
/// given back), so one deep or wide span cannot pin memory on the thread.
const MAX_KEPT: usize = 4096;

/// A fresh layer identity.
pub(crate) fn next_layer() -> u64 {
    LAYERS.fetch_add(1, Ordering::Relaxed)
}

/// The current epoch: a chain encoded now is valid while it lasts.
pub(crate) fn epoch() -> u64 {
    EPOCH.load(Ordering::Acquire)
}

/// Notes that a span's fields changed: chains encoded before are stale.
pub(crate) fn fields_changed() {
    EPOCH.fetch_add(1, Ordering::Release);
}

struct Entry {
    layer: u64,
    id: u64,
    /// Entered while already on the stack: like the registry, such an
    /// entry does not become the current span.
    duplicate: bool,
    /// The encoded chain, valid if `epoch` is `Some` and current.
    chain: EventBuf,
    epoch: Option<u64>,
    /// The span's trace context, once read in this `enter`.
    #[cfg(feature = "opentelemetry")]
    trace: Option<Option<nowait_core::event::TraceContext>>,
}

struct Stack {
    entries: Vec<Entry>,
    /// Entries in use (`entries[depth..]` are kept for their buffers).
    depth: usize,
}

thread_local! {
    static STACK: RefCell<Stack> = const {
        RefCell::new(Stack {
            entries: Vec::new(),
            depth: 0,
        })
    };
    /// An enter or exit on this thread could not be recorded (the stack was
    /// borrowed, or gone at thread exit): the stack no longer mirrors the
    /// registry's, so it answers nothing from then on.
    static LOST: Cell<bool> = const { Cell::new(false) };
    /// `Stack::depth`, mirrored where an event on a thread without an
    /// entered span reads it with one `const` thread-local access (no lazy
    /// initialisation, no borrow).
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

/// What the stack knows of a contextual event's spans.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Chain {
    /// The current span's chain was handed to `copy`.
    Copied,
    /// No span is entered on this thread (for any layer): the event has no
    /// enclosing span, and the registry need not be asked.
    NoSpan,
    /// The stack cannot answer: the caller walks the registry.
    Unknown,
}

fn lost() {
    let _ = LOST.try_with(|l| l.set(true));
}

/// `on_enter`: a span of `layer` entered on this thread.
pub(crate) fn enter(layer: u64, id: u64) {
    let recorded = STACK.try_with(|s| {
        let Ok(mut s) = s.try_borrow_mut() else {
            lost();
            return;
        };
        let s = &mut *s;
        let depth = s.depth;
        let duplicate = s.entries[..depth]
            .iter()
            .any(|e| e.layer == layer && e.id == id);
        if depth == s.entries.len() {
            s.entries.push(Entry {
                layer,
                id,
                duplicate,
                chain: EventBuf::new(),
                epoch: None,
                #[cfg(feature = "opentelemetry")]
                trace: None,
            });
        } else {
            let e = &mut s.entries[depth];
            (e.layer, e.id, e.duplicate, e.epoch) = (layer, id, duplicate, None);
            #[cfg(feature = "opentelemetry")]
            {
                e.trace = None;
            }
        }
        s.depth += 1;
        let _ = DEPTH.try_with(|d| d.set(s.depth));
    });
    if recorded.is_err() {
        lost();
    }
}

/// `on_exit`: the innermost entry of `id` (for `layer`) leaves the stack.
pub(crate) fn exit(layer: u64, id: u64) {
    let recorded = STACK.try_with(|s| {
        let Ok(mut s) = s.try_borrow_mut() else {
            lost();
            return;
        };
        let depth = s.depth;
        let Some(at) = s.entries[..depth]
            .iter()
            .rposition(|e| e.layer == layer && e.id == id)
        else {
            return;
        };
        // Keep the buffer for the next enter, unless it grew large; an out
        // of order exit moves the entry past the others, keeping their
        // order (the usual innermost exit moves nothing).
        if at != depth - 1 {
            let e = s.entries.remove(at);
            s.entries.insert(depth - 1, e);
        }
        let e = &mut s.entries[depth - 1];
        if e.chain.field_bytes().len() > MAX_KEPT {
            e.chain = EventBuf::new();
        }
        e.epoch = None;
        s.depth -= 1;
        let _ = DEPTH.try_with(|d| d.set(s.depth));
    });
    if recorded.is_err() {
        lost();
    }
}

/// For a contextual event of `layer`: calls `copy` with the current span's
/// encoded chain, encoding it first with `encode(id, epoch, chain)` if
/// needed (the chain arrives cleared; a chain kept elsewhere may be used if
/// it was encoded at `epoch`), and returns [`Chain::Copied`]. Returns
/// [`Chain::NoSpan`] (and calls neither) if no span at all is entered on
/// this thread, and [`Chain::Unknown`] if the stack cannot answer.
///
/// `NoSpan` is exact because the stack sees every enter and exit of every
/// nowait layer on this thread: a span this layer's context could return
/// as current was entered through this layer's `on_enter` (a span that a
/// per-layer filter hides from this layer is hidden from its context too).
/// If an enter or exit ever went unrecorded, the thread answers `Unknown`
/// from then on.
#[inline]
pub(crate) fn with_chain(
    layer: u64,
    encode: impl FnOnce(u64, u64, &mut EventBuf) -> bool,
    copy: impl FnOnce(&[u8]),
) -> Chain {
    if LOST.try_with(Cell::get).unwrap_or(true) {
        return Chain::Unknown;
    }
    // No span entered: answered without touching the stack (whose borrow
    // can only fail at a depth above 0, inside `encode`).
    if DEPTH.try_with(Cell::get).unwrap_or(1) == 0 {
        return Chain::NoSpan;
    }
    with_stack(layer, encode, copy)
}

/// [`with_chain`] inside an entered span: out of line, so that an event
/// outside any span does not pay for this part's stack frame.
#[inline(never)]
fn with_stack(
    layer: u64,
    encode: impl FnOnce(u64, u64, &mut EventBuf) -> bool,
    copy: impl FnOnce(&[u8]),
) -> Chain {
    STACK
        .try_with(|s| {
            let Ok(mut s) = s.try_borrow_mut() else {
                return Chain::Unknown;
            };
            let s = &mut *s;
            if s.depth == 0 {
                return Chain::NoSpan;
            }
            let Some(top) = s.entries[..s.depth].iter_mut().rev().find(|e| !e.duplicate) else {
                return Chain::Unknown;
            };
            if top.layer != layer {
                return Chain::Unknown;
            }
            let now = EPOCH.load(Ordering::Acquire);
            if top.epoch != Some(now) && !encode_chain(top, now, encode) {
                return Chain::Unknown;
            }
            copy(top.chain.field_bytes());
            Chain::Copied
        })
        .unwrap_or(Chain::Unknown)
}

/// Encodes `top`'s chain at epoch `now` (the first event of an `enter`, or
/// after a `Span::record`): out of line, so that the events that copy a
/// kept chain do not pay for the registry walk's stack frame. False if
/// the chain could not be encoded.
#[cold]
#[inline(never)]
fn encode_chain(
    top: &mut Entry,
    now: u64,
    encode: impl FnOnce(u64, u64, &mut EventBuf) -> bool,
) -> bool {
    top.chain.clear();
    if !encode(top.id, now, &mut top.chain) {
        top.epoch = None;
        return false;
    }
    top.epoch = Some(now);
    true
}

/// For a contextual event of `layer`: the current span's trace context,
/// read with `read(id)` on the first event of its `enter` and kept for the
/// others; `Some(None)` if no span is entered on this thread, `None` if the
/// stack cannot answer (the caller asks the registry). `read` runs with
/// the stack released: it may run a tracer's code, which may enter spans.
#[cfg(feature = "opentelemetry")]
#[inline]
pub(crate) fn trace_context(
    layer: u64,
    read: impl FnOnce(u64) -> Option<nowait_core::event::TraceContext>,
) -> Option<Option<nowait_core::event::TraceContext>> {
    if LOST.try_with(Cell::get).unwrap_or(true) {
        return None;
    }
    if DEPTH.try_with(Cell::get).unwrap_or(1) == 0 {
        return Some(None);
    }
    trace_in_stack(layer, read)
}

#[cfg(feature = "opentelemetry")]
#[inline(never)]
fn trace_in_stack(
    layer: u64,
    read: impl FnOnce(u64) -> Option<nowait_core::event::TraceContext>,
) -> Option<Option<nowait_core::event::TraceContext>> {
    enum Found {
        Kept(Option<nowait_core::event::TraceContext>),
        Read { at: usize, id: u64 },
    }
    let found = STACK
        .try_with(|s| {
            let s = s.try_borrow().ok()?;
            if s.depth == 0 {
                return Some(Found::Kept(None));
            }
            let at = s.entries[..s.depth].iter().rposition(|e| !e.duplicate)?;
            let top = &s.entries[at];
            if top.layer != layer {
                return None;
            }
            Some(match top.trace {
                Some(cx) => Found::Kept(cx),
                None => Found::Read { at, id: top.id },
            })
        })
        .ok()
        .flatten()?;
    let (at, id) = match found {
        Found::Kept(cx) => return Some(cx),
        Found::Read { at, id } => (at, id),
    };
    let cx = read(id);
    // Kept if that entry is still the current one.
    let _ = STACK.try_with(|s| {
        if let Ok(mut s) = s.try_borrow_mut() {
            let depth = s.depth;
            if let Some(e) = s.entries[..depth].get_mut(at) {
                if e.layer == layer && e.id == id && !e.duplicate {
                    e.trace = Some(cx);
                }
            }
        }
    });
    Some(cx)
}
