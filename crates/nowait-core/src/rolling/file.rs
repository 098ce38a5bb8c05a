//! The file a rolling sink writes now, and rotating it, on the writer
//! thread.
//!
//! The writer asks [`RollingFile::due`] before each write, with the length
//! of the next whole record; a rotation happens only between records (never
//! after a short write that cut one), so no record is split across two
//! files. Rotation opens the next file first and switches only if that
//! worked: on failure the old file stays current, the error is counted and
//! reported in-band, and the next try is a second later.
//!
//! Others may write the directory: it is opened once and every step goes
//! through that handle ([`Dir`]); files are opened without following a
//! link and appended to only if they are regular files of this process's
//! user with one name ([`nofollow`]); a new file is created exclusively,
//! never under a name taken by anything (nor whose archive is), with the
//! configured permission bits, no wider than the sink's own file it
//! follows.

use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::maintain::{Housekeeper, Housekeeping, Job};
use super::naming::{next_boundary, period, Key, Naming};
use super::{Compression, Rolling, Rotation};
use crate::sys::nofollow::{self, Dir, Kind, Mode};
use crate::sys::{file_id, FileId};

/// After a failed rotation, the old file takes the records this long
/// before the next try.
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// Names tried at most this many times when they exist already (left by
/// an earlier run, or put there by someone else) before the rotation
/// counts as failed.
const MAX_TAKEN: u32 = 1000;

/// An episode of failing rotations.
#[derive(Debug)]
struct Failing {
    since: SystemTime,
    attempts: u64,
    last: String,
    retry_at: Instant,
}

/// The symbolic link to the current file, and what was reported about it.
#[derive(Debug)]
struct Link {
    /// Its name in the directory.
    name: String,
    /// The name a new link is made under before it replaces the old.
    tmp: String,
    /// Something else than a link is at `name`, reported while it stays.
    blocked: bool,
    /// The system does not let this process make links (reported once):
    /// no more tries.
    unsupported: bool,
}

/// The open file of a rolling sink.
#[derive(Debug)]
pub(crate) struct RollingFile {
    /// The wall clock files are named and rolled by.
    clock: fn() -> SystemTime,
    /// The directory, opened once: every step goes through it.
    dir: Dir,
    naming: Naming,
    /// The permission bits new files get at most ([`Rolling::mode`]).
    mode: Mode,
    max_size: Option<u64>,
    /// The clock periods are cut on.
    cut: Cut,
    file: File,
    /// The directory's path joined with the file's name, for messages and
    /// for the crash-durable snapshot (never opened by).
    path: PathBuf,
    /// The file's name in `dir`.
    name: String,
    /// (device, inode) of `file`, to notice a rename or deletion.
    identity: FileId,
    /// Bytes in `file` (its length when opened plus what was written).
    size: u64,
    key: Key,
    /// Unix seconds (UTC) at which the period of `key` ends.
    next_boundary: Option<i64>,
    failing: Option<Failing>,
    /// The symbolic link to the current file ([`Rolling::symlink`]).
    link: Option<Link>,
    housekeeper: Option<Housekeeper>,
    /// Notices from the writer thread's side, reported with the
    /// housekeeping's errors (and counted as they are).
    notices: Vec<String>,
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
///
/// The offset comes from `chrono::Local`, which reads the `TZ` variable
/// and the system's time zone files: input nowait did not write. An
/// offset of a day or more (no zone has one) counts as zero.
fn utc_offset(local: bool, secs: i64) -> i64 {
    #[cfg(feature = "local-time")]
    if local {
        use chrono::{Offset, TimeZone};
        let offset = chrono::DateTime::from_timestamp(secs, 0).map_or(0, |t| {
            i64::from(
                chrono::Local
                    .offset_from_utc_datetime(&t.naive_utc())
                    .fix()
                    .local_minus_utc(),
            )
        });
        return if offset.abs() < 86_400 { offset } else { 0 };
    }
    let _ = (local, secs);
    0
}

/// The clock periods are cut on: local time (or UTC) less the start of
/// the day ([`Rolling::rotate_at`]).
#[derive(Debug, Clone, Copy)]
struct Cut {
    rotation: Rotation,
    local: bool,
    start_of_day: i64,
}

impl Cut {
    /// Seconds to add to Unix seconds `secs` for the clock periods are cut
    /// on.
    fn shift(self, secs: i64) -> i64 {
        utc_offset(self.local, secs) - self.start_of_day
    }

