//! Files in a directory others may write (a rolling sink's), on Unix.
//!
//! Whoever can write the directory can put any name there between two of
//! our calls: a symbolic link to a file only we can read or write, a hard
//! link to one, a FIFO whose open never returns. Whoever can write one of
//! its parents can put a link in the directory's own place. So
//!
//! 1. the directory is opened once ([`Dir::open`]) and every later step
//!    goes through that descriptor (`openat`, `fstatat`, `renameat`,
//!    `unlinkat`, `symlinkat`), never through its path;
//! 2. every open passes `O_NOFOLLOW` (a link at the name fails the open)
//!    and `O_NONBLOCK` (a FIFO without a reader fails instead of waiting;
//!    the flag is cleared again on the regular file that is kept),
//! 3. checks what it opened with `fstat` on the descriptor, not on the
//!    name: a regular file with one name; to be appended to or read, also
//!    owned by this process's effective user (else whoever made it reads
//!    what we write, or has us copy what they chose).
//!
//! New files are created with `O_CREAT | O_EXCL` (which never follows a
//! link either) and their permission bits at creation, never widened by a
//! later `chmod`; renames into place never replace a name (`renameat2`'s
//! `RENAME_NOREPLACE`, `renamex_np`'s `RENAME_EXCL`, else `linkat` and
//! `unlinkat`).

use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use rustix::fs::{AtFlags, OFlags};

pub(crate) use crate::sys::entry::{Kind, Stat};
use crate::sys::FileId;

/// The permission bits a new file gets (the umask may narrow them more).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mode(u32);

impl Mode {
    /// For a file that replaces none: `0666`, as any file std creates.
    pub(crate) const NEW: Mode = Mode(0o666);

    /// Read and write bits `bits` (`0o666` at most: never executable or
    /// set-id).
    pub(crate) const fn bits(bits: u32) -> Mode {
        Mode(bits & Mode::NEW.0)
    }

    /// No wider than the file `meta` describes, never executable or
    /// set-id.
    pub(crate) fn of(meta: &Metadata) -> Mode {
        Mode(meta.mode() & Mode::NEW.0)
    }

    /// No wider than the file `stat` describes.
    pub(crate) fn of_stat(stat: &Stat) -> Mode {
        Mode(stat.mode & Mode::NEW.0)
    }

    /// The bits both allow.
    pub(crate) fn and(self, other: Mode) -> Mode {
        Mode(self.0 & other.0)
    }
}

const FLAGS: i32 = libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY;

/// Opens `path` for appending, creating it with `mode` if missing (only
/// then with `create_new`), if it is a regular file with no other name and,
/// unless just created, of this process's user; a symbolic link is not
/// followed. By path, for what recovery completes at build; the rolling
/// sink goes through its [`Dir`].
pub(crate) fn open_append(path: &Path, create_new: bool, mode: Mode) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.append(true).mode(mode.0).custom_flags(FLAGS);
    if create_new {
        o.create_new(true);
    } else {
        o.create(true);
    }
    let file = o.open(path).map_err(|e| {
        let now = std::fs::symlink_metadata(path).map(|m| m.file_type());
        explain(e, now.ok().map(|t| (t.is_symlink(), t.is_file())))
    })?;
    checked(file, !create_new)
}

/// A directory others may write, opened once: every step on its names
/// (`openat`, `fstatat`, `renameat`, `unlinkat`, `symlinkat`) goes
/// through this descriptor, never through the directory's path again, so
/// whoever can write a parent of it and swaps a link in for it (or for a
/// parent) changes nothing for the sink. Names are single components.
#[derive(Debug)]
pub(crate) struct Dir {
    fd: OwnedFd,
    /// The path it was opened by, for messages only.
    path: PathBuf,
}

impl Dir {
    /// Opens the directory at `path`, creating it and its parents if
    /// missing. The path is resolved this once, links included (it is the
    /// configuration's); nothing is resolved by path afterwards.
    pub(crate) fn open(path: &Path) -> io::Result<Dir> {
        std::fs::create_dir_all(path)?;
        let fd = rustix::fs::open(
            path,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )?;
        Ok(Dir {
            fd,
            path: path.to_owned(),
        })
    }

    /// A second handle on the same directory (for another thread).
    pub(crate) fn try_clone(&self) -> io::Result<Dir> {
        Ok(Dir {
            fd: self.fd.try_clone()?,
            path: self.path.clone(),
        })
    }

    /// The path the directory was opened by (for messages: the directory
    /// may have moved since).
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Calls `f` with each name in the directory that is valid UTF-8
    /// (other names are never a sink's), `.` and `..` left out.
    pub(crate) fn each_name(&self, mut f: impl FnMut(&str)) -> io::Result<()> {
        let mut list = rustix::fs::Dir::read_from(&self.fd).map_err(|e| self.gone(e.into()))?;
        while let Some(entry) = list.read() {
            let entry = entry?;
            let Ok(name) = entry.file_name().to_str() else {
                continue;
            };
            if name != "." && name != ".." {
                f(name);
            }
        }
        Ok(())
    }

