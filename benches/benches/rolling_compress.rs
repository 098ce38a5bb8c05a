//! What it models: a server logging as fast as it can into a rolling file
//! that rotates every 16 MiB, losslessly (`FullPolicy::Block`: nothing is
//! dropped, a full ring makes the request threads wait), with the rotated
//! files left as they are, gzipped or zstd-compressed on the housekeeping
//! thread. Compression never runs on the writer thread, but it takes a
//! core: this shows what that costs in records per second end to end, and
//! how long the archives take to catch up.
//!
//! One run is one configuration; `benches/rolling_compress_ab.py` runs
//! them interleaved and takes medians. Each run prints one JSON object
//! (and writes it to `--out`): records/s until the last record is in a
//! file (`write_records_per_s`), until every rotated file is compressed
//! too (`settled_records_per_s`), bytes logged and bytes on disk after.
//!
//! Run one: `cargo bench -p nowait-benches --features zstd --bench
//! rolling_compress -- --compress zstd [--records 4000000] [--threads 4]
//! [--max-size 16777216] [--dir /tmp] [--out FILE]`.

use std::path::Path;
use std::time::{Duration, Instant};

use nowait::format::Plain;
use nowait::sink::{Compression, Rolling};
use nowait::{Builder, FullPolicy, Level, Sink};

struct Args {
    compress: String,
    records: u64,
    threads: u64,
    max_size: u64,
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
        compress: value("--compress").unwrap_or_else(|| "none".into()),
        records: number("--records", 4_000_000),
        threads: number("--threads", 4).max(1),
        max_size: number("--max-size", 16 << 20),
        dir: value("--dir"),
        out: value("--out"),
    }
}

/// A request log line with varying numbers, as compressible as real ones.
fn line(buf: &mut String, thread: u64, i: u64, state: &mut u64) {
    use std::fmt::Write;
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    buf.clear();
    let _ = write!(
        buf,
        "GET /api/v1/items/{} {} {}us user=u{} request_id={:016x} thread={thread} seq={i}",
        *state % 100_000,
        [200, 200, 200, 201, 304, 404, 500][(*state >> 20) as usize % 7],
        *state % 9_000 + 20,
        (*state >> 32) % 5_000,
        *state,
    );
}

/// Whether every rotated file in `dir` is an archive (no plain file but
/// the current one, no temporary).
fn settled(dir: &Path, compressing: bool) -> bool {
    if !compressing {
        return true;
    }
    let mut plain = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".tmp") {
            return false;
        }
        if !name.ends_with(".gz") && !name.ends_with(".zst") {
            plain += 1;
        }
    }
    plain <= 1
}

fn bytes_in(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum()
}

fn main() {
    let argv: Vec<String> = std::env::args().collect();
    if argv.iter().any(|a| a == "--list" || a == "--test") {
        return; // `cargo test --benches` / `cargo bench --no-run` probes.
    }
    if cfg!(debug_assertions) && !argv.iter().any(|a| a == "--force") {
        eprintln!("rolling_compress: debug build, nothing run (use `cargo bench`, or --force)");
        return;
    }
    let a = args();
    let how = match a.compress.as_str() {
        "none" => None,
        "gzip" => Some(Compression::Gzip),
        "zstd" => Some(Compression::Zstd),
        other => panic!("--compress none|gzip|zstd, got {other:?}"),
    };
    let tmp = match &a.dir {
        Some(d) => tempfile::tempdir_in(d),
        None => tempfile::tempdir(),
    }
    .unwrap();
    let dir = tmp.path().to_owned();
    let mut rolling = Rolling::never(&dir, "app.log").max_size(a.max_size);
    if let Some(how) = how {
        rolling = rolling.compress_with(how);
    }
    let (logger, guard) = Builder::new()
        .format(Plain)
        .full_policy(FullPolicy::Block)
        .sink(Sink::rolling(rolling))
        .build()
        .expect("build (zstd needs `--features zstd`)");
    let per = a.records / a.threads;
    let start = Instant::now();
    std::thread::scope(|s| {
        for t in 0..a.threads {
            let logger = logger.clone();
            s.spawn(move || {
                let mut buf = String::with_capacity(160);
                let mut state = 0x9e37_79b9_7f4a_7c15 ^ (t + 1);
                for i in 0..per {
                    line(&mut buf, t, i, &mut state);
                    logger.log(Level::Info, &buf).unwrap();
                }
            });
        }
    });
    drop(guard);
    let written = start.elapsed();
    let deadline = Instant::now() + Duration::from_secs(600);
    while !settled(&dir, how.is_some()) {
        assert!(Instant::now() < deadline, "compression did not catch up");
        std::thread::sleep(Duration::from_millis(5));
    }
    let settle = start.elapsed();
    let stats = logger.stats();
    let records = per * a.threads;
    assert_eq!(stats.dropped(), 0, "not lossless: {stats:?}");
    assert_eq!(stats.sinks[0].records_written, records, "{stats:?}");
    let json = format!(
        concat!(
            "{{\"compress\":\"{}\",\"records\":{},\"threads\":{},\"max_size\":{},",
            "\"write_secs\":{:.6},\"settled_secs\":{:.6},",
            "\"write_records_per_s\":{:.1},\"settled_records_per_s\":{:.1},",
            "\"bytes_logged\":{},\"bytes_on_disk\":{},\"rotations\":{}}}"
        ),
        a.compress,
        records,
        a.threads,
        a.max_size,
        written.as_secs_f64(),
        settle.as_secs_f64(),
        records as f64 / written.as_secs_f64(),
        records as f64 / settle.as_secs_f64(),
        stats.sinks[0].bytes_written,
        bytes_in(&dir),
        stats.sinks[0].rotations,
    );
    println!("{json}");
    if let Some(out) = &a.out {
        std::fs::write(out, format!("{json}\n")).unwrap();
    }
}
