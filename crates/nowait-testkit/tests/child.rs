//! The child-process harness on itself: the status and the captured
//! output come back, a line is waited for, a planned kill comes, a
//! timeout kills the child and fails, and (Linux) a dropped child takes
//! its whole process group with it.
#![cfg(not(miri))] // Miri cannot spawn processes.

use std::process::Stdio;
use std::time::{Duration, Instant};

use nowait_testkit::child::{self, Child};

/// Runs in the child only.
#[test]
fn child_entry() {
    let Some(role) = child::role() else {
        return;
    };
    match role.as_str() {
        "exit" => {
            println!("out line");
            eprintln!("err line");
            std::process::exit(3);
        }
        "ready" => {
            println!("ready");
            std::thread::sleep(Duration::from_secs(60));
        }
        "sleep" => std::thread::sleep(Duration::from_secs(60)),
        "grandchild" => {
            let mut grandchild = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "child_entry", "--test-threads=1"])
                .env(child::ROLE_VAR, "sleep")
                .stdout(Stdio::null())
                .spawn()
                .unwrap();
            // Written whole, then renamed: the parent never reads half.
            let file = std::path::PathBuf::from(std::env::var_os("NOWAIT_PID_FILE").unwrap());
            let part = file.with_extension("part");
            std::fs::write(&part, grandchild.id().to_string()).unwrap();
            std::fs::rename(part, file).unwrap();
            std::thread::sleep(Duration::from_secs(60));
            let _ = grandchild.kill();
            let _ = grandchild.wait();
        }
        other => panic!("unknown role {other}"),
    }
}

#[test]
fn the_status_and_the_captured_output_come_back() {
    let out = Child::new("child_entry", "exit").run();
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(out.stdout.contains("out line\n"), "{out:?}");
    assert!(out.stderr.contains("err line\n"), "{out:?}");
}

#[test]
fn a_line_is_waited_for_and_a_planned_kill_ends_the_child() {
    let started = Instant::now();
    let mut c = Child::new("child_entry", "ready")
        .stdout(Stdio::piped())
        .kill_after(Duration::from_millis(300))
        .timeout(Duration::from_secs(30))
        .spawn();
    let _out = c.wait_for_line("ready");
    let status = c.wait();
    assert!(!status.success(), "{status:?}");
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");
    }
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(300), "{took:?}");
    assert!(took < Duration::from_secs(20), "{took:?}");
}

#[test]
fn a_timeout_kills_the_child_and_fails() {
    let mut c = Child::new("child_entry", "sleep")
        .timeout(Duration::from_millis(200))
        .spawn();
    let started = Instant::now();
    let waited = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| c.wait()));
    assert!(waited.is_err(), "the wait did not fail: {waited:?}");
    assert!(started.elapsed() < Duration::from_secs(20));
    // Killed: it ends at once, long before its 60 s sleep.
    let status = c.wait();
    assert!(!status.success(), "{status:?}");
}

#[test]
fn the_last_number_after_a_prefix_is_found() {
    let out = "test child_entry ... \nacked 0\nother 9\nacked 256\n";
    assert_eq!(child::last_number(out, "acked "), Some(256));
    assert_eq!(child::last_number(out, "missing "), None);
}

/// Whether process `pid` exists and is not a zombie.
#[cfg(target_os = "linux")]
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z'))
    })
}

#[cfg(target_os = "linux")]
#[test]
fn a_dropped_child_takes_its_process_group_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("pid");
    let c = Child::new("child_entry", "grandchild")
        .env("NOWAIT_PID_FILE", &file)
        .spawn();
    let child_pid = c.id();
    let deadline = Instant::now() + Duration::from_secs(30);
    let grandchild: u32 = loop {
        if let Some(pid) = std::fs::read_to_string(&file)
            .ok()
            .and_then(|s| s.parse().ok())
        {
            break pid;
        }
        assert!(Instant::now() < deadline, "no grandchild started");
        std::thread::sleep(Duration::from_millis(5));
    };
    assert!(alive(grandchild));
    drop(c);
    assert!(!alive(child_pid), "the child outlived its drop");
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(grandchild) {
        assert!(
            Instant::now() < deadline,
            "the grandchild {grandchild} outlived the group kill"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}
