//! What it models: a server logging through the macros as fast as it can,
//! losslessly (`FullPolicy::Block`: nothing is dropped, a full ring makes
//! the request threads wait), into a text file sink or a binary log
//! (`Sink::binary`). The request threads do the same work in both (the
//! macros copy the values into the ring); only the writer thread differs:
//! formatting each record, or copying it with its call site described
//! once. With one producer thread the writer is rarely the bottleneck;
//! with two it can be.
//!
//! Also measured: bytes on disk per record (plain, and with a rolling
//! sink that zstd-compresses its rotated files, `--compress zstd`), and
//! how fast the binary file renders back to text (`binary::Reader` and
//! `Text`, as `nowait cat` does), in records/s.
//!
//! The records: `--workload app` (default) is a request log line with three
//! fields and two formatted values; `--workload quill` is the message of
//! quill's throughput benchmark (`benchmarks/backend_throughput`:
//! `"Iteration: {} int: {} double: {}"`, no fields), so that its figure
//! compares with quill's own, run beside it. `--front layer` sends the same
//! records through `tracing::info!` and `NowaitLayer` instead of the macros.
//!
//! Also reported: the writer thread's CPU time per record (the process's
//! CPU time less the producer threads', from `/proc`), so that text and
//! binary compare in what they cost the machine, not only in wall time;
//! and how busy the writer thread was while the records went through
//! (`writer_busy`: its time on a CPU, from its `schedstat`, over the wall
//! time): near 1 when the writer is what limits the rate.
//!
//! Each run first logs `--warmup` records (default 1,000,000) untimed and
//! waits until they are written: from idle, this machine's CPUs take
//! about 150 ms to come up to speed, and a cold run spends most of a
//! short measurement there (its first 1.5M records go about 1.5x slower
//! than the rest; spinning both CPUs for 0.4 s first removes that). The
//! records/s and the CPU times are of the timed records; the file, its
//! bytes per record and the render hold both.
//!
//! One run is one configuration; `benches/binary_ab.py` runs them
//! interleaved and takes medians. Each run prints one JSON object (and
//! writes it to `--out`).
//!
//! Run one: `cargo bench -p nowait-benches --features zstd --bench
//! binary_sink -- --sink binary [--threads 2] [--records 2000000]
//! [--compress zstd] [--front macro|layer] [--workload app|quill]
//! [--warmup 1000000] [--writer-cpu 0] [--dir /tmp] [--out FILE]`.

use std::path::Path;
use std::time::{Duration, Instant};

use nowait::binary::{Binary, Reader};
use nowait::format::{MakeFormat, SinkInfo, Text};
use nowait::sink::{Compression, Rolling};
use nowait::{Builder, FullPolicy, Sink};

struct Args {
    sink: String,
    front: String,
    workload: String,
    compress: String,
    records: u64,
    threads: u64,
    warmup: u64,
    writer_cpu: Option<usize>,
    dir: Option<String>,
    out: Option<String>,
}

fn args() -> Args {
    let argv: Vec<String> = std::env::args().collect();
    let value = |flag: &str| {
        argv.iter()
            .position(|a| a == flag)
            .and_then(|i| argv.get(i + 1).cloned())
    };
    let number =
        |flag: &str, default: u64| value(flag).map_or(default, |v| v.parse().expect("a number"));
    Args {
        sink: value("--sink").unwrap_or_else(|| "binary".into()),
        front: value("--front").unwrap_or_else(|| "macro".into()),
        workload: value("--workload").unwrap_or_else(|| "app".into()),
        compress: value("--compress").unwrap_or_else(|| "none".into()),
        records: number("--records", 2_000_000),
        threads: number("--threads", 1).max(1),
        warmup: number("--warmup", 1_000_000),
        writer_cpu: value("--writer-cpu").map(|v| v.parse().expect("a CPU number")),
        dir: value("--dir"),
        out: value("--out"),
    }
}

fn bytes_in(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum()
}

/// Whether no compression is under way and at most one plain file (the
/// current one) is left.
fn settled(dir: &Path) -> bool {
    let mut plain = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".tmp") {
            return false;
        }
        if !name.ends_with(".zst") {
            plain += 1;
        }
    }
    plain <= 1
}

