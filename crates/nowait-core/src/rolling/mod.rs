//! Rolling files: a new file per period (minute, hour, day, week) and/or
//! once a size is reached, old files compressed and pruned off the writer
//! thread, a link to the current file.
//!
//! * [`naming`]: the file names (those of `tracing_appender::rolling`,
//!   plus an index for size rotation) and parsing them back.
//! * [`file`]: the file being written and the rotation, on the writer
//!   thread, between records.
//! * [`maintain`]: compression and retention on a thread of their own.

pub(crate) mod file;
pub(crate) mod maintain;
pub(crate) mod naming;

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use naming::{Key, Naming};

/// When a [`Rolling`] sink starts a new file, besides its size limit.
///
/// The names are those of `tracing_appender::rolling::Rotation`.
///
/// # Examples
///
/// ```
/// use nowait_core::sink::{Rolling, Rotation};
///
/// let dir = tempfile::tempdir().unwrap();
/// let rolling = Rolling::new(dir.path()).rotation(Rotation::Hourly).filename_prefix("app");
/// # let _ = rolling;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Rotation {
    /// A new file every minute (`prefix.YYYY-MM-DD-HH-MM`).
    Minutely,
    /// A new file every hour (`prefix.YYYY-MM-DD-HH`).
    Hourly,
    /// A new file every day (`prefix.YYYY-MM-DD`).
    Daily,
    /// A new file every week, on Sunday at midnight (`prefix.YYYY-MM-DD`,
    /// the date of that Sunday), as `tracing_appender`'s
    /// `Rotation::WEEKLY`.
    Weekly,
    /// No new file by time (only by size, if [`Rolling::max_size`] is set).
    Never,
}

/// How a [`Rolling`] sink compresses the files it rotated out
/// ([`Rolling::compress_with`]).
///
/// # Examples
///
/// ```
/// use nowait_core::sink::{Compression, Rolling};
///
/// # let dir = tempfile::tempdir().unwrap();
/// let how = if cfg!(feature = "zstd") { Compression::Zstd } else { Compression::Gzip };
/// let rolling = Rolling::hourly(dir.path(), "app.log").compress_with(how);
/// # let _ = rolling;
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Compression {
    /// gzip (`NAME.gz`, level 6, through `flate2`): readable everywhere
    /// (`zcat`, `zgrep`, `less`). Feature `gzip` (on by default).
    Gzip,
    /// Zstandard (`NAME.zst`, level 3, through the `zstd` crate, which
    /// builds the reference C library): at this level usually smaller
    /// than gzip's default and faster to compress and to read
    /// (`zstdcat`, `zstdgrep`); the repository's `rolling_compress_ab` benchmark script measures
    /// it against gzip on log lines. Feature `zstd`.
    Zstd,
}

impl Compression {
    /// The extension an archive of this kind gets, with its dot.
    pub(crate) fn extension(self) -> &'static str {
        match self {
            Compression::Gzip => ".gz",
            Compression::Zstd => ".zst",
        }
    }

    /// Every kind, for telling archives apart by name.
    pub(crate) const ALL: [Compression; 2] = [Compression::Gzip, Compression::Zstd];
}

