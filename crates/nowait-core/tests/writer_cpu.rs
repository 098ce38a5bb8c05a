//! `Builder::writer_cpu`: the writer thread runs on the CPU asked for (on
//! Linux, read back from `/proc`), in a forked child too; a CPU the system
//! refuses, or a system that cannot pin, fails the build with a message
//! that names the setting, and nothing is left running.

use nowait_core::{Builder, Sink};

/// Every test here counts writer threads by name: one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A logger whose writer is pinned to `cpu`, writing to the file `path`.
#[cfg(any(target_os = "linux", windows))]
fn pinned(
    cpu: usize,
    path: impl AsRef<std::path::Path>,
) -> (nowait_core::Logger, nowait_core::Guard) {
    Builder::new()
        .catch_panics(false)
        .writer_cpu(cpu)
        .sink(Sink::file(path.as_ref()))
        .build()
        .unwrap()
}

/// The CPUs this thread may run on (Linux: `/proc/thread-self/status`).
#[cfg(target_os = "linux")]
fn allowed_cpus(status: &str) -> Vec<usize> {
    cpu_list(
        status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .expect("no Cpus_allowed_list in the status file"),
    )
}

/// The CPUs of a kernel CPU list such as `0-3,8,10-11`.
#[cfg(target_os = "linux")]
fn cpu_list(list: &str) -> Vec<usize> {
    let mut cpus = Vec::new();
    for part in list.trim().split(',') {
        match part.split_once('-') {
            Some((a, b)) => cpus.extend(a.parse::<usize>().unwrap()..=b.parse().unwrap()),
            None => cpus.push(part.parse().unwrap()),
        }
    }
    cpus
}

/// The thread ids of this process's threads named `nowait-writer`.
#[cfg(target_os = "linux")]
fn writer_threads() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|e| {
            let e = e.ok()?;
            let comm = std::fs::read_to_string(e.path().join("comm")).ok()?;
            (comm.trim() == "nowait-writer").then(|| e.file_name().to_string_lossy().into_owned())
        })
        .collect()
}

/// The last CPU this test thread may use: the writer is pinned there.
#[cfg(target_os = "linux")]
fn a_cpu_we_may_use() -> usize {
    let status = std::fs::read_to_string("/proc/thread-self/status").unwrap();
    *allowed_cpus(&status).last().unwrap()
}

#[cfg(target_os = "linux")]
#[test]
fn the_writer_runs_only_on_the_cpu_asked_for_and_writes() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let cpu = a_cpu_we_may_use();
    let before = writer_threads();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.log");
    let (logger, guard) = pinned(cpu, &path);
    let ours: Vec<String> = writer_threads()
        .into_iter()
        .filter(|t| !before.contains(t))
        .collect();
    assert_eq!(
        ours.len(),
        1,
        "writer threads: before {before:?}, ours {ours:?}"
    );
    let status = std::fs::read_to_string(format!("/proc/self/task/{}/status", ours[0])).unwrap();
    assert_eq!(allowed_cpus(&status), [cpu], "the writer's affinity");
    logger
        .log(nowait_core::Level::Info, "on its own CPU")
        .unwrap();
    drop(guard);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("on its own CPU"), "{text}");
    assert_eq!(logger.stats().records_written, 1);
}

/// The CPU after the last one present, if the system could name it
/// (Linux: `/sys/devices/system/cpu/present`).
#[cfg(target_os = "linux")]
fn absent_cpus() -> Vec<usize> {
    let present = std::fs::read_to_string("/sys/devices/system/cpu/present").unwrap();
    let last = cpu_list(&present).into_iter().max().unwrap();
    if last + 1 < 1024 {
        vec![last + 1]
    } else {
        Vec::new()
    }
}

#[cfg(not(target_os = "linux"))]
fn absent_cpus() -> Vec<usize> {
    Vec::new()
}

/// A CPU that cannot be named, and (Linux) one that can but does not
/// exist here: the build fails, saying why, and no writer is left.
#[test]
fn a_cpu_the_system_refuses_fails_the_build_and_leaves_no_writer() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let refused = [vec![100_000], absent_cpus()].concat();
    for cpu in refused {
        #[cfg(target_os = "linux")]
        let before = writer_threads();
        let err = Builder::new()
            .catch_panics(false)
            .writer_cpu(cpu)
            .sink(Sink::writer(std::io::sink()))
            .build()
            .map(drop)
            .expect_err("an impossible CPU was accepted");
        let msg = err.to_string();
        assert!(
            msg.contains("writer_cpu") && msg.contains(&cpu.to_string()),
            "CPU {cpu}: {msg}"
        );
        #[cfg(target_os = "linux")]
        {
            // The thread that could not pin itself has ended, or is ending.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
            while writer_threads().len() > before.len() && std::time::Instant::now() < deadline {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            assert_eq!(
                writer_threads().len(),
                before.len(),
                "CPU {cpu}: a writer is left"
            );
        }
    }
}

