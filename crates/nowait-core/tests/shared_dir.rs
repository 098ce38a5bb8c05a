//! A rolling sink's directory, and the crash-durable file's, shared with
//! other users (group-writable, or sticky like `/tmp`): what another user
//! puts there under the sink's names is never taken for the sink's own.
//!
//! "Another user" is uid 65534 (`nobody`): the tests make files and give
//! them away with `chown`, which needs root; without it each says SKIPPED
//! and passes. Tests that need no other user run everywhere on Unix.
#![cfg(all(unix, not(miri)))]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use nowait_core::format::Plain;
use nowait_core::sink::Rolling;
use nowait_core::{Builder, Level, Logger, Sink};

/// Another user, for files planted in the directory.
const NOBODY: u32 = 65534;

/// 2026-01-05T12:00:00Z, the sinks' clock.
fn jan_5() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(1_767_614_400)
}

/// A daily sink `app.YYYY-MM-DD.log` in `dir`, on 5 January 2026.
fn daily(dir: &Path) -> Rolling {
    Rolling::daily(dir, "app")
        .filename_suffix("log")
        .clock(jan_5)
}

/// Writes `bytes` to `dir/name`.
fn put(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, bytes).unwrap();
    path
}

/// Gives `path` to another user; `false` (with a note naming `test`) where
/// this process may not.
fn give_away(path: &Path, test: &str) -> bool {
    match std::os::unix::fs::chown(path, Some(NOBODY), Some(NOBODY)) {
        Ok(()) => true,
        Err(e) => {
            eprintln!("SKIPPED {test}: cannot give a file to another user ({e}; needs root)");
            false
        }
    }
}

/// A file of another user at `dir/name`, or `None` where none can be
/// made.
fn plant(dir: &Path, name: &str, bytes: &[u8], test: &str) -> Option<PathBuf> {
    let path = put(dir, name, bytes);
    give_away(&path, test).then_some(path)
}

fn start(rolling: Rolling) -> (Logger, nowait_core::Guard) {
    Builder::new()
        .format(Plain)
        .sink(Sink::rolling(rolling))
        .build()
        .unwrap()
}

fn log(logger: &Logger, n: usize) {
    for i in 0..n {
        logger.log(Level::Info, &format!("record {i}")).unwrap();
    }
    logger.flush().unwrap();
}

