//! The experiments nowait was founded on, reproduced through its writer.
//!
//! 1. The buffer-size curve ({fmt}'s): N lines of `test data\n` through
//!    nowait at writer batch sizes from 1 KiB to 1 MiB
//!    ([`Builder::batch_size`](nowait::Builder::batch_size)), to a file and
//!    to `/dev/null`, against `std::io::BufWriter` at the same sizes (8 KiB
//!    is `BUFSIZ` and `BufWriter`'s default), `LineWriter` and an
//!    unbuffered `File`. Lines per second and `write` calls per run; the
//!    knee is the smallest batch within 10 % of the best.
//! 2. fast_io's "10 million integers to a file": `nowait::info!("{}", i)`
//!    with a text format without time, level or target, against
//!    `writeln!` and `itoa` on a `BufWriter<File>`, and one `write_all` of
//!    a buffer formatted beforehand (the floor).
//! 3. One-byte writes, buffered (`BufWriter`) and not (`File`), and
//!    nowait with one-character records.
//!
//! Every run is a process of its own (`seeds run ...`, see [`run`]): the
//! global logger can be set once per process, and each run starts from
//! the same state. Runs of one experiment are interleaved (A B C A B C
//! ...). Each run checks its output (bytes counted by the kernel, the
//! file's content line by line, nowait's counters) and fails otherwise;
//! one failed run stops everything before any number is written.
//!
//! ```text
//! seeds [--quick] [--reps N] [--only 1,2,3] [--dir DIR] [--pin]
//!       [--json PATH] [--markdown PATH]
//! ```
//!
//! Use `benches/run.sh`, which builds, pins and renders the README.

mod run;
mod verify;

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use run::Target;

const SIZES: [usize; 7] = [
    1 << 10,
    4 << 10,
    8 << 10,
    32 << 10,
    64 << 10,
    256 << 10,
    1 << 20,
];

/// A batch within this fraction of the best rate is "at the knee".
const KNEE: f64 = 0.9;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = if args.first().map(String::as_str) == Some("run") {
        parse_run(&args[1..]).and_then(|spec| run::main(&spec))
    } else {
        parse_main(&args).and_then(|opts| orchestrate(&opts))
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("seeds: error: {e}");
            ExitCode::FAILURE
        }
    }
}

// === arguments ===

struct Options {
    quick: bool,
    reps: usize,
    only: Vec<u8>,
    dir: PathBuf,
    pin: bool,
    json: Option<PathBuf>,
    markdown: Option<PathBuf>,
}

fn value<'a>(it: &mut impl Iterator<Item = &'a String>, flag: &str) -> Result<&'a str, String> {
    it.next()
        .map(String::as_str)
        .ok_or_else(|| format!("{flag} needs a value"))
}

fn number<T: std::str::FromStr>(s: &str, flag: &str) -> Result<T, String> {
    s.parse()
        .map_err(|_| format!("{flag}: not a number: {s:?}"))
}

fn parse_main(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        quick: false,
        reps: 0,
        only: vec![1, 2, 3],
        dir: std::env::temp_dir().join("nowait-seeds"),
        pin: false,
        json: None,
        markdown: None,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => o.quick = true,
            "--pin" => o.pin = true,
            "--reps" => o.reps = number(value(&mut it, a)?, a)?,
            "--dir" => o.dir = value(&mut it, a)?.into(),
            "--json" => o.json = Some(value(&mut it, a)?.into()),
            "--markdown" => o.markdown = Some(value(&mut it, a)?.into()),
            "--only" => {
                o.only = value(&mut it, a)?
                    .split(',')
                    .map(|s| number(s, a))
                    .collect::<Result<_, _>>()?;
                if o.only.iter().any(|e| !(1..=3).contains(e)) {
                    return Err("--only takes experiment numbers 1, 2, 3".into());
                }
            }
            "-h" | "--help" => {
                return Err(
                    "usage: seeds [--quick] [--reps N] [--only 1,2,3] [--dir DIR] [--pin] \
                     [--json PATH] [--markdown PATH]"
                        .into(),
                )
            }
            other => return Err(format!("unknown argument {other:?} (try --help)")),
        }
    }
    if o.reps == 0 {
        o.reps = if o.quick { 3 } else { 5 };
    }
    Ok(o)
}

