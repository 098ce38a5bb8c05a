//! Recovery: what a process that died left in its crash-durable file,
//! read as untrusted input.
//!
//! The file was written by another process, and whoever can write its path
//! can put anything there, so every step is a total function of its bytes:
//!
//! 1. The header (the first page, read, not mapped) is checked: magic,
//!    version, and sizes within fixed caps ([`MAX_MIRROR`], [`MAX_CATALOG`],
//!    the ring's own cap). The layout they give is computed with checked
//!    arithmetic and must fit the file's real length.
//! 2. Only then is the file mapped, read-only, for exactly that layout: a
//!    sparse file costs no memory, and nothing is read past it.
//! 3. Each file sink's unwritten bytes (its mirror) are completed only in a
//!    file that a sink of the *recovering* logger writes: the dead sink's
//!    path, as the file recorded it, must be one of those sinks' files
//!    (the same canonical path, or the same file identity; for a rolling
//!    sink, a name of its own in its directory). A path no sink names is
//!    never opened: its bytes are counted lost in a notice that names it.
//! 4. The ring's records are decoded by [`ring::scan`], and each event's
//!    keys (time, call site, thread, span sites) rewritten for this process
//!    through the event decoder ([`Event`]), iteratively: nothing recurses
//!    to a depth the file chooses.
//! 5. Whatever does not check out is a notice and a counted loss, never a
//!    panic: a file that cannot be read at all is set aside
//!    (`PATH.corrupt`), so that the next start does not meet it again.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::layout::{
    Layout, CATALOG_USED, GEN, H_BATCH_START, H_CATALOG, H_CATALOG_FULL, H_FORMATTING, H_MIRROR,
    H_NS_PER_TICK, H_OVERFLOW, H_PID, H_RING, H_SLOTS, H_VERSION, H_WRITER_CRASHED, IDENTS,
    IDENT_PATH, IDENT_SIZE, LOSSES, MAGIC, RING_AT, SLOTS, SLOT_SIZE, SNAPSHOT, S_REPORTED,
    S_SLOTS, S_TAKEN, S_TICKS, S_WALL, VERSION,
};
use crate::accounting::loss::RING_REASONS;
use crate::event::catalog::{rewrite_event, Catalog};
use crate::level::Level;
use crate::record::kind;
use crate::ring::{self, Ring};
use crate::rolling::Rolling;
use crate::sys::{self, FileId};

/// The largest mirror a file may state (a sink's buffer, doubled, rounded
/// up to a power of two, is far below).
pub(super) const MAX_MIRROR: usize = ring::MAX_CAPACITY;
/// The largest catalog a file may state.
pub(super) const MAX_CATALOG: usize = 16 << 20;
/// Directory entries looked at, at most, when a file that was renamed is
/// looked for by its identity.
const MAX_DIR_ENTRIES: usize = 10_000;

/// What the next `build()` found in a file left by a process that died.
#[derive(Debug, Default)]
pub(crate) struct Recovered {
    /// Records to push before any new one: (level, kind, payload).
    pub(crate) records: Vec<(Level, u8, Vec<u8>)>,
    /// Notices to write first, in every sink.
    pub(crate) notices: Vec<String>,
    /// The file could not be read: it is set aside, not recovered again.
    pub(crate) corrupt: bool,
}

impl Recovered {
    /// The ring bytes that hold every recovered record and notice at
    /// once (with room for the report of what could not be pushed), so
    /// that a new ring of that size takes them all before its writer runs.
    pub(crate) fn ring_bytes_needed(&self) -> usize {
        let words = |len: usize| ring::record_words(len) as usize;
        let records: usize = self.records.iter().map(|(_, _, p)| words(p.len())).sum();
        let notices: usize = self.notices.iter().map(|n| words(n.len())).sum();
        (records + notices + words(256)).saturating_mul(8)
    }

