//! The crash-durable ring under an outside `SIGKILL`, across its matrix:
//! producer threads (1, 4) × front ends (`Logger::log`, nowait's macros,
//! the `tracing` layer) ×
//! sinks (one file, a rolling file by size, a rolling file by size with
//! compression, a rolling file by time on a fast clock, two files at once,
//! a file and the terminal) × when the
//! kill comes (while logging at full speed, or while the next start is
//! recovering).
//!
//! A child process (this test binary, re-run) logs `tN line I` records
//! from each thread; after each call returns, the thread publishes how
//! many of its calls had returned in a shared mapping, which outlives the
//! child. The parent kills it at a random instant, runs the next start of
//! the program on the same files (sometimes killing that start too, then
//! starting again), and checks every file sink: each
//! thread's records below its published count are there exactly once, no
//! record is there twice.
//!
//! `NOWAIT_MATRIX_RUNS` sets the number of kills (default 60),
//! `NOWAIT_MATRIX_SECONDS` a time after which no new run starts,
//! `NOWAIT_MATRIX_CONFIG` one cell for every run (as a failure prints it:
//! `threads front sinks capacity`, indices into the tables below), and
//! `NOWAIT_MATRIX_MAX_MS` how late in the child's life they may come
//! (default 400 ms after 30); the seed makes each run's configuration and
//! timing reproducible (`NOWAIT_MATRIX_SEED`).
#![cfg(all(target_os = "linux", not(miri)))] // SIGKILL, shared mappings; Miri cannot spawn.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use nowait_core::format::Plain;
use nowait_core::sink::Rolling;
use nowait_core::{Builder, FullPolicy, Level, Sink};
use nowait_testkit::child::{self, Child, Running};
use tracing_subscriber::prelude::*;

const MAX_THREADS: usize = 4;

/// One cell of the matrix.
#[derive(Clone, Copy, Debug)]
struct Config {
    threads: usize,
    front: Front,
    sinks: Sinks,
    capacity: usize,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Front {
    /// `Logger::log` with a formatted line.
    Log,
    /// `nowait_core::info!`, deferred formatting.
    Macros,
    /// `tracing::info!` through `NowaitLayer`.
    Layer,
}

const ALL_FRONTS: [Front; 3] = [Front::Log, Front::Macros, Front::Layer];

#[derive(Clone, Copy, Debug, PartialEq)]
enum Sinks {
    File,
    RollingBySize,
    RollingCompressed,
    /// A new file every minute of a clock that runs 6,000 times faster
    /// than the real one (a roll every 10 ms).
    RollingByTime,
    TwoFiles,
    FileAndTerminal,
}

const ALL_SINKS: [Sinks; 6] = [
    Sinks::File,
    Sinks::RollingBySize,
    Sinks::RollingCompressed,
    Sinks::RollingByTime,
    Sinks::TwoFiles,
    Sinks::FileAndTerminal,
];

impl Config {
    fn encode(&self) -> String {
        let sinks = ALL_SINKS.iter().position(|&s| s == self.sinks).unwrap();
        let front = ALL_FRONTS.iter().position(|&f| f == self.front).unwrap();
        format!("{} {front} {sinks} {}", self.threads, self.capacity)
    }

    fn decode(s: &str) -> Config {
        let v: Vec<usize> = s.split(' ').map(|x| x.parse().unwrap()).collect();
        Config {
            threads: v[0],
            front: ALL_FRONTS[v[1]],
            sinks: ALL_SINKS[v[2]],
            capacity: v[3],
        }
    }

    /// The places the file sinks write (a file, or a rolling sink's
    /// directory), each checked on its own.
    fn logs(&self, dir: &Path) -> Vec<PathBuf> {
        match self.sinks {
            Sinks::File | Sinks::FileAndTerminal => vec![dir.join("a.log")],
            Sinks::RollingBySize | Sinks::RollingCompressed | Sinks::RollingByTime => {
                vec![dir.join("roll")]
            }
            Sinks::TwoFiles => vec![dir.join("a.log"), dir.join("b.log")],
        }
    }