fn parse_run(args: &[String]) -> Result<run::Spec, String> {
    let mut it = args.iter();
    let kind = value(&mut it, "run")?.to_string();
    let mut spec = run::Spec {
        kind,
        n: 0,
        batch: 8 << 10,
        target: Target::File,
        dir: std::env::temp_dir().join("nowait-seeds"),
        pin: false,
    };
    while let Some(a) = it.next() {
        match a.as_str() {
            "--n" => spec.n = number(value(&mut it, a)?, a)?,
            "--batch" => spec.batch = number(value(&mut it, a)?, a)?,
            "--target" => spec.target = Target::parse(value(&mut it, a)?)?,
            "--dir" => spec.dir = value(&mut it, a)?.into(),
            "--pin" => spec.pin = true,
            other => return Err(format!("run: unknown argument {other:?}")),
        }
    }
    if spec.batch == 0 {
        return Err("--batch must not be zero".into());
    }
    Ok(spec)
}

// === the experiments ===

/// One measured configuration and its samples.
struct Case {
    key: String,
    /// Curve or bar it belongs to in the charts.
    series: String,
    label: String,
    kind: &'static str,
    /// Buffer or batch size, where one is set.
    batch: Option<usize>,
    target: Target,
    samples: Vec<Sample>,
}

/// One run's figures, as the child printed them.
#[derive(Default)]
struct Sample {
    secs: f64,
    producer_secs: Option<f64>,
    writes: u64,
    other_writes: u64,
    bytes: u64,
    pinned: bool,
    last_line: Option<String>,
}

struct Experiment {
    id: u8,
    title: &'static str,
    what: &'static str,
    n: u64,
    cases: Vec<Case>,
}

fn case(
    kind: &'static str,
    series: &str,
    label: String,
    batch: Option<usize>,
    target: Target,
) -> Case {
    let key = match batch {
        Some(b) => format!("{kind}-{}-{b}", target.name()),
        None => format!("{kind}-{}", target.name()),
    };
    Case {
        key,
        series: series.to_string(),
        label,
        kind,
        batch,
        target,
        samples: Vec::new(),
    }
}

