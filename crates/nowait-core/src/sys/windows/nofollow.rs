//! Files in a directory others may write (a rolling sink's), on Windows.
//!
//! Windows has no `openat` in its documented API, so a [`Dir`] goes by
//! path, and holds the directory open without `FILE_SHARE_DELETE` while
//! it lives: nobody can rename or remove the directory itself in the
//! meantime (a parent can still be renamed: the documented limit of this
//! fallback). Every open passes `FILE_FLAG_OPEN_REPARSE_POINT`, so that a
//! symbolic link or junction is opened itself instead of what it points
//! to, and is then refused; so is a directory, and a file with other names
//! (hard links), from `GetFileInformationByHandle` on the opened handle;
//! and, to read or append to, a file whose owner (`GetKernelObjectSecurity`
//! on the handle) is neither the process token's user nor the owner the
//! token gives new files (an administrator's files are owned by the
//! Administrators group). New files are created with `CREATE_NEW` (which
//! fails on any existing name) and renamed into place with `MoveFileExW`
//! without `MOVEFILE_REPLACE_EXISTING`, which never replaces a name.
//!
//! Windows has no permission bits: a new file gets the access control
//! list its directory passes on, as every other file created there
//! ([`Mode`] carries nothing).

use std::ffi::OsStr;
use std::fs::{File, Metadata, OpenOptions};
use std::io;
use std::os::windows::ffi::OsStrExt;
use std::os::windows::fs::OpenOptionsExt;
use std::os::windows::io::AsRawHandle;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, UNIX_EPOCH};

use windows_sys::Win32::Foundation::{CloseHandle, HANDLE};
use windows_sys::Win32::Security::{
    EqualSid, GetKernelObjectSecurity, GetLengthSid, GetSecurityDescriptorOwner,
    GetTokenInformation, TokenOwner, TokenUser, OWNER_SECURITY_INFORMATION, PSID, TOKEN_OWNER,
    TOKEN_QUERY, TOKEN_USER,
};
use windows_sys::Win32::Storage::FileSystem::{
    MoveFileExW, FILE_ATTRIBUTE_DIRECTORY, FILE_ATTRIBUTE_REPARSE_POINT,
    FILE_FLAG_BACKUP_SEMANTICS, FILE_FLAG_OPEN_REPARSE_POINT, FILE_READ_ATTRIBUTES,
    FILE_SHARE_DELETE, FILE_SHARE_READ, FILE_SHARE_WRITE, READ_CONTROL,
};
use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};

pub(crate) use crate::sys::entry::{Kind, Stat};
use crate::sys::FileId;

/// The access a new file gets: what its directory passes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Mode;

impl Mode {
    /// For a file that replaces none (the tests' and the fuzz harness's).
    #[cfg(any(test, fuzzing))]
    pub(crate) const NEW: Mode = Mode;

    /// Permission bits mean nothing here.
    pub(crate) const fn bits(_bits: u32) -> Mode {
        Mode
    }

    /// As for any new file: Windows has no bits to carry over.
    pub(crate) fn of(_meta: &Metadata) -> Mode {
        Mode
    }

    /// As for any new file.
    pub(crate) fn of_stat(_stat: &Stat) -> Mode {
        Mode
    }

    /// As for any new file.
    pub(crate) fn and(self, _other: Mode) -> Mode {
        Mode
    }
}

/// Shared so that the file can be renamed or deleted while open.
const SHARE_ALL: u32 = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;

/// Opens `path` for appending, creating it if missing (only then with
/// `create_new`), if it is a regular file with no other name and, unless
/// just created, of this process's user; a reparse point is not followed.
/// By path, for what recovery completes at build.
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
    checked(o.open(path)?, !create_new)
}

/// A directory others may write, held open (without delete sharing) so
/// that it cannot be renamed or removed while the sink runs; its names
/// are reached by path under it. Names are single components.
#[derive(Debug)]
pub(crate) struct Dir {
    path: PathBuf,
    /// Keeps the directory where it is.
    hold: File,
}

