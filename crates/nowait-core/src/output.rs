//! Sinks as the writer thread holds them: opened, typed, written.
//!
//! Terminals, pipes, FIFOs and character devices are written without
//! blocking (`O_NONBLOCK` on an open file description of the writer's own),
//! so that a stalled reader never holds up the writer thread and so never
//! the other sinks; sockets are written with `MSG_DONTWAIT`. Regular files
//! and users' writers are written with blocking calls: the kernel never
//! makes a regular file wait on a reader, and the writer thread marks those
//! calls (see `consumer::IN_IO`) so that a shutdown can still end in time if
//! one hangs (a dead NFS server).

use std::fs::{self, File, OpenOptions};
use std::io::{self, IsTerminal, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use rustix::fs::{FileType, Mode, OFlags};
use rustix::net::SendFlags;

mod net;

pub(crate) use net::{Datagram, Peer, Sent, Stream};

/// The outcome of one attempt to write.
pub(crate) enum WriteOutcome {
    /// This many bytes were written (possibly fewer than offered).
    Wrote(usize),
    /// The sink cannot take bytes now without blocking.
    WouldBlock,
    /// The sink failed.
    Failed(io::Error),
    /// The receiver refuses this one record for good (a datagram too
    /// large): drop it, keep going.
    Rejected(io::Error),
}

/// An opened sink.
pub(crate) enum Output {
    /// A regular file: blocking writes. `path` and `identity` (device,
    /// inode) let the writer notice rotation; stdout redirected to a file
    /// has no path.
    File {
        file: File,
        path: Option<PathBuf>,
        identity: (u64, u64),
    },
    /// A terminal, pipe, FIFO or character device opened with `O_NONBLOCK`.
    /// `pipe`: a pipe or FIFO, whose free room can be asked for.
    NonBlocking { fd: OwnedFd, pipe: bool },
    /// A socket, written with `MSG_DONTWAIT`.
    Socket(OwnedFd),
    /// A TCP or Unix stream connection made by nowait ([`Sink::tcp`],
    /// [`Sink::unix`]): connects without waiting, reconnects after a
    /// failure.
    ///
    /// [`Sink::tcp`]: crate::Sink::tcp
    /// [`Sink::unix`]: crate::Sink::unix
    Stream(Stream),
    /// A Unix datagram socket ([`Sink::unix_datagram`]): one record per
    /// datagram.
    ///
    /// [`Sink::unix_datagram`]: crate::Sink::unix_datagram
    Datagram(Datagram),
    /// A terminal or pipe that could not be made non-blocking: written only
    /// when `poll` reports room, at most [`POLLED_CHUNK`] bytes at a time.
    Polled(File),
    /// A rolling file (blocking writes, rotated by the writer between
    /// records).
    Rolling(Box<crate::rolling::file::RollingFile>),
    /// A user's writer.
    Writer(Box<dyn Write + Send>),
    /// A sink that cannot be had (a custom writer in a forked child): every
    /// write fails for good with this reason.
    Gone(String),
}

/// At most this much per write to a [`Output::Polled`] descriptor: a write
/// of up to `PIPE_BUF` bytes to a pipe that `poll` reported writable never
/// blocks.
const POLLED_CHUNK: usize = 4096;

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Output::File { .. } => "File",
            Output::NonBlocking { .. } => "NonBlocking",
            Output::Socket(_) => "Socket",
            Output::Stream(_) => "Stream",
            Output::Datagram(_) => "Datagram",
            Output::Polled(_) => "Polled",
            Output::Rolling(_) => "Rolling",
            Output::Writer(_) => "Writer",
            Output::Gone(_) => "Gone",
        })
    }
}

/// An output and what the writer and the formats need to know about it.
#[derive(Debug)]
pub(crate) struct Opened {
    pub(crate) output: Output,
    /// A terminal (for ANSI colours).
    pub(crate) terminal: bool,
    /// Why a terminal or pipe is written with blocking calls, if it is.
    pub(crate) fallback: Option<String>,
}

impl Opened {
    pub(crate) fn new(output: Output, terminal: bool) -> Opened {
        Opened {
            output,
            terminal,
            fallback: None,
        }
    }
}

