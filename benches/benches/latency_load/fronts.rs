//! The loggers under test, each set up the way a service would (the
//! process-global logger of its front end), writing to the same sink, and
//! driven by one [`Job`] through the same call shape.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use nowait_benches::{macro_request, request, tracing_request};
use serde_json::Value;
use tracing_subscriber::prelude::*;

/// Where every logger writes.
#[derive(Clone, Debug)]
pub enum Out {
    /// A file (in a temporary directory): what the issue measures.
    File(PathBuf),
    /// Bytes discarded (`io::sink()`, or `/dev/null` for fast_log which
    /// only takes paths).
    Null,
}

impl Out {
    /// A writer for peers that take one.
    fn writer(&self) -> Box<dyn Write + Send> {
        match self {
            Out::File(p) => Box::new(File::create(p).expect("create the log file")),
            Out::Null => Box::new(io::sink()),
        }
    }

    fn nowait_sink(&self) -> nowait::Sink {
        match self {
            Out::File(p) => nowait::Sink::file(p),
            Out::Null => nowait::Sink::writer(io::sink()),
        }
    }

    /// Lines in the file (after the logger is torn down), `None` for null
    /// or if nothing created the file.
    pub fn lines(&self) -> Option<u64> {
        match self {
            Out::File(p) if p.exists() => Some(count_lines(p)),
            _ => None,
        }
    }

    /// Bytes in the file, `None` for null.
    pub fn bytes(&self) -> Option<u64> {
        match self {
            Out::File(p) => std::fs::metadata(p).map(|m| m.len()).ok(),
            Out::Null => None,
        }
    }
}

fn count_lines(path: &Path) -> u64 {
    std::fs::read(path)
        .map(|b| b.iter().filter(|&&c| c == b'\n').count() as u64)
        .unwrap_or(0)
}

/// A logger under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Front {
    /// No logger: the call builds the request and discards it (the floor
    /// for RSS and the loop's own cost).
    None,
    /// `nowait::info!` with 3 fields, global logger, [`nowait::FullPolicy::Drop`].
    MacroDrop,
    /// `nowait::info!` with 3 fields, global logger, [`nowait::FullPolicy::Block`].
    MacroBlock,
    /// `nowait::debug!` with 3 fields, global logger, Drop policy, the
    /// file sink at INFO with a backtrace (`BacktraceBuffer::records(100)`): the
    /// call passes the logger's level and is pushed; the writer keeps it
    /// (raw) and never writes it (no ERROR comes).
    DebugKept,
    /// The same `nowait::debug!` call and file sink at INFO, without a
    /// backtrace: the call site's cached interest says never (one load
    /// and a branch).
    DebugOff,
    /// `tracing::info!` with 3 fields into `Registry` + `NowaitLayer`.
    Layer,
    /// `tracing::info!` with 3 fields into `Registry` and a layer that
    /// visits the fields into nothing: what `tracing` itself costs, the
    /// floor under any layer that reads them (no output).
    TracingFloor,
    /// `log::info!` with 3 format arguments into `nowait_log`.
    Log,
    /// `tracing::info!` into tracing-subscriber's fmt over tracing-appender.
    Appender,
    /// `slog::info!` with 3 key-values into slog-term over slog-async.
    Slog,
    /// `log::info!` into ftlog.
    Ftlog,
    /// `log::info!` into fast_log.
    FastLog,
    /// `ticklog::info!` (per-thread single-producer buffers).
    Ticklog,
}

/// Every front end, in table order.
pub const ALL: [Front; 13] = [
    Front::None,
    Front::MacroDrop,
    Front::MacroBlock,
    Front::DebugKept,
    Front::DebugOff,
    Front::Layer,
    Front::TracingFloor,
    Front::Log,
    Front::Appender,
    Front::Slog,
    Front::Ftlog,
    Front::FastLog,
    Front::Ticklog,
];

