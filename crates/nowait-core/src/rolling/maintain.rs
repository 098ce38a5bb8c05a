//! Housekeeping of a rolling sink, off the writer thread: gzip of rotated
//! files and retention (`max_log_files`, `max_age`, `max_total_size`).
//!
//! The writer thread sends one [`Job`] per rotation (and one at start) over
//! a channel and never waits for it; one thread per sink does the jobs in
//! order, so compression and deletion never race each other. Errors come
//! back over a second channel; the writer reports them in-band and counts
//! them in `SinkStats::rotation_errors`.
//!
//! Others may write the directory, and put anything under any name there,
//! at any time. So only a regular file whose name is exactly one this sink
//! gives is the sink's (step 1); every open is a no-follow open checked on
//! the opened file ([`nofollow`]); an archive is created exclusively with
//! the permissions of its file, and renamed into place without replacing
//! any name. Unlinking never follows a link, so what is removed is at most
//! a name someone put in the directory.
//!
//! Steps of a job, `current` being the file the writer now writes:
//!
//! 1. List the directory; keep the names this sink gives (see
//!    [`naming`](super::naming)) that are regular files (as listed, never
//!    following a link). Anything else under such a name (a symbolic
//!    link, a directory) is left alone and reported once while it stays.
//!    Remove `NAME.gz.tmp` leftovers of a compression that a previous
//!    process did not finish.
//! 2. With compression on, gzip every uncompressed file older than
//!    `current`: open it without following a link, refuse it unless it is
//!    a regular file with one name, write `NAME.gz.tmp` (created new, with
//!    the file's permission bits), `fsync` it, rename it to `NAME.gz`
//!    unless that name exists, then remove `NAME`. A failure removes the
//!    temporary file and keeps `NAME`: no data is ever deleted by a failed
//!    compression. `NAME` and `NAME.gz` both there (the removal was cut
//!    short): `NAME` is removed only if `NAME.gz` decompresses to exactly
//!    its bytes; otherwise both stay, reported once.
//! 3. Retention, oldest file first (by name: period, then index), over
//!    the files before `current` (compressed or not; `current` itself is
//!    never removed): remove a file while more than `max_log_files`
//!    remain (`current` included), or while the files before `current`
//!    take more than `max_total_size` bytes (as listed, never following
//!    a link), or if it was last modified more than `max_age` before the
//!    job's time (the sink's clock). A modification time in the future
//!    counts as now.

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crossbeam_channel::{Receiver, Sender};

use super::naming::{Key, Naming};
use super::Compression;
use crate::sys::nofollow;

/// Work for the housekeeping thread.
#[derive(Debug)]
pub(crate) struct Job {
    pub(crate) current: Key,
    /// The time on the sink's clock, for `max_age`.
    pub(crate) now: SystemTime,
}

/// What the housekeeping thread needs to know.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub(crate) dir: PathBuf,
    pub(crate) naming: Naming,
    pub(crate) compress: Option<Compression>,
    pub(crate) max_files: Option<usize>,
    pub(crate) max_age: Option<Duration>,
    pub(crate) max_total: Option<u64>,
}