    /// What `name` is, as listed: a link is not followed.
    pub(crate) fn stat(&self, name: &str) -> io::Result<Stat> {
        let st = rustix::fs::statat(&self.fd, plain(name)?, AtFlags::SYMLINK_NOFOLLOW)?;
        Ok(stat_of(&st))
    }

    /// Opens `name` for reading if it is a regular file of this process's
    /// user with no other name; a link is not followed.
    pub(crate) fn open_regular(&self, name: &str) -> io::Result<File> {
        let file = self.open_at(name, OFlags::RDONLY, Mode(0))?;
        checked(file, true)
    }

    /// Opens `name` for appending, creating it with `mode` if missing
    /// (only then with `create_new`), if it is a regular file with no other
    /// name and, unless just created, of this process's user; a link is not
    /// followed.
    pub(crate) fn open_append(&self, name: &str, create_new: bool, mode: Mode) -> io::Result<File> {
        let create = if create_new {
            OFlags::CREATE | OFlags::EXCL
        } else {
            OFlags::CREATE
        };
        let file = self.open_at(name, OFlags::WRONLY | OFlags::APPEND | create, mode)?;
        checked(file, !create_new)
    }

    /// Creates `name` for writing with `mode`; fails with `AlreadyExists`
    /// if the name exists in any form (a link included).
    pub(crate) fn create_new(&self, name: &str, mode: Mode) -> io::Result<File> {
        let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL;
        checked(self.open_at(name, flags, mode)?, false)
    }

    fn open_at(&self, name: &str, flags: OFlags, mode: Mode) -> io::Result<File> {
        let flags = flags | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
        let perm = rustix::fs::Mode::from_raw_mode(mode.0 as _);
        match rustix::fs::openat(&self.fd, plain(name)?, flags, perm) {
            Ok(fd) => Ok(File::from(fd)),
            Err(e) => {
                let now = self
                    .stat(name)
                    .ok()
                    .map(|s| (s.kind == Kind::Link, s.kind == Kind::File));
                Err(self.gone(explain(e.into(), now)))
            }
        }
    }

    /// Renames `from` to `to`, failing with `AlreadyExists` if `to`
    /// exists in any form.
    pub(crate) fn rename_new(&self, from: &str, to: &str) -> io::Result<()> {
        let (from, to) = (plain(from)?, plain(to)?);
        #[cfg(all(
            any(target_os = "linux", target_os = "android", target_vendor = "apple"),
            not(nowait_portable)
        ))]
        {
            use rustix::fs::{renameat_with, RenameFlags};
            match renameat_with(&self.fd, from, &self.fd, to, RenameFlags::NOREPLACE) {
                // A file system that cannot: the portable way below.
                Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS) => {}
                r => return r.map_err(io::Error::from),
            }
        }
        rustix::fs::linkat(&self.fd, from, &self.fd, to, AtFlags::empty())?;
        Ok(rustix::fs::unlinkat(&self.fd, from, AtFlags::empty())?)
    }

    /// Removes the name `name` (a link is removed, never followed; a
    /// directory is not removed), if it still names the file `id`: a
    /// name swapped since it was checked is left alone (`NotFound` if it is
    /// gone). Between the check and the removal the name can still change
    /// hands where others may rename in the directory (no sticky bit); then
    /// what goes is a name they could have removed themselves.
    pub(crate) fn remove(&self, name: &str, id: FileId) -> io::Result<()> {
        let now = self.stat(name)?;
        if now.id != id {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the name was given to another file since it was checked (left alone)",
            ));
        }
        Ok(rustix::fs::unlinkat(
            &self.fd,
            plain(name)?,
            AtFlags::empty(),
        )?)
    }

    /// Points the symbolic link `link` at `target` (a name in this
    /// directory), replacing what `link` was atomically: a new link at
    /// `tmp` (which must not exist; `symlinkat` never follows or replaces a
    /// name), then renamed over `link`. A failed rename removes `tmp`. The
    /// caller checks that `link` is no file of anyone's before.
    pub(crate) fn replace_link(&self, target: &str, tmp: &str, link: &str) -> io::Result<()> {
        let (tmp, link) = (plain(tmp)?, plain(link)?);
        rustix::fs::symlinkat(target, &self.fd, tmp).map_err(|e| self.gone(e.into()))?;
        rustix::fs::renameat(&self.fd, tmp, &self.fd, link).map_err(|e| {
            let _ = rustix::fs::unlinkat(&self.fd, tmp, AtFlags::empty());
            io::Error::from(e)
        })
    }

    /// Removes a symbolic link `name` left by a run cut short (anything
    /// else there stays).
    pub(crate) fn remove_link(&self, name: &str) -> io::Result<()> {
        let st = self.stat(name)?;
        if st.kind != Kind::Link {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "not a symbolic link",
            ));
        }
        self.remove(name, st.id)
    }

    /// `e`, or where it says a name is missing because the directory
    /// itself was removed, an error that says so and what its path leads
    /// to now (which the sink never follows).
    fn gone(&self, e: io::Error) -> io::Error {
        if e.kind() != io::ErrorKind::NotFound
            || !rustix::fs::fstat(&self.fd).is_ok_and(|st| st.st_nlink == 0)
        {
            return e;
        }
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let now = match rustix::fs::open(&self.path, flags, rustix::fs::Mode::empty()) {
            Ok(_) => "another directory, not followed".to_owned(),
            Err(rustix::io::Errno::LOOP) => "a symbolic link, not followed".to_owned(),
            Err(e) => io::Error::from(e).to_string(),
        };
        io::Error::new(
            io::ErrorKind::NotFound,
            format!(
                "the directory the sink opened was removed; its path {} now: {now}",
                self.path.display()
            ),
        )
    }
}

