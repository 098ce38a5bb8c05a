//! `nowait cat` as a user runs it: the built `nowait` binary renders
//! binary logs written by this test process's loggers (another process
//! than the one reading, so every call site and thread comes from the
//! file's catalog), compared byte for byte with what text and JSON sinks
//! of the same logger wrote.
#![cfg(not(miri))] // Miri cannot spawn processes.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use nowait::binary::Binary;
use nowait::format::{Json, Text};
use nowait::sink::{Compression, Rolling};
use nowait::{Builder, Level, Sink};

fn nowait<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<std::ffi::OsStr>,
{
    Command::new(env!("CARGO_BIN_EXE_nowait"))
        .arg("cat")
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

/// Logs the workload through the macros and the text API: every field
/// type, a deferred and a literal message, unicode and escapes, a plain
/// text record, a rate-limited call site (a suppressed-calls notice), a
/// record from a named thread.
fn workload(logger: &nowait::Logger) {
    for i in 0..50u64 {
        nowait::info!(target: "app::http", status = 200u16, path = "/a\"b", ratio = 0.25, ok = true, c = 'z', "GET {} {}", i, "/index");
        nowait::warn!(
            neg = -7i64,
            big = u64::MAX,
            "ünïcödé \u{202e} \x1b[31m red\nline"
        );
        nowait::debug!(target: "cache", hit = i % 2 == 0, dbg = ?vec![1, 2], disp = %"shown", "lookup");
        nowait::error!(limit = 1 per 1h, attempt = i, "retrying");
        logger.log(Level::Info, "plain \x07 text").unwrap();
    }
    std::thread::Builder::new()
        .name("worker-7".into())
        .spawn(|| nowait::info!(target: "app::worker", "from a thread"))
        .unwrap()
        .join()
        .unwrap();
}

fn text() -> Text {
    Text::new()
        .with_ansi(false)
        .with_thread_names(true)
        .with_file(true)
        .with_line_number(true)
}

fn json() -> Json {
    Json::new()
        .with_thread_names(true)
        .with_file(true)
        .with_line_number(true)
}

/// One logger with a text, a JSON and a binary sink, fed the workload.
fn three_sinks(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let (t, j, b) = (
        dir.join("app.log"),
        dir.join("app.json"),
        dir.join("app.nwb"),
    );
    let (logger, guard) = Builder::new()
        .sink(Sink::file(&t).format(text()))
        .sink(Sink::file(&j).format(json()))
        .sink(Sink::binary(&b).format(Binary::new().with_thread_names(true)))
        .build()
        .unwrap();
    nowait::set_global(logger.clone()).unwrap();
    workload(&logger);
    drop(guard);
    (t, j, b)
}

/// Every test of this file logs through the one global logger, set once.
fn files() -> &'static (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
    static FILES: std::sync::OnceLock<(tempfile::TempDir, PathBuf, PathBuf, PathBuf)> =
        std::sync::OnceLock::new();
    FILES.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let (t, j, b) = three_sinks(dir.path());
        (dir, t, j, b)
    })
}

const TEXT_ARGS: [&str; 5] = ["--ansi", "off", "--thread-names", "--file", "--line-number"];

