//! Logging modes shared by the load-test servers (`server`, `tokio-server`).
//!
//! Each mode logs one line per request with the same fields. Adding a mode
//! is one variant in [`Mode`], one arm in [`Logging::new`] and one in
//! [`Logging::request`].

use std::cell::RefCell;
use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::PathBuf;
use std::sync::Mutex;

use tracing_appender::non_blocking::{ErrorCounter, NonBlockingBuilder, WorkerGuard};
use tracing_subscriber::layer::SubscriberExt;

/// How the server logs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// No logging: the baseline.
    None,
    /// `println!` one line per request (and a blocking `write` per line to
    /// the file, when there is one).
    Println,
    /// `tracing_subscriber::fmt` writing to stdout / the file, blocking.
    TracingFmt,
    /// A `tracing_subscriber::Registry` with an `EnvFilter` (`info`) and no
    /// output layer: what the span and event machinery alone costs.
    TracingEnvFilter,
    /// `tracing_appender::non_blocking` with its defaults (lossy).
    TracingAppender,
    /// `tracing_appender::non_blocking` in lossless mode.
    TracingAppenderLossless,
    /// nowait's core API: the line is formatted on the request thread and
    /// pushed as a text record.
    NowaitCore,
    /// `tracing::info!` through nowait's `NowaitLayer`.
    Nowait,
    /// nowait's own `info!` macro (fields copied, formatted by the writer).
    NowaitMacro,
    /// `log::info!` with key-values through nowait's `log` front end.
    NowaitLog,
}

impl Mode {
    /// Every mode, baseline first.
    pub const ALL: [Mode; 10] = [
        Mode::None,
        Mode::Println,
        Mode::TracingFmt,
        Mode::TracingEnvFilter,
        Mode::TracingAppender,
        Mode::TracingAppenderLossless,
        Mode::NowaitCore,
        Mode::Nowait,
        Mode::NowaitMacro,
        Mode::NowaitLog,
    ];

    /// The mode's command-line name.
    pub fn name(self) -> &'static str {
        match self {
            Mode::None => "none",
            Mode::Println => "println",
            Mode::TracingFmt => "tracing-fmt",
            Mode::TracingEnvFilter => "tracing-envfilter",
            Mode::TracingAppender => "tracing-appender",
            Mode::TracingAppenderLossless => "tracing-appender-lossless",
            Mode::NowaitCore => "nowait-core",
            Mode::Nowait => "nowait",
            Mode::NowaitMacro => "nowait-macro",
            Mode::NowaitLog => "nowait-log",
        }
    }

    /// Parses a command-line name.
    pub fn parse(s: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.name() == s)
    }
}

/// The modes that log through nowait.
const NOWAIT_MODES: [Mode; 4] = [
    Mode::NowaitCore,
    Mode::Nowait,
    Mode::NowaitMacro,
    Mode::NowaitLog,
];

/// Where log lines go: `stdout`, `file:PATH`, `stdout+file:PATH`, or
/// `binfile:PATH` (a nowait binary log, nowait modes only).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SinkSpec {
    /// Lines go to fd 1 (whatever it is: /dev/null, a pty, a pipe).
    pub stdout: bool,
    /// Lines go to this file (appended).
    pub file: Option<PathBuf>,
    /// The file is a binary log (`Sink::binary`), read with `nowait cat`.
    pub binary: bool,
}

impl SinkSpec {
    /// Parses `stdout`, `file:PATH`, `stdout+file:PATH` or `binfile:PATH`.
    pub fn parse(s: &str) -> Option<SinkSpec> {
        if s == "stdout" {
            return Some(SinkSpec {
                stdout: true,
                file: None,
                binary: false,
            });
        }
        if let Some(path) = s.strip_prefix("binfile:") {
            return Some(SinkSpec {
                stdout: false,
                file: Some(PathBuf::from(path)),
                binary: true,
            });
        }
        let (stdout, rest) = match s.strip_prefix("stdout+") {
            Some(rest) => (true, rest),
            None => (false, s),
        };
        let path = rest.strip_prefix("file:")?;
        Some(SinkSpec {
            stdout,
            file: Some(PathBuf::from(path)),
            binary: false,
        })
    }
}

enum Inner {
    None,
    Println {
        file: Option<Mutex<File>>,
    },
    Tracing {
        guards: Vec<WorkerGuard>,
        /// Each non-blocking writer's drop counter, with its sink's name
        /// (`stdout`, `file`).
        counters: Vec<(&'static str, ErrorCounter)>,
    },
    Nowait {
        logger: nowait::Logger,
        guard: Option<nowait::Guard>,
        front: Mode,
    },
}

/// A logging setup, shared by the request threads.
pub struct Logging {
    mode: Mode,
    inner: Inner,
}

thread_local! {
    static LINE: RefCell<String> = RefCell::new(String::with_capacity(256));
}

fn open_append(path: &PathBuf) -> io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
}