    fn builder(&self, dir: &Path) -> Builder {
        let b = Builder::new()
            .capacity(self.capacity)
            .full_policy(FullPolicy::Block)
            .catch_panics(false)
            .drain_on_crash(false)
            .crash_durable(dir.join("ring"));
        // Text records print as they are; events (the macros) need a
        // format that renders them.
        let b = if self.front != Front::Log {
            b.format(nowait_core::format::Text::new().with_ansi(false))
        } else {
            b.format(Plain)
        };
        match self.sinks {
            Sinks::File => b.sink(Sink::file(dir.join("a.log"))),
            Sinks::RollingBySize | Sinks::RollingCompressed => {
                std::fs::create_dir_all(dir.join("roll")).unwrap();
                b.sink(Sink::rolling(
                    Rolling::never(dir.join("roll"), "app.log")
                        .max_size(64 << 10)
                        .compress(self.sinks == Sinks::RollingCompressed),
                ))
            }
            Sinks::RollingByTime => {
                std::fs::create_dir_all(dir.join("roll")).unwrap();
                b.sink(Sink::rolling(
                    Rolling::minutely(dir.join("roll"), "app.log").clock(fast_clock),
                ))
            }
            Sinks::TwoFiles => b
                .sink(Sink::file(dir.join("a.log")))
                .sink(Sink::file(dir.join("b.log"))),
            // The child's stderr is a pipe nobody reads fast: a terminal
            // that stalls, beside the file.
            Sinks::FileAndTerminal => b.sink(Sink::file(dir.join("a.log"))).sink(Sink::stderr()),
        }
    }
}

/// A wall clock 6,000 times faster than the real one from the first call
/// in this process on, starting at the real time.
fn fast_clock() -> SystemTime {
    static START: std::sync::OnceLock<(std::time::Instant, SystemTime)> =
        std::sync::OnceLock::new();
    let (at, wall) = *START.get_or_init(|| (std::time::Instant::now(), SystemTime::now()));
    wall + at.elapsed() * 6000
}

/// The shared page where each producer thread publishes how many of its
/// calls had returned.
struct Acks {
    ptr: *mut AtomicU64,
}

impl Acks {
    fn map(path: &Path, create: bool) -> Acks {
        if create {
            std::fs::write(path, [0u8; 4096]).unwrap();
        }
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .unwrap();
        use std::os::fd::AsRawFd;
        // SAFETY: a new shared mapping of one page of a file that has one
        // page; it aliases no Rust object and lives as long as the process
        // (never unmapped).
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                4096,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        assert_ne!(ptr, libc::MAP_FAILED);
        Acks { ptr: ptr.cast() }
    }

    fn get(&self, thread: usize) -> &AtomicU64 {
        assert!(thread < MAX_THREADS);
        // SAFETY: inside the page mapped above, 8-aligned; only ever
        // accessed atomically.
        unsafe { &*self.ptr.add(thread) }
    }
}

// SAFETY: the page is shared memory accessed only through atomics.
unsafe impl Sync for Acks {}

#[test]
fn child_entry() {
    let Some(config) = child::role() else {
        return;
    };
    let config = Config::decode(&config);
    // Dies with the test that runs it: a child left logging at full speed
    // would fill the disk.
    // SAFETY: prctl with an integer argument; no memory is passed.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    if std::os::unix::process::parent_id() == 1 {
        std::process::exit(2);
    }
    let dir = PathBuf::from(std::env::var("NOWAIT_MATRIX_DIR").unwrap());
    let recover_only = std::env::var_os("NOWAIT_MATRIX_RECOVER").is_some();
    let (logger, guard) = config.builder(&dir).build().unwrap();
    if recover_only {
        drop((logger, guard));
        std::process::exit(0);
    }
    match config.front {
        Front::Log => {}
        Front::Macros => nowait_core::set_global(logger.clone()).unwrap(),
        Front::Layer => tracing_subscriber::registry()
            .with(nowait_tracing::NowaitLayer::new(logger.clone()))
            .init(),
    }
    let acks = Acks::map(&dir.join("acks"), false);
    std::thread::scope(|s| {
        for t in 0..config.threads {
            let (logger, acks) = (&logger, &acks);
            s.spawn(move || {
                for i in 0u64.. {
                    match config.front {
                        Front::Log => logger.log(Level::Info, &format!("t{t} line {i}")).unwrap(),
                        Front::Macros => nowait_core::info!("t{} line {}", t, i),
                        Front::Layer => tracing::info!("t{} line {}", t, i),
                    }
                    acks.get(t).store(i + 1, Ordering::Release);
                }
            });
        }
    });
    unreachable!("the producers never stop; the parent kills the process");
}