impl Settings {
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
    /// Starts the thread. If it cannot be spawned, jobs run on the caller
    /// (the writer thread) and that is reported as the first error.
    pub(crate) fn start(settings: Settings) -> Housekeeper {
        let (jobs_tx, jobs_rx) = crossbeam_channel::unbounded::<Job>();
        let (err_tx, err_rx) = crossbeam_channel::unbounded();
        let mut keeper = Keeper::new(settings.clone(), err_tx.clone());
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
        match spawned {
            Ok(_) => Housekeeper {
                jobs: Some(jobs_tx),
                errors: err_rx,
                inline: None,
            },
            Err(e) => {
                let _ = err_tx.send(format!(
                    "cannot start the housekeeping thread ({e}); compression and retention run on the writer thread"
                ));
                Housekeeper {
                    jobs: None,
                    errors: err_rx,
                    inline: Some(Keeper::new(settings, err_tx)),
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

/// One file of the sink, compressed, plain, or (after a crash between the
/// rename and the removal) both; each a regular file.
#[derive(Debug, Default)]
struct Entry {
    plain: Option<PathBuf>,
    /// `NAME.gz`, `NAME.zst` (usually one; both if the setting changed).
    archives: Vec<(Compression, PathBuf)>,
    /// Bytes of `plain` and `archives`, as listed.
    bytes: u64,
    /// The latest modification time of `plain` and `archives`, as listed.
    modified: Option<SystemTime>,
    /// An archive name or its temporary is something else than a regular
    /// file: `NAME` cannot be compressed.
    blocked: bool,
}

/// What a name of this sink is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Plain,
    Archive(Compression),
    /// `NAME.gz.tmp`, `NAME.zst.tmp`: a compression under way.
    Tmp,
}

/// The key and kind of `name`, if it is one of the sink's names.
fn classify(naming: &Naming, name: &str) -> Option<(Key, Kind)> {
    if let Some(stem) = name.strip_suffix(".tmp") {
        return Compression::ALL.iter().find_map(|c| {
            match naming.parse(stem.strip_suffix(c.extension())?)? {
                (key, false) => Some((key, Kind::Tmp)),
                (_, true) => None,
            }
        });
    }
    let (key, compressed) = naming.parse(name)?;
    if !compressed {
        return Some((key, Kind::Plain));
    }
    let how = Compression::ALL
        .into_iter()
        .find(|c| name.ends_with(c.extension()))?;
    Some((key, Kind::Archive(how)))
}

/// The housekeeping thread's state: where to report, and what was
/// reported already.
#[derive(Debug)]
struct Keeper {
    settings: Settings,
    errors: Sender<String>,
    /// Conditions reported that last (a name left alone, a `.gz` that does
    /// not hold its file), each reported once while it lasts.
    noticed: HashSet<String>,
}

impl Keeper {
    fn new(settings: Settings, errors: Sender<String>) -> Keeper {
        Keeper {
            settings,
            errors,
            noticed: HashSet::new(),
        }
    }

    /// One job: the steps of the module's doc.
    fn run(&mut self, job: &Job) {
        let s = &self.settings;
        let report = |what: String| {
            let _ = self.errors.send(what);
        };
        let mut lasting = Lasting {
            before: std::mem::take(&mut self.noticed),
            now: HashSet::new(),
        };
        let listing = match fs::read_dir(&s.dir) {
            Ok(l) => l,
            Err(e) => {
                report(format!("cannot list {}: {e}", s.dir.display()));
                self.noticed = lasting.before;
                return;
            }
        };
        let mut files: BTreeMap<Key, Entry> = BTreeMap::new();
        for item in listing.flatten() {
            let name = item.file_name();
            let Some(name) = name.to_str() else { continue };
            let Some((key, kind)) = classify(&s.naming, name) else {
                continue;
            };
            let path = item.path();
            // The type as listed: a link is a link, never what it names.
            let file_type = match item.file_type() {
                Ok(t) => t,
                Err(e) => {
                    report(format!("cannot inspect {}: {e}", path.display()));
                    continue;
                }
            };
            if !file_type.is_file() {
                if kind != Kind::Plain {
                    files.entry(key).or_default().blocked = true;
                }
                let what = if file_type.is_symlink() {
                    "a symbolic link"
                } else if file_type.is_dir() {
                    "a directory"
                } else {
                    "not a regular file"
                };
                if !lasting.known(format!("alone {name}")) {
                    report(format!(
                        "left {} alone: named like this sink's files, but {what}",
                        path.display()
                    ));
                }
                continue;
            }
            if kind == Kind::Tmp {
                let _ = fs::remove_file(&path);
                continue;
            }
            let entry = files.entry(key).or_default();
            // As listed (`lstat`): a regular file's own size and time.
            if let Ok(meta) = item.metadata() {
                entry.bytes = entry.bytes.saturating_add(meta.len());
                entry.modified = entry.modified.max(meta.modified().ok());
            }
            match kind {
                Kind::Archive(how) => entry.archives.push((how, path)),
                _ => entry.plain = Some(path),
            }
        }
        if let Some(how) = s.compress {
            for (key, entry) in files.iter_mut() {
                if *key >= job.current {
                    break;
                }
                let Some(plain) = entry.plain.clone() else {
                    continue;
                };
                if let Some((kind, gz)) = entry.archives.first() {
                    // Compressed before a crash, not yet removed, if the
                    // archive holds exactly the plain file (it was renamed
                    // into place after its fsync); else not ours to trust.
                    let id = format!("differs {}", gz.display());
                    if lasting.before.contains(&id) {
                        lasting.now.insert(id);
                        continue;
                    }
                    match holds(*kind, gz, &plain) {
                        Ok(true) => match fs::remove_file(&plain) {
                            Ok(()) => entry.plain = None,
                            Err(e) => report(format!("cannot remove {}: {e}", plain.display())),
                        },
                        Ok(false) => {
                            lasting.now.insert(id);
                            report(format!(
                                "{} is not the compression of {}: both kept",
                                gz.display(),
                                plain.display()
                            ));
                        }
                        Err(e) => report(format!(
                            "cannot compare {} with {}: {e} (both kept)",
                            plain.display(),
                            gz.display()
                        )),
                    }
                    continue;
                }
                if entry.blocked {
                    // Reported above as a name left alone.
                    continue;
                }
                match compress(how, &plain) {
                    Ok(archive) => {
                        if let Ok(meta) = fs::symlink_metadata(&archive) {
                            entry.bytes = meta.len();
                        }
                        entry.archives.push((how, archive));
                        entry.plain = None;
                    }
                    Err(e) => report(format!(
                        "cannot compress {}: {e} (kept as is)",
                        plain.display()
                    )),
                }
            }
        }
        files.retain(|_, e| e.plain.is_some() || !e.archives.is_empty());
        let older: Vec<(&Key, &Entry)> = files.range(..&job.current).collect();
        // Files that remain, counting `current` (and anything newer).
        let mut count = files.len();
        let mut bytes = older
            .iter()
            .fold(0u64, |n, (_, e)| n.saturating_add(e.bytes));
        for (_, entry) in older {
            let too_many = s.max_files.is_some_and(|max| count > max.max(1));
            let too_big = s.max_total.is_some_and(|max| bytes > max);
            let too_old = s.max_age.is_some_and(|max| {
                entry
                    .modified
                    .is_some_and(|m| job.now.duration_since(m).unwrap_or(Duration::ZERO) > max)
            });
            if !(too_many || too_big || too_old) {
                continue;
            }
            let why = if too_many {
                "max_log_files"
            } else if too_big {
                "max_total_size"
            } else {
                "max_age"
            };
            let mut removed = true;
            let archives = entry.archives.iter().map(|(_, p)| p);
            for path in entry.plain.iter().chain(archives) {
                if let Err(e) = fs::remove_file(path) {
                    if e.kind() != io::ErrorKind::NotFound {
                        removed = false;
                        report(format!("cannot remove {} ({why}): {e}", path.display()));
                    }
                }
            }
            if removed {
                count -= 1;
                bytes = bytes.saturating_sub(entry.bytes);
            }
        }
        self.noticed = lasting.now;
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

/// `path` with `ext` appended to its name.
fn with(path: &Path, ext: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(ext);
    PathBuf::from(name)
}

/// Compresses `path` into `path.gz` (or `.zst`) through a temporary
/// name; removes `path` only once the archive is complete and in place.
fn compress(how: Compression, path: &Path) -> io::Result<PathBuf> {
    let archive = with(path, how.extension());
    let tmp = with(&archive, ".tmp");
    let mut input = nofollow::open_regular(path)?;
    let meta = input.metadata()?;
    let out = nofollow::create_new(&tmp, nofollow::Mode::of(&meta))?;
    // From here on `tmp` is ours to remove. The archive keeps the time of
    // its last record (what `max_age` and `ls -t` go by).
    let result = encode(how, &mut input, &out)
        .and_then(|()| out.sync_all())
        .and_then(|()| match meta.modified() {
            Ok(t) => out.set_modified(t),
            Err(_) => Ok(()),
        })
        .and_then(|()| nofollow::rename_new(&tmp, &archive));
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    drop(input);
    // If this fails, the next job finds both and removes the plain file.
    fs::remove_file(path)?;
    Ok(archive)
}

/// Whether the archive `archive` decompresses to exactly the bytes of
/// `plain`. Reads at most as much of `archive` as `plain` holds, plus one
/// byte, whatever it claims; an archive that cannot be opened or decoded
/// does not hold it.
fn holds(how: Compression, archive: &Path, plain: &Path) -> io::Result<bool> {
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
    let mut plain = nofollow::open_regular(plain)?;
    let Ok(mut decoded) = nofollow::open_regular(archive).and_then(|f| decode(how, f)) else {
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

#[cfg(all(test, not(miri)))]
mod tests {
    use super::*;
    use crate::rolling::dir_names as names;
    use crate::rolling::Rotation;

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
        let settings = Settings {
            dir: dir.to_owned(),
            naming,
            compress: compress.then_some(Compression::Gzip),
            max_files,
            max_age: None,
            max_total: None,
        };
        run(settings, current, SystemTime::now())
    }

    /// One job with these settings at `now`; the errors it reported.
    fn run(settings: Settings, current: Key, now: SystemTime) -> Vec<String> {
        let (tx, rx) = crossbeam_channel::unbounded();
        Keeper::new(settings, tx).run(&Job { current, now });
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
        let err = compress(Compression::Gzip, &old).unwrap_err();
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
        let err = compress(Compression::Gzip, &old).unwrap_err();
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
        let settings = Settings {
            dir: dir.path().to_owned(),
            naming: never(),
            compress: cfg!(feature = "gzip").then_some(Compression::Gzip),
            max_files: Some(1),
            max_age: None,
            max_total: None,
        };
        let mut keeper = Keeper::new(settings, tx);
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
    /// leftover of ours: it stays, and the compression it would take the
    /// place of waits.
    #[cfg(all(unix, feature = "gzip"))]
    #[test]
    fn a_symlink_named_like_a_leftover_temporary_is_left_alone() {
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
            ["app.log", "app.log.1", "app.log.gz.tmp"]
        );
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

    fn settings(dir: &Path, age: Option<u64>, total: Option<u64>) -> Settings {
        Settings {
            dir: dir.to_owned(),
            naming: daily(),
            compress: None,
            max_files: None,
            max_age: age.map(|d| Duration::from_secs(d * 86_400)),
            max_total: total,
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
        let errors = run(settings(d, Some(14), None), day(4), SystemTime::now());
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
        let errors = run(settings(d, None, Some(250)), day(4), SystemTime::now());
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
        let errors = run(settings(d, Some(1), Some(0)), day(3), SystemTime::now());
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
        let mut settings = settings(d, None, None);
        settings.naming = never();
        settings.compress = Some(Compression::Zstd);
        let errors = run(settings, index(1), SystemTime::now());
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
        let mut settings = settings(d, None, None);
        settings.naming = never();
        settings.compress = Some(Compression::Zstd);
        let errors = run(settings, index(3), SystemTime::now());
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
        let mut settings = settings(d, None, None);
        settings.max_files = Some(2);
        settings.compress = Some(Compression::Zstd);
        let errors = run(settings, day(4), SystemTime::now());
        assert_eq!(errors, Vec::<String>::new());
        assert_eq!(names(d), ["app.2026-01-03.log.zst", "app.2026-01-04.log"]);
    }
}