impl Logging {
    /// Sets the mode up (for tracing modes, as the global default
    /// subscriber).
    pub fn new(mode: Mode, sink: &SinkSpec) -> io::Result<Logging> {
        let writes = !matches!(mode, Mode::None | Mode::TracingEnvFilter);
        if sink.binary && writes && !NOWAIT_MODES.contains(&mode) {
            return Err(io::Error::other(format!(
                "a binary log is nowait's own format: --log {} cannot write one",
                mode.name()
            )));
        }
        let inner = match mode {
            Mode::None => Inner::None,
            Mode::Println => Inner::Println {
                file: match &sink.file {
                    Some(p) => Some(Mutex::new(open_append(p)?)),
                    None => None,
                },
            },
            Mode::TracingFmt => {
                let stdout_layer = sink.stdout.then(|| {
                    tracing_subscriber::fmt::layer()
                        .with_ansi(false)
                        .with_writer(io::stdout)
                });
                let file_layer = match &sink.file {
                    Some(p) => {
                        let f = open_append(p)?;
                        Some(
                            tracing_subscriber::fmt::layer()
                                .with_ansi(false)
                                .with_writer(Mutex::new(f)),
                        )
                    }
                    None => None,
                };
                let subscriber = tracing_subscriber::registry()
                    .with(stdout_layer)
                    .with(file_layer);
                tracing::subscriber::set_global_default(subscriber).map_err(io::Error::other)?;
                Inner::Tracing {
                    guards: Vec::new(),
                    counters: Vec::new(),
                }
            }
            Mode::TracingEnvFilter => {
                let subscriber =
                    tracing_subscriber::registry().with(tracing_subscriber::EnvFilter::new("info"));
                tracing::subscriber::set_global_default(subscriber).map_err(io::Error::other)?;
                Inner::Tracing {
                    guards: Vec::new(),
                    counters: Vec::new(),
                }
            }
            Mode::TracingAppender | Mode::TracingAppenderLossless => {
                let lossy = mode == Mode::TracingAppender;
                let mut guards = Vec::new();
                let mut counters = Vec::new();
                let stdout_layer = if sink.stdout {
                    let (w, g) = NonBlockingBuilder::default()
                        .lossy(lossy)
                        .finish(io::stdout());
                    counters.push(("stdout", w.error_counter()));
                    guards.push(g);
                    Some(
                        tracing_subscriber::fmt::layer()
                            .with_ansi(false)
                            .with_writer(w),
                    )
                } else {
                    None
                };
                let file_layer = match &sink.file {
                    Some(p) => {
                        let (w, g) = NonBlockingBuilder::default()
                            .lossy(lossy)
                            .finish(open_append(p)?);
                        counters.push(("file", w.error_counter()));
                        guards.push(g);
                        Some(
                            tracing_subscriber::fmt::layer()
                                .with_ansi(false)
                                .with_writer(w),
                        )
                    }
                    None => None,
                };
                let subscriber = tracing_subscriber::registry()
                    .with(stdout_layer)
                    .with(file_layer);
                tracing::subscriber::set_global_default(subscriber).map_err(io::Error::other)?;
                Inner::Tracing { guards, counters }
            }
            Mode::NowaitCore | Mode::Nowait | Mode::NowaitMacro | Mode::NowaitLog => {
                let mut builder = nowait::Builder::new();
                if sink.stdout {
                    builder = builder.sink(nowait::Sink::stdout());
                }
                match &sink.file {
                    Some(p) if sink.binary => builder = builder.sink(nowait::Sink::binary(p)),
                    Some(p) => builder = builder.sink(nowait::Sink::file(p)),
                    None => {}
                }
                // Drop policy for the ring: the request thread must never
                // wait; the file still gets everything the ring accepted and
                // every loss is reported.
                let (logger, guard) = builder
                    .full_policy(nowait::FullPolicy::Drop)
                    .build()
                    .map_err(io::Error::other)?;
                match mode {
                    Mode::Nowait => {
                        let subscriber = tracing_subscriber::registry()
                            .with(nowait::NowaitLayer::new(logger.clone()));
                        tracing::subscriber::set_global_default(subscriber)
                            .map_err(io::Error::other)?;
                    }
                    Mode::NowaitMacro => {
                        nowait::set_global(logger.clone()).map_err(io::Error::other)?;
                    }
                    Mode::NowaitLog => {
                        nowait::log::init(logger.clone()).map_err(io::Error::other)?;
                    }
                    _ => {}
                }
                Inner::Nowait {
                    logger,
                    guard: Some(guard),
                    front: mode,
                }
            }
        };
        Ok(Logging { mode, inner })
    }