/// Logs a record at a time until the sink has reported a housekeeping
/// notice, at most `for_at_most`; whether it did.
fn until_reported(logger: &Logger, for_at_most: Duration) -> bool {
    let deadline = Instant::now() + for_at_most;
    while Instant::now() < deadline {
        if logger.stats().sinks[0].rotation_errors > 0 {
            return true;
        }
        log(logger, 1);
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Waits (bounded) until `cond` holds; whether it did.
fn until(for_at_most: Duration, cond: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + for_at_most;
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    cond()
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    v.sort();
    v
}

#[cfg(feature = "gzip")]
fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

// ---------------------------------------------------------------------------
// Retention
// ---------------------------------------------------------------------------

/// Five empty files of another user dated in 2099 do not count against
/// `max_log_files(5)`: counted (and never removed, being after the current
/// file), they would have every older log removed, then each file as soon
/// as it is rotated out. They stay, reported.
#[test]
fn future_dated_files_of_another_user_do_not_make_retention_delete_our_logs() {
    let test = "future_dated_files_of_another_user_do_not_make_retention_delete_our_logs";
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for day in 1..=4 {
        put(d, &format!("app.2026-01-0{day}.log"), b"ours\n");
    }
    for day in 1..=5 {
        if plant(d, &format!("app.2099-12-0{day}.log"), b"", test).is_none() {
            return;
        }
    }
    let (logger, guard) = start(daily(d).max_log_files(5));
    let reported = until_reported(&logger, Duration::from_secs(3));
    drop(guard);
    for day in 1..=4 {
        let ours = d.join(format!("app.2026-01-0{day}.log"));
        assert_eq!(
            fs::read(&ours).ok().as_deref(),
            Some(&b"ours\n"[..]),
            "{}",
            ours.display()
        );
    }
    for day in 1..=5 {
        assert!(d.join(format!("app.2099-12-0{day}.log")).exists());
    }
    assert!(reported, "the planted names were not reported");
}

/// One sparse file of another user, 1 TiB as listed, counts for nothing
/// toward `max_total_size`: counted, it would have the sink's older logs
/// removed.
#[test]
fn a_huge_sparse_file_of_another_user_does_not_count_toward_max_total_size() {
    let test = "a_huge_sparse_file_of_another_user_does_not_count_toward_max_total_size";
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for day in 1..=3 {
        put(d, &format!("app.2026-01-0{day}.log"), &[b'x'; 100]);
    }
    let Some(huge) = plant(d, "app.2026-01-03.1.log", b"", test) else {
        return;
    };
    fs::OpenOptions::new()
        .write(true)
        .open(&huge)
        .unwrap()
        .set_len(1 << 40)
        .unwrap();
    let (logger, guard) = start(daily(d).max_total_size(1000));
    let reported = until_reported(&logger, Duration::from_secs(3));
    drop(guard);
    for day in 1..=3 {
        assert!(
            d.join(format!("app.2026-01-0{day}.log")).exists(),
            "day {day} removed"
        );
    }
    assert_eq!(fs::metadata(&huge).unwrap().len(), 1 << 40);
    assert!(reported, "the planted name was not reported");
}

// ---------------------------------------------------------------------------
// Compression
// ---------------------------------------------------------------------------

/// `NAME` and `NAME.gz` both there is what a compression cut short leaves,
/// and the plain file goes if the archive holds its bytes, but only an
/// archive of the sink's own: another user who can read the log could
/// write that archive and have the sink's log replaced by a file of
/// theirs.
#[cfg(feature = "gzip")]
#[test]
fn a_gz_of_another_user_does_not_get_our_log_deleted() {
    let test = "a_gz_of_another_user_does_not_get_our_log_deleted";
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let ours = put(d, "app.log", b"our records\n");
    put(d, "app.log.1", b"");
    if plant(d, "app.log.gz", &gzip(b"our records\n"), test).is_none() {
        return;
    }
    let (logger, guard) = start(Rolling::never(d, "app.log").compress(true));
    let reported = until_reported(&logger, Duration::from_secs(3));
    drop(guard);
    assert_eq!(
        fs::read(&ours).unwrap(),
        b"our records\n",
        "our log was removed"
    );
    use std::os::unix::fs::MetadataExt;
    assert_eq!(fs::metadata(d.join("app.log.gz")).unwrap().uid(), NOBODY);
    assert!(reported, "the planted archive was not reported");
}

/// A directory at `NAME.gz.tmp` does not hold compression of `NAME` off:
/// the archive is written under a temporary name of its own.
#[cfg(feature = "gzip")]
#[test]
fn a_directory_at_the_temporary_name_does_not_hold_compression_off() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    put(d, "app.log", b"our records\n");
    put(d, "app.log.1", b"");
    fs::create_dir(d.join("app.log.gz.tmp")).unwrap();
    let (logger, guard) = start(Rolling::never(d, "app.log").compress(true));
    let compressed = until(Duration::from_secs(5), || d.join("app.log.gz").exists());
    log(&logger, 1);
    drop(guard);
    assert!(compressed, "never compressed: {:?}", names(d));
    assert!(!d.join("app.log").exists(), "{:?}", names(d));
    assert!(d.join("app.log.gz.tmp").is_dir());
    let mut text = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(fs::File::open(d.join("app.log.gz")).unwrap()),
        &mut text,
    )
    .unwrap();
    assert_eq!(text, "our records\n");
}