    fn corrupt(path: &Path, why: &str) -> Recovered {
        Recovered {
            records: Vec::new(),
            notices: vec![format!(
                "could not recover {} (left by a process that died): {why}; \
                 its records are lost, and the file is set aside as {}",
                path.display(),
                set_aside_path(path).display()
            )],
            corrupt: true,
        }
    }
}

/// Where a file that recovery could not read is set aside.
pub(crate) fn set_aside_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".corrupt");
    PathBuf::from(name)
}

/// A file sink of the recovering logger: the only files recovery writes.
#[derive(Debug, Clone, Copy)]
pub(crate) enum SinkFiles<'a> {
    /// `Sink::file(path)`.
    File(&'a Path),
    /// `Sink::rolling(..)`: its directory and the names it gives.
    Rolling(&'a Rolling),
}

// === reading the file's words, total ===

fn u64_at(b: &[u8], at: usize) -> u64 {
    b.get(at..at.saturating_add(8))
        .and_then(|w| w.try_into().ok())
        .map_or(0, u64::from_le_bytes)
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    b.get(at..at.saturating_add(4))
        .and_then(|w| w.try_into().ok())
        .map_or(0, u32::from_le_bytes)
}

/// Checks a dead file's header (its first page) and returns the layout it
/// states, and the bytes that layout takes, within the caps and the
/// file's real length `file_len`.
pub(super) fn check_header(head: &[u8], file_len: u64) -> Result<(Layout, usize), String> {
    if head.len() < 4096 || head[..8] != MAGIC {
        return Err("it does not start like a nowait crash-durable file".into());
    }
    let version = u32_at(head, H_VERSION);
    if version != VERSION {
        return Err(format!("its version {version} is not {VERSION}"));
    }
    let field = |at: usize, cap: usize, what: &str| -> Result<usize, String> {
        let v = u64_at(head, at);
        usize::try_from(v)
            .ok()
            .filter(|&v| v <= cap)
            .ok_or_else(|| format!("its {what} ({v}) is past the limit ({cap})"))
    };
    let layout = Layout {
        ring_bytes: field(H_RING, ring::MAX_CAPACITY, "ring size")?,
        mirror: field(H_MIRROR, MAX_MIRROR, "mirror size")?,
        slots: usize::try_from(u32_at(head, H_SLOTS))
            .ok()
            .filter(|&n| n <= SLOTS)
            .ok_or("its number of file sinks is past the limit")?,
        catalog: field(H_CATALOG, MAX_CATALOG, "catalog size")?,
    };
    if !layout.mirror.is_power_of_two() {
        return Err(format!(
            "its mirror size {} is not a power of two",
            layout.mirror
        ));
    }
    let total = checked_total(&layout).ok_or("its sizes overflow")?;
    if (total as u64) > file_len {
        return Err(format!(
            "its sizes need {total} bytes, the file holds {file_len}"
        ));
    }
    Ok((layout, total))
}

/// [`Layout::total`], with every step checked.
fn checked_total(l: &Layout) -> Option<usize> {
    let ring = Ring::region_size(l.ring_bytes).checked_next_multiple_of(4096)?;
    RING_AT
        .checked_add(ring)?
        .checked_add(l.mirror.checked_mul(l.slots)?)?
        .checked_add(l.catalog)
}

// === the catalog ===

fn format_wall(nanos: u64) -> String {
    crate::text::time::rfc3339(std::time::UNIX_EPOCH + std::time::Duration::from_nanos(nanos))
}

// === the file sinks' mirrors ===

/// `path` made absolute with its directories' links resolved, also when
/// the file itself does not exist (yet).
pub(crate) fn canonical(path: &Path) -> Option<PathBuf> {
    if let Ok(p) = std::fs::canonicalize(path) {
        return Some(p);
    }
    let name = path.file_name()?;
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    Some(std::fs::canonicalize(parent).ok()?.join(name))
}

/// The file the recovering logger's sinks write that a dead sink's file
/// (`stored`, identity `id`) is, if any: the path to complete it at, and
/// if it is a rolling sink's (in a directory others may write), the
/// permission bits that sink creates files with.
fn matching_sink(
    sinks: &[SinkFiles<'_>],
    stored: &Path,
    id: FileId,
) -> Option<(PathBuf, Option<u32>)> {
    sinks.iter().find_map(|s| match *s {
        SinkFiles::File(path) => {
            let same_name = canonical(path).is_some_and(|c| c == stored);
            let same_file = sys::path_id(path).is_ok_and(|now| now == id);
            (same_name || same_file).then(|| (path.to_owned(), None))
        }
        SinkFiles::Rolling(rolling) => {
            let dir = canonical(&rolling.dir)?;
            let name = stored.file_name()?.to_str()?;
            let own = rolling.naming().parse(name).is_some_and(|(_, gz)| !gz);
            (own && stored.parent() == Some(dir.as_path()))
                .then(|| (dir.join(name), Some(rolling.mode)))
        }
    })
}

/// The length of the regular file with identity `id` among the entries of
/// `dir` (links are not followed), if there is one: where a file that was
/// renamed in its directory (an outside rotation) is now.
fn len_by_identity(dir: &Path, id: FileId) -> Option<u64> {
    for entry in std::fs::read_dir(dir).ok()?.take(MAX_DIR_ENTRIES) {
        let Ok(entry) = entry else { continue };
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.file_type().is_file() && sys::path_id(&path).is_ok_and(|p| p == id) {
            return Some(meta.len());
        }
    }
    None
}

/// One dead file sink's pending bytes, as the snapshot in force states them.
struct Pending<'a> {
    stored: PathBuf,
    id: FileId,
    /// File offset of the sink's offset 0 (wrapping).
    base: u64,
    written: u64,
    appended: u64,
    mirror: &'a [u8],
}

impl Pending<'_> {
    fn bytes(&self) -> u64 {
        self.appended - self.written
    }

    /// The mirror's bytes for sink offsets `from..appended`, as at most two
    /// slices (the mirror is a circle).
    fn tail(&self, from: u64) -> [&[u8]; 2] {
        let len = self.mirror.len() as u64;
        let (start, end) = (from % len, self.appended % len);
        let (start, end) = (start as usize, end as usize);
        if from >= self.appended {
            [&[], &[]]
        } else if start < end {
            [&self.mirror[start..end], &[]]
        } else {
            [&self.mirror[start..], &self.mirror[..end]]
        }
    }
}