/// A rolling file sink's settings, for `Sink::rolling`.
///
/// Files are named like `tracing_appender::rolling` names them: the prefix,
/// the period and the suffix joined with `.` (`app.2026-11-23.log`; with
/// no prefix `2026-11-23.log`; `app.log.2026-11-23` for
/// `Rolling::daily(dir, "app.log")`). When [`max_size`](Rolling::max_size)
/// starts a second file within one period, it gets an index after the
/// period (`app.2026-11-23.1.log`, `.2`, ...): the first file keeps the
/// plain name, so globs such as `app.*` and `*.log` still find every file.
/// Compressed files end in `.gz` (`app.2026-11-23.1.log.gz`) or, with
/// [`Compression::Zstd`], `.zst`.
///
/// # Migrating from tracing-appender
///
/// | tracing-appender | nowait |
/// |---|---|
/// | `rolling::daily(dir, "app.log")` | `Sink::rolling(Rolling::daily(dir, "app.log"))` |
/// | `rolling::hourly(dir, p)`, `minutely`, `weekly`, `never` | `Rolling::hourly(dir, p)`, `minutely`, `weekly`, `never` |
/// | `Builder::new().rotation(r)` | `Rolling::new(dir).rotation(r)` |
/// | `.filename_prefix(p)`, `.filename_suffix(s)` | the same |
/// | `.max_log_files(n)` | the same |
/// | — | [`max_size`](Rolling::max_size), [`max_age`](Rolling::max_age), [`max_total_size`](Rolling::max_total_size), [`compress`](Rolling::compress), [`local_time`](Rolling::local_time), [`rotate_at`](Rolling::rotate_at), [`symlink`](Rolling::symlink) |
///
/// # When files roll
///
/// The writer thread decides before each write, between two records, so a
/// record is never split across files and no request thread ever waits
/// for a rotation. Time rotation uses the wall clock at write time, in UTC
/// unless [`local_time`](Rolling::local_time): a record formatted just
/// before midnight but written just after it goes into the new day's file,
/// and no new file is created for a period in which nothing is written.
/// A rotation that fails (the directory was removed or is read-only, no
/// inode left) keeps the old file: the records go on into it, a notice says
/// so in the file, [`SinkStats::rotation_errors`](crate::accounting::stats::SinkStats::rotation_errors)
/// counts it, and the rotation is tried again a second later.
///
/// On start the sink appends to the newest file of the current period, if
/// an earlier run left one.
///
/// # Permissions, and a directory others can write
///
/// A new file gets the permission bits set with [`mode`](Rolling::mode)
/// (`0o640` by default), less the process's umask, and never wider than
/// the sink's own file it follows (at start, the sink's newest file): a
/// `chmod 600` of the log carries over to the next files and to their
/// archives. On Windows a new file gets the access control list its
/// directory passes on.
///
/// The directory may be writable by others (a shared `/var/log/app`, or
/// one with the sticky bit like `/tmp`). It is opened once, at build,
/// and every later step (create, append, compress, remove, the link) goes
/// through that handle, never through its path again: whoever can write
/// a parent and puts a link in its place changes nothing for the sink (a
/// directory removed after build makes rotations fail, reported). Under a
/// name of the sink's pattern, only a regular file owned by the process's
/// effective user, with one name, and not named after the current period,
/// is the sink's: a symbolic link (on Windows, any reparse point), a hard
/// link, another user's file, a FIFO or a directory is never followed,
/// written, compressed, counted for retention or removed, and no mode is
/// taken from it. New files are created exclusively, never under a name
/// that exists in any form. Where the file to append to at start is not
/// the sink's, the sink writes the next index instead; the housekeeping
/// leaves such names alone. Either says so in the sink, once, and counts
/// it in
/// [`SinkStats::rotation_errors`](crate::accounting::stats::SinkStats::rotation_errors).
///
/// # Examples
///
/// ```
/// use nowait_core::{Builder, Level, Sink};
/// use nowait_core::sink::{Rolling, Rotation};
///
/// let dir = tempfile::tempdir().unwrap();
/// let (logger, guard) = Builder::new()
///     // was: tracing_appender::rolling::daily(dir.path(), "app.log")
///     .sink(Sink::rolling(Rolling::daily(dir.path(), "app.log")))
///     .sink(Sink::rolling(
///         Rolling::new(dir.path().join("access"))
///             .rotation(Rotation::Hourly)
///             .filename_prefix("access")
///             .filename_suffix("log")
///             .max_size(64 << 20)
///             .max_log_files(48),
///             // .compress(true): gzip rotated files (default feature `gzip`)
///     ))
///     .build()
///     .unwrap();
/// logger.log(Level::Info, "hello").unwrap();
/// drop(guard);
/// let name = std::fs::read_dir(dir.path()).unwrap()
///     .filter_map(|e| e.ok()?.file_name().into_string().ok())
///     .find(|n| n.starts_with("app.log.")).unwrap();
/// assert_eq!(name.len(), "app.log.YYYY-MM-DD".len());
/// ```
#[derive(Debug, Clone)]
pub struct Rolling {
    pub(crate) dir: PathBuf,
    pub(crate) prefix: Option<String>,
    pub(crate) suffix: Option<String>,
    pub(crate) rotation: Rotation,
    pub(crate) max_size: Option<u64>,
    pub(crate) max_files: Option<usize>,
    pub(crate) max_age: Option<std::time::Duration>,
    pub(crate) max_total: Option<u64>,
    pub(crate) compress: Option<Compression>,
    pub(crate) local: bool,
    /// Seconds after midnight at which a day (or a week) starts; `None`
    /// for midnight.
    pub(crate) at: Option<(u8, u8)>,
    /// The name of the symbolic link to the current file, if any.
    pub(crate) link: Option<String>,
    /// The wall clock files are named and rolled by.
    pub(crate) clock: fn() -> SystemTime,
    /// Permission bits of new files ([`Rolling::mode`]).
    pub(crate) mode: u32,
}