#[test]
fn cat_renders_what_the_text_and_json_sinks_wrote() {
    let (_dir, t, j, b) = files();
    let want = std::fs::read_to_string(t).unwrap();
    assert!(want.contains("suppressed"), "{want}");
    assert!(want.contains("worker-7"), "{want}");
    let out = nowait(
        [b.as_os_str()]
            .into_iter()
            .chain(TEXT_ARGS.map(std::ffi::OsStr::new)),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    same_lines(&stdout(&out), &want);

    let want = std::fs::read_to_string(j).unwrap();
    let out = nowait([
        b.as_os_str(),
        "--json".as_ref(),
        "--thread-names".as_ref(),
        "--file".as_ref(),
        "--line-number".as_ref(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    same_lines(&stdout(&out), &want);
}

/// `got == want`, line by line, except the time of nowait's notices and
/// of plain text records in JSON: the writer stamps those for each sink
/// as it hands them over, so the binary sink's copy is some microseconds
/// off the text sink's (as two text sinks' copies are).
fn same_lines(got: &str, want: &str) {
    // Notices, and plain text records in JSON (stamped when handled too).
    let is_notice = |l: &str| {
        l.contains(" nowait: ")
            || l.contains("\"target\":\"nowait\"")
            || l.ends_with("\"target\":\"\"}")
    };
    let untimed = |l: &str| {
        if let Some(rest) = l.strip_prefix("{\"timestamp\":\"") {
            rest.split_once('"').map_or(l, |(_, r)| r).to_string()
        } else {
            l.split_once(' ').map_or(l, |(_, r)| r).to_string()
        }
    };
    let mut notices = 0;
    for (i, (g, w)) in got.lines().zip(want.lines()).enumerate() {
        if is_notice(w) {
            notices += 1;
            assert_eq!(untimed(g), untimed(w), "line {}", i + 1);
        } else {
            assert_eq!(g, w, "line {}", i + 1);
        }
    }
    assert!(notices > 0);
    assert_eq!(got.lines().count(), want.lines().count());
}

#[test]
fn filters_pick_entries_by_level_target_field_and_time() {
    let (_dir, t, _, b) = files();
    let text = std::fs::read_to_string(t).unwrap();
    let lines = |f: &dyn Fn(&str) -> bool| -> String {
        text.lines()
            .filter(|l| f(l))
            .map(|l| format!("{l}\n"))
            .collect()
    };
    let cat = |extra: &[&str]| {
        let mut args: Vec<&std::ffi::OsStr> = vec![b.as_os_str()];
        args.extend(TEXT_ARGS.iter().map(std::ffi::OsStr::new));
        args.extend(extra.iter().map(std::ffi::OsStr::new));
        let out = nowait(args);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        stdout(&out)
    };
    let warn_up = cat(&["--level", "warn"]);
    assert_eq!(
        warn_up,
        lines(&|l| l.contains(" WARN ") || l.contains(" ERROR "))
    );
    assert_eq!(warn_up.lines().count(), 51, "{warn_up}");
    assert_eq!(
        cat(&["--target", "cache"]),
        lines(&|l| l.contains(" cache: "))
    );
    assert_eq!(
        cat(&["--field", "status=200", "--field", "ok=true"]),
        lines(&|l| l.contains(" app::http: "))
    );
    assert_eq!(cat(&["--field", "status=404"]), "");
    assert_eq!(cat(&["--since", "4000000000"]), "");
    same_lines(&cat(&["--until", "4000000000"]), &text);
    same_lines(&cat(&["--since", "2000-01-01T00:00:00Z"]), &text);
}

#[test]
fn a_file_that_is_not_a_binary_log_is_refused_with_a_clear_error() {
    let (dir, t, _, b) = files();
    let out = nowait([t.as_os_str()]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        format!(
            "nowait cat: {}: not a nowait binary log file\n",
            t.display()
        )
    );
    // The other files are still read.
    let out = nowait([t.as_os_str(), b.as_os_str()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!stdout(&out).is_empty());
    let missing = dir.path().join("missing.nwb");
    let out = nowait([missing.as_os_str()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("missing.nwb: "), "{}", stderr(&out));
}

#[test]
fn a_cut_or_damaged_file_says_where_it_stops_being_readable() {
    let (dir, t, _, b) = files();
    let bytes = std::fs::read(b).unwrap();
    let whole = std::fs::read_to_string(t).unwrap();
    let cut = dir.path().join("cut.nwb");
    std::fs::write(&cut, &bytes[..bytes.len() - 3]).unwrap();
    let mut args = vec![cut.as_os_str()];
    args.extend(TEXT_ARGS.iter().map(std::ffi::OsStr::new));
    let out = nowait(&args);
    assert_eq!(out.status.code(), Some(1));
    // Everything but the last entry.
    let mut lines: Vec<&str> = whole.lines().collect();
    lines.pop();
    assert_eq!(stdout(&out).lines().collect::<Vec<_>>(), lines);
    let err = stderr(&out);
    assert!(err.contains("cut.nwb: cut short at byte "), "{err}");
    assert!(
        err.contains(&format!("{} entries read before it", lines.len())),
        "{err}"
    );

    let damaged = dir.path().join("damaged.nwb");
    let mut bad = bytes.clone();
    let at = bytes.len() / 2;
    // Damage a frame tag: find the first frame start at or after `at` by
    // reading the file with the library.
    let mut reader = nowait::binary::Reader::new(&bytes[..]);
    let start = loop {
        let e = reader.next().unwrap().unwrap();
        if e.offset() as usize >= at {
            break e.offset() as usize;
        }
    };
    bad[start] = 0x77;
    std::fs::write(&damaged, &bad).unwrap();
    let out = nowait([damaged.as_os_str()]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("damaged at byte {start}: unknown frame tag 0x77")),
        "{err}"
    );
}

/// A rolling binary set, rotated by size, the rotated files compressed:
/// read in any order given, it renders as one file would, across the
/// rotations and archives.
#[test]
fn a_rolling_set_reads_in_order_across_rotations_and_archives() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    let want = dir.path().join("all.log");
    let mut compressions = vec![Compression::Gzip];
    if cfg!(feature = "zstd") {
        compressions.push(Compression::Zstd);
    }
    for how in compressions {
        let _ = std::fs::remove_dir_all(&logs);
        let _ = std::fs::remove_file(&want);
        let (logger, guard) = Builder::new()
            .sink(
                Sink::rolling(
                    Rolling::new(&logs)
                        .filename_prefix("app")
                        .filename_suffix("nwb")
                        .max_size(4096)
                        .compress_with(how),
                )
                .format(Binary::new()),
            )
            .sink(Sink::file(&want).format(Text::new().with_ansi(false)))
            .build()
            .unwrap();
        for i in 0..400u32 {
            logger
                .log(Level::Info, &format!("record {i} of a rolling set"))
                .unwrap();
            if i % 50 == 0 {
                logger.flush().unwrap();
            }
        }
        logger.flush().unwrap();
        // Compression runs on the sink's housekeeping thread: wait until
        // every rotated file is an archive (one plain file left, the
        // current one) and no compression is under way, so that no file
        // listed here is compressed away before the tool reads it.
        let list = || -> Vec<PathBuf> {
            std::fs::read_dir(&logs)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect()
        };
        let ext =
            |p: &PathBuf, e: &[&str]| p.extension().is_some_and(|x| e.iter().any(|e| x == *e));
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let names = list();
            let busy = names.iter().any(|p| ext(p, &["tmp"]));
            let done = names.iter().any(|p| ext(p, &["gz", "zst"]));
            let plain = names.iter().filter(|p| ext(p, &["nwb"])).count();
            if (done && !busy && plain == 1) || Instant::now() > deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        drop(guard);
        let mut names = list();
        let archives = names
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "gz" || e == "zst"))
            .count();
        assert!(names.len() >= 3, "{names:?}");
        assert!(archives >= 1, "{names:?}");
        // Reversed: the tool orders them by their first entry.
        names.sort();
        names.reverse();
        let mut args = vec!["--ansi".into(), "off".into()];
        args.extend(names.iter().map(|p| p.clone().into_os_string()));
        let out = nowait(&args);
        assert_eq!(out.status.code(), Some(0), "{how:?}: {}", stderr(&out));
        assert_eq!(
            stdout(&out),
            std::fs::read_to_string(&want).unwrap(),
            "{how:?}"
        );
    }
}

/// `--follow` prints records as they are written, and goes on in the new
/// file when the followed path is rotated (renamed away, a new file
/// created in its place, as `Logger::reopen` after an outside rotation).
#[test]
fn follow_goes_on_across_a_rotation() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("live.nwb");
    let (logger, guard) = Builder::new().sink(Sink::binary(&path)).build().unwrap();
    logger.log(Level::Info, "before").unwrap();
    logger.flush().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_nowait"))
        .args(["cat".as_ref(), path.as_os_str(), "--follow".as_ref()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next_line = || lines.next().unwrap().unwrap();
    assert_eq!(next_line(), "before");
    logger.log(Level::Info, "grown").unwrap();
    logger.flush().unwrap();
    assert_eq!(next_line(), "grown");
    // Rotate: rename the file away, write its last record, reopen.
    std::fs::rename(&path, dir.path().join("live.nwb.1")).unwrap();
    logger.log(Level::Info, "last of the old file").unwrap();
    logger.flush().unwrap();
    logger.reopen().unwrap();
    logger.log(Level::Info, "first of the new file").unwrap();
    logger.flush().unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    assert_eq!(next_line(), "last of the old file");
    assert_eq!(next_line(), "first of the new file");
    assert!(Instant::now() < deadline);
    child.kill().unwrap();
    child.wait().unwrap();
    drop(guard);
}

/// `--follow` on a rolling sink's link to its current file
/// (`Rolling::symlink`) goes on in each new file as the sink rotates by
/// size, and prints every record once.
#[cfg(unix)]
#[test]
fn follow_goes_on_across_a_rolling_sinks_rotations() {
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    let (logger, guard) = Builder::new()
        .sink(
            Sink::rolling(
                Rolling::new(&logs)
                    .filename_prefix("app")
                    .filename_suffix("nwb")
                    .max_size(2048)
                    .symlink("current.nwb"),
            )
            .format(Binary::new()),
        )
        .build()
        .unwrap();
    logger.log(Level::Info, "record 0").unwrap();
    logger.flush().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_nowait"))
        .arg("cat")
        .arg(logs.join("current.nwb"))
        .arg("--follow")
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    assert_eq!(lines.next().unwrap().unwrap(), "record 0");
    for i in 1..200 {
        logger.log(Level::Info, &format!("record {i}")).unwrap();
        if i % 20 == 0 {
            logger.flush().unwrap();
            // Slower than the tool's polling: a rotation between two
            // looks is the case that matters, several in one is not.
            std::thread::sleep(Duration::from_millis(300));
        }
    }
    logger.flush().unwrap();
    for i in 1..200 {
        assert_eq!(lines.next().unwrap().unwrap(), format!("record {i}"));
    }
    // The link and at least three files: two rotations followed.
    let files = std::fs::read_dir(&logs).unwrap().count();
    assert!(
        files >= 4,
        "too few rotations to test anything: {files} files"
    );
    child.kill().unwrap();
    child.wait().unwrap();
    drop(guard);
}
