//! A crash-durable file is untrusted input: whoever can write its path
//! (another local user, in a world-writable directory such as `/dev/shm`)
//! can plant one. These tests plant crafted files and links and check
//! that a start never writes a file the durable file names, never follows
//! a link, never adopts a file others could have written, and turns every
//! inconsistent word into a notice, never a panic.
//!
//! The crafted files start as a real one: a live logger's file, copied
//! (a copy of a live file is what a process killed at that instant
//! leaves), then changed at the offsets the format documents
//! (`durable.rs`, "The file").
#![cfg(all(unix, not(miri)))]

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use nowait_core::format::Plain;
use nowait_core::{Builder, Sink};

const GEN: usize = 128;
const SNAPSHOT: [usize; 2] = [256, 1280];
const S_SLOTS: usize = 32;
const IDENTS: usize = 4096;
const IDENT_SIZE: usize = 512;
const H_SLOTS: usize = 12;
const H_MIRROR: usize = 32;
const H_RING: usize = 24;

fn builder(log: &Path, ring: &Path) -> Builder {
    Builder::new()
        .capacity(64 << 10)
        .drain_on_crash(false)
        .format(Plain)
        .sink(Sink::file(log))
        .crash_durable(ring)
}

/// A dead process's file whose one file sink wrote `log`, as bytes.
fn dead_file(dir: &Path) -> Vec<u8> {
    let (log, ring) = (dir.join("dead.log"), dir.join("live.nowait"));
    let (logger, guard) = builder(&log, &ring).build().unwrap();
    for i in 0..50 {
        logger
            .log(nowait_core::Level::Info, &format!("line {i}"))
            .unwrap();
    }
    logger.flush().unwrap();
    let bytes = std::fs::read(&ring).unwrap();
    drop(guard);
    bytes
}

fn word(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap())
}

fn set(b: &mut [u8], at: usize, v: u64) {
    b[at..at + 8].copy_from_slice(&v.to_le_bytes());
}

/// Slot 0 of the snapshot in force: its word offset.
fn slot0(b: &[u8]) -> usize {
    SNAPSHOT[(word(b, GEN) & 1) as usize] + S_SLOTS
}

/// Makes the last `k` bytes of file sink 0 pending (written, not yet
/// recorded as written) and its file `path`, with an identity no file has.
fn plant(b: &mut [u8], path: &Path, k: u64) {
    let s = slot0(b);
    let copy = word(b, s) as usize;
    assert!(copy == 1 || copy == 2, "the live file has a committed sink");
    let appended = word(b, s + 24);
    set(b, s + 16, appended - k);
    let ident = IDENTS + (copy - 1) * IDENT_SIZE;
    set(b, ident, u64::MAX);
    set(b, ident + 8, u64::MAX);
    let p = path.as_os_str().as_encoded_bytes();
    set(b, ident + 16, p.len() as u64);
    b[ident + 24..ident + 24 + p.len()].copy_from_slice(p);
}

fn write_private(path: &Path, bytes: &[u8]) {
    std::fs::write(path, bytes).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
}

/// Starts a logger on `ring` with one file sink, `app.log`, writes nothing
/// new, and returns that file's lines.
fn start(dir: &Path, ring: &Path) -> Vec<String> {
    let log = dir.join("app.log");
    let (_logger, guard) = builder(&log, ring).build().unwrap();
    drop(guard);
    std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

#[test]
fn recovery_never_writes_a_file_that_the_durable_file_names() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("victim.conf");
    std::fs::write(&victim, "precious\n").unwrap();
    let mut bytes = dead_file(dir.path());
    plant(&mut bytes, &victim, 20);
    let ring = dir.path().join("planted.nowait");
    write_private(&ring, &bytes);
    let lines = start(dir.path(), &ring);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    assert!(
        lines.iter().any(|l| l.contains("20 bytes")
            && l.contains("victim.conf")
            && l.contains("no file sink of this logger writes that file")),
        "{lines:?}"
    );
}

#[test]
fn a_dead_sink_s_pending_bytes_go_to_the_sink_that_writes_its_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = dead_file(dir.path());
    let app = dir.path().join("app.log");
    std::fs::write(&app, "").unwrap();
    // The dead sink wrote app.log, which the new logger's sink writes too,
    // and its last 12 bytes are pending: they go there, once.
    plant(&mut bytes, &std::fs::canonicalize(&app).unwrap(), 12);
    let ring = dir.path().join("planted.nowait");
    write_private(&ring, &bytes);
    let lines = start(dir.path(), &ring);
    assert!(
        lines.iter().any(|l| l.contains("with 12 bytes")),
        "{lines:?}"
    );
}

#[test]
fn a_durable_path_that_is_a_symlink_is_a_build_error_and_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret");
    std::fs::write(&secret, "root only\n").unwrap();
    let ring = dir.path().join("ring.nowait");
    std::os::unix::fs::symlink(&secret, &ring).unwrap();
    let err = builder(&dir.path().join("app.log"), &ring)
        .build()
        .unwrap_err();
    let text = format!("{err} {:?}", std::error::Error::source(&err));
    assert!(text.contains("symbolic link"), "{text}");
    assert_eq!(std::fs::read_to_string(&secret).unwrap(), "root only\n");
}