/// Where pinning exists, CPU 0 of a process allowed on it (Windows: the
/// usual case; also what Wine runs here) builds and writes.
#[cfg(windows)]
#[test]
fn cpu_0_builds_and_writes() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.log");
    let (logger, guard) = pinned(0, &path);
    logger.log(nowait_core::Level::Info, "pinned").unwrap();
    drop(guard);
    assert!(std::fs::read_to_string(&path).unwrap().contains("pinned"));
}

/// Systems without a hard affinity refuse the setting at build.
#[cfg(not(any(
    target_os = "linux",
    target_os = "android",
    target_os = "freebsd",
    target_os = "dragonfly",
    windows
)))]
#[test]
fn a_system_that_cannot_pin_refuses_the_setting() {
    let err = Builder::new()
        .writer_cpu(0)
        .sink(Sink::writer(std::io::sink()))
        .build()
        .map(drop)
        .expect_err("accepted where no thread can be pinned");
    assert!(err.to_string().contains("cannot pin"), "{err}");
}

/// In a forked child the logger starts a writer of its own: pinned to the
/// same CPU. Runs in a child process of its own (one logger, and a fork
/// in a process without other test threads).
#[cfg(target_os = "linux")]
#[test]
fn a_forked_childs_writer_is_pinned_too() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.log");
    let cpu = a_cpu_we_may_use();
    let out = nowait_testkit::child::Child::new("fork_child_entry", "fork")
        .env("NOWAIT_PIN_FORK", &path)
        .env("NOWAIT_PIN_CPU", cpu.to_string())
        .run();
    let err = out.stderr;
    assert!(out.status.success(), "{:?}\n{err}", out.status);
    let line = err
        .lines()
        .find_map(|l| l.strip_prefix("CHILD_WRITER_CPUS "))
        .unwrap_or_else(|| panic!("no report from the child\n{err}"));
    assert_eq!(
        line.trim(),
        cpu.to_string(),
        "the child's writer affinity\n{err}"
    );
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("from the parent"), "{text}");
    assert!(text.contains("from the child"), "{text}");
}

/// The body of `a_forked_childs_writer_is_pinned_too`, run only in the
/// child process it starts.
#[cfg(target_os = "linux")]
#[test]
fn fork_child_entry() {
    if !nowait_testkit::child::is_child() {
        return;
    }
    let path = std::env::var_os("NOWAIT_PIN_FORK").unwrap();
    let cpu: usize = std::env::var("NOWAIT_PIN_CPU").unwrap().parse().unwrap();
    let (logger, guard) = pinned(cpu, &path);
    logger
        .log(nowait_core::Level::Info, "from the parent")
        .unwrap();
    logger.flush().unwrap();
    // SAFETY: the child only logs through nowait (whose atfork handlers
    // prepare it), reads /proc and exits without unwinding.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        // The first record starts the child's writer.
        logger
            .log(nowait_core::Level::Info, "from the child")
            .unwrap();
        let code = match logger.flush() {
            Ok(()) => {
                let writers = writer_threads();
                match writers.as_slice() {
                    [tid] => {
                        let status =
                            std::fs::read_to_string(format!("/proc/self/task/{tid}/status"))
                                .unwrap();
                        let cpus: Vec<String> = allowed_cpus(&status)
                            .iter()
                            .map(|c| c.to_string())
                            .collect();
                        eprintln!("CHILD_WRITER_CPUS {}", cpus.join(","));
                        0
                    }
                    other => {
                        eprintln!("child: writer threads {other:?}");
                        2
                    }
                }
            }
            Err(e) => {
                eprintln!("child: flush failed: {e}");
                3
            }
        };
        drop(guard);
        // SAFETY: ends the child without running the parent's test harness.
        unsafe { libc::_exit(code) }
    }
    let mut status = 0;
    // SAFETY: waits for our own child.
    let r = unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(r, pid);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "the child failed: status {status}"
    );
    drop(guard);
}
