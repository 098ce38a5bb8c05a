//! The file a rolling sink writes now, and rotating it, on the writer
//! thread.
//!
//! The writer asks [`RollingFile::due`] before each write, with the length
//! of the next whole record; a rotation happens only between records (never
//! after a short write that cut one), so no record is split across two
//! files. Rotation opens the next file first and switches only if that
//! worked: on failure the old file stays current, the error is counted and
//! reported in-band, and the next try is a second later.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::maintain::{Housekeeper, Job, Settings};
use super::naming::{next_boundary, period, Key, Naming};
use super::Rolling;
use crate::sys::{file_id, path_id, FileId};

/// After a failed rotation, the old file takes the records this long
/// before the next try.
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// Names of the same period tried at most this many times when they exist
/// already (left by an earlier run) before the rotation counts as failed.
const MAX_TAKEN: u32 = 1000;

/// An episode of failing rotations.
#[derive(Debug)]
struct Failing {
    since: SystemTime,
    attempts: u64,
    last: String,
    retry_at: Instant,
}

/// The open file of a rolling sink.
#[derive(Debug)]
pub(crate) struct RollingFile {
    dir: PathBuf,
    naming: Naming,
    max_size: Option<u64>,
    local: bool,
    file: File,
    path: PathBuf,
    /// (device, inode) of `file`, to notice a rename or deletion.
    identity: FileId,
    /// Bytes in `file` (its length when opened plus what was written).
    size: u64,
    key: Key,
    /// Unix seconds (UTC) at which the period of `key` ends.
    next_boundary: Option<i64>,
    failing: Option<Failing>,
    housekeeper: Option<Housekeeper>,
    /// Rotations done.
    pub(crate) rotations: u64,
    /// Failed rotations, compressions and removals.
    pub(crate) rotation_errors: u64,
}

impl RollingFile {
    /// The file written now, its path and identity.
    pub(crate) fn current(&self) -> (&File, &std::path::Path, crate::sys::FileId) {
        (&self.file, &self.path, self.identity)
    }
}

fn unix_secs(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => d.as_secs() as i64,
        Err(e) => -(e.duration().as_secs() as i64) - 1,
    }
}

/// Seconds east of UTC of the local time at `secs` (zero for UTC).
fn utc_offset(local: bool, secs: i64) -> i64 {
    #[cfg(feature = "local-time")]
    if local {
        use chrono::{Offset, TimeZone};
        return chrono::DateTime::from_timestamp(secs, 0)
            .map(|t| {
                i64::from(
                    chrono::Local
                        .offset_from_utc_datetime(&t.naive_utc())
                        .fix()
                        .local_minus_utc(),
                )
            })
            .unwrap_or(0);
    }
    let _ = (local, secs);
    0
}

fn open_append(path: &Path, create_new: bool) -> io::Result<File> {
    let file = crate::sys::open_append(path, create_new)?;
    if !file.metadata()?.file_type().is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{} is not a regular file", path.display()),
        ));
    }
    Ok(file)
}

impl RollingFile {
    /// Opens the file for the current period: the newest file of this
    /// period left by an earlier run (appended to), or a new one. Creates
    /// the directory.
    pub(crate) fn open(cfg: &Rolling) -> io::Result<RollingFile> {
        fs::create_dir_all(&cfg.dir)?;
        let naming = cfg.naming();
        let now = unix_secs(SystemTime::now());
        let offset = utc_offset(cfg.local, now);
        let current = period(cfg.rotation, now + offset);
        // The newest file of this period, if an earlier run left one.
        let mut newest: Option<(Key, bool)> = None;
        for item in fs::read_dir(&cfg.dir)?.flatten() {
            let name = item.file_name();
            let Some(parsed) = name.to_str().and_then(|n| naming.parse(n)) else {
                continue;
            };
            if parsed.0.period == current && newest.as_ref().map_or(true, |n| parsed.0 > n.0) {
                newest = Some(parsed);
            }
        }
        let key = match newest {
            Some((key, false)) => key,
            Some((key, true)) => Key {
                index: key.index + 1,
                ..key
            },
            None => Key {
                period: current,
                index: 0,
            },
        };
        let path = cfg.dir.join(naming.name(&key));
        let file = open_append(&path, false)?;
        let meta = file.metadata()?;
        let identity = file_id(&file)?;
        let housekeeper = (cfg.compress || cfg.max_files.is_some()).then(|| {
            Housekeeper::start(Settings {
                dir: cfg.dir.clone(),
                naming: naming.clone(),
                compress: cfg.compress,
                max_files: cfg.max_files,
            })
        });
        let rf = RollingFile {
            dir: cfg.dir.clone(),
            max_size: cfg.max_size,
            local: cfg.local,
            file,
            path,
            identity,
            size: meta.len(),
            next_boundary: next_boundary(cfg.rotation, now + offset).map(|b| b - offset),
            key,
            naming,
            failing: None,
            housekeeper,
            rotations: 0,
            rotation_errors: 0,
        };
        rf.housekeep();
        Ok(rf)
    }