#[test]
fn a_durable_file_others_may_write_is_a_build_error() {
    let dir = tempfile::tempdir().unwrap();
    let bytes = dead_file(dir.path());
    let ring = dir.path().join("shared.nowait");
    std::fs::write(&ring, &bytes).unwrap();
    std::fs::set_permissions(&ring, std::fs::Permissions::from_mode(0o666)).unwrap();
    let err = builder(&dir.path().join("app.log"), &ring)
        .build()
        .unwrap_err();
    let text = format!("{err} {:?}", std::error::Error::source(&err));
    assert!(text.contains("lets other users write it"), "{text}");
    assert_eq!(std::fs::read(&ring).unwrap(), bytes, "the file was changed");
}

#[test]
fn a_durable_file_another_user_owns_is_a_build_error() {
    let dir = tempfile::tempdir().unwrap();
    let ring = dir.path().join("theirs.nowait");
    write_private(&ring, &dead_file(dir.path()));
    // SAFETY: plain system calls on a path we made.
    let euid = unsafe { libc::geteuid() };
    let path = std::ffi::CString::new(ring.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid C string.
    if unsafe { libc::chown(path.as_ptr(), 65534, 65534) } != 0 {
        eprintln!(
            "SKIPPED a_durable_file_another_user_owns_is_a_build_error: \
             cannot give a file to another user (uid {euid} is not root)"
        );
        return;
    }
    let err = builder(&dir.path().join("app.log"), &ring)
        .build()
        .unwrap_err();
    let text = format!("{err} {:?}", std::error::Error::source(&err));
    assert!(text.contains("owned by user 65534"), "{text}");
}

#[test]
fn a_file_that_is_not_a_ring_is_a_build_error_and_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let ring = dir.path().join("ring");
    write_private(&ring, b"something else entirely");
    let err = builder(&dir.path().join("app.log"), &ring)
        .build()
        .unwrap_err();
    let text = format!("{err} {:?}", std::error::Error::source(&err));
    assert!(text.contains("not a nowait crash-durable file"), "{text}");
    assert_eq!(std::fs::read(&ring).unwrap(), b"something else entirely");
}

#[test]
fn a_staging_path_planted_as_a_symlink_is_not_followed() {
    let dir = tempfile::tempdir().unwrap();
    let victim = dir.path().join("root-only");
    std::fs::write(&victim, "root only\n").unwrap();
    let ring = dir.path().join("ring.nowait");
    write_private(&ring, &dead_file(dir.path()));
    let mut staging = ring.as_os_str().to_owned();
    staging.push(".recovering");
    std::os::unix::fs::symlink(&victim, PathBuf::from(staging)).unwrap();
    start(dir.path(), &ring);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "root only\n");
}

/// Each change to one word of a real file, and the start that meets it:
/// it builds, says what it could not recover, and loses nothing new.
#[test]
fn inconsistent_words_are_notices_never_panics() {
    type Change = fn(&mut Vec<u8>);
    // (what, the change, the notice's words; None: nothing to say)
    let changes: &[(&str, Change, Option<&str>)] = &[
        (
            "a zero mirror size",
            |b| set(b, H_MIRROR, 0),
            Some("power of two"),
        ),
        (
            "a mirror size not a power of two",
            |b| set(b, H_MIRROR, 3 << 16),
            Some("power of two"),
        ),
        (
            "a huge mirror size",
            |b| set(b, H_MIRROR, u64::MAX),
            Some("past the limit"),
        ),
        (
            "a huge ring size",
            |b| set(b, H_RING, 1 << 40),
            Some("past the limit"),
        ),
        (
            "too many file sinks",
            |b| b[H_SLOTS..H_SLOTS + 4].copy_from_slice(&1000u32.to_le_bytes()),
            Some("past the limit"),
        ),
        (
            "an identity copy out of range",
            |b| {
                let s = slot0(b);
                set(b, s, 7)
            },
            Some("identity copy 7"),
        ),
        (
            "more pending bytes than a mirror holds",
            |b| {
                let s = slot0(b);
                set(b, s + 16, 0);
                set(b, s + 24, 1 << 30)
            },
            Some("more than its mirror holds"),
        ),
        (
            "a path length past its room",
            |b| {
                let s = slot0(b);
                let copy = word(b, s) as usize;
                let appended = word(b, s + 24);
                set(b, s + 16, appended - 1);
                set(b, IDENTS + (copy - 1) * IDENT_SIZE + 16, u64::MAX)
            },
            Some("the length of its path"),
        ),
        ("a huge catalog length", |b| set(b, 192, u64::MAX), None),
        (
            "the file cut short",
            |b| b.truncate(b.len() / 2),
            Some("the file holds"),
        ),
        (
            "a snapshot position past the claims",
            |b| {
                let s = slot0(b) - S_SLOTS;
                set(b, s, u64::MAX)
            },
            Some("inconsistent positions"),
        ),
    ];
    let dir = tempfile::tempdir().unwrap();
    let original = dead_file(dir.path());
    for (i, (what, change, notice)) in changes.iter().enumerate() {
        let mut bytes = original.clone();
        change(&mut bytes);
        // A new path each time: the last start's logger, shut down, may
        // still hold its file for an instant (and a file of this process's
        // own shut-down logger is started afresh, not recovered).
        let ring = dir.path().join(format!("changed-{i}.nowait"));
        write_private(&ring, &bytes);
        let _ = std::fs::remove_file(dir.path().join("app.log"));
        let lines = start(dir.path(), &ring);
        if let Some(words) = notice {
            assert!(
                lines.iter().any(|l| l.contains(words)),
                "{what}: no notice with {words:?}: {lines:?}"
            );
        }
        let _ = std::fs::remove_file(format!("{}.corrupt", ring.display()));
    }
}
