//! Tables on stdout, the project's latency and throughput goals with met / missed, and
//! the JSON document.

use std::process::Command;

use serde_json::{json, Value};

use crate::measure::round1;

fn num(v: &Value, path: &[&str]) -> Option<f64> {
    let mut v = v;
    for key in path {
        v = v.get(key)?;
    }
    v.as_f64()
}

fn cell(x: Option<f64>) -> String {
    match x {
        Some(x) if x >= 100.0 => format!("{x:.0}"),
        Some(x) => format!("{x:.1}"),
        None => "-".into(),
    }
}

fn mib(kib: Option<f64>) -> String {
    kib.map_or("-".into(), |k| format!("{:.1}", k / 1024.0))
}

fn count(x: Option<f64>) -> String {
    match x {
        Some(x) if x >= 1e6 => format!("{:.2}M", x / 1e6),
        Some(x) if x >= 1e4 => format!("{:.1}k", x / 1e3),
        Some(x) => format!("{x:.0}"),
        None => "-".into(),
    }
}

fn of_kind<'a>(results: &'a [Value], kind: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    results
        .iter()
        .filter(move |r| r["kind"] == kind && r.get("error").is_none())
}

/// Records lost in a lossless run: what the logger counted, or failing
/// that the records missing from the file.
fn lost(r: &Value) -> Option<f64> {
    let counted = num(r, &["dropped"]);
    match (counted, missing(r)) {
        (Some(c), Some(m)) => Some(c.max(m)),
        (c, m) => c.or(m),
    }
}

/// Records not in the file (a lower bound on loss: notice lines count as
/// lines).
fn missing(r: &Value) -> Option<f64> {
    Some((num(r, &["records"])? - num(r, &["lines"])?).max(0.0))
}

/// One goal checked against one measurement.
struct Goal {
    goal: &'static str,
    subject: String,
    measured: Option<f64>,
    target: f64,
    unit: &'static str,
    /// `true`: the measurement must be at most the target.
    at_most: bool,
    /// Why the goal is missed whatever the number (e.g. records lost).
    fails: Option<String>,
}

impl Goal {
    fn verdict(&self) -> (Option<bool>, String) {
        let Some(m) = self.measured else {
            return (None, "not measured".into());
        };
        if let Some(why) = &self.fails {
            return (Some(false), format!("missed: {why}"));
        }
        let met = if self.at_most {
            m <= self.target
        } else {
            m >= self.target
        };
        if met {
            (Some(true), "met".into())
        } else {
            let ratio = if self.target != 0.0 {
                m / self.target
            } else {
                f64::NAN
            };
            (
                Some(false),
                format!(
                    "missed by {} {} ({ratio:.2}x the goal)",
                    cell(Some((m - self.target).abs())),
                    self.unit
                ),
            )
        }
    }

    fn json(&self) -> Value {
        let (met, verdict) = self.verdict();
        json!({
            "goal": self.goal, "subject": self.subject,
            "measured": self.measured.map(round1), "target": self.target, "unit": self.unit,
            "at_most": self.at_most, "met": met, "verdict": verdict,
        })
    }
}

fn spaced_rows(r: &Value) -> Vec<Value> {
    r["spaced"].as_array().cloned().unwrap_or_default()
}

fn spaced_row<'a>(r: &'a Value, threads: u64, spacing: &str) -> Option<&'a Value> {
    r["spaced"]
        .as_array()?
        .iter()
        .find(|row| row["threads"] == threads && row["spacing"] == spacing)
}