    /// Hands the files before the current one to the housekeeping thread
    /// (compression, retention). After a rotation, the caller calls it
    /// once the crash-durable snapshot names the new file (see
    /// `DurableWriter::note_new_file`): until then recovery may need the
    /// old file as it is.
    pub(crate) fn housekeep(&self) {
        if let Some(h) = &self.housekeeper {
            h.send(Job {
                current: self.key.clone(),
            });
        }
    }

    /// Whether to rotate before writing a record of `next` bytes: its
    /// period is over, or it would take the file past the size limit (a
    /// file always takes at least one record). After a failed rotation,
    /// not until the retry is due.
    pub(crate) fn due(&self, wall: SystemTime, now: Instant, next: u64) -> bool {
        if self.failing.as_ref().is_some_and(|f| now < f.retry_at) {
            return false;
        }
        let by_time = self.next_boundary.is_some_and(|b| unix_secs(wall) >= b);
        let by_size = self
            .max_size
            .is_some_and(|max| self.size > 0 && self.size.saturating_add(next) > max);
        by_time || by_size
    }

    /// Bytes the file takes before the size limit, or `None` without a
    /// limit or while rotations fail (the old file takes everything).
    pub(crate) fn room(&self) -> Option<u64> {
        if self.failing.is_some() {
            return None;
        }
        self.max_size.map(|m| m.saturating_sub(self.size))
    }

    /// The key the next file gets at `wall`.
    fn next_key(&self, secs: i64, offset: i64) -> Key {
        let p = period(self.naming.rotation, secs + offset);
        if p != self.key.period {
            Key {
                period: p,
                index: 0,
            }
        } else {
            Key {
                period: p,
                index: self.key.index + 1,
            }
        }
    }

    /// Rotates to the next file (then call [`RollingFile::housekeep`]).
    /// Returns a notice for the sink: the first failure of an episode, or
    /// the recovery after failures.
    pub(crate) fn rotate(&mut self, wall: SystemTime, now: Instant) -> Option<String> {
        let secs = unix_secs(wall);
        let offset = utc_offset(self.local, secs);
        let mut key = self.next_key(secs, offset);
        let opened = loop {
            let path = self.dir.join(self.naming.name(&key));
            match open_append(&path, true) {
                Ok(file) => break Ok((file, path)),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists && key.index < MAX_TAKEN => {
                    // Left by an earlier run (or its .gz is): the next index.
                    key.index += 1;
                }
                Err(e) => break Err((e, path)),
            }
        };
        match opened {
            Ok((file, path)) => {
                let identity = file_id(&file).unwrap_or_default();
                let old = std::mem::replace(&mut self.path, path);
                self.file = file;
                self.identity = identity;
                self.size = 0;
                self.key = key;
                self.next_boundary =
                    next_boundary(self.naming.rotation, secs + offset).map(|b| b - offset);
                self.rotations += 1;
                let failing = self.failing.take()?;
                Some(format!(
                    "rolled over to {} after {} failed rotation{} since {} (last error: {}); the records in between are at the end of {}",
                    self.path.display(),
                    failing.attempts,
                    if failing.attempts == 1 { "" } else { "s" },
                    crate::timefmt::rfc3339(failing.since),
                    failing.last,
                    old.display(),
                ))
            }
            Err((e, path)) => {
                self.rotation_errors += 1;
                let text = format!("cannot create {}: {e}", path.display());
                let first = self.failing.is_none();
                let f = self.failing.get_or_insert(Failing {
                    since: wall,
                    attempts: 0,
                    last: String::new(),
                    retry_at: now,
                });
                f.attempts += 1;
                f.last.clone_from(&text);
                f.retry_at = now + RETRY_AFTER;
                first.then(|| {
                    format!(
                        "rotation failed ({text}); still writing to {}, retrying every {} s",
                        self.path.display(),
                        RETRY_AFTER.as_secs()
                    )
                })
            }
        }
    }

    /// Errors from the housekeeping thread since the last call (each
    /// counted in `rotation_errors`).
    pub(crate) fn housekeeping_errors(&mut self) -> Vec<String> {
        let errors = self
            .housekeeper
            .as_ref()
            .map(Housekeeper::errors)
            .unwrap_or_default();
        self.rotation_errors += errors.len() as u64;
        errors
    }

