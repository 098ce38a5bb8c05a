//! Where each part of the crash-durable file lies: the header words, the
//! two snapshots, the identity copies, the ring, the mirrors and the
//! catalog (the table in `durable`'s module doc).
//!
//! Both sides read these offsets: this process's writer and producers
//! through the mapping, a later process's recovery from the bytes.
//! Invariants: every word is 8-byte aligned; the header and both
//! snapshots fit the first page; the identity copies end at [`RING_AT`],
//! which is page-aligned, as is where the mirrors start ([`page_up`]); a
//! file's sizes (ring, mirror, slots, catalog) are stated in its header,
//! and [`Layout`] computes every other offset from them.

use crate::ring::Ring;

/// File sinks that get a mirror (more are written as usual, without one).
pub(crate) const SLOTS: usize = 16;

pub(super) const MAGIC: [u8; 8] = *b"nowaitd1";
pub(super) const VERSION: u32 = 1;

pub(super) const H_VERSION: usize = 8;
pub(super) const H_SLOTS: usize = 12;
pub(super) const H_PID: usize = 16;
pub(super) const H_RING: usize = 24;
pub(super) const H_MIRROR: usize = 32;
pub(super) const H_CATALOG: usize = 40;
pub(super) const H_NS_PER_TICK: usize = 48;
pub(super) const H_CREATED: usize = 56;
pub(super) const H_OVERFLOW: usize = 64;
pub(super) const H_CATALOG_FULL: usize = 72;
/// The ring position where the writer's batch in progress started.
pub(super) const H_BATCH_START: usize = 80;
/// 1 + the index in that batch of the record being formatted, 0 between.
pub(super) const H_FORMATTING: usize = 88;
/// Set by the crash handler when the writer thread itself crashed.
pub(super) const H_WRITER_CRASHED: usize = 96;
pub(super) const GEN: usize = 128;
pub(super) const CATALOG_USED: usize = 192;
/// Records refused at push time, one word per reason
/// (`accounting::loss::ring_loss`).
pub(super) const LOSSES: usize = 200;
pub(super) const SNAPSHOT: [usize; 2] = [256, 1280];
pub(super) const S_TAKEN: usize = 0;
pub(super) const S_TICKS: usize = 8;
pub(super) const S_WALL: usize = 16;
pub(super) const S_SLOTS: usize = 32;
pub(super) const SLOT_SIZE: usize = 32;
/// In a snapshot: per push-time loss reason, the count the file sinks
/// have a notice of.
pub(super) const S_REPORTED: usize = S_SLOTS + SLOTS * SLOT_SIZE;
pub(super) const IDENTS: usize = 4096;
pub(super) const IDENT_SIZE: usize = 512;
pub(super) const IDENT_PATH: usize = 24;
pub(super) const RING_AT: usize = IDENTS + SLOTS * 2 * IDENT_SIZE;

/// Default catalog size: room for thousands of call sites.
pub(crate) const DEFAULT_CATALOG: usize = 1 << 20;

fn page_up(n: usize) -> usize {
    n.next_multiple_of(4096)
}

/// Where each part lies in a file with these sizes.
#[derive(Clone, Copy, Debug)]
pub(super) struct Layout {
    pub(super) ring_bytes: usize,
    pub(super) mirror: usize,
    /// Mirrors (file sinks), at most [`SLOTS`].
    pub(super) slots: usize,
    pub(super) catalog: usize,
}

impl Layout {
    pub(super) fn mirrors_at(&self) -> usize {
        RING_AT + page_up(Ring::region_size(self.ring_bytes))
    }
    pub(super) fn mirror_at(&self, slot: usize) -> usize {
        self.mirrors_at() + slot * self.mirror
    }
    pub(super) fn catalog_at(&self) -> usize {
        self.mirror_at(self.slots)
    }
    pub(super) fn total(&self) -> usize {
        self.catalog_at() + self.catalog
    }
}