fn experiments(quick: bool) -> Vec<Experiment> {
    let scale = |full: u64, small: u64| if quick { small } else { full };
    let mut curve = Vec::new();
    for target in [Target::File, Target::Null] {
        let t = target.name();
        for &b in &SIZES {
            let label = format!("nowait, batch {}", size(b));
            curve.push(case(
                "lines-nowait",
                &format!("nowait {t}"),
                label,
                Some(b),
                target,
            ));
        }
        for &b in &SIZES {
            let label = if b == 8 << 10 {
                "BufWriter 8 KiB (default, BUFSIZ)".to_string()
            } else {
                format!("BufWriter {}", size(b))
            };
            curve.push(case(
                "lines-bufwriter",
                &format!("BufWriter {t}"),
                label,
                Some(b),
                target,
            ));
        }
        curve.push(case(
            "lines-linewriter",
            &format!("LineWriter {t}"),
            "LineWriter".into(),
            None,
            target,
        ));
        curve.push(case(
            "lines-file",
            &format!("File {t}"),
            "unbuffered File".into(),
            None,
            target,
        ));
    }
    let batch = nowait::Builder::DEFAULT_BATCH_SIZE;
    vec![
        Experiment {
            id: 1,
            title: "Buffer-size curve",
            what: "lines of `test data\\n`",
            n: scale(1_000_000, 20_000),
            cases: curve,
        },
        Experiment {
            id: 2,
            title: "Integers to a file",
            what: "integers `0..N`, one per line, to a file",
            n: scale(10_000_000, 200_000),
            cases: vec![
                case(
                    "ints-nowait",
                    "nowait",
                    format!("nowait::info!(\"{{}}\", i), batch {}", size(batch)),
                    Some(batch),
                    Target::File,
                ),
                case(
                    "ints-writeln",
                    "writeln!",
                    "writeln!(w, \"{}\", i) on BufWriter<File>".into(),
                    None,
                    Target::File,
                ),
                case(
                    "ints-itoa",
                    "itoa",
                    "itoa on BufWriter<File>".into(),
                    None,
                    Target::File,
                ),
                case(
                    "ints-floor",
                    "floor",
                    "one write_all of a formatted buffer (floor)".into(),
                    None,
                    Target::File,
                ),
            ],
        },
        Experiment {
            id: 3,
            title: "One-byte writes",
            what: "one-byte writes to a file",
            n: scale(1_000_000, 20_000),
            cases: vec![
                case(
                    "bytes-bufwriter",
                    "BufWriter",
                    "BufWriter<File>, write_all(b\"x\")".into(),
                    None,
                    Target::File,
                ),
                case(
                    "bytes-file",
                    "File",
                    "File, write_all(b\"x\") (unbuffered)".into(),
                    None,
                    Target::File,
                ),
                case(
                    "bytes-nowait",
                    "nowait",
                    format!(
                        "nowait::info!(\"x\") (2 bytes a line), batch {}",
                        size(batch)
                    ),
                    Some(batch),
                    Target::File,
                ),
            ],
        },
    ]
}

fn orchestrate(o: &Options) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| format!("locating this binary: {e}"))?;
    fs::create_dir_all(&o.dir).map_err(|e| format!("creating {}: {e}", o.dir.display()))?;
    let meta = Meta::collect(o);
    let mut exps: Vec<Experiment> = experiments(o.quick)
        .into_iter()
        .filter(|e| o.only.contains(&e.id))
        .collect();
    for exp in &mut exps {
        eprintln!(
            "experiment {}: {} ({} x {} runs)",
            exp.id,
            exp.title,
            exp.cases.len(),
            o.reps
        );
        for rep in 0..o.reps {
            for c in &mut exp.cases {
                let sample = run_child(&exe, o, exp.n, c)?;
                eprintln!(
                    "  rep {}/{} {:<28} {:>10.4} s  {:>9} writes",
                    rep + 1,
                    o.reps,
                    c.key,
                    sample.secs,
                    sample.writes
                );
                c.samples.push(sample);
            }
        }
    }
    let json = to_json(&meta, o, &exps);
    let md = to_markdown(&meta, o, &exps);
    if let Some(p) = &o.json {
        write(p, &json)?;
        eprintln!("wrote {}", p.display());
    }
    if let Some(p) = &o.markdown {
        write(p, &md)?;
        eprintln!("wrote {}", p.display());
    }
    print!("{md}");
    Ok(())
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        fs::create_dir_all(parent).map_err(|e| format!("creating {}: {e}", parent.display()))?;
    }
    fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()))
}

