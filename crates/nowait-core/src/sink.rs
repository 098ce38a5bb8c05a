//! Where records go: stdout, stderr, files, any `io::Write`.
//!
//! Terminals and pipes are written without blocking, so that a stalled
//! reader never holds up the writer thread (and so never the other sinks):
//! stdout and stderr are reopened through `/proc/self/fd/N` with
//! `O_NONBLOCK`, which gives the writer its own open file description and
//! leaves the process's fd 1 and 2 (and `println!`) blocking as before.
//! Sockets are written with `MSG_DONTWAIT`. Regular files are written with
//! plain blocking `write(2)`: the kernel never makes those wait on a reader.

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, IsTerminal, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use rustix::fs::{FileType, Mode, OFlags};
use rustix::net::SendFlags;

use crate::error::BuildError;
use crate::record::MakeFormat;

/// A destination for records, configured before [`Builder::build`](crate::Builder::build).
///
/// Each sink has its own format, pending buffer and counters; one slow or
/// failing sink never delays another.
///
/// # Examples
///
/// ```
/// use nowait_core::{Builder, Sink};
///
/// let dir = tempfile::tempdir().unwrap();
/// let (logger, guard) = Builder::new()
///     .sink(Sink::stderr())
///     .sink(Sink::file(dir.path().join("logs/app.log")).buffer_size(4 << 20))
///     .build()
///     .unwrap();
/// # drop(guard);
/// ```
pub struct Sink {
    pub(crate) target: Target,
    pub(crate) buffer_size: usize,
    pub(crate) format: Option<Box<dyn MakeFormat>>,
}

pub(crate) enum Target {
    Stdout,
    Stderr,
    File(PathBuf),
    Writer(Box<dyn Write + Send>),
}

impl fmt::Debug for Sink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sink")
            .field("target", &self.target.name())
            .field("buffer_size", &self.buffer_size)
            .finish_non_exhaustive()
    }
}

/// Default bound on a sink's bytes formatted but not yet written.
pub(crate) const DEFAULT_SINK_BUFFER: usize = 1 << 20;

impl Sink {
    fn new(target: Target) -> Sink {
        Sink {
            target,
            buffer_size: DEFAULT_SINK_BUFFER,
            format: None,
        }
    }

    /// The process's standard output, written without blocking when it is a
    /// terminal, a pipe or a socket.
    ///
    /// # Examples
    ///
    /// ```
    /// let (_logger, _guard) = nowait_core::Builder::new()
    ///     .sink(nowait_core::Sink::stdout())
    ///     .build()
    ///     .unwrap();
    /// ```
    pub fn stdout() -> Sink {
        Sink::new(Target::Stdout)
    }

    /// The process's standard error, written like [`Sink::stdout`].
    ///
    /// # Examples
    ///
    /// ```
    /// let sink = nowait_core::Sink::stderr();
    /// # let _ = sink;
    /// ```
    pub fn stderr() -> Sink {
        Sink::new(Target::Stderr)
    }

    /// A file, opened for appending when the logger is built; missing parent
    /// directories are created. If the file is deleted or renamed (log
    /// rotation), the writer notices within a second and reopens the path;
    /// [`Logger::reopen`](crate::Logger::reopen) does it at once.
    ///
    /// # Examples
    ///
    /// ```
    /// let dir = tempfile::tempdir().unwrap();
    /// let sink = nowait_core::Sink::file(dir.path().join("app.log"));
    /// # let _ = sink;
    /// ```
    pub fn file(path: impl Into<PathBuf>) -> Sink {
        Sink::new(Target::File(path.into()))
    }

    /// Any writer. It is called from the writer thread only, with one
    /// `write_all` per batch; a writer that blocks delays the sinks after it,
    /// so prefer [`Sink::file`] and [`Sink::stdout`] where they fit.
    ///
    /// # Examples
    ///
    /// ```
    /// let sink = nowait_core::Sink::writer(std::io::sink());
    /// # let _ = sink;
    /// ```
    pub fn writer(writer: impl Write + Send + 'static) -> Sink {
        Sink::new(Target::Writer(Box::new(writer)))
    }

    /// Bounds the bytes formatted for this sink but not yet written
    /// (default 1 MiB). Past it, records are dropped for this sink alone,
    /// counted, and reported into it once it drains.
    ///
    /// # Examples
    ///
    /// ```
    /// let sink = nowait_core::Sink::stdout().buffer_size(256 << 10);
    /// # let _ = sink;
    /// ```
    pub fn buffer_size(mut self, bytes: usize) -> Sink {
        self.buffer_size = bytes;
        self
    }

    /// Overrides the logger's format for this sink.
    ///
    /// # Examples
    ///
    /// ```
    /// let sink = nowait_core::Sink::stdout().format(nowait_core::Plain);
    /// # let _ = sink;
    /// ```
    pub fn format(mut self, format: impl MakeFormat) -> Sink {
        self.format = Some(Box::new(format));
        self
    }

    /// Whether records for this sink must all be written (files and custom
    /// writers) rather than shown (terminals); decides the default full-ring
    /// policy.
    pub(crate) fn wants_completeness(&self) -> bool {
        matches!(self.target, Target::File(_) | Target::Writer(_))
    }
}

impl Target {
    pub(crate) fn name(&self) -> String {
        match self {
            Target::Stdout => "stdout".into(),
            Target::Stderr => "stderr".into(),
            Target::File(p) => format!("file:{}", p.display()),
            Target::Writer(_) => "writer".into(),
        }
    }
}

