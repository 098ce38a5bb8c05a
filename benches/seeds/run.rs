//! One timed run, in its own process (nowait's global logger can be set
//! once per process): `seeds run KIND --n N [--batch B] [--target file|null]
//! --dir DIR [--pin]`. Prints one `RESULT key=value ...` line on success;
//! exits non-zero, printing nothing of the kind, if the output is wrong.
//!
//! What is timed: from the first write (or log call) to the moment the
//! output is closed — `BufWriter` flushed and the `File` dropped, or
//! nowait's guard dropped (the writer drained, the file closed). Opening
//! the file, building the logger and formatting the floor's buffer are
//! not timed. Nothing is fsynced: "written" means in the page cache.
//!
//! Write calls are counted by the kernel: the `syscw` and `wchar` lines of
//! `/proc/self/io` (every write-like system call of the process, all
//! threads, exited ones included) read before and after. For nowait the
//! calls on the sink come from its own [`SinkStats::write_calls`]; the
//! difference to `syscw` is the writes on its wake-up eventfd (8 bytes
//! each), reported as `other_writes`.
//!
//! The environment variable `SEEDS_CORRUPT` (tests only) appends a stray
//! line to the output file before it is checked, to prove the check runs.
//!
//! [`SinkStats::write_calls`]: nowait::stats::SinkStats::write_calls

use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, LineWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use crate::verify;

/// The line of the buffer-size experiment.
pub(crate) const LINE: &[u8] = b"test data\n";

/// Ring capacity of every nowait run: large enough that the writer's
/// batches, not the ring, bound the size of a write (a round takes at most
/// a ring's worth), small enough to be realistic. With the `Block` policy
/// nothing is dropped whatever its size.
pub(crate) const RING: usize = 16 << 20;

/// Where a run writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// A new regular file in the run directory.
    File,
    /// `/dev/null` (a character device).
    Null,
}

impl Target {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Target::File => "file",
            Target::Null => "null",
        }
    }

    pub(crate) fn parse(s: &str) -> Result<Target, String> {
        match s {
            "file" => Ok(Target::File),
            "null" => Ok(Target::Null),
            _ => Err(format!("--target must be file or null, got {s:?}")),
        }
    }
}

/// The parsed arguments of one run.
#[derive(Debug)]
pub(crate) struct Spec {
    pub(crate) kind: String,
    pub(crate) n: u64,
    pub(crate) batch: usize,
    pub(crate) target: Target,
    pub(crate) dir: PathBuf,
    pub(crate) pin: bool,
}

/// What one run measured.
#[derive(Debug, Default)]
struct Outcome {
    secs: f64,
    /// nowait: until the last log call returned.
    producer_secs: Option<f64>,
    /// Write calls on the output (see the module docs).
    writes: u64,
    /// Other write-like system calls of the process during the run.
    other_writes: u64,
    /// Bytes written to the output.
    bytes: u64,
    pinned: bool,
    /// The last line of a verified integers file.
    last_line: Option<String>,
}

/// Runs one experiment and prints its `RESULT` line.
pub(crate) fn main(spec: &Spec) -> Result<(), String> {
    fs::create_dir_all(&spec.dir).map_err(|e| format!("creating {}: {e}", spec.dir.display()))?;
    let path = match spec.target {
        Target::File => spec.dir.join(format!("{}.out", spec.kind)),
        Target::Null => PathBuf::from("/dev/null"),
    };
    if spec.target == Target::File {
        let _ = fs::remove_file(&path);
    }
    let result = run(spec, &path);
    if spec.target == Target::File {
        let _ = fs::remove_file(&path);
    }
    let o = result?;
    let mut line = format!(
        "RESULT secs={:.9} writes={} other_writes={} bytes={} pinned={}",
        o.secs, o.writes, o.other_writes, o.bytes, o.pinned
    );
    if let Some(p) = o.producer_secs {
        line.push_str(&format!(" producer_secs={p:.9}"));
    }
    if let Some(last) = &o.last_line {
        line.push_str(&format!(" last_line={last}"));
    }
    println!("{line}");
    Ok(())
}

