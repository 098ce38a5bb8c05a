//! The crash-durable ring: a child process logs records
//! with unique numbers into a logger built with `crash_durable`, and is
//! killed with SIGKILL (no handler runs). The next `build()` with the same
//! path writes what it had accepted and not written: every record the
//! child was told was accepted appears exactly once, torn records are
//! counted, and a second recovery writes nothing twice.
//!
//! The child is this test binary re-run by `nowait_testkit::child`.
#![cfg(all(target_os = "linux", not(miri)))] // SIGKILL, sched_setaffinity; Miri cannot spawn.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use nowait_testkit::child::{self, Child};

use nowait_core::format::Plain;
use nowait_core::{Builder, FullPolicy, Level, Sink};

/// The format a run uses: the child's is `Plain` for the text front end
/// and `Text` for the macros; a recovery may use another (`Text`, `Json`).
#[derive(Clone, Copy)]
enum Fmt {
    Plain,
    Text,
    Json,
    /// A binary log (`Sink::binary`), read back through `binary::Reader`.
    Binary,
}

fn builder(log: &Path, ring: &Path, format: Fmt, capacity: usize) -> Builder {
    builder_with(log, ring, format, capacity, None)
}

/// [`builder`] with the file sink's buffer size, if given.
fn builder_with(
    log: &Path,
    ring: &Path,
    format: Fmt,
    capacity: usize,
    buffer: Option<usize>,
) -> Builder {
    // A log path that is a directory: a rolling sink in it, by size (and
    // compressed when its name says so).
    let sink = if log.extension().is_some_and(|e| e == "rolling") {
        let compress = log.to_string_lossy().contains("gz");
        // "newfile": each run starts a file of its own, no size limit.
        let fresh = log.to_string_lossy().contains("newfile");
        let rolling = nowait_core::sink::Rolling::never(log, "app.log")
            .compress(compress)
            .new_file_on_start(fresh);
        Sink::rolling(if fresh {
            rolling
        } else {
            rolling.max_size(64 << 10)
        })
    } else {
        Sink::file(log)
    };
    let sink = match buffer {
        Some(bytes) => sink.buffer_size(bytes),
        None => sink,
    };
    let b = Builder::new()
        .capacity(capacity)
        .full_policy(FullPolicy::Block)
        .catch_panics(false)
        .drain_on_crash(false)
        .sink(sink)
        .crash_durable(ring);
    match format {
        Fmt::Plain => b.format(Plain),
        Fmt::Text => b.format(nowait_core::format::Text::new().with_ansi(false)),
        Fmt::Json => b.format(nowait_core::format::Json::new()),
        Fmt::Binary => b.format(nowait_core::binary::Binary::new()),
    }
}

/// The format of a case's child and of its recoveries: a binary log for
/// the `binary` cases (a recovery must write the file's own format),
/// else `Text` for the macros and `Plain` for the text front end.
fn child_format(case: &str) -> Fmt {
    if case.contains("binary") {
        Fmt::Binary
    } else if case.contains("macros") {
        Fmt::Text
    } else {
        Fmt::Plain
    }
}

/// A format that crashes the writer thread (a write through a null
/// pointer) on the record "crash", like a buggy `Format` would.
#[derive(Debug)]
struct Poisoned;

impl nowait_core::format::Format for Poisoned {
    fn format(&mut self, record: &nowait_core::record::Record<'_>, out: &mut Vec<u8>) {
        if record.payload() == b"crash" {
            // SAFETY: none: the crash is the point.
            unsafe { std::ptr::write_volatile(std::ptr::null_mut::<u64>(), 1) };
        }
        Plain.format(record, out);
    }

    fn notice(&mut self, notice: &nowait_core::record::Notice<'_>, out: &mut Vec<u8>) {
        Plain.notice(notice, out);
    }
}

#[derive(Debug)]
struct MakePoisoned;

impl nowait_core::format::MakeFormat for MakePoisoned {
    fn make_format(
        &self,
        _: &nowait_core::format::SinkInfo,
    ) -> Box<dyn nowait_core::format::Format> {
        Box::new(Poisoned)
    }
}

