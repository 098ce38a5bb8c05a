//! Housekeeping of a rolling sink, off the writer thread: compression of
//! rotated files and retention (`max_log_files`, `max_age`,
//! `max_total_size`).
//!
//! The writer thread sends one [`Job`] per rotation (and one at start) over
//! a channel and never waits for it; one thread per sink does the jobs in
//! order, so compression and deletion never race each other. Errors come
//! back over a second channel; the writer reports them in-band and counts
//! them in `SinkStats::rotation_errors`.
//!
//! Others may write the directory, and put anything under any name there,
//! at any time; whoever can write one of its parents can put a link in its
//! place. So the directory is the handle the sink opened at build
//! ([`Dir`]), never its path; a file is the sink's only if it is a regular
//! file owned by the process's effective user, with one name ([`Stat::is_ours`]),
//! whose name is exactly one this sink gives, before the current one (step
//! 1); every open is a no-follow open checked on the opened file
//! ([`nofollow`](crate::sys::nofollow)); an archive is created exclusively under a temporary name
//! of its own with the permissions of its file, and renamed into place
//! without replacing any name. A removal checks first that the name still
//! names the file that was decided on, and never follows a link.
//!
//! Steps of a job, `current` being the file the writer now writes. Steps 1
//! and 3 decide from the listing alone ([`sort`], [`retention`]: pure
//! functions, fuzzed by the `rolling_housekeeping` target); steps 2 and 4
//! act.
//!
//! 1. List the directory; keep the names this sink gives (see
//!    [`naming`](super::naming)) that are the sink's own files and come
//!    before `current` (period, then index). Anything else under such a
//!    name (a link, a directory, another user's file, a file with other
//!    names) is left alone and reported once while it stays; if it holds
//!    an archive's name, the file of that name is not compressed. The
//!    sink's own files named after `current` (a clock that went back) are
//!    neither counted nor touched. Temporaries of a compression that a
//!    process of this user did not finish (`NAME.gz.TOKEN.tmp`, and
//!    `NAME.gz.tmp`) are removed if they are the sink's own; others are
//!    left alone (reported), and block nothing.
//! 2. With compression on, compress every plain file: open it without
//!    following a link, refuse it unless it is a regular file of this user
//!    with one name, write `NAME.gz.TOKEN.tmp` (created new, `TOKEN` random,
//!    another tried if the name is taken; with the bits of the file and of
//!    [`Rolling::mode`](super::Rolling::mode)), `fsync` it, rename it to
//!    `NAME.gz` unless that name exists, then remove `NAME`. A failure
//!    removes the temporary file and keeps `NAME`: no data is ever deleted
//!    by a failed compression. `NAME` and `NAME.gz` both the sink's own
//!    (the removal was cut short): `NAME` is removed only if `NAME.gz`
//!    decompresses to exactly its bytes; otherwise both stay, reported
//!    once.
//! 3. Retention, oldest file first (by name: period, then index), over
//!    the sink's own files before `current` (compressed or not; `current`
//!    itself is never removed): remove a file while more than
//!    `max_log_files` remain (`current` included), or while they take more
//!    than `max_total_size` bytes (as listed), or if it was last modified
//!    more than `max_age` before the job's time (the sink's clock). A
//!    modification time in the future counts as now.
//! 4. Remove what step 3 chose.

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::io;
use std::time::{Duration, SystemTime};

use crossbeam_channel::{Receiver, Sender};

use super::naming::{Key, Naming};
use super::Compression;
use crate::sys::nofollow::{Dir, Mode, Stat};

/// Work for the housekeeping thread.
#[derive(Debug)]
pub(crate) struct Job {
    pub(crate) current: Key,
    /// The time on the sink's clock, for `max_age`.
    pub(crate) now: SystemTime,
}

/// What the housekeeping thread needs to know.
#[derive(Debug, Clone)]
pub(crate) struct Housekeeping {
    pub(crate) naming: Naming,
    pub(crate) compress: Option<Compression>,
    pub(crate) max_files: Option<usize>,
    pub(crate) max_age: Option<Duration>,
    pub(crate) max_total: Option<u64>,
    /// The bits an archive gets at most ([`Rolling::mode`](super::Rolling::mode)).
    pub(crate) mode: Mode,
}

impl Housekeeping {
    /// Whether there is anything to do after a rotation.
    pub(crate) fn needed(&self) -> bool {
        self.compress.is_some()
            || self.max_files.is_some()
            || self.max_age.is_some()
            || self.max_total.is_some()
    }
}

/// The writer's end: send jobs, collect error messages.
#[derive(Debug)]
pub(crate) struct Housekeeper {
    jobs: Option<Sender<Job>>,
    errors: Receiver<String>,
    /// Without a thread (it could not be spawned), jobs run inline.
    inline: Option<Keeper>,
}

impl Housekeeper {
    /// Starts the thread, which works in `dir`. If it cannot be spawned,
    /// jobs run on the caller (the writer thread) and that is reported as
    /// the first error.
    pub(crate) fn start(dir: Dir, settings: Housekeeping) -> Housekeeper {
        let (jobs_tx, jobs_rx) = crossbeam_channel::unbounded::<Job>();
        let (err_tx, err_rx) = crossbeam_channel::unbounded();
        let spare = dir.try_clone();
        let mut keeper = Keeper::new(dir, settings.clone(), err_tx.clone());
        let spawned = std::thread::Builder::new()
            .name("nowait-rolling".into())
            .spawn(move || {
                while let Ok(mut job) = jobs_rx.recv() {
                    // Only the newest state matters: skip ahead.
                    while let Ok(next) = jobs_rx.try_recv() {
                        job = next;
                    }
                    keeper.run(&job);
                }
            });
        match (spawned, spare) {
            (Ok(_), _) => Housekeeper {
                jobs: Some(jobs_tx),
                errors: err_rx,
                inline: None,
            },
            (Err(e), spare) => {
                let inline = match spare {
                    Ok(dir) => {
                        let _ = err_tx.send(format!(
                            "cannot start the housekeeping thread ({e}); compression and retention run on the writer thread"
                        ));
                        Some(Keeper::new(dir, settings, err_tx))
                    }
                    Err(e2) => {
                        let _ = err_tx.send(format!(
                            "cannot start the housekeeping thread ({e}) nor open its directory again ({e2}); no compression or retention"
                        ));
                        None
                    }
                };
                Housekeeper {
                    jobs: None,
                    errors: err_rx,
                    inline,
                }
            }
        }
    }