impl Dir {
    /// Opens the directory at `path`, creating it and its parents if
    /// missing.
    pub(crate) fn open(path: &Path) -> io::Result<Dir> {
        std::fs::create_dir_all(path)?;
        let hold = OpenOptions::new()
            .access_mode(FILE_READ_ATTRIBUTES)
            .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE)
            .custom_flags(FILE_FLAG_BACKUP_SEMANTICS)
            .open(path)?;
        Ok(Dir {
            path: path.to_owned(),
            hold,
        })
    }

    /// A second handle on the same directory (for another thread).
    pub(crate) fn try_clone(&self) -> io::Result<Dir> {
        Ok(Dir {
            path: self.path.clone(),
            hold: self.hold.try_clone()?,
        })
    }

    /// The directory's path.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    fn join(&self, name: &str) -> io::Result<PathBuf> {
        Ok(self.path.join(plain(name)?))
    }

    /// Calls `f` with each name in the directory that is valid UTF-8.
    pub(crate) fn each_name(&self, mut f: impl FnMut(&str)) -> io::Result<()> {
        for entry in std::fs::read_dir(&self.path)? {
            if let Ok(name) = entry?.file_name().into_string() {
                f(&name);
            }
        }
        Ok(())
    }

    /// What `name` is, as listed: a reparse point is not followed.
    pub(crate) fn stat(&self, name: &str) -> io::Result<Stat> {
        let file = OpenOptions::new()
            .access_mode(READ_CONTROL | FILE_READ_ATTRIBUTES)
            .share_mode(SHARE_ALL)
            .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT | FILE_FLAG_BACKUP_SEMANTICS)
            .open(self.join(name)?)?;
        let info = super::file::handle_info(&file)?;
        let kind = if info.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT != 0 {
            Kind::Link
        } else if info.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY != 0 {
            Kind::Dir
        } else {
            Kind::File
        };
        let written = (u64::from(info.ftLastWriteTime.dwHighDateTime) << 32)
            | u64::from(info.ftLastWriteTime.dwLowDateTime);
        // 100 ns intervals since 1601-01-01.
        const TO_UNIX: u64 = 11_644_473_600;
        let modified = (written / 10_000_000).checked_sub(TO_UNIX).and_then(|s| {
            UNIX_EPOCH.checked_add(Duration::new(s, (written % 10_000_000) as u32 * 100))
        });
        Ok(Stat {
            kind,
            mine: owned_by_me(&file)?,
            links: u64::from(info.nNumberOfLinks),
            len: (u64::from(info.nFileSizeHigh) << 32) | u64::from(info.nFileSizeLow),
            modified,
            mode: 0,
            id: super::file::file_id(&file)?,
        })
    }

    /// Opens `name` for reading if it is a regular file of this process's
    /// user with no other name; a reparse point is not followed.
    pub(crate) fn open_regular(&self, name: &str) -> io::Result<File> {
        let file = OpenOptions::new()
            .read(true)
            .share_mode(SHARE_ALL)
            .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
            .open(self.join(name)?)?;
        checked(file, true)
    }

    /// Opens `name` for appending, creating it if missing (only then with
    /// `create_new`), if it is a regular file with no other name and,
    /// unless just created, of this process's user.
    pub(crate) fn open_append(&self, name: &str, create_new: bool, mode: Mode) -> io::Result<File> {
        open_append(&self.join(name)?, create_new, mode)
    }

    /// Creates `name` for writing; fails if the name exists in any form (a
    /// link included).
    pub(crate) fn create_new(&self, name: &str, _mode: Mode) -> io::Result<File> {
        let file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .share_mode(SHARE_ALL)
            .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
            .open(self.join(name)?)?;
        checked(file, false)
    }

    /// Renames `from` to `to`, failing with `AlreadyExists` if `to`
    /// exists in any form.
    pub(crate) fn rename_new(&self, from: &str, to: &str) -> io::Result<()> {
        let wide = |p: &Path| -> Vec<u16> {
            OsStr::new(p)
                .encode_wide()
                .chain(std::iter::once(0))
                .collect()
        };
        let (from, to) = (wide(&self.join(from)?), wide(&self.join(to)?));
        // SAFETY: both are NUL-terminated UTF-16 strings that outlive the
        // call; flags 0: no replacing, no copying across volumes.
        if unsafe { MoveFileExW(from.as_ptr(), to.as_ptr(), 0) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Removes the name `name` (a link itself, never what it points to)
    /// if it still names the file `id`.
    pub(crate) fn remove(&self, name: &str, id: FileId) -> io::Result<()> {
        if self.stat(name)?.id != id {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the name was given to another file since it was checked (left alone)",
            ));
        }
        std::fs::remove_file(self.join(name)?)
    }

    /// Points the symbolic link `link` at `target` (a name in this
    /// directory), replacing what `link` was atomically: a new file link at
    /// `tmp` (which must not exist), then renamed over `link`
    /// (`MoveFileExW` with `MOVEFILE_REPLACE_EXISTING` replaces the link
    /// itself, never what it points to). A failed rename removes `tmp`.
    /// The caller checks that `link` is no file of anyone's before.
    ///
    /// Creating a symbolic link needs the "Create symbolic links"
    /// privilege (administrators) or Developer Mode; without it the first
    /// step fails with `ERROR_PRIVILEGE_NOT_HELD` ([`links_unsupported`]).
    pub(crate) fn replace_link(&self, target: &str, tmp: &str, link: &str) -> io::Result<()> {
        let (tmp, link) = (self.join(tmp)?, self.join(link)?);
        std::os::windows::fs::symlink_file(plain(target)?, &tmp)?;
        std::fs::rename(&tmp, link).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
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
}