impl Rolling {
    /// Files in `dir` (created if missing), with no rotation, prefix or
    /// suffix yet: set at least a prefix or a suffix, or a rotation.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let rolling = nowait_core::sink::Rolling::new(dir.path())
    ///     .rotation(nowait_core::sink::Rotation::Daily);
    /// # let _ = rolling;
    /// ```
    pub fn new(dir: impl Into<PathBuf>) -> Rolling {
        Rolling {
            dir: dir.into(),
            prefix: None,
            suffix: None,
            rotation: Rotation::Never,
            max_size: None,
            max_files: None,
            max_age: None,
            max_total: None,
            compress: None,
            local: false,
            at: None,
            link: None,
            clock: SystemTime::now,
            mode: 0o640,
        }
    }

    /// A new file every minute: `dir/prefix.YYYY-MM-DD-HH-MM`.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let rolling = nowait_core::sink::Rolling::minutely(dir.path(), "app.log");
    /// # let _ = rolling;
    /// ```
    pub fn minutely(dir: impl AsRef<Path>, prefix: impl AsRef<Path>) -> Rolling {
        Rolling::with(dir, prefix, Rotation::Minutely)
    }

    /// A new file every hour: `dir/prefix.YYYY-MM-DD-HH`.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let rolling = nowait_core::sink::Rolling::hourly(dir.path(), "app.log");
    /// # let _ = rolling;
    /// ```
    pub fn hourly(dir: impl AsRef<Path>, prefix: impl AsRef<Path>) -> Rolling {
        Rolling::with(dir, prefix, Rotation::Hourly)
    }

    /// A new file every week, on Sunday at midnight:
    /// `dir/prefix.YYYY-MM-DD`, the date of that Sunday, as
    /// `tracing_appender::rolling::weekly(dir, prefix)`.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let rolling = nowait_core::sink::Rolling::weekly(dir.path(), "app.log");
    /// # let _ = rolling;
    /// ```
    pub fn weekly(dir: impl AsRef<Path>, prefix: impl AsRef<Path>) -> Rolling {
        Rolling::with(dir, prefix, Rotation::Weekly)
    }

    /// A new file every day: `dir/prefix.YYYY-MM-DD`, as
    /// `tracing_appender::rolling::daily(dir, prefix)`.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let rolling = nowait_core::sink::Rolling::daily(dir.path(), "app.log");
    /// # let _ = rolling;
    /// ```
    pub fn daily(dir: impl AsRef<Path>, prefix: impl AsRef<Path>) -> Rolling {
        Rolling::with(dir, prefix, Rotation::Daily)
    }

    /// One file, `dir/name` (with [`max_size`](Rolling::max_size):
    /// `name`, then `name.1`, `name.2`, ...).
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let rolling = nowait_core::sink::Rolling::never(dir.path(), "app.log").max_size(1 << 30);
    /// # let _ = rolling;
    /// ```
    pub fn never(dir: impl AsRef<Path>, name: impl AsRef<Path>) -> Rolling {
        Rolling::with(dir, name, Rotation::Never)
    }

    fn with(dir: impl AsRef<Path>, prefix: impl AsRef<Path>, rotation: Rotation) -> Rolling {
        Rolling::new(dir.as_ref())
            .rotation(rotation)
            .filename_prefix(prefix.as_ref().to_string_lossy())
    }

    /// When to start a new file (default [`Rotation::Never`] for
    /// [`Rolling::new`]).
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let rolling = nowait_core::sink::Rolling::new(dir.path())
    ///     .rotation(nowait_core::sink::Rotation::Minutely);
    /// # let _ = rolling;
    /// ```
    pub fn rotation(mut self, rotation: Rotation) -> Rolling {
        self.rotation = rotation;
        self
    }