fn goals(results: &[Value]) -> Vec<Goal> {
    let mut goals = Vec::new();
    let lat = |name: &str| of_kind(results, "lat").find(|r| r["name"] == name);
    // Per-call latency, one thread (quill's published figures, with its
    // method and back to back and 10 µs apart).
    for name in ["nowait-macro-drop", "nowait-macro-block"] {
        let Some(r) = lat(name) else { continue };
        for spacing in ["q20x2ms", "b2b", "10us"] {
            let Some(row) = spaced_row(r, 1, spacing) else {
                continue;
            };
            for (key, target, goal) in [
                ("p50_ns", 19.0, "own macros p50 <= 19 ns net (quill)"),
                ("p999_ns", 100.0, "own macros p99.9 <= 100 ns net (quill)"),
            ] {
                goals.push(Goal {
                    goal,
                    subject: format!("{name}, 1 thread, {spacing}"),
                    measured: num(row, &[key]),
                    target,
                    unit: "ns",
                    at_most: true,
                    fails: None,
                });
            }
        }
    }
    // The tracing layer against tracing's own floor, same spacing.
    if let (Some(layer), Some(floor)) = (lat("nowait-layer"), lat("tracing-floor")) {
        for row in spaced_rows(layer).iter().filter(|row| row["threads"] == 1) {
            let spacing = row["spacing"].as_str().unwrap_or("?");
            let over = match (
                num(row, &["p50_ns"]),
                spaced_row(floor, 1, spacing).and_then(|f| num(f, &["p50_ns"])),
            ) {
                (Some(l), Some(f)) => Some(l - f),
                _ => None,
            };
            goals.push(Goal {
                goal: "tracing layer p50 <= tracing's floor + 60 ns",
                subject: format!("nowait-layer, 1 thread, {spacing}"),
                measured: over,
                target: 60.0,
                unit: "ns over",
                at_most: true,
                fails: None,
            });
        }
    }
    // Two threads against one, per call, p50.
    for name in [
        "nowait-macro-drop",
        "nowait-macro-block",
        "nowait-layer",
        "nowait-log",
    ] {
        let Some(r) = lat(name) else { continue };
        for row in spaced_rows(r).iter().filter(|row| row["threads"] == 1) {
            let spacing = row["spacing"].as_str().unwrap_or("?");
            let one = num(row, &["p50_ns"]);
            let two = spaced_row(r, 2, spacing).and_then(|x| num(x, &["p50_ns"]));
            let ratio = match (one, two) {
                (Some(a), Some(b)) if a > 0.0 => Some(b / a),
                _ => None,
            };
            goals.push(Goal {
                goal: "2 threads per-call p50 <= 1.2x one thread's",
                subject: format!("{name}, {spacing}"),
                measured: ratio,
                target: 1.2,
                unit: "x",
                at_most: true,
                fails: None,
            });
        }
    }
    // First call after idle.
    for name in ["nowait-macro-drop", "nowait-layer"] {
        let Some(r) = lat(name) else { continue };
        let short = num(r, &["idle", "after_50ms", "p50_ns"]);
        let long = num(r, &["idle", "after_150ms", "p50_ns"]);
        let ratio = match (short, long) {
            (Some(a), Some(b)) if a > 0.0 => Some(b / a),
            _ => None,
        };
        for target in [1.5, 1.0] {
            goals.push(Goal {
                goal: if target == 1.5 {
                    "first call after 150 ms idle <= 1.5x after 50 ms (p50)"
                } else {
                    "first call after 150 ms idle <= 1.0x after 50 ms (p50, stretch)"
                },
                subject: name.to_string(),
                measured: ratio,
                target,
                unit: "x",
                at_most: true,
                fails: None,
            });
        }
    }
    // Lossless throughput.
    for (name, target, goal) in [
        (
            "nowait-macro-block",
            4.9e6,
            "lossless >= 4.9M lines/s, own macros",
        ),
        (
            "nowait-layer",
            5.7e6,
            "lossless >= 5.7M lines/s, tracing events",
        ),
    ] {
        for r in of_kind(results, "tput").filter(|r| r["name"] == name) {
            let lost = lost(r).unwrap_or(0.0);
            goals.push(Goal {
                goal,
                subject: format!("{name}, {} thread(s)", r["threads"]),
                measured: num(r, &["records_per_s"]),
                target,
                unit: "lines/s",
                at_most: false,
                fails: (lost > 0.0).then(|| format!("not lossless, {lost} records lost")),
            });
        }
    }
    // Bytes per write under load: paced 500k/s and saturated.
    for name in ["nowait-macro-block", "nowait-layer", "nowait-log"] {
        for r in of_kind(results, "paced").filter(|r| r["name"] == name && r["rate"] == 500_000) {
            goals.push(Goal {
                goal: ">= 32 KiB per write() under load",
                subject: format!("{name}, paced 500k/s"),
                measured: num(r, &["io", "bytes_per_write"]),
                target: 32768.0,
                unit: "B",
                at_most: false,
                fails: None,
            });
        }
        for r in of_kind(results, "tput").filter(|r| r["name"] == name) {
            goals.push(Goal {
                goal: ">= 32 KiB per write() under load",
                subject: format!("{name}, saturated, {} thread(s)", r["threads"]),
                measured: num(r, &["io", "bytes_per_write"]),
                target: 32768.0,
                unit: "B",
                at_most: false,
                fails: None,
            });
        }
    }
    goals
}

