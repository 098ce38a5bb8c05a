//! The seeds binary end to end, at tiny sizes: every kind of run writes
//! and verifies its output, and a wrong output stops it with no number.

use std::path::Path;
use std::process::{Command, Output};

const SEEDS: &str = env!("CARGO_BIN_EXE_seeds");

const KINDS: [&str; 11] = [
    "lines-nowait",
    "lines-bufwriter",
    "lines-linewriter",
    "lines-file",
    "ints-nowait",
    "ints-writeln",
    "ints-itoa",
    "ints-floor",
    "bytes-bufwriter",
    "bytes-file",
    "bytes-nowait",
];

fn seeds(args: &[&str], dir: &Path, corrupt: bool) -> Output {
    let mut cmd = Command::new(SEEDS);
    cmd.args(args).arg("--dir").arg(dir);
    if corrupt {
        cmd.env("SEEDS_CORRUPT", "1");
    }
    cmd.output().expect("running seeds")
}

fn field<'a>(result: &'a str, name: &str) -> &'a str {
    result
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix(name)?.strip_prefix('='))
        .unwrap_or_else(|| panic!("no {name} in {result:?}"))
}

#[test]
fn every_kind_writes_and_verifies_its_output() {
    let dir = tempfile::tempdir().unwrap();
    for kind in KINDS {
        let out = seeds(
            &["run", kind, "--n", "1000", "--batch", "1024"],
            dir.path(),
            false,
        );
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{kind}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let result = stdout.strip_prefix("RESULT ").expect("a RESULT line");
        let bytes: u64 = field(result, "bytes").parse().unwrap();
        let expected = match kind {
            k if k.starts_with("lines-") => 10_000,
            k if k.starts_with("ints-") => 2_890 + 1_000, // digits of 0..1000, newlines
            "bytes-nowait" => 2_000,
            _ => 1_000,
        };
        assert_eq!(bytes, expected, "{kind}");
        let writes: u64 = field(result, "writes").parse().unwrap();
        match kind {
            // One write per line, as the kernel counted them.
            "lines-linewriter" | "lines-file" | "bytes-file" => assert_eq!(writes, 1_000, "{kind}"),
            "ints-floor" => assert_eq!(writes, 1, "{kind}"),
            _ => assert!((1..1_000).contains(&writes), "{kind}: {writes} writes"),
        }
        if kind.starts_with("ints-") {
            assert_eq!(field(result, "last_line"), "999", "{kind}");
        }
    }
    // The runs leave no files behind.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn a_wrong_output_fails_the_run_and_prints_no_result() {
    let dir = tempfile::tempdir().unwrap();
    for kind in ["lines-nowait", "ints-nowait", "ints-itoa", "bytes-file"] {
        let out = seeds(&["run", kind, "--n", "100"], dir.path(), true);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{kind} passed with a stray line");
        assert!(!String::from_utf8_lossy(&out.stdout).contains("RESULT"));
        assert!(stderr.contains(kind), "{kind}: {stderr}");
    }
}

#[test]
fn a_failed_run_stops_the_whole_experiment_before_any_file_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("seeds.json");
    let out = seeds(
        &[
            "--quick",
            "--reps",
            "1",
            "--only",
            "3",
            "--json",
            json.to_str().unwrap(),
        ],
        &dir.path().join("runs"),
        true,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("no results written"), "{stderr}");
    assert!(!json.exists());
    assert!(out.stdout.is_empty());
}

#[test]
fn a_smoke_run_writes_json_with_every_sample() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("seeds.json");
    let out = seeds(
        &[
            "--quick",
            "--reps",
            "2",
            "--only",
            "3",
            "--json",
            json.to_str().unwrap(),
        ],
        &dir.path().join("runs"),
        false,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&json).unwrap();
    assert!(text.contains("\"smoke\": true"));
    // Three cases, two samples each.
    assert_eq!(text.matches("\"secs\":").count(), 6, "{text}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("One-byte writes"));
}

#[test]
fn bad_arguments_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        &["run", "lines-file", "--n", "10", "--batch", "0"][..],
        &["run", "no-such-kind", "--n", "10"],
        &["run", "lines-file", "--n", "ten"],
        &["--only", "4"],
        &["--bogus"],
    ] {
        let out = seeds(args, dir.path(), false);
        assert!(!out.status.success(), "{args:?} accepted");
        assert!(String::from_utf8_lossy(&out.stderr).contains("seeds: error"));
    }
}