fn run_child(exe: &Path, o: &Options, n: u64, c: &Case) -> Result<Sample, String> {
    // Leave no dirty pages of the previous run to be written back during
    // this one (best effort).
    let _ = Command::new("sync").status();
    let mut cmd = Command::new(exe);
    cmd.args(["run", c.kind, "--n", &n.to_string()])
        .args(["--batch", &c.batch.unwrap_or(8 << 10).to_string()])
        .args(["--target", c.target.name()])
        .arg("--dir")
        .arg(&o.dir);
    if o.pin {
        cmd.arg("--pin");
    }
    let out = cmd
        .output()
        .map_err(|e| format!("starting {}: {e}", exe.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(format!(
            "run {} failed ({}); no results written:\n{stderr}",
            c.key, out.status
        ));
    }
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .ok_or_else(|| format!("run {}: no RESULT line in {stdout:?}", c.key))?;
    parse_sample(line).map_err(|e| format!("run {}: {e}", c.key))
}

fn parse_sample(line: &str) -> Result<Sample, String> {
    let mut s = Sample::default();
    for kv in line.split_whitespace() {
        let (k, v) = kv
            .split_once('=')
            .ok_or_else(|| format!("bad field {kv:?}"))?;
        match k {
            "secs" => s.secs = number(v, k)?,
            "producer_secs" => s.producer_secs = Some(number(v, k)?),
            "writes" => s.writes = number(v, k)?,
            "other_writes" => s.other_writes = number(v, k)?,
            "bytes" => s.bytes = number(v, k)?,
            "pinned" => s.pinned = v == "true",
            "last_line" => s.last_line = Some(v.to_string()),
            _ => return Err(format!("unknown field {k:?}")),
        }
    }
    if s.secs.is_nan() || s.secs <= 0.0 {
        return Err(format!("no time in {line:?}"));
    }
    Ok(s)
}

// === statistics ===

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

struct Summary {
    median_secs: f64,
    min_secs: f64,
    max_secs: f64,
    median_writes: f64,
    median_other_writes: f64,
    /// nowait: until the last log call returned.
    median_producer_secs: Option<f64>,
    bytes: u64,
}

fn summary(c: &Case) -> Summary {
    let secs: Vec<f64> = c.samples.iter().map(|s| s.secs).collect();
    Summary {
        median_secs: median(secs.clone()),
        min_secs: secs.iter().copied().fold(f64::INFINITY, f64::min),
        max_secs: secs.iter().copied().fold(0.0, f64::max),
        median_writes: median(c.samples.iter().map(|s| s.writes as f64).collect()),
        median_other_writes: median(c.samples.iter().map(|s| s.other_writes as f64).collect()),
        median_producer_secs: c
            .samples
            .iter()
            .map(|s| s.producer_secs)
            .collect::<Option<Vec<f64>>>()
            .filter(|v| !v.is_empty())
            .map(median),
        bytes: c.samples.first().map_or(0, |s| s.bytes),
    }
}

/// Per curve (series with batch sizes): the best median rate, and the
/// smallest batch whose median rate is within [`KNEE`] of it.
fn knees(exp: &Experiment) -> Vec<(String, usize, f64, usize, f64)> {
    let mut series: Vec<&str> = Vec::new();
    for c in &exp.cases {
        if c.batch.is_some() && !series.contains(&c.series.as_str()) {
            series.push(&c.series);
        }
    }
    series
        .into_iter()
        .filter_map(|name| {
            let points: Vec<(usize, f64)> = exp
                .cases
                .iter()
                .filter(|c| c.series == name && !c.samples.is_empty())
                .filter_map(|c| Some((c.batch?, exp.n as f64 / summary(c).median_secs)))
                .collect();
            let &(best_b, best) = points.iter().max_by(|a, b| a.1.total_cmp(&b.1))?;
            let &(knee_b, knee) = points
                .iter()
                .filter(|p| p.1 >= KNEE * best)
                .min_by_key(|p| p.0)?;
            Some((name.to_string(), best_b, best, knee_b, knee))
        })
        .collect()
}

// === metadata ===

struct Meta {
    date: String,
    cpu: String,
    nproc: usize,
    kernel: String,
    rustc: String,
    commit: String,
    dir_fs: String,
    affinity: String,
}

fn command_line(cmd: &str, args: &[&str]) -> String {
    Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into())
}

