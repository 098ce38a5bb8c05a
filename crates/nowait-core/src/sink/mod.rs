//! Where records go: [`Sink`], one destination with its own format,
//! level and buffer, and the configuration of its kinds ([`Rolling`] files
//! with [`Rotation`] and [`Compression`], the [`BacktraceBuffer`], and with
//! the `otlp` feature the OTLP receiver's settings).
//!
//! # Examples
//!
//! ```
//! use nowait_core::sink::{Rolling, Rotation, Sink};
//! use nowait_core::{Builder, Level};
//!
//! # let dir = tempfile::tempdir()?;
//! let (logger, guard) = Builder::new()
//!     .sink(Sink::stderr().level(Level::Warn))
//!     .sink(Sink::rolling(Rolling::new(dir.path()).rotation(Rotation::Daily)))
//!     .build()?;
//! logger.log(Level::Info, "to the file only")?;
//! drop(guard);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

// Sinks: where records go, from the user's configuration to what the
// writer thread holds.
//
// A sink goes through three forms, each in this folder:
//
// 1. [`Sink`] (`config.rs`): what the user builds, a [`Target`] (the kind
//    and its address) and the options every kind has (format, level,
//    buffer, backtrace).
// 2. [`Plan`]: the sink as `build` checked it, with its name and format
//    settled. `build` opens it, and a forked child's writer opens the same
//    plan again ([`Plan::reopen_in_child`]): there is one `open` per kind,
//    told by [`When`] which of the two calls it.
// 3. [`Output`] (`output.rs`): the opened sink as the writer holds it,
//    and the one dispatch over the kinds for writing, polling, flushing
//    and rotating.
//
// Each kind's own code is a file of its own: `file.rs` (files and rolling
// files), `terminal.rs` (stdout, stderr), `custom.rs` (a user's writer),
// `socket.rs` (TCP, Unix streams and datagrams, syslog framing),
// `journald.rs`, `otlp.rs`. Adding a kind adds its file, a constructor on
// [`Sink`], a [`Target`] variant with its arms in this module, and an
// [`Output`] variant with its arms in `output.rs` if no output fits;
// nothing outside this folder names a kind (the writer asks an output
// what it is: [`Output::rolls`], [`Output::may_block`]...).
//
// Invariants:
//
// * Nothing here waits on a receiver: at build a socket starts connecting
//   without waiting, and in a forked child (where opening runs on the
//   thread of the first push) streams, datagram sockets and journald start
//   unconnected.
// * A sink that cannot be opened is a [`BuildError`] at build; in a forked
//   child it becomes [`Output::Gone`], which fails every write and counts
//   its records.
// * What the writer does with a sink's bytes (buffering, retries,
//   shedding, counters) is the writer's (`writer::sink_state`); this
//   module never imports the writer.

pub(crate) mod backtrace;
mod config;
mod custom;
mod file;
mod journald;
#[cfg(feature = "otlp")]
pub(crate) mod otlp;
mod output;
mod socket;
mod terminal;

use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;

pub use crate::rolling::{Compression, Rolling, Rotation};
pub use backtrace::BacktraceBuffer;
pub use config::Sink;
pub(crate) use file::durable_files;
#[cfg(feature = "otlp")]
#[cfg_attr(docsrs, doc(cfg(feature = "otlp")))]
pub use otlp::Otlp;
pub(crate) use output::{Opened, Output, WriteOutcome};

use crate::accounting::stats::SinkCounters;
use crate::error::BuildError;
use crate::format::Syslog;
use crate::format::{Format, MakeFormat, SinkInfo};
use crate::level::Level;
use crate::ring::MAX_CAPACITY;
use crate::sys::Peer;

/// A sink's kind and address, as configured.
pub(crate) enum Target {
    Stdout,
    Stderr,
    File(PathBuf),
    Rolling(crate::rolling::Rolling),
    /// A user's writer, handed over once.
    Writer(custom::Handoff),
    /// A TCP address resolved when the sink was made, or why it could not
    /// be (with what was asked for).
    Tcp(Result<SocketAddr, String>),
    /// A Unix stream socket.
    Unix(PathBuf),
    /// A Unix datagram socket.
    UnixDatagram(PathBuf),
    /// An OTLP/HTTP receiver.
    #[cfg(feature = "otlp")]
    Otlp(crate::sink::otlp::Otlp),
    /// journald's native socket, and the format the sink was made with
    /// (another one set with `Sink::format` is a build error).
    Journald(crate::format::Journald, Arc<dyn MakeFormat>),
}