fn is_pipe(ft: FileType) -> bool {
    ft == FileType::Fifo
}

/// Opens `path` for appending, creating it and its parent directories, and
/// picks how to write it from its file type.
pub(crate) fn open_path(path: &Path) -> io::Result<Opened> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent)?;
    }
    // O_NONBLOCK from the start: opening a FIFO for writing would otherwise
    // wait for a reader (with it, no reader is ENXIO).
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ENXIO) => io::Error::new(
                e.kind(),
                format!("{e}: a FIFO without a reader (open its read end first)"),
            ),
            _ => e,
        })?;
    let meta = file.metadata()?;
    let ft = FileType::from_raw_mode(meta.mode());
    match ft {
        FileType::RegularFile => {
            // Regular files ignore O_NONBLOCK; clear it for clarity.
            let flags = rustix::fs::fcntl_getfl(&file)?;
            rustix::fs::fcntl_setfl(&file, flags - OFlags::NONBLOCK)?;
            Ok(Opened::new(
                Output::File {
                    file,
                    path: Some(path.to_owned()),
                    identity: (meta.dev(), meta.ino()),
                },
                false,
            ))
        }
        FileType::Directory => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "is a directory",
        )),
        FileType::Socket => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "is a socket (not supported as a file sink)",
        )),
        _ => {
            let terminal = file.is_terminal();
            Ok(Opened::new(
                Output::NonBlocking {
                    fd: OwnedFd::from(file),
                    pipe: is_pipe(ft),
                },
                terminal,
            ))
        }
    }
}

/// Opens a rolling sink's current file (see [`crate::rolling`]).
pub(crate) fn open_rolling(rolling: &crate::rolling::Rolling) -> io::Result<Opened> {
    let file = crate::rolling::file::RollingFile::open(rolling)?;
    Ok(Opened::new(Output::Rolling(Box::new(file)), false))
}

/// Opens standard output (1) or error (2) for writing without blocking
/// where possible.
pub(crate) fn open_stdio(which: u8) -> io::Result<Opened> {
    let (fd, terminal) = match which {
        1 => (
            io::stdout().as_fd().try_clone_to_owned()?,
            io::stdout().is_terminal(),
        ),
        _ => (
            io::stderr().as_fd().try_clone_to_owned()?,
            io::stderr().is_terminal(),
        ),
    };
    open_fd(fd.as_fd(), &format!("/proc/self/fd/{which}"), terminal)
}

/// Opens a descriptor the process already has. `reopen_path` names it in
/// `/proc` so that it can be reopened with a private open file description.
fn open_fd(fd: BorrowedFd<'_>, reopen_path: &str, terminal: bool) -> io::Result<Opened> {
    let stat = rustix::fs::fstat(fd)?;
    let ft = FileType::from_raw_mode(stat.st_mode);
    match ft {
        FileType::Socket => Ok(Opened::new(
            Output::Socket(rustix::io::fcntl_dupfd_cloexec(fd, 0)?),
            terminal,
        )),
        FileType::RegularFile => Ok(Opened::new(
            Output::File {
                file: File::from(rustix::io::fcntl_dupfd_cloexec(fd, 0)?),
                path: None,
                identity: (stat.st_dev, stat.st_ino),
            },
            false,
        )),
        _ => {
            // A new open file description, so O_NONBLOCK does not leak into
            // the process's own fd (and make `println!` fail with EAGAIN).
            match rustix::fs::open(
                reopen_path,
                OFlags::WRONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
                Mode::empty(),
            ) {
                Ok(own) => Ok(Opened::new(
                    Output::NonBlocking {
                        fd: own,
                        pipe: is_pipe(ft),
                    },
                    terminal,
                )),
                Err(e) => {
                    let mut opened = Opened::new(
                        Output::Polled(File::from(rustix::io::fcntl_dupfd_cloexec(fd, 0)?)),
                        terminal,
                    );
                    opened.fallback = Some(format!(
                        "cannot reopen it without blocking ({reopen_path}: {})",
                        io::Error::from(e)
                    ));
                    Ok(opened)
                }
            }
        }
    }
}