#[test]
fn child_entry() {
    let Some(case) = child::role() else {
        return;
    };
    let log = PathBuf::from(std::env::var("NOWAIT_LOG").unwrap());
    let ring = PathBuf::from(std::env::var("NOWAIT_RING").unwrap());
    let capacity: usize = std::env::var("NOWAIT_CAPACITY").unwrap().parse().unwrap();
    let count: u64 = std::env::var("NOWAIT_COUNT").unwrap().parse().unwrap();
    let macros = case.contains("macros");
    if case.starts_with("poison") {
        // "poison": logs, then the record that crashes the writer;
        // "poison-recover": only recovers (with the same format).
        // The crash handler (on by default) marks the file when the
        // writer thread crashes.
        let (logger, guard) = builder(&log, &ring, Fmt::Plain, capacity)
            .format(MakePoisoned)
            .drain_on_crash(true)
            .build()
            .unwrap();
        if case == "poison" {
            for i in 0..count {
                logger.log(Level::Info, &format!("line {i}")).unwrap();
            }
            logger.log(Level::Info, "crash").unwrap();
            std::thread::sleep(Duration::from_secs(30));
            std::process::exit(3);
        }
        drop((logger, guard));
        std::process::exit(0);
    }
    if case == "stuck-timeout" {
        // A second sink that never returns from its first write: the
        // writer is stuck, the ring fills, and pushes time out (counted,
        // never reported by the writer) until the kill.
        struct Stuck;
        impl Write for Stuck {
            fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
                loop {
                    std::thread::sleep(Duration::from_secs(3600));
                }
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let (logger, guard) = builder(&log, &ring, Fmt::Plain, capacity)
            .full_policy(FullPolicy::BlockTimeout(Duration::from_millis(1)))
            .sink(Sink::writer(Stuck))
            .build()
            .unwrap();
        for i in 0..count {
            let _ = logger.log(Level::Info, &format!("line {i}"));
        }
        println!("\ntimeouts {}", logger.stats().dropped_timeout);
        std::io::stdout().flush().unwrap();
        std::mem::forget(guard);
        // SAFETY: sends SIGKILL to this process; nothing runs after it.
        unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        std::thread::sleep(Duration::from_secs(60));
    }
    if case.starts_with("recover-") {
        // Only recovers, then exits normally, unless killed first.
        let (logger, guard) = builder(&log, &ring, child_format(&case), capacity)
            .build()
            .unwrap();
        drop((logger, guard));
        std::process::exit(0);
    }
    let buffer = (std::env::var("NOWAIT_BUFFER").ok())
        .filter(|b| !b.is_empty())
        .map(|b| b.parse().unwrap());
    let (logger, guard) = builder_with(&log, &ring, child_format(&case), capacity, buffer)
        .build()
        .unwrap();
    if macros {
        nowait_core::set_global(logger.clone()).unwrap();
    }
    if case.starts_with("pinned") {
        // One CPU: the writer thread has had no chance to run when the
        // kill comes, as on a loaded machine.
        nowait_testkit::pin_to_cpu0();
    }
    let mut out = std::io::stdout().lock();
    for i in 0..count {
        if macros {
            nowait_core::info!("line {}", i);
        } else {
            logger.log(Level::Info, &format!("line {i}")).unwrap();
        }
        if i % 256 == 0 {
            // Accepted: the parent may count on it.
            writeln!(out, "acked {i}").unwrap();
            out.flush().unwrap();
        }
    }
    writeln!(out, "acked {}", count - 1).unwrap();
    out.flush().unwrap();
    std::mem::forget(guard);
    // SAFETY: sends SIGKILL to this process; nothing runs after it.
    unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
    std::thread::sleep(Duration::from_secs(60));
}

struct Run {
    acked: Option<u64>,
    signal: Option<i32>,
    stdout: String,
}

/// Runs a child; `kill_after`: the parent kills it that long after start
/// (else the child kills itself after logging everything).
fn run(
    case: &str,
    log: &Path,
    ring: &Path,
    count: u64,
    capacity: usize,
    kill_after: Option<Duration>,
) -> Run {
    run_with(case, log, ring, count, capacity, kill_after, None)
}

/// [`run`] with the file sink's buffer size, if given.
fn run_with(
    case: &str,
    log: &Path,
    ring: &Path,
    count: u64,
    capacity: usize,
    kill_after: Option<Duration>,
    buffer: Option<usize>,
) -> Run {
    let buffer = buffer.map_or(String::new(), |b| b.to_string());
    let out = Child::new("child_entry", case)
        .env("NOWAIT_BUFFER", buffer)
        .env("NOWAIT_LOG", log)
        .env("NOWAIT_RING", ring)
        .env("NOWAIT_COUNT", count.to_string())
        .env("NOWAIT_CAPACITY", capacity.to_string())
        .capture_stdout()
        .kill_after(kill_after)
        .spawn()
        .output();
    Run {
        acked: child::last_number(&out.stdout, "acked "),
        signal: out.status.signal(),
        stdout: out.stdout,
    }
}

/// Recovers by building a logger on the same files, as the next run of
/// the program would, and shuts it down.
fn recover(log: &Path, ring: &Path, case: &str, capacity: usize) {
    let (_logger, guard) = builder(log, ring, child_format(case), capacity)
        .build()
        .unwrap();
    drop(guard);
}

/// The catalog's length in a crash-durable file (the header's
/// `catalog_used` word, at byte 192).
fn catalog_used(ring: &Path) -> u64 {
    let bytes = std::fs::read(ring).unwrap();
    u64::from_le_bytes(bytes[192..200].try_into().unwrap())
}

/// The numbers of the "line N" records in the log, with how often each
/// appears, and the notices.
fn read_log(log: &Path) -> (BTreeMap<u64, u32>, Vec<String>) {
    if log.is_dir() {
        // A rolling sink's housekeeping thread may still be compressing
        // (it outlives the guard): read until two reads agree.
        let mut last = read_once(log);
        for _ in 0..100 {
            std::thread::sleep(Duration::from_millis(20));
            let now = read_once(log);
            if now == last {
                break;
            }
            last = now;
        }
        return last;
    }
    read_once(log)
}

fn read_once(log: &Path) -> (BTreeMap<u64, u32>, Vec<String>) {
    let text = binary_as_text(log).unwrap_or_else(|| nowait_testkit::read_log(log));
    let mut seen = BTreeMap::new();
    let mut notices = Vec::new();
    for line in text.lines() {
        // "line N" in every format (a JSON message ends with a quote).
        let n = line.rsplit_once("line ").and_then(|(_, rest)| {
            let digits = rest.trim_end_matches(|c: char| !c.is_ascii_digit());
            digits.parse::<u64>().ok()
        });
        match n {
            Some(n) => *seen.entry(n).or_insert(0) += 1,
            None => notices.push(line.to_owned()),
        }
    }
    (seen, notices)
}

/// A binary log rendered as `Text` would have written it; `None` for any
/// other file. Before a recovery its last frame may be torn (the kill cut
/// a write); it must not be damaged.
fn binary_as_text(log: &Path) -> Option<String> {
    binary_read(log).map(|(text, _)| text)
}

/// After a recovery, a binary log reads to its end: no frame is torn.
fn assert_whole_if_binary(log: &Path) {
    if let Some((_, stop)) = binary_read(log) {
        assert_eq!(stop, nowait_core::binary::Stop::End, "{}", log.display());
    }
}

fn binary_read(log: &Path) -> Option<(String, nowait_core::binary::Stop)> {
    use nowait_core::format::{MakeFormat, SinkInfo, Text};
    let bytes = std::fs::read(log).ok()?;
    if !bytes.starts_with(b"\x89NWB") {
        return None;
    }
    let mut format = Text::new()
        .with_ansi(false)
        .make_format(&SinkInfo::new("test", false));
    let mut out = Vec::new();
    let mut reader = nowait_core::binary::Reader::new(&bytes[..]);
    for entry in &mut reader {
        entry.unwrap().render(&mut *format, &mut out);
    }
    assert_ne!(
        reader.stop(),
        nowait_core::binary::Stop::Failed,
        "{}",
        log.display()
    );
    Some((String::from_utf8(out).unwrap(), reader.stop()))
}

/// Every record up to `acked` is there exactly once, and nothing after
/// a gap (one producer: what it committed is a prefix).
fn check_exactly_once(seen: &BTreeMap<u64, u32>, acked: Option<u64>, what: &str) {
    if let Some(gap) = (0..seen.len() as u64).find(|n| !seen.contains_key(n)) {
        let upto = (gap..).find(|n| seen.contains_key(n)).unwrap_or(gap);
        eprintln!("{what}: missing {gap}..{upto}");
    }
    let dups: Vec<_> = seen.iter().filter(|(_, &c)| c > 1).take(5).collect();
    assert!(dups.is_empty(), "{what}: written twice: {dups:?}");
    let n = seen.len() as u64;
    if let Some(last) = seen.keys().next_back() {
        assert_eq!(*last + 1, n, "{what}: a gap in 0..={last}");
    }
    if let Some(acked) = acked {
        assert!(
            n > acked,
            "{what}: accepted up to {acked}, only {n} in the log"
        );
    }
}

fn sigkill_after_logging(case: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (log, ring) = (dir.path().join("app.log"), dir.path().join("ring"));
    let n = 10_000;
    let run = run(case, &log, &ring, n, 1 << 20, None);
    assert_eq!(run.signal, Some(libc::SIGKILL));
    assert_eq!(run.acked, Some(n - 1));
    let (before, _) = read_log(&log);
    let t = std::time::Instant::now();
    recover(&log, &ring, case, 1 << 20);
    let took = t.elapsed();
    assert_whole_if_binary(&log);
    let (after, notices) = read_log(&log);
    eprintln!(
        "{case}: {} of {n} on disk after SIGKILL, {} after recovery (build + guard drop {took:?}); \
         {notices:?}",
        before.len(),
        after.len()
    );
    check_exactly_once(&after, Some(n - 1), case);
    assert_eq!(after.len() as u64, n);
    if before.len() < n as usize {
        assert!(
            notices
                .iter()
                .any(|l| l.contains("recovered") && l.contains("written by pid")),
            "no recovery notice: {notices:?}"
        );
    }
    // A second recovery writes nothing twice.
    recover(&log, &ring, case, 1 << 20);
    let (again, _) = read_log(&log);
    assert_eq!(again, after);
}

#[test]
fn sigkill_right_after_logging_loses_nothing_text() {
    sigkill_after_logging("pinned-text");
}

#[test]
fn sigkill_right_after_logging_loses_nothing_macros() {
    sigkill_after_logging("pinned-macros");
}

/// A rolling sink that starts a new file on each run: the recovering run
/// first completes the file the killed run was writing (what was
/// formatted for it), then writes into a file of its own, the next index;
/// every record is in exactly one file.
#[test]
fn sigkill_then_a_new_file_on_start_completes_the_killed_runs_file() {
    let dir = tempfile::tempdir().unwrap();
    let (log, ring) = (dir.path().join("newfile.rolling"), dir.path().join("ring"));
    std::fs::create_dir(&log).unwrap();
    let n = 10_000;
    let run = run("free-text", &log, &ring, n, 1 << 20, None);
    assert_eq!(run.signal, Some(libc::SIGKILL));
    assert_eq!(run.acked, Some(n - 1));
    let names = |dir: &Path| {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    };
    assert_eq!(names(&log), ["app.log"]);
    let killed_len = std::fs::metadata(log.join("app.log")).unwrap().len();
    recover(&log, &ring, "free-text", 1 << 20);
    assert_eq!(names(&log), ["app.log", "app.log.1"]);
    let (after, notices) = read_log(&log);
    check_exactly_once(&after, Some(n - 1), "new file on start");
    assert_eq!(after.len() as u64, n, "{notices:?}");
    // The killed run's file got what was formatted for it, whole lines.
    let first = std::fs::read_to_string(log.join("app.log")).unwrap();
    assert!(first.len() as u64 >= killed_len);
    assert!(first.is_empty() || first.ends_with('\n'));
    // A second recovery writes nothing twice and starts one more file.
    recover(&log, &ring, "free-text", 1 << 20);
    assert_eq!(names(&log), ["app.log", "app.log.1", "app.log.2"]);
    assert_eq!(read_log(&log).0, after);
}

#[test]
fn sigkill_right_after_logging_loses_nothing_binary() {
    sigkill_after_logging("pinned-binary-text");
    sigkill_after_logging("pinned-binary-macros");
}

/// SIGKILL at random points while the child logs at full speed into a
/// rolling sink that rolls every 64 KiB (some runs compressing the rolled
/// files): a record is in exactly one file, never in the file a roll left
/// and again in the next.
#[test]
fn sigkill_with_a_rolling_sink_each_record_exactly_once() {
    let runs: u64 = std::env::var("NOWAIT_DURABLE_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(40, |n: u64| n / 5);
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let (mut killed_mid, mut rolled) = (0, 0);
    for seed in 0..runs {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let r = state.wrapping_mul(0x2545_F491_4F6C_DD1D);
        let compress = r % 2 == 0 && cfg!(feature = "gzip");
        let delay = Duration::from_micros(20_000 + (r >> 16) % 200_000);
        let log = dir.join(format!(
            "{seed}{}.rolling",
            if compress { "gz" } else { "" }
        ));
        std::fs::create_dir(&log).unwrap();
        let ring = dir.join(format!("{seed}.ring"));
        let run = run("free-text", &log, &ring, 5_000_000, 64 << 10, Some(delay));
        recover(&log, &ring, "free-text", 64 << 10);
        let (after, notices) = read_log(&log);
        let what = format!(
            "run {seed} (compress {compress}, kill after {delay:?}; {} files; {notices:?})",
            std::fs::read_dir(&log).unwrap().count()
        );
        check_exactly_once(&after, run.acked, &what);
        killed_mid += u32::from(run.signal == Some(libc::SIGKILL));
        rolled += std::fs::read_dir(&log).unwrap().count() - 1;
    }
    eprintln!("{runs} runs, {killed_mid} killed while logging, {rolled} rolled files");
    assert!(rolled as u64 > runs, "too few rolls to test anything");
}

/// SIGKILL at seeded random points while the child logs at full speed,
/// with rings of several sizes and both front ends.
#[test]
fn sigkill_at_random_points_each_record_exactly_once() {
    let runs: u64 = std::env::var("NOWAIT_DURABLE_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let dir = tempfile::tempdir().unwrap();
    let dir = dir.path();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        // xorshift64*: seeded, so a failure names its run.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    let (mut killed_mid, mut recovered_total, mut catalogs) = (0, 0u64, Vec::new());
    let (mut torn_total, mut completed) = (0u64, 0u64);
    for seed in 0..runs {
        let r = next();
        let macros = r % 2 == 0;
        // Every fourth run logs into a binary log.
        let binary = (r >> 50) % 4 == 0;
        let capacity = [4 << 10, 64 << 10, 1 << 20][(r >> 8) as usize % 3];
        // From inside the child's build() to well into its logging.
        let delay = Duration::from_micros(5_000 + (r >> 16) % 75_000);
        // Every third recovery uses the other format, every fourth adds a
        // sink: the next run of a program may be configured differently.
        let (other_format, extra_sink) = ((r >> 40) % 3 == 0, (r >> 44) % 4 == 0);
        let case = match (binary, macros) {
            (false, true) => "free-macros",
            (false, false) => "free-text",
            (true, true) => "free-binary-macros",
            (true, false) => "free-binary-text",
        };
        let log = dir.join(format!("{seed}.log"));
        let extra = dir.join(format!("{seed}.extra.log"));
        let ring = dir.join(format!("{seed}.ring"));

        let run = run(case, &log, &ring, 2_000_000, capacity, Some(delay));
        let (before, _) = read_log(&log);
        let format = match (binary, macros, other_format) {
            (true, ..) => Fmt::Binary,
            (false, false, false) => Fmt::Plain,
            (false, false, true) | (false, true, false) => Fmt::Text,
            (false, true, true) => Fmt::Json,
        };
        let mut b = builder(&log, &ring, format, capacity);
        if extra_sink {
            b = b.sink(Sink::file(&extra));
        }
        let (logger, guard) = b.build().unwrap();
        drop((logger, guard));
        assert_whole_if_binary(&log);
        let (after, notices) = read_log(&log);
        let what = format!(
            "run {seed} ({case}, ring {capacity}, kill after {delay:?}, other format {other_format}, \
             extra sink {extra_sink}; {notices:?})"
        );
        check_exactly_once(&after, run.acked, &what);
        if extra_sink {
            // The added sink gets the records recovered from the ring
            // (not the bytes completed from the first file's mirror).
            let (got, _) = read_log(&extra);
            assert!(
                got.iter().all(|(n, &c)| c == 1 && after.contains_key(n)),
                "{what}: the added sink got records the log does not have"
            );
        }
        recover(&log, &ring, case, capacity);
        assert_eq!(
            read_log(&log).0,
            after,
            "{what}: the second recovery wrote again"
        );
        catalogs.push(catalog_used(&ring));
        for notice in &notices {
            // "...; N record(s) claimed and never committed ... lost"
            if let Some((head, _)) = notice.split_once(" claimed and never committed") {
                let n = head.rsplit_once("; ").map_or(head, |(_, n)| n);
                torn_total += n.split(' ').next().unwrap().parse::<u64>().unwrap();
            }
            completed += u64::from(notice.contains("had formatted and not written"));
        }
        if run.signal == Some(libc::SIGKILL) {
            killed_mid += 1;
        }
        recovered_total += (after.len() - before.len()) as u64;
    }
    eprintln!(
        "{runs} runs, {killed_mid} killed while logging, {recovered_total} records recovered \
         in all, {torn_total} torn records counted, {completed} files completed from a mirror"
    );
    assert!(
        killed_mid > runs / 2,
        "the kills came too late to test anything"
    );
    assert!(recovered_total > 0, "nothing was ever recovered");
    // Recovering the same program's files again and again (a crash loop)
    // maps its call sites and threads to the ones already known: the
    // catalog does not grow with each generation.
    let first = catalogs.iter().take(20).max().copied().unwrap_or(0);
    assert!(
        catalogs.iter().all(|&c| c <= first),
        "the catalog grew from {first} to {:?} bytes",
        catalogs.iter().max()
    );
}

/// The crash-durable file's count of formatted bytes that outgrew a file
/// sink's mirror (the header word at byte 64).
fn mirror_overflow(ring: &Path) -> u64 {
    let bytes = std::fs::read(ring).unwrap();
    u64::from_le_bytes(bytes[64..72].try_into().unwrap())
}

/// A file sink with a small buffer (32 KiB, so the smallest mirror,
/// 64 KiB), fed at full speed: a batch of the ring formats to more than
/// the mirror holds, yet no commit outgrows it, so a SIGKILL at any point
/// loses nothing (the crash guarantee holds for that sink too).
#[test]
fn a_small_sink_buffer_never_outgrows_its_mirror() {
    for (seed, delay) in [None, Some(30), Some(60), Some(90)].into_iter().enumerate() {
        let dir = tempfile::tempdir().unwrap();
        let (log, ring) = (dir.path().join("app.log"), dir.path().join("ring"));
        let n = 300_000;
        // A kill that comes before the child built its logger (a loaded
        // machine starts processes slowly) tests nothing: such a run left
        // no file and acknowledged nothing; it is run again, killed later.
        let mut later = 1;
        let run = loop {
            let kill = delay.map(|ms| Duration::from_millis(ms * later));
            let run = run_with(
                "pinned-macros",
                &log,
                &ring,
                n,
                1 << 20,
                kill,
                Some(32 << 10),
            );
            if ring.exists() {
                break run;
            }
            assert!(
                run.acked.unwrap_or(0) == 0,
                "run {seed}: records acknowledged without a crash-durable file"
            );
            assert!(
                later < 64,
                "run {seed}: the child never created its crash-durable file"
            );
            let _ = std::fs::remove_file(&log);
            later *= 2;
        };
        let overflow = mirror_overflow(&ring);

        recover(&log, &ring, "macros", 1 << 20);
        let (after, notices) = read_log(&log);
        let what = format!("run {seed} (kill after {delay:?} ms; {notices:?})");
        eprintln!("{what}: overflow {overflow}");
        assert_eq!(overflow, 0, "{what}: bytes outgrew the mirror");
        assert!(!notices.iter().any(|l| l.contains("outgrown")), "{what}");
        check_exactly_once(&after, run.acked, &what);
        if delay.is_none() {
            assert_eq!(after.len() as u64, n, "{what}");
        }
    }
}

/// Records dropped under `FullPolicy::BlockTimeout` while the writer is
/// stuck in a sink (so it never reports them), then a SIGKILL: the next
/// start announces exactly how many the dead process dropped.
#[test]
fn block_timeout_drops_before_a_sigkill_are_announced_at_recovery() {
    let dir = tempfile::tempdir().unwrap();
    let (log, ring) = (dir.path().join("app.log"), dir.path().join("ring"));
    let run = run("stuck-timeout", &log, &ring, 5_000, 16 << 10, None);
    assert_eq!(run.signal, Some(libc::SIGKILL));
    let dropped = child::last_number(&run.stdout, "timeouts ")
        .unwrap_or_else(|| panic!("the child said {:?}", run.stdout));
    assert!(dropped > 0, "{}", run.stdout);
    recover(&log, &ring, "free-text", 16 << 10);
    let (seen, notices) = read_log(&log);
    let announced: Vec<&String> = notices
        .iter()
        .filter(|l| l.contains("ring full for the whole block timeout"))
        .collect();
    assert_eq!(announced.len(), 1, "{notices:?}");
    assert!(
        announced[0].contains(&format!("{dropped} records dropped")),
        "{dropped}: {notices:?}"
    );
    // Every record it accepted is in the log once (not a prefix: the
    // writer may free room between drops before it gets stuck), and the
    // drops were the rest.
    assert!(seen.values().all(|&c| c == 1), "written twice");
    assert_eq!(seen.len() as u64 + dropped, 5_000, "{notices:?}");
    // A second start announces nothing again.
    recover(&log, &ring, "free-text", 16 << 10);
    let (_, again) = read_log(&log);
    assert_eq!(
        again
            .iter()
            .filter(|l| l.contains("ring full for the whole block timeout"))
            .count(),
        1,
        "{again:?}"
    );
}

/// Drops that the writer did report (into the file, then a clean
/// shutdown) are not announced again by the next start.
#[test]
fn reported_drops_are_not_announced_again_after_a_clean_shutdown() {
    let dir = tempfile::tempdir().unwrap();
    let (log, ring) = (dir.path().join("app.log"), dir.path().join("ring"));
    let (logger, guard) = builder(&log, &ring, Fmt::Plain, 4 << 10)
        .full_policy(FullPolicy::Drop)
        .build()
        .unwrap();
    let mut refused = 0;
    for i in 0..20_000 {
        refused += u64::from(logger.try_log(Level::Info, &format!("line {i}")).is_err());
    }
    drop(guard);
    assert!(refused > 0, "the ring never filled");
    assert_eq!(logger.stats().dropped(), refused);
    drop(logger);
    let (seen, notices) = read_log(&log);
    let reported: u64 = (notices.iter())
        .filter(|l| l.contains(" dropped (ring "))
        .map(|l| {
            let head = &l[..l.find(" record").unwrap()];
            head.rsplit(' ').next().unwrap().parse::<u64>().unwrap()
        })
        .sum();
    assert_eq!(reported, refused, "{notices:?}");
    assert_eq!(seen.len() as u64 + refused, 20_000);
    recover(&log, &ring, "free-text", 4 << 10);
    let (_, after) = read_log(&log);
    assert_eq!(after, notices, "announced again");
}

#[test]
fn a_path_in_use_by_a_live_logger_is_a_build_error() {
    let dir = tempfile::tempdir().unwrap();
    let (log, ring) = (dir.path().join("a.log"), dir.path().join("ring"));
    let (logger, guard) = builder(&log, &ring, Fmt::Plain, 1 << 16).build().unwrap();
    let err = builder(&log, &ring, Fmt::Plain, 1 << 16)
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("crash-durable"), "{err}");
    logger.log(Level::Info, "line 0").unwrap();
    // Shut down, with a handle still alive (as a global logger would be):
    // the path is free again, and the new logger starts a file of its own.
    drop(guard);
    let (second, guard) = builder(&log, &ring, Fmt::Plain, 1 << 16).build().unwrap();
    second.log(Level::Info, "line 1").unwrap();
    assert!(
        logger.log(Level::Info, "line 2").is_err(),
        "the old logger took a record"
    );
    drop((second, guard, logger));
    let (seen, notices) = read_log(&log);
    assert_eq!(
        seen.keys().copied().collect::<Vec<_>>(),
        [0, 1],
        "{notices:?}"
    );
}

/// A full file system (a 1 MiB tmpfs, smaller than the file) is a clear
/// build error, never a `SIGBUS` on a later push into a page with no room;
/// what a dead process left in the file is kept for a start with room.
#[test]
fn no_room_for_the_file_is_a_build_error_and_keeps_what_was_there() {
    let Some(dir) = nowait_testkit::Tmpfs::mount("1m") else {
        return;
    };
    let ring = dir.path().join("ring");
    let mut left = b"nowaitd1".to_vec();
    left.extend(b"what a dead process left".repeat(100));
    std::fs::write(&ring, &left).unwrap();
    let log = std::env::temp_dir().join(format!("nowait-durable-full-{}.log", std::process::id()));
    let err = builder(&log, &ring, Fmt::Plain, 4 << 10)
        .build()
        .unwrap_err();
    let _ = std::fs::remove_file(&log);
    let text = format!("{err} {:?}", std::error::Error::source(&err));
    assert!(text.contains("crash-durable"), "{text}");
    assert!(
        text.contains("StorageFull") || text.contains("No space"),
        "{text}"
    );
    assert_eq!(
        std::fs::read(&ring).unwrap(),
        left,
        "the old content was lost"
    );
}

/// A record that crashes the writer thread (a `Format` that segfaults on
/// it) is set aside at the next start, counted: recovering it would crash
/// that process's writer too, and every start after (a crash loop). The
/// next start, with the same format, writes every other record once.
#[test]
fn a_record_that_crashes_the_writer_is_set_aside_not_retried() {
    let dir = tempfile::tempdir().unwrap();
    let (log, ring) = (dir.path().join("app.log"), dir.path().join("ring"));
    let n = 10_000;
    let first = run("poison", &log, &ring, n, 1 << 20, None);
    assert_eq!(first.signal, Some(libc::SIGSEGV), "the first process");
    let (before, _) = read_log(&log);
    let second = run("poison-recover", &log, &ring, 0, 1 << 20, None);
    assert_eq!(second.signal, None, "the second process crashed too");
    let (after, notices) = read_log(&log);
    eprintln!(
        "poison: {} of {n} on disk after the crash, {} after the next start; {notices:?}",
        before.len(),
        after.len()
    );
    check_exactly_once(&after, Some(n - 1), "poison");
    assert_eq!(after.len() as u64, n, "{notices:?}");
    assert!(!notices.iter().any(|l| l.ends_with("crash")), "{notices:?}");
    assert!(
        notices.iter().any(|l| l.contains("1 record set aside")),
        "{notices:?}"
    );
    recover(&log, &ring, "pinned-text", 1 << 20);
    assert_eq!(read_log(&log).0, after, "the third start wrote again");
}

/// A process killed while it recovers (SIGKILL at random points of its
/// `build()` and of the writing that follows, again and again, as in a
/// crash loop) loses nothing and writes nothing twice: the old file stays
/// whole until the recovered records are in the new one's ring, and the
/// writer starts only then.
#[test]
fn a_recovery_killed_midway_loses_nothing_and_writes_nothing_twice() {
    let dir = tempfile::tempdir().unwrap();
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let (mut kills, mut cases) = (0, 0);
    for round in 0..6u64 {
        let (log, ring) = (
            dir.path().join(format!("{round}.log")),
            dir.path().join(format!("{round}.ring")),
        );
        // The text front end, the macros, and a binary log.
        let (case, recover_case) = [
            ("pinned-text", "recover-text"),
            ("pinned-macros", "recover-macros"),
            ("pinned-binary-text", "recover-binary-text"),
        ][round as usize % 3];
        let first = run(case, &log, &ring, 20_000, 1 << 20, None);
        assert_eq!(first.acked, Some(19_999));
        for _ in 0..8 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let delay = Duration::from_micros(state % 40_000);
            let r = run(recover_case, &log, &ring, 0, 1 << 20, Some(delay));
            cases += 1;
            if r.signal == Some(libc::SIGKILL) {
                kills += 1;
            }
        }
        recover(&log, &ring, case, 1 << 20);
        assert_whole_if_binary(&log);
        let (after, notices) = read_log(&log);
        let what = format!("round {round}: {notices:?}");
        check_exactly_once(&after, Some(19_999), &what);
        assert_eq!(after.len(), 20_000, "{what}");
    }
    eprintln!("{cases} recoveries, {kills} of them killed midway");
    assert!(
        kills > cases / 4,
        "the kills came too late: {kills} of {cases}"
    );
}