    /// The start of every file name (an empty string means none).
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let rolling = nowait_core::sink::Rolling::new(dir.path()).filename_prefix("app");
    /// # let _ = rolling;
    /// ```
    pub fn filename_prefix(mut self, prefix: impl Into<String>) -> Rolling {
        self.prefix = Some(prefix.into()).filter(|p| !p.is_empty());
        self
    }

    /// The end of every file name, before `.gz` or `.zst` (an empty string means
    /// none).
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let rolling = nowait_core::sink::Rolling::daily(dir.path(), "app").filename_suffix("log");
    /// # let _ = rolling;
    /// ```
    pub fn filename_suffix(mut self, suffix: impl Into<String>) -> Rolling {
        self.suffix = Some(suffix.into()).filter(|s| !s.is_empty());
        self
    }

    /// Keeps at most `n` files of this sink (the current one included,
    /// compressed ones too), removing the oldest after each rotation and at
    /// start. Only the sink's own files count: regular files of the
    /// process's effective user with one name, named exactly as the sink
    /// names them and before the current file (see "Permissions, and a
    /// directory others can write" above); other files in the directory,
    /// links, and files named after the current one (planted, or left by a
    /// clock that went back) are never counted or touched. At least 1.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let rolling = nowait_core::sink::Rolling::daily(dir.path(), "app.log").max_log_files(7);
    /// # let _ = rolling;
    /// ```
    pub fn max_log_files(mut self, n: usize) -> Rolling {
        self.max_files = Some(n);
        self
    }

    /// Removes, after each rotation and at start, the sink's files last
    /// modified more than `age` ago (the modification time as listed,
    /// against the sink's [`clock`](Rolling::clock)), except the current
    /// one. A compressed file keeps the modification time of the file it
    /// holds. As with [`max_log_files`](Rolling::max_log_files), only the
    /// sink's own files count; nothing is followed. Can be combined with
    /// the other limits: a file goes as soon as one of them says so, oldest
    /// first.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// # let dir = tempfile::tempdir().unwrap();
    /// // Two weeks of logs, never more than 2 GiB of them.
    /// let rolling = nowait_core::sink::Rolling::daily(dir.path(), "app.log")
    ///     .max_age(Duration::from_secs(14 * 86_400))
    ///     .max_total_size(2 << 30);
    /// # let _ = rolling;
    /// ```
    pub fn max_age(mut self, age: std::time::Duration) -> Rolling {
        self.max_age = Some(age);
        self
    }

    /// Keeps the sink's files before the current one (compressed or not)
    /// to at most `bytes` together, removing the oldest first after each
    /// rotation and at start. The current file does not count, and is
    /// never removed (bound it with [`max_size`](Rolling::max_size)).
    /// Sizes are those of the files as listed; as with
    /// [`max_log_files`](Rolling::max_log_files), only the sink's own files
    /// count (another user's file of a terabyte, sparse, counts for
    /// nothing), and nothing is followed.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let rolling = nowait_core::sink::Rolling::hourly(dir.path(), "app.log")
    ///     .max_size(256 << 20)
    ///     .max_total_size(2 << 30);
    /// # let _ = rolling;
    /// ```
    pub fn max_total_size(mut self, bytes: u64) -> Rolling {
        self.max_total = Some(bytes);
        self
    }

    /// Starts a new file before a record would take the current one past
    /// `bytes` (a record larger than that gets a file of its own). Within
    /// one period the files are numbered: `app.2026-11-23.log`,
    /// `app.2026-11-23.1.log`, ...
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let rolling = nowait_core::sink::Rolling::daily(dir.path(), "app.log").max_size(256 << 20);
    /// # let _ = rolling;
    /// ```
    pub fn max_size(mut self, bytes: u64) -> Rolling {
        self.max_size = Some(bytes);
        self
    }