/// Runs the child: logging, or (`recover`) only starting on the files a
/// killed one left. `stall`: its stderr (a sink, in one configuration) is
/// a pipe never read, a terminal that stalls once it is full.
fn spawn(config: &Config, dir: &Path, recover: bool, stall: bool) -> Running {
    let mut c = Child::new("child_entry", &config.encode())
        .env("NOWAIT_MATRIX_DIR", dir)
        .stderr(if stall {
            Stdio::piped()
        } else {
            // Kept, to say why a recovering start failed.
            Stdio::from(std::fs::File::create(dir.join("stderr")).unwrap())
        });
    if recover {
        c = c.env("NOWAIT_MATRIX_RECOVER", "1");
    }
    c.spawn()
}

/// `(thread, id) -> count` of the records a sink's file or directory
/// holds; the lines that are not records (notices).
fn read(log: &Path) -> (BTreeMap<(usize, u64), u32>, Vec<String>) {
    let text = nowait_testkit::read_log(log);
    let mut seen = BTreeMap::new();
    let mut notices = Vec::new();
    for line in text.lines().filter(|l| !l.is_empty()) {
        // "... tN line I" (after a Text format's time, level and target).
        let rec = line.rsplit_once(" line ").and_then(|(head, i)| {
            let t = head.rsplit(' ').next()?.strip_prefix('t')?;
            Some((t.parse().ok()?, i.trim_end().parse().ok()?))
        });
        match rec {
            Some(key) => *seen.entry(key).or_insert(0) += 1,
            None => notices.push(line.to_owned()),
        }
    }
    (seen, notices)
}

/// Reads until two reads agree: a rolling sink's housekeeping thread may
/// still be compressing after the guard is dropped.
fn read_settled(log: &Path) -> (BTreeMap<(usize, u64), u32>, Vec<String>) {
    let mut last = read(log);
    for _ in 0..100 {
        std::thread::sleep(Duration::from_millis(20));
        let now = read(log);
        if now == last {
            break;
        }
        last = now;
    }
    last
}

#[derive(Default, Debug)]
struct Tally {
    runs: u64,
    killed_during_recovery: u64,
    acked: u64,
    missing: u64,
    duplicated: u64,
    /// Files the rolling sinks rolled to, in all (by size, by time).
    rolled_by_size: u64,
    rolled_by_time: u64,
}