fn run(spec: &Spec, path: &Path) -> Result<Outcome, String> {
    let n = spec.n;
    let o = match spec.kind.as_str() {
        "lines-nowait" => nowait_run(spec, path, |n| {
            for _ in 0..n {
                nowait::info!("test data");
            }
        })?,
        "lines-bufwriter" => plain_run(spec, path, |f| {
            let mut w = BufWriter::with_capacity(spec.batch, f);
            for _ in 0..n {
                w.write_all(LINE)?;
            }
            w.into_inner().map_err(|e| e.into_error())
        })?,
        "lines-linewriter" => plain_run(spec, path, |f| {
            let mut w = LineWriter::new(f);
            for _ in 0..n {
                w.write_all(LINE)?;
            }
            w.into_inner().map_err(|e| e.into_error())
        })?,
        "lines-file" => plain_run(spec, path, |mut f| {
            for _ in 0..n {
                f.write_all(LINE)?;
            }
            Ok(f)
        })?,
        "ints-nowait" => nowait_run(spec, path, |n| {
            for i in 0..n {
                nowait::info!("{}", i);
            }
        })?,
        "ints-writeln" => plain_run(spec, path, |f| {
            let mut w = BufWriter::new(f);
            for i in 0..n {
                writeln!(w, "{}", i)?;
            }
            w.into_inner().map_err(|e| e.into_error())
        })?,
        "ints-itoa" => plain_run(spec, path, |f| {
            let mut w = BufWriter::new(f);
            let mut buf = itoa::Buffer::new();
            for i in 0..n {
                w.write_all(buf.format(i).as_bytes())?;
                w.write_all(b"\n")?;
            }
            w.into_inner().map_err(|e| e.into_error())
        })?,
        "ints-floor" => {
            let mut text = Vec::new();
            let mut buf = itoa::Buffer::new();
            for i in 0..n {
                text.extend_from_slice(buf.format(i).as_bytes());
                text.push(b'\n');
            }
            plain_run(spec, path, |mut f| {
                f.write_all(&text)?;
                Ok(f)
            })?
        }
        "bytes-bufwriter" => plain_run(spec, path, |f| {
            let mut w = BufWriter::new(f);
            for _ in 0..n {
                w.write_all(b"x")?;
            }
            w.into_inner().map_err(|e| e.into_error())
        })?,
        "bytes-file" => plain_run(spec, path, |mut f| {
            for _ in 0..n {
                f.write_all(b"x")?;
            }
            Ok(f)
        })?,
        "bytes-nowait" => nowait_run(spec, path, |n| {
            for _ in 0..n {
                nowait::info!("x");
            }
        })?,
        other => return Err(format!("unknown kind {other:?}")),
    };
    if std::env::var_os("SEEDS_CORRUPT").is_some() && spec.target == Target::File {
        // Tests only: a stray line, as a buggy writer would leave, which
        // the check below must catch.
        let mut f = OpenOptions::new()
            .append(true)
            .open(path)
            .map_err(|e| e.to_string())?;
        f.write_all(b"stray\n").map_err(|e| e.to_string())?;
    }
    let mut o = o;
    o.last_line = check_output(spec, path, &o)?;
    Ok(o)
}

/// Checks the bytes a run wrote and the file's content; returns the last
/// line of an integers file.
fn check_output(spec: &Spec, path: &Path, o: &Outcome) -> Result<Option<String>, String> {
    let n = spec.n;
    let (line, expected_bytes): (&[u8], u64) = match spec.kind.as_str() {
        k if k.starts_with("lines-") => (LINE, LINE.len() as u64 * n),
        "bytes-bufwriter" | "bytes-file" => (b"x", n),
        "bytes-nowait" => (b"x\n", 2 * n),
        // 0..n in decimal, one per line.
        _ => (b"", (0..n).map(decimal_len).sum::<u64>() + n),
    };
    if o.bytes != expected_bytes {
        return Err(format!(
            "{}: {} bytes written, expected {expected_bytes}",
            spec.kind, o.bytes
        ));
    }
    if o.writes == 0 && n > 0 {
        return Err(format!("{}: no write call counted", spec.kind));
    }
    if spec.target == Target::Null {
        return Ok(None);
    }
    if line.is_empty() {
        let last = verify::integers(path, n).map_err(|e| format!("{}: {e}", spec.kind))?;
        Ok(Some(last))
    } else {
        verify::repeated(path, line, n).map_err(|e| format!("{}: {e}", spec.kind))?;
        Ok(None)
    }
}

fn decimal_len(i: u64) -> u64 {
    itoa::Buffer::new().format(i).len() as u64
}

/// `(syscw, wchar)` of this process so far.
fn io_counters() -> Result<(u64, u64), String> {
    let text = fs::read_to_string("/proc/self/io")
        .map_err(|e| format!("reading /proc/self/io (needed to count write calls): {e}"))?;
    let field = |name: &str| -> Result<u64, String> {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.trim().parse().ok())
            .ok_or_else(|| format!("no {name} in /proc/self/io"))
    };
    Ok((field("syscw:")?, field("wchar:")?))
}

fn open(spec: &Spec, path: &Path) -> Result<File, String> {
    let mut options = OpenOptions::new();
    options.write(true);
    if spec.target == Target::File {
        options.create_new(true);
    }
    options
        .open(path)
        .map_err(|e| format!("opening {}: {e}", path.display()))
}