/// CPU time (user + system) in seconds from a `/proc/.../stat` line:
/// fields 14 and 15, counted after the command name's closing parenthesis.
fn cpu_secs(stat: &str) -> f64 {
    let Ok(text) = std::fs::read_to_string(stat) else {
        return f64::NAN;
    };
    let Some(rest) = text.rsplit_once(')').map(|(_, r)| r) else {
        return f64::NAN;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok());
    // `rest` starts at field 3 (state): utime is field 14, stime 15.
    match (ticks(11), ticks(12)) {
        (Some(u), Some(s)) => (u + s) / 100.0,
        _ => f64::NAN,
    }
}

/// The writer thread's time on a CPU so far, in nanoseconds (the first
/// field of its `/proc/self/task/TID/schedstat`, found by its name): to
/// the nanosecond, where `cpu_secs` counts 10 ms ticks. 0 before the
/// thread exists, NaN without `/proc`.
fn writer_run_ns() -> f64 {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return f64::NAN;
    };
    for task in tasks.flatten() {
        let path = task.path();
        let named = std::fs::read_to_string(path.join("comm"));
        if named.is_ok_and(|c| c.trim() == "nowait-writer") {
            let stat = std::fs::read_to_string(path.join("schedstat")).unwrap_or_default();
            return stat
                .split_whitespace()
                .next()
                .and_then(|v| v.parse().ok())
                .unwrap_or(f64::NAN);
        }
    }
    0.0
}

/// Logs `per` records from each of `threads` new threads, numbered from
/// `from`: their CPU time in seconds.
fn produce(threads: u64, per: u64, from: u64, layer: bool, quill: bool) -> f64 {
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ (t + 1) ^ (from << 16);
                    for i in from..from + per {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        record(layer, quill, state, i);
                    }
                    cpu_secs("/proc/thread-self/stat")
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).sum()
    })
}