    /// The period text at `secs`.
    fn period(self, secs: i64) -> String {
        period(self.rotation, secs + self.shift(secs))
    }

    /// When the period holding `secs` ends (Unix seconds), or `None` for
    /// [`Rotation::Never`]; always after `secs`.
    ///
    /// The end is a time of day on the local clock: `b`, the next period
    /// start under the offset at `secs`. If the offset changes before
    /// `b` (daylight saving), `b` comes an hour (or half an hour) sooner
    /// or later in UTC: it is reached at `b - new offset` if that instant
    /// already runs on the new offset and is after `secs` (spring: the
    /// clock jumps forward over or onto `b`); otherwise the first guess,
    /// `b - old offset`, is kept, and when it comes under a period text
    /// that has not changed (autumn: the clock went back), `due` asks
    /// again from there. So a period never ends late and rotation never
    /// stalls, and a period whose text repeats (the autumn hour) stays in
    /// its file.
    fn end(self, secs: i64) -> Option<i64> {
        let shift = self.shift(secs);
        let b = next_boundary(self.rotation, secs + shift)?;
        let first = b - shift;
        let later = self.shift(first);
        if later == shift {
            return Some(first);
        }
        let sooner = b - later;
        Some(
            if sooner > secs && sooner < first && sooner + self.shift(sooner) >= b {
                sooner
            } else {
                first
            },
        )
    }
}

/// Creates the first free name from `key` on (a name is free if neither
/// it nor an archive of it, `.gz` or `.zst`, exists in any form) with
/// `mode`; the error and the name it is about otherwise. Indices are
/// checked: past `u32::MAX` there is no free name in the period.
fn create_from(
    dir: &Dir,
    naming: &Naming,
    mut key: Key,
    mode: Mode,
) -> Result<(File, String, Key), (io::Error, String)> {
    let mut tries = 0;
    loop {
        let name = naming.name(&key);
        let archived = Compression::ALL.iter().try_fold(false, |found, c| {
            match dir.stat(&format!("{name}{}", c.extension())) {
                Ok(_) => Ok(true),
                Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(found),
                Err(e) => Err(e),
            }
        });
        let created = match archived {
            Ok(true) => Err(io::ErrorKind::AlreadyExists.into()),
            Ok(false) => dir.open_append(&name, true, mode),
            Err(e) => Err(e),
        };
        match created {
            Ok(file) => return Ok((file, name, key)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && tries < MAX_TAKEN => {
                // Left by an earlier run (or its archive is): the next index.
                key = next_index(key).map_err(|e| (e, name))?;
                tries += 1;
            }
            Err(e) => return Err((e, name)),
        }
    }
}

/// The key after `key` in its period, or an error past `u32::MAX` (a name
/// planted with the last index leaves none).
fn next_index(key: Key) -> io::Result<Key> {
    match key.index.checked_add(1) {
        Some(index) => Ok(Key { index, ..key }),
        None => Err(io::Error::other(format!(
            "no index left after {} in the period {:?}",
            key.index, key.period
        ))),
    }
}

impl RollingFile {
    /// Opens the file for the current period: the newest of the sink's own
    /// files of this period left by an earlier run (appended to), or a new
    /// one. Creates the directory and opens it for good.
    pub(crate) fn open(cfg: &Rolling) -> io::Result<RollingFile> {
        let dir = Dir::open(&cfg.dir)?;
        let naming = cfg.naming();
        let now = unix_secs((cfg.clock)());
        let cut = Cut {
            rotation: cfg.rotation,
            local: cfg.local,
            start_of_day: cfg.start_of_day(),
        };
        let current = cut.period(now);
        // The newest of the sink's own files of this period, if an earlier
        // run left one, and the newest not after it, whose permissions a
        // new file takes at most. Names of others, links and names dated
        // after the current period count for neither.
        let mut newest: Option<(Key, bool)> = None;
        let mut newest_any: Option<(Key, Mode)> = None;
        let mut names = Vec::new();
        dir.each_name(|name| {
            if let Some(parsed) = naming.parse(name) {
                if parsed.0.period <= current {
                    names.push((name.to_owned(), parsed));
                }
            }
        })?;
        for (name, parsed) in names {
            let Ok(stat) = dir.stat(&name) else { continue };
            if !stat.is_ours() {
                continue;
            }
            if newest_any.as_ref().map_or(true, |n| parsed.0 > n.0) {
                newest_any = Some((parsed.0.clone(), Mode::of_stat(&stat)));
            }
            if parsed.0.period == current && newest.as_ref().map_or(true, |n| parsed.0 > n.0) {
                newest = Some(parsed);
            }
        }
        let configured = Mode::bits(cfg.mode);
        let mode = newest_any.map_or(configured, |(_, mode)| configured.and(mode));
        let fresh = cfg.new_file_on_start;
        let key = match newest {
            Some((key, false)) if !fresh => key,
            Some((key, _)) => next_index(key)?,
            None => Key {
                period: current,
                index: 0,
            },
        };
        let name = naming.name(&key);
        let mut notices = Vec::new();
        let opened = if fresh {
            // A new file: the first free name from the key on.
            create_from(&dir, &naming, key.clone(), mode).map(|(file, _, key)| (file, key))
        } else {
            dir.open_append(&name, false, mode)
                .map(|file| (file, key.clone()))
                .map_err(|e| (e, name.clone()))
        };
        let (file, name, key) = match opened {
            Ok((file, key)) => (file, naming.name(&key), key),
            Err((e, name)) if fresh => {
                return Err(io::Error::new(
                    e.kind(),
                    format!(
                        "cannot start a new file {}: {e}",
                        dir.path().join(name).display()
                    ),
                ))
            }
            Err((e, _)) => {
                // Not ours to append to (or not openable): the next name.
                let (file, new, key) = next_index(key)
                    .and_then(|next| create_from(&dir, &naming, next, mode).map_err(|(e, _)| e))?;
                notices.push(format!(
                    "not appending to {}: {e}; writing {} instead",
                    dir.path().join(&name).display(),
                    dir.path().join(&new).display()
                ));
                (file, new, key)
            }
        };
        let meta = file.metadata()?;
        let identity = file_id(&file)?;
        let settings = Housekeeping {
            naming: naming.clone(),
            compress: cfg.compress,
            max_files: cfg.max_files,
            max_age: cfg.max_age,
            max_total: cfg.max_total,
            mode: configured,
        };
        let housekeeper = if settings.needed() {
            Some(Housekeeper::start(dir.try_clone()?, settings))
        } else {
            None
        };
        let mut rf = RollingFile {
            clock: cfg.clock,
            path: dir.path().join(&name),
            dir,
            mode: configured,
            max_size: cfg.max_size,
            cut,
            file,
            name,
            identity,
            size: meta.len(),
            next_boundary: cut.end(now),
            key,
            naming,
            failing: None,
            link: cfg.link.as_ref().map(|name| Link {
                name: name.clone(),
                tmp: super::link_tmp(name),
                blocked: false,
                unsupported: false,
            }),
            housekeeper,
            notices,
            rotations: 0,
            rotation_errors: 0,
        };
        rf.update_link();
        rf.housekeep();
        Ok(rf)
    }

    /// Hands the files before the current one to the housekeeping thread
    /// (compression, retention). After a rotation, the caller calls it
    /// once the crash-durable snapshot names the new file (see
    /// `DurableWriter::note_new_file`): until then recovery may need the
    /// old file as it is.
    pub(crate) fn housekeep(&mut self) {
        if let Some(h) = &mut self.housekeeper {
            h.send(Job {
                current: self.key.clone(),
                now: (self.clock)(),
            });
        }
    }

    /// The time on this sink's wall clock ([`Rolling::clock`]).
    pub(crate) fn wall(&self) -> SystemTime {
        (self.clock)()
    }

    /// Whether to rotate before writing a record of `next` bytes: its
    /// period is over, or it would take the file past the size limit (a
    /// file always takes at least one record). After a failed rotation,
    /// not until the retry is due. A period end that comes with the same
    /// period text (the local clock went back) is no rotation: the end is
    /// asked again from there ([`Cut::end`]).
    pub(crate) fn due(&mut self, wall: SystemTime, now: Instant, next: u64) -> bool {
        if self.failing.as_ref().is_some_and(|f| now < f.retry_at) {
            return false;
        }
        let secs = unix_secs(wall);
        let mut by_time = self.next_boundary.is_some_and(|b| secs >= b);
        if by_time && self.cut.period(secs) == self.key.period {
            self.next_boundary = self.cut.end(secs);
            by_time = false;
        }
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

    /// The key the next file gets at `secs` (an error if the period has
    /// no index left).
    fn next_key(&self, secs: i64) -> io::Result<Key> {
        let p = self.cut.period(secs);
        if p != self.key.period {
            Ok(Key {
                period: p,
                index: 0,
            })
        } else {
            next_index(self.key.clone())
        }
    }

    /// Rotates to the next file (then call [`RollingFile::housekeep`]).
    /// Returns a notice for the sink: the first failure of an episode, or
    /// the recovery after failures.
    pub(crate) fn rotate(&mut self, wall: SystemTime, now: Instant) -> Option<String> {
        let secs = unix_secs(wall);
        // No wider than the file it follows (the sink's own).
        let shown = |name: &str| self.dir.path().join(name).display().to_string();
        let opened = match (self.next_key(secs), self.file.metadata()) {
            (Ok(key), Ok(meta)) => {
                create_from(&self.dir, &self.naming, key, self.mode.and(Mode::of(&meta)))
                    .map_err(|(e, name)| format!("cannot create {}: {e}", shown(&name)))
            }
            (Err(e), _) => Err(format!("no file can follow {}: {e}", shown(&self.name))),
            (Ok(key), Err(e)) => Err(format!(
                "cannot create {}: {e}",
                shown(&self.naming.name(&key))
            )),
        };
        match opened {
            Ok((file, name, key)) => {
                let identity = file_id(&file).unwrap_or_default();
                let old = std::mem::replace(&mut self.path, self.dir.path().join(&name));
                self.name = name;
                self.file = file;
                self.identity = identity;
                self.size = 0;
                self.key = key;
                self.next_boundary = self.cut.end(secs);
                self.rotations += 1;
                self.update_link();
                let failing = self.failing.take()?;
                Some(format!(
                    "rolled over to {} after {} failed rotation{} since {} (last error: {}); the records in between are at the end of {}",
                    self.path.display(),
                    failing.attempts,
                    if failing.attempts == 1 { "" } else { "s" },
                    crate::text::time::rfc3339(failing.since),
                    failing.last,
                    old.display(),
                ))
            }
            Err(text) => {
                self.rotation_errors += 1;
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

    /// Points the link ([`Rolling::symlink`]) at the current file: a new
    /// link under the temporary name, renamed over the old one. Leaves
    /// alone anything else than a symbolic link found at the link's name
    /// (and at the temporary name); failures become notices.
    fn update_link(&mut self) {
        let Some(link) = &mut self.link else { return };
        if link.unsupported {
            return;
        }
        let shown = self.dir.path().join(&link.name);
        if self
            .dir
            .stat(&link.name)
            .is_ok_and(|s| s.kind != Kind::Link)
        {
            if !link.blocked {
                link.blocked = true;
                self.notices.push(format!(
                    "no link to the current file: {} is there and is not a symbolic link (left alone)",
                    shown.display()
                ));
            }
            return;
        }
        link.blocked = false;
        // A link left at the temporary name (a run cut short): ours to
        // replace; unlinking it follows nothing.
        let _ = self.dir.remove_link(&link.tmp);
        if let Err(e) = self.dir.replace_link(&self.name, &link.tmp, &link.name) {
            if nofollow::links_unsupported(&e) {
                link.unsupported = true;
                self.notices.push(format!(
                    "no link to the current file at {}: this process may not create symbolic links ({e}); not trying again",
                    shown.display()
                ));
            } else {
                self.notices.push(format!(
                    "cannot point {} at {}: {e}",
                    shown.display(),
                    self.path.display()
                ));
            }
        }
    }

    /// Errors from the housekeeping thread since the last call, and the
    /// notices of the opening (each counted in `rotation_errors`).
    pub(crate) fn housekeeping_errors(&mut self) -> Vec<String> {
        let mut errors = std::mem::take(&mut self.notices);
        if let Some(h) = &self.housekeeper {
            errors.extend(h.errors());
        }
        self.rotation_errors += errors.len() as u64;
        errors
    }

    /// If the current file was renamed or deleted (or `force`), opens its
    /// name again. A failure keeps the old file, counts a rotation error
    /// and returns a notice.
    pub(crate) fn reopen_if_moved(&mut self, force: bool) -> Option<String> {
        let moved = match self.dir.stat(&self.name) {
            Ok(stat) => stat.id != self.identity,
            Err(_) => true,
        };
        if !moved && !force {
            return None;
        }
        // The file it replaces is the one still open.
        let reopened = self
            .file
            .metadata()
            .and_then(|old| {
                let mode = self.mode.and(Mode::of(&old));
                self.dir.open_append(&self.name, false, mode)
            })
            .and_then(|f| Ok((f.metadata()?, file_id(&f)?, f)));
        match reopened {
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
    use crate::rolling::dir_names as names;
    use crate::rolling::Rotation;
    use std::fs;
    use std::path::Path;

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
        // Take every name the rotation may try (the directory itself is a
        // handle: moving it away would change nothing).
        let taken: Vec<PathBuf> = (1..=MAX_TAKEN + 1)
            .map(|i| dir.path().join(format!("app.log.{i}")))
            .collect();
        for name in &taken {
            fs::create_dir(name).unwrap();
        }
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
        // The names are free again: the rotation goes through and says so.
        for name in &taken {
            fs::remove_dir(name).unwrap();
        }
        let later = now + RETRY_AFTER * 2;
        assert!(f.due(wall, later, 4));
        let notice = f.rotate(wall, later).unwrap();
        assert!(notice.contains("after 2 failed rotations"), "{notice}");
        assert_eq!(f.rotations, 1);
        assert_eq!(fs::read(dir.path().join("app.log")).unwrap(), b"abc\n");
    }

    /// A file outside the log directory that the sink must never write.
    #[cfg(unix)]
    fn outside(dir: &Path) -> PathBuf {
        let path = dir.join("passwd");
        fs::write(&path, b"root:x:0:0::/root:/bin/sh\n").unwrap();
        path
    }

    /// Whoever can write the directory plants a link where the sink
    /// appends at start: the sink writes the next name instead, and says
    /// why.
    #[cfg(unix)]
    #[test]
    fn a_symlink_at_the_current_files_name_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let target = outside(elsewhere.path());
        std::os::unix::fs::symlink(&target, dir.path().join("app.log")).unwrap();
        let mut f = RollingFile::open(&Rolling::never(dir.path(), "app.log")).unwrap();
        f.write_all(b"record\n").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"root:x:0:0::/root:/bin/sh\n");
        assert_eq!(f.path, dir.path().join("app.log.1"));
        assert_eq!(fs::read(dir.path().join("app.log.1")).unwrap(), b"record\n");
        let notices = f.housekeeping_errors();
        assert!(
            notices.iter().any(|n| n.contains("symbolic link")),
            "{notices:?}"
        );
        assert_eq!(f.rotation_errors, 1);
    }

    /// A hard link to another file at the current file's name: not
    /// appended to either.
    #[cfg(unix)]
    #[test]
    fn a_hard_link_at_the_current_files_name_is_not_appended_to() {
        let dir = tempfile::tempdir().unwrap();
        let target = outside(dir.path());
        fs::hard_link(&target, dir.path().join("app.log")).unwrap();
        let mut f = RollingFile::open(&Rolling::never(dir.path(), "app.log")).unwrap();
        f.write_all(b"record\n").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"root:x:0:0::/root:/bin/sh\n");
        assert_eq!(f.path, dir.path().join("app.log.1"));
    }

    /// A FIFO put where the current file was: reopening it must not wait
    /// for a reader (the writer thread would hang).
    #[cfg(unix)]
    #[test]
    fn a_fifo_in_place_of_the_current_file_does_not_block_the_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let mut f = RollingFile::open(&Rolling::never(dir.path(), "app.log")).unwrap();
        let path = dir.path().join("app.log");
        fs::remove_file(&path).unwrap();
        // mkfifo(1): rustix has no FIFO call on macOS.
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(made.success(), "mkfifo: {made}");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let notice = f.reopen_if_moved(false);
            let _ = tx.send((notice, f.rotation_errors));
        });
        let (notice, errors) = rx
            .recv_timeout(Duration::from_secs(10))
            .expect("the reopen waits for a reader of the FIFO");
        let notice = notice.unwrap();
        assert!(notice.contains("not a regular file"), "{notice}");
        assert_eq!(errors, 1);
    }

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[cfg(unix)]
    fn set_mode(path: &Path, mode: u32) {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
    }

    /// A `chmod 600` of the current file carries over to the next one, and
    /// to the first file of a later run.
    #[cfg(unix)]
    #[test]
    fn a_new_file_is_no_wider_than_the_file_before_it() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = Rolling::daily(dir.path(), "app").filename_suffix("log");
        let mut f = RollingFile::open(&cfg).unwrap();
        set_mode(&f.path, 0o600);
        let boundary = f.next_boundary.unwrap();
        let after = UNIX_EPOCH + Duration::from_secs(boundary as u64);
        assert_eq!(f.rotate(after, Instant::now()), None);
        assert_eq!(mode(&f.path), 0o600);
        drop(f);
        // A later run, a day with no file yet: the newest file's mode.
        for e in fs::read_dir(dir.path()).unwrap() {
            fs::rename(
                e.as_ref().unwrap().path(),
                dir.path().join(
                    e.unwrap()
                        .file_name()
                        .to_str()
                        .unwrap()
                        .replace("app.2", "app.1"),
                ),
            )
            .unwrap();
        }
        let f = RollingFile::open(&cfg).unwrap();
        assert_eq!(mode(&f.path), 0o600);
    }