    /// If the current file was renamed or deleted (or `force`), opens its
    /// name again. A failure keeps the old file, counts a rotation error
    /// and returns a notice.
    pub(crate) fn reopen_if_moved(&mut self, force: bool) -> Option<String> {
        let moved = match path_id(&self.path) {
            Ok(id) => id != self.identity,
            Err(_) => true,
        };
        if !moved && !force {
            return None;
        }
        match open_append(&self.path, false).and_then(|f| Ok((f.metadata()?, file_id(&f)?, f))) {
            Ok((meta, id, file)) => {
                self.identity = id;
                self.size = meta.len();
                self.file = file;
                None
            }
            Err(e) => {
                self.rotation_errors += 1;
                Some(format!(
                    "cannot reopen {}: {e}; still writing to the file it named before",
                    self.path.display()
                ))
            }
        }
    }

    /// `fdatasync` of the current file.
    pub(crate) fn sync(&mut self) -> io::Result<()> {
        self.file.sync_data()
    }
}

impl Write for RollingFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.size += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(all(test, not(miri)))]
mod tests {
    use super::*;
    use crate::rolling::Rotation;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn time_rotation_names_the_next_period_and_size_adds_an_index() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = Rolling::minutely(dir.path(), "app").filename_suffix("log");
        let mut f = RollingFile::open(&cfg).unwrap();
        let now = Instant::now();
        let this = f.key.period.clone();
        assert_eq!(names(dir.path()), [format!("app.{this}.log")]);
        // Within the minute: not due (no size limit).
        let boundary = f.next_boundary.unwrap();
        let before = UNIX_EPOCH + Duration::from_secs(boundary as u64 - 1);
        let after = UNIX_EPOCH + Duration::from_secs(boundary as u64);
        assert!(!f.due(before, now, 100));
        assert!(f.due(after, now, 100));
        assert_eq!(f.rotate(after, now), None);
        let next = period(Rotation::Minutely, boundary);
        assert_eq!(
            names(dir.path()),
            [format!("app.{this}.log"), format!("app.{next}.log")]
        );
        assert!(!f.due(after, now, 100));
        assert_eq!(f.next_boundary, Some(boundary + 60));
        f.write_all(b"x\n").unwrap();
        // A size limit within the same minute: the index.
        f.max_size = Some(3);
        assert!(!f.due(after, now, 1));
        assert!(f.due(after, now, 2));
        assert_eq!(f.rotate(after, now), None);
        assert!(names(dir.path()).contains(&format!("app.{next}.1.log")));
        assert_eq!(f.rotations, 2);
    }

    #[test]
    fn failed_rotation_keeps_the_old_file_and_retries_a_second_later() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = Rolling::never(dir.path(), "app.log").max_size(4);
        let mut f = RollingFile::open(&cfg).unwrap();
        f.write_all(b"abc\n").unwrap();
        // Take the next name's place with a directory chain that cannot be
        // opened as a file: a file in place of the directory itself.
        let moved = dir.path().with_extension("moved");
        fs::rename(dir.path(), &moved).unwrap();
        fs::write(dir.path(), b"").unwrap();
        let now = Instant::now();
        let wall = SystemTime::now();
        assert!(f.due(wall, now, 4));
        let notice = f.rotate(wall, now).unwrap();
        assert!(
            notice.contains("rotation failed") && notice.contains("still writing to"),
            "{notice}"
        );
        assert_eq!((f.rotations, f.rotation_errors), (0, 1));
        assert_eq!(f.room(), None, "the old file takes everything meanwhile");
        assert!(!f.due(wall, now + Duration::from_millis(900), 4));
        // Still failing a second later: counted, no second notice.
        assert!(f.due(wall, now + RETRY_AFTER, 4));
        assert_eq!(f.rotate(wall, now + RETRY_AFTER), None);
        assert_eq!(f.rotation_errors, 2);
        // The directory is back: the rotation goes through and says so.
        fs::remove_file(dir.path()).unwrap();
        fs::rename(&moved, dir.path()).unwrap();
        let later = now + RETRY_AFTER * 2;
        assert!(f.due(wall, later, 4));
        let notice = f.rotate(wall, later).unwrap();
        assert!(notice.contains("after 2 failed rotations"), "{notice}");
        assert_eq!(f.rotations, 1);
        assert_eq!(fs::read(dir.path().join("app.log")).unwrap(), b"abc\n");
    }
}