impl Front {
    /// Short name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Front::None => "none",
            Front::MacroDrop => "nowait-macro-drop",
            Front::MacroBlock => "nowait-macro-block",
            Front::DebugKept => "nowait-debug-kept",
            Front::DebugOff => "nowait-debug-off",
            Front::Layer => "nowait-layer",
            Front::TracingFloor => "tracing-floor",
            Front::Log => "nowait-log",
            Front::Appender => "tracing-appender",
            Front::Slog => "slog-async",
            Front::Ftlog => "ftlog",
            Front::FastLog => "fast_log",
            Front::Ticklog => "ticklog",
        }
    }

    pub fn parse(s: &str) -> Option<Front> {
        ALL.into_iter().find(|f| f.name() == s)
    }

    /// Whether the front end is nowait's.
    pub fn is_nowait(self) -> bool {
        matches!(
            self,
            Front::MacroDrop
                | Front::MacroBlock
                | Front::DebugKept
                | Front::DebugOff
                | Front::Layer
                | Front::Log
        )
    }

    /// How the logger is configured, for the report.
    pub fn setup(self, lossless: bool) -> &'static str {
        match (self, lossless) {
            (Front::None, _) => "no logger",
            (Front::TracingFloor, _) => "Registry + a layer visiting the fields into nothing",
            (Front::MacroDrop, _) => "global logger, Drop policy, 1 MiB ring",
            (Front::MacroBlock, _) => "global logger, Block policy, 1 MiB ring",
            (Front::DebugKept, _) => "debug!, sink at INFO + BacktraceBuffer::records(100), Drop",
            (Front::DebugOff, _) => "debug!, sink at INFO, no backtrace (filtered at the call)",
            (Front::Layer | Front::Log, false) => "Drop policy (default), 1 MiB ring",
            (Front::Layer | Front::Log, true) => "Block policy, 1 MiB ring",
            (Front::Appender, false) => "fmt, non_blocking default (lossy, 128k lines)",
            (Front::Appender, true) => "fmt, non_blocking lossy(false), 128k lines",
            (Front::Slog, false) => "slog-term Full over BufWriter, Async default (DropAndReport)",
            (Front::Slog, true) => "slog-term Full over BufWriter, Async OverflowStrategy::Block",
            (Front::Ftlog, false) => "FileAppender, default channel (bounded 100k, drops)",
            (Front::Ftlog, true) => "FileAppender, bounded(100_000, block_when_full = true)",
            (Front::FastLog, _) => "chan_len(Some(100_000)) (send blocks when full)",
            (Front::Ticklog, _) => {
                "FileSink, Backpressure::Block (spins when full), 1 MiB per thread"
            }
        }
    }
}