impl Target {
    /// The sink's name in stats and notices.
    pub(crate) fn name(&self) -> String {
        match self {
            Target::Stdout => "stdout".into(),
            Target::Stderr => "stderr".into(),
            Target::File(p) => format!("file:{}", p.display()),
            Target::Rolling(r) => format!("rolling:{}", r.pattern()),
            Target::Writer(_) => "writer".into(),
            Target::Tcp(Ok(addr)) => format!("tcp:{addr}"),
            Target::Tcp(Err(_)) => "tcp:?".into(),
            Target::Unix(p) => format!("unix:{}", p.display()),
            Target::UnixDatagram(p) => format!("unix-datagram:{}", p.display()),
            #[cfg(feature = "otlp")]
            Target::Otlp(o) => format!("otlp:{}", o.url()),
            Target::Journald(j, _) => format!("journald:{}", j.path().display()),
        }
    }

    /// Whether a forked child counts this sink's records as written or
    /// failed (files and custom writers), whatever its output turned out
    /// to be.
    fn durable_after_fork(&self) -> bool {
        matches!(
            self,
            Target::File(_) | Target::Rolling(_) | Target::Writer(_)
        )
    }
}

/// Which of the two callers opens a sink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum When {
    /// `Builder::build`, on the caller's thread.
    Build,
    /// A forked child's first writer, on the thread of its first push.
    ForkedChild,
}

/// A sink as `build` checked and settled it: opened at build, and again
/// by a forked child's writer.
pub(crate) struct Plan {
    pub(crate) name: String,
    target: Target,
    own_thread: bool,
    format: Arc<dyn MakeFormat>,
    syslog: Option<Syslog>,
    pub(crate) buffer_size: usize,
    pub(crate) level: Level,
    /// `level`, or the backtrace's lowest level if lower.
    pub(crate) wanted: Level,
    pub(crate) backtrace: Option<crate::sink::backtrace::BacktraceBuffer>,
    /// The sink's target directives (`Sink::filter`).
    pub(crate) filter: Option<crate::filter::Filter>,
}

impl Plan {
    /// Checks what only the sink's kind knows, and settles its format
    /// (OTLP's own; else the sink's, else `default`).
    // Only OTLP changes the sink it settles.
    #[cfg_attr(not(feature = "otlp"), allow(unused_mut))]
    fn new(mut sink: Sink, default: &Arc<dyn MakeFormat>) -> Result<Plan, BuildError> {
        let name = sink.target.name();
        let config = |e: String| BuildError::config(format!("sink {name}: {e}"));
        match &sink.target {
            Target::Rolling(rolling) => rolling.check().map_err(|e| config(e.to_string()))?,
            Target::Tcp(Err(why)) => {
                return Err(BuildError::config(format!(
                    "sink tcp: cannot resolve its address: {why}"
                )))
            }
            #[cfg(feature = "otlp")]
            Target::Otlp(o) => {
                otlp::settle(o, &mut sink.format, &mut sink.syslog).map_err(config)?
            }
            Target::Journald(_, made) => journald::check(&sink, made).map_err(config)?,
            _ => {}
        }
        Ok(Plan {
            wanted: sink.wanted_level(),
            name,
            own_thread: sink.own_thread,
            format: sink.format.unwrap_or_else(|| Arc::clone(default)),
            syslog: sink.syslog,
            buffer_size: sink.buffer_size,
            level: sink.level,
            backtrace: sink.backtrace,
            filter: sink.filter.and_then(Result::ok),
            target: sink.target,
        })
    }

    /// Opens the sink: the one match over the kinds.
    fn open(&self, when: When) -> io::Result<Opened> {
        match &self.target {
            Target::Stdout => terminal::open_stdio(1),
            Target::Stderr => terminal::open_stdio(2),
            Target::File(path) => file::open_path(path),
            Target::Rolling(rolling) => file::open_rolling(rolling),
            Target::Writer(writer) => custom::open(writer, self.own_thread, when),
            Target::Tcp(Ok(addr)) => socket::open_stream(Peer::Tcp(*addr), when),
            Target::Tcp(Err(why)) => Err(io::Error::new(io::ErrorKind::InvalidInput, why.clone())),
            Target::Unix(path) => socket::open_stream(Peer::Unix(path.clone()), when),
            Target::UnixDatagram(path) => socket::open_datagram(path, when),
            #[cfg(feature = "otlp")]
            Target::Otlp(o) => otlp::open(o),
            Target::Journald(journald, _) => journald::open(journald.path(), when),
        }
    }

    /// Opens the sink again in a forked child. A sink that cannot be had
    /// there fails for good ([`Output::Gone`]).
    pub(crate) fn reopen_in_child(&self) -> Opened {
        let mut opened = self.open(When::ForkedChild).unwrap_or_else(|e| {
            Opened::new(
                Output::Gone(format!("cannot reopen after fork: {e}")),
                false,
            )
        });
        // Its records in the child: written, or counted as failed.
        opened.durable = self.target.durable_after_fork();
        opened
    }

