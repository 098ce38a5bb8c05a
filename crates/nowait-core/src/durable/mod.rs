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
//! The ring defers handing space back ([`Ring::release`]) until the writer
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

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use crate::accounting::loss::RING_LOSSES;
use crate::event::catalog::{site_entry, thread_entry};
use crate::event::{Callsite, SiteKey};
use crate::ring::Ring;
use crate::sys::{self, FileId, Mapping};
mod handover;
mod recover;
use crate::ring::snapshot::{slot_range, Phase};
#[cfg(fuzzing)]
pub(crate) use handover::items;
pub(crate) use handover::{hand_over, open_for};
#[cfg(fuzzing)]
pub(crate) use recover::stated_len;
pub(crate) use recover::{canonical, Recovered, SinkFiles};
#[cfg(fuzzing)]
pub(crate) use recover::{recover_bytes, recover_into};

/// How long `open` waits for a lock that is being released.
const LOCK_WAIT: Duration = Duration::from_millis(100);

/// File sinks that get a mirror (more are written as usual, without one).
pub(crate) const SLOTS: usize = 16;

const MAGIC: [u8; 8] = *b"nowaitd1";
const VERSION: u32 = 1;

const H_VERSION: usize = 8;
const H_SLOTS: usize = 12;
const H_PID: usize = 16;
const H_RING: usize = 24;
const H_MIRROR: usize = 32;
const H_CATALOG: usize = 40;
const H_NS_PER_TICK: usize = 48;
const H_CREATED: usize = 56;
const H_OVERFLOW: usize = 64;
const H_CATALOG_FULL: usize = 72;
/// The ring position where the writer's batch in progress started.
const H_BATCH_START: usize = 80;
/// 1 + the index in that batch of the record being formatted, 0 between.
const H_FORMATTING: usize = 88;
/// Set by the crash handler when the writer thread itself crashed.
const H_WRITER_CRASHED: usize = 96;
const GEN: usize = 128;
const CATALOG_USED: usize = 192;
/// Records refused at push time, one word per reason
/// (`accounting::loss::ring_loss`).
const LOSSES: usize = 200;
const SNAPSHOT: [usize; 2] = [256, 1280];
const S_TAKEN: usize = 0;
const S_TICKS: usize = 8;
const S_WALL: usize = 16;
const S_SLOTS: usize = 32;
const SLOT_SIZE: usize = 32;
/// In a snapshot: per push-time loss reason, the count the file sinks
/// have a notice of.
const S_REPORTED: usize = S_SLOTS + SLOTS * SLOT_SIZE;
const IDENTS: usize = 4096;
const IDENT_SIZE: usize = 512;
const IDENT_PATH: usize = 24;
const RING_AT: usize = IDENTS + SLOTS * 2 * IDENT_SIZE;

/// Default catalog size: room for thousands of call sites.
pub(crate) const DEFAULT_CATALOG: usize = 1 << 20;

fn page_up(n: usize) -> usize {
    n.next_multiple_of(4096)
}

/// Where each part lies in a file with these sizes.
#[derive(Clone, Copy, Debug)]
struct Layout {
    ring_bytes: usize,
    mirror: usize,
    /// Mirrors (file sinks), at most [`SLOTS`].
    slots: usize,
    catalog: usize,
}

impl Layout {
    fn mirrors_at(&self) -> usize {
        RING_AT + page_up(Ring::region_size(self.ring_bytes))
    }
    fn mirror_at(&self, slot: usize) -> usize {
        self.mirrors_at() + slot * self.mirror
    }
    fn catalog_at(&self) -> usize {
        self.mirror_at(self.slots)
    }
    fn total(&self) -> usize {
        self.catalog_at() + self.catalog
    }
}

/// An open crash-durable file, mapped. Shared by the ring (which lives in
/// it), the writer (snapshots, mirrors) and the catalog hooks.
pub(crate) struct DurableFile {
    map: Arc<Mapping>,
    layout: Layout,
    catalog: Mutex<()>,
    /// The file's identity, to know it again (`retired_here`).
    id: Option<FileId>,
    /// Set when the logger's ring closes (guard dropped): a later
    /// `build()` in this process may then start a new file at the path.
    retired: std::sync::atomic::AtomicBool,
    /// Holds the lock that keeps a second logger off the file.
    _file: File,
    /// While a build recovers: the new file is at a staging path, the old
    /// one (locked) still at the path, until [`DurableFile::take_path`].
    staged: Mutex<Option<Staged>>,
}