    /// Asks for housekeeping now that `current` is the file written.
    pub(crate) fn send(&mut self, job: Job) {
        if let Some(tx) = &self.jobs {
            let _ = tx.send(job);
        } else if let Some(keeper) = &mut self.inline {
            keeper.run(&job);
        }
    }

    /// Errors reported since the last call.
    pub(crate) fn errors(&self) -> Vec<String> {
        self.errors.try_iter().collect()
    }
}

// === step 1 and 3: deciding from a listing ===

/// A name in the directory and what it is, as listed: the input of the
/// decisions.
#[derive(Debug, Clone)]
pub(crate) struct Listed {
    pub(crate) name: String,
    pub(crate) stat: Stat,
}

/// One file of an [`Entry`]: its name and what it was when listed (its
/// identity is checked again before it is removed).
pub(crate) type Part = Listed;

/// One file of the sink, compressed, plain, or (after a crash between the
/// rename and the removal) both; each the sink's own.
#[derive(Debug, Default, Clone)]
pub(crate) struct Entry {
    pub(crate) plain: Option<Part>,
    /// `NAME.gz`, `NAME.zst` (usually one; both if the setting changed).
    pub(crate) archives: Vec<(Compression, Part)>,
    /// An archive name is taken by something not the sink's: `NAME`
    /// cannot be compressed.
    pub(crate) blocked: bool,
}

impl Entry {
    /// Bytes of the plain file and archives, as listed.
    fn bytes(&self) -> u64 {
        self.parts().fold(0u64, |n, p| n.saturating_add(p.stat.len))
    }

    /// The latest modification of the plain file and archives, as listed.
    fn modified(&self) -> Option<SystemTime> {
        self.parts().filter_map(|p| p.stat.modified).max()
    }

    /// The plain file, then the archives.
    pub(crate) fn parts(&self) -> impl Iterator<Item = &Part> {
        self.plain
            .iter()
            .chain(self.archives.iter().map(|(_, p)| p))
    }
}

/// What a listing holds for a sink (step 1).
#[derive(Debug, Default)]
pub(crate) struct Files {
    /// The sink's own files before `current`, by key.
    pub(crate) older: BTreeMap<Key, Entry>,
    /// Names of the sink's pattern that are not its files, and why: left
    /// alone, reported once while they stay.
    pub(crate) alone: Vec<(String, String)>,
    /// The sink's own temporaries of compressions not finished: removed.
    pub(crate) leftovers: Vec<Part>,
}

/// What a name of this sink is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Plain,
    Archive(Compression),
    /// `NAME.gz.TOKEN.tmp` (or `NAME.gz.tmp`): a compression under way.
    Tmp,
}

/// The longest random token of a temporary name (hex digits of a `u64`).
const TOKEN_MAX: usize = 16;

/// The key and kind of `name`, if it is one of the sink's names. A name
/// the sink gives its files is never taken for a temporary.
fn classify(naming: &Naming, name: &str) -> Option<(Key, Kind)> {
    if let Some((key, compressed)) = naming.parse(name) {
        if !compressed {
            return Some((key, Kind::Plain));
        }
        let how = Compression::ALL
            .into_iter()
            .find(|c| name.ends_with(c.extension()))?;
        return Some((key, Kind::Archive(how)));
    }
    let stem = name.strip_suffix(".tmp")?;
    // `ARCHIVE.TOKEN`, or `ARCHIVE`.
    let archive = match stem.rsplit_once('.') {
        Some((archive, token))
            if !token.is_empty()
                && token.len() <= TOKEN_MAX
                && token
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
                && Compression::ALL
                    .iter()
                    .any(|c| archive.ends_with(c.extension())) =>
        {
            archive
        }
        _ => stem,
    };
    match naming.parse(archive)? {
        (key, true) => Some((key, Kind::Tmp)),
        (_, false) => None,
    }
}

/// Whether `name` is one of the sink's names: a file's, an archive's, or
/// a compression's temporary.
pub(crate) fn is_sinks(naming: &Naming, name: &str) -> bool {
    classify(naming, name).is_some()
}

/// Step 1: the sink's files in `listing`, before `current`, and the names
/// to leave alone or to clean up. Pure: the same listing gives the same
/// answer.
pub(crate) fn sort(
    naming: &Naming,
    current: &Key,
    listing: impl IntoIterator<Item = Listed>,
) -> Files {
    let mut files = Files::default();
    let mut blocked = HashSet::new();
    for item in listing {
        let Some((key, kind)) = classify(naming, &item.name) else {
            continue;
        };
        if let Some(why) = item.stat.not_ours() {
            if matches!(kind, Kind::Archive(_)) {
                blocked.insert(key);
            }
            files.alone.push((item.name, why));
            continue;
        }
        match kind {
            Kind::Tmp => files.leftovers.push(item),
            // The current file, and any named after it: not this job's.
            _ if key >= *current => {}
            Kind::Plain => files.older.entry(key).or_default().plain = Some(item),
            Kind::Archive(how) => files
                .older
                .entry(key)
                .or_default()
                .archives
                .push((how, item)),
        }
    }
    for (key, entry) in files.older.iter_mut() {
        entry.blocked = blocked.contains(key);
        entry.archives.sort_by_key(|(how, _)| *how as u8);
    }
    files
}

/// What step 2 does with one plain file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    /// Compress it.
    Compress,
    /// Remove it if its first archive holds exactly its bytes.
    Verify,
}

/// Step 2's plan: what to do with each plain file of `files` (none without
/// compression). Pure.
pub(crate) fn compression(files: &Files, on: bool) -> Vec<(Key, Action)> {
    if !on {
        return Vec::new();
    }
    files
        .older
        .iter()
        .filter(|(_, e)| e.plain.is_some())
        .filter_map(|(key, e)| match (e.archives.is_empty(), e.blocked) {
            (false, _) => Some((key.clone(), Action::Verify)),
            (true, false) => Some((key.clone(), Action::Compress)),
            (true, true) => None,
        })
        .collect()
}

