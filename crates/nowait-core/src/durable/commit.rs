//! The writer's side of the protocol: mirrors and snapshots.
//!
//! [`DurableWriter::commit`] copies what each file sink has not written
//! into its mirror and publishes a snapshot naming the ring position it
//! took the records up to; only then may the ring hand that space back.
//! Invariants: a snapshot is written in the half not in use and published
//! by one store to `gen`, so a kill between two stores leaves the previous
//! one whole; a copy that would overwrite mirror bytes the snapshot in
//! force still needs is preceded by a snapshot that no longer needs them;
//! a new file of a sink (a rotation) is named by a snapshot before any
//! byte goes to it. Bytes a mirror cannot hold are counted, once.

use std::fs::File;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::file::DurableFile;
use super::layout::{
    GEN, H_OVERFLOW, IDENTS, IDENT_PATH, IDENT_SIZE, SLOT_SIZE, SNAPSHOT, S_REPORTED, S_SLOTS,
    S_TAKEN, S_TICKS, S_WALL,
};
use super::recover::canonical;
use crate::accounting::loss::RING_LOSSES;
use crate::ring::snapshot::{slot_range, Phase};
use crate::sys::FileId;

/// One file sink's mirror, as the writer keeps it.
#[derive(Debug)]
struct Slot {
    sink: usize,
    /// The identity copy in use (1 or 2; 0 before the first commit).
    copy: u64,
    identity: Option<FileId>,
    /// File offset of the sink's absolute offset 0 (wrapping).
    base: u64,
    /// Sink offsets below this are in the mirror (or written).
    mirrored: u64,
    /// `written` as last committed.
    committed_written: u64,
    /// `appended` as last committed.
    committed_appended: u64,
}

/// What a file sink tells the durable writer at a commit.
pub(crate) struct SinkView<'a> {
    pub(crate) file: Option<(&'a File, &'a Path, FileId)>,
    /// `unsent` is the bytes at offsets `written..appended`.
    pub(crate) unsent: &'a [u8],
    pub(crate) written: u64,
    pub(crate) appended: u64,
}

/// The writer thread's handle: commits snapshots.
#[derive(Debug)]
pub(crate) struct DurableWriter {
    file: Arc<DurableFile>,
    gen: u64,
    /// The ring position the last snapshot named.
    taken: u64,
    slots: Vec<Slot>,
    anchor: (u64, u64),
    anchor_at: std::time::Instant,
    /// Push-time losses the file sinks have a notice of (what every
    /// snapshot names).
    reported: [u64; RING_LOSSES],
    /// Losses reported since, with the offset each file sink's notices end
    /// at: named once those sinks have written that far.
    pending: Option<([u64; RING_LOSSES], Vec<u64>)>,
    /// Bytes given up to a mirror overflow since the writer last asked.
    overflowed: u64,
}

impl DurableWriter {
    /// The file (for the writer's per-record progress marks).
    pub(crate) fn file(&self) -> &DurableFile {
        &self.file
    }

    /// `files`: the indices of the sinks that write files.
    pub(crate) fn new(file: Arc<DurableFile>, files: impl Iterator<Item = usize>) -> Self {
        let slots = file.layout.slots;
        DurableWriter {
            file,
            gen: 0,
            taken: 0,
            slots: files
                .take(slots)
                .map(|sink| Slot {
                    sink,
                    copy: 0,
                    identity: None,
                    base: 0,
                    mirrored: 0,
                    committed_written: 0,
                    committed_appended: 0,
                })
                .collect(),
            anchor: crate::record::clock::anchor(),
            anchor_at: std::time::Instant::now(),
            reported: [0; RING_LOSSES],
            pending: None,
            overflowed: 0,
        }
    }

    /// The bytes given up to a mirror overflow since the last call, and
    /// the mirror's size: the writer says so in the output at once (the
    /// crash guarantee does not hold for them).
    pub(crate) fn take_overflow(&mut self) -> Option<(u64, usize)> {
        let n = std::mem::take(&mut self.overflowed);
        (n > 0).then_some((n, self.file.layout.mirror))
    }