#[derive(Debug)]
struct Staged {
    from: PathBuf,
    to: PathBuf,
    /// Where the old file goes first if recovery could not read it.
    set_aside: Option<PathBuf>,
    /// The old file, locked until the new one replaces it.
    _old: File,
}

impl std::fmt::Debug for DurableFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DurableFile")
            .field("bytes", &self.map.len())
            .finish()
    }
}

impl DurableFile {
    fn word(&self, at: usize) -> &AtomicU64 {
        debug_assert!(at % 8 == 0 && at + 8 <= self.map.len());
        // SAFETY: `at` is 8-aligned (the mapping is page-aligned) and inside
        // the mapping, which lives as long as `self`; these header words
        // are only ever accessed atomically in this process.
        unsafe { &*self.map.ptr().as_ptr().add(at).cast::<AtomicU64>() }
    }

    /// Copies `bytes` to `at..at + bytes.len()`, a range of the mapping
    /// that only the caller writes (a mirror: the writer thread; the
    /// catalog: under its mutex; an identity copy not in use).
    fn put(&self, at: usize, bytes: &[u8]) {
        assert!(
            at + bytes.len() <= self.map.len(),
            "nowait bug: write past the durable file"
        );
        // SAFETY: inside the mapping (checked); no reference to these bytes
        // exists in this process (they are only written through here and
        // read by a later process), and the caller is their only writer.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                self.map.ptr().as_ptr().add(at),
                bytes.len(),
            )
        }
    }

    /// The ring in this file's mapping.
    pub(crate) fn ring(self: &Arc<Self>) -> Ring {
        let owner: Arc<dyn std::any::Any + Send + Sync> = self.map.clone();
        // SAFETY: `RING_AT` is page-aligned and `region_size` bytes from it
        // lie inside the mapping (`Layout::total`), zeroed by
        // `Mapping::fresh`; only the ring uses them; `owner` keeps the
        // mapping alive as long as the ring.
        unsafe {
            Ring::in_region(
                self.layout.ring_bytes,
                std::ptr::NonNull::new_unchecked(self.map.ptr().as_ptr().add(RING_AT)),
                owner,
            )
        }
    }

    /// The writer starts a batch at ring position `start`. Also points
    /// this thread's crash word at this file (see `note_writer_crash`).
    pub(crate) fn batch_start(&self, start: u64) {
        self.word(H_BATCH_START).store(start, Ordering::Relaxed);
        self.word(H_FORMATTING).store(0, Ordering::Relaxed);
        let word: *const AtomicU64 = self.word(H_WRITER_CRASHED);
        let _ = CRASH_WORD.try_with(|c| c.set(word));
    }

    /// A producer refused a record (reason `ring_loss` index `reason`).
    pub(crate) fn count_loss(&self, reason: usize) {
        if reason < RING_LOSSES {
            self.word(LOSSES + 8 * reason)
                .fetch_add(1, Ordering::Relaxed);
        }
    }

    /// The writer formats the `nth` record of the batch (from 1), or has
    /// formatted them all (0).
    pub(crate) fn formatting(&self, nth: u64) {
        self.word(H_FORMATTING).store(nth, Ordering::Relaxed);
    }

    /// Puts this file at its path, in place of the one recovered from (one
    /// `rename`), once the recovered records are in this file's ring.
    pub(crate) fn take_path(&self) -> io::Result<()> {
        let Ok(mut staged) = self.staged.lock() else {
            return Ok(());
        };
        let Some(s) = staged.take() else {
            return Ok(());
        };
        // Where a file that is still open cannot be replaced (Windows: the
        // name stays taken until the last handle closes), the old one is
        // closed first, which lets another process lock it for the instant
        // before the rename. Elsewhere it stays locked until the rename is
        // done.
        let Staged {
            from,
            to,
            set_aside,
            _old,
        } = s;
        if sys::RENAME_NEEDS_CLOSE {
            drop(_old);
        }
        if let Some(aside) = set_aside {
            std::fs::rename(&to, aside)?;
        }
        std::fs::rename(&from, &to)
    }

    /// The logger's ring is closed: nothing more will be pushed into it.
    pub(crate) fn retire(&self) {
        self.retired.store(true, Ordering::SeqCst);
    }

    /// In a forked child: the child's logger must not write into the
    /// parent's file.
    pub(crate) fn detach_in_child(&self) {
        let _ = self.map.detach_in_child();
    }

    fn append_entry(&self, entry: &[u8]) {
        let Ok(_guard) = self.catalog.lock() else {
            return;
        };
        let used = self.word(CATALOG_USED).load(Ordering::Relaxed) as usize;
        if used + entry.len() > self.layout.catalog {
            self.word(H_CATALOG_FULL).fetch_add(1, Ordering::Relaxed);
            return;
        }
        self.put(self.layout.catalog_at() + used, entry);
        self.word(CATALOG_USED)
            .store((used + entry.len()) as u64, Ordering::Release);
    }
}