impl Meta {
    fn collect(o: &Options) -> Meta {
        let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let cpu = cpuinfo
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == "model name").then(|| v.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".into());
        let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
        let affinity = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .map_or("unknown".into(), |s| s.trim().to_string());
        let mut commit = command_line("git", &["rev-parse", "--short=12", "HEAD"]);
        if command_line("git", &["status", "--porcelain", "--untracked-files=no"]) != "unknown" {
            commit.push_str(" (with uncommitted changes)");
        }
        Meta {
            date: command_line("date", &["-u", "+%Y-%m-%dT%H:%M:%SZ"]),
            cpu,
            nproc: std::thread::available_parallelism().map_or(0, |n| n.get()),
            kernel: fs::read_to_string("/proc/sys/kernel/osrelease")
                .map_or("unknown".into(), |s| s.trim().to_string()),
            rustc: std::env::var("SEEDS_RUSTC")
                .unwrap_or_else(|_| command_line("rustc", &["--version"])),
            commit,
            dir_fs: filesystem(&o.dir),
            affinity,
        }
    }
}

/// The type of the file system holding `dir` (longest mount point prefix).
fn filesystem(dir: &Path) -> String {
    let dir = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let mounts = fs::read_to_string("/proc/self/mounts").unwrap_or_default();
    mounts
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (_dev, at, fs) = (f.next()?, f.next()?, f.next()?);
            dir.starts_with(at).then(|| (at.len(), fs.to_string()))
        })
        .max_by_key(|m| m.0)
        .map_or("unknown".into(), |m| m.1)
}

// === output ===

fn size(b: usize) -> String {
    if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
        format!("{} MiB", b >> 20)
    } else if b >= 1 << 10 && b.is_multiple_of(1 << 10) {
        format!("{} KiB", b >> 10)
    } else {
        format!("{b} B")
    }
}

/// A duration in seconds, in the unit that suits it.
fn secs(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.3} s")
    } else if s >= 1e-3 {
        format!("{:.3} ms", s * 1e3)
    } else {
        format!("{:.1} µs", s * 1e6)
    }
}

/// Text for a Markdown table cell: no HTML tags, no column breaks.
fn md_text(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('|', "\\|")
}

fn rate(per_sec: f64) -> String {
    if per_sec >= 1e6 {
        format!("{:.2} M", per_sec / 1e6)
    } else if per_sec >= 1e3 {
        format!("{:.1} k", per_sec / 1e3)
    } else {
        format!("{per_sec:.0}")
    }
}

fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn json_f64(x: f64) -> String {
    if x.is_finite() {
        format!("{x}")
    } else {
        "null".into()
    }
}