    /// Whether sink `sink` has a mirror.
    pub(crate) fn mirrors(&self, sink: usize) -> bool {
        self.slots.iter().any(|s| s.sink == sink)
    }

    /// The unwritten bytes of a sink past which the writer commits before
    /// it formats more: half a mirror. A mirror holds twice the largest
    /// file sink's buffer (`open_for`), so what a sink keeps while it is
    /// behind (its buffer) plus what one batch adds before the commit (at
    /// most this, and one record) fits, and no commit overflows a mirror
    /// unless one record formats to more than this.
    pub(crate) fn commit_before(&self) -> usize {
        self.file.layout.mirror / 2
    }

    /// The writer has reported the push-time losses up to `reported` in
    /// notices, which end in each sink at `appended(sink)`.
    pub(crate) fn note_reported(
        &mut self,
        reported: [u64; RING_LOSSES],
        appended: impl Fn(usize) -> u64,
    ) {
        if reported == self.reported {
            return;
        }
        let ends = self.slots.iter().map(|s| appended(s.sink)).collect();
        self.pending = Some((reported, ends));
    }

    /// Once every file sink has written the notices of the losses last
    /// noted (`written(sink)`: how far it wrote), publishes a snapshot (no
    /// new bytes) that names them, so that recovery does not announce
    /// them again.
    pub(crate) fn settle_reported(&mut self, written: impl Fn(usize) -> u64) {
        let Some((reported, ends)) = &self.pending else {
            return;
        };
        if !(self.slots.iter().zip(ends)).all(|(s, &end)| written(s.sink) >= end) {
            return;
        }
        self.reported = *reported;
        self.pending = None;
        self.publish(self.taken, &|_| None, Phase::Hold);
    }