    /// Gzips each file once it is rotated out (`NAME.gz`), on a thread of
    /// its own, so neither the writer nor the other sinks wait for it. The
    /// compressed file is written under a temporary name of its own
    /// (`NAME.gz.TOKEN.tmp`, `TOKEN` random, created exclusively: nothing
    /// another user puts in the directory can hold compression off), with
    /// the permissions of the original, and renamed into place (never over
    /// an existing name); the original is removed only after that. A
    /// compression that fails keeps the original and is reported (see
    /// [`SinkStats::rotation_errors`](crate::accounting::stats::SinkStats::rotation_errors));
    /// one cut short by the end of the process is finished at the next
    /// start (the original is removed if the `.gz`, a file of the sink's
    /// own, holds exactly its bytes; otherwise both stay, reported; a `.gz`
    /// of another user is left alone, reported, and the original stays).
    /// Needs the `gzip` feature (on by default).
    ///
    /// Compression is CPU work on the machine's cores: no request thread
    /// waits for it, but where cores are scarce it competes with them and
    /// can raise the tail latency of a push (the repository's `rolling` benchmark
    /// measures it with a rotation every millisecond). Rotations of
    /// realistic size (tens of MiB or more) compress far less often.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let rolling = nowait_core::sink::Rolling::daily(dir.path(), "app.log").compress(true);
    /// # let _ = rolling;
    /// ```
    pub fn compress(mut self, on: bool) -> Rolling {
        self.compress = on.then_some(Compression::Gzip);
        self
    }

    /// Compresses each file once it is rotated out, with `how`, on the
    /// housekeeping thread: as [`compress(true)`](Rolling::compress)
    /// does with gzip, the same way (temporary name, permissions of the
    /// original, renamed into place, original removed last, a cut-short
    /// compression finished at the next start). [`Compression::Zstd`]
    /// writes `NAME.zst` and needs the `zstd` feature.
    ///
    /// Archives of either kind count for retention, so switching from one
    /// to the other keeps the old archives in the count.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::sink::{Compression, Rolling};
    ///
    /// # let dir = tempfile::tempdir().unwrap();
    /// let rolling = Rolling::daily(dir.path(), "app.log").compress_with(Compression::Gzip);
    /// # let _ = rolling;
    /// ```
    pub fn compress_with(mut self, how: Compression) -> Rolling {
        self.compress = Some(how);
        self
    }

    /// Rolls at local-time boundaries (local midnight, hour) and names the
    /// files with the local date (default: UTC). The offset is read on the
    /// writer thread when a period starts and ends, from the process's time
    /// zone (`TZ`, else the system's), through `chrono`; a zone that cannot
    /// be read counts as UTC. Needs the `local-time` feature.
    ///
    /// # Daylight saving
    ///
    /// A file holds one stretch of time in which the local period text
    /// (`2026-11-01-01`) does not change, records in the order written;
    /// a text that comes back later gets the next index (`.1`).
    ///
    /// * Spring forward: the hour that does not exist gets no file and the
    ///   rotation does not wait for it (`…-01` is followed by `…-03`); a
    ///   day ends at local midnight on the new offset, not an hour late.
    /// * Fall back: the hour that repeats stays in its hour's file, after
    ///   the records of its first pass; no file is replaced, reopened out
    ///   of order or split. (With [`Rotation::Minutely`] each repeated
    ///   minute comes back after its first pass ended, so it gets `.1`.)
    ///
    /// Zones that shift by half an hour (Australia/Lord_Howe) work the
    /// same way. the repository's `rolling_dst` tests checks both changes in
    /// America/New_York, Europe/Berlin and Australia/Lord_Howe.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let rolling = nowait_core::sink::Rolling::daily(dir.path(), "app.log").local_time(false);
    /// # let _ = rolling;
    /// ```
    pub fn local_time(mut self, on: bool) -> Rolling {
        self.local = on;
        self
    }

    /// Starts each day (with [`Rotation::Weekly`], each week's Sunday) at
    /// `hour:minute` instead of midnight: with `rotate_at(3, 0)` the file
    /// `app.2026-11-26.log` takes the records from 03:00 on 26 November
    /// to 02:59:59 on the 27th. The time is UTC, or local time with
    /// [`local_time`](Rolling::local_time) (where a daylight-saving change
    /// skips or repeats it, see there). A file is named after the day its
    /// period starts on.
    ///
    /// Only for [`Rotation::Daily`] and [`Rotation::Weekly`], with
    /// `hour < 24` and `minute < 60`:
    /// `Builder::build` refuses anything else.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// // Quietest hour: a new file at 04:30 every day.
    /// let rolling = nowait_core::sink::Rolling::daily(dir.path(), "app.log").rotate_at(4, 30);
    /// # let _ = rolling;
    /// ```
    pub fn rotate_at(mut self, hour: u8, minute: u8) -> Rolling {
        self.at = Some((hour, minute));
        self
    }

