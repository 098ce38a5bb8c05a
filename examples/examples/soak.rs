//! A soak: nowait under steady load for a given time with everything that
//! turns over in production turning over, then a check that nothing leaks
//! and every record is accounted for.
//!
//! Running: four producer threads (two through the `tracing` layer, two
//! through nowait's macros); a rolling sink whose clock runs 30 times fast
//! (a new file every 2 s) with gzip and retention; a plain file sink that
//! is renamed away and reopened on SIGHUP every 3 s, as logrotate does; an
//! OTLP sink to an OpenTelemetry Collector that is stopped (SIGTERM) every
//! 20 s and started again 3 s later (with `--otelcol PATH`); the process
//! filter reloaded every 5 s.
//!
//! Checked at the end (exit status 1 and the reason if not):
//!
//! * resident memory, open descriptors and threads, sampled each second,
//!   are flat after warm-up (the first fifth of the run, at least 10 s):
//!   the median of the last tenth of the samples against that of the
//!   first tenth after warm-up, memory up by at most 8 MiB, descriptors by
//!   at most 1, threads not at all (the Collector's files are read in a
//!   process of their own, so that parsing them never counts here);
//! * every sink accounts for every record the writer took: written plus
//!   each counted loss;
//! * the renamed-and-reopened file set holds exactly as many records as
//!   its sink says it wrote;
//! * the Collector holds each record at most once, and at least what the
//!   OTLP sink counted as written.
//!
//! ```text
//! cargo run --release -p nowait-examples --example soak -- --secs 120 \
//!     [--otelcol target/otelcol/otelcol-nowait] [--json soak.json]
//! ```
//!
//! Linux only (it reads `/proc/self`).

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use nowait::filter::FilterHandle;
use nowait::sink::{Otlp, Rolling};
use nowait::{Builder, Sink};
use tracing_subscriber::layer::SubscriberExt as _;

/// The rolling sink's clock: 30 times the wall clock's pace from the
/// start, so a minutely rotation turns every 2 s.
fn fast_clock() -> SystemTime {
    static START: std::sync::OnceLock<(SystemTime, Instant)> = std::sync::OnceLock::new();
    let (wall, mono) = *START.get_or_init(|| (SystemTime::now(), Instant::now()));
    wall + mono.elapsed() * 30
}

struct Args {
    secs: u64,
    otelcol: Option<PathBuf>,
    json: Option<PathBuf>,
    keep: bool,
}

fn args() -> Args {
    let mut a = Args {
        secs: 120,
        otelcol: None,
        json: None,
        keep: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || {
            it.next()
                .unwrap_or_else(|| usage(&format!("{arg} needs a value")))
        };
        match arg.as_str() {
            "--secs" => {
                a.secs = value()
                    .parse()
                    .unwrap_or_else(|_| usage("--secs takes seconds"))
            }
            "--otelcol" => a.otelcol = Some(value().into()),
            "--json" => a.json = Some(value().into()),
            "--keep" => a.keep = true,
            _ => usage(&format!("unknown argument {arg}")),
        }
    }
    if a.secs < 20 {
        usage("--secs must be at least 20");
    }
    a
}

fn usage(why: &str) -> ! {
    eprintln!("soak: {why}\nusage: soak [--secs N] [--otelcol PATH] [--json FILE] [--keep]");
    std::process::exit(2)
}

/// One sample of what the process holds.
#[derive(Clone, Copy, Debug)]
struct Sample {
    at: f64,
    rss_kib: u64,
    fds: u64,
    threads: u64,
}

fn sample(start: Instant) -> Sample {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    Sample {
        at: start.elapsed().as_secs_f64(),
        rss_kib: field("VmRSS:"),
        fds: std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count() as u64),
        threads: field("Threads:"),
    }
}

/// The Collector: OTLP/HTTP on `port`, the file exporter into
/// `dir/otelcol.N.jsonl` for its Nth start (it truncates its file).
struct Collector {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
    starts: u32,
    child: Option<Child>,
    arrived: Arrived,
}

impl Collector {
    fn new(bin: PathBuf, dir: &Path, port: u16) -> Collector {
        Collector {
            bin,
            dir: dir.to_owned(),
            port,
            starts: 0,
            child: None,
            arrived: Arrived::default(),
        }
    }