/// Reads slot `slot` of the snapshot at `snap`; `Err` if its words are
/// inconsistent.
fn pending<'a>(
    old: &'a [u8],
    layout: &Layout,
    snap: usize,
    slot: usize,
) -> Result<Option<Pending<'a>>, String> {
    let at = snap + S_SLOTS + slot * SLOT_SIZE;
    let copy = u64_at(old, at);
    let (base, written, appended) = (
        u64_at(old, at + 8),
        u64_at(old, at + 16),
        u64_at(old, at + 24),
    );
    let copy = match copy {
        0 => return Ok(None),
        1 | 2 => copy as usize - 1,
        _ => return Err(format!("file sink {slot}: identity copy {copy}")),
    };
    if appended <= written {
        return Ok(None);
    }
    if appended - written > layout.mirror as u64 {
        return Err(format!(
            "file sink {slot}: {} pending bytes, more than its mirror holds",
            appended - written
        ));
    }
    let ident = IDENTS + (slot * 2 + copy) * IDENT_SIZE;
    let id: FileId = (u64_at(old, ident), u64_at(old, ident + 8));
    let path_len = usize::try_from(u64_at(old, ident + 16))
        .ok()
        .filter(|&n| n <= IDENT_SIZE - IDENT_PATH)
        .ok_or_else(|| format!("file sink {slot}: the length of its path"))?;
    let path = &old[ident + IDENT_PATH..ident + IDENT_PATH + path_len];
    let from = layout.mirror_at(slot);
    Ok(Some(Pending {
        stored: PathBuf::from(String::from_utf8_lossy(path).into_owned()),
        id,
        base,
        written,
        appended,
        mirror: &old[from..from + layout.mirror],
    }))
}

