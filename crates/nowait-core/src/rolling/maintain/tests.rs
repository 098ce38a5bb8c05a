//! Housekeeping jobs run in a real directory: compression, verification
//! and retention, and the names, links and files of others they must
//! leave alone.

use std::fs;
#[cfg(all(unix, any(feature = "gzip", feature = "zstd")))]
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

#[cfg(all(unix, feature = "gzip"))]
use super::archive::compress;
#[cfg(all(unix, feature = "zstd"))]
use super::archive::decode;
use super::keeper::Keeper;
#[cfg(all(unix, feature = "gzip"))]
use super::plan::Part;
use super::plan::{Housekeeping, Job};
use crate::rolling::dir_names as names;
use crate::rolling::naming::{Key, Naming};
use crate::rolling::{Compression, Rotation};
use crate::sys::nofollow::{Dir, Mode};

/// `Rolling::never(dir, "app.log")`'s names: `app.log`, `app.log.1`, ...
fn never() -> Naming {
    Naming {
        prefix: Some("app.log".into()),
        suffix: None,
        rotation: Rotation::Never,
    }
}

fn index(i: u32) -> Key {
    Key {
        period: String::new(),
        index: i,
    }
}

/// One housekeeping job with `current` the file written now; the
/// errors it reported.
fn housekeep(
    dir: &Path,
    naming: Naming,
    compress: bool,
    max_files: Option<usize>,
    current: Key,
) -> Vec<String> {
    let settings = Housekeeping {
        naming,
        compress: compress.then_some(Compression::Gzip),
        max_files,
        max_age: None,
        max_total: None,
        mode: Mode::NEW,
    };
    run(dir, settings, current, SystemTime::now())
}

/// One job with these settings at `now`; the errors it reported.
fn run(dir: &Path, settings: Housekeeping, current: Key, now: SystemTime) -> Vec<String> {
    let (tx, rx) = crossbeam_channel::unbounded();
    Keeper::new(Dir::open(dir).unwrap(), settings, tx).run(&Job { current, now });
    rx.try_iter().collect()
}

#[cfg(feature = "gzip")]
fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

#[cfg(all(unix, feature = "gzip"))]
fn gunzipped(path: &Path) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(fs::File::open(path).unwrap())
        .read_to_end(&mut out)
        .unwrap();
    out
}

/// A secret outside the log directory, readable by its owner only.
#[cfg(all(unix, feature = "gzip"))]
fn secret(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join("shadow");
    fs::write(&path, b"root:SECRET:19000::::::\n").unwrap();
    fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
    path
}

/// Compresses `name` in `dir` with gzip, as a job would after listing
/// it.
#[cfg(all(unix, feature = "gzip"))]
fn compress_name(dir: &Path, name: &str) -> io::Result<Part> {
    let dir = Dir::open(dir).unwrap();
    let part = Part {
        name: name.into(),
        stat: dir.stat(name).unwrap(),
    };
    compress(&dir, Compression::Gzip, &part, Mode::NEW)
}

#[cfg(all(unix, feature = "gzip"))]
#[test]
fn a_0600_log_is_compressed_into_a_0600_archive() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let old = dir.path().join("app.log");
    fs::write(&old, b"private\n").unwrap();
    fs::set_permissions(&old, fs::Permissions::from_mode(0o600)).unwrap();
    let when = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    fs::File::options()
        .write(true)
        .open(&old)
        .unwrap()
        .set_modified(when)
        .unwrap();
    fs::write(dir.path().join("app.log.1"), b"").unwrap();
    let errors = housekeep(dir.path(), never(), true, None, index(1));
    assert_eq!(errors, Vec::<String>::new());
    assert_eq!(names(dir.path()), ["app.log.1", "app.log.gz"]);
    let gz = dir.path().join("app.log.gz");
    assert_eq!(gunzipped(&gz), b"private\n");
    let mode = fs::metadata(&gz).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the archive is no wider than its log");
    assert_eq!(
        fs::metadata(&gz).unwrap().modified().unwrap(),
        when,
        "the archive keeps its log's time"
    );
}