    fn start(&mut self) {
        self.starts += 1;
        let config = self.dir.join(format!("otelcol.{}.yaml", self.starts));
        let out = self.dir.join(format!("otelcol.{}.jsonl", self.starts));
        std::fs::write(
            &config,
            format!(
                "receivers:\n  otlp:\n    protocols:\n      http:\n        endpoint: 127.0.0.1:{}\n\
                 exporters:\n  file:\n    path: {}\n    flush_interval: 100ms\n\
                 service:\n  telemetry:\n    metrics:\n      level: none\n    logs:\n      level: error\n\
                 \x20 pipelines:\n    logs:\n      receivers: [otlp]\n      exporters: [file]\n",
                self.port,
                out.display()
            ),
        )
        .expect("write the Collector's config");
        let child = Command::new(&self.bin)
            .arg("--config")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the Collector");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            assert!(Instant::now() < deadline, "the Collector did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGTERM by PID, and waits: the exporter writes what it holds;
    /// then what this start received is tallied and its file removed.
    fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = Command::new("kill")
                .arg("-TERM")
                .arg(child.id().to_string())
                .status();
            let _ = child.wait();
            let out = self.dir.join(format!("otelcol.{}.jsonl", self.starts));
            self.arrived.take_file(&out);
        }
    }
}

impl Drop for Collector {
    fn drop(&mut self) {
        self.stop();
    }
}

/// What arrived at the Collector: per producer thread, the `seq`s seen
/// as disjoint ranges (a gap is a counted drop; memory stays as small as
/// the number of gaps), the records seen twice, and all records (debug
/// ones included, nowait's notices not).
#[derive(Default)]
struct Arrived {
    ranges: HashMap<u64, std::collections::BTreeMap<u64, u64>>,
    twice: u64,
    all: u64,
}

impl Arrived {
    /// Notes `seq` of thread `t`: ranges are `start -> end` (exclusive).
    fn note(&mut self, t: u64, seq: u64) {
        let ranges = self.ranges.entry(t).or_default();
        let before = ranges.range(..=seq).next_back().map(|(&s, &e)| (s, e));
        match before {
            Some((_, end)) if seq < end => self.twice += 1,
            Some((start, end)) if seq == end => {
                let mut end = end + 1;
                if let Some(next_end) = ranges.remove(&end) {
                    end = next_end;
                }
                ranges.insert(start, end);
            }
            _ => {
                let mut end = seq + 1;
                if let Some(next_end) = ranges.remove(&end) {
                    end = next_end;
                }
                ranges.insert(seq, end);
            }
        }
    }

    /// Notes the `seq`s `start..end` of thread `t`, counting those seen
    /// before as seen twice.
    fn note_range(&mut self, t: u64, start: u64, end: u64) {
        let ranges = self.ranges.entry(t).or_default();
        let (mut lo, mut hi) = (start, end);
        let touching: Vec<(u64, u64)> = ranges
            .range(..=end)
            .rev()
            .take_while(|&(_, &e)| e >= start)
            .map(|(&s, &e)| (s, e))
            .collect();
        for (s, e) in touching {
            self.twice += e.min(end).saturating_sub(s.max(start));
            lo = lo.min(s);
            hi = hi.max(e);
            ranges.remove(&s);
        }
        ranges.insert(lo, hi);
    }

    /// What another process's tally printed ([`Arrived::print`]).
    fn merge_printed(&mut self, text: &str) {
        for line in text.lines() {
            let v: Vec<u64> = line
                .split(' ')
                .skip(1)
                .filter_map(|w| w.parse().ok())
                .collect();
            match (line.split(' ').next(), v.as_slice()) {
                (Some("all"), [n]) => self.all += n,
                (Some("twice"), [n]) => self.twice += n,
                (Some("range"), [t, s, e]) => self.note_range(*t, *s, *e),
                _ => {}
            }
        }
    }

    fn print(&self) -> String {
        let mut out = format!("all {}\ntwice {}\n", self.all, self.twice);
        for (t, ranges) in &self.ranges {
            for (s, e) in ranges {
                out.push_str(&format!("range {t} {s} {e}\n"));
            }
        }
        out
    }

    /// Reads one file of the exporter (OTLP/JSON, a request per line) in a
    /// process of its own (`soak --tally FILE`), so that parsing megabytes
    /// of JSON never counts in this process's memory, then removes it.
    fn take_file(&mut self, path: &Path) {
        let exe = std::env::current_exe().expect("this program's path");
        match Command::new(exe).arg("--tally").arg(path).output() {
            Ok(out) if out.status.success() => {
                self.merge_printed(&String::from_utf8_lossy(&out.stdout));
            }
            other => panic!("the tally of {} failed: {other:?}", path.display()),
        }
        let _ = std::fs::remove_file(path);
    }