/// Whether an error from [`Dir::replace_link`] will come back at every
/// try whatever the directory holds: the process may not create symbolic
/// links.
pub(crate) fn links_unsupported(e: &io::Error) -> bool {
    e.raw_os_error() == Some(windows_sys::Win32::Foundation::ERROR_PRIVILEGE_NOT_HELD as i32)
}

/// `name` if it is one plain component (no separator or drive, not `.`
/// or `..`, not empty), else `InvalidInput`.
fn plain(name: &str) -> io::Result<&str> {
    if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\\', ':', '\0']) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{name:?} is not a plain file name"),
        ));
    }
    Ok(name)
}

/// The SIDs a file of this process's user may be owned by: the token's
/// user, and the owner the token gives new objects (for an elevated
/// administrator, the Administrators group). Each a copy of the SID's
/// bytes, in `u64`s for the alignment a SID needs. Read once.
fn my_sids() -> &'static [Vec<u64>] {
    static SIDS: OnceLock<Vec<Vec<u64>>> = OnceLock::new();
    SIDS.get_or_init(|| {
        let mut token: HANDLE = std::ptr::null_mut();
        // SAFETY: the current process's pseudo-handle, and a place for the
        // token handle, which is closed below.
        if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) } == 0 {
            return Vec::new();
        }
        let mut sids = Vec::new();
        for class in [TokenUser, TokenOwner] {
            let mut len = 0u32;
            // SAFETY: asks for the size only (no buffer).
            unsafe { GetTokenInformation(token, class, std::ptr::null_mut(), 0, &mut len) };
            let mut buf = vec![0u64; (len as usize).div_ceil(8)];
            // SAFETY: `buf` holds `len` bytes, aligned for the structure.
            let ok = unsafe {
                GetTokenInformation(token, class, buf.as_mut_ptr().cast(), len, &mut len)
            };
            if ok == 0 {
                continue;
            }
            // SAFETY: the call filled `buf` with the class's structure,
            // whose SID pointer points into `buf`.
            let sid: PSID = unsafe {
                if class == TokenUser {
                    (*buf.as_ptr().cast::<TOKEN_USER>()).User.Sid
                } else {
                    (*buf.as_ptr().cast::<TOKEN_OWNER>()).Owner
                }
            };
            // SAFETY: a valid SID (the token's), inside `buf`.
            let n = unsafe { GetLengthSid(sid) } as usize;
            let mut copy = vec![0u64; n.div_ceil(8)];
            // SAFETY: `n` bytes from the SID into a buffer of at least `n`.
            unsafe { std::ptr::copy_nonoverlapping(sid.cast::<u8>(), copy.as_mut_ptr().cast(), n) };
            sids.push(copy);
        }
        // SAFETY: the token handle opened above, closed once.
        unsafe { CloseHandle(token) };
        sids
    })
}