/// The attack: a user who can write the log directory swaps the
/// rotated file for a link to a file only the service can read, and
/// waits for the archive.
#[cfg(all(unix, feature = "gzip"))]
#[test]
fn a_rotated_file_swapped_for_a_symlink_is_not_compressed_and_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let secret = secret(outside.path());
    let old = dir.path().join("app.log");
    std::os::unix::fs::symlink(&secret, &old).unwrap();
    fs::write(dir.path().join("app.log.1"), b"").unwrap();
    let errors = housekeep(dir.path(), never(), true, None, index(1));
    assert_eq!(names(dir.path()), ["app.log", "app.log.1"], "no archive");
    assert!(
        fs::symlink_metadata(&old).unwrap().is_symlink(),
        "left alone"
    );
    assert_eq!(fs::read(&secret).unwrap(), b"root:SECRET:19000::::::\n");
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0].contains("app.log") && errors[0].contains("symbolic link"),
        "{errors:?}"
    );
}

/// The same swap after the directory was listed, at the open itself.
#[cfg(all(unix, feature = "gzip"))]
#[test]
fn compression_does_not_open_a_symlink() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let old = dir.path().join("app.log");
    std::os::unix::fs::symlink(secret(outside.path()), &old).unwrap();
    let err = compress_name(dir.path(), "app.log").unwrap_err();
    assert!(err.to_string().contains("symbolic link"), "{err}");
    assert_eq!(names(dir.path()), ["app.log"]);
}

/// A hard link is no symbolic link, but names another file all the
/// same (where the system lets anyone link others' files).
#[cfg(all(unix, feature = "gzip"))]
#[test]
fn compression_does_not_open_a_file_with_other_names() {
    let dir = tempfile::tempdir().unwrap();
    let secret = secret(dir.path());
    let old = dir.path().join("app.log");
    fs::hard_link(&secret, &old).unwrap();
    let err = compress_name(dir.path(), "app.log").unwrap_err();
    assert!(err.to_string().contains("hard link"), "{err}");
    assert_eq!(names(dir.path()), ["app.log", "shadow"]);
}

/// An archive name already taken by a link: the plain file stays, and
/// nothing is written through the link.
#[cfg(all(unix, feature = "gzip"))]
#[test]
fn an_archive_name_taken_by_a_symlink_keeps_the_plain_file() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("target");
    fs::write(&target, b"theirs\n").unwrap();
    fs::write(dir.path().join("app.log"), b"ours\n").unwrap();
    std::os::unix::fs::symlink(&target, dir.path().join("app.log.gz")).unwrap();
    fs::write(dir.path().join("app.log.1"), b"").unwrap();
    let errors = housekeep(dir.path(), never(), true, None, index(1));
    assert_eq!(names(dir.path()), ["app.log", "app.log.1", "app.log.gz"]);
    assert_eq!(fs::read(dir.path().join("app.log")).unwrap(), b"ours\n");
    assert_eq!(fs::read(&target).unwrap(), b"theirs\n");
    assert!(
        errors.iter().any(|e| e.contains("app.log.gz")),
        "{errors:?}"
    );
}

/// `NAME` and `NAME.gz` both there: the gzip was interrupted before
/// `NAME` was removed. Only a `.gz` that holds `NAME` exactly lets it go.
#[cfg(feature = "gzip")]
#[test]
fn a_plain_file_is_removed_only_if_its_gz_holds_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    fs::write(d.join("app.log"), b"line 1\nline 2\n").unwrap();
    fs::write(d.join("app.log.gz"), gzip(b"line 1\nline 2\n")).unwrap();
    fs::write(d.join("app.log.1"), b"records\n").unwrap();
    fs::write(d.join("app.log.1.gz"), gzip(b"records\nand more\n")).unwrap();
    fs::write(d.join("app.log.2"), b"records\n").unwrap();
    fs::write(d.join("app.log.2.gz"), b"not gzip").unwrap();
    fs::write(d.join("app.log.3"), b"").unwrap();
    let errors = housekeep(d, never(), true, None, index(3));
    assert_eq!(
        names(d),
        [
            "app.log.1",
            "app.log.1.gz",
            "app.log.2",
            "app.log.2.gz",
            "app.log.3",
            "app.log.gz"
        ]
    );
    assert_eq!(errors.len(), 2, "{errors:?}");
    assert!(errors.iter().all(|e| e.contains("kept")), "{errors:?}");
}