    /// The tally of one file, in this process (`soak --tally FILE`).
    fn read_file(&mut self, path: &Path) {
        use std::io::BufRead as _;
        let Ok(file) = std::fs::File::open(path) else {
            return;
        };
        for line in std::io::BufReader::new(file).lines() {
            let Ok(line) = line else { break };
            let Ok(req) = serde_json::from_str::<serde_json::Value>(&line) else {
                continue;
            };
            for rl in req["resourceLogs"].as_array().into_iter().flatten() {
                for sl in rl["scopeLogs"].as_array().into_iter().flatten() {
                    for rec in sl["logRecords"].as_array().into_iter().flatten() {
                        let attrs = rec["attributes"].as_array().map_or(&[][..], Vec::as_slice);
                        // nowait's own notices are not records of the sink's.
                        if attrs
                            .iter()
                            .any(|a| a["key"] == "target" && a["value"]["stringValue"] == "nowait")
                        {
                            continue;
                        }
                        self.all += 1;
                        let int = |k: &str| {
                            attrs.iter().find(|a| a["key"] == k)?["value"]["intValue"]
                                .as_str()?
                                .parse::<u64>()
                                .ok()
                        };
                        if let (Some(t), Some(seq)) = (int("t"), int("seq")) {
                            self.note(t, seq);
                        }
                    }
                }
            }
        }
    }

    fn distinct(&self) -> u64 {
        self.ranges
            .values()
            .flat_map(|r| r.iter().map(|(s, e)| e - s))
            .sum()
    }
}