    /// Keeps a symbolic link `dir/name` to the file being written
    /// (`app.log` → `app.2026-11-26.log`), so that `tail -F dir/app.log`
    /// follows the sink across rotations. The link is made at start and
    /// moved at each rotation on the writer thread, atomically: a new link
    /// under a temporary name (`.NAME.tmp`), renamed over the old one, so
    /// the name always points to a file. It points by file name (a
    /// relative link), so it stays right if the directory moves.
    ///
    /// `name` must be a plain file name, and not one of the sink's own
    /// file names: `Builder::build` refuses it
    /// otherwise (with [`Rotation::Never`] and a prefix `app.log`, the
    /// current file already is `app.log`). Retention never counts,
    /// follows or removes the link.
    ///
    /// Whatever else is found under `name` (a file or a directory someone
    /// put there) is left alone: the link is not made, which the sink says
    /// once while it lasts and counts in
    /// [`SinkStats::rotation_errors`](crate::accounting::stats::SinkStats::rotation_errors).
    /// Any other failure to make it is said and counted at each attempt
    /// (at start and at each rotation), and the sink writes on.
    ///
    /// On Windows a symbolic link needs the "Create symbolic links"
    /// privilege (administrators) or Developer Mode. Without it the sink
    /// makes no link, says so once and counts it, and does not try again:
    /// a hard link or a copy would not follow the rotation, and a hard
    /// link would give the current file a second name, which the sink
    /// refuses to append to in a shared directory.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::{Builder, Level, Sink};
    /// use nowait_core::sink::Rolling;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let (logger, guard) = Builder::new()
    ///     .sink(Sink::rolling(
    ///         Rolling::daily(dir.path(), "app").filename_suffix("log").symlink("app.log"),
    ///     ))
    ///     .build()
    ///     .unwrap();
    /// logger.log(Level::Info, "hello").unwrap();
    /// drop(guard);
    /// # #[cfg(unix)] {
    /// let target = std::fs::read_link(dir.path().join("app.log")).unwrap();
    /// assert_eq!(target.to_str().unwrap().len(), "app.YYYY-MM-DD.log".len());
    /// # }
    /// ```
    pub fn symlink(mut self, name: impl Into<String>) -> Rolling {
        self.link = Some(name.into());
        self
    }

    /// The wall clock that names files and decides when a period is over
    /// (default: `SystemTime::now`). For tests that must cross a period,
    /// a daylight-saving change or a midnight without waiting for one.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU64, Ordering};
    /// use std::time::{Duration, SystemTime, UNIX_EPOCH};
    ///
    /// static NOW: AtomicU64 = AtomicU64::new(1_700_000_000);
    /// fn fake() -> SystemTime {
    ///     UNIX_EPOCH + Duration::from_secs(NOW.load(Ordering::Relaxed))
    /// }
    ///
    /// # let dir = tempfile::tempdir().unwrap();
    /// let (logger, guard) = nowait_core::Builder::new()
    ///     .sink(nowait_core::Sink::rolling(
    ///         nowait_core::sink::Rolling::hourly(dir.path(), "app.log").clock(fake),
    ///     ))
    ///     .build()
    ///     .unwrap();
    /// logger.log(nowait_core::Level::Info, "in the first hour").unwrap();
    /// logger.flush().unwrap();
    /// NOW.fetch_add(3600, Ordering::Relaxed);
    /// logger.log(nowait_core::Level::Info, "in the next").unwrap();
    /// drop(guard);
    /// assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 2);
    /// ```
    pub fn clock(mut self, now: fn() -> SystemTime) -> Rolling {
        self.clock = now;
        self
    }

    /// The Unix permission bits new files are created with (default
    /// `0o640`: owner read and write, group read), less the
    /// process's umask, and never wider than the sink's own file they
    /// follow: `0o600` keeps the logs private to the service's user,
    /// `0o644` lets every user read them. Archives get the bits of the file
    /// they hold. Execute bits are never given; bits above `0o777` are a
    /// `BuildError`. No file another user made, or that has other names,
    /// ever lends its bits to a new one.
    ///
    /// Ignored on Windows, where a new file gets the access control list
    /// its directory passes on.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// let rolling = nowait_core::sink::Rolling::daily(dir.path(), "app.log").mode(0o600);
    /// # let _ = rolling;
    /// ```
    pub fn mode(mut self, bits: u32) -> Rolling {
        self.mode = bits;
        self
    }