/// Step 3: the keys of `older` (the sink's own files before the current
/// one, as step 2 left them) to remove, oldest first, with the limit that
/// removes each. Pure.
pub(crate) fn retention(
    s: &Housekeeping,
    older: &BTreeMap<Key, Entry>,
    now: SystemTime,
) -> Vec<(Key, &'static str)> {
    // Files that remain, counting the current one.
    let mut count = older.len().saturating_add(1);
    let mut bytes = older
        .values()
        .fold(0u64, |n, e| n.saturating_add(e.bytes()));
    let mut out = Vec::new();
    for (key, entry) in older {
        let too_many = s.max_files.is_some_and(|max| count > max.max(1));
        let too_big = s.max_total.is_some_and(|max| bytes > max);
        let too_old = s.max_age.is_some_and(|max| {
            entry
                .modified()
                .is_some_and(|m| now.duration_since(m).unwrap_or(Duration::ZERO) > max)
        });
        let why = if too_many {
            "max_log_files"
        } else if too_big {
            "max_total_size"
        } else if too_old {
            "max_age"
        } else {
            continue;
        };
        out.push((key.clone(), why));
        count -= 1;
        bytes = bytes.saturating_sub(entry.bytes());
    }
    out
}

// === steps 2 and 4: acting ===

/// The housekeeping thread's state: its directory, where to report, and
/// what was reported already.
#[derive(Debug)]
struct Keeper {
    dir: Dir,
    settings: Housekeeping,
    errors: Sender<String>,
    /// Conditions reported that last (a name left alone, a `.gz` that does
    /// not hold its file), each reported once while it lasts.
    noticed: HashSet<String>,
}

impl Keeper {
    fn new(dir: Dir, settings: Housekeeping, errors: Sender<String>) -> Keeper {
        Keeper {
            dir,
            settings,
            errors,
            noticed: HashSet::new(),
        }
    }

    /// The names of the sink's pattern in the directory, as listed.
    fn list(&self) -> io::Result<Vec<Listed>> {
        let mut names = Vec::new();
        self.dir.each_name(|name| {
            if classify(&self.settings.naming, name).is_some() {
                names.push(name.to_owned());
            }
        })?;
        let mut listing = Vec::with_capacity(names.len());
        for name in names {
            match self.dir.stat(&name) {
                Ok(stat) => listing.push(Listed { name, stat }),
                // Gone since it was listed.
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => self.report(format!("cannot inspect {}: {e}", self.shown(&name))),
            }
        }
        Ok(listing)
    }

    fn report(&self, what: String) {
        let _ = self.errors.send(what);
    }

    /// `name` with the directory's path, for a message.
    fn shown(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }

    /// Removes `part` if its name still names the file listed.
    fn remove(&self, part: &Part) -> io::Result<()> {
        self.dir.remove(&part.name, part.stat.id)
    }

    /// One job: the steps of the module's doc.
    fn run(&mut self, job: &Job) {
        let mut lasting = Lasting {
            before: std::mem::take(&mut self.noticed),
            now: HashSet::new(),
        };
        let listing = match self.list() {
            Ok(l) => l,
            Err(e) => {
                self.report(format!("cannot list {}: {e}", self.dir.path().display()));
                self.noticed = lasting.before;
                return;
            }
        };
        // 1.
        let mut files = sort(&self.settings.naming, &job.current, listing);
        for (name, why) in &files.alone {
            if !lasting.known(format!("alone {name}")) {
                self.report(format!(
                    "left {} alone: named like this sink's files, but {why}",
                    self.shown(name)
                ));
            }
        }
        for tmp in &files.leftovers {
            let _ = self.remove(tmp);
        }
        // 2.
        let plan = compression(&files, self.settings.compress.is_some());
        for (key, action) in plan {
            let Some(entry) = files.older.get_mut(&key) else {
                continue;
            };
            match action {
                Action::Verify => self.verify(entry, &mut lasting),
                Action::Compress => self.compress(entry),
            }
        }
        files
            .older
            .retain(|_, e| e.plain.is_some() || !e.archives.is_empty());
        // 3. and 4.
        for (key, why) in retention(&self.settings, &files.older, job.now) {
            let Some(entry) = files.older.get(&key) else {
                continue;
            };
            for part in entry.parts() {
                if let Err(e) = self.remove(part) {
                    if e.kind() != io::ErrorKind::NotFound {
                        self.report(format!(
                            "cannot remove {} ({why}): {e}",
                            self.shown(&part.name)
                        ));
                    }
                }
            }
        }
        self.noticed = lasting.now;
    }

    /// `NAME` and an archive of it, both the sink's: compressed before a
    /// crash, not yet removed, if the archive holds exactly the plain file
    /// (it was renamed into place after its fsync); else not ours to trust.
    fn verify(&self, entry: &mut Entry, lasting: &mut Lasting) {
        let (Some(plain), Some((how, archive))) = (&entry.plain, entry.archives.first()) else {
            return;
        };
        let id = format!("differs {}", archive.name);
        if lasting.before.contains(&id) {
            lasting.now.insert(id);
            return;
        }
        match holds(&self.dir, *how, &archive.name, &plain.name) {
            Ok(true) => match self.remove(plain) {
                Ok(()) => entry.plain = None,
                Err(e) => self.report(format!("cannot remove {}: {e}", self.shown(&plain.name))),
            },
            Ok(false) => {
                lasting.now.insert(id);
                self.report(format!(
                    "{} is not the compression of {}: both kept",
                    self.shown(&archive.name),
                    self.shown(&plain.name)
                ));
            }
            Err(e) => self.report(format!(
                "cannot compare {} with {}: {e} (both kept)",
                self.shown(&plain.name),
                self.shown(&archive.name)
            )),
        }
    }

    /// Compresses the plain file of `entry`; on success the archive takes
    /// its place in `entry`.
    fn compress(&self, entry: &mut Entry) {
        let (Some(how), Some(plain)) = (self.settings.compress, &entry.plain) else {
            return;
        };
        match compress(&self.dir, how, plain, self.settings.mode) {
            Ok(archive) => {
                entry.archives.push((how, archive));
                entry.plain = None;
            }
            Err(e) => self.report(format!(
                "cannot compress {}: {e} (kept as is)",
                self.shown(&plain.name)
            )),
        }
    }
}

/// Conditions that last (a name left alone, a `.gz` that does not hold its
/// file), so that each is reported once while it lasts.
#[derive(Debug)]
struct Lasting {
    /// Those of the previous job.
    before: HashSet<String>,
    /// Those found so far in this job.
    now: HashSet<String>,
}

impl Lasting {
    /// Notes that `id` holds now; whether it held at the previous job
    /// (then it was reported already).
    fn known(&mut self, id: String) -> bool {
        let known = self.before.contains(&id);
        self.now.insert(id);
        known
    }
}

