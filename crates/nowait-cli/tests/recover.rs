//! `nowait recover` as a user runs it: the built `nowait` binary, on
//! crash-durable files left by a child process that logged and was killed
//! with SIGKILL, on files it must refuse, and with bad command lines.
//!
//! The child (this test binary re-run, `nowait_testkit::child`) logs
//! `WRITTEN` records and flushes them, so they are in its log; then it
//! logs a record on which its log's format stops the writer thread for
//! good, then the rest, up to `N`, which stay in the ring; then it kills
//! itself. Every "line N" record must then be found exactly once in what
//! the dead process wrote and what the tool wrote.
#![cfg(not(miri))] // Miri cannot spawn processes.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use nowait::{Builder, Sink};

/// Runs the built `nowait` with `args`.
fn nowait<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    Command::new(env!("CARGO_BIN_EXE_nowait"))
        .args(args)
        .output()
        .expect("running nowait")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).unwrap()
}

/// A crash-durable file made and left by a logger of this process, which
/// shut down cleanly: it holds nothing to recover.
fn clean_durable_file(dir: &Path) -> PathBuf {
    let ring = dir.join("clean.nowait");
    let (logger, guard) = Builder::new()
        .sink(Sink::file(dir.join("clean.log")))
        .crash_durable(&ring)
        .build()
        .unwrap();
    drop((logger, guard));
    assert!(ring.exists());
    ring
}

// === the tool's own command line ===

#[test]
fn help_and_version_print_to_stdout_and_exit_0() {
    let top = nowait(["--help"]);
    assert_eq!(top.status.code(), Some(0), "{top:?}");
    let text = stdout(&top);
    assert!(text.contains("Usage: nowait COMMAND"), "{text}");
    assert!(text.contains("  recover  "), "{text}");
    assert!(text.contains("Exit status:"), "{text}");
    assert_eq!(stderr(&top), "");
    assert_eq!(stdout(&nowait(["-h"])), text);
    assert_eq!(stdout(&nowait(["help"])), text);

    let recover = nowait(["recover", "--help"]);
    assert_eq!(recover.status.code(), Some(0), "{recover:?}");
    let text = stdout(&recover);
    assert!(
        text.contains("Usage: nowait recover FILE [--sink PATH]... [--json] [--to LOG] [--keep]"),
        "{text}"
    );
    for line in [
        "  0  FILE was read, whether it held records or not, and every record written",
        "  1  FILE could not be read, or was refused",
        "  2  bad usage",
    ] {
        assert!(text.contains(line), "{line:?} not in {text}");
    }
    assert_eq!(stdout(&nowait(["help", "recover"])), text);
    assert_eq!(stdout(&nowait(["recover", "-h"])), text);

    let version = nowait(["--version"]);
    assert_eq!(version.status.code(), Some(0));
    assert_eq!(
        stdout(&version),
        format!("nowait {}\n", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(stdout(&nowait(["-V"])), stdout(&version));
}

#[test]
fn bad_usage_exits_2_with_one_line_and_touches_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("app.nowait");
    std::fs::write(&file, "not to be touched").unwrap();
    let file = file.to_str().unwrap();
    let absent = dir.path().join("absent.nowait");
    let absent = absent.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&[], "nowait: no command given"),
        (&["frob"], "nowait: no command named frob"),
        (&["--frob"], "nowait: unknown option --frob"),
        (&["help", "frob"], "nowait: no command named frob"),
        (&["recover"], "nowait recover: no FILE given"),
        (
            &["recover", file, "--frob"],
            "nowait recover: unknown option --frob",
        ),
        (
            &["recover", absent, "--frob"],
            "nowait recover: unknown option --frob",
        ),
        (
            &["recover", file, "-x"],
            "nowait recover: unknown option -x",
        ),
        (
            &["recover", file, "--sink"],
            "nowait recover: --sink needs a value",
        ),
        (
            &["recover", file, "--to"],
            "nowait recover: --to needs a value",
        ),
        (
            &["recover", file, "--keep=no"],
            "nowait recover: --keep takes no value",
        ),
        (&["recover", file, absent], "nowait recover: one FILE only"),
    ];
    for (args, start) in cases {
        let out = nowait(*args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert_eq!(stdout(&out), "", "{args:?}");
        let err = stderr(&out);
        assert!(err.starts_with(start), "{args:?}: {err:?}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err:?}");
    }
    assert_eq!(std::fs::read_to_string(file).unwrap(), "not to be touched");
    assert!(!Path::new(absent).exists(), "bad usage created FILE");
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 1, "bad usage left files: {names:?}");
}