/// Retention removes only regular files whose names are exactly this
/// sink's: not a link named like one (nor what it points to), not a
/// directory, not a name that only looks alike.
#[cfg(unix)]
#[test]
fn retention_leaves_links_directories_and_lookalike_names_alone() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("target");
    fs::write(&target, b"theirs\n").unwrap();
    let d = dir.path();
    let naming = Naming {
        prefix: Some("app".into()),
        suffix: Some("log".into()),
        rotation: Rotation::Daily,
    };
    for name in [
        "app.2026-01-01.log",
        "app.2026-01-02.log.gz",
        "app.2026-01-06.log",
        "app.2026-01-01.log.bak",
        "app.2026-1-01.log",
        "app.x.2026-01-01.log",
    ] {
        fs::write(d.join(name), b"x\n").unwrap();
    }
    for link in [
        "app.2026-01-03.log",
        "app.2026-01-04.log.gz",
        "app.2026-01-01.log.old",
    ] {
        std::os::unix::fs::symlink(&target, d.join(link)).unwrap();
    }
    fs::create_dir(d.join("app.2026-01-05.log")).unwrap();
    let current = Key {
        period: "2026-01-06".into(),
        index: 0,
    };
    let errors = housekeep(d, naming, false, Some(1), current);
    assert_eq!(
        names(d),
        [
            "app.2026-01-01.log.bak",
            "app.2026-01-01.log.old",
            "app.2026-01-03.log",
            "app.2026-01-04.log.gz",
            "app.2026-01-05.log",
            "app.2026-01-06.log",
            "app.2026-1-01.log",
            "app.x.2026-01-01.log",
        ]
    );
    assert_eq!(fs::read(&target).unwrap(), b"theirs\n");
    // The names of this sink that are not its files are reported.
    assert_eq!(errors.len(), 3, "{errors:?}");
}

/// A name left alone is reported once while it stays, and again if it
/// comes back after it was gone.
#[cfg(unix)]
#[test]
fn a_name_left_alone_is_reported_once_while_it_stays() {
    let dir = tempfile::tempdir().unwrap();
    let link = dir.path().join("app.log");
    std::os::unix::fs::symlink("/nonexistent", &link).unwrap();
    fs::write(dir.path().join("app.log.1"), b"").unwrap();
    let (tx, rx) = crossbeam_channel::unbounded();
    let settings = Housekeeping {
        naming: never(),
        compress: cfg!(feature = "gzip").then_some(Compression::Gzip),
        max_files: Some(1),
        max_age: None,
        max_total: None,
        mode: Mode::NEW,
    };
    let mut keeper = Keeper::new(Dir::open(dir.path()).unwrap(), settings, tx);
    let mut job = || {
        keeper.run(&Job {
            current: index(1),
            now: SystemTime::now(),
        });
        rx.try_iter().count()
    };
    assert_eq!(job(), 1);
    assert_eq!(job(), 0);
    fs::remove_file(&link).unwrap();
    assert_eq!(job(), 0);
    std::os::unix::fs::symlink("/nonexistent", &link).unwrap();
    assert_eq!(job(), 1);
    assert_eq!(names(dir.path()), ["app.log", "app.log.1"]);
}

/// A link named like the temporary file of a compression is not a
/// leftover of ours: it stays (reported), and blocks nothing: the
/// compression writes under a temporary name of its own.
#[cfg(all(unix, feature = "gzip"))]
#[test]
fn a_symlink_named_like_a_leftover_temporary_is_left_alone_and_blocks_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("target");
    fs::write(&target, b"theirs\n").unwrap();
    fs::write(dir.path().join("app.log"), b"ours\n").unwrap();
    std::os::unix::fs::symlink(&target, dir.path().join("app.log.gz.tmp")).unwrap();
    fs::write(dir.path().join("app.log.1"), b"").unwrap();
    let errors = housekeep(dir.path(), never(), true, None, index(1));
    assert_eq!(
        names(dir.path()),
        ["app.log.1", "app.log.gz", "app.log.gz.tmp"]
    );
    assert_eq!(gunzipped(&dir.path().join("app.log.gz")), b"ours\n");
    assert_eq!(fs::read(&target).unwrap(), b"theirs\n");
    assert_eq!(errors.len(), 1, "{errors:?}");
}