/// Another user's file named like a rotated one is neither compressed (the
/// archive would be the sink's user's, readable as the sink's logs are)
/// nor removed; it is reported once.
#[cfg(feature = "gzip")]
#[test]
fn a_file_of_another_user_named_like_a_rotated_one_is_neither_compressed_nor_removed() {
    let test = "a_file_of_another_user_named_like_a_rotated_one_is_neither_compressed_nor_removed";
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    put(d, "app.log.1", b"");
    let Some(theirs) = plant(d, "app.log", b"theirs\n", test) else {
        return;
    };
    let (logger, guard) = start(Rolling::never(d, "app.log").compress(true).max_log_files(1));
    let reported = until_reported(&logger, Duration::from_secs(3));
    drop(guard);
    assert_eq!(names(d), ["app.log", "app.log.1"]);
    assert_eq!(fs::read(&theirs).unwrap(), b"theirs\n");
    assert!(reported, "the planted file was not reported");
    let current = fs::read_to_string(d.join("app.log.1")).unwrap();
    assert_eq!(
        current.matches("a file of another user").count(),
        1,
        "reported once: {current}"
    );
}

// ---------------------------------------------------------------------------
// Modes, indices
// ---------------------------------------------------------------------------

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().permissions().mode() & 0o777
}

/// A new file never takes the bits of a file the sink did not make: a
/// planted `0666` file named like the newest log does not make the logs
/// world-readable.
#[test]
fn new_files_do_not_take_the_mode_of_a_planted_file() {
    let test = "new_files_do_not_take_the_mode_of_a_planted_file";
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let Some(planted) = plant(d, "app.2026-01-04.log", b"", test) else {
        return;
    };
    fs::set_permissions(&planted, fs::Permissions::from_mode(0o666)).unwrap();
    let (logger, guard) = start(daily(d));
    log(&logger, 1);
    drop(guard);
    let current = d.join("app.2026-01-05.log");
    assert_eq!(mode(&current) & !0o640, 0, "{:o}", mode(&current));
}

/// `Rolling::mode` sets the bits of every new file (the umask may only
/// narrow them), across rotations.
#[test]
fn new_files_get_the_configured_mode() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (logger, guard) = start(Rolling::never(d, "app.log").max_size(64).mode(0o600));
    log(&logger, 20);
    drop(guard);
    let files = names(d);
    assert!(files.len() > 3, "{files:?}");
    for name in files {
        let m = mode(&d.join(&name));
        assert_eq!(m & !0o600, 0, "{name}: {m:o}");
    }
}

/// A name with index `u32::MAX` of another user: opening the sink does not
/// go for the index after it (which overflows a `u32`).
#[test]
fn a_planted_name_with_the_last_index_does_not_panic() {
    let test = "a_planted_name_with_the_last_index_does_not_panic";
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    if plant(d, "app.log.4294967295", b"", test).is_none() {
        return;
    }
    let (logger, guard) = start(Rolling::never(d, "app.log"));
    log(&logger, 3);
    drop(guard);
    assert_eq!(logger.stats().sinks[0].records_written, 3);
    assert!(d.join("app.log").exists(), "{:?}", names(d));
}

/// The sink's own file at index `u32::MAX`: the next rotation has no index
/// left. It fails as any rotation does (the file goes on taking the
/// records, counted, reported); nothing overflows on the writer thread.
#[test]
fn our_file_at_the_last_index_fails_rotation_without_panicking() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let last = put(d, "app.log.4294967295", b"");
    let (logger, guard) = start(Rolling::never(d, "app.log").max_size(32));
    log(&logger, 10);
    drop(guard);
    let s = &logger.stats().sinks[0];
    assert_eq!(s.records_written, 10, "{s:?}");
    assert!(s.rotation_errors >= 1, "{s:?}");
    let text = fs::read_to_string(&last).unwrap();
    assert!(text.contains("no index left"), "{text}");
}

// ---------------------------------------------------------------------------
// The directory itself
// ---------------------------------------------------------------------------

