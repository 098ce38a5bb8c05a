//! The layer keeps, per thread, the encoded chain of the span entered last
//! (so that events inside it copy the chain instead of walking the
//! registry). This test drives random sequences of span operations, the
//! awkward ones included (entering a span already entered, exits out of
//! order, `Span::record` after events, explicit parents, root events, two
//! subscribers interleaved on one thread, spans a per-layer filter hides,
//! spans whose chain is too long to be kept with them),
//! through three subscribers that each hold `tracing_subscriber::fmt`'s
//! layer and nowait's (the third with both behind a per-layer filter that
//! hides spans named `hidden`), and requires
//! nowait's output to equal fmt's byte for byte: fmt looks the scope up in
//! the registry on every event, so any stale or misplaced chain shows.

use nowait_core::format::Text;
use nowait_core::{Builder, Sink};
use nowait_testkit::{MemoryWriter, Rng};
use tracing::field::Empty;
use tracing::{Dispatch, Span};
use tracing_subscriber::filter::filter_fn;
use tracing_subscriber::prelude::*;

struct Side {
    dispatch: Dispatch,
    theirs: MemoryWriter,
    ours: MemoryWriter,
    logger: nowait_core::Logger,
    _guard: nowait_core::Guard,
}

/// A subscriber with fmt's layer and nowait's; with `filtered`, both
/// behind a per-layer filter that hides spans named `hidden`.
fn side(filtered: bool) -> Side {
    let (theirs, ours) = (MemoryWriter::default(), MemoryWriter::default());
    let (logger, guard) = Builder::new()
        .catch_panics(false)
        .flush_on_exit(false)
        .sink(Sink::writer(ours.clone()).format(Text::default().with_ansi(false).without_time()))
        .build()
        .unwrap();
    let w = theirs.clone();
    let fmt = tracing_subscriber::fmt::layer()
        .with_writer(move || w.clone())
        .with_ansi(false)
        .without_time();
    let nowait = nowait_tracing::NowaitLayer::new(logger.clone());
    let dispatch = if filtered {
        let hide = || filter_fn(|m| m.name() != "hidden");
        Dispatch::new(
            tracing_subscriber::registry()
                .with(fmt.with_filter(hide()))
                .with(nowait.with_filter(hide())),
        )
    } else {
        Dispatch::new(tracing_subscriber::registry().with(fmt).with(nowait))
    };
    Side {
        dispatch,
        theirs,
        ours,
        logger,
        _guard: guard,
    }
}

/// A field value that makes a span's chain longer than the layer keeps.
const WIDE: &str =
    "a field value of ninety bytes or so, which no chain kept inline can hold twice over";

#[test]
fn cached_span_chains_match_a_registry_walk_on_random_sequences() {
    let sides = [side(false), side(false), side(true)];
    let mut rng = Rng::new(0x5BA4);
    for round in 0..40 {
        // Spans of each side, and the guards of entered ones (any order).
        let mut spans: [Vec<Span>; 3] = [Vec::new(), Vec::new(), Vec::new()];
        let mut entered: Vec<tracing::span::EnteredSpan> = Vec::new();
        for step in 0..120u64 {
            let s = rng.below(3) as usize;
            let d = &sides[s].dispatch;
            match rng.below(8) {
                0 | 1 => {
                    let span = tracing::dispatcher::with_default(d, || {
                        let parent = if spans[s].is_empty() { 0 } else { rng.below(3) };
                        match parent {
                            // Contextual: the current span is the parent.
                            0 if rng.below(4) == 0 => {
                                tracing::info_span!("hidden", step, late = Empty)
                            }
                            // Wide: its chain does not fit the span's
                            // inline buffer.
                            0 if rng.below(4) == 0 => {
                                tracing::info_span!("wide", step, late = Empty, pad = WIDE)
                            }
                            0 => tracing::info_span!("op", step, late = Empty),
                            1 => {
                                let p = &spans[s][rng.below(spans[s].len() as u64) as usize];
                                tracing::info_span!(parent: p, "child", step, late = Empty)
                            }
                            _ => tracing::info_span!(parent: None, "root", step, late = Empty),
                        }
                    });
                    spans[s].push(span);
                }
                2 | 3 if !spans[s].is_empty() => {
                    // Possibly a span already entered: a duplicate entry.
                    let span = spans[s][rng.below(spans[s].len() as u64) as usize].clone();
                    entered.push(span.entered());
                }
                4 if !entered.is_empty() => {
                    // Out of order as often as not.
                    let at = rng.below(entered.len() as u64) as usize;
                    drop(entered.remove(at));
                }
                5 if !spans[s].is_empty() => {
                    let span = &spans[s][rng.below(spans[s].len() as u64) as usize];
                    span.record("late", step);
                }
                6 if !spans[s].is_empty() && rng.below(2) == 0 => {
                    let p = spans[s][rng.below(spans[s].len() as u64) as usize].clone();
                    tracing::dispatcher::with_default(
                        d,
                        || tracing::info!(parent: &p, step, "explicit parent"),
                    );
                }
                _ => tracing::dispatcher::with_default(d, || {
                    if rng.below(8) == 0 {
                        tracing::info!(parent: None, step, "root event");
                    } else {
                        tracing::info!(step, "contextual");
                        tracing::warn!(step, "contextual again");
                    }
                }),
            }
        }
        // Exits in random order, then the spans close.
        while !entered.is_empty() {
            let at = rng.below(entered.len() as u64) as usize;
            drop(entered.remove(at));
        }
        drop(spans);
        for (i, side) in sides.iter().enumerate() {
            same_output(side, &format!("round {round}, side {i}"));
        }
    }
}

/// Requires nowait's output to equal fmt's since the last call.
fn same_output(side: &Side, what: &str) {
    side.logger.flush().unwrap();
    let (theirs, ours) = (side.theirs.take(), side.ours.take());
    assert!(!theirs.is_empty(), "{what}: nothing logged");
    if theirs != ours {
        let at = theirs
            .lines()
            .zip(ours.lines())
            .position(|(a, b)| a != b)
            .unwrap_or(0);
        panic!(
            "{what}, line {at}:\n fmt:    {:?}\n nowait: {:?}",
            theirs.lines().nth(at),
            ours.lines().nth(at)
        );
    }
}

/// Each span keeps its chain when it fits beside its fields: nested spans
/// take it from their parent at creation, and a chain that grows too long
/// is not kept (the first event then walks the registry). Every level,
/// narrow and wide, with and without a `Span::record` before its events.
#[test]
fn kept_chains_of_nested_spans_match_a_registry_walk() {
    for filtered in [false, true] {
        let side = side(filtered);
        for record_at in [None, Some(0), Some(2), Some(5)] {
            tracing::dispatcher::with_default(&side.dispatch, || {
                let mut entered = Vec::new();
                for depth in 0..8u64 {
                    let span = match depth % 3 {
                        0 => tracing::info_span!("wide", depth, late = Empty, pad = WIDE),
                        1 => tracing::info_span!("hidden", depth, late = Empty),
                        _ => tracing::info_span!("op", depth, late = Empty),
                    };
                    if record_at == Some(depth) {
                        span.record("late", depth);
                    }
                    entered.push(span.entered());
                    tracing::info!(depth, "inside");
                    tracing::info!(depth, "inside again");
                }
                while let Some(span) = entered.pop() {
                    drop(span);
                    tracing::info!("after an exit");
                }
            });
            same_output(
                &side,
                &format!("filtered {filtered}, record at {record_at:?}"),
            );
        }
    }
}