thread_local! {
    /// On a writer thread of a crash-durable logger: its file's
    /// `H_WRITER_CRASHED` word (which lives as long as the writer).
    static CRASH_WORD: std::cell::Cell<*const AtomicU64> =
        const { std::cell::Cell::new(std::ptr::null()) };
}

/// Called by the crash handler when the thread that crashed is a writer
/// thread: marks its crash-durable file, if it has one, so that the next
/// start sets aside the record it was formatting (one atomic store; async-
/// signal-safe).
pub(crate) fn note_writer_crash() {
    let word = CRASH_WORD.try_with(|c| c.get()).unwrap_or(std::ptr::null());
    if !word.is_null() {
        // SAFETY: set by `batch_start` on this thread to a word of the
        // mapping that this thread's writer keeps alive (it holds the
        // file) while it runs, which it does: it is the thread crashing.
        unsafe { (*word).store(1, Ordering::SeqCst) };
    }
}

// === the catalog: call sites and threads, written when they register ===

fn active() -> &'static Mutex<Vec<Weak<DurableFile>>> {
    static ACTIVE: OnceLock<Mutex<Vec<Weak<DurableFile>>>> = OnceLock::new();
    ACTIVE.get_or_init(Default::default)
}

/// Whether the file `id` belongs to a logger of this process that was
/// shut down (its handles may live on, so its mapping must stay).
fn retired_here(id: FileId) -> bool {
    let Ok(list) = active().lock() else {
        return false;
    };
    list.iter()
        .filter_map(Weak::upgrade)
        .any(|f| f.id == Some(id) && f.retired.load(Ordering::SeqCst))
}

fn each_active(f: impl Fn(&DurableFile)) {
    let Ok(mut list) = active().lock() else {
        return;
    };
    list.retain(|w| w.strong_count() > 0);
    for file in list.iter().filter_map(Weak::upgrade) {
        f(&file);
    }
}

/// Called by the call-site registry when a site registers (under its lock).
fn note_callsite(key: SiteKey, site: &Callsite) {
    each_active(|file| file.append_entry(&site_entry(key, site)));
}

/// Called by the thread registry when a thread registers.
fn note_thread(number: u32, name: Option<&str>, id: &str, id_padded: &str) {
    each_active(|file| file.append_entry(&thread_entry(number, name, id, id_padded)));
}

/// Where a file that recovery could not read is set aside.
pub(crate) fn set_aside_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".corrupt");
    PathBuf::from(name)
}