/// Whether `file`'s owner is this process's user (see [`my_sids`]).
/// `file` must be open with `READ_CONTROL`, which std's read and append
/// opens include (`FILE_GENERIC_READ`, `FILE_GENERIC_WRITE`).
pub(crate) fn owned_by_me(file: &File) -> io::Result<bool> {
    let handle = file.as_raw_handle() as HANDLE;
    let mut len = 0u32;
    // SAFETY: asks for the size only (no buffer); the handle is open.
    unsafe {
        GetKernelObjectSecurity(
            handle,
            OWNER_SECURITY_INFORMATION,
            std::ptr::null_mut(),
            0,
            &mut len,
        )
    };
    if len == 0 {
        return Err(io::Error::last_os_error());
    }
    let mut sd = vec![0u64; (len as usize).div_ceil(8)];
    // SAFETY: `sd` holds `len` bytes, aligned for a security descriptor.
    let ok = unsafe {
        GetKernelObjectSecurity(
            handle,
            OWNER_SECURITY_INFORMATION,
            sd.as_mut_ptr().cast(),
            len,
            &mut len,
        )
    };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    let mut owner: PSID = std::ptr::null_mut();
    let mut defaulted = 0;
    // SAFETY: `sd` is the self-relative descriptor the call filled; the
    // owner pointer it yields points into `sd`.
    let ok =
        unsafe { GetSecurityDescriptorOwner(sd.as_mut_ptr().cast(), &mut owner, &mut defaulted) };
    if ok == 0 || owner.is_null() {
        return Ok(false);
    }
    Ok(my_sids().iter().any(|sid| {
        // SAFETY: two valid SIDs: the owner inside `sd`, and a copy of one
        // of the token's.
        unsafe { EqualSid(owner, sid.as_ptr() as PSID) != 0 }
    }))
}

/// `file` if it is a regular file, not a reparse point, with one name
/// (and with `owned`, of this process's user).
fn checked(file: File, owned: bool) -> io::Result<File> {
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
    } else if owned && !owned_by_me(&file)? {
        "a file of another user, not of this process's user".to_owned()
    } else {
        return Ok(file);
    };
    Err(io::Error::new(io::ErrorKind::InvalidInput, why))
}

#[cfg(all(test, not(miri)))]
mod tests {
    use super::*;

    /// A hard link and a symbolic link to a file: neither is opened, and
    /// neither name is created over or renamed over; a file of this
    /// process's own is its own.
    #[test]
    fn links_are_neither_opened_nor_replaced() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open(tmp.path()).unwrap();
        let target = tmp.path().join("target");
        std::fs::write(&target, b"theirs\n").unwrap();
        std::fs::hard_link(&target, tmp.path().join("hard")).unwrap();
        let err = dir.open_regular("hard").unwrap_err();
        assert!(err.to_string().contains("hard links"), "{err}");
        let err = dir.open_append("hard", false, Mode::NEW).unwrap_err();
        assert!(err.to_string().contains("hard links"), "{err}");
        drop(dir.create_new("ours", Mode::NEW).unwrap());
        let ours = dir.stat("ours").unwrap();
        assert!(ours.is_ours(), "{ours:?}");
        assert_eq!(dir.stat("hard").unwrap().links, 2);
        let err = dir.rename_new("ours", "hard").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists, "{err}");
        assert!(dir.stat("../target").is_err());
        let soft = tmp.path().join("soft");
        // Wine 8 answers success without making the link.
        let made = std::os::windows::fs::symlink_file(&target, &soft)
            .and_then(|()| std::fs::symlink_metadata(&soft))
            .map(|m| m.file_type().is_symlink());
        if !matches!(made, Ok(true)) {
            eprintln!("SKIPPED the symbolic link: cannot make one here ({made:?})");
            return;
        }
        for err in [
            dir.open_regular("soft").unwrap_err(),
            dir.open_append("soft", false, Mode::NEW).unwrap_err(),
        ] {
            assert!(err.to_string().contains("reparse point"), "{err}");
        }
        assert_eq!(dir.stat("soft").unwrap().kind, Kind::Link);
        let err = dir.create_new("soft", Mode::NEW).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists, "{err}");
        let err = dir.rename_new("ours", "soft").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists, "{err}");
        assert_eq!(std::fs::read(&target).unwrap(), b"theirs\n");
    }
}
