//! Files in a directory others may write (a rolling sink's), on Windows.
//!
//! Every open passes `FILE_FLAG_OPEN_REPARSE_POINT`, so that a symbolic
//! link or junction is opened itself instead of what it points to, and is
//! then refused; so is a directory, and a file with other names (hard
//! links), from `GetFileInformationByHandle` on the opened handle. New
//! files are created with `CREATE_NEW` (which fails on any existing name)
//! and renamed into place with `MoveFileExW` without
//! `MOVEFILE_REPLACE_EXISTING`, which never replaces a name.
//!
//! Windows has no permission bits: a new file gets the access control
//! list its directory passes on, as every other file created there
//! ([`Mode`] carries nothing). Nor is there an owner check before
//! appending: the directory's list decides who can create files there.

use std::ffi::OsStr;
use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::windows::ffi::OsStrExt;
use std::os::windows::fs::OpenOptionsExt;
use std::path::Path;

use windows_sys::Win32::Storage::FileSystem::{
    MoveFileExW, FILE_ATTRIBUTE_DIRECTORY, FILE_ATTRIBUTE_REPARSE_POINT,
    FILE_FLAG_OPEN_REPARSE_POINT, FILE_SHARE_DELETE, FILE_SHARE_READ, FILE_SHARE_WRITE,
};

/// The access a new file gets: what its directory passes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mode;

impl Mode {
    /// For a file that replaces none.
    pub(crate) const NEW: Mode = Mode;

    /// As for any new file: Windows has no bits to carry over.
    pub(crate) fn of(_meta: &Metadata) -> Mode {
        Mode
    }
}

/// Shared so that the file can be renamed or deleted while open.
const SHARE_ALL: u32 = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;

/// Opens `path` for reading if it is a regular file with no other name;
/// a reparse point (symbolic link, junction) is not followed.
pub(crate) fn open_regular(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .share_mode(SHARE_ALL)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
        .open(path)?;
    checked(file)
}

/// Opens `path` for appending, creating it if missing (only then with
/// `create_new`), if it is a regular file with no other name; a reparse
/// point is not followed.
pub(crate) fn open_append(path: &Path, create_new: bool, _mode: Mode) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.append(true)
        .share_mode(SHARE_ALL)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT);
    if create_new {
        o.create_new(true);
    } else {
        o.create(true);
    }
    checked(o.open(path)?)
}

/// Creates `path` for writing; fails if the name exists in any form (a
/// link included).
pub(crate) fn create_new(path: &Path, _mode: Mode) -> io::Result<File> {
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .share_mode(SHARE_ALL)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
        .open(path)?;
    checked(file)
}

/// Renames `from` to `to`, failing with `AlreadyExists` if `to` exists
/// in any form.
pub(crate) fn rename_new(from: &Path, to: &Path) -> io::Result<()> {
    let wide = |p: &Path| -> Vec<u16> {
        OsStr::new(p)
            .encode_wide()
            .chain(std::iter::once(0))
            .collect()
    };
    let (from, to) = (wide(from), wide(to));
    // SAFETY: both are NUL-terminated UTF-16 strings that outlive the
    // call; flags 0: no replacing, no copying across volumes.
    if unsafe { MoveFileExW(from.as_ptr(), to.as_ptr(), 0) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// Points the symbolic link `link` at `target` (a name in the link's
/// directory), replacing what `link` was atomically: a new file link at
/// `tmp` (which must not exist), then renamed over `link` (`MoveFileExW`
/// with `MOVEFILE_REPLACE_EXISTING` replaces the link itself, never what
/// it points to). A failed rename removes `tmp`. The caller checks that
/// `link` is no file of anyone's before.
///
/// Creating a symbolic link needs the "Create symbolic links" privilege
/// (administrators) or Developer Mode; without it the first step fails
/// with `ERROR_PRIVILEGE_NOT_HELD` ([`links_unsupported`]).
pub(crate) fn replace_link(target: &Path, tmp: &Path, link: &Path) -> io::Result<()> {
    std::os::windows::fs::symlink_file(target, tmp)?;
    std::fs::rename(tmp, link).inspect_err(|_| {
        let _ = std::fs::remove_file(tmp);
    })
}

/// Whether an error from [`replace_link`] will come back at every try
/// whatever the directory holds: the process may not create symbolic
/// links.
pub(crate) fn links_unsupported(e: &io::Error) -> bool {
    e.raw_os_error() == Some(windows_sys::Win32::Foundation::ERROR_PRIVILEGE_NOT_HELD as i32)
}

/// `file` if it is a regular file, not a reparse point, with one name.
fn checked(file: File) -> io::Result<File> {
    let info = super::file::handle_info(&file)?;
    let why = if info.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
        "a symbolic link or other reparse point, not followed".to_owned()
    } else if info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY != 0 {
        "not a regular file".to_owned()
    } else if info.nNumberOfLinks != 1 {
        format!(
            "a file with {} names (hard links), not only ours",
            info.nNumberOfLinks
        )
    } else {
        return Ok(file);
    };
    Err(io::Error::new(io::ErrorKind::InvalidInput, why))
}

#[cfg(all(test, not(miri)))]
mod tests {
    use super::*;

    /// A hard link and a symbolic link to a file: neither is opened, and
    /// neither name is created over or renamed over.
    #[test]
    fn links_are_neither_opened_nor_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("target");
        std::fs::write(&target, b"theirs\n").unwrap();
        let hard = dir.path().join("hard");
        std::fs::hard_link(&target, &hard).unwrap();
        let err = open_regular(&hard).unwrap_err();
        assert!(err.to_string().contains("hard links"), "{err}");
        let err = open_append(&hard, false, Mode::NEW).unwrap_err();
        assert!(err.to_string().contains("hard links"), "{err}");
        let ours = dir.path().join("ours");
        drop(create_new(&ours, Mode::NEW).unwrap());
        let err = rename_new(&ours, &hard).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists, "{err}");
        let soft = dir.path().join("soft");
        // Wine 8 answers success without making the link.
        let made = std::os::windows::fs::symlink_file(&target, &soft)
            .and_then(|()| std::fs::symlink_metadata(&soft))
            .map(|m| m.file_type().is_symlink());
        if !matches!(made, Ok(true)) {
            eprintln!("SKIPPED the symbolic link: cannot make one here ({made:?})");
            return;
        }
        for err in [
            open_regular(&soft).unwrap_err(),
            open_append(&soft, false, Mode::NEW).unwrap_err(),
        ] {
            assert!(err.to_string().contains("reparse point"), "{err}");
        }
        let err = create_new(&soft, Mode::NEW).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists, "{err}");
        let err = rename_new(&ours, &soft).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists, "{err}");
        assert_eq!(std::fs::read(&target).unwrap(), b"theirs\n");
    }
}
