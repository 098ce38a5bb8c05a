//! What one crash-durable snapshot records of a file sink's mirror: the
//! pure arithmetic the crash-durable file's writer and the protocol's
//! model (`ring::durable_model`) share, so that the model checks the
//! ranges production publishes.

/// What a snapshot does with the bytes the file sinks appended since the
/// last one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Copies them into the mirrors and names them.
    Copy,
    /// Names none of them, nor any byte their copy will overwrite: the
    /// first snapshot of a commit whose mirror wraps.
    Clear,
    /// Names none of them (a rotation's snapshot).
    Hold,
}

/// One file sink's part of a snapshot (sink offsets).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SlotRange {
    /// Offsets below are in the file, or were lost to a mirror overflow.
    pub(crate) written: u64,
    /// Offsets `written..appended` are in the mirror.
    pub(crate) appended: u64,
    /// Bytes this snapshot gives up to an overflow (not counted before).
    pub(crate) lost: u64,
    /// With [`Phase::Copy`]: offsets `from..appended` go into the mirror
    /// first.
    pub(crate) from: u64,
}

/// What a snapshot records of a file sink whose last snapshot recorded
/// `committed` as written and whose mirror holds the bytes up to
/// `mirrored`, now that the sink has `written` and `appended` bytes. The
/// mirror holds the last `mirror` bytes copied into it: what a snapshot
/// names below the end of its copy (or of the copy to come, for
/// [`Phase::Clear`]) less `mirror` is given up, counted once.
pub(crate) fn slot_range(
    committed: u64,
    mirrored: u64,
    written: u64,
    appended: u64,
    mirror: u64,
    phase: Phase,
) -> SlotRange {
    let floor = written.max(committed);
    let end = match phase {
        Phase::Copy | Phase::Clear => appended,
        Phase::Hold => mirrored,
    };
    let kept = floor.max(end.saturating_sub(mirror));
    SlotRange {
        written: kept,
        appended: match phase {
            Phase::Copy => appended,
            Phase::Clear | Phase::Hold => mirrored.max(kept),
        },
        lost: kept - floor,
        from: mirrored.max(kept),
    }
}