/// `Rolling::daily(dir, "app").filename_suffix("log")`'s names.
fn daily() -> Naming {
    Naming {
        prefix: Some("app".into()),
        suffix: Some("log".into()),
        rotation: Rotation::Daily,
    }
}

fn day(d: u32) -> Key {
    Key {
        period: format!("2026-01-{d:02}"),
        index: 0,
    }
}

/// Writes `bytes` bytes to `name`, last modified `days` days ago.
fn file(dir: &Path, name: &str, bytes: usize, days: u64) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, vec![b'x'; bytes]).unwrap();
    let when = SystemTime::now() - Duration::from_secs(days * 86_400);
    fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(when)
        .unwrap();
    path
}

fn settings(age: Option<u64>, total: Option<u64>) -> Housekeeping {
    Housekeeping {
        naming: daily(),
        compress: None,
        max_files: None,
        max_age: age.map(|d| Duration::from_secs(d * 86_400)),
        max_total: total,
        mode: Mode::NEW,
    }
}

/// Files last written more than `max_age` ago go; the current file
/// stays however old it is.
#[test]
fn retention_by_age_removes_files_last_written_before_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    file(d, "app.2026-01-01.log", 10, 20);
    file(d, "app.2026-01-02.log.gz", 10, 15);
    file(d, "app.2026-01-03.log", 10, 13);
    file(d, "app.2026-01-04.log", 10, 30);
    let errors = run(d, settings(Some(14), None), day(4), SystemTime::now());
    assert_eq!(errors, Vec::<String>::new());
    assert_eq!(names(d), ["app.2026-01-03.log", "app.2026-01-04.log"]);
}

/// The files before the current one are cut, oldest first, to at most
/// `max_total_size` bytes; the current file does not count.
#[test]
fn retention_by_total_size_removes_the_oldest_first() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    for (i, name) in [
        "app.2026-01-01.log",
        "app.2026-01-02.log.gz",
        "app.2026-01-03.log",
        "app.2026-01-03.1.log",
    ]
    .into_iter()
    .enumerate()
    {
        file(d, name, 100, 4 - i as u64);
    }
    file(d, "app.2026-01-04.log", 1000, 0);
    let errors = run(d, settings(None, Some(250)), day(4), SystemTime::now());
    assert_eq!(errors, Vec::<String>::new());
    assert_eq!(
        names(d),
        [
            "app.2026-01-03.1.log",
            "app.2026-01-03.log",
            "app.2026-01-04.log"
        ]
    );
}

/// Age and size retention touch only the sink's regular files: a
/// foreign file, a symbolic link named like one of the sink's files
/// and what it points to all stay, however old or large.
#[cfg(unix)]
#[test]
fn retention_by_age_and_size_leaves_foreign_files_and_links_alone() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let target = file(outside.path(), "target", 1000, 100);
    let d = dir.path();
    file(d, "app.2026-01-01.log", 100, 100);
    file(d, "app.2026-01-01.log.bak", 1000, 100);
    file(d, "notes.txt", 1000, 100);
    std::os::unix::fs::symlink(&target, d.join("app.2026-01-02.log")).unwrap();
    std::os::unix::fs::symlink("app.2026-01-03.log", d.join("app.log")).unwrap();
    file(d, "app.2026-01-03.log", 10, 0);
    let errors = run(d, settings(Some(1), Some(0)), day(3), SystemTime::now());
    assert_eq!(
        names(d),
        [
            "app.2026-01-01.log.bak",
            "app.2026-01-02.log",
            "app.2026-01-03.log",
            "app.log",
            "notes.txt"
        ]
    );
    assert_eq!(fs::read(&target).unwrap(), vec![b'x'; 1000]);
    assert_eq!(errors.len(), 1, "the link named like a file: {errors:?}");
}