/// The outcome of one attempt to write.
pub(crate) enum WriteOutcome {
    /// This many bytes were written (possibly fewer than offered).
    Wrote(usize),
    /// The sink cannot take bytes now without blocking.
    WouldBlock,
    /// The sink failed.
    Failed(io::Error),
}

/// An opened sink.
pub(crate) enum Output {
    /// A regular file: blocking writes. `identity` is (device, inode) to
    /// notice rotation.
    File {
        file: File,
        path: PathBuf,
        identity: (u64, u64),
    },
    /// A terminal, pipe or character device reopened with `O_NONBLOCK`.
    NonBlocking(OwnedFd),
    /// A socket, written with `MSG_DONTWAIT`.
    Socket(OwnedFd),
    /// A file descriptor written with blocking writes (stdout redirected to a
    /// regular file, or no way to avoid blocking).
    Blocking(File),
    /// A user's writer.
    Writer(Box<dyn Write + Send>),
}

impl fmt::Debug for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Output::File { .. } => "File",
            Output::NonBlocking(_) => "NonBlocking",
            Output::Socket(_) => "Socket",
            Output::Blocking(_) => "Blocking",
            Output::Writer(_) => "Writer",
        })
    }
}

pub(crate) fn open_file(path: &Path) -> io::Result<(File, (u64, u64))> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent)?;
    }
    let file = OpenOptions::new().create(true).append(true).open(path)?;
    let meta = file.metadata()?;
    Ok((file, (meta.dev(), meta.ino())))
}

/// Opens a standard stream for writing without blocking where possible.
fn open_stdio(fd: BorrowedFd<'_>, which: u8) -> io::Result<Output> {
    let stat = rustix::fs::fstat(fd)?;
    match FileType::from_raw_mode(stat.st_mode) {
        FileType::Socket => Ok(Output::Socket(rustix::io::fcntl_dupfd_cloexec(fd, 0)?)),
        FileType::RegularFile => Ok(Output::Blocking(File::from(
            rustix::io::fcntl_dupfd_cloexec(fd, 0)?,
        ))),
        _ => {
            // A new open file description, so O_NONBLOCK does not leak into
            // the process's own fd (and make `println!` fail with EAGAIN).
            let path = format!("/proc/self/fd/{which}");
            match rustix::fs::open(
                path.as_str(),
                OFlags::WRONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY,
                Mode::empty(),
            ) {
                Ok(fd) => Ok(Output::NonBlocking(fd)),
                // No /proc, or a descriptor that cannot be reopened: stay
                // correct, if blocking.
                Err(_) => Ok(Output::Blocking(File::from(
                    rustix::io::fcntl_dupfd_cloexec(fd, 0)?,
                ))),
            }
        }
    }
}

impl Output {
    /// Opens the target. Returns the output and whether it is a terminal.
    pub(crate) fn open(target: Target) -> Result<(Output, bool), BuildError> {
        let name = target.name();
        match target {
            Target::Stdout => {
                let out = io::stdout();
                let tty = out.is_terminal();
                open_stdio(out.as_fd(), 1)
                    .map(|o| (o, tty))
                    .map_err(|e| BuildError::io(format!("cannot open {name}"), e))
            }
            Target::Stderr => {
                let err = io::stderr();
                let tty = err.is_terminal();
                open_stdio(err.as_fd(), 2)
                    .map(|o| (o, tty))
                    .map_err(|e| BuildError::io(format!("cannot open {name}"), e))
            }
            Target::File(path) => {
                let (file, identity) = open_file(&path)
                    .map_err(|e| BuildError::io(format!("cannot open {name}"), e))?;
                Ok((
                    Output::File {
                        file,
                        path,
                        identity,
                    },
                    false,
                ))
            }
            Target::Writer(w) => Ok((Output::Writer(w), false)),
        }
    }

    /// One write attempt. Blocking outputs write everything or fail.
    pub(crate) fn write(&mut self, buf: &[u8]) -> WriteOutcome {
        fn from_rustix(r: rustix::io::Result<usize>) -> WriteOutcome {
            match r {
                Ok(n) => WriteOutcome::Wrote(n),
                Err(rustix::io::Errno::AGAIN) => WriteOutcome::WouldBlock,
                Err(e) => WriteOutcome::Failed(e.into()),
            }
        }
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
        match self {
            Output::NonBlocking(fd) => loop {
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
            Output::Blocking(file) | Output::File { file, .. } => write_all(file, buf),
            Output::Writer(w) => {
                // A panicking user writer must not take the writer thread
                // (and every other sink) down with it.
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| write_all(w, buf)))
                    .unwrap_or_else(|_| {
                        WriteOutcome::Failed(io::Error::new(
                            io::ErrorKind::BrokenPipe,
                            "the sink's writer panicked",
                        ))
                    })
            }
        }
    }

    /// Flushes user writers (files and fds have no user-space buffer).
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        match self {
            Output::Writer(w) => {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| w.flush())).unwrap_or_else(
                    |_| {
                        Err(io::Error::new(
                            io::ErrorKind::BrokenPipe,
                            "the sink's writer panicked",
                        ))
                    },
                )
            }
            _ => Ok(()),
        }
    }

    /// For a file sink, whether the path now names another file (rotated) or
    /// none (deleted); if so, reopens it. Returns `Ok(true)` after a reopen.
    pub(crate) fn reopen_if_moved(&mut self, force: bool) -> io::Result<bool> {
        let Output::File {
            file,
            path,
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
        let (new_file, new_identity) = open_file(path)?;
        *file = new_file;
        *identity = new_identity;
        Ok(true)
    }
}
