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
//! `Span::record` can change a span's fields after a chain was encoded:
//! every record bumps [`EPOCH`], and a chain encoded at an older epoch is
//! encoded again.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

use nowait_core::event::EventBuf;

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
}

#[derive(Default)]
struct Stack {
    entries: Vec<Entry>,
    /// Entries in use (`entries[depth..]` are kept for their buffers).
    depth: usize,
}

thread_local! {
    static STACK: RefCell<Stack> = RefCell::new(Stack::default());
}

/// `on_enter`: a span of `layer` entered on this thread.
pub(crate) fn enter(layer: u64, id: u64) {
    let _ = STACK.try_with(|s| {
        let Ok(mut s) = s.try_borrow_mut() else {
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
            });
        } else {
            let e = &mut s.entries[depth];
            (e.layer, e.id, e.duplicate, e.epoch) = (layer, id, duplicate, None);
        }
        s.depth += 1;
    });
}

/// `on_exit`: the innermost entry of `id` (for `layer`) leaves the stack.
pub(crate) fn exit(layer: u64, id: u64) {
    let _ = STACK.try_with(|s| {
        let Ok(mut s) = s.try_borrow_mut() else {
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
    });
}

/// For a contextual event of `layer`: calls `copy` with the current span's
/// encoded chain, encoding it first with `encode(id, chain)` if needed (the
/// chain arrives cleared). Returns `false` (and calls `copy` not at all) if
/// the cache cannot answer: the caller walks the registry.
pub(crate) fn with_chain(
    layer: u64,
    encode: impl FnOnce(u64, &mut EventBuf) -> bool,
    copy: impl FnOnce(&[u8]),
) -> bool {
    STACK
        .try_with(|s| {
            let Ok(mut s) = s.try_borrow_mut() else {
                return false;
            };
            let s = &mut *s;
            let Some(top) = s.entries[..s.depth].iter_mut().rev().find(|e| !e.duplicate) else {
                return false;
            };
            if top.layer != layer {
                return false;
            }
            let now = EPOCH.load(Ordering::Acquire);
            if top.epoch != Some(now) {
                top.chain.clear();
                if !encode(top.id, &mut top.chain) {
                    top.epoch = None;
                    return false;
                }
                top.epoch = Some(now);
            }
            copy(top.chain.field_bytes());
            true
        })
        .unwrap_or(false)
}