/// Attempts at a free temporary name before a compression gives up.
const TMP_TRIES: u32 = 8;

/// A temporary name for `archive` that nobody can guess ahead:
/// `ARCHIVE.TOKEN.tmp`, `TOKEN` 16 random hex digits. Someone else's file
/// at the name (or a planted directory) costs one more try, never the
/// compression.
fn tmp_name(archive: &str) -> String {
    use std::hash::{BuildHasher, Hasher};
    // `RandomState`'s keys are random per process and change per call.
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    format!("{archive}.{:016x}.tmp", h.finish())
}

/// Compresses `plain` (the sink's own file) into `NAME.gz` (or `.zst`)
/// through a temporary name; removes `plain` only once the archive is
/// complete and in place. The archive as it is now.
fn compress(dir: &Dir, how: Compression, plain: &Part, mode: Mode) -> io::Result<Part> {
    let archive = format!("{}{}", plain.name, how.extension());
    let mut input = dir.open_regular(&plain.name)?;
    let meta = input.metadata()?;
    if crate::sys::file_id(&input)? != plain.stat.id {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "the name was given to another file since it was listed (left alone)",
        ));
    }
    let mode = mode.and(Mode::of(&meta));
    let mut tries = 0;
    let (tmp, out) = loop {
        let tmp = tmp_name(&archive);
        match dir.create_new(&tmp, mode) {
            Ok(out) => break (tmp, out),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && tries + 1 < TMP_TRIES => {
                tries += 1;
            }
            Err(e) => return Err(e),
        }
    };
    // From here on `tmp` is ours to remove. The archive keeps the time of
    // its last record (what `max_age` and `ls -t` go by).
    let tmp_id = crate::sys::file_id(&out);
    let result = encode(how, &mut input, &out)
        .and_then(|()| out.sync_all())
        .and_then(|()| match meta.modified() {
            Ok(t) => out.set_modified(t),
            Err(_) => Ok(()),
        })
        .and_then(|()| dir.rename_new(&tmp, &archive));
    if let Err(e) = result {
        if let Ok(id) = tmp_id {
            let _ = dir.remove(&tmp, id);
        }
        return Err(e);
    }
    drop(input);
    let stat = dir.stat(&archive)?;
    // If this fails, the next job finds both and removes the plain file.
    dir.remove(&plain.name, plain.stat.id)?;
    Ok(Part {
        name: archive,
        stat,
    })
}

/// Whether the archive `archive` decompresses to exactly the bytes of
/// `plain`. Reads at most as much of `archive` as `plain` holds, plus one
/// byte, whatever it claims; an archive that cannot be opened (not a
/// regular file of this user with one name) or decoded does not hold it.
fn holds(dir: &Dir, how: Compression, archive: &str, plain: &str) -> io::Result<bool> {
    /// Reads until `buf` is full or the end.
    fn fill(r: &mut dyn io::Read, buf: &mut [u8]) -> io::Result<usize> {
        let mut n = 0;
        while n < buf.len() {
            match r.read(&mut buf[n..]) {
                Ok(0) => break,
                Ok(k) => n += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(n)
    }
    let mut plain = dir.open_regular(plain)?;
    let Ok(mut decoded) = dir.open_regular(archive).and_then(|f| decode(how, f)) else {
        return Ok(false);
    };
    let (mut a, mut b) = (vec![0; 64 << 10], vec![0; 64 << 10]);
    loop {
        let n = fill(&mut plain, &mut a)?;
        // At the end of `plain`, one byte more of the archive is a
        // difference.
        let want = n.max(1);
        let Ok(m) = fill(&mut *decoded, &mut b[..want]) else {
            return Ok(false);
        };
        if a[..n] != b[..m] {
            return Ok(false);
        }
        if n == 0 {
            return Ok(true);
        }
    }
}

/// Writes `input` compressed into `out` (not synced).
fn encode(how: Compression, input: &mut fs::File, out: &fs::File) -> io::Result<()> {
    match how {
        #[cfg(feature = "gzip")]
        Compression::Gzip => {
            let mut enc = flate2::write::GzEncoder::new(
                io::BufWriter::new(out),
                flate2::Compression::default(),
            );
            io::copy(input, &mut enc)?;
            enc.finish()?.into_inner().map_err(|e| e.into_error())?;
            Ok(())
        }
        #[cfg(feature = "zstd")]
        Compression::Zstd => {
            let mut enc = zstd::stream::write::Encoder::new(io::BufWriter::new(out), ZSTD_LEVEL)?;
            io::copy(input, &mut enc)?;
            enc.finish()?.into_inner().map_err(|e| e.into_error())?;
            Ok(())
        }
        #[allow(unreachable_patterns)]
        _ => {
            let _ = (input, out);
            Err(unsupported(how))
        }
    }
}

/// `file`'s bytes, decompressed. The file may be anyone's: the zstd
/// decoder takes no window larger than [`ZSTD_WINDOW_LOG_MAX`] (what it
/// allocates), gzip's is fixed.
fn decode(how: Compression, file: fs::File) -> io::Result<Box<dyn io::Read>> {
    match how {
        #[cfg(feature = "gzip")]
        Compression::Gzip => Ok(Box::new(flate2::read::GzDecoder::new(file))),
        #[cfg(feature = "zstd")]
        Compression::Zstd => {
            let mut dec = zstd::stream::read::Decoder::new(file)?;
            dec.window_log_max(ZSTD_WINDOW_LOG_MAX)?;
            Ok(Box::new(dec))
        }
        #[allow(unreachable_patterns)]
        _ => {
            let _ = file;
            Err(unsupported(how))
        }
    }
}

/// zstd's own default level.
#[cfg(feature = "zstd")]
const ZSTD_LEVEL: i32 = 3;

/// The largest window (log2 bytes) the zstd decoder accepts: 16 MiB, above
/// the 2 MiB level 3 uses, far below the 2 GiB a frame may ask for.
#[cfg(feature = "zstd")]
const ZSTD_WINDOW_LOG_MAX: u32 = 24;

/// Unreachable in practice: `build` refuses a compression whose feature
/// is off.
#[allow(dead_code)]
fn unsupported(how: Compression) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!("nowait-core was built without the feature for {how:?}"),
    )
}