/// Writes `buf` to a blocking writer, retrying `EINTR` and short writes.
fn write_all(w: &mut impl Write, buf: &[u8]) -> WriteOutcome {
    let mut done = 0;
    while done < buf.len() {
        match w.write(&buf[done..]) {
            Ok(0) => {
                return if done > 0 {
                    WriteOutcome::Wrote(done)
                } else {
                    WriteOutcome::Failed(io::ErrorKind::WriteZero.into())
                }
            }
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                return if done > 0 {
                    WriteOutcome::Wrote(done)
                } else {
                    WriteOutcome::WouldBlock
                }
            }
            Err(e) => {
                return if done > 0 {
                    WriteOutcome::Wrote(done)
                } else {
                    WriteOutcome::Failed(e)
                }
            }
        }
    }
    WriteOutcome::Wrote(done)
}

fn from_rustix(r: rustix::io::Result<usize>) -> WriteOutcome {
    match r {
        Ok(n) => WriteOutcome::Wrote(n),
        Err(rustix::io::Errno::AGAIN) => WriteOutcome::WouldBlock,
        Err(e) => WriteOutcome::Failed(e.into()),
    }
}

fn from_sent(sent: Sent) -> WriteOutcome {
    match sent {
        Sent::Wrote(n) => WriteOutcome::Wrote(n),
        Sent::WouldBlock => WriteOutcome::WouldBlock,
        Sent::Failed(e) => WriteOutcome::Failed(e),
        Sent::Rejected(e) => WriteOutcome::Rejected(e),
    }
}

/// A user's writer's panic, as the error the sink fails with.
fn panicked() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "the sink's writer panicked")
}

impl Output {
    /// Whether a write can block the writer thread (files, user writers,
    /// and the poll-guarded fallback, whose reader could race the poll).
    pub(crate) fn may_block(&self) -> bool {
        matches!(
            self,
            Output::File { .. } | Output::Rolling(_) | Output::Writer(_) | Output::Polled(_)
        )
    }