/// A run on a `File` owned by the code under test: `body` writes and hands
/// the file back; dropping it (closing) is timed.
fn plain_run(
    spec: &Spec,
    path: &Path,
    body: impl FnOnce(File) -> std::io::Result<File>,
) -> Result<Outcome, String> {
    let file = open(spec, path)?;
    let pinned = spec.pin && pin(std::process::id(), 0);
    let (w0, b0) = io_counters()?;
    let start = Instant::now();
    let file = body(file).map_err(|e| format!("{}: write failed: {e}", spec.kind))?;
    drop(file);
    let secs = start.elapsed().as_secs_f64();
    let (w1, b1) = io_counters()?;
    Ok(Outcome {
        secs,
        producer_secs: None,
        writes: w1 - w0,
        other_writes: 0,
        bytes: b1 - b0,
        pinned,
        last_line: None,
    })
}

/// A run through nowait's macro and global logger, minimal text format
/// (no time, level or target), `Block` policy.
fn nowait_run(spec: &Spec, path: &Path, body: impl FnOnce(u64)) -> Result<Outcome, String> {
    let format = nowait::format::Text::new()
        .without_time()
        .with_level(false)
        .with_target(false)
        .with_ansi(false);
    let (logger, guard) = nowait::Builder::new()
        .capacity(RING)
        .batch_size(spec.batch)
        .full_policy(nowait::FullPolicy::Block)
        .shutdown_timeout(Duration::from_secs(600))
        .sink(
            nowait::Sink::file(path)
                .format(format)
                // Above the batch, so that the batch is what is written.
                .buffer_size((4 * spec.batch).max(4 << 20)),
        )
        .build()
        .map_err(|e| format!("building the logger: {e}"))?;
    nowait::set_global(logger).map_err(|e| format!("setting the global logger: {e}"))?;
    let logger = nowait::global().ok_or("no global logger")?;
    let pinned = spec.pin && pin_writer() && pin(std::process::id(), 0);
    let (w0, b0) = io_counters()?;
    let start = Instant::now();
    body(spec.n);
    let producer_secs = start.elapsed().as_secs_f64();
    drop(guard);
    let secs = start.elapsed().as_secs_f64();
    let (w1, b1) = io_counters()?;
    let stats = logger.stats();
    let sink = stats.sinks.first().ok_or("no sink in the stats")?;
    let n = spec.n;
    if stats.dropped() != 0
        || stats.abandoned != 0
        || stats.records_written != n
        || sink.records_written != n
        || sink.dropped() != 0
    {
        return Err(format!(
            "{}: records lost or not written: {stats:?}",
            spec.kind
        ));
    }
    if w1 - w0 < sink.write_calls || b1 - b0 < sink.bytes_written {
        return Err(format!(
            "{}: the kernel counted {} writes of {} bytes, fewer than nowait's {} of {}",
            spec.kind,
            w1 - w0,
            b1 - b0,
            sink.write_calls,
            sink.bytes_written
        ));
    }
    Ok(Outcome {
        secs,
        producer_secs: Some(producer_secs),
        writes: sink.write_calls,
        other_writes: (w1 - w0) - sink.write_calls,
        bytes: sink.bytes_written,
        pinned,
        last_line: None,
    })
}

/// Pins thread `tid` of this process to `cpu` with `taskset -p` (std has
/// no affinity call and this crate uses no unsafe code).
fn pin(tid: u32, cpu: usize) -> bool {
    let ok = Command::new("taskset")
        .args(["-p", "-c", &cpu.to_string(), &tid.to_string()])
        .stdout(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
        && allowed_cpus(tid).as_deref() == Some(cpu.to_string().as_str());
    if !ok {
        eprintln!("warning: could not pin thread {tid} to CPU {cpu}");
    }
    ok
}

/// The CPUs thread `tid` of this process may run on, as the kernel lists
/// them.
fn allowed_cpus(tid: u32) -> Option<String> {
    let status = fs::read_to_string(format!("/proc/self/task/{tid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| Some(l.strip_prefix("Cpus_allowed_list:")?.trim().to_string()))
}

/// Pins nowait's writer thread (found by its name, which the new thread
/// sets itself: wait for it up to a second) to CPU 1.
fn pin_writer() -> bool {
    let deadline = Instant::now() + Duration::from_secs(1);
    while Instant::now() < deadline {
        if let Some(tid) = writer_tid() {
            return pin(tid, 1);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    eprintln!("warning: no nowait-writer thread found to pin");
    false
}

fn writer_tid() -> Option<u32> {
    fs::read_dir("/proc/self/task")
        .ok()?
        .flatten()
        .find(|task| {
            fs::read_to_string(task.path().join("comm"))
                .is_ok_and(|c| c.trim_end() == "nowait-writer")
        })?
        .file_name()
        .to_str()?
        .parse()
        .ok()
}