/// Completes one dead file sink's unwritten bytes from its mirror, in the
/// recovering logger's file that it matches. Returns a notice if anything
/// was written, or could not be.
fn complete(p: &Pending<'_>, sinks: &[SinkFiles<'_>]) -> Option<String> {
    let Some((target, rolling)) = matching_sink(sinks, &p.stored, p.id) else {
        return Some(format!(
            "{} bytes the dead process had formatted for {} and not written are lost: \
             no file sink of this logger writes that file",
            p.bytes(),
            p.stored.display()
        ));
    };
    // A file sink's path opens as the sink opens it; a rolling sink's file
    // as the rolling sink does: no link followed, a regular file of this
    // user only.
    let opened = if let Some(mode) = rolling {
        sys::nofollow::open_append(&target, false, sys::nofollow::Mode::bits(mode))
    } else {
        sys::open_append(&target, false)
    };
    let mut file = match opened {
        Ok(f) => f,
        Err(e) => {
            return Some(format!(
                "{} bytes the dead process had not written to {} are lost: cannot open it: {e}",
                p.bytes(),
                target.display()
            ))
        }
    };
    let start = p.base.wrapping_add(p.written);
    // Bytes of the pending range already written: the dead process wrote
    // them after its last snapshot (or part of them, cut short), to the
    // file it named, which may have been renamed since (an outside
    // rotation): found by its identity in the same directory.
    let same = sys::file_id(&file).is_ok_and(|now| now == p.id);
    let len = if same {
        file.metadata().ok().map(|m| m.len())
    } else {
        target.parent().and_then(|dir| len_by_identity(dir, p.id))
    };
    let done = len.map_or(0, |len| len.saturating_sub(start).min(p.bytes()));
    if done == p.bytes() {
        return None;
    }
    let from = p.written + done;
    let result = p
        .tail(from)
        .iter()
        .try_for_each(|part| file.write_all(part));
    let n = p.appended - from;
    let what = if same {
        "completed"
    } else {
        "appended (the file was rotated or replaced since)"
    };
    Some(match result {
        Ok(()) => format!(
            "{what} {} with {n} bytes the dead process had formatted and not written",
            target.display()
        ),
        Err(e) => format!(
            "{n} bytes the dead process had not written to {} are lost: {e}",
            target.display()
        ),
    })
}

// === recovery ===