/// What a child does with the logger once it is installed.
pub trait Job {
    /// Drives `call` (one logging call for request `i`), then calls
    /// `teardown` (guard drop / final flush: after it returns, everything
    /// the logger will ever write is written), and returns the result.
    /// `teardown` returns the loss the logger itself counted, if it exposes
    /// a counter.
    fn run<F: Fn(u64) + Sync>(&self, call: &F, teardown: Teardown<'_>) -> Value;
}

/// `log::info!` of request `i`: the same message and three values as the
/// other front ends, as format arguments (what `log` users write).
#[inline]
pub fn log_request(i: u64) {
    let r = request(i);
    log::info!(
        "served path={} status={} latency_us={}",
        r.path,
        r.status,
        r.latency_us
    );
}

/// `nowait::debug!` of request `i`: the same message and fields as
/// [`macro_request`], one level lower.
#[inline]
pub fn macro_debug_request(i: u64) {
    let r = request(i);
    nowait::debug!(
        path = r.path,
        status = r.status,
        latency_us = r.latency_us,
        "served"
    );
}

fn nowait_logger(out: &Out, block: bool) -> (nowait::Logger, nowait::Guard) {
    nowait_logger_with(out, block, |sink| sink)
}

fn nowait_logger_with(
    out: &Out,
    block: bool,
    sink: impl FnOnce(nowait::Sink) -> nowait::Sink,
) -> (nowait::Logger, nowait::Guard) {
    let policy = if block {
        nowait::FullPolicy::Block
    } else {
        nowait::FullPolicy::Drop
    };
    let builder = nowait::Builder::new()
        .full_policy(policy)
        .sink(sink(out.nowait_sink()));
    let builder = match durable_file() {
        Some(path) => builder.crash_durable(path),
        None => builder,
    };
    let builder = match capacity() {
        Some(bytes) => builder.capacity(bytes),
        None => builder,
    };
    let builder = match interval() {
        Some(interval) => builder.flush_interval(interval),
        None => builder,
    };
    let builder = match writer_cpu() {
        Some(cpu) => builder.writer_cpu(cpu),
        None => builder,
    };
    let builder = match lanes() {
        Some((count, bytes)) => {
            let builder = builder.lanes(count);
            match bytes {
                Some(bytes) => builder.lane_capacity(bytes),
                None => builder,
            }
        }
        None => builder,
    };
    builder.build().expect("a nowait logger")
}

/// `NOWAIT_BENCH_CAPACITY=BYTES`: nowait's ring capacity instead of the
/// default 1 MiB, to see what the ring's footprint costs a call.
fn capacity() -> Option<usize> {
    env_numbers("NOWAIT_BENCH_CAPACITY").map(|v| v[0] as usize)
}

/// `NOWAIT_BENCH_INTERVAL_MS=MS`: nowait's `Builder::flush_interval`
/// instead of the default 3 ms (how often the writer visits the ring).
fn interval() -> Option<std::time::Duration> {
    env_numbers("NOWAIT_BENCH_INTERVAL_MS").map(|v| std::time::Duration::from_millis(v[0]))
}

/// `NOWAIT_BENCH_WRITER_CPU=CPU`: nowait's `Builder::writer_cpu`. With
/// `NOWAIT_BENCH_CPUS=1` (the case's process, so its producer threads, on
/// CPU 1) and `NOWAIT_BENCH_WRITER_CPU=0`, producers and the writer never
/// share a CPU, as in quill's own benchmark.
fn writer_cpu() -> Option<usize> {
    env_numbers("NOWAIT_BENCH_WRITER_CPU").map(|v| v[0] as usize)
}

/// `NOWAIT_BENCH_LANES=COUNT[,BYTES]`: nowait's `Builder::lanes` (and
/// `lane_capacity`) instead of the defaults, to compare lane settings.
fn lanes() -> Option<(usize, Option<usize>)> {
    env_numbers("NOWAIT_BENCH_LANES").map(|v| (v[0] as usize, v.get(1).map(|&b| b as usize)))
}

/// The comma-separated numbers of a knob, if set. A value that is set but
/// not numbers stops the run: a bench must not measure the default while
/// its caller believes it measured a setting.
fn env_numbers(name: &str) -> Option<Vec<u64>> {
    let v = std::env::var(name).ok()?;
    let numbers: Result<Vec<u64>, _> = v.split(',').map(|n| n.trim().parse()).collect();
    match numbers {
        Ok(n) if !n.is_empty() => Some(n),
        _ => panic!("{name}={v:?}: expected numbers separated by commas"),
    }
}

/// `--durable DIR`: the crash-durable file of this (child) process.
fn durable_file() -> Option<std::path::PathBuf> {
    let dir = std::env::var_os("NOWAIT_BENCH_DURABLE")?;
    let file = format!("latency-load-{}.nowait", std::process::id());
    Some(std::path::Path::new(&dir).join(file))
}

fn nowait_teardown(logger: nowait::Logger, guard: nowait::Guard) -> Option<u64> {
    drop(guard);
    let dropped = logger.stats().dropped();
    drop(logger);
    if let Some(path) = durable_file() {
        let _ = std::fs::remove_file(path);
    }
    Some(dropped)
}

/// Installs `front` for this process (`lossless`: its lossless mode, if
/// any, for the throughput runs), writing to `out`, and runs `job` on it.
pub fn drive<J: Job>(front: Front, out: &Out, lossless: bool, job: &J) -> Value {
    match front {
        Front::None => job.run(
            &|i| {
                std::hint::black_box(request(i));
            },
            Box::new(|| None),
        ),
        Front::MacroDrop | Front::MacroBlock => {
            let (logger, guard) = nowait_logger(out, front == Front::MacroBlock);
            nowait::set_global(logger.clone()).expect("first global logger");
            job.run(
                &macro_request,
                Box::new(move || nowait_teardown(logger, guard)),
            )
        }
        Front::DebugKept | Front::DebugOff => {
            let kept = front == Front::DebugKept;
            let (logger, guard) = nowait_logger_with(out, false, |sink| {
                let sink = sink.level(nowait::Level::Info);
                if kept {
                    sink.backtrace(nowait::sink::BacktraceBuffer::records(100))
                } else {
                    sink
                }
            });
            let want = if kept {
                nowait::Level::Debug
            } else {
                nowait::Level::Info
            };
            assert_eq!(logger.min_level(), want);
            nowait::set_global(logger.clone()).expect("first global logger");
            job.run(
                &macro_debug_request,
                Box::new(move || nowait_teardown(logger, guard)),
            )
        }
        Front::Layer => {
            let (logger, guard) = nowait_logger(out, lossless);
            tracing::subscriber::set_global_default(
                tracing_subscriber::registry().with(nowait::NowaitLayer::new(logger.clone())),
            )
            .expect("first subscriber");
            job.run(
                &tracing_request,
                Box::new(move || nowait_teardown(logger, guard)),
            )
        }
        Front::TracingFloor => {
            tracing::subscriber::set_global_default(tracing_subscriber::registry().with(Floor))
                .expect("first subscriber");
            job.run(&tracing_request, Box::new(|| None))
        }
        Front::Log => {
            let (logger, guard) = nowait_logger(out, lossless);
            nowait::log::init_with_level(logger.clone(), log::LevelFilter::Info)
                .expect("first log logger");
            job.run(
                &log_request,
                Box::new(move || nowait_teardown(logger, guard)),
            )
        }
        Front::Appender => {
            let (writer, guard) = tracing_appender::non_blocking::NonBlockingBuilder::default()
                .lossy(!lossless)
                .finish(out.writer());
            let counter = writer.error_counter();
            tracing::subscriber::set_global_default(
                tracing_subscriber::fmt()
                    .with_writer(writer)
                    .with_ansi(false)
                    .finish(),
            )
            .expect("first subscriber");
            job.run(
                &tracing_request,
                Box::new(move || {
                    drop(guard);
                    Some(counter.dropped_lines() as u64)
                }),
            )
        }
        Front::Slog => {
            use slog::Drain;
            // slog-term flushes its writer after every record: buffered,
            // that is one write() per record instead of one per fragment.
            let decorator = slog_term::PlainDecorator::new(io::BufWriter::new(out.writer()));
            let drain = slog_term::FullFormat::new(decorator).build().fuse();
            let strategy = if lossless {
                slog_async::OverflowStrategy::Block
            } else {
                slog_async::OverflowStrategy::DropAndReport
            };
            let (drain, guard) = slog_async::Async::new(drain)
                .overflow_strategy(strategy)
                .build_with_guard();
            let log = slog::Logger::root(drain.fuse(), slog::o!());
            job.run(
                &|i| {
                    let r = request(i);
                    slog::info!(log, "served"; "path" => r.path, "status" => r.status, "latency_us" => r.latency_us);
                },
                Box::new(move || {
                    drop(guard);
                    None
                }),
            )
        }
        Front::Ftlog => {
            // ftlog's own file appender (buffered) for a file.
            let builder = match out {
                Out::File(p) => ftlog::builder().root(ftlog::appender::FileAppender::new(p)),
                Out::Null => ftlog::builder().root(io::sink()),
            };
            let builder = if lossless {
                builder.bounded(100_000, true)
            } else {
                builder
            };
            let guard = builder.try_init().expect("ftlog init");
            job.run(
                &log_request,
                Box::new(move || {
                    log::logger().flush();
                    drop(guard);
                    None
                }),
            )
        }
        Front::FastLog => {
            let path = match out {
                Out::File(p) => p.to_string_lossy().into_owned(),
                Out::Null => "/dev/null".to_owned(),
            };
            fast_log::init(fast_log::Config::new().file(&path).chan_len(Some(100_000)))
                .expect("fast_log init");
            job.run(
                &log_request,
                Box::new(|| {
                    log::logger().flush();
                    None
                }),
            )
        }
        Front::Ticklog => {
            let sink = match out {
                Out::File(p) => ticklog::FileSink::new(p).expect("ticklog file"),
                Out::Null => ticklog::FileSink::new("/dev/null").expect("ticklog /dev/null"),
            };
            // ticklog fixes its full-buffer policy at compile time, once
            // per crate: Block, so that the throughput runs are lossless.
            // The calls of the latency runs never find a buffer full, so
            // they take the path Drop would take.
            let _ = lossless;
            let guard =
                ticklog::configure! { sink: sink, backpressure: ticklog::Backpressure::Block }
                    .expect("ticklog init");
            job.run(
                &crate::ticklog_request,
                Box::new(move || {
                    drop(guard);
                    None
                }),
            )
        }
    }
}

/// [`Front::TracingFloor`]'s layer: visits every field of an event into
/// nothing.
struct Floor;

struct NoVisit;

impl tracing::field::Visit for NoVisit {
    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        std::hint::black_box((field, value));
    }
}