/// Opens (or creates) the crash-durable file at `path`, first recovering
/// what a process that died left in it (completing only the files of
/// `sinks`, this logger's file sinks), then starting it afresh with a ring
/// of `ring_bytes` and up to `sinks.len()` mirrors of `mirror` bytes.
///
/// A path that is a symbolic link, or an existing file that this user does
/// not own, that others may write, or that is not a crash-durable file, is
/// an error: nowait never adopts a file someone else could have planted.
pub(crate) fn open(
    path: &Path,
    ring_bytes: usize,
    mirror: usize,
    sinks: &[SinkFiles<'_>],
) -> io::Result<(Arc<DurableFile>, Recovered)> {
    let in_use = || {
        io::Error::new(
            io::ErrorKind::AddrInUse,
            "a live logger (in this process or another) uses this file",
        )
    };
    let step =
        |what: &'static str| move |e: io::Error| io::Error::new(e.kind(), format!("{what}: {e}"));
    let (mut file, created) = sys::open_durable(path).map_err(step("open"))?;
    if !created {
        sys::check_private(&file).map_err(|why| {
            io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("refusing to adopt the existing file: {why}"),
            )
        })?;
    }
    let mut fresh = created;
    // A lock about to go away is waited for, at most `LOCK_WAIT`: that of
    // a logger of this process whose writer thread is exiting, or that of
    // a child process between its `fork` and its `exec` (it has a copy of
    // the descriptor until then).
    let mut waited = 0;
    let locked = loop {
        if sys::try_lock(&file).map_err(step("lock"))? {
            break true;
        }
        if sys::file_id(&file).is_ok_and(retired_here) {
            break false;
        }
        if waited >= LOCK_WAIT.as_millis() {
            return Err(in_use());
        }
        std::thread::sleep(Duration::from_millis(1));
        waited += 1;
    };
    if !locked {
        // A logger of this process that was shut down still maps the file
        // (a handle to it lives on, perhaps as the global logger): it keeps
        // that file, unlinked, and this logger starts a new one at the
        // path. Nothing to recover: that logger wrote or counted all it
        // accepted.
        std::fs::remove_file(path).map_err(step("remove"))?;
        file = sys::create_durable(path).map_err(step("create"))?;
        if !sys::try_lock(&file).map_err(step("lock"))? {
            return Err(in_use());
        }
        fresh = true;
    }
    let len = if fresh {
        0
    } else {
        file.metadata().map_err(step("stat"))?.len()
    };
    // A file that never got its header (a process killed while creating
    // it) holds nothing: zeros, and at most the start of the magic. Only
    // such a file is started afresh in place; anything else must be a
    // crash-durable file.
    let mut start = [0u8; 8];
    if len > 0 {
        use std::io::Read;
        let n = (&file).read(&mut start).map_err(step("read"))?;
        let full = n == MAGIC.len() && start == MAGIC;
        if !full && !never_written(&file).map_err(step("read"))? {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "it is not a nowait crash-durable file, and nowait does not overwrite it",
            ));
        }
    }
    let to_recover = len > 0 && start == MAGIC;
    let mut layout = Layout {
        ring_bytes,
        mirror: mirror.next_power_of_two(),
        slots: sinks.len().min(SLOTS),
        catalog: DEFAULT_CATALOG,
    };
    // A file with content is not reset in place: the new one is made at a
    // staging path and replaces it (`take_path`) once what it held is in
    // the new ring. A process killed in between leaves the old file whole
    // (and nothing of it written: the writer starts after the rename).
    let mut staged = None;
    if to_recover {
        let mut name = path.as_os_str().to_owned();
        name.push(".recovering");
        let from = PathBuf::from(name);
        // Left by a start killed while recovering: removed (a link is
        // removed, not followed), then made anew, exclusively.
        match std::fs::remove_file(&from) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => {
                return Err(step("remove the old staging file")(e))
            }
            _ => {}
        }
        let new = sys::create_durable(&from).map_err(step("create the new file"))?;
        if !sys::try_lock(&new)? {
            return Err(in_use());
        }
        staged = Some(Staged {
            from,
            to: path.to_owned(),
            set_aside: None,
            _old: std::mem::replace(&mut file, new),
        });
    }
    // Recovery first: the new ring must hold all it recovered, so that
    // every recovered record is in the new file before it takes the old
    // one's place (a kill after that finds them there, one before finds
    // the old file whole). It registers the dead process's call sites,
    // which go into the new file's catalog with this process's own.
    let recovered = match &mut staged {
        Some(s) => {
            let recovered = recover::recover_file(&s._old, len, path, sinks);
            if recovered.corrupt {
                s.set_aside = Some(set_aside_path(path));
            }
            recovered
        }
        None => Recovered::default(),
    };
    layout.ring_bytes = ring_bytes
        .max(recovered.ring_bytes_needed())
        .min(crate::ring::MAX_CAPACITY);
    let map = match Mapping::fresh(&file, layout.total()) {
        Ok(map) => map,
        Err(e) => {
            // No room (a full tmpfs): the old file stays as it was, for a
            // later start with room to recover it.
            if let Some(s) = &staged {
                let _ = std::fs::remove_file(&s.from);
            }
            return Err(step("map")(e));
        }
    };
    let durable = Arc::new(DurableFile {
        map: Arc::new(map),
        layout,
        catalog: Mutex::new(()),
        id: sys::file_id(&file).ok(),
        retired: std::sync::atomic::AtomicBool::new(false),
        _file: file,
        staged: Mutex::new(None),
    });
    durable.write_header();
    if let Ok(mut list) = active().lock() {
        list.push(Arc::downgrade(&durable));
    }
    // What registers from now on, and everything registered before.
    crate::event::listen_callsites(note_callsite);
    crate::event::listen_threads(note_thread);
    crate::event::each_registered(|key, site| durable.append_entry(&site_entry(key, site)));
    crate::event::each_thread(|n, name, id, padded| {
        durable.append_entry(&thread_entry(n, name, id, padded))
    });
    if let Ok(mut slot) = durable.staged.lock() {
        *slot = staged;
    }
    Ok((durable, recovered))
}