/// Recovers what the dead process left in `old` (its file, mapped for the
/// layout that [`check_header`] accepted): file sinks' pending bytes into
/// `sinks`' files, and the ring's records for the new ring.
pub(super) fn recover(
    old: &[u8],
    layout: &Layout,
    path: &Path,
    sinks: &[SinkFiles<'_>],
) -> Recovered {
    let pid = u32_at(old, H_PID);
    let snap = SNAPSHOT[(u64_at(old, GEN) & 1) as usize];
    let mut out = Recovered::default();
    for slot in 0..layout.slots {
        match pending(old, layout, snap, slot) {
            Ok(Some(p)) => out.notices.extend(complete(&p, sinks)),
            Ok(None) => {}
            Err(why) => out.notices.push(format!(
                "the unwritten bytes of a file sink in {} are lost: {why}",
                path.display()
            )),
        }
    }
    let used = usize::try_from(u64_at(old, CATALOG_USED))
        .unwrap_or(usize::MAX)
        .min(layout.catalog);
    let catalog_at = layout.catalog_at();
    let catalog = Catalog::load(&old[catalog_at..catalog_at + used]);
    let ns_per_tick = f64::from_bits(u64_at(old, H_NS_PER_TICK));
    let (t0, w0) = (u64_at(old, snap + S_TICKS), u64_at(old, snap + S_WALL));
    let time = |field: u64| -> u64 {
        const RAW: u64 = 1 << 63;
        if field & RAW == 0 {
            return field;
        }
        let ticks = field & !RAW;
        let delta = (ticks as f64 - t0 as f64) * ns_per_tick;
        // `as` saturates, and a NaN (a corrupt tick rate) gives 0.
        (w0 as f64 + delta).max(0.0) as u64
    };
    let (mut torn, mut last, mut skipped) = (0u64, None, 0u64);
    let taken = u64_at(old, snap + S_TAKEN);
    // The writer thread crashed while formatting a record (a `Format` that
    // faults on it): that record would crash this process's writer too,
    // and the next, so it is set aside, counted. (A SIGKILL during a
    // format leaves no mark: that record is recovered.)
    let poison = (u64_at(old, H_WRITER_CRASHED) != 0)
        .then(|| u64_at(old, H_FORMATTING))
        .filter(|&nth| nth > 0);
    let batch_start = u64_at(old, H_BATCH_START);
    let mut nth = 0;

    let scanned = ring::scan(
        &old[RING_AT..layout.mirrors_at()],
        layout.ring_bytes,
        taken,
        |found| match found {
            ring::Found::Record {
                at,
                header,
                payload,
            } => {
                if poison.is_some() && at >= batch_start {
                    nth += 1;
                    if Some(nth) == poison {
                        skipped += 1;
                        return;
                    }
                }
                let mut payload = payload.to_vec();
                if header.kind == kind::EVENT {
                    if let Some(wall) = rewrite_event(&mut payload, time, &catalog) {
                        last = Some(wall);
                    }
                }
                let level = Level::from_u8(header.level).unwrap_or(Level::Error);
                out.records.push((level, header.kind, payload));
            }
            ring::Found::Torn => torn += 1,
        },
    );
    if let Err(why) = scanned {
        out.notices.push(format!(
            "could not read the ring in {} (left by pid {pid}, which died): {why}; {} records read before that",
            path.display(),
            out.records.len()
        ));
    }
    let n = out.records.len();
    let mut notice = format!(
        "recovered {n} record{} from {} written by pid {pid} before it died",
        if n == 1 { "" } else { "s" },
        path.display()
    );
    if let Some(last) = last {
        notice.push_str(&format!(" (last at {})", format_wall(last)));
    }
    if torn > 0 {
        notice.push_str(&format!(
            "; {torn} record{} claimed and never committed (the process died while writing {}) lost",
            if torn == 1 { "" } else { "s" },
            if torn == 1 { "it" } else { "them" },
        ));
    }
    if skipped > 0 {
        notice.push_str(
            "; 1 record set aside, lost: the writer thread crashed while formatting it \
             (it would crash this one too)",
        );
    }
    let overflow = u64_at(old, H_OVERFLOW);
    if overflow > 0 {
        notice.push_str(&format!(
            "; {overflow} formatted bytes had outgrown a file sink's mirror and are lost"
        ));
    }
    let missing = u64_at(old, H_CATALOG_FULL);
    if missing > 0 {
        notice.push_str(&format!(
            "; {missing} call sites did not fit the catalog: their events show no names"
        ));
    }
    if n > 0 || torn > 0 || overflow > 0 || skipped > 0 {
        out.notices.insert(0, notice);
    }
    // Records the dead process refused at push time and never told its
    // files about (a block timeout, a full ring: counted by the producers,
    // reported by a writer that did not get to it).
    for (i, why) in RING_REASONS.iter().enumerate() {
        let counted = u64_at(old, LOSSES + 8 * i);
        let reported = u64_at(old, snap + S_REPORTED + 8 * i);
        let n = counted.saturating_sub(reported);
        if n > 0 {
            out.notices.push(format!(
                "{n} record{} dropped ({why}) by pid {pid}, which never reported them",
                if n == 1 { "" } else { "s" }
            ));
        }
    }
    out
}

/// Recovers a whole dead file given as bytes, the way `open` does with a
/// mapped one: the header checked against the bytes' length, then
/// [`recover`]. For the fuzz target and the tests.
#[cfg(fuzzing)]
pub(crate) fn recover_bytes(bytes: &[u8], sinks: &[SinkFiles<'_>]) -> Recovered {
    let path = Path::new("fuzz.nowait");
    match check_header(bytes, bytes.len() as u64) {
        Ok((layout, total)) => recover(&bytes[..total], &layout, path, sinks),
        Err(why) => Recovered::corrupt(path, &why),
    }
}

/// Recovers a whole dead file given as bytes (as [`recover_bytes`]) into
/// the file sinks of a logger that writes `dir/app.log` (a file sink) and
/// `rolling` (whose directory is in `dir`), for the `durable_sinks` fuzz
/// target. So that the input can name those files, a stored path that
/// starts with `/fuzz/` is taken as one in `dir` (if it still fits its
/// identity copy), and identity words `(u64::MAX, u64::MAX)` as those of
/// `dir/app.log`; `dir` is canonical.
#[cfg(fuzzing)]
pub(crate) fn recover_into(bytes: &mut [u8], dir: &Path, rolling: &Rolling) -> Recovered {
    let app = dir.join("app.log");
    let dir_bytes = dir.as_os_str().as_encoded_bytes();
    for copy in 0..SLOTS * 2 {
        let ident = IDENTS + copy * IDENT_SIZE;
        let Some(ident_bytes) = bytes.get_mut(ident..ident + IDENT_SIZE) else {
            break;
        };
        if u64_at(ident_bytes, 0) == u64::MAX && u64_at(ident_bytes, 8) == u64::MAX {
            if let Ok((dev, ino)) = sys::path_id(&app) {
                ident_bytes[..8].copy_from_slice(&dev.to_le_bytes());
                ident_bytes[8..16].copy_from_slice(&ino.to_le_bytes());
            }
        }
        let Some(len) = usize::try_from(u64_at(ident_bytes, 16))
            .ok()
            .filter(|&n| n <= IDENT_SIZE - IDENT_PATH)
        else {
            continue;
        };
        let path = &ident_bytes[IDENT_PATH..IDENT_PATH + len];
        let Some(rest) = path.strip_prefix(b"/fuzz") else {
            continue;
        };
        if !rest.starts_with(b"/") {
            continue;
        }
        let new = [dir_bytes, rest].concat();
        if new.len() <= IDENT_SIZE - IDENT_PATH {
            ident_bytes[IDENT_PATH..IDENT_PATH + new.len()].copy_from_slice(&new);
            ident_bytes[16..24].copy_from_slice(&(new.len() as u64).to_le_bytes());
        }
    }
    recover_bytes(bytes, &[SinkFiles::File(&app), SinkFiles::Rolling(rolling)])
}

/// The length a dead file's header states, if it checks out (for the fuzz
/// target, which pads its input to it).
#[cfg(fuzzing)]
pub(crate) fn stated_len(head: &[u8]) -> Option<usize> {
    check_header(head, u64::MAX).ok().map(|(_, total)| total)
}

/// Opens the dead file's recovery: reads and checks its header from the
/// open `file` (of `len` bytes), maps the layout it states, recovers.
pub(super) fn recover_file(
    file: &std::fs::File,
    len: u64,
    path: &Path,
    sinks: &[SinkFiles<'_>],
) -> Recovered {
    let mut head = vec![0u8; 4096.min(usize::try_from(len).unwrap_or(4096))];
    if let Err(e) = read_head(file, &mut head) {
        return Recovered::corrupt(path, &format!("cannot read it: {e}"));
    }
    let (layout, total) = match check_header(&head, len) {
        Ok(checked) => checked,
        Err(why) => return Recovered::corrupt(path, &why),
    };
    match sys::Mapping::read_only(file, total) {
        Ok(map) => recover(map.bytes(), &layout, path, sinks),
        Err(e) => Recovered::corrupt(path, &format!("cannot map it: {e}")),
    }
}

fn read_head(mut file: &std::fs::File, buf: &mut [u8]) -> io::Result<()> {
    use std::io::{Read, Seek};
    file.seek(io::SeekFrom::Start(0))?;
    file.read_exact(buf)
}