    /// The descriptor to poll for `POLLOUT` while the sink is blocked.
    pub(crate) fn poll_fd(&self) -> Option<BorrowedFd<'_>> {
        match self {
            Output::NonBlocking { fd, .. } | Output::Socket(fd) => Some(fd.as_fd()),
            Output::Polled(f) => Some(f.as_fd()),
            Output::Stream(s) => s.poll_fd(),
            Output::Datagram(d) => d.poll_fd(),
            _ => None,
        }
    }

    /// Whether a failure is always worth a retry (a receiver that went away
    /// may come back: the output connects again), even `EPIPE` or
    /// `ECONNRESET`, which are final for an inherited descriptor.
    pub(crate) fn reconnects(&self) -> bool {
        matches!(self, Output::Stream(_) | Output::Datagram(_))
    }

    /// Whether each write must be exactly one record (datagrams).
    pub(crate) fn per_record(&self) -> bool {
        matches!(self, Output::Datagram(_))
    }

    /// Free room in bytes, where the kernel can tell (pipes and FIFOs).
    pub(crate) fn room(&self) -> Option<usize> {
        let Output::NonBlocking { fd, pipe: true } = self else {
            return None;
        };
        let size = rustix::pipe::fcntl_getpipe_size(fd).ok()?;
        let queued = rustix::io::ioctl_fionread(fd).ok()? as usize;
        Some(size.saturating_sub(queued))
    }

    /// One write attempt. Blocking outputs write everything or fail.
    pub(crate) fn write(&mut self, buf: &[u8]) -> WriteOutcome {
        match self {
            Output::NonBlocking { fd, .. } => loop {
                match rustix::io::write(&*fd, buf) {
                    Err(rustix::io::Errno::INTR) => continue,
                    r => return from_rustix(r),
                }
            },
            Output::Socket(fd) => loop {
                match rustix::net::send(&*fd, buf, SendFlags::DONTWAIT | SendFlags::NOSIGNAL) {
                    Err(rustix::io::Errno::INTR) => continue,
                    r => return from_rustix(r),
                }
            },
            Output::Stream(s) => from_sent(s.write(buf)),
            Output::Datagram(d) => from_sent(d.write(buf)),
            Output::Polled(file) => {
                let mut pfd = [rustix::event::PollFd::new(
                    file,
                    rustix::event::PollFlags::OUT,
                )];
                let zero = rustix::time::Timespec {
                    tv_sec: 0,
                    tv_nsec: 0,
                };
                match rustix::event::poll(&mut pfd, Some(&zero)) {
                    Ok(0) => WriteOutcome::WouldBlock,
                    Ok(_) => {
                        let n = buf.len().min(POLLED_CHUNK);
                        loop {
                            match rustix::io::write(&*file, &buf[..n]) {
                                Err(rustix::io::Errno::INTR) => continue,
                                r => return from_rustix(r),
                            }
                        }
                    }
                    Err(e) => WriteOutcome::Failed(e.into()),
                }
            }
            Output::File { file, .. } => write_all(file, buf),
            Output::Rolling(r) => write_all(&mut **r, buf),
            Output::Writer(w) => {
                // A panicking user writer must not take the writer thread
                // (and every other sink) down with it.
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| write_all(w, buf)))
                    .unwrap_or_else(|_| WriteOutcome::Failed(panicked()))
            }
            Output::Gone(why) => {
                WriteOutcome::Failed(io::Error::new(io::ErrorKind::BrokenPipe, why.clone()))
            }
        }
    }

    /// Flushes user writers (files and descriptors have no user-space
    /// buffer).
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::Writer(w) => {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| w.flush()))
                    .unwrap_or_else(|_| Err(panicked()))
            }
            _ => Ok(()),
        }
    }

    /// `fdatasync` for files (write-through with fsync).
    pub(crate) fn sync(&mut self) -> io::Result<()> {
        match self {
            Output::File { file, .. } => file.sync_data(),
            Output::Rolling(r) => r.sync(),
            _ => Ok(()),
        }
    }

    /// For a file sink, whether the path now names another file (rotated) or
    /// none (deleted); if so, or if `force`, reopens it. Returns `Ok(true)`
    /// after a reopen.
    pub(crate) fn reopen_if_moved(&mut self, force: bool) -> io::Result<bool> {
        let Output::File {
            file,
            path: Some(path),
            identity,
        } = self
        else {
            return Ok(false);
        };
        let moved = match fs::metadata(&*path) {
            Ok(meta) => (meta.dev(), meta.ino()) != *identity,
            Err(e) if e.kind() == io::ErrorKind::NotFound => true,
            Err(e) => return Err(e),
        };
        if !moved && !force {
            return Ok(false);
        }
        let opened = open_path(path)?;
        match opened.output {
            Output::File {
                file: new_file,
                identity: new_identity,
                ..
            } => {
                *file = new_file;
                *identity = new_identity;
                Ok(true)
            }
            other => {
                // The path now names a FIFO or terminal: write it as such.
                *self = other;
                Ok(true)
            }
        }
    }
}

#[cfg(all(test, not(miri)))]
mod tests {
    use super::*;

    fn pipe() -> (OwnedFd, OwnedFd) {
        rustix::pipe::pipe().unwrap()
    }

    #[test]
    fn polled_fallback_never_blocks_on_a_full_pipe() {
        let (_read, write) = pipe();
        let mut out = Output::Polled(File::from(write));
        let chunk = vec![b'x'; 1000];
        let mut total = 0;
        // A blocking pipe with nobody reading: without the poll guard the
        // write that finds it full would block this test forever.
        loop {
            match out.write(&chunk) {
                WriteOutcome::Wrote(n) => total += n,
                WriteOutcome::WouldBlock => break,
                WriteOutcome::Failed(e) | WriteOutcome::Rejected(e) => panic!("{e}"),
            }
            assert!(total < 16 << 20, "the pipe never filled");
        }
        assert!(total >= 4096, "{total}");
    }

    #[test]
    fn pipe_room_shrinks_as_it_fills() {
        let (_read, write) = pipe();
        rustix::fs::fcntl_setfl(&write, OFlags::NONBLOCK).unwrap();
        let mut out = Output::NonBlocking {
            fd: write,
            pipe: true,
        };
        let before = out.room().unwrap();
        assert!(matches!(out.write(b"hello\n"), WriteOutcome::Wrote(6)));
        assert_eq!(out.room().unwrap(), before - 6);
    }

    #[test]
    fn file_sink_on_a_fifo_or_terminal_is_not_a_blocking_file() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
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
