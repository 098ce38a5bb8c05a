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
//! One run is one configuration; `benches/binary_ab.py` runs them
//! interleaved and takes medians. Each run prints one JSON object (and
//! writes it to `--out`).
//!
//! Run one: `cargo bench -p nowait-benches --features zstd --bench
//! binary_sink -- --sink binary [--threads 2] [--records 2000000]
//! [--compress zstd] [--dir /tmp] [--out FILE]`.

use std::path::Path;
use std::time::{Duration, Instant};

use nowait::binary::{Binary, Reader};
use nowait::format::{MakeFormat, SinkInfo, Text};
use nowait::sink::{Compression, Rolling};
use nowait::{Builder, FullPolicy, Sink};

struct Args {
    sink: String,
    compress: String,
    records: u64,
    threads: u64,
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
        compress: value("--compress").unwrap_or_else(|| "none".into()),
        records: number("--records", 2_000_000),
        threads: number("--threads", 1).max(1),
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
    let (logger, guard) = Builder::new()
        .full_policy(FullPolicy::Block)
        .sink(sink)
        .build()
        .expect("build (zstd needs `--features zstd`)");
    nowait::set_global(logger.clone()).unwrap();
    let per = a.records / a.threads;
    let start = Instant::now();
    std::thread::scope(|s| {
        for t in 0..a.threads {
            s.spawn(move || {
                let mut state = 0x9e37_79b9_7f4a_7c15u64 ^ (t + 1);
                for i in 0..per {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    nowait::info!(
                        target: "app::http",
                        status = [200u16, 200, 201, 304, 404, 500][(state >> 20) as usize % 6],
                        user = "u1234",
                        latency_us = state % 9_000 + 20,
                        "GET /api/v1/items/{} seq={}",
                        state % 100_000,
                        i
                    );
                }
            });
        }
    });
    drop(guard);
    let written = start.elapsed();
    let deadline = Instant::now() + Duration::from_secs(600);
    while zstd && !settled(&dir) {
        assert!(Instant::now() < deadline, "compression did not catch up");
        std::thread::sleep(Duration::from_millis(5));
    }
    let stats = logger.stats();
    let records = per * a.threads;
    assert_eq!(stats.dropped(), 0, "not lossless: {stats:?}");
    assert_eq!(stats.sinks[0].records_written, records, "{stats:?}");
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
        assert_eq!(rendered, records);
    }
    let json = format!(
        concat!(
            "{{\"sink\":\"{}\",\"compress\":\"{}\",\"records\":{},\"threads\":{},",
            "\"write_secs\":{:.6},\"records_per_s\":{:.1},",
            "\"bytes_on_disk\":{},\"bytes_per_record\":{:.2},\"render_records_per_s\":{:.1}}}"
        ),
        a.sink,
        a.compress,
        records,
        a.threads,
        written.as_secs_f64(),
        records as f64 / written.as_secs_f64(),
        on_disk,
        on_disk as f64 / records as f64,
        render_per_s,
    );
    println!("{json}");
    if let Some(out) = &a.out {
        std::fs::write(out, format!("{json}\n")).unwrap();
    }
}