    /// The sink's format for `opened`: colours on a terminal, syslog
    /// framing as its output takes it.
    pub(crate) fn make_format(&self, opened: &Opened) -> Box<dyn Format> {
        let info = SinkInfo::new(self.name.clone(), opened.terminal);
        let format = self.format.make_format(&info);
        match &self.syslog {
            Some(syslog) => syslog.wrap(format, socket::syslog_framing(&opened.output)),
            None => format,
        }
    }
}

/// Checks every sink's options the kinds share, before anything opens.
pub(crate) fn check(sinks: &[Sink]) -> Result<(), BuildError> {
    if let Some(bad) = sinks
        .iter()
        .find(|s| s.buffer_size < 1024 || s.buffer_size > MAX_CAPACITY)
    {
        return Err(BuildError::config(format!(
            "sink {} buffer_size must be between 1024 bytes and 1 GiB, got {}",
            bad.target.name(),
            bad.buffer_size
        )));
    }
    for sink in sinks {
        if let Some(Err(why)) = &sink.filter {
            return Err(BuildError::config(format!(
                "sink {}: filter: {why}",
                sink.target.name()
            )));
        }
        if let Some(Err(why)) = sink.backtrace.as_ref().map(|b| b.check()) {
            return Err(BuildError::config(format!(
                "sink {}: {why}",
                sink.target.name()
            )));
        }
    }
    Ok(())
}

/// The sinks `build` opened, in the order they were added.
pub(crate) struct OpenSinks {
    /// What a forked child opens again.
    pub(crate) plans: Vec<Plan>,
    /// What the writer takes over, one per plan.
    pub(crate) opened: Vec<Opened>,
    /// Each sink's shared counters, one per plan.
    pub(crate) counters: Vec<SinkCounters>,
    /// Notices for the writer to write first (a sink written by an I/O
    /// thread of its own as a fallback, a sink's [`Opened::warning`]).
    pub(crate) startup: Vec<String>,
    /// Whether some format prints the thread, or the call site.
    pub(crate) needs_thread: bool,
    pub(crate) needs_location: bool,
}

impl OpenSinks {
    /// The least severe level any sink takes (`Trace` without sinks).
    pub(crate) fn min_level(&self) -> Level {
        (self.plans.iter().map(|p| p.wanted).min()).unwrap_or(Level::Trace)
    }

    /// What each sink takes, for the request path's union and the writer.
    pub(crate) fn rules(&self) -> Vec<crate::filter::routes::Rule> {
        (self.plans.iter())
            .map(|p| crate::filter::routes::Rule {
                filter: p.filter.clone().map(Arc::new),
                level: p.level,
                lowest: p.backtrace.map(|b| b.lowest),
            })
            .collect()
    }

    /// Whether some sink wants completeness (files, custom writers).
    pub(crate) fn any_durable(&self) -> bool {
        self.counters.iter().any(|c| c.durable)
    }
}

/// Checks and opens each sink in turn (`default` is the logger's format).
pub(crate) fn open_all(
    sinks: Vec<Sink>,
    default: &Arc<dyn MakeFormat>,
) -> Result<OpenSinks, BuildError> {
    let format_of = |s: &Sink| Arc::clone(s.format.as_ref().unwrap_or(default));
    let mut open = OpenSinks {
        needs_thread: sinks.iter().any(|s| format_of(s).needs_thread()),
        needs_location: sinks.iter().any(|s| format_of(s).needs_location()),
        plans: Vec::with_capacity(sinks.len()),
        opened: Vec::with_capacity(sinks.len()),
        counters: Vec::with_capacity(sinks.len()),
        startup: Vec::new(),
    };
    for sink in sinks {
        let plan = Plan::new(sink, default)?;
        let opened = (plan.open(When::Build))
            .map_err(|e| BuildError::io(format!("cannot open sink {}", plan.name), e))?;
        let counters = SinkCounters::new(plan.name.clone(), opened.durable);
        (counters.non_blocking).store(!opened.output.may_block(), Ordering::Relaxed);
        if let Some(why) = &opened.fallback {
            open.startup.push(format!(
                "sink {} is written by an I/O thread of its own, which alone waits for it: {why}",
                plan.name
            ));
        }
        if let Some(warning) = &opened.warning {
            open.startup.push(format!("sink {}: {warning}", plan.name));
        }
        open.counters.push(counters);
        open.opened.push(opened);
        open.plans.push(plan);
    }
    Ok(open)
}
