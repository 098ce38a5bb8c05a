//! The `nowait-recover` example as a user runs it: a process logs into a
//! crash-durable file and is killed with SIGKILL; the tool, run on the
//! file, writes what it had accepted (to its log, named with `--sink`) and completes its log
//! file, each record once, then removes the file. A file a live logger
//! uses, and a missing one, are refused with exit status 1.
#![cfg(all(target_os = "linux", not(miri)))] // SIGKILL; Miri cannot spawn.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use nowait::{Builder, FullPolicy, Sink};
use nowait_testkit::child::{self, Child};

const N: u64 = 20_000;

fn tool() -> PathBuf {
    // `cargo test` builds the package's examples next to `deps/`.
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    let tool = dir.join("examples").join("nowait-recover");
    assert!(tool.exists(), "{} was not built", tool.display());
    tool
}

#[test]
fn child_entry() {
    if !child::is_child() {
        return;
    }
    let dir = std::env::var_os("NOWAIT_RECOVER_DIR").unwrap();
    let dir = PathBuf::from(dir);
    let (logger, guard) = Builder::new()
        .full_policy(FullPolicy::Block)
        .drain_on_crash(false)
        .sink(Sink::file(dir.join("app.log")))
        .crash_durable(dir.join("ring"))
        .build()
        .unwrap();
    nowait::set_global(logger).unwrap();
    for i in 0..N {
        nowait::info!(user = "ann", "line {}", i);
    }
    std::mem::forget(guard);
    // SAFETY: sends SIGKILL to this process; nothing runs after it.
    unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
}

fn lines(path: &Path, seen: &mut BTreeMap<u64, u32>) -> Vec<String> {
    let mut other = Vec::new();
    for line in std::fs::read_to_string(path).unwrap_or_default().lines() {
        match line.split_once("line ") {
            Some((_, n)) => {
                let n: String = n.chars().take_while(char::is_ascii_digit).collect();
                *seen.entry(n.parse().unwrap()).or_insert(0) += 1;
            }
            None => other.push(line.to_owned()),
        }
    }
    other
}

#[test]
fn the_tool_recovers_a_killed_process_s_records_once() {
    let dir = tempfile::tempdir().unwrap();
    let status = Child::new("child_entry", "killed")
        .env("NOWAIT_RECOVER_DIR", dir.path())
        .spawn()
        .wait();
    assert!(!status.success());
    let ring = dir.path().join("ring");
    let out = dir.path().join("recovered.log");
    let mut seen = BTreeMap::new();
    lines(&dir.path().join("app.log"), &mut seen);
    let on_disk = seen.len();

    // The dead program's file sink is named: its pending bytes and the
    // ring's records go there, as at the program's own next start.
    let run = Command::new(tool())
        .arg(&ring)
        .arg("--sink")
        .arg(dir.path().join("app.log"))
        .output()
        .unwrap();
    assert!(run.status.success(), "{run:?}");
    assert!(!out.exists());
    let mut after = BTreeMap::new();
    let notices = lines(&dir.path().join("app.log"), &mut after);
    eprintln!(
        "{on_disk} of {N} on disk after SIGKILL; {} after nowait-recover; {notices:?}",
        after.len()
    );
    assert_eq!(after.len() as u64, N, "{notices:?}");
    assert!(after.values().all(|&c| c == 1), "a record written twice");
    if (on_disk as u64) < N {
        assert!(
            notices.iter().any(|l| l.contains("written by pid")),
            "{notices:?}"
        );
    }
    assert!(!ring.exists(), "the tool left the file behind");

    // Missing, and in use by a live logger: refused.
    let missing = Command::new(tool()).arg(&ring).output().unwrap();
    assert_eq!(missing.status.code(), Some(1));
    let (_logger, guard) = Builder::new()
        .sink(Sink::file(dir.path().join("live.log")))
        .crash_durable(&ring)
        .build()
        .unwrap();
    let busy = Command::new(tool()).arg(&ring).output().unwrap();
    assert_eq!(busy.status.code(), Some(1));
    let err = String::from_utf8_lossy(&busy.stderr);
    assert!(err.contains("live logger"), "{err}");
    drop(guard);
}