#[test]
fn sigkill_anywhere_in_the_matrix_writes_each_acknowledged_record_once() {
    let runs: u64 = std::env::var("NOWAIT_MATRIX_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    let mut state: u64 = std::env::var("NOWAIT_MATRIX_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0x5DEE_CE66_D1CE_4E5B);
    let mut next = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    // The kill comes 30 ms + up to this long after the start.
    let max_delay_ms: u64 = std::env::var("NOWAIT_MATRIX_MAX_MS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(400);
    // A time budget, for long runs: stop after the run that passes it.
    let budget = std::env::var("NOWAIT_MATRIX_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map(Duration::from_secs);
    let started = std::time::Instant::now();
    let root = tempfile::tempdir().unwrap();
    let mut tally = Tally::default();
    let mut failures = Vec::new();
    for run in 0..runs {
        let r = next();
        let forced = std::env::var("NOWAIT_MATRIX_CONFIG").ok();
        let config = match forced {
            Some(c) => Config::decode(&c),
            None => Config {
                threads: if r % 2 == 0 { 1 } else { MAX_THREADS },
                front: ALL_FRONTS[(r >> 1) as usize % ALL_FRONTS.len()],
                sinks: ALL_SINKS[(r >> 4) as usize % ALL_SINKS.len()],
                capacity: [4 << 10, 64 << 10, 1 << 20][(r >> 8) as usize % 3],
            },
        };
        let delay = Duration::from_millis(30 + (r >> 16) % max_delay_ms);
        let kill_recovery = (r >> 32) % 4 == 0;
        let dir = root.path().join(run.to_string());
        std::fs::create_dir(&dir).unwrap();
        let acks = Acks::map(&dir.join("acks"), true);

        let mut child = spawn(&config, &dir, false, true);
        std::thread::sleep(delay);
        child.kill();
        child.wait();
        let acked: Vec<u64> = (0..config.threads)
            .map(|t| acks.get(t).load(Ordering::Acquire))
            .collect();
        if kill_recovery {
            // The next start is killed too, at a random point of its own
            // recovery; the one after must still write each record once.
            let mut again = spawn(&config, &dir, true, true);
            std::thread::sleep(Duration::from_micros((r >> 40) % 20_000));
            again.kill();
            let status = again.wait();
            tally.killed_during_recovery += u64::from(!status.success());
        }
        // The next start, run to its end (its terminal drained).
        let status = spawn(&config, &dir, true, false).wait();
        assert!(
            status.success(),
            "run {run} {config:?}: the recovering start failed: {status:?}: {}",
            String::from_utf8_lossy(&std::fs::read(dir.join("stderr")).unwrap_or_default())
                .lines()
                .filter(|l| l.contains("panicked") || l.contains("rror"))
                .collect::<Vec<_>>()
                .join(" / ")
        );

        tally.runs += 1;
        tally.acked += acked.iter().sum::<u64>();
        if let Ok(files) = std::fs::read_dir(dir.join("roll")) {
            let rolled = files.count().saturating_sub(1) as u64;
            match config.sinks {
                Sinks::RollingByTime => tally.rolled_by_time += rolled,
                _ => tally.rolled_by_size += rolled,
            }
        }
        for log in config.logs(&dir) {
            let (seen, notices) = if config.sinks == Sinks::RollingCompressed {
                read_settled(&log)
            } else {
                read(&log)
            };
            let dups: Vec<_> = seen.iter().filter(|(_, &c)| c > 1).take(3).collect();
            let missing: Vec<_> = (0..config.threads)
                .flat_map(|t| (0..acked[t]).map(move |i| (t, i)))
                .filter(|k| !seen.contains_key(k))
                .collect();
            tally.duplicated += seen.values().filter(|&&c| c > 1).count() as u64;
            tally.missing += missing.len() as u64;
            if !dups.is_empty() || !missing.is_empty() {
                failures.push(format!(
                    "run {run} {config:?}, kill after {delay:?}, recovery killed {kill_recovery}, \
                     {}: acked {acked:?}; missing {} (first {:?}); twice {dups:?}; notices {:?}",
                    log.display(),
                    missing.len(),
                    missing.first(),
                    notices
                ));
            }
        }
        let _ = std::fs::remove_dir_all(&dir);
        if run % 250 == 249 {
            eprintln!("after {} runs: {tally:?}", run + 1);
        }
        if budget.is_some_and(|b| started.elapsed() > b) {
            break;
        }
    }
    eprintln!("{tally:?}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        tally.acked > runs * 100,
        "the kills came too early: {tally:?}"
    );
}