// === files the tool refuses ===

#[test]
fn a_missing_file_exits_1_naming_it_and_is_not_created() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("app.nowait");
    let out = nowait([&file]);
    // The subcommand is missing: bad usage, and nothing looked at.
    assert_eq!(out.status.code(), Some(2), "{out:?}");

    let out = nowait(["recover".as_ref(), file.as_os_str()]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(
        stderr(&out),
        format!("nowait recover: {}: no such file\n", file.display())
    );
    assert_eq!(stdout(&out), "");
    assert!(!file.exists(), "the tool created FILE");
}

#[test]
fn a_file_a_live_logger_uses_is_refused_with_1_and_kept() {
    let dir = tempfile::tempdir().unwrap();
    let ring = dir.path().join("live.nowait");
    let (logger, guard) = Builder::new()
        .sink(Sink::file(dir.path().join("live.log")))
        .crash_durable(&ring)
        .build()
        .unwrap();
    let out = nowait(["recover".as_ref(), ring.as_os_str()]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = stderr(&out);
    assert!(err.starts_with("nowait recover: "), "{err}");
    assert!(err.contains(&*ring.to_string_lossy()), "{err}");
    assert!(err.contains("live logger"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(ring.exists(), "the tool removed a file in use");
    drop((logger, guard));

    // Its logger gone, the same file is read (nothing in it) and removed.
    let out = nowait(["recover".as_ref(), ring.as_os_str()]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(!ring.exists());
}

#[cfg(unix)]
#[test]
fn a_symbolic_link_is_refused_with_1_and_neither_it_nor_its_target_touched() {
    let dir = tempfile::tempdir().unwrap();
    let target = clean_durable_file(dir.path());
    let before = std::fs::read(&target).unwrap();
    let link = dir.path().join("link.nowait");
    std::os::unix::fs::symlink(&target, &link).unwrap();

    let out = nowait(["recover".as_ref(), link.as_os_str()]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(
        stderr(&out),
        format!(
            "nowait recover: {}: a symbolic link, which nowait does not follow\n",
            link.display()
        )
    );
    assert!(link.symlink_metadata().unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read(&target).unwrap(), before);

    // A link to nothing is a link too, not a missing file.
    let dangling = dir.path().join("dangling.nowait");
    std::os::unix::fs::symlink(dir.path().join("nothing"), &dangling).unwrap();
    let out = nowait(["recover".as_ref(), dangling.as_os_str()]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(stderr(&out).contains("a symbolic link"), "{out:?}");
    assert!(!dir.path().join("nothing").exists());
}

#[test]
fn a_file_that_is_not_a_nowait_file_is_refused_with_1_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "my notes\n").unwrap();
    let out = nowait(["recover".as_ref(), file.as_os_str()]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = stderr(&out);
    assert!(err.starts_with("nowait recover: "), "{err}");
    assert!(err.contains(&*file.to_string_lossy()), "{err}");
    assert!(err.contains("not a nowait crash-durable file"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "my notes\n");
}

#[cfg(unix)]
#[test]
fn a_file_others_may_write_is_refused_with_1_and_read_once_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let ring = clean_durable_file(dir.path());
    std::fs::set_permissions(&ring, std::fs::Permissions::from_mode(0o666)).unwrap();
    let out = nowait(["recover".as_ref(), ring.as_os_str()]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = stderr(&out);
    assert!(err.contains(&*ring.to_string_lossy()), "{err}");
    assert!(err.contains("refusing to adopt"), "{err}");
    assert!(ring.exists());

    // The mode was the reason: private again, the same file is read.
    std::fs::set_permissions(&ring, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = nowait(["recover".as_ref(), ring.as_os_str()]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(!ring.exists());
}

#[cfg(unix)]
#[test]
fn a_file_another_user_owns_is_refused_with_1() {
    let dir = tempfile::tempdir().unwrap();
    let ring = clean_durable_file(dir.path());
    // uid 65534 is `nobody`; only root may give a file away.
    match std::os::unix::fs::chown(&ring, Some(65534), None) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            eprintln!("SKIPPED a_file_another_user_owns_is_refused_with_1: not root ({e})");
            return;
        }
        Err(e) => panic!("chown: {e}"),
    }
    let out = nowait(["recover".as_ref(), ring.as_os_str()]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = stderr(&out);
    assert!(err.contains(&*ring.to_string_lossy()), "{err}");
    assert!(err.contains("refusing to adopt"), "{err}");
    assert!(ring.exists());
}

#[test]
fn a_nowait_file_that_cannot_be_read_exits_1_and_is_set_aside() {
    let dir = tempfile::tempdir().unwrap();
    let ring = clean_durable_file(dir.path());
    // A real header cut short: nowait's, but its sizes cannot be checked.
    let mut bytes = std::fs::read(&ring).unwrap();
    bytes.truncate(100);
    std::fs::remove_file(&ring).unwrap();
    std::fs::write(&ring, &bytes).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&ring, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let aside = dir.path().join("clean.nowait.corrupt");

    let out = nowait(["recover".as_ref(), ring.as_os_str()]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(
        stderr(&out),
        format!(
            "nowait recover: {} could not be read (the notice in the output says why); \
             it is set aside as {}\n",
            ring.display(),
            aside.display()
        )
    );
    assert!(stdout(&out).contains("could not recover"), "{out:?}");
    assert_eq!(std::fs::read(&aside).unwrap(), bytes);
    assert!(!ring.exists(), "the tool's own empty file was left at FILE");
}

// === files left by a killed process ===

#[cfg(unix)]
mod killed {
    use std::collections::BTreeMap;
    use std::os::unix::process::ExitStatusExt;
    use std::time::Duration;

    use nowait::format::{Format, MakeFormat, SinkInfo, Text};
    use nowait::record::{Notice, Record};
    use nowait::{Builder, FullPolicy, Sink};
    use nowait_testkit::child::{self, Child};

    use super::*;

    /// Records the child logs in all.
    const N: u64 = 2_000;
    /// Records the child has written to its log before its writer stops.
    const WRITTEN: u64 = 500;
    /// The message on which the child's log format stops its writer thread.
    const HOLD: &str = "the writer stops here";

    /// The numbers of the "line N" records in `text`, with how often each
    /// appears, and the other lines.
    fn numbers(text: &str) -> (BTreeMap<u64, u32>, Vec<String>) {
        let mut seen = BTreeMap::new();
        let mut other = Vec::new();
        for line in text.lines() {
            let n = line.split_once("line ").and_then(|(_, rest)| {
                let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
                digits.parse::<u64>().ok()
            });
            match n {
                Some(n) => *seen.entry(n).or_insert(0) += 1,
                None => other.push(line.to_owned()),
            }
        }
        (seen, other)
    }

    /// `seen` holds each number of `range` exactly once, and no other.
    fn assert_each_once(seen: &BTreeMap<u64, u32>, range: std::ops::Range<u64>, what: &str) {
        let twice: Vec<_> = seen.iter().filter(|(_, &c)| c > 1).take(5).collect();
        assert!(
            twice.is_empty(),
            "{what}: written more than once: {twice:?}"
        );
        let missing: Vec<_> = range
            .clone()
            .filter(|n| !seen.contains_key(n))
            .take(5)
            .collect();
        assert!(missing.is_empty(), "{what}: missing {missing:?}");
        let extra: Vec<_> = seen.keys().filter(|n| !range.contains(n)).take(5).collect();
        assert!(extra.is_empty(), "{what}: not expected here: {extra:?}");
    }

    /// The child's log format: `Text`, which stops the writer thread for
    /// good on the record [`HOLD`], as a writer descheduled at the moment
    /// of a kill would stop.
    struct Held(Box<dyn Format>);

    impl Format for Held {
        fn format(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
            let start = out.len();
            self.0.format(record, out);
            if String::from_utf8_lossy(&out[start..]).contains(HOLD) {
                loop {
                    std::thread::sleep(Duration::from_secs(3600));
                }
            }
        }

        fn notice(&mut self, notice: &Notice<'_>, out: &mut Vec<u8>) {
            self.0.notice(notice, out);
        }
    }

    struct MakeHeld;

    impl MakeFormat for MakeHeld {
        fn make_format(&self, sink: &SinkInfo) -> Box<dyn Format> {
            Box::new(Held(Text::new().with_ansi(false).make_format(sink)))
        }
    }

    #[test]
    fn child_entry() {
        if !child::is_child() {
            return;
        }
        let dir = PathBuf::from(std::env::var_os("NOWAIT_CLI_DIR").unwrap());
        let (logger, guard) = Builder::new()
            .capacity(1 << 20)
            .full_policy(FullPolicy::Block)
            .drain_on_crash(false)
            .sink(Sink::file(dir.join("app.log")).format(MakeHeld))
            .crash_durable(dir.join("app.nowait"))
            .build()
            .unwrap();
        nowait::set_global(logger.clone()).unwrap();
        for i in 0..WRITTEN {
            nowait::info!(user = "ann", "line {}", i);
        }
        logger.flush().unwrap();
        nowait::info!("{}", HOLD);
        for i in WRITTEN..N {
            nowait::info!(user = "ann", "line {}", i);
        }
        std::mem::forget(guard);
        // SAFETY: sends SIGKILL to this process; nothing runs after it.
        unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
        std::thread::sleep(Duration::from_secs(60));
    }

    /// What a killed child left in a directory of its own: its log and
    /// its crash-durable file.
    struct Killed {
        dir: tempfile::TempDir,
        log: PathBuf,
        ring: PathBuf,
    }

    /// Runs the child to its SIGKILL; its log then holds exactly the
    /// records written before its writer stopped.
    fn killed_child() -> Killed {
        let dir = tempfile::tempdir().unwrap();
        let status = Child::new("killed::child_entry", "killed")
            .env("NOWAIT_CLI_DIR", dir.path())
            .spawn()
            .wait();
        assert_eq!(status.signal(), Some(libc::SIGKILL), "{status:?}");
        let log = dir.path().join("app.log");
        let ring = dir.path().join("app.nowait");
        let (seen, _) = numbers(&std::fs::read_to_string(&log).unwrap());
        assert_each_once(&seen, 0..WRITTEN, "the log before recovery");
        assert!(ring.exists());
        Killed { dir, log, ring }
    }

    #[test]
    fn the_dead_program_s_log_gets_its_records_once_and_the_file_is_removed() {
        let k = killed_child();
        let out = nowait([
            "recover".as_ref(),
            k.ring.as_os_str(),
            "--sink".as_ref(),
            k.log.as_os_str(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert_eq!(stderr(&out), "");
        assert_eq!(stdout(&out), "", "--sink given: nothing goes to stdout");

        let (seen, other) = numbers(&std::fs::read_to_string(&k.log).unwrap());
        assert_each_once(&seen, 0..N, "the log after recovery");
        assert!(
            other.iter().any(|l| l.contains("written by pid")),
            "no notice naming the dead process: {other:?}"
        );
        assert!(!k.ring.exists(), "the tool left FILE behind");
        let left: Vec<_> = std::fs::read_dir(k.dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["app.log"], "the tool left files behind");
    }

    #[test]
    fn records_go_to_stdout_and_keep_leaves_a_file_with_nothing_to_recover() {
        let k = killed_child();
        let out = nowait(["recover".as_ref(), k.ring.as_os_str(), "--keep".as_ref()]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert_eq!(stderr(&out), "");
        let (seen, other) = numbers(&stdout(&out));
        assert_each_once(&seen, WRITTEN..N, "stdout");
        assert!(
            other.iter().any(|l| l.contains("written by pid")),
            "{other:?}"
        );
        assert!(k.ring.exists(), "--keep: FILE was removed");
        // The dead program's log is left as it was.
        let (on_disk, _) = numbers(&std::fs::read_to_string(&k.log).unwrap());
        assert_each_once(&on_disk, 0..WRITTEN, "the log, not named with --sink");

        // Kept, it holds nothing more: a second run writes no record.
        let again = nowait(["recover".as_ref(), k.ring.as_os_str()]);
        assert_eq!(again.status.code(), Some(0), "{again:?}");
        assert_eq!(numbers(&stdout(&again)).0.len(), 0, "{again:?}");
        assert_eq!(
            stderr(&again),
            format!(
                "nowait recover: {} held no records to recover\n",
                k.ring.display()
            )
        );
        assert!(!k.ring.exists());
    }

    #[test]
    fn json_records_go_to_the_to_file() {
        let k = killed_child();
        let to = k.dir.path().join("recovered.json");
        let out = nowait([
            "recover".as_ref(),
            k.ring.as_os_str(),
            "--json".as_ref(),
            "--to".as_ref(),
            to.as_os_str(),
        ]);
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert_eq!(stdout(&out), "", "--to given: nothing goes to stdout");
        let text = std::fs::read_to_string(&to).unwrap();
        let (seen, _) = numbers(&text);
        assert_each_once(&seen, WRITTEN..N, "the --to file");
        for line in text.lines() {
            assert!(
                line.starts_with('{') && line.ends_with('}'),
                "not JSON: {line}"
            );
        }
        let records: Vec<_> = text.lines().filter(|l| l.contains("line ")).collect();
        assert!(
            records.iter().all(|l| l.contains(r#""user":"ann""#)),
            "{records:?}"
        );
        assert!(!k.ring.exists());
    }

    #[test]
    fn records_that_cannot_be_written_make_the_status_1() {
        // A reader that goes away (`nowait recover FILE | head`): more is
        // recovered than a pipe holds, so writes fail once it is closed.
        let k = killed_child();
        let mut run = Command::new(env!("CARGO_BIN_EXE_nowait"))
            .args(["recover".as_ref(), k.ring.as_os_str()])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(run.stdout.take());
        let out = run.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{out:?}");
        let err = stderr(&out);
        assert!(err.starts_with("nowait recover: "), "{err}");
        let start = format!(
            "nowait recover: records from {} could not all be written, and are lost: ",
            k.ring.display()
        );
        assert!(err.starts_with(&start), "{err}");
        assert!(err.contains(" to standard output ("), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");

        // A full disk.
        #[cfg(target_os = "linux")]
        {
            let k = killed_child();
            let out = nowait([
                "recover".as_ref(),
                k.ring.as_os_str(),
                "--to".as_ref(),
                "/dev/full".as_ref(),
            ]);
            assert_eq!(out.status.code(), Some(1), "{out:?}");
            let err = stderr(&out);
            assert!(err.contains(" to /dev/full ("), "{err}");
            assert_eq!(err.lines().count(), 1, "{err}");
        }
    }
}
