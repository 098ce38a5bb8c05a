//! [`Sink`]: where records go, as the user configures it before
//! `Builder::build`. Nothing here opens anything:
//! each kind's `open` is in its own file of this folder.

use std::fmt;
use std::io::Write;
use std::net::ToSocketAddrs;
use std::path::PathBuf;
use std::sync::Arc;

use super::custom::Handoff;
use super::Target;
use crate::format::MakeFormat;
use crate::format::Syslog;
use crate::level::Level;

/// A destination for records, configured before `Builder::build`.
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
    pub(super) target: Target,
    pub(super) buffer_size: usize,
    pub(super) format: Option<Arc<dyn MakeFormat>>,
    pub(super) level: Level,
    pub(super) syslog: Option<Syslog>,
    pub(super) own_thread: bool,
    pub(super) backtrace: Option<crate::sink::backtrace::BacktraceBuffer>,
    /// Target directives ([`Sink::filter`]), or why they do not parse.
    pub(super) filter: Option<Result<crate::filter::Filter, crate::filter::FilterError>>,
}

impl fmt::Debug for Sink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Sink")
            .field("target", &self.target.name())
            .field("buffer_size", &self.buffer_size)
            .field("level", &self.level)
            .field("backtrace", &self.backtrace)
            .field("filter", &self.filter)
            .finish_non_exhaustive()
    }
}

/// Default bound on a sink's bytes formatted but not yet written.
const DEFAULT_SINK_BUFFER: usize = 1 << 20;

impl Sink {
    fn new(target: Target) -> Sink {
        Sink {
            target,
            buffer_size: DEFAULT_SINK_BUFFER,
            format: None,
            level: Level::Trace,
            syslog: None,
            own_thread: false,
            backtrace: None,
            filter: None,
        }
    }

    /// The process's standard output, written without blocking when it is a
    /// terminal, a pipe or a socket.
    ///
    /// On Linux stdout is reopened through `/proc/self/fd/1` with
    /// `O_NONBLOCK`, which gives the writer its own open file description
    /// and leaves the process's fd 1 (and `println!`) blocking as before; on
    /// macOS and the BSDs a terminal is reopened the same way by its name.
    /// Sockets are written with `MSG_DONTWAIT`; a regular file with plain
    /// writes. Where no private non-blocking description can be had (a pipe
    /// on macOS or the BSDs, the Windows console or a Windows pipe, a failed
    /// reopen: `EACCES` after a privilege drop), the sink gets an I/O thread
    /// of its own that does the blocking writes, fed without waiting, so a
    /// stalled reader still cannot block the writer or the other sinks; the
    /// fallback is said once in the output.
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
    /// `Logger::reopen` does it at once.
    ///
    /// The path's file type is checked when it is opened: a path that is
    /// really a terminal, a FIFO or a character device (`/dev/stdout`,
    /// `/dev/tty`, a named pipe) is written without blocking, like
    /// [`Sink::stdout`], and does not count as a file for the default
    /// [`FullPolicy`](crate::accounting::policy::FullPolicy); a FIFO without a reader is a
    /// [`BuildError`](crate::error::BuildError) (`ENXIO`).
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