    /// Records that every record before ring position `taken` is in the
    /// sinks' buffers, and copies what the file sinks have not written
    /// into their mirrors. The ring may hand that space back once this
    /// returns.
    pub(crate) fn commit<'a>(&mut self, taken: u64, view: impl Fn(usize) -> SinkView<'a>) {
        let mirror = self.file.layout.mirror as u64;
        // A mirror is a circle: bytes copied now overwrite those `mirror`
        // offsets back. If the snapshot in force still needs those, first
        // publish one that does not: the sinks' current `written` (their
        // files have those bytes), no new bytes, and the ring position in
        // force (the records taken since have no bytes in the mirror yet:
        // they are still in the ring, which is not released before this
        // returns).
        let wraps = self.slots.iter().any(|s| {
            let v = view(s.sink);
            v.appended > s.committed_written + mirror
        });
        if wraps {
            self.publish(self.taken, &|i| Some(view(i)), Phase::Clear);
        }
        self.publish(taken, &|i| Some(view(i)), Phase::Copy);
        self.taken = taken;
    }

    /// A file sink (`sink`) has started a new file (a rolling sink's
    /// rotation) and written nothing to it yet: publishes a snapshot that
    /// names it, before any byte goes there. A rotation is a step of the
    /// protocol: until this returns, the snapshot in force names the old
    /// file, which holds every byte written since; after, the new one,
    /// with the sink's bytes written so far as its start. Recovery then
    /// always judges the pending bytes against the file they went to.
    pub(crate) fn note_new_file(&mut self, sink: usize, view: SinkView<'_>) {
        if !self.slots.iter().any(|s| s.sink == sink) {
            return;
        }
        let view = std::cell::Cell::new(Some(view));
        self.publish(
            self.taken,
            &|i| if i == sink { view.take() } else { None },
            Phase::Hold,
        );
    }

    /// Publishes a snapshot naming ring position `taken`, with each file
    /// sink's state as `view` gives it (`None`: as last committed), its
    /// new unwritten bytes as `phase` says.
    fn publish<'a>(
        &mut self,
        taken: u64,
        view: &impl Fn(usize) -> Option<SinkView<'a>>,
        phase: Phase,
    ) {
        let file = &self.file;
        let mirror = file.layout.mirror as u64;
        let half = SNAPSHOT[((self.gen + 1) & 1) as usize];
        if self.anchor_at.elapsed() >= std::time::Duration::from_secs(1) {
            self.anchor = crate::record::clock::anchor();
            self.anchor_at = std::time::Instant::now();
        }
        file.word(half + S_TAKEN).store(taken, Ordering::Relaxed);
        file.word(half + S_TICKS)
            .store(self.anchor.0, Ordering::Relaxed);
        file.word(half + S_WALL)
            .store(self.anchor.1, Ordering::Relaxed);
        for (i, &n) in self.reported.iter().enumerate() {
            file.word(half + S_REPORTED + 8 * i)
                .store(n, Ordering::Relaxed);
        }
        for (i, slot) in self.slots.iter_mut().enumerate() {
            let at = half + S_SLOTS + i * SLOT_SIZE;
            let Some(v) = view(slot.sink) else {
                file.word(at).store(slot.copy, Ordering::Relaxed);
                file.word(at + 8).store(slot.base, Ordering::Relaxed);
                file.word(at + 16)
                    .store(slot.committed_written, Ordering::Relaxed);
                file.word(at + 24)
                    .store(slot.committed_appended, Ordering::Relaxed);
                continue;
            };
            if let Some((f, path, id)) = v.file {
                if slot.identity != Some(id) {
                    // A new file (first commit, rotation, reopen): its
                    // identity goes in the copy not in use.
                    let copy = if slot.copy == 1 { 2 } else { 1 };
                    let ident = IDENTS + (i * 2 + (copy as usize - 1)) * IDENT_SIZE;
                    let (dev, ino) = id;
                    file.word(ident).store(dev, Ordering::Relaxed);
                    file.word(ident + 8).store(ino, Ordering::Relaxed);
                    // The canonical path, which the next start matches
                    // against its own sinks' files (see `recover`).
                    let canonical = canonical(path);
                    let p = canonical.as_deref().unwrap_or(path);
                    let p = p.as_os_str().as_encoded_bytes();
                    let p = &p[..p.len().min(IDENT_SIZE - IDENT_PATH)];
                    file.word(ident + 16)
                        .store(p.len() as u64, Ordering::Relaxed);
                    file.put(ident + IDENT_PATH, p);
                    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
                    slot.base = len.wrapping_sub(v.written);
                    slot.copy = copy;
                    slot.identity = Some(id);
                }
            }
            let p = slot_range(
                slot.committed_written,
                slot.mirrored,
                v.written,
                v.appended,
                mirror,
                phase,
            );
            if p.lost > 0 {
                // More unwritten bytes than the mirror holds: the oldest
                // are lost if the process dies now (counted).
                file.word(H_OVERFLOW).fetch_add(p.lost, Ordering::Relaxed);
                self.overflowed += p.lost;
            }
            if phase == Phase::Copy {
                let base = file.layout.mirror_at(i);
                let mut off = p.from;
                while off < p.appended {
                    let at_m = (off % mirror) as usize;
                    let n = ((p.appended - off) as usize).min(mirror as usize - at_m);
                    let src = (off - v.written) as usize;
                    file.put(base + at_m, &v.unsent[src..src + n]);
                    off += n as u64;
                }
                slot.mirrored = p.appended;
            }
            file.word(at).store(slot.copy, Ordering::Relaxed);
            file.word(at + 8).store(slot.base, Ordering::Relaxed);
            file.word(at + 16).store(p.written, Ordering::Relaxed);
            file.word(at + 24).store(p.appended, Ordering::Relaxed);
            slot.committed_written = p.written;
            slot.committed_appended = p.appended;
        }
        self.gen += 1;
        file.word(GEN).store(self.gen, Ordering::Release);
        // What the caller stores next into the mapping (the next phase's
        // mirror bytes, the ring's release) stays after `gen` in the
        // program, which is the order a kill sees: a release store keeps
        // what precedes it before it, this fence what follows after it.
        std::sync::atomic::fence(Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::super::open::open;
    use super::super::recover::SinkFiles;
    use super::*;
    use crate::sys;

    /// `taken`, `written` and `appended` of the one file sink in the
    /// snapshot that `gen` named.
    fn snapshot(file: &DurableFile, gen: u64) -> (u64, u64, u64) {
        let half = SNAPSHOT[(gen & 1) as usize];
        let word = |at: usize| file.word(at).load(Ordering::Relaxed);
        (
            word(half + S_TAKEN),
            word(half + S_SLOTS + 16),
            word(half + S_SLOTS + 24),
        )
    }

    /// A durable file with a 4 KiB mirror, a writer with one file sink,
    /// and that sink's bytes: commits at (`taken`, `written`, `appended`).
    fn commits(steps: &[(u64, u64, u64)]) -> Arc<DurableFile> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let sinks = [SinkFiles::File(&path)];
        let (file, _) = open(&dir.path().join("ring"), 4096, 4096, &sinks).unwrap();
        let log = File::create(&path).unwrap();
        let id = sys::file_id(&log).unwrap();
        let bytes = vec![b'x'; 8192];
        let mut writer = DurableWriter::new(Arc::clone(&file), [0].into_iter());
        for &(taken, written, appended) in steps {
            writer.commit(taken, |_| SinkView {
                file: Some((&log, &path, id)),
                unsent: &bytes[written as usize..appended as usize],
                written,
                appended,
            });
        }
        file
    }

    #[test]
    #[cfg_attr(miri, ignore = "maps a file")]
    fn a_commit_whose_mirror_wraps_first_publishes_the_taken_in_force() {
        // The sink wrote the 3000 bytes of the first commit; the second
        // brings 4000 more, whose copy overwrites mirror offsets that the
        // snapshot in force still needs: a snapshot without them first.
        let file = commits(&[(10, 0, 3000), (20, 3000, 7000)]);
        assert_eq!(file.word(GEN).load(Ordering::Relaxed), 3);
        // A kill between the two leaves the first in force: the records
        // taken since position 10 are still in the ring, and their bytes
        // are not in the mirror yet.
        assert_eq!(snapshot(&file, 2), (10, 3000, 3000));
        assert_eq!(snapshot(&file, 3), (20, 3000, 7000));
    }

    /// What an overflow gives up is also handed to the writer, once, so
    /// that it says so in the output at the time.
    #[test]
    #[cfg_attr(miri, ignore = "maps a file")]
    fn an_overflow_is_handed_to_the_writer_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let sinks = [SinkFiles::File(&path)];
        let (file, _) = open(&dir.path().join("ring"), 4096, 4096, &sinks).unwrap();
        let log = File::create(&path).unwrap();
        let id = sys::file_id(&log).unwrap();
        let bytes = vec![b'x'; 5000];
        let mut writer = DurableWriter::new(Arc::clone(&file), [0].into_iter());
        let view = |written: u64| SinkView {
            file: Some((&log, &path, id)),
            unsent: &bytes[written as usize..],
            written,
            appended: 5000,
        };
        writer.commit(10, |_| view(0));
        assert_eq!(writer.take_overflow(), Some((904, 4096)));
        assert_eq!(writer.take_overflow(), None);
        writer.commit(11, |_| view(904));
        assert_eq!(writer.take_overflow(), None, "nothing more given up");
    }

    #[test]
    #[cfg_attr(miri, ignore = "maps a file")]
    fn bytes_a_mirror_overflow_gives_up_are_counted_once() {
        // 5000 unwritten bytes, 4096 of mirror: 904 are given up, by the
        // snapshot published before the copy overwrites them.
        let file = commits(&[(10, 0, 5000)]);
        assert_eq!(snapshot(&file, 1), (0, 904, 904));
        assert_eq!(snapshot(&file, 2), (10, 904, 5000));
        assert_eq!(file.word(H_OVERFLOW).load(Ordering::Relaxed), 904);
        // A commit before the sink wrote: the same bytes, not lost again.
        let file = commits(&[(10, 0, 5000), (11, 0, 5000)]);
        assert_eq!(snapshot(&file, 3), (11, 904, 5000));
        assert_eq!(file.word(H_OVERFLOW).load(Ordering::Relaxed), 904);
    }
}
