//! Files in a directory others may write (a rolling sink's), on Unix.
//!
//! Whoever can write the directory can put any name there between two of
//! our calls: a symbolic link to a file only we can read or write, a hard
//! link to one, a FIFO whose open never returns. So every open here
//!
//! 1. passes `O_NOFOLLOW` (a link at the last component fails the open)
//!    and `O_NONBLOCK` (a FIFO without a reader fails instead of waiting;
//!    the flag is cleared again on the regular file that is kept),
//! 2. checks what it opened with `fstat` on the descriptor, not on the
//!    path: a regular file with one name; to be appended to, also owned
//!    by this process's user (else whoever made it reads what we write).
//!
//! New files are created with `O_CREAT | O_EXCL` (which never follows a
//! link either) and their permission bits at creation, never widened by a
//! later `chmod`; renames into place never replace a name (`renameat2`'s
//! `RENAME_NOREPLACE`, `renamex_np`'s `RENAME_EXCL`, else `link` and
//! `unlink`).

use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

use rustix::fs::OFlags;

/// The permission bits a new file gets (the umask may narrow them more).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mode(u32);

impl Mode {
    /// For a file that replaces none: `0666`, as any file std creates.
    pub(crate) const NEW: Mode = Mode(0o666);

    /// No wider than the file `meta` describes, never executable or
    /// set-id.
    pub(crate) fn of(meta: &Metadata) -> Mode {
        Mode(meta.mode() & Mode::NEW.0)
    }
}

const FLAGS: i32 = libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY;

/// Opens `path` for reading if it is a regular file with no other name;
/// a symbolic link is not followed.
pub(crate) fn open_regular(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(FLAGS)
        .open(path)
        .map_err(|e| explain(e, path))?;
    checked(file, false)
}

/// Opens `path` for appending, creating it with `mode` if missing (only
/// then with `create_new`), if it is a regular file with no other name and,
/// unless just created, of this process's user; a symbolic link is not
/// followed.
pub(crate) fn open_append(path: &Path, create_new: bool, mode: Mode) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.append(true).mode(mode.0).custom_flags(FLAGS);
    if create_new {
        o.create_new(true);
    } else {
        o.create(true);
    }
    checked(o.open(path).map_err(|e| explain(e, path))?, !create_new)
}

/// Creates `path` for writing with `mode`; fails if the name exists in
/// any form (a link included).
pub(crate) fn create_new(path: &Path, mode: Mode) -> io::Result<File> {
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode.0)
        .custom_flags(FLAGS)
        .open(path)?;
    checked(file, false)
}

/// Renames `from` to `to`, failing with `AlreadyExists` if `to` exists
/// in any form.
pub(crate) fn rename_new(from: &Path, to: &Path) -> io::Result<()> {
    #[cfg(all(
        any(target_os = "linux", target_os = "android", target_vendor = "apple"),
        not(nowait_portable)
    ))]
    {
        use rustix::fs::{renameat_with, RenameFlags, CWD};
        match renameat_with(CWD, from, CWD, to, RenameFlags::NOREPLACE) {
            // A file system that cannot: the portable way below.
            Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOSYS) => {}
            r => return r.map_err(io::Error::from),
        }
    }
    std::fs::hard_link(from, to)?;
    std::fs::remove_file(from)
}

/// Points the symbolic link `link` at `target` (a name in the link's
/// directory), replacing what `link` was atomically: a new link at `tmp`
/// (which must not exist; `symlink` never follows or replaces a name),
/// then renamed over `link`. A failed rename removes `tmp`. The caller
/// checks that `link` is no file of anyone's before.
pub(crate) fn replace_link(target: &Path, tmp: &Path, link: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(target, tmp)?;
    std::fs::rename(tmp, link).inspect_err(|_| {
        let _ = std::fs::remove_file(tmp);
    })
}

/// Whether an error from [`replace_link`] will come back at every try
/// whatever the directory holds (never on Unix).
pub(crate) fn links_unsupported(_e: &io::Error) -> bool {
    false
}

/// Why an open failed, in words where the name is not a regular file:
/// systems say `ELOOP`, `EMLINK` or `EFTYPE` for a link with
/// `O_NOFOLLOW`, `ENXIO` for a FIFO without a reader with `O_NONBLOCK`.
fn explain(e: io::Error, path: &Path) -> io::Error {
    if e.kind() == io::ErrorKind::AlreadyExists {
        return e;
    }
    let why = match std::fs::symlink_metadata(path).map(|m| m.file_type()) {
        Ok(t) if t.is_symlink() => "a symbolic link, not followed",
        Ok(t) if !t.is_file() => "not a regular file",
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