    /// A binary log file: [`Sink::file`] with the
    /// [`Binary`](crate::binary::Binary) format, which stores records'
    /// typed values compactly and renders nothing on the writer thread; read
    /// it with [`binary::Reader`](crate::binary::Reader) or `nowait cat`.
    /// For rolling binary files, give a rolling sink that format:
    /// `Sink::rolling(r).format(Binary::new())`.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::{Builder, Sink};
    ///
    /// # let dir = tempfile::tempdir()?;
    /// let (logger, guard) = Builder::new()
    ///     .sink(Sink::binary(dir.path().join("app.nwb")))
    ///     .build()?;
    /// # drop((logger, guard));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn binary(path: impl Into<PathBuf>) -> Sink {
        Sink::file(path).format(crate::binary::Binary::new())
    }

    /// Rolling files: a new file per minute, hour or day and/or past a
    /// size, the oldest removed, rotated ones gzipped if asked for; see
    /// [`Rolling`](crate::rolling::Rolling) for names, timing and failures. The
    /// migration from tracing-appender is one line:
    /// `tracing_appender::rolling::daily(dir, "app.log")` becomes
    /// `Sink::rolling(Rolling::daily(dir, "app.log"))`.
    ///
    /// The sink is named `rolling:DIR/PATTERN` (`rolling:/var/log/app.log.YYYY-MM-DD`).
    /// Its files are checked for renames and deletions like
    /// [`Sink::file`]'s, and `Logger::reopen`
    /// reopens the current one.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::{Builder, Sink};
    /// use nowait_core::sink::Rolling;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let (logger, guard) = Builder::new()
    ///     .sink(Sink::rolling(Rolling::daily(dir.path(), "app.log").max_log_files(7)))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(
    ///     logger.stats().sinks[0].name,
    ///     format!("rolling:{}", dir.path().join("app.log.YYYY-MM-DD").display())
    /// );
    /// # drop(guard);
    /// ```
    pub fn rolling(rolling: crate::rolling::Rolling) -> Sink {
        Sink::new(Target::Rolling(rolling))
    }

    /// Any writer. It is called from the writer thread only, with one
    /// `write_all` per batch; a writer that blocks delays the sinks after it
    /// (a shutdown still ends in time), unless it gets a thread of its own
    /// ([`Sink::own_thread`]). Prefer [`Sink::file`] and [`Sink::stdout`]
    /// where they fit.
    ///
    /// # Examples
    ///
    /// ```
    /// let sink = nowait_core::Sink::writer(std::io::sink());
    /// # let _ = sink;
    /// ```
    pub fn writer(writer: impl Write + Send + 'static) -> Sink {
        Sink::new(Target::Writer(Handoff::new(Box::new(writer))))
    }

    /// A TCP connection to a log receiver (Vector, Fluent Bit, an
    /// OpenTelemetry Collector, rsyslog...), one record per line in the
    /// sink's format, or syslog messages with [`Sink::syslog`].
    ///
    /// The address is resolved here, once, on the calling thread (a host
    /// name means a DNS lookup now, not later); the first address found is
    /// used for every connection, so the writer thread never resolves
    /// names. An address that does not resolve is a
    /// [`BuildError`](crate::error::BuildError) from
    /// `Builder::build`.
    ///
    /// Nothing waits on the network, not even `build`:
    ///
    /// * The connect starts in `build` with a non-blocking socket and
    ///   completes while the writer thread goes on with its other work (it
    ///   polls the socket; a connect still pending after 5 s counts as
    ///   failed). A receiver that is down when the logger is built is not
    ///   an error: the sink fails, retries, and says so in the other sinks.
    /// * Writes never block. A slow receiver fills the sink's buffer
    ///   ([`Sink::buffer_size`]), after which its records are dropped,
    ///   counted, and reported into it once it drains.
    /// * A lost connection (refused, reset, closed by the receiver) is a
    ///   failure that can be recovered from: the records wait in the
    ///   buffer (bounded, then dropped and counted), the sink reconnects
    ///   with back-off (10 ms doubling to 1 s), and once it is back it
    ///   receives a notice with the count of what it missed and for how
    ///   long it was failing.
    /// * A record cut by a lost connection goes again, whole, on the next
    ///   connection: the receiver may see its first part at the end of the
    ///   old connection, never one record merged with the next, and never a
    ///   whole record twice. Records the receiver had taken into its socket
    ///   buffer but not read when it died are lost without a count: no
    ///   sender can know of them (at most the socket buffers' size, plus
    ///   what the receiver had read and not yet stored: 1000 to 4000 short
    ///   records for an rsyslog killed with SIGKILL in our test).
    /// * As for a terminal, a flush or a shutdown does not wait for a
    ///   receiver that took no byte for 100 ms (stalled) or is failing: its
    ///   pending records are counted as abandoned or failed.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::{Builder, Sink};
    /// use nowait_core::format::Json;
    ///
    /// # let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    /// # let addr = listener.local_addr().unwrap().to_string();
    /// // e.g. addr = "127.0.0.1:9000", a Vector `socket` source in tcp mode
    /// let (logger, guard) = Builder::new()
    ///     .sink(Sink::tcp(addr.as_str()).format(Json::new()))
    ///     .build()?;
    /// # drop((logger, guard));
    /// # Ok::<(), nowait_core::BuildError>(())
    /// ```
    pub fn tcp(addr: impl ToSocketAddrs) -> Sink {
        let resolved = match addr.to_socket_addrs() {
            Ok(mut addrs) => addrs
                .next()
                .ok_or_else(|| "the name resolves to no address".to_owned()),
            Err(e) => Err(e.to_string()),
        };
        Sink::new(Target::Tcp(resolved))
    }

    /// A Unix stream socket at `path`, written like [`Sink::tcp`]: no
    /// blocking, reconnects with back-off, losses counted and reported. A
    /// path where nobody listens yet is retried, not an error. Unix only:
    /// on Windows `Builder::build` fails with a
    /// clear error.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[cfg(unix)] {
    /// let dir = tempfile::tempdir().unwrap();
    /// let _listener = std::os::unix::net::UnixListener::bind(dir.path().join("vector.sock")).unwrap();
    /// let (logger, guard) = nowait_core::Builder::new()
    ///     .sink(nowait_core::Sink::unix(dir.path().join("vector.sock")))
    ///     .build()
    ///     .unwrap();
    /// # drop((logger, guard));
    /// # }
    /// ```
    pub fn unix(path: impl Into<PathBuf>) -> Sink {
        Sink::new(Target::Unix(path.into()))
    }

    /// A Unix datagram socket at `path`, one record per datagram, without
    /// the trailing newline of the format's line, sent without blocking
    /// (a full receiver queue fills the sink's buffer, then sheds). A
    /// record larger than a datagram can be is dropped, counted and
    /// reported. A receiver that goes away is reconnected with back-off;
    /// a path that does not exist, or is not a datagram socket, when the
    /// logger is built is a [`BuildError`](crate::error::BuildError). Unix only:
    /// on Windows building such a sink fails with a clear error.
    ///
    /// # Examples
    ///
    /// ```
    /// # #[cfg(unix)] {
    /// let dir = tempfile::tempdir().unwrap();
    /// let path = dir.path().join("log.sock");
    /// let _rx = std::os::unix::net::UnixDatagram::bind(&path).unwrap();
    /// let (logger, guard) = nowait_core::Builder::new()
    ///     .sink(nowait_core::Sink::unix_datagram(&path))
    ///     .build()
    ///     .unwrap();
    /// # drop((logger, guard));
    /// # }
    /// ```
    pub fn unix_datagram(path: impl Into<PathBuf>) -> Sink {
        Sink::new(Target::UnixDatagram(path.into()))
    }

    /// An OpenTelemetry receiver over OTLP/HTTP with protobuf (the
    /// Collector, Grafana Alloy, Vector, Fluent Bit, rotel...): each record
    /// a `LogRecord` (time, observed time, severity number and text, the
    /// message as body, event and span fields as typed attributes, with
    /// `target`, `code.filepath`, `code.lineno` and `thread.name`; fields
    /// named `trace_id` and `span_id` in hex as the record's ids), sent in
    /// batched requests by the writer thread itself. Feature `otlp`.
    ///
    /// The sink's format is OTLP's whatever [`Sink::format`] says. Nothing
    /// waits on the receiver: connect, send and answer are polled with the
    /// writer's other descriptors, one request in flight (on Windows the
    /// writer polls the socket in slices of 5 ms and looks at its doorbell
    /// between them, so a flush asked during a request is seen up to 5 ms
    /// later). Records count as
    /// written when the receiver acknowledged them (a 2xx); a partial
    /// success's `rejected_log_records`, and the records of a request
    /// refused (400 and other statuses OTLP says not to retry), are dropped
    /// for good, counted in
    /// [`SinkStats::dropped_rejected`](crate::accounting::stats::SinkStats::dropped_rejected)
    /// and reported in every sink. 429, 502, 503 and 504 (honouring
    /// `Retry-After`, at most 30 s), a lost connection or no answer within
    /// [`Otlp::timeout`](crate::sink::otlp::Otlp::timeout) are failures: the same
    /// records are sent again after a back-off, while new ones wait in the
    /// sink's buffer, then are dropped and counted: a receiver down or slow
    /// sheds this sink alone. See [`Otlp`](crate::sink::otlp::Otlp) for the endpoint,
    /// resource, gzip and batch size.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::{Builder, Sink};
    /// use nowait_core::sink::Otlp;
    ///
    /// # let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    /// # let endpoint = format!("http://{}", listener.local_addr().unwrap());
    /// // e.g. endpoint = "http://127.0.0.1:4318", an OpenTelemetry Collector
    /// let (logger, guard) = Builder::new()
    ///     .sink(Sink::otlp(Otlp::new(&endpoint).service_name("checkout")))
    ///     .build()?;
    /// # drop((logger, guard));
    /// # Ok::<(), nowait_core::BuildError>(())
    /// ```
    #[cfg(feature = "otlp")]
    #[cfg_attr(docsrs, doc(cfg(feature = "otlp")))]
    pub fn otlp(otlp: crate::sink::otlp::Otlp) -> Sink {
        Sink::new(Target::Otlp(otlp))
    }

    /// The local syslog daemon: `/dev/log` as a datagram socket
    /// ([`Sink::unix_datagram`]) with RFC 5424 framing ([`Syslog::new`]:
    /// facility `user`). Where `/dev/log` does not exist (many containers)
    /// `Builder::build` fails with a
    /// [`BuildError`](crate::error::BuildError) naming it; use [`Sink::tcp`] with
    /// [`Sink::syslog`] for a remote daemon.
    ///
    /// # Examples
    ///
    /// ```
    /// let sink = nowait_core::Sink::local_syslog()
    ///     .syslog(nowait_core::format::Syslog::new().facility(nowait_core::format::Facility::Daemon));
    /// # let _ = sink;
    /// ```
    pub fn local_syslog() -> Sink {
        Sink::unix_datagram("/dev/log").syslog(Syslog::new())
    }

    /// The systemd journal: each record one journal entry in journald's
    /// native protocol (`MESSAGE`, `PRIORITY`, `SYSLOG_IDENTIFIER`,
    /// `TARGET`, `CODE_FILE`, `CODE_LINE`, span and event fields: see
    /// [`Journald`](crate::format::Journald) for every field and how names are
    /// made acceptable to journald), sent to
    /// `/run/systemd/journal/socket`. Same as
    /// `Sink::journald_with(Journald::new())`.
    ///
    /// Nothing waits on journald, and nothing is lost without a count:
    ///
    /// * Each entry is one datagram on a non-blocking socket. When
    ///   journald's queue is full (the kernel queues as few as 10
    ///   datagrams: `net.unix.max_dgram_qlen`), the writer polls the socket
    ///   for room along with its other work; the sink's buffer
    ///   ([`Sink::buffer_size`]) holds what waits, and past it the sink
    ///   sheds its records, counted in
    ///   [`SinkStats::dropped_overflow`](crate::accounting::stats::SinkStats::dropped_overflow)
    ///   and reported in the journal (an entry with `NOWAIT_NOTICE=1`) once
    ///   it drains. A flush or shutdown does not wait for a journald that
    ///   took nothing for 100 ms: its pending entries are counted abandoned.
    /// * An entry larger than a datagram can be (`EMSGSIZE`: above the
    ///   socket's send buffer, 208 KiB by default) goes through a sealed
    ///   memfd passed over the same socket, as `sd_journal_send` does.
    /// * A journald that restarts is reconnected to with back-off; what it
    ///   had queued but not read when it died is lost without a count (no
    ///   sender can know of it).
    ///
    /// journald itself may drop entries it received: its rate limit
    /// (`RateLimitIntervalSec`, `RateLimitBurst` in `journald.conf`; it
    /// then logs how many it suppressed) and its disk limits. Those losses
    /// are journald's, reported by journald.
    ///
    /// journald exists only on Linux: elsewhere (and with Linux's portable
    /// backend, `--cfg nowait_portable`) this sink compiles but
    /// `Builder::build` fails with a
    /// [`BuildError`](crate::error::BuildError) saying so; where journald does not
    /// run (no socket at the path: many containers) `build` fails too.
    ///
    /// # Examples
    ///
    /// ```no_run
    /// use nowait_core::{Builder, Sink};
    ///
    /// let (logger, _guard) = Builder::new().sink(Sink::journald()).build()?;
    /// logger.log(nowait_core::Level::Info, "started")?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn journald() -> Sink {
        Sink::journald_with(crate::format::Journald::new())
    }

    /// The systemd journal with settings ([`Journald`](crate::format::Journald)):
    /// the `SYSLOG_IDENTIFIER`, thread fields, another socket (a journald
    /// namespace's, a test's). See [`Sink::journald`].
    ///
    /// The sink's format is its `Journald`: the logger's format does not
    /// apply, and setting another with [`Sink::format`] (or
    /// [`Sink::syslog`]) makes `Builder::build`
    /// fail.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::{Builder, Sink};
    /// use nowait_core::format::Journald;
    ///
    /// let sink = Sink::journald_with(Journald::new().syslog_identifier("billing"));
    /// # let _ = sink;
    /// ```
    pub fn journald_with(journald: crate::format::Journald) -> Sink {
        let format: Arc<dyn MakeFormat> = Arc::new(journald.clone());
        let mut sink = Sink::new(Target::Journald(journald, Arc::clone(&format)));
        sink.format = Some(format);
        sink
    }

    /// Frames each line of this sink as a syslog message (RFC 5424; see
    /// [`Syslog`] for the fields): octet-counted (RFC 6587) on
    /// [`Sink::tcp`] and [`Sink::unix`], one per datagram on
    /// [`Sink::unix_datagram`], one per line elsewhere. nowait's notices
    /// are framed the same way, so a receiver sees its gaps reported.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::Sink;
    /// use nowait_core::format::Syslog;
    ///
    /// // rsyslog's imtcp, syslog-ng's syslog(), Vector's syslog source...
    /// let sink = Sink::tcp("127.0.0.1:6514").syslog(Syslog::new().app_name("web"));
    /// # let _ = sink;
    /// ```
    pub fn syslog(mut self, syslog: Syslog) -> Sink {
        self.syslog = Some(syslog);
        self
    }

    /// Bounds the bytes formatted for this sink but not yet written
    /// (default 1 MiB; between 1 KiB and 1 GiB, else
    /// `Builder::build` fails) while the sink is
    /// behind (failing, or a terminal,
    /// pipe or socket that would not take its last write). Past it,
    /// records are dropped for this sink alone, counted, and reported into
    /// it once it drains. A sink that is keeping up is never shed: between
    /// two writes its buffer may hold one chunk of the ring
    /// (`Builder::batch_size` bytes of
    /// records) formatted, which can be several times the bound.
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
    /// let sink = nowait_core::Sink::stdout().format(nowait_core::format::Plain);
    /// # let _ = sink;
    /// ```
    pub fn format(mut self, format: impl MakeFormat) -> Sink {
        self.format = Some(Arc::new(format));
        self
    }
}