/// zstd, like gzip: the archive holds the file exactly, keeps its
/// permissions and time, and the plain file goes.
#[cfg(all(unix, feature = "zstd"))]
#[test]
fn a_file_is_compressed_with_zstd_into_an_equal_archive() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let text: Vec<u8> = (0..20_000)
        .flat_map(|i| format!("2026-11-26T10:00:00Z INFO request {i} done\n").into_bytes())
        .collect();
    let old = d.join("app.log");
    fs::write(&old, &text).unwrap();
    fs::set_permissions(&old, fs::Permissions::from_mode(0o640)).unwrap();
    fs::write(d.join("app.log.1"), b"").unwrap();
    let mut settings = settings(None, None);
    settings.naming = never();
    settings.compress = Some(Compression::Zstd);
    let errors = run(d, settings, index(1), SystemTime::now());
    assert_eq!(errors, Vec::<String>::new());
    assert_eq!(names(d), ["app.log.1", "app.log.zst"]);
    let zst = d.join("app.log.zst");
    let meta = fs::metadata(&zst).unwrap();
    assert_eq!(meta.permissions().mode() & 0o777, 0o640);
    assert!(meta.len() < text.len() as u64 / 10, "{} bytes", meta.len());
    let mut back = Vec::new();
    io::Read::read_to_end(
        &mut *decode(Compression::Zstd, fs::File::open(&zst).unwrap()).unwrap(),
        &mut back,
    )
    .unwrap();
    assert_eq!(back, text);
}

/// A `.zst` left beside its plain file (a cut-short run), or one that
/// is not zstd at all, or asks for a 2 GiB window: the plain file goes
/// only where the archive holds it exactly.
#[cfg(feature = "zstd")]
#[test]
fn a_plain_file_is_removed_only_if_its_zst_holds_it() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let zst = |bytes: &[u8]| zstd::stream::encode_all(bytes, 3).unwrap();
    fs::write(d.join("app.log"), b"line 1\n").unwrap();
    fs::write(d.join("app.log.zst"), zst(b"line 1\n")).unwrap();
    fs::write(d.join("app.log.1"), b"records\n").unwrap();
    fs::write(d.join("app.log.1.zst"), zst(b"records\nand more\n")).unwrap();
    fs::write(d.join("app.log.2"), b"records\n").unwrap();
    // A frame header asking for a window of 2^31 bytes.
    fs::write(
        d.join("app.log.2.zst"),
        [0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xa8],
    )
    .unwrap();
    fs::write(d.join("app.log.3"), b"").unwrap();
    let mut settings = settings(None, None);
    settings.naming = never();
    settings.compress = Some(Compression::Zstd);
    let errors = run(d, settings, index(3), SystemTime::now());
    assert_eq!(
        names(d),
        [
            "app.log.1",
            "app.log.1.zst",
            "app.log.2",
            "app.log.2.zst",
            "app.log.3",
            "app.log.zst"
        ]
    );
    assert_eq!(errors.len(), 2, "{errors:?}");
}

/// Switching from gzip to zstd: the old `.gz` archives still count for
/// retention and are removed oldest first.
#[cfg(feature = "zstd")]
#[test]
fn gz_and_zst_archives_count_together_for_retention() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    file(d, "app.2026-01-01.log.gz", 10, 3);
    file(d, "app.2026-01-02.log.zst", 10, 2);
    file(d, "app.2026-01-03.log", 10, 1);
    file(d, "app.2026-01-04.log", 10, 0);
    let mut settings = settings(None, None);
    settings.max_files = Some(2);
    settings.compress = Some(Compression::Zstd);
    let errors = run(d, settings, day(4), SystemTime::now());
    assert_eq!(errors, Vec::<String>::new());
    assert_eq!(names(d), ["app.2026-01-03.log.zst", "app.2026-01-04.log"]);
}
