//! File sinks ([`Sink::file`], [`Sink::rolling`]): a path opened for
//! appending, its parent directories created, written as its file type
//! says (a regular file with blocking writes; a terminal, FIFO or device
//! found at the path without blocking, as [`terminal`](super::terminal)
//! does); a rolling sink's current file (see [`crate::rolling`]). The
//! writer notices a renamed or deleted file and reopens its path.
//!
//! [`Sink::file`]: crate::sink::Sink::file
//! [`Sink::rolling`]: crate::sink::Sink::rolling

use std::fs;
use std::io;
use std::path::Path;

use super::{Opened, Output, Sink, Target};
use crate::durable::SinkFiles;
use crate::sys;

/// The files of the file sinks among `sinks`, each with its sink's buffer
/// size: what a crash-durable ring mirrors, and the only files its
/// recovery may complete.
pub(crate) fn durable_files(sinks: &[Sink]) -> Vec<(SinkFiles<'_>, usize)> {
    (sinks.iter())
        .filter_map(|s| match &s.target {
            Target::File(p) => Some((SinkFiles::File(p), s.buffer_size)),
            Target::Rolling(r) => Some((SinkFiles::Rolling(r), s.buffer_size)),
            _ => None,
        })
        .collect()
}

/// Opens `path` for appending, creating it and its parent directories, and
/// picks how to write it from its file type.
pub(super) fn open_path(path: &Path) -> io::Result<Opened> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent)?;
    }
    Opened::from_sys(sys::open_path(path)?, Some(path))
}

/// Opens a rolling sink's current file (see [`crate::rolling`]).
pub(super) fn open_rolling(rolling: &crate::rolling::Rolling) -> io::Result<Opened> {
    let file = crate::rolling::file::RollingFile::open(rolling)?;
    Ok(Opened::new(Output::Rolling(Box::new(file)), false))
}

/// For a file sink, whether the path now names another file (rotated) or
/// none (deleted); if so, or if `force`, reopens it. Returns `Ok(true)`
/// after a reopen. Called through [`Output::reopen_if_moved`], which
/// guards it.
pub(super) fn reopen_if_moved(output: &mut Output, force: bool) -> io::Result<bool> {
    let Output::File {
        file,
        path: Some(path),
        identity,
    } = output
    else {
        return Ok(false);
    };
    // Windows keeps a deleted file's name until its last handle is
    // closed ("delete pending"): the name may still open (Wine) or not
    // (Windows), and ours must be closed before it can be created
    // again. Asking our own handle covers both.
    let deleted = sys::is_deleted(file);
    let moved = deleted
        || match sys::path_id(path) {
            Ok(id) => id != *identity,
            Err(e) if e.kind() == io::ErrorKind::NotFound => true,
            Err(e) => return Err(e),
        };
    if !moved && !force {
        return Ok(false);
    }
    let path = path.clone();
    if deleted {
        // Closing the deleted file frees its name. If the path cannot
        // be opened after that, the sink fails for good: its file is
        // gone either way.
        *output = Output::Gone(format!(
            "{} was deleted and cannot be created again",
            path.display()
        ));
    }
    *output = open_path(&path)?.output;
    Ok(true)
}

// Unix only: FIFOs and /dev/null are Unix files.
#[cfg(all(test, unix, not(miri)))]
mod tests {
    use super::*;
    use std::fs::OpenOptions;
    use std::os::unix::fs::OpenOptionsExt;

    #[test]
    fn file_sink_on_a_fifo_or_terminal_is_not_a_blocking_file() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        // mkfifo(1): rustix has no FIFO call on macOS.
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success(), "mkfifo: {made}");
        // No reader: a clear error instead of an open that waits forever.
        let err = open_path(&fifo).unwrap_err();
        assert!(err.to_string().contains("a FIFO without a reader"), "{err}");
        // With a reader: non-blocking, and a pipe.
        let _reader = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(&fifo)
            .unwrap();
        let opened = open_path(&fifo).unwrap();
        assert!(matches!(
            opened.output,
            Output::NonBlocking { pipe: true, .. }
        ));
        assert!(!opened.output.may_block());
        // /dev/null is a character device: non-blocking too.
        let null = open_path(Path::new("/dev/null")).unwrap();
        assert!(!null.output.may_block());
        // A directory is an error.
        assert!(open_path(dir.path()).is_err());
    }
}
