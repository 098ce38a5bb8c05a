//! Opening the crash-durable file: create it or adopt the one at the path
//! (never one someone else could have planted), recover what a dead
//! process left in it, then start it afresh and write its header.
//!
//! Invariant: a file with content is never reset in place. The new file is
//! made at a staging path and takes the old one's place
//! (`DurableFile::take_path`) only once what the old one held is in the
//! new ring, so a process killed at any point leaves one of the two whole.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::catalog::{active, note_callsite, note_thread, retired_here};
use super::file::{DurableFile, Staged};
use super::layout::{
    Layout, DEFAULT_CATALOG, H_CATALOG, H_CREATED, H_MIRROR, H_NS_PER_TICK, H_PID, H_RING, H_SLOTS,
    H_VERSION, MAGIC, SLOTS, SNAPSHOT, S_TICKS, S_WALL, VERSION,
};
use super::recover::{self, set_aside_path, Recovered, SinkFiles};
use crate::event::catalog::{site_entry, thread_entry};
use crate::sys::{self, Mapping};

/// How long `open` waits for a lock that is being released.
const LOCK_WAIT: Duration = Duration::from_millis(100);

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