impl Sink {
    /// The least severe level this sink takes (default: every level).
    /// Records below it are skipped for this sink and counted in
    /// [`SinkStats::filtered`](crate::accounting::stats::SinkStats::filtered); the other sinks
    /// still get them. Records below every sink's level are not even pushed
    /// by the front ends (see `Logger::min_level`).
    ///
    /// Loss notices (`... dropped ...`) are written to every sink whatever
    /// its level: they explain gaps.
    ///
    /// # Examples
    ///
    /// Warnings on the terminal in colour, everything from DEBUG up in a
    /// JSON file, one ring and one writer thread:
    ///
    /// ```
    /// use nowait_core::{Builder, Level, Sink};
    /// use nowait_core::format::{Json, Text};
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let (logger, _guard) = Builder::new()
    ///     .sink(Sink::stderr().level(Level::Warn).format(Text::new()))
    ///     .sink(Sink::file(dir.path().join("app.json")).level(Level::Debug).format(Json::new()))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(logger.min_level(), Level::Debug);
    /// ```
    pub fn level(mut self, level: Level) -> Sink {
        self.level = level;
        self
    }

    /// Takes only the targets and levels `directives` let through: the
    /// `RUST_LOG` syntax of [`Filter`](crate::filter::Filter)
    /// (`"my_app=debug,hyper=warn"`: DEBUG and above from `my_app`, WARN and
    /// above from `hyper`, nothing from other targets), on top of the
    /// sink's [`level`](Sink::level). Records this sink does not take are
    /// counted in its
    /// [`SinkStats::filtered`](crate::accounting::stats::SinkStats::filtered);
    /// the other sinks still get them. Lines pushed with `Logger::log`
    /// have no target: the bare level (`"warn"` in `"warn,db=debug"`)
    /// decides for them, and without one they are filtered.
    ///
    /// The writer thread applies it, so the request path does not change:
    /// a front end asks one filter, the union of every sink's filter and
    /// level, and a record that no sink wants is not even pushed (a
    /// disabled macro call site costs one load, as with the process
    /// filter). Change it at run time with `Logger::reload_sink_filter`.
    ///
    /// With a [`backtrace`](Sink::backtrace), what the sink does not take
    /// (by level or by target) is kept down to the backtrace's lowest
    /// level, whatever its target.
    ///
    /// Invalid directives make `Builder::build` fail with a
    /// [`BuildError`](crate::error::BuildError) naming the sink and the
    /// directive.
    ///
    /// # Examples
    ///
    /// Errors of every target on the terminal, the application's DEBUG
    /// records and `hyper`'s warnings in a file:
    ///
    /// ```
    /// use nowait_core::{Builder, Level, Sink};
    ///
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("app.log");
    /// let (logger, guard) = Builder::new()
    ///     .sink(Sink::writer(std::io::sink()).level(Level::Error))
    ///     .sink(Sink::file(&path).filter("my_app=debug,hyper=warn"))
    ///     .build()?;
    /// assert!(logger.enabled_for("my_app::db", Level::Debug));
    /// assert!(!logger.enabled_for("hyper::proto", Level::Info));
    /// assert!(logger.enabled_for("hyper::proto", Level::Error));
    /// # drop(guard);
    /// assert!(Builder::new().sink(Sink::stdout().filter("app=loud")).build().is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn filter(mut self, directives: &str) -> Sink {
        self.filter = Some(crate::filter::Filter::parse(directives));
        self
    }

    /// Gives a custom writer ([`Sink::writer`]) an I/O thread of its own:
    /// the writer thread hands it the formatted bytes (at most 64 KiB
    /// held) without waiting, so a writer that blocks (a network client, a
    /// hung disk) stalls this sink alone, which then sheds its own records,
    /// counted and reported, while the other sinks go on. Records count as
    /// written once the thread wrote them; flush and shutdown wait for it
    /// within their bounds, unless it took nothing for 100 ms. A writer
    /// that panics fails the sink for good, as on the writer thread. The
    /// other sinks never block the writer thread already (terminals, pipes
    /// and sockets are non-blocking or have such a thread; files are
    /// written with plain writes), so for them this changes nothing. Costs
    /// a thread and a copy of each batch.
    ///
    /// # Examples
    ///
    /// ```
    /// # let dir = tempfile::tempdir().unwrap();
    /// # let path = dir.path().join("app.log");
    /// // A writer that may block for seconds never delays the file.
    /// let (logger, guard) = nowait_core::Builder::new()
    ///     .sink(nowait_core::Sink::file(&path))
    ///     .sink(nowait_core::Sink::writer(std::io::sink()).own_thread())
    ///     .build()
    ///     .unwrap();
    /// # drop((logger, guard));
    /// ```
    pub fn own_thread(mut self) -> Sink {
        self.own_thread = true;
        self
    }

    /// Keeps the last records below this sink's [`level`](Sink::level)
    /// and writes them, marked as such, before the next record at or above
    /// the backtrace's trigger level (default ERROR) that this sink takes;
    /// see [`BacktraceBuffer`](crate::sink::backtrace::BacktraceBuffer) for what is kept, the bounds,
    /// the output and the accounting. The other sinks are not affected.
    ///
    /// The records must reach the writer thread to be kept: the logger's
    /// `min_level` goes down to the
    /// backtrace's [`lowest`](crate::sink::backtrace::BacktraceBuffer::lowest) level (default
    /// DEBUG), and a process filter (`RUST_LOG`, [`set_filter`](crate::filter::set_filter),
    /// a `tracing` `EnvFilter`) must let DEBUG through as well; each DEBUG
    /// call then costs its thread a push.
    ///
    /// # Examples
    ///
    /// ```
    /// use nowait_core::{Builder, Level, Sink};
    /// use nowait_core::format::Text;
    /// use nowait_core::sink::BacktraceBuffer;
    ///
    /// # let dir = tempfile::tempdir()?;
    /// # let path = dir.path().join("app.log");
    /// let (logger, guard) = Builder::new()
    ///     // The terminal shows INFO and above, and nothing else.
    ///     .sink(Sink::writer(std::io::sink()).level(Level::Info))
    ///     // The file too, plus the last 50 DEBUG records before each ERROR.
    ///     .sink(
    ///         Sink::file(&path)
    ///             .format(Text::new().without_time())
    ///             .level(Level::Info)
    ///             .backtrace(BacktraceBuffer::records(50)),
    ///     )
    ///     .build()?;
    /// assert_eq!(logger.min_level(), Level::Debug);
    /// logger.log(Level::Debug, "cache miss")?;
    /// logger.log(Level::Error, "upstream timed out")?;
    /// drop(guard);
    /// assert!(std::fs::read_to_string(&path)?.contains("cache miss\n"));
    /// assert_eq!(logger.stats().sinks[0].filtered, 1);
    /// assert_eq!(logger.stats().sinks[1].backtrace_released, 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn backtrace(mut self, backtrace: crate::sink::backtrace::BacktraceBuffer) -> Sink {
        self.backtrace = Some(backtrace);
        self
    }

    /// The least severe level this sink needs the front ends to push: its
    /// level, or its backtrace's lowest if that is lower.
    pub(super) fn wanted_level(&self) -> Level {
        match &self.backtrace {
            Some(bt) => self.level.min(bt.lowest),
            None => self.level,
        }
    }
}