/// The fuzz target `rolling_housekeeping`: the decisions of a job (steps
/// 1 and 3, and step 2's plan) over a hostile listing. The first byte picks
/// the naming, the second which settings are on, the next three their
/// values; the rest, split at `0xff`, is the current file's name, then
/// listed names, each after three bytes saying what it is (kind, owner,
/// links), its size (up to 2^63) and its age in days (negative: in the
/// future). Whatever the listing, only the sink's own files before the
/// current one are compressed, removed or counted, every name elsewhere
/// of the sink's pattern is reported, and after the removals the limits
/// hold.
#[cfg(fuzzing)]
pub(crate) fn fuzz_housekeeping(data: &[u8]) {
    use crate::sys::nofollow::Kind as FileKind;
    use std::collections::HashMap;

    let Some((head, rest)) = data.split_first_chunk::<5>() else {
        return;
    };
    let (prefix, suffix, rotation) = match head[0] % 4 {
        0 => (Some("app"), Some("log"), super::Rotation::Daily),
        1 => (Some("app.log"), None, super::Rotation::Never),
        2 => (None, Some("log"), super::Rotation::Hourly),
        _ => (Some("a"), None, super::Rotation::Minutely),
    };
    let naming = Naming {
        prefix: prefix.map(Into::into),
        suffix: suffix.map(Into::into),
        rotation,
    };
    let on = head[1];
    let settings = Housekeeping {
        naming: naming.clone(),
        compress: (on & 1 != 0).then_some(Compression::Gzip),
        max_files: (on & 2 != 0).then_some(usize::from(head[2])),
        max_total: (on & 4 != 0).then_some(u64::from(head[3]) << (head[3] % 48)),
        max_age: (on & 8 != 0).then_some(Duration::from_secs(u64::from(head[4]) * 86_400)),
        mode: Mode::NEW,
    };
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_614_400);
    let mut parts = rest.split(|&b| b == 0xff);
    let Some(current) = parts.next() else { return };
    let Some((current, false)) = naming.parse(&String::from_utf8_lossy(current)) else {
        return;
    };
    // A directory lists a name once.
    let mut listing: Vec<Listed> = Vec::new();
    let mut seen: HashMap<String, Stat> = HashMap::new();
    for (i, part) in parts.enumerate() {
        let Some((meta, name)) = part.split_first_chunk::<3>() else {
            continue;
        };
        let name = String::from_utf8_lossy(name).into_owned();
        let kind = [
            FileKind::File,
            FileKind::Link,
            FileKind::Dir,
            FileKind::Other,
        ][usize::from(meta[0] & 3)];
        let len = if meta[1] & 0x80 != 0 {
            1u64 << (meta[1] & 63)
        } else {
            u64::from(meta[1]) * 100
        };
        let age = i64::from(meta[2] as i8) * 86_400;
        let stat = Stat {
            kind,
            mine: meta[0] & 4 != 0,
            links: [1, 1, 2, 0][usize::from(meta[0] >> 3 & 3)],
            len,
            modified: Some(if age >= 0 {
                now - Duration::from_secs(age.unsigned_abs())
            } else {
                now + Duration::from_secs(age.unsigned_abs())
            }),
            mode: 0o644,
            id: (0, i as u64),
        };
        if let std::collections::hash_map::Entry::Vacant(at) = seen.entry(name.clone()) {
            at.insert(stat);
            listing.push(Listed { name, stat });
        }
    }
    let files = sort(&naming, &current, listing.iter().cloned());
    // Only the sink's own files, each under exactly the name its key gets.
    let own = |p: &Part| {
        assert!(p.stat.is_ours(), "{p:?} taken for the sink's");
        assert_eq!(seen.get(&p.name), Some(&p.stat), "{p:?} not listed");
    };
    for (key, entry) in &files.older {
        assert!(*key < current, "{key:?} is not before {current:?}");
        let plain = naming.name(key);
        if let Some(p) = &entry.plain {
            own(p);
            assert_eq!(p.name, plain);
        }
        for (how, p) in &entry.archives {
            own(p);
            assert_eq!(p.name, format!("{plain}{}", how.extension()));
        }
    }
    for p in &files.leftovers {
        own(p);
        assert!(matches!(classify(&naming, &p.name), Some((_, Kind::Tmp))));
    }
    // Every name of the pattern that is not the sink's is reported.
    for item in &listing {
        let pattern = classify(&naming, &item.name).is_some();
        let reported = files.alone.iter().any(|(n, _)| *n == item.name);
        assert_eq!(pattern && !item.stat.is_ours(), reported, "{item:?}");
    }
    // Step 2, as if every compression worked and every archive held its
    // file.
    let mut older = files.older.clone();
    for (key, action) in compression(&files, settings.compress.is_some()) {
        let entry = older.get_mut(&key).expect("planned for a file not listed");
        let plain = entry.plain.take().expect("nothing to compress");
        assert!(!entry.blocked || action == Action::Verify, "{entry:?}");
        match action {
            Action::Verify => assert!(!entry.archives.is_empty()),
            Action::Compress => {
                assert!(entry.archives.is_empty());
                let stat = Stat {
                    len: plain.stat.len / 2,
                    ..plain.stat
                };
                let name = format!("{}.gz", plain.name);
                entry
                    .archives
                    .push((Compression::Gzip, Part { name, stat }));
            }
        }
    }
    older.retain(|_, e| e.plain.is_some() || !e.archives.is_empty());
    // Step 3: the limits hold over what is left.
    let removed = retention(&settings, &older, now);
    assert!(removed.windows(2).all(|w| w[0].0 < w[1].0));
    for (key, _) in &removed {
        assert!(
            older.remove(key).is_some(),
            "{key:?} removed twice or not listed"
        );
    }
    if let Some(max) = settings.max_files {
        assert!(older.len() < max.max(1), "{} files left", older.len() + 1);
    }
    let bytes = older
        .values()
        .fold(0u64, |n, e| n.saturating_add(e.bytes()));
    if let Some(max) = settings.max_total {
        assert!(bytes <= max, "{bytes} bytes left");
    }
    if let Some(max) = settings.max_age {
        for e in older.values() {
            let m = e.modified().expect("listed with a time");
            assert!(now.duration_since(m).unwrap_or(Duration::ZERO) <= max);
        }
    }
}

#[cfg(all(test, not(miri)))]
mod tests {
    use super::*;
    use crate::rolling::dir_names as names;
    use crate::rolling::Rotation;
    use std::path::{Path, PathBuf};

    /// `Rolling::never(dir, "app.log")`'s names: `app.log`, `app.log.1`, ...
    fn never() -> Naming {
        Naming {
            prefix: Some("app.log".into()),
            suffix: None,
            rotation: Rotation::Never,
        }
    }