fn to_json(m: &Meta, o: &Options, exps: &[Experiment]) -> String {
    let mut j = String::new();
    let _ = writeln!(j, "{{");
    let _ = writeln!(j, "  \"schema\": 1,");
    let _ = writeln!(j, "  \"smoke\": {},", o.quick);
    let _ = writeln!(j, "  \"date\": {},", json_str(&m.date));
    let _ = writeln!(
        j,
        "  \"machine\": {{\"cpu\": {}, \"nproc\": {}, \"kernel\": {}, \"affinity\": {}}},",
        json_str(&m.cpu),
        m.nproc,
        json_str(&m.kernel),
        json_str(&m.affinity)
    );
    let _ = writeln!(j, "  \"rustc\": {},", json_str(&m.rustc));
    let _ = writeln!(j, "  \"commit\": {},", json_str(&m.commit));
    let _ = writeln!(
        j,
        "  \"dir\": {}, \"dir_fs\": {},",
        json_str(&o.dir.display().to_string()),
        json_str(&m.dir_fs)
    );
    let _ = writeln!(j, "  \"pinned\": {}, \"reps\": {},", o.pin, o.reps);
    let _ = writeln!(j, "  \"nowait_ring_bytes\": {},", run::RING);
    let _ = writeln!(j, "  \"knee_fraction\": {KNEE},");
    let _ = writeln!(j, "  \"experiments\": [");
    for (ei, e) in exps.iter().enumerate() {
        let _ = writeln!(j, "    {{");
        let _ = writeln!(
            j,
            "      \"id\": {}, \"title\": {}, \"what\": {}, \"n\": {},",
            e.id,
            json_str(e.title),
            json_str(e.what),
            e.n
        );
        let knees: Vec<String> = knees(e)
            .iter()
            .map(|(s, bb, best, kb, kr)| {
                format!(
                    "{{\"series\": {}, \"best_batch\": {bb}, \"best_per_sec\": {}, \"knee_batch\": {kb}, \"knee_per_sec\": {}}}",
                    json_str(s),
                    json_f64(*best),
                    json_f64(*kr)
                )
            })
            .collect();
        let _ = writeln!(j, "      \"knees\": [{}],", knees.join(", "));
        let _ = writeln!(j, "      \"cases\": [");
        for (ci, c) in e.cases.iter().enumerate() {
            let s = summary(c);
            let samples: Vec<String> = c
                .samples
                .iter()
                .map(|x| {
                    let mut f = format!(
                        "{{\"secs\": {}, \"writes\": {}, \"other_writes\": {}, \"bytes\": {}, \"pinned\": {}",
                        json_f64(x.secs),
                        x.writes,
                        x.other_writes,
                        x.bytes,
                        x.pinned
                    );
                    if let Some(p) = x.producer_secs {
                        let _ = write!(f, ", \"producer_secs\": {}", json_f64(p));
                    }
                    if let Some(l) = &x.last_line {
                        let _ = write!(f, ", \"last_line\": {}", json_str(l));
                    }
                    f.push('}');
                    f
                })
                .collect();
            let _ = writeln!(
                j,
                "        {{\"key\": {}, \"series\": {}, \"label\": {}, \"kind\": {}, \"target\": {}, \"batch\": {}, \
                 \"median_secs\": {}, \"min_secs\": {}, \"max_secs\": {}, \"median_per_sec\": {}, \
                 \"median_writes\": {}, \"median_other_writes\": {}, \"median_producer_secs\": {}, \"bytes\": {},\n         \"samples\": [{}]}}{}",
                json_str(&c.key),
                json_str(&c.series),
                json_str(&c.label),
                json_str(c.kind),
                json_str(c.target.name()),
                c.batch.map_or("null".into(), |b| b.to_string()),
                json_f64(s.median_secs),
                json_f64(s.min_secs),
                json_f64(s.max_secs),
                json_f64(e.n as f64 / s.median_secs),
                json_f64(s.median_writes),
                json_f64(s.median_other_writes),
                s.median_producer_secs.map_or("null".into(), json_f64),
                s.bytes,
                samples.join(", "),
                if ci + 1 < e.cases.len() { "," } else { "" }
            );
        }
        let _ = writeln!(j, "      ]");
        let _ = writeln!(j, "    }}{}", if ei + 1 < exps.len() { "," } else { "" });
    }
    let _ = writeln!(j, "  ]");
    let _ = writeln!(j, "}}");
    j
}