/// Whether `file` is what a process killed while creating a crash-durable
/// file leaves: the zeros `Mapping::fresh` writes, and at most a prefix of
/// the magic (the first store of `write_header`). Reads the whole file.
fn never_written(mut file: &File) -> io::Result<bool> {
    use std::io::{Read, Seek, SeekFrom};
    file.seek(SeekFrom::Start(0))?;
    let mut buf = vec![0u8; 64 << 10];
    let mut at = 0usize;
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => return Ok(true),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let mut chunk = &buf[..n];
        // The magic's bytes, as far as they were stored, then zeros.
        while at < MAGIC.len() && !chunk.is_empty() && chunk[0] == MAGIC[at] {
            chunk = &chunk[1..];
            at += 1;
        }
        if !chunk.is_empty() {
            at = MAGIC.len();
        }
        if chunk.iter().any(|&b| b != 0) {
            return Ok(false);
        }
    }
}

impl DurableFile {
    fn write_header(&self) {
        self.put(0, &MAGIC);
        let mut h = [0u8; 64];
        h[H_VERSION..H_VERSION + 4].copy_from_slice(&VERSION.to_le_bytes());
        h[H_SLOTS..H_SLOTS + 4].copy_from_slice(&(self.layout.slots as u32).to_le_bytes());
        h[H_PID..H_PID + 4].copy_from_slice(&std::process::id().to_le_bytes());
        h[H_RING..H_RING + 8].copy_from_slice(&(self.layout.ring_bytes as u64).to_le_bytes());
        h[H_MIRROR..H_MIRROR + 8].copy_from_slice(&(self.layout.mirror as u64).to_le_bytes());
        h[H_CATALOG..H_CATALOG + 8].copy_from_slice(&(self.layout.catalog as u64).to_le_bytes());
        h[H_NS_PER_TICK..H_NS_PER_TICK + 8]
            .copy_from_slice(&crate::record::clock::ns_per_tick().to_bits().to_le_bytes());
        h[H_CREATED..H_CREATED + 8]
            .copy_from_slice(&crate::record::clock::wall_nanos().to_le_bytes());
        self.put(8, &h[8..]);
        // Both snapshots start with a clock anchor: a process killed
        // before its writer's first commit still has its ticks converted.
        let (ticks, wall) = crate::record::clock::anchor();
        for half in SNAPSHOT {
            self.word(half + S_TICKS).store(ticks, Ordering::Relaxed);
            self.word(half + S_WALL).store(wall, Ordering::Relaxed);
        }
    }
}

// === the writer's side: mirrors and snapshots ===

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
    use super::*;

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