/// Counts the records (not nowait's notices) in a text file, then
/// removes it.
fn take_lines(path: &Path) -> u64 {
    use std::io::BufRead as _;
    let Ok(file) = std::fs::File::open(path) else {
        return 0;
    };
    let n = std::io::BufReader::new(file)
        .lines()
        .map_while(Result::ok)
        .filter(|l| !l.contains(" nowait: "))
        .count() as u64;
    let _ = std::fs::remove_file(path);
    n
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// Whether this process holds `path` open (a renamed log file the writer
/// has not let go of yet).
fn open_here(path: &Path) -> bool {
    let Ok(fds) = std::fs::read_dir("/proc/self/fd") else {
        return false;
    };
    fds.flatten()
        .any(|fd| std::fs::read_link(fd.path()).is_ok_and(|p| p == path))
}

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    if argv.len() == 3 && argv[1] == "--tally" {
        let mut arrived = Arrived::default();
        arrived.read_file(Path::new(&argv[2]));
        print!("{}", arrived.print());
        return;
    }
    let args = args();
    let dir = std::env::temp_dir().join(format!(
        "nowait-soak-{}-{}",
        std::process::id(),
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    ));
    std::fs::create_dir_all(dir.join("rolling")).expect("create the soak directory");
    let reopened = dir.join("reopened.log");
    let port = free_port();
    let mut collector = args
        .otelcol
        .clone()
        .map(|bin| Collector::new(bin, &dir, port));
    if let Some(c) = collector.as_mut() {
        c.start();
    } else {
        eprintln!("soak: no --otelcol: running without the OTLP sink");
    }

    let mut builder = Builder::new()
        .sink(Sink::rolling(
            Rolling::minutely(dir.join("rolling"), "app.log")
                .clock(fast_clock)
                .compress(true)
                .max_log_files(4),
        ))
        .sink(Sink::file(&reopened))
        .reopen_on_sighup(true);
    if collector.is_some() {
        builder = builder.sink(Sink::otlp(
            Otlp::new(&format!("http://127.0.0.1:{port}")).service_name("soak"),
        ));
    }
    let (logger, guard) = builder.build().expect("build the logger");
    nowait::set_global(logger.clone()).expect("the only global logger");
    let filter = FilterHandle::new();
    filter.reload("info").expect("a valid filter");
    let subscriber = tracing_subscriber::registry().with(nowait::NowaitLayer::new(logger.clone()));
    tracing::subscriber::set_global_default(subscriber).expect("the only subscriber");

    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicU64::new(0));
    let producers: Vec<_> = (0..4u64)
        .map(|t| {
            let (stop, sent) = (stop.clone(), sent.clone());
            std::thread::Builder::new()
                .name(format!("producer-{t}"))
                .spawn(move || {
                    let mut seq = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        // About 5k records a second per thread, in bursts.
                        for _ in 0..50 {
                            if t < 2 {
                                tracing::info!(t, seq, path = "/soak", "request done");
                                tracing::debug!(t, "filtered out unless the filter allows debug");
                            } else {
                                nowait::info!(t = t, seq = seq, path = "/soak", "request done");
                                nowait::debug!(
                                    t = t,
                                    "filtered out unless the filter allows debug"
                                );
                            }
                            seq += 1;
                        }
                        std::thread::sleep(Duration::from_millis(10));
                    }
                    sent.fetch_add(seq, Ordering::Relaxed);
                })
                .expect("spawn a producer")
        })
        .collect();

    let start = Instant::now();
    let end = start + Duration::from_secs(args.secs);
    let mut samples = vec![sample(start)];
    let mut next_sample = start + Duration::from_secs(1);
    let (mut next_hup, mut next_filter) = (
        start + Duration::from_secs(3),
        start + Duration::from_secs(5),
    );
    let mut next_stop = start + Duration::from_secs(20);
    let mut restart_at: Option<Instant> = None;
    let (mut hups, mut reloads, mut restarts) = (0u32, 0u32, 0u32);
    let mut lines = 0u64;
    let mut pending: Vec<PathBuf> = Vec::new();
    while Instant::now() < end {
        let now = Instant::now();
        if now >= next_hup {
            hups += 1;
            let _ = std::fs::rename(&reopened, dir.join(format!("reopened.log.{hups}")));
            // Counted once the writer has let go of them.
            pending.push(dir.join(format!("reopened.log.{hups}")));
            let newest = pending.len() - 1;
            let mut i = 0;
            pending.retain(|p| {
                i += 1;
                if i - 1 == newest || open_here(p) {
                    return true;
                }
                lines += take_lines(p);
                false
            });
            // To this process, whose SIGHUP handler nowait installed.
            let _ = Command::new("kill")
                .arg("-HUP")
                .arg(std::process::id().to_string())
                .status();
            next_hup += Duration::from_secs(3);
        }
        if now >= next_filter {
            reloads += 1;
            let directives = if reloads % 2 == 0 {
                "info"
            } else {
                "info,soak=debug"
            };
            filter.reload(directives).expect("a valid filter");
            next_filter += Duration::from_secs(5);
        }
        if let Some(c) = collector.as_mut() {
            if now >= next_stop && restart_at.is_none() {
                c.stop();
                restart_at = Some(now + Duration::from_secs(3));
                next_stop += Duration::from_secs(20);
            }
            if restart_at.is_some_and(|at| now >= at) {
                c.start();
                restarts += 1;
                restart_at = None;
            }
        }
        if now >= next_sample {
            samples.push(sample(start));
            next_sample += Duration::from_secs(1);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    stop.store(true, Ordering::Relaxed);
    for p in producers {
        p.join().expect("a producer panicked");
    }
    if let Some(c) = collector.as_mut() {
        if c.child.is_none() {
            c.start();
            restarts += 1;
        }
    }
    drop(guard);
    let stats = logger.stats();
    if let Some(c) = collector.as_mut() {
        c.stop();
    }

    let mut failures = Vec::new();
    // Flat after warm-up: the median of the last tenth of the samples
    // against that of the first tenth after warm-up (single samples
    // catch a file mid-rotation or a connection mid-restart).
    let warm = (args.secs as f64 / 5.0).max(10.0);
    let after: Vec<Sample> = samples.iter().filter(|s| s.at >= warm).copied().collect();
    let window = (after.len() / 10).max(5).min(after.len());
    let median = |w: &[Sample], f: fn(&Sample) -> u64| {
        let mut v: Vec<u64> = w.iter().map(f).collect();
        v.sort_unstable();
        v.get(v.len() / 2).copied().unwrap_or(0)
    };
    let (first, last) = (&after[..window], &after[after.len() - window..]);
    let grew = |f: fn(&Sample) -> u64| (median(first, f), median(last, f));
    let (rss0, rss1) = grew(|s| s.rss_kib);
    let (fds0, fds1) = grew(|s| s.fds);
    let (thr0, thr1) = grew(|s| s.threads);
    if rss1 > rss0 + 8 * 1024 {
        failures.push(format!(
            "memory grew {rss0} -> {rss1} KiB after warm-up (medians)"
        ));
    }
    if fds1 > fds0 + 1 {
        failures.push(format!(
            "descriptors grew {fds0} -> {fds1} after warm-up (medians)"
        ));
    }
    if thr1 > thr0 {
        failures.push(format!(
            "threads grew {thr0} -> {thr1} after warm-up (medians)"
        ));
    }
    // Every sink accounts for every record the writer took.
    let outcomes = |s: &nowait::stats::SinkStats| {
        s.records_written
            + s.dropped_overflow
            + s.dropped_failed
            + s.dropped_format
            + s.filtered
            + s.abandoned
    };
    for s in &stats.sinks {
        if outcomes(s) != stats.records_written {
            failures.push(format!(
                "sink {} accounts for {} of {} records: {s:?}",
                s.name,
                outcomes(s),
                stats.records_written
            ));
        }
    }
    // The reopened file set holds what its sink wrote.
    for p in &pending {
        lines += take_lines(p);
    }
    lines += take_lines(&reopened);
    let file_sink = &stats.sinks[1];
    if lines != file_sink.records_written {
        failures.push(format!(
            "the reopened file set holds {lines} lines, its sink wrote {}",
            file_sink.records_written
        ));
    }
    // The Collector: each record at most once, all the sink wrote.
    let mut otlp_line = String::new();
    if let Some(c) = &collector {
        let arrived = &c.arrived;
        let (all, twice, distinct) = (arrived.all, arrived.twice, arrived.distinct());
        let otlp = &stats.sinks[2];
        otlp_line = format!(
            "otlp: {all} records at the Collector ({} distinct request records, {twice} twice); sink wrote {}, dropped {} ({} failed, {} overflow); {restarts} restarts",
            distinct, otlp.records_written, otlp.dropped(), otlp.dropped_failed, otlp.dropped_overflow
        );
        if twice > 0 {
            failures.push(format!("{twice} records arrived at the Collector twice"));
        }
        // Stopped with SIGTERM, the Collector answers what it took and its
        // exporter writes it: what the sink counts as written is there.
        if all != otlp.records_written {
            failures.push(format!(
                "the Collector holds {all} records, the sink counted {} written",
                otlp.records_written
            ));
        }
    }

    let sent = sent.load(Ordering::Relaxed);
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "soak: {} s, {sent} request records sent by 4 threads, {} taken by the writer, {} dropped at the ring; {hups} SIGHUP reopens, {reloads} filter reloads",
        args.secs,
        stats.records_written,
        stats.dropped()
    );
    for s in &stats.sinks {
        let _ = writeln!(
            out,
            "  sink {}: written {}, dropped {}, filtered {}, write errors {}, rotations {}",
            s.name,
            s.records_written,
            s.dropped(),
            s.filtered,
            s.write_errors,
            s.rotations
        );
    }
    if !otlp_line.is_empty() {
        let _ = writeln!(out, "  {otlp_line}");
    }
    let _ = writeln!(out, "  at    rss KiB  fds  threads");
    let step = (samples.len() / 20).max(1);
    for s in samples.iter().step_by(step).chain(samples.last()) {
        let _ = writeln!(
            out,
            "  {:>5.0} {:>8} {:>4} {:>8}",
            s.at, s.rss_kib, s.fds, s.threads
        );
    }
    if let Some(path) = &args.json {
        let json = serde_json::json!({
            "secs": args.secs,
            "sent": sent,
            "taken": stats.records_written,
            "ring_dropped": stats.dropped(),
            "sighup_reopens": hups,
            "filter_reloads": reloads,
            "collector_restarts": restarts,
            "samples": samples.iter().map(|s| serde_json::json!({
                "at": s.at, "rss_kib": s.rss_kib, "fds": s.fds, "threads": s.threads
            })).collect::<Vec<_>>(),
            "sinks": stats.sinks.iter().map(|s| serde_json::json!({
                "name": s.name, "written": s.records_written, "dropped": s.dropped(),
                "filtered": s.filtered, "write_errors": s.write_errors, "rotations": s.rotations,
            })).collect::<Vec<_>>(),
            "failures": failures,
        });
        std::fs::write(
            path,
            serde_json::to_string_pretty(&json).unwrap_or_default(),
        )
        .expect("write the JSON results");
    }
    if args.keep {
        let _ = writeln!(out, "soak: files kept in {}", dir.display());
    } else {
        let _ = std::fs::remove_dir_all(&dir);
    }
    if failures.is_empty() {
        let _ = writeln!(out, "soak: flat after warm-up, every record accounted for");
    } else {
        for f in &failures {
            let _ = writeln!(out, "soak: FAILED: {f}");
        }
        std::process::exit(1);
    }
}