fn to_markdown(m: &Meta, o: &Options, exps: &[Experiment]) -> String {
    let mut md = String::new();
    if o.quick {
        let _ = writeln!(
            md,
            "> **Smoke run (`--quick`)**: small sizes on a busy machine; these numbers prove \
             the pipeline works and mean nothing.\n"
        );
    }
    let _ = writeln!(
        md,
        "Machine: {} ({} CPUs, Linux {}), {}, commit {}, {}. Output files in `{}` ({}). \
         {} runs per case, interleaved; median (min–max). {}",
        m.cpu,
        m.nproc,
        m.kernel,
        m.rustc,
        m.commit,
        m.date,
        o.dir.display(),
        m.dir_fs,
        o.reps,
        if o.pin {
            format!(
                "Pinned: process on CPUs {}, calling thread on CPU 0, nowait's writer thread on CPU 1.",
                m.affinity
            )
        } else {
            format!("Not pinned (CPUs {}).", m.affinity)
        }
    );
    let _ = writeln!(
        md,
        "\nTime runs from the first write or log call until the output is closed \
         (`BufWriter` flushed and dropped, nowait's guard dropped: everything written, \
         in the page cache, not fsynced). Write calls are the kernel's count of the \
         process's write system calls (`syscw` in `/proc/self/io`); for nowait, the writes \
         on its sink as its `SinkStats::write_calls` counts them, the rest (its wake-up \
         eventfd) shown apart (more than one means the caller waited for room in the ring: the writer \
         is the bottleneck). Every run checks its output (byte count; the file's content \
         line by line; nowait: nothing dropped) and the whole run stops if one is wrong. \
         nowait runs use the `Block` policy, a {} ring, a text format without time, level or \
         target (`Text::new().without_time().with_level(false).with_target(false)`, which \
         writes exactly the message and a newline), and a sink buffer of 4 × the batch \
         (at least 4 MiB) so that the batch, not the buffer, bounds a write. \
         *Caller* columns: nowait's time until the last log call returned (the writer \
         thread still draining), the cost the request threads see.",
        size(run::RING)
    );
    for e in exps {
        let _ = writeln!(md, "\n### {}. {} ({} {})\n", e.id, e.title, e.n, e.what);
        if e.id == 1 {
            let _ = writeln!(
                md,
                "| writer | target | lines/s | (min–max) | write calls | bytes/write | other writes | caller lines/s |"
            );
            let _ = writeln!(md, "|---|---|--:|--:|--:|--:|--:|--:|");
            for c in &e.cases {
                let s = summary(c);
                let _ = writeln!(
                    md,
                    "| {} | {} | {} | {}–{} | {:.0} | {:.0} | {:.0} | {} |",
                    md_text(&c.label),
                    c.target.name(),
                    rate(e.n as f64 / s.median_secs),
                    rate(e.n as f64 / s.max_secs),
                    rate(e.n as f64 / s.min_secs),
                    s.median_writes,
                    s.bytes as f64 / s.median_writes.max(1.0),
                    s.median_other_writes,
                    s.median_producer_secs
                        .map_or("–".into(), |p| rate(e.n as f64 / p))
                );
            }
            let _ = writeln!(md);
            for (series, bb, best, kb, kr) in knees(e) {
                let _ = writeln!(
                    md,
                    "- **{series}**: best {} lines/s at {}; knee (smallest batch within {:.0} % of the best) **{}** at {} lines/s.",
                    rate(best),
                    size(bb),
                    (1.0 - KNEE) * 100.0,
                    size(kb),
                    rate(kr)
                );
            }
        } else {
            let reference = e
                .cases
                .iter()
                .find(|c| c.kind == "ints-floor" || c.kind == "bytes-bufwriter")
                .map(|c| summary(c).median_secs);
            let _ = writeln!(
                md,
                "| writer | time | (min–max) | per second | × {} | write calls | other writes | caller time |",
                if e.id == 2 { "floor" } else { "BufWriter" }
            );
            let _ = writeln!(md, "|---|--:|--:|--:|--:|--:|--:|--:|");
            for c in &e.cases {
                let s = summary(c);
                let _ = writeln!(
                    md,
                    "| {} | {} | {}–{} | {} | {:.1} | {:.0} | {:.0} | {} |",
                    md_text(&c.label),
                    secs(s.median_secs),
                    secs(s.min_secs),
                    secs(s.max_secs),
                    rate(e.n as f64 / s.median_secs),
                    reference.map_or(f64::NAN, |r| s.median_secs / r),
                    s.median_writes,
                    s.median_other_writes,
                    s.median_producer_secs.map_or("–".into(), secs)
                );
            }
            if e.id == 2 {
                let last = e
                    .cases
                    .iter()
                    .filter_map(|c| c.samples.first()?.last_line.clone())
                    .next()
                    .unwrap_or_default();
                let _ = writeln!(
                    md,
                    "\nEvery file was read back: {} lines, `0` to `{last}` in order.",
                    e.n
                );
            }
        }
    }
    md
}