    /// The plain name of an index is free but its `.gz` is there (left by
    /// an earlier run): taking the name would have the housekeeping remove
    /// the new file as already compressed.
    #[test]
    fn rotation_skips_an_index_whose_archive_exists() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = Rolling::never(dir.path(), "app.log").max_size(4);
        let mut f = RollingFile::open(&cfg).unwrap();
        fs::write(dir.path().join("app.log.1.gz"), b"").unwrap();
        f.write_all(b"abc\n").unwrap();
        let now = Instant::now();
        assert_eq!(f.rotate(SystemTime::now(), now), None);
        assert_eq!(f.path, dir.path().join("app.log.2"));
    }

    /// A file of another user at the current file's name (a directory
    /// where anyone may create files): the sink does not write into it,
    /// where its owner would read it.
    #[cfg(unix)]
    #[test]
    fn a_file_of_another_user_at_the_current_files_name_is_not_appended_to() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let theirs = dir.path().join("app.log");
        fs::write(&theirs, b"").unwrap();
        let other = if fs::metadata(&theirs).unwrap().uid() == 0 {
            65534
        } else {
            0
        };
        if std::os::unix::fs::chown(&theirs, Some(other), None).is_err() {
            eprintln!("SKIPPED: cannot chown (needs root)");
            return;
        }
        let mut f = RollingFile::open(&Rolling::never(dir.path(), "app.log")).unwrap();
        f.write_all(b"record\n").unwrap();
        assert_eq!(fs::read(&theirs).unwrap(), b"");
        assert_eq!(f.path, dir.path().join("app.log.1"));
        let notices = f.housekeeping_errors();
        assert!(notices[0].contains("of user"), "{notices:?}");
    }

    /// A sink of `app.log` in `dir` that rolls every 4 bytes and keeps a
    /// link `current` to the file being written.
    fn open_linked(dir: &Path) -> RollingFile {
        let cfg = Rolling::never(dir, "app.log")
            .max_size(4)
            .symlink("current");
        RollingFile::open(&cfg).unwrap()
    }

    /// The link names the current file at start and after each rotation,
    /// by a relative name; no temporary is left behind.
    #[cfg(unix)]
    #[test]
    fn the_link_follows_each_rotation() {
        let dir = tempfile::tempdir().unwrap();
        let mut f = open_linked(dir.path());
        let link = dir.path().join("current");
        assert_eq!(fs::read_link(&link).unwrap(), Path::new("app.log"));
        f.write_all(b"abc\n").unwrap();
        assert_eq!(f.rotate(SystemTime::now(), Instant::now()), None);
        assert_eq!(fs::read_link(&link).unwrap(), Path::new("app.log.1"));
        f.write_all(b"def\n").unwrap();
        assert_eq!(fs::read(&link).unwrap(), b"def\n");
        assert_eq!(names(dir.path()), ["app.log", "app.log.1", "current"]);
        assert!(f.housekeeping_errors().is_empty());
    }

    /// Windows: the link follows each rotation where the process may
    /// create symbolic links. Where it may not, one notice says so and it
    /// does not try again; where creating one fails otherwise (Wine makes
    /// links it cannot resolve, so the rename over the old one fails),
    /// each attempt's notice names the error. Either way the sink rotates
    /// and writes on.
    #[cfg(windows)]
    #[test]
    fn the_link_follows_each_rotation_or_each_failure_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let mut f = open_linked(dir.path());
        let link = dir.path().join("current");
        let mut notices = f.housekeeping_errors();
        for text in [b"abc\n", b"def\n"] {
            f.write_all(text).unwrap();
            assert_eq!(f.rotate(SystemTime::now(), Instant::now()), None);
            notices.extend(f.housekeeping_errors());
        }
        assert_eq!(fs::read(dir.path().join("app.log")).unwrap(), b"abc\n");
        assert_eq!(fs::read(dir.path().join("app.log.1")).unwrap(), b"def\n");
        if let Ok(target) = fs::read_link(&link) {
            eprintln!("symbolic links: made");
            assert_eq!(target, Path::new("app.log.2"));
            assert!(notices.is_empty(), "{notices:?}");
        } else if notices
            .first()
            .is_some_and(|n| n.contains("may not create symbolic links"))
        {
            eprintln!("symbolic links: not allowed here: {notices:?}");
            assert_eq!(notices.len(), 1, "tried again: {notices:?}");
        } else {
            eprintln!("symbolic links: failing here: {notices:?}");
            assert_eq!(notices.len(), 3, "one per attempt: {notices:?}");
            assert!(
                notices.iter().all(|n| n.starts_with("cannot point")),
                "{notices:?}"
            );
        }
        let tmp = dir.path().join(super::super::link_tmp("current"));
        assert!(fs::symlink_metadata(tmp).is_err(), "a temporary left");
    }

    /// A file someone put at the link's name is neither replaced nor
    /// written; the sink says so once while it stays, then links again.
    #[cfg(unix)]
    #[test]
    fn a_file_at_the_links_name_is_left_alone_and_reported_once() {
        let dir = tempfile::tempdir().unwrap();
        let theirs = dir.path().join("current");
        fs::write(&theirs, b"theirs\n").unwrap();
        let mut f = open_linked(dir.path());
        f.write_all(b"abc\n").unwrap();
        assert_eq!(f.rotate(SystemTime::now(), Instant::now()), None);
        assert_eq!(fs::read(&theirs).unwrap(), b"theirs\n");
        let notices = f.housekeeping_errors();
        assert_eq!(notices.len(), 1, "{notices:?}");
        assert!(notices[0].contains("not a symbolic link"), "{notices:?}");
        assert_eq!(f.rotation_errors, 1);
        fs::remove_file(&theirs).unwrap();
        f.write_all(b"def\n").unwrap();
        assert_eq!(f.rotate(SystemTime::now(), Instant::now()), None);
        assert_eq!(fs::read_link(&theirs).unwrap(), Path::new("app.log.2"));
        assert!(f.housekeeping_errors().is_empty());
    }

    /// A link named like one of the sink's files would be removed by
    /// retention, or take the current file's place: refused at build.
    #[test]
    fn a_link_named_like_the_sinks_files_is_refused() {
        let never = Rolling::never("/nonexistent", "app.log");
        for bad in ["app.log", "app.log.3", "app.log.3.gz", "a/b", "", ".."] {
            assert!(never.clone().symlink(bad).check().is_err(), "{bad}");
        }
        let daily = Rolling::daily("/nonexistent", "app").filename_suffix("log");
        assert!(daily.clone().symlink("app.2026-11-26.log").check().is_err());
        assert_eq!(daily.symlink("app.log").check(), Ok(()));
    }

    /// 2026-11-26T02:00:00Z, a Thursday.
    fn thursday_2am() -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(1_795_658_400)
    }

    /// With `rotate_at(3, 0)` a day runs from 03:00 to 03:00 and its file
    /// is named after the day it starts on.
    #[test]
    fn a_day_starting_at_3am_is_named_after_the_day_it_starts_on() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = Rolling::daily(dir.path(), "app")
            .rotate_at(3, 0)
            .clock(thursday_2am);
        let mut f = RollingFile::open(&cfg).unwrap();
        assert_eq!(f.key.period, "2026-11-25");
        let three = 1_795_658_400 + 3600;
        assert_eq!(f.next_boundary, Some(three));
        let at = UNIX_EPOCH + Duration::from_secs(three as u64);
        assert!(f.due(at, Instant::now(), 1));
        assert_eq!(f.rotate(at, Instant::now()), None);
        assert_eq!(f.key.period, "2026-11-26");
        assert_eq!(f.next_boundary, Some(three + 86_400));
    }

    /// Weekly with `rotate_at(6, 0)`: the week starts on Sunday at 06:00.
    #[test]
    fn a_week_starting_at_6am_on_sunday() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = Rolling::weekly(dir.path(), "app")
            .rotate_at(6, 0)
            .clock(thursday_2am);
        let f = RollingFile::open(&cfg).unwrap();
        assert_eq!(f.key.period, "2026-11-22");
        // Sunday 2026-11-29T06:00:00Z.
        assert_eq!(f.next_boundary, Some(1_795_910_400 + 6 * 3600));
        assert_eq!(names(dir.path()), ["app.2026-11-22"]);
    }

    #[test]
    fn rotate_at_is_refused_where_it_means_nothing() {
        let hourly = Rolling::hourly("/nonexistent", "app").rotate_at(3, 0);
        assert!(hourly.check().is_err());
        for (h, m) in [(24, 0), (0, 60)] {
            assert!(Rolling::daily("/nonexistent", "app")
                .rotate_at(h, m)
                .check()
                .is_err());
        }
    }
}