fn print_tables(results: &[Value]) {
    println!("\n## Per-call latency, ns net of the timer (file sink unless --sink null)");
    println!(
        "{:<20} {:>3} {:>6} {:>5} {:>7} {:>9} {:>7} {:>7} {:>8} {:>9} {:>6}",
        "front end", "thr", "space", "how", "n", "period", "p50", "p99", "p99.9", "max", "timer"
    );
    for r in of_kind(results, "lat") {
        for row in spaced_rows(r) {
            println!(
                "{:<20} {:>3} {:>6} {:>5} {:>7} {:>9} {:>7} {:>7} {:>8} {:>9} {:>6}",
                r["name"].as_str().unwrap_or("?"),
                row["threads"],
                row["spacing"].as_str().unwrap_or("?"),
                row["how"].as_str().unwrap_or("?"),
                count(num(&row, &["n"])),
                format!("{}us", cell(num(&row, &["period_ns"]).map(|p| p / 1000.0))),
                cell(num(&row, &["p50_ns"])),
                cell(num(&row, &["p99_ns"])),
                cell(num(&row, &["p999_ns"])),
                cell(num(&row, &["max_ns"])),
                cell(num(r, &["timer", "p50_ns"])),
            );
        }
    }
    println!(
        "\n{:<20} {:>10} {:>10}  setup",
        "front end", "dropped", "lines"
    );
    for r in of_kind(results, "lat") {
        println!(
            "{:<20} {:>10} {:>10}  {}",
            r["name"].as_str().unwrap_or("?"),
            count(num(r, &["dropped"])),
            count(num(r, &["lines"])),
            r["setup"].as_str().unwrap_or(""),
        );
    }

    println!("\n## First call after idle, ns net (p50 / max over the trials)");
    println!(
        "{:<20} {:>6} {:>12} {:>12} {:>12} {:>12} {:>7}",
        "front end", "trials", "50ms p50", "50ms max", "150ms p50", "150ms max", "ratio"
    );
    for r in of_kind(results, "lat").filter(|r| !r["idle"].is_null()) {
        let a = num(r, &["idle", "after_50ms", "p50_ns"]);
        let b = num(r, &["idle", "after_150ms", "p50_ns"]);
        println!(
            "{:<20} {:>6} {:>12} {:>12} {:>12} {:>12} {:>7}",
            r["name"].as_str().unwrap_or("?"),
            count(num(r, &["idle", "after_50ms", "n"])),
            cell(a),
            cell(num(r, &["idle", "after_50ms", "max_ns"])),
            cell(b),
            cell(num(r, &["idle", "after_150ms", "max_ns"])),
            match (a, b) {
                (Some(a), Some(b)) if a > 0.0 => format!("{:.2}x", b / a),
                _ => "-".into(),
            },
        );
    }

    println!("\n## Span case: span lifecycle (new+enter+exit+close) and per event, ns net, one request per 10 us");
    println!(
        "{:<20} {:>7} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
        "stack", "n", "span p50", "p99", "p99.9", "evt p50", "p99", "p99.9", "dropped"
    );
    for r in of_kind(results, "span") {
        println!(
            "{:<20} {:>7} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8} {:>8}",
            r["name"].as_str().unwrap_or("?"),
            count(num(r, &["requests"])),
            cell(num(r, &["span_lifecycle", "p50_ns"])),
            cell(num(r, &["span_lifecycle", "p99_ns"])),
            cell(num(r, &["span_lifecycle", "p999_ns"])),
            cell(num(r, &["event", "p50_ns"])),
            cell(num(r, &["event", "p99_ns"])),
            cell(num(r, &["event", "p999_ns"])),
            count(num(r, &["dropped"])),
        );
    }

    println!(
        "\n## End-to-end throughput, lossless modes, clock stops after guard drop / final flush"
    );
    println!(
        "{:<20} {:>3} {:>8} {:>8} {:>8} {:>8} {:>10} {:>9} {:>8}  setup",
        "front end",
        "thr",
        "records",
        "on disk",
        "lost",
        "seconds",
        "records/s",
        "B/write",
        "RSS MiB"
    );
    for r in of_kind(results, "tput") {
        println!(
            "{:<20} {:>3} {:>8} {:>8} {:>8} {:>8.3} {:>10} {:>9} {:>8}  {}",
            r["name"].as_str().unwrap_or("?"),
            r["threads"],
            count(num(r, &["records"])),
            count(num(r, &["lines"])),
            count(lost(r)),
            num(r, &["elapsed_s"]).unwrap_or(f64::NAN),
            count(num(r, &["records_per_s"])),
            cell(num(r, &["io", "bytes_per_write"])),
            mib(num(r, &["peak_rss_kib"])),
            r["setup"].as_str().unwrap_or(""),
        );
    }

    println!(
        "\n## Paced, one thread: bytes per write() (/proc/self/io wchar / syscw, whole process)"
    );
    println!(
        "{:<20} {:>8} {:>9} {:>8} {:>9} {:>9} {:>8}",
        "front end", "target/s", "achieved", "writes", "B/write", "writes/s", "RSS MiB"
    );
    for r in of_kind(results, "paced") {
        let writes = num(r, &["io", "writes"]);
        let secs = match (num(r, &["records"]), num(r, &["achieved_per_s"])) {
            (Some(n), Some(rate)) if rate > 0.0 => Some(n / rate),
            _ => None,
        };
        println!(
            "{:<20} {:>8} {:>9} {:>8} {:>9} {:>9} {:>8}",
            r["name"].as_str().unwrap_or("?"),
            count(num(r, &["rate"])),
            count(num(r, &["achieved_per_s"])),
            count(writes),
            cell(num(r, &["io", "bytes_per_write"])),
            match (writes, secs) {
                (Some(w), Some(s)) => cell(Some(w / s)),
                _ => "-".into(),
            },
            mib(num(r, &["peak_rss_kib"])),
        );
    }
}