impl<S: tracing::Subscriber> tracing_subscriber::Layer<S> for Floor {
    fn on_event(&self, event: &tracing::Event<'_>, _: tracing_subscriber::layer::Context<'_, S>) {
        event.record(&mut NoVisit);
    }
}

/// A `tracing` stack for the span case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stack {
    /// `Registry` + `EnvFilter("info")`, no output: the baseline.
    Baseline,
    /// The baseline plus `NowaitLayer` (Drop policy, the default).
    Nowait,
    /// The baseline plus fmt over tracing-appender (lossy default).
    Appender,
}

pub const STACKS: [Stack; 3] = [Stack::Baseline, Stack::Nowait, Stack::Appender];

impl Stack {
    pub fn name(self) -> &'static str {
        match self {
            Stack::Baseline => "registry+envfilter",
            Stack::Nowait => "nowait-layer",
            Stack::Appender => "tracing-appender",
        }
    }

    pub fn parse(s: &str) -> Option<Stack> {
        STACKS.into_iter().find(|f| f.name() == s)
    }
}

/// The teardown a span run calls once its requests are made.
pub type Teardown<'a> = Box<dyn FnOnce() -> Option<u64> + 'a>;

/// Installs `stack` as the global default subscriber and calls `run` with
/// the stack's teardown.
pub fn drive_stack(stack: Stack, out: &Out, run: impl FnOnce(Teardown<'_>) -> Value) -> Value {
    let filter = || tracing_subscriber::EnvFilter::new("info");
    match stack {
        Stack::Baseline => {
            tracing::subscriber::set_global_default(tracing_subscriber::registry().with(filter()))
                .expect("first subscriber");
            run(Box::new(|| None))
        }
        Stack::Nowait => {
            let (logger, guard) = nowait_logger(out, false);
            tracing::subscriber::set_global_default(
                tracing_subscriber::registry()
                    .with(filter())
                    .with(nowait::NowaitLayer::new(logger.clone())),
            )
            .expect("first subscriber");
            run(Box::new(move || nowait_teardown(logger, guard)))
        }
        Stack::Appender => {
            let (writer, guard) = tracing_appender::non_blocking(out.writer());
            let counter = writer.error_counter();
            tracing::subscriber::set_global_default(
                tracing_subscriber::registry().with(filter()).with(
                    tracing_subscriber::fmt::layer()
                        .with_writer(writer)
                        .with_ansi(false),
                ),
            )
            .expect("first subscriber");
            run(Box::new(move || {
                drop(guard);
                Some(counter.dropped_lines() as u64)
            }))
        }
    }
}
