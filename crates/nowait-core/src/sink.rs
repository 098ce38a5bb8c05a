//! Where records go, as configured: stdout, stderr, files, any `io::Write`.
//! The opened form is in [`output`](crate::output).

use std::fmt;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

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
    pub(crate) format: Option<Arc<dyn MakeFormat>>,
}

pub(crate) enum Target {
    Stdout,
    Stderr,
    File(PathBuf),
    Rolling(crate::rolling::Rolling),
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
    /// stdout is reopened through `/proc/self/fd/1` with `O_NONBLOCK`, which
    /// gives the writer its own open file description and leaves the
    /// process's fd 1 (and `println!`) blocking as before; sockets are
    /// written with `MSG_DONTWAIT`; a regular file with plain writes. Where
    /// the reopen fails (no `/proc`, `EACCES` after a privilege drop, `ENXIO`
    /// on a FIFO without a reader) the writer keeps a blocking copy of the
    /// descriptor and writes to it only when `poll` reports room, at most
    /// `PIPE_BUF` (4 KiB) at a time, so a stalled reader still cannot block
    /// it; the fallback is reported once in the output and in
    /// [`SinkStats::non_blocking`](crate::SinkStats::non_blocking).
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
    /// The path's file type is checked when it is opened: a path that is
    /// really a terminal, a FIFO or a character device (`/dev/stdout`,
    /// `/dev/tty`, a named pipe) is written without blocking, like
    /// [`Sink::stdout`], and does not count as a file for the default
    /// [`FullPolicy`](crate::FullPolicy); a FIFO without a reader is a
    /// [`BuildError`](crate::BuildError) (`ENXIO`).
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

    /// Rolling files: a new file per minute, hour or day and/or past a
    /// size, the oldest removed, rotated ones gzipped if asked for; see
    /// [`Rolling`](crate::Rolling) for names, timing and failures. The
    /// migration from tracing-appender is one line:
    /// `tracing_appender::rolling::daily(dir, "app.log")` becomes
    /// `Sink::rolling(Rolling::daily(dir, "app.log"))`.
    ///
    /// The sink is named `rolling:DIR/PATTERN` (`rolling:/var/log/app.log.YYYY-MM-DD`).
    /// Its files are checked for renames and deletions like
    /// [`Sink::file`]'s, and [`Logger::reopen`](crate::Logger::reopen)
    /// reopens the current one.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::{Builder, Rolling, Sink};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let (logger, guard) = Builder::new()
    ///     .sink(Sink::rolling(Rolling::daily(dir.path(), "app.log").max_log_files(7)))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(
    ///     logger.stats().sinks[0].name,
    ///     format!("rolling:{}/app.log.YYYY-MM-DD", dir.path().display())
    /// );
    /// # drop(guard);
    /// ```
    pub fn rolling(rolling: crate::rolling::Rolling) -> Sink {
        Sink::new(Target::Rolling(rolling))
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
        self.format = Some(Arc::new(format));
        self
    }
}

impl Target {
    pub(crate) fn name(&self) -> String {
        match self {
            Target::Stdout => "stdout".into(),
            Target::Stderr => "stderr".into(),
            Target::File(p) => format!("file:{}", p.display()),
            Target::Rolling(r) => format!("rolling:{}", r.pattern()),
            Target::Writer(_) => "writer".into(),
        }
    }
}