fn run_text(cmd: &str, args: &[&str]) -> String {
    Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

fn machine() -> Value {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|m| m.trim_start_matches([' ', '\t', ':']).to_owned());
    let mem = std::fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:").map(|m| m.trim().to_owned()));
    json!({
        "cpu": model,
        "nproc": std::thread::available_parallelism().map(|n| n.get()).ok(),
        "kernel": std::fs::read_to_string("/proc/sys/kernel/osrelease").ok().map(|s| s.trim().to_owned()),
        "mem_total": mem,
    })
}

/// Prints the tables and goals, and returns the JSON document.
pub fn report(results: &[Value], quick: bool, cpus: Option<&str>) -> Value {
    print_tables(results);
    let goals = goals(results);
    println!("\n## Goals");
    println!(
        "{:<64} {:<40} {:>10} {:>8}  verdict",
        "goal", "subject", "measured", "target"
    );
    let (mut met, mut missed) = (0, 0);
    for g in &goals {
        let (ok, verdict) = g.verdict();
        match ok {
            Some(true) => met += 1,
            Some(false) => missed += 1,
            None => {}
        }
        println!(
            "{:<64} {:<40} {:>10} {:>8}  {verdict}",
            g.goal,
            g.subject,
            match g.unit {
                "x" => g.measured.map_or("-".into(), |m| format!("{m:.2}x")),
                "lines/s" => count(g.measured),
                _ => cell(g.measured),
            },
            match g.unit {
                "x" => format!("{:.1}x", g.target),
                "lines/s" => count(Some(g.target)),
                _ => cell(Some(g.target)),
            },
        );
    }
    println!("{met} met, {missed} missed");
    for r in results.iter().filter(|r| r.get("error").is_some()) {
        println!("FAILED {}: {}", r["id"], r["error"]);
    }
    if quick {
        println!(
            "\nQUICK mode: sample counts cut ~20x; these numbers are a smoke test, not results."
        );
    }
    let dirty = !run_text(
        "git",
        &["-C", env!("CARGO_MANIFEST_DIR"), "status", "--porcelain"],
    )
    .is_empty();
    let commit = run_text(
        "git",
        &["-C", env!("CARGO_MANIFEST_DIR"), "rev-parse", "HEAD"],
    );
    json!({
        "bench": "latency_load",
        "quick": quick,
        "date": run_text("date", &["-u", "+%Y-%m-%dT%H:%M:%SZ"]),
        "commit": if dirty { format!("{commit}-dirty") } else { commit },
        "rustc": run_text(&std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into()), &["-V"]),
        "machine": machine(),
        "cpus": cpus,
        "sink": std::env::var("NOWAIT_BENCH_SINK").unwrap_or_else(|_| "file".into()),
        "crash_durable_dir": std::env::var("NOWAIT_BENCH_DURABLE").ok(),
        "units": "ns net of the timer's own cost (timer.p50_ns, per child); records/s; bytes; KiB",
        "latency": of_kind(results, "lat").collect::<Vec<_>>(),
        "span": of_kind(results, "span").collect::<Vec<_>>(),
        "throughput": of_kind(results, "tput").collect::<Vec<_>>(),
        "paced": of_kind(results, "paced").collect::<Vec<_>>(),
        "failed": results.iter().filter(|r| r.get("error").is_some()).collect::<Vec<_>>(),
        "goals": goals.iter().map(Goal::json).collect::<Vec<_>>(),
    })
}