    fn index(i: u32) -> Key {
        Key {
            period: String::new(),
            index: i,
        }
    }

    /// One housekeeping job with `current` the file written now; the
    /// errors it reported.
    fn housekeep(
        dir: &Path,
        naming: Naming,
        compress: bool,
        max_files: Option<usize>,
        current: Key,
    ) -> Vec<String> {
        let settings = Housekeeping {
            naming,
            compress: compress.then_some(Compression::Gzip),
            max_files,
            max_age: None,
            max_total: None,
            mode: Mode::NEW,
        };
        run(dir, settings, current, SystemTime::now())
    }

    /// One job with these settings at `now`; the errors it reported.
    fn run(dir: &Path, settings: Housekeeping, current: Key, now: SystemTime) -> Vec<String> {
        let (tx, rx) = crossbeam_channel::unbounded();
        Keeper::new(Dir::open(dir).unwrap(), settings, tx).run(&Job { current, now });
        rx.try_iter().collect()
    }

    #[cfg(feature = "gzip")]
    fn gzip(bytes: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(bytes).unwrap();
        enc.finish().unwrap()
    }

    #[cfg(all(unix, feature = "gzip"))]
    fn gunzipped(path: &Path) -> Vec<u8> {
        use std::io::Read;
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(fs::File::open(path).unwrap())
            .read_to_end(&mut out)
            .unwrap();
        out
    }

