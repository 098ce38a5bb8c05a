//! The crash-durable ring ([`Builder::crash_durable`]): the ring, the
//! sinks' unwritten bytes and the call-site catalog live in a shared
//! mapping of one file, which the kernel keeps when the process dies,
//! whatever kills it (`SIGKILL`, the OOM killer). The next `build()` with
//! the same path recovers what the dead process had accepted and not
//! written, each record once.
//!
//! # The file
//!
//! ```text
//! 0       header: magic, version, sizes, pid, tick rate, creation time
//! 128     gen: which of the two snapshots is current (the writer flips it)
//! 192     catalog_used: bytes of catalog entries committed
//! 200     losses: records refused at push time, per reason, counted by the
//!         producers as they refuse them (a ring full, a block timeout...)
//! 256     snapshot 0 \  taken: ring position up to which every record went
//! 1280    snapshot 1 /  into the sinks' buffers; a clock anchor; per file
//!                       sink: identity copy, file base, written, appended;
//!                       the losses the file sinks have a notice of
//! 4096    file identities: two copies per sink slot (device, inode, path)
//! 20480   the ring (`Ring::in_region`: head, tail, state bytes, words)
//! ...     one mirror per file sink: its unwritten bytes, by offset
//! ...     the catalog: call sites and threads, appended when registered
//! ```
//!
//! # What "written" means, and why each record comes out once
//!
//! The ring defers handing space back ([`Ring::release`](crate::ring::Ring::release)) until the writer
//! has copied the bytes each file sink made of the records into that
//! sink's mirror and committed a snapshot naming the ring position it
//! took them up to (`taken`) and each sink's `written` and `appended`
//! offsets. So at any instant a record is either at or after `taken` in
//! the ring (recovered by decoding it), or its bytes are in every file
//! sink's mirror or file (completed byte for byte). A snapshot is written
//! in the half not in use and published by one store to `gen`, so a
//! process killed between two stores leaves the previous snapshot whole.
//! Recovery compares each file's length with the snapshot's offsets: bytes
//! the dead process wrote but had not yet recorded are not written again,
//! a write cut short by the kill is completed from its first missing
//! byte. That is exact while this process is the file's only writer.
//!
//! Sinks that are not files (terminals, pipes, sockets, custom writers)
//! have no mirror: the records at or after `taken` go to them on
//! recovery, those before it had gone to them already or were lost with
//! the process.
//!
//! # Losses at push time
//!
//! A record refused at push time (a full ring, a block timeout that ran
//! out) is counted by its producer in the file's loss words as well as in
//! memory. The writer reports such losses in notices; once every file
//! sink has written a notice's bytes, it publishes a snapshot (no new
//! bytes) naming the counts reported so far. Recovery announces the
//! difference: the losses the dead process counted and never told its
//! files about (or whose notice a kill cut off: at least once, never
//! silently).
//!
//! # The code
//!
//! `layout` says where each part of the file lies; `file` is the mapped
//! file as this process holds it; `open` creates or adopts it, recovering
//! first (`recover`, which reads a dead process's file as untrusted
//! input), and `handover` is what `build` does with both; `catalog`
//! appends call sites and threads as they register; `commit` is the
//! writer's side: mirrors and snapshots.

mod catalog;
mod commit;
// Header words and mirrors in a shared file mapping (SAFETY comments on
// each block); the ring it holds is `ring`'s.
#[allow(unsafe_code)]
mod file;
mod handover;
mod layout;
mod open;
mod recover;

pub(crate) use commit::{DurableWriter, SinkView};
pub(crate) use file::{note_writer_crash, DurableFile};
#[cfg(fuzzing)]
pub(crate) use handover::items;
pub(crate) use handover::{hand_over, open_for};
#[cfg(fuzzing)]
pub(crate) use recover::stated_len;
pub(crate) use recover::SinkFiles;
#[cfg(fuzzing)]
pub(crate) use recover::{recover_bytes, recover_into};