/// `name` if it is one plain component (no `/`, not `.` or `..`, not
/// empty), else `InvalidInput`: a step through a [`Dir`] never leaves it.
fn plain(name: &str) -> io::Result<&str> {
    if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\0']) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{name:?} is not a plain file name"),
        ));
    }
    Ok(name)
}

/// A `stat` as [`Stat`]. The field types differ between systems (and
/// between rustix's backends), hence the casts.
#[allow(clippy::unnecessary_cast, clippy::useless_conversion)]
fn stat_of(st: &rustix::fs::Stat) -> Stat {
    let kind = match rustix::fs::FileType::from_raw_mode(st.st_mode as _) {
        rustix::fs::FileType::RegularFile => Kind::File,
        rustix::fs::FileType::Symlink => Kind::Link,
        rustix::fs::FileType::Directory => Kind::Dir,
        _ => Kind::Other,
    };
    let (secs, nanos) = (st.st_mtime as i64, st.st_mtime_nsec as u32);
    let modified = if secs >= 0 {
        UNIX_EPOCH.checked_add(Duration::new(secs as u64, nanos))
    } else {
        UNIX_EPOCH.checked_sub(Duration::from_secs(secs.unsigned_abs()))
    };
    Stat {
        kind,
        mine: st.st_uid as u32 == rustix::process::geteuid().as_raw(),
        links: st.st_nlink as u64,
        len: u64::try_from(st.st_size as i64).unwrap_or(0),
        modified,
        mode: st.st_mode as u32 & 0o7777,
        id: (st.st_dev as u64, st.st_ino as u64),
    }
}

/// Whether an error from [`replace_link`] will come back at every try
/// whatever the directory holds (never on Unix).
pub(crate) fn links_unsupported(_e: &io::Error) -> bool {
    false
}

/// Why an open failed, in words where the name is not a regular file
/// (`now`: whether it is a link, whether a regular file, as listed after
/// the failure): systems say `ELOOP`, `EMLINK` or `EFTYPE` for a link with
/// `O_NOFOLLOW`, `ENXIO` for a FIFO without a reader with `O_NONBLOCK`.
fn explain(e: io::Error, now: Option<(bool, bool)>) -> io::Error {
    if e.kind() == io::ErrorKind::AlreadyExists {
        return e;
    }
    let why = match now {
        Some((true, _)) => "a symbolic link, not followed",
        Some((false, false)) => "not a regular file",
        _ => return e,
    };
    io::Error::new(io::ErrorKind::InvalidInput, why)
}

/// `file` if it is a regular file with one name (and with `owned`, of this
/// process's effective user), with `O_NONBLOCK` cleared.
fn checked(file: File, owned: bool) -> io::Result<File> {
    let meta = file.metadata()?;
    let refuse = |why: String| Err(io::Error::new(io::ErrorKind::InvalidInput, why));
    if !meta.file_type().is_file() {
        return refuse("not a regular file".into());
    }
    if meta.nlink() != 1 {
        return refuse(format!(
            "a file with {} names (hard links), not only ours",
            meta.nlink()
        ));
    }
    let me = rustix::process::geteuid().as_raw();
    if owned && meta.uid() != me {
        return refuse(format!(
            "a file of user {}, not of this process's user {me}",
            meta.uid()
        ));
    }
    let flags = rustix::fs::fcntl_getfl(&file)?;
    rustix::fs::fcntl_setfl(&file, flags - OFlags::NONBLOCK)?;
    Ok(file)
}