    pub(crate) fn naming(&self) -> Naming {
        Naming {
            prefix: self.prefix.clone(),
            suffix: self.suffix.clone(),
            rotation: self.rotation,
        }
    }

    /// Seconds after midnight at which a period starts ([`rotate_at`](Rolling::rotate_at)).
    pub(crate) fn start_of_day(&self) -> i64 {
        self.at
            .map_or(0, |(h, m)| i64::from(h) * 3600 + i64::from(m) * 60)
    }

    /// `dir/app.YYYY-MM-DD.log`, for the sink's name.
    pub(crate) fn pattern(&self) -> String {
        let period = match self.rotation {
            Rotation::Never => "",
            Rotation::Daily | Rotation::Weekly => "YYYY-MM-DD",
            Rotation::Hourly => "YYYY-MM-DD-HH",
            Rotation::Minutely => "YYYY-MM-DD-HH-MM",
        };
        let name = self.naming().name(&Key {
            period: period.into(),
            index: 0,
        });
        self.dir.join(name).display().to_string()
    }

    /// Why these settings cannot work, if they cannot.
    pub(crate) fn check(&self) -> Result<(), String> {
        for part in [&self.prefix, &self.suffix].into_iter().flatten() {
            if part.contains('/') || part.contains('\0') {
                return Err(format!(
                    "a file name prefix or suffix cannot contain '/' or NUL, got {part:?}"
                ));
            }
        }
        if self.rotation == Rotation::Never && self.prefix.is_none() && self.suffix.is_none() {
            return Err("a rolling sink without rotation by time needs a filename_prefix or filename_suffix".into());
        }
        if let Some(link) = &self.link {
            self.check_link(link)?;
        }
        if let Some((hour, minute)) = self.at {
            if !matches!(self.rotation, Rotation::Daily | Rotation::Weekly) {
                return Err("rotate_at needs Rotation::Daily or Rotation::Weekly".into());
            }
            if hour >= 24 || minute >= 60 {
                return Err(format!(
                    "rotate_at({hour}, {minute}): hour must be below 24 and minute below 60"
                ));
            }
        }
        if self.mode & !0o777 != 0 {
            return Err(format!(
                "mode({:#o}): only permission bits (at most 0o777)",
                self.mode
            ));
        }
        if self.max_files == Some(0) {
            return Err("max_log_files must be at least 1".into());
        }
        if self.max_size == Some(0) {
            return Err("max_size must not be zero".into());
        }
        match self.compress {
            Some(Compression::Gzip) if !cfg!(feature = "gzip") => {
                return Err("compress(true) needs nowait-core's `gzip` feature".into());
            }
            Some(Compression::Zstd) if !cfg!(feature = "zstd") => {
                return Err("Compression::Zstd needs nowait-core's `zstd` feature".into());
            }
            _ => {}
        }
        if self.local && !cfg!(feature = "local-time") {
            return Err("local_time(true) needs nowait-core's `local-time` feature".into());
        }
        Ok(())
    }
}

impl Rolling {
    /// Why `link` cannot name the link to the current file, if it cannot:
    /// neither it nor its temporary may be a name of the sink's files.
    fn check_link(&self, link: &str) -> Result<(), String> {
        if link.is_empty() || link == "." || link == ".." || link.contains(['/', '\\', '\0']) {
            return Err(format!(
                "symlink needs a plain file name, without '/', '\\' or NUL, got {link:?}"
            ));
        }
        let naming = self.naming();
        for name in [link.to_owned(), link_tmp(link)] {
            // `NAME.gz.tmp` and `NAME.gz.TOKEN.tmp` are temporaries of an
            // archive of `NAME`.
            let stem = name.strip_suffix(".tmp").unwrap_or(&name);
            if naming.parse(stem).is_some() || maintain::is_sinks(&naming, &name) {
                return Err(format!(
                    "symlink {link:?}: {name:?} is a name of the sink's own files"
                ));
            }
        }
        Ok(())
    }
}

/// The temporary name a new link to the current file is made under,
/// before it is renamed over `link`.
pub(crate) fn link_tmp(link: &str) -> String {
    format!(".{link}.tmp")
}

/// The names in `dir`, sorted: what the rolling tests compare.
#[cfg(all(test, not(miri)))]
fn dir_names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}
