//! Files on Windows: opened so that rotation by rename and retention by
//! delete work while nowait holds them open (`FILE_SHARE_DELETE`), and
//! identified by volume serial number and file index.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::windows::fs::OpenOptionsExt;
use std::os::windows::io::AsRawHandle;
use std::path::Path;

use windows_sys::Win32::Storage::FileSystem::{
    FileStandardInfo, GetFileInformationByHandle, GetFileInformationByHandleEx,
    BY_HANDLE_FILE_INFORMATION, FILE_FLAG_BACKUP_SEMANTICS, FILE_SHARE_DELETE, FILE_SHARE_READ,
    FILE_SHARE_WRITE, FILE_STANDARD_INFO,
};

use crate::sys::Open;

/// What names a file whatever its path: (volume serial, file index).
pub(crate) type FileId = (u64, u64);

const SHARE_ALL: u32 = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;

/// What Windows says of an open file: attributes, link count, identity.
pub(super) fn handle_info(file: &File) -> io::Result<BY_HANDLE_FILE_INFORMATION> {
    let mut info = BY_HANDLE_FILE_INFORMATION {
        dwFileAttributes: 0,
        ftCreationTime: Default::default(),
        ftLastAccessTime: Default::default(),
        ftLastWriteTime: Default::default(),
        dwVolumeSerialNumber: 0,
        nFileSizeHigh: 0,
        nFileSizeLow: 0,
        nNumberOfLinks: 0,
        nFileIndexHigh: 0,
        nFileIndexLow: 0,
    };
    // SAFETY: the handle is open for the duration of the call (borrowed
    // from `file`), and `info` is a valid, writable structure of the type
    // the call fills.
    let ok = unsafe { GetFileInformationByHandle(file.as_raw_handle(), &mut info) };
    if ok == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(info)
}

/// The identity of an open file.
pub(crate) fn file_id(file: &File) -> io::Result<FileId> {
    let info = handle_info(file)?;
    Ok((
        u64::from(info.dwVolumeSerialNumber),
        (u64::from(info.nFileIndexHigh) << 32) | u64::from(info.nFileIndexLow),
    ))
}

/// Whether an open file was deleted ("delete pending": its name stays
/// until the last handle is closed).
pub(crate) fn is_deleted(file: &File) -> bool {
    let mut info = FILE_STANDARD_INFO {
        AllocationSize: 0,
        EndOfFile: 0,
        NumberOfLinks: 0,
        DeletePending: false,
        Directory: false,
    };
    // SAFETY: the handle is open for the call (borrowed from `file`);
    // `info` is a writable `FILE_STANDARD_INFO`, whose size is passed.
    let ok = unsafe {
        GetFileInformationByHandleEx(
            file.as_raw_handle(),
            FileStandardInfo,
            (&mut info as *mut FILE_STANDARD_INFO).cast(),
            std::mem::size_of::<FILE_STANDARD_INFO>() as u32,
        )
    };
    ok != 0 && info.DeletePending
}

/// The identity of the file a path names now (opened without access
/// rights, sharing everything, so the check never gets in anyone's way).
pub(crate) fn path_id(path: &Path) -> io::Result<FileId> {
    let file = OpenOptions::new()
        .access_mode(0)
        .share_mode(SHARE_ALL)
        .custom_flags(FILE_FLAG_BACKUP_SEMANTICS)
        .open(path)?;
    file_id(&file)
}

/// Opens a regular file for appending (a rolling sink's files), sharing
/// read, write and delete, so that the file can be renamed or deleted
/// while open.
pub(crate) fn open_append(path: &Path, create_new: bool) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.append(true).share_mode(SHARE_ALL);
    if create_new {
        o.create_new(true);
    } else {
        o.create(true);
    }
    o.open(path)
}

/// Opens a file nowait only reads (a certificate or key named by the user
/// or the environment) if it is a regular file: a named pipe or device is
/// refused before anything is read from it. (Opening a pipe's name never
/// waits on Windows: a busy pipe fails at once.)
#[cfg(feature = "otlp-tls")]
pub(crate) fn open_readable(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .share_mode(SHARE_ALL)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file (a pipe, device or directory)",
        ));
    }
    Ok(file)
}

/// Opens a sink's path for appending, creating it. A regular file is
/// written with blocking calls; anything else (`NUL`, a named pipe) only
/// through a relay thread.
pub(crate) fn open_path(path: &Path) -> io::Result<Open> {
    if path.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "is a directory",
        ));
    }
    let file = open_append(path, false)?;
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "is a directory",
        ));
    }
    if meta.is_file() {
        if let Ok(id) = file_id(&file) {
            return Ok(Open::File { file, id });
        }
    }
    Ok(Open::Blocking {
        writer: Box::new(file),
        terminal: false,
        why: None,
    })
}