/// One record of the chosen workload through the chosen front end.
#[inline(always)]
fn record(layer: bool, quill: bool, state: u64, i: u64) {
    match (layer, quill) {
        (false, false) => nowait::info!(
            target: "app::http",
            status = [200u16, 200, 201, 304, 404, 500][(state >> 20) as usize % 6],
            user = "u1234",
            latency_us = state % 9_000 + 20,
            "GET /api/v1/items/{} seq={}",
            state % 100_000,
            i
        ),
        (false, true) => {
            nowait::info!("Iteration: {} int: {} double: {}", i, i * 2, i as f64 / 2.0)
        }
        (true, false) => tracing::info!(
            target: "app::http",
            status = [200u16, 200, 201, 304, 404, 500][(state >> 20) as usize % 6],
            user = "u1234",
            latency_us = state % 9_000 + 20,
            "GET /api/v1/items/{} seq={}",
            state % 100_000,
            i
        ),
        (true, true) => {
            tracing::info!("Iteration: {} int: {} double: {}", i, i * 2, i as f64 / 2.0)
        }
    }
}

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    if argv.iter().any(|a| a == "--list" || a == "--test") {
        return; // `cargo test --benches` / `cargo bench --no-run` probes.
    }
    if cfg!(debug_assertions) && !argv.iter().any(|a| a == "--force") {
        eprintln!("binary_sink: debug build, nothing run (use `cargo bench`, or --force)");
        return;
    }
    let a = args();
    let binary = match a.sink.as_str() {
        "text" => false,
        "binary" => true,
        other => panic!("--sink text|binary, got {other:?}"),
    };
    let zstd = match a.compress.as_str() {
        "none" => false,
        "zstd" => true,
        other => panic!("--compress none|zstd, got {other:?}"),
    };
    let layer = match a.front.as_str() {
        "macro" => false,
        "layer" => true,
        other => panic!("--front macro|layer, got {other:?}"),
    };
    let quill = match a.workload.as_str() {
        "app" => false,
        "quill" => true,
        other => panic!("--workload app|quill, got {other:?}"),
    };
    let tmp = match &a.dir {
        Some(d) => tempfile::tempdir_in(d),
        None => tempfile::tempdir(),
    }
    .unwrap();
    let dir = tmp.path().to_owned();
    let text = Text::new().with_ansi(false);
    let sink = match (binary, zstd) {
        (false, false) => Sink::file(dir.join("app.log")).format(text.clone()),
        (true, false) => Sink::binary(dir.join("app.nwb")),
        (b, true) => {
            let rolling = Rolling::never(&dir, if b { "app.nwb" } else { "app.log" })
                .max_size(16 << 20)
                .compress_with(Compression::Zstd);
            let sink = Sink::rolling(rolling);
            if b {
                sink.format(Binary::new())
            } else {
                sink.format(text.clone())
            }
        }
    };
    let mut builder = Builder::new();
    if let Some(cpu) = a.writer_cpu {
        builder = builder.writer_cpu(cpu);
    }
    let (logger, guard) = builder
        .full_policy(FullPolicy::Block)
        .sink(sink)
        .build()
        .expect("build (zstd needs `--features zstd`)");
    if layer {
        use tracing_subscriber::layer::SubscriberExt;
        let subscriber =
            tracing_subscriber::registry().with(nowait::NowaitLayer::new(logger.clone()));
        tracing::subscriber::set_global_default(subscriber).unwrap();
    } else {
        nowait::set_global(logger.clone()).unwrap();
    }
    // Warm-up, untimed: this host's CPUs take about 150 ms to come up to
    // speed from idle (a cold run's first 1.5M records go 1.5x slower
    // than the rest; spinning both CPUs first removes that), and a server
    // under load is not cold. Then the ring is emptied, and the timed run
    // starts from a written file.
    let warm_per = a.warmup / a.threads;
    if warm_per > 0 {
        produce(a.threads, warm_per, 0, layer, quill);
        logger.flush().expect("the warm-up is written");
    }
    let warm = warm_per * a.threads;
    let per = a.records / a.threads;
    let cpu_before = cpu_secs("/proc/self/stat");
    let run_before = writer_run_ns();
    let start = Instant::now();
    let producers_cpu = produce(a.threads, per, warm_per, layer, quill);
    // The writer's time on a CPU up to the last record taken (read before
    // the guard's drop ends the thread), over the wall time to there.
    let writer_busy = (writer_run_ns() - run_before) / start.elapsed().as_nanos() as f64;
    drop(guard);
    let written = start.elapsed();
    // The main thread only waits; what is left is the writer thread's.
    let writer_cpu = cpu_secs("/proc/self/stat") - cpu_before - producers_cpu;
    let deadline = Instant::now() + Duration::from_secs(600);
    while zstd && !settled(&dir) {
        assert!(Instant::now() < deadline, "compression did not catch up");
        std::thread::sleep(Duration::from_millis(5));
    }
    let stats = logger.stats();
    let records = per * a.threads;
    assert_eq!(stats.dropped(), 0, "not lossless: {stats:?}");
    assert_eq!(stats.sinks[0].records_written, warm + records, "{stats:?}");
    // The file holds the warm-up's records too.
    let on_disk = bytes_in(&dir);

    // Rendering the binary file back to text, as `nowait cat` does.
    let mut render_per_s = 0.0;
    if binary && !zstd {
        let file = std::fs::File::open(dir.join("app.nwb")).unwrap();
        let mut format = text.make_format(&SinkInfo::new("bench", false));
        let mut out = Vec::with_capacity(1 << 16);
        let mut rendered = 0u64;
        let start = Instant::now();
        for entry in Reader::new(std::io::BufReader::new(file)) {
            let entry = entry.unwrap();
            entry.render(&mut *format, &mut out);
            if out.len() > 1 << 16 {
                std::hint::black_box(&out);
                out.clear();
            }
            rendered += u64::from(!entry.is_notice());
        }
        render_per_s = rendered as f64 / start.elapsed().as_secs_f64();
        assert_eq!(rendered, warm + records);
    }
    let json = format!(
        concat!(
            "{{\"sink\":\"{}\",\"front\":\"{}\",\"workload\":\"{}\",",
            "\"compress\":\"{}\",\"records\":{},\"warmup\":{},\"threads\":{},",
            "\"producers_cpu_secs\":{:.3},\"writer_cpu_secs\":{:.3},\"writer_cpu_ns_per_record\":{:.1},",
            "\"writer_busy\":{:.3},",
            "\"write_secs\":{:.6},\"records_per_s\":{:.1},",
            "\"bytes_on_disk\":{},\"bytes_per_record\":{:.2},\"render_records_per_s\":{:.1}}}"
        ),
        a.sink,
        a.front,
        a.workload,
        a.compress,
        records,
        warm,
        a.threads,
        producers_cpu,
        writer_cpu,
        writer_cpu * 1e9 / records as f64,
        writer_busy,
        written.as_secs_f64(),
        records as f64 / written.as_secs_f64(),
        on_disk,
        on_disk as f64 / (warm + records) as f64,
        render_per_s,
    );
    println!("{json}");
    if let Some(out) = &a.out {
        std::fs::write(out, format!("{json}\n")).unwrap();
    }
}