    /// A secret outside the log directory, readable by its owner only.
    #[cfg(all(unix, feature = "gzip"))]
    fn secret(dir: &Path) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = dir.join("shadow");
        fs::write(&path, b"root:SECRET:19000::::::\n").unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        path
    }

    /// Compresses `name` in `dir` with gzip, as a job would after listing
    /// it.
    #[cfg(all(unix, feature = "gzip"))]
    fn compress_name(dir: &Path, name: &str) -> io::Result<Part> {
        let dir = Dir::open(dir).unwrap();
        let part = Part {
            name: name.into(),
            stat: dir.stat(name).unwrap(),
        };
        compress(&dir, Compression::Gzip, &part, Mode::NEW)
    }

    #[cfg(all(unix, feature = "gzip"))]
    #[test]
    fn a_0600_log_is_compressed_into_a_0600_archive() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("app.log");
        fs::write(&old, b"private\n").unwrap();
        fs::set_permissions(&old, fs::Permissions::from_mode(0o600)).unwrap();
        let when = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        fs::File::options()
            .write(true)
            .open(&old)
            .unwrap()
            .set_modified(when)
            .unwrap();
        fs::write(dir.path().join("app.log.1"), b"").unwrap();
        let errors = housekeep(dir.path(), never(), true, None, index(1));
        assert_eq!(errors, Vec::<String>::new());
        assert_eq!(names(dir.path()), ["app.log.1", "app.log.gz"]);
        let gz = dir.path().join("app.log.gz");
        assert_eq!(gunzipped(&gz), b"private\n");
        let mode = fs::metadata(&gz).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "the archive is no wider than its log");
        assert_eq!(
            fs::metadata(&gz).unwrap().modified().unwrap(),
            when,
            "the archive keeps its log's time"
        );
    }

    /// The attack: a user who can write the log directory swaps the
    /// rotated file for a link to a file only the service can read, and
    /// waits for the archive.
    #[cfg(all(unix, feature = "gzip"))]
    #[test]
    fn a_rotated_file_swapped_for_a_symlink_is_not_compressed_and_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let secret = secret(outside.path());
        let old = dir.path().join("app.log");
        std::os::unix::fs::symlink(&secret, &old).unwrap();
        fs::write(dir.path().join("app.log.1"), b"").unwrap();
        let errors = housekeep(dir.path(), never(), true, None, index(1));
        assert_eq!(names(dir.path()), ["app.log", "app.log.1"], "no archive");
        assert!(
            fs::symlink_metadata(&old).unwrap().is_symlink(),
            "left alone"
        );
        assert_eq!(fs::read(&secret).unwrap(), b"root:SECRET:19000::::::\n");
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(
            errors[0].contains("app.log") && errors[0].contains("symbolic link"),
            "{errors:?}"
        );
    }

    /// The same swap after the directory was listed, at the open itself.
    #[cfg(all(unix, feature = "gzip"))]
    #[test]
    fn compression_does_not_open_a_symlink() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let old = dir.path().join("app.log");
        std::os::unix::fs::symlink(secret(outside.path()), &old).unwrap();
        let err = compress_name(dir.path(), "app.log").unwrap_err();
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert_eq!(names(dir.path()), ["app.log"]);
    }

    /// A hard link is no symbolic link, but names another file all the
    /// same (where the system lets anyone link others' files).
    #[cfg(all(unix, feature = "gzip"))]
    #[test]
    fn compression_does_not_open_a_file_with_other_names() {
        let dir = tempfile::tempdir().unwrap();
        let secret = secret(dir.path());
        let old = dir.path().join("app.log");
        fs::hard_link(&secret, &old).unwrap();
        let err = compress_name(dir.path(), "app.log").unwrap_err();
        assert!(err.to_string().contains("hard link"), "{err}");
        assert_eq!(names(dir.path()), ["app.log", "shadow"]);
    }

    /// An archive name already taken by a link: the plain file stays, and
    /// nothing is written through the link.
    #[cfg(all(unix, feature = "gzip"))]
    #[test]
    fn an_archive_name_taken_by_a_symlink_keeps_the_plain_file() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("target");
        fs::write(&target, b"theirs\n").unwrap();
        fs::write(dir.path().join("app.log"), b"ours\n").unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join("app.log.gz")).unwrap();
        fs::write(dir.path().join("app.log.1"), b"").unwrap();
        let errors = housekeep(dir.path(), never(), true, None, index(1));
        assert_eq!(names(dir.path()), ["app.log", "app.log.1", "app.log.gz"]);
        assert_eq!(fs::read(dir.path().join("app.log")).unwrap(), b"ours\n");
        assert_eq!(fs::read(&target).unwrap(), b"theirs\n");
        assert!(
            errors.iter().any(|e| e.contains("app.log.gz")),
            "{errors:?}"
        );
    }

    /// `NAME` and `NAME.gz` both there: the gzip was interrupted before
    /// `NAME` was removed. Only a `.gz` that holds `NAME` exactly lets it go.
    #[cfg(feature = "gzip")]
    #[test]
    fn a_plain_file_is_removed_only_if_its_gz_holds_it() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        fs::write(d.join("app.log"), b"line 1\nline 2\n").unwrap();
        fs::write(d.join("app.log.gz"), gzip(b"line 1\nline 2\n")).unwrap();
        fs::write(d.join("app.log.1"), b"records\n").unwrap();
        fs::write(d.join("app.log.1.gz"), gzip(b"records\nand more\n")).unwrap();
        fs::write(d.join("app.log.2"), b"records\n").unwrap();
        fs::write(d.join("app.log.2.gz"), b"not gzip").unwrap();
        fs::write(d.join("app.log.3"), b"").unwrap();
        let errors = housekeep(d, never(), true, None, index(3));
        assert_eq!(
            names(d),
            [
                "app.log.1",
                "app.log.1.gz",
                "app.log.2",
                "app.log.2.gz",
                "app.log.3",
                "app.log.gz"
            ]
        );
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors.iter().all(|e| e.contains("kept")), "{errors:?}");
    }

    /// Retention removes only regular files whose names are exactly this
    /// sink's: not a link named like one (nor what it points to), not a
    /// directory, not a name that only looks alike.
    #[cfg(unix)]
    #[test]
    fn retention_leaves_links_directories_and_lookalike_names_alone() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("target");
        fs::write(&target, b"theirs\n").unwrap();
        let d = dir.path();
        let naming = Naming {
            prefix: Some("app".into()),
            suffix: Some("log".into()),
            rotation: Rotation::Daily,
        };
        for name in [
            "app.2026-01-01.log",
            "app.2026-01-02.log.gz",
            "app.2026-01-06.log",
            "app.2026-01-01.log.bak",
            "app.2026-1-01.log",
            "app.x.2026-01-01.log",
        ] {
            fs::write(d.join(name), b"x\n").unwrap();
        }
        for link in [
            "app.2026-01-03.log",
            "app.2026-01-04.log.gz",
            "app.2026-01-01.log.old",
        ] {
            std::os::unix::fs::symlink(&target, d.join(link)).unwrap();
        }
        fs::create_dir(d.join("app.2026-01-05.log")).unwrap();
        let current = Key {
            period: "2026-01-06".into(),
            index: 0,
        };
        let errors = housekeep(d, naming, false, Some(1), current);
        assert_eq!(
            names(d),
            [
                "app.2026-01-01.log.bak",
                "app.2026-01-01.log.old",
                "app.2026-01-03.log",
                "app.2026-01-04.log.gz",
                "app.2026-01-05.log",
                "app.2026-01-06.log",
                "app.2026-1-01.log",
                "app.x.2026-01-01.log",
            ]
        );
        assert_eq!(fs::read(&target).unwrap(), b"theirs\n");
        // The names of this sink that are not its files are reported.
        assert_eq!(errors.len(), 3, "{errors:?}");
    }

    /// A name left alone is reported once while it stays, and again if it
    /// comes back after it was gone.
    #[cfg(unix)]
    #[test]
    fn a_name_left_alone_is_reported_once_while_it_stays() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("app.log");
        std::os::unix::fs::symlink("/nonexistent", &link).unwrap();
        fs::write(dir.path().join("app.log.1"), b"").unwrap();
        let (tx, rx) = crossbeam_channel::unbounded();
        let settings = Housekeeping {
            naming: never(),
            compress: cfg!(feature = "gzip").then_some(Compression::Gzip),
            max_files: Some(1),
            max_age: None,
            max_total: None,
            mode: Mode::NEW,
        };
        let mut keeper = Keeper::new(Dir::open(dir.path()).unwrap(), settings, tx);
        let mut job = || {
            keeper.run(&Job {
                current: index(1),
                now: SystemTime::now(),
            });
            rx.try_iter().count()
        };
        assert_eq!(job(), 1);
        assert_eq!(job(), 0);
        fs::remove_file(&link).unwrap();
        assert_eq!(job(), 0);
        std::os::unix::fs::symlink("/nonexistent", &link).unwrap();
        assert_eq!(job(), 1);
        assert_eq!(names(dir.path()), ["app.log", "app.log.1"]);
    }

    /// A link named like the temporary file of a compression is not a
    /// leftover of ours: it stays (reported), and blocks nothing: the
    /// compression writes under a temporary name of its own.
    #[cfg(all(unix, feature = "gzip"))]
    #[test]
    fn a_symlink_named_like_a_leftover_temporary_is_left_alone_and_blocks_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let target = outside.path().join("target");
        fs::write(&target, b"theirs\n").unwrap();
        fs::write(dir.path().join("app.log"), b"ours\n").unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join("app.log.gz.tmp")).unwrap();
        fs::write(dir.path().join("app.log.1"), b"").unwrap();
        let errors = housekeep(dir.path(), never(), true, None, index(1));
        assert_eq!(
            names(dir.path()),
            ["app.log.1", "app.log.gz", "app.log.gz.tmp"]
        );
        assert_eq!(gunzipped(&dir.path().join("app.log.gz")), b"ours\n");
        assert_eq!(fs::read(&target).unwrap(), b"theirs\n");
        assert_eq!(errors.len(), 1, "{errors:?}");
    }

    /// `Rolling::daily(dir, "app").filename_suffix("log")`'s names.
    fn daily() -> Naming {
        Naming {
            prefix: Some("app".into()),
            suffix: Some("log".into()),
            rotation: Rotation::Daily,
        }
    }

    fn day(d: u32) -> Key {
        Key {
            period: format!("2026-01-{d:02}"),
            index: 0,
        }
    }

    /// Writes `bytes` bytes to `name`, last modified `days` days ago.
    fn file(dir: &Path, name: &str, bytes: usize, days: u64) -> PathBuf {
        let path = dir.join(name);
        fs::write(&path, vec![b'x'; bytes]).unwrap();
        let when = SystemTime::now() - Duration::from_secs(days * 86_400);
        fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(when)
            .unwrap();
        path
    }

    fn settings(age: Option<u64>, total: Option<u64>) -> Housekeeping {
        Housekeeping {
            naming: daily(),
            compress: None,
            max_files: None,
            max_age: age.map(|d| Duration::from_secs(d * 86_400)),
            max_total: total,
            mode: Mode::NEW,
        }
    }

    /// Files last written more than `max_age` ago go; the current file
    /// stays however old it is.
    #[test]
    fn retention_by_age_removes_files_last_written_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        file(d, "app.2026-01-01.log", 10, 20);
        file(d, "app.2026-01-02.log.gz", 10, 15);
        file(d, "app.2026-01-03.log", 10, 13);
        file(d, "app.2026-01-04.log", 10, 30);
        let errors = run(d, settings(Some(14), None), day(4), SystemTime::now());
        assert_eq!(errors, Vec::<String>::new());
        assert_eq!(names(d), ["app.2026-01-03.log", "app.2026-01-04.log"]);
    }

    /// The files before the current one are cut, oldest first, to at most
    /// `max_total_size` bytes; the current file does not count.
    #[test]
    fn retention_by_total_size_removes_the_oldest_first() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for (i, name) in [
            "app.2026-01-01.log",
            "app.2026-01-02.log.gz",
            "app.2026-01-03.log",
            "app.2026-01-03.1.log",
        ]
        .into_iter()
        .enumerate()
        {
            file(d, name, 100, 4 - i as u64);
        }
        file(d, "app.2026-01-04.log", 1000, 0);
        let errors = run(d, settings(None, Some(250)), day(4), SystemTime::now());
        assert_eq!(errors, Vec::<String>::new());
        assert_eq!(
            names(d),
            [
                "app.2026-01-03.1.log",
                "app.2026-01-03.log",
                "app.2026-01-04.log"
            ]
        );
    }

    /// Age and size retention touch only the sink's regular files: a
    /// foreign file, a symbolic link named like one of the sink's files
    /// and what it points to all stay, however old or large.
    #[cfg(unix)]
    #[test]
    fn retention_by_age_and_size_leaves_foreign_files_and_links_alone() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let target = file(outside.path(), "target", 1000, 100);
        let d = dir.path();
        file(d, "app.2026-01-01.log", 100, 100);
        file(d, "app.2026-01-01.log.bak", 1000, 100);
        file(d, "notes.txt", 1000, 100);
        std::os::unix::fs::symlink(&target, d.join("app.2026-01-02.log")).unwrap();
        std::os::unix::fs::symlink("app.2026-01-03.log", d.join("app.log")).unwrap();
        file(d, "app.2026-01-03.log", 10, 0);
        let errors = run(d, settings(Some(1), Some(0)), day(3), SystemTime::now());
        assert_eq!(
            names(d),
            [
                "app.2026-01-01.log.bak",
                "app.2026-01-02.log",
                "app.2026-01-03.log",
                "app.log",
                "notes.txt"
            ]
        );
        assert_eq!(fs::read(&target).unwrap(), vec![b'x'; 1000]);
        assert_eq!(errors.len(), 1, "the link named like a file: {errors:?}");
    }

    /// zstd, like gzip: the archive holds the file exactly, keeps its
    /// permissions and time, and the plain file goes.
    #[cfg(all(unix, feature = "zstd"))]
    #[test]
    fn a_file_is_compressed_with_zstd_into_an_equal_archive() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let text: Vec<u8> = (0..20_000)
            .flat_map(|i| format!("2026-11-26T10:00:00Z INFO request {i} done\n").into_bytes())
            .collect();
        let old = d.join("app.log");
        fs::write(&old, &text).unwrap();
        fs::set_permissions(&old, fs::Permissions::from_mode(0o640)).unwrap();
        fs::write(d.join("app.log.1"), b"").unwrap();
        let mut settings = settings(None, None);
        settings.naming = never();
        settings.compress = Some(Compression::Zstd);
        let errors = run(d, settings, index(1), SystemTime::now());
        assert_eq!(errors, Vec::<String>::new());
        assert_eq!(names(d), ["app.log.1", "app.log.zst"]);
        let zst = d.join("app.log.zst");
        let meta = fs::metadata(&zst).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o640);
        assert!(meta.len() < text.len() as u64 / 10, "{} bytes", meta.len());
        let mut back = Vec::new();
        io::Read::read_to_end(
            &mut *decode(Compression::Zstd, fs::File::open(&zst).unwrap()).unwrap(),
            &mut back,
        )
        .unwrap();
        assert_eq!(back, text);
    }

    /// A `.zst` left beside its plain file (a cut-short run), or one that
    /// is not zstd at all, or asks for a 2 GiB window: the plain file goes
    /// only where the archive holds it exactly.
    #[cfg(feature = "zstd")]
    #[test]
    fn a_plain_file_is_removed_only_if_its_zst_holds_it() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let zst = |bytes: &[u8]| zstd::stream::encode_all(bytes, 3).unwrap();
        fs::write(d.join("app.log"), b"line 1\n").unwrap();
        fs::write(d.join("app.log.zst"), zst(b"line 1\n")).unwrap();
        fs::write(d.join("app.log.1"), b"records\n").unwrap();
        fs::write(d.join("app.log.1.zst"), zst(b"records\nand more\n")).unwrap();
        fs::write(d.join("app.log.2"), b"records\n").unwrap();
        // A frame header asking for a window of 2^31 bytes.
        fs::write(
            d.join("app.log.2.zst"),
            [0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xa8],
        )
        .unwrap();
        fs::write(d.join("app.log.3"), b"").unwrap();
        let mut settings = settings(None, None);
        settings.naming = never();
        settings.compress = Some(Compression::Zstd);
        let errors = run(d, settings, index(3), SystemTime::now());
        assert_eq!(
            names(d),
            [
                "app.log.1",
                "app.log.1.zst",
                "app.log.2",
                "app.log.2.zst",
                "app.log.3",
                "app.log.zst"
            ]
        );
        assert_eq!(errors.len(), 2, "{errors:?}");
    }

    /// Switching from gzip to zstd: the old `.gz` archives still count for
    /// retention and are removed oldest first.
    #[cfg(feature = "zstd")]
    #[test]
    fn gz_and_zst_archives_count_together_for_retention() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        file(d, "app.2026-01-01.log.gz", 10, 3);
        file(d, "app.2026-01-02.log.zst", 10, 2);
        file(d, "app.2026-01-03.log", 10, 1);
        file(d, "app.2026-01-04.log", 10, 0);
        let mut settings = settings(None, None);
        settings.max_files = Some(2);
        settings.compress = Some(Compression::Zstd);
        let errors = run(d, settings, day(4), SystemTime::now());
        assert_eq!(errors, Vec::<String>::new());
        assert_eq!(names(d), ["app.2026-01-03.log.zst", "app.2026-01-04.log"]);
    }
}