/// Whoever can write a parent of the log directory moves it away after
/// build and puts a link to a directory of their choosing in its place:
/// the sink goes on in the directory it opened, and creates, compresses
/// and deletes nothing where the link leads.
#[test]
fn a_symlink_swapped_in_for_the_log_directory_does_not_redirect_creates_or_deletes() {
    let parent = tempfile::tempdir().unwrap();
    let logs = parent.path().join("logs");
    let elsewhere = parent.path().join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    // Files of the sink's user there, named like the sink's.
    for name in ["app.log", "app.log.1", "app.log.2"] {
        put(&elsewhere, name, b"not a log\n");
    }
    let (logger, guard) = start(
        Rolling::never(&logs, "app.log")
            .max_size(64)
            .max_log_files(2),
    );
    log(&logger, 2);
    let moved = parent.path().join("logs.moved");
    fs::rename(&logs, &moved).unwrap();
    std::os::unix::fs::symlink(&elsewhere, &logs).unwrap();
    log(&logger, 40);
    // Housekeeping after the last rotation has run.
    until(Duration::from_secs(3), || {
        fs::read_dir(&moved).unwrap().count() == 2
    });
    drop(guard);
    assert_eq!(names(&elsewhere), ["app.log", "app.log.1", "app.log.2"]);
    for name in names(&elsewhere) {
        assert_eq!(
            fs::read(elsewhere.join(&name)).unwrap(),
            b"not a log\n",
            "{name}"
        );
    }
    let ours = names(&moved);
    assert_eq!(ours.len(), 2, "{ours:?}");
    assert_eq!(logger.stats().sinks[0].records_written, 42);
}

// ---------------------------------------------------------------------------
// The crash-durable file
// ---------------------------------------------------------------------------

fn durable(dir: &Path, ring: &Path) -> Builder {
    Builder::new()
        .capacity(64 << 10)
        .format(Plain)
        .sink(Sink::file(dir.join("app.log")))
        .crash_durable(ring)
}

/// A file of the user, `0600`, whose first bytes are zero: what a durable
/// file whose creation was cut short looks like at its start.
fn precious(path: &Path) -> Vec<u8> {
    let mut bytes = vec![0u8; 64];
    bytes.extend_from_slice(b"precious data of the user\n");
    fs::write(path, &bytes).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o600)).unwrap();
    bytes
}

/// A hard link at the durable path to another file of the user (a
/// directory where others may create names, and a system that lets them
/// link the user's files) is refused: adopted, the file it names would be
/// wiped.
#[test]
fn a_hard_link_at_the_durable_path_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim");
    let bytes = precious(&victim);
    let ring = dir.path().join("ring.nowait");
    fs::hard_link(&victim, &ring).unwrap();
    let err = durable(dir.path(), &ring).build().unwrap_err();
    let text = format!("{err} {:?}", std::error::Error::source(&err));
    assert!(text.contains("hard links"), "{text}");
    assert_eq!(
        fs::read(&victim).unwrap(),
        bytes,
        "the linked file was changed"
    );
}

/// A file of the user at the durable path that starts with zeros but is
/// not all zeros is not one whose creation was cut short, and is kept.
/// What such a start does leave (zeros, perhaps the start of the magic) is
/// started afresh.
#[test]
fn only_a_durable_file_whose_creation_was_cut_short_is_started_afresh() {
    let dir = tempfile::tempdir().unwrap();
    let ring = dir.path().join("ring.nowait");
    let bytes = precious(&ring);
    let err = durable(dir.path(), &ring).build().unwrap_err();
    let text = format!("{err} {:?}", std::error::Error::source(&err));
    assert!(text.contains("not a nowait crash-durable file"), "{text}");
    assert_eq!(fs::read(&ring).unwrap(), bytes, "the file was changed");

    let mut cut_short = b"nowa".to_vec();
    cut_short.resize(64 << 10, 0);
    fs::write(&ring, &cut_short).unwrap();
    let (logger, guard) = durable(dir.path(), &ring).build().unwrap();
    logger.log(Level::Info, "hello").unwrap();
    drop(guard);
    assert_eq!(&fs::read(&ring).unwrap()[..8], b"nowaitd1");
}