    /// The mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Logs request number `n` for `path`. Called on the request path.
    #[inline]
    pub fn request(&self, n: u64, path: &str) {
        match &self.inner {
            Inner::None => {}
            Inner::Println { file } => {
                println!("served req={n} method=GET path={path} status=200 bytes=12");
                if let Some(f) = file {
                    if let Ok(mut f) = f.lock() {
                        let _ = writeln!(
                            f,
                            "served req={n} method=GET path={path} status=200 bytes=12"
                        );
                    }
                }
            }
            // The same call whether tracing-subscriber or nowait's layer is
            // behind it.
            Inner::Tracing { .. }
            | Inner::Nowait {
                front: Mode::Nowait,
                ..
            } => {
                tracing::info!(
                    req = n,
                    method = "GET",
                    path,
                    status = 200u16,
                    bytes = 12u64,
                    "served"
                );
            }
            Inner::Nowait {
                front: Mode::NowaitMacro,
                ..
            } => {
                nowait::info!(
                    req = n,
                    method = "GET",
                    path = path,
                    status = 200u16,
                    bytes = 12u64,
                    "served"
                );
            }
            Inner::Nowait {
                front: Mode::NowaitLog,
                ..
            } => {
                log::info!(req = n, method = "GET", path = path, status = 200u16, bytes = 12u64; "served");
            }
            Inner::Nowait { logger, .. } => LINE.with(|line| {
                let mut line = line.borrow_mut();
                line.clear();
                let _ = write!(
                    line,
                    "served req={n} method=GET path={path} status=200 bytes=12"
                );
                let _ = logger.try_log(nowait::Level::Info, &line);
            }),
        }
    }

    /// Shuts the logger down and returns the counters as JSON fields
    /// (without braces).
    pub fn finish(self) -> String {
        match self.inner {
            Inner::None => "\"dropped\":0".into(),
            Inner::Println { .. } => {
                let _ = io::stdout().flush();
                "\"dropped\":0".into()
            }
            Inner::Tracing { guards, counters } => {
                drop(guards); // flushes, waiting at most its fixed 1 s
                let dropped: u64 = counters.iter().map(|(_, c)| c.dropped_lines() as u64).sum();
                let mut out = format!("\"dropped\":{dropped},\"sink_dropped\":{{");
                for (i, (name, c)) in counters.iter().enumerate() {
                    let sep = if i > 0 { "," } else { "" };
                    let _ = write!(out, "{sep}\"{name}\":{}", c.dropped_lines());
                }
                out.push('}');
                out
            }
            Inner::Nowait {
                logger, mut guard, ..
            } => {
                drop(guard.take());
                let s = logger.stats();
                let mut out = format!(
                    "\"dropped\":{},\"records_written\":{},\"abandoned\":{},\"sinks\":[",
                    s.dropped(),
                    s.records_written,
                    s.abandoned
                );
                for (i, k) in s.sinks.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    let _ = write!(
                        out,
                        "{{\"name\":\"{}\",\"written\":{},\"dropped\":{},\"write_calls\":{},\"bytes\":{}}}",
                        k.name.replace('"', "'"),
                        k.records_written,
                        k.dropped(),
                        k.write_calls,
                        k.bytes_written
                    );
                }
                out.push(']');
                out
            }
        }
    }
}

/// The response to every read.
pub const RESPONSE: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\nHello World!";

/// The request path in an HTTP request's first line, or `/`.
pub fn path_of(request: &[u8]) -> &str {
    let line = request.split(|&b| b == b'\r').next().unwrap_or(b"");
    let mut parts = line.split(|&b| b == b' ');
    parts.next();
    parts
        .next()
        .and_then(|p| std::str::from_utf8(p).ok())
        .filter(|p| p.len() < 256)
        .unwrap_or("/")
}

/// Parses `--name value` arguments.
pub fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// Pins the calling thread to `cpu` (`--cpu N`): the load test pins the
/// request thread so that runs compare. Linux only (`sched_setaffinity`);
/// macOS has no CPU pinning, so there the flag is an error that says so.
///
/// # Errors
///
/// The CPU does not exist, or the system cannot pin threads.
pub fn pin_to_cpu(cpu: &str) -> io::Result<()> {
    let cpu: usize = cpu.parse().map_err(io::Error::other)?;
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let mut set = rustix::thread::CpuSet::new();
        set.set(cpu);
        rustix::thread::sched_setaffinity(None, &set)?;
        Ok(())
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            format!("--cpu {cpu}: this system cannot pin a thread to a CPU (Linux only); run without --cpu"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sinks_and_paths() {
        assert_eq!(
            SinkSpec::parse("stdout+file:/tmp/x"),
            Some(SinkSpec {
                stdout: true,
                file: Some("/tmp/x".into()),
                binary: false,
            })
        );
        assert_eq!(
            SinkSpec::parse("binfile:/tmp/x.nwb"),
            Some(SinkSpec {
                stdout: false,
                file: Some("/tmp/x.nwb".into()),
                binary: true,
            })
        );
        assert_eq!(SinkSpec::parse("bogus"), None);
        assert_eq!(path_of(b"GET /a/b HTTP/1.1\r\nHost: x\r\n\r\n"), "/a/b");
        assert_eq!(path_of(b""), "/");
        for m in Mode::ALL {
            assert_eq!(Mode::parse(m.name()), Some(m));
        }
    }
}
