//! Reading a crash-durable ring that a process which died left in a file:
//! the region's bytes (layout in `region.rs`) as plain data, untrusted.
//!
//! Invariants it relies on, which the ring keeps while it runs: only the
//! first word of a claim has its state byte set, and only once the claim
//! is committed (or void); a header carries the lap of the claim that
//! wrote it; `released <= taken <= claimed <= released + capacity`.
//! Anything else in the bytes is reported as an error, never trusted.

use super::region as layout;
use super::{lap_of, record_words, Header, Ring, COMMITTED, FLAGS, FREE, PADDING, VOID, WORD};

/// What [`scan`] finds in the ring of a process that died.
#[derive(Debug)]
pub(crate) enum Found<'a> {
    /// A committed record, claimed at ring position `at`.
    Record {
        at: u64,
        header: Header,
        payload: &'a [u8],
    },
    /// A claimed region that was never committed: its producer died
    /// while writing it (or unwound), so it is counted, never decoded.
    Torn,
}

/// Walks the committed records of a ring region copied from a file that a
/// process which died left behind, from word position `from` (where the
/// writer had recorded that it took everything before) to the claim
/// position, handing each to `f`. Plain reads of a copy: the process that
/// wrote it is gone. Errors name what is inconsistent (a file that is not
/// a ring, or was damaged).
pub(crate) fn scan(
    region: &[u8],
    min_bytes: usize,
    from: u64,
    mut f: impl FnMut(Found<'_>),
) -> Result<(), String> {
    let words = Ring::words_for(min_bytes);
    if region.len() < layout::size(words) {
        return Err(format!(
            "the ring needs {} bytes, the file holds {}",
            layout::size(words),
            region.len()
        ));
    }
    let word_at = |at: usize| u64::from_le_bytes(region[at..at + WORD].try_into().unwrap());
    let head = word_at(layout::HEAD_AT) & !FLAGS;
    let tail = word_at(layout::TAIL_AT);
    if !(tail <= from && from <= head && head - tail <= words as u64) {
        return Err(format!(
            "inconsistent positions: released {tail}, taken {from}, claimed {head}"
        ));
    }
    let cap = words as u64;
    let states = &region[layout::STATES_AT..layout::STATES_AT + words];
    let data = &region[layout::words_at(words)..layout::words_at(words) + words * WORD];
    let mut pos = from;
    // The first word after a torn one whose state byte is set (or the end
    // of the buffer, or the claim position), found once for a run of torn
    // words and kept for the rest of it: each state byte is looked at once.
    let mut set_at = from;
    while pos < head {
        let index = (pos & (cap - 1)) as usize;
        let left = head - pos;
        let header = Header::unpack(u64::from_le_bytes(
            data[index * WORD..(index + 1) * WORD].try_into().unwrap(),
        ));
        let need = record_words(header.len as usize);
        let fits = index as u64 + need <= cap && need <= left;
        match states[index] {
            PADDING => pos += cap - index as u64,
            state @ (COMMITTED | VOID) => {
                if !fits {
                    return Err(format!(
                        "a record at word {pos} of {} bytes runs past the claims",
                        header.len
                    ));
                }
                if state == COMMITTED {
                    let at = (index + 1) * WORD;
                    f(Found::Record {
                        at: pos,
                        header,
                        payload: &data[at..at + header.len as usize],
                    });
                } else {
                    f(Found::Torn);
                }
                pos += need;
            }
            FREE => {
                f(Found::Torn);
                // No word of a claim has its state set but the first, so
                // every committed record after this one starts at or
                // after the next word whose state was set (or the end of
                // the buffer, or the claim position). Between `pos` and a
                // `set_at` found from an earlier word of this run, every
                // state byte is FREE: it is still the next.
                if set_at <= pos {
                    let limit = left.min(cap - index as u64) as usize;
                    set_at = pos
                        + states[index + 1..index + limit]
                            .iter()
                            .position(|&s| s != FREE)
                            .map_or(limit, |k| k + 1) as u64;
                }
                let next = set_at - pos;
                // A header of this lap is this claim's if its producer
                // wrote it (the first store of a claim) before it died,
                // and then a torn claim after it is counted on its own.
                // But it may also be a payload word of an earlier lap
                // that reads as one: its length is trusted only as far as
                // `next`, never over a record.
                pos += if header.lap == lap_of(pos, cap) && need <= next {
                    need
                } else {
                    next
                };
            }
            other => return Err(format!("state byte {other} at word {pos}")),
        }
    }
    Ok(())
}
