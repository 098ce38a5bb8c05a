//! A rolling sink's directory, and the crash-durable file's, shared with
//! other users (group-writable, or sticky like `/tmp`): what another user
//! puts there under the sink's names is never taken for the sink's own.
//!
//! Each scenario is three steps: the service's own earlier files
//! ([`Step::Ours`]), what the other user plants ([`Step::Theirs`]), and
//! the service's run with its checks ([`Step::Run`]). A scenario runs in
//! one or both of two ways:
//!
//! - **As two real users** (the tests in `mod two_users`): the test, as
//!   root, runs each step in a child process, this test binary running
//!   its entry `as_a_user`, as the user the step belongs to: the service
//!   an unprivileged user ([`SERVICE`]), the other user `nobody` (65534),
//!   both without supplementary groups (each child checks who it is before
//!   anything else). The directory is one both may write: sticky and
//!   world-writable (`1777`, as `/tmp`), then group-writable (`0770`, of
//!   a group both have as their own, [`SHARED_GID`]). So the other user's
//!   files are really theirs, made by their process, and the service's
//!   checks run with the service's own user's rights.
//! - **As root with `chown`** (the tests at the top level): the test is
//!   the service, running as root, and gives every name the `Theirs` step
//!   made to uid 65534.
//!
//! Either way needs root; without it each test says SKIPPED with the
//! reason and passes. So does a two-user step that the system refuses
//! (the kernel's link protections: the attack cannot be made there).
//! Tests that need no other user run everywhere on Unix.
#![cfg(all(unix, not(miri)))]

use std::fs;
use std::io::{BufRead, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use nowait_core::format::Plain;
use nowait_core::sink::Rolling;
use nowait_core::{Builder, Level, Logger, Sink};
use nowait_testkit::child::{self, Child};

/// Another user, for files planted in the directory.
const NOBODY: u32 = 65534;

/// The service's user in the two-user tests: an unprivileged uid, which
/// needs no account.
const SERVICE: u32 = 64_201;
/// The group of the group-writable directory, which the service and the
/// other user both have as their own in the two-user tests.
const SHARED_GID: u32 = 64_200;

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
    match std::os::unix::fs::lchown(path, Some(NOBODY), Some(NOBODY)) {
        Ok(()) => true,
        Err(e) => {
            eprintln!("SKIPPED {test}: cannot give a file to another user ({e}; needs root)");
            false
        }
    }
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

fn uid(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().uid()
}

fn mode(path: &Path) -> u32 {
    fs::symlink_metadata(path).unwrap().permissions().mode() & 0o777
}

/// The bits of `0o666` this process's umask lets a new file have: the
/// mode of a file created with `0o666` in `dir`.
fn umask_allows(dir: &Path) -> u32 {
    use std::os::unix::fs::OpenOptionsExt;
    let probe = dir.join(".umask-probe");
    let file = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o666)
        .open(&probe)
        .unwrap();
    let bits = file.metadata().unwrap().permissions().mode() & 0o777;
    fs::remove_file(&probe).unwrap();
    bits
}

#[cfg(feature = "gzip")]
fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    enc.write_all(bytes).unwrap();
    enc.finish().unwrap()
}

// ---------------------------------------------------------------------------
// Scenarios, and the two ways to run them
// ---------------------------------------------------------------------------

/// A step of a scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    /// The service's own files from an earlier run.
    Ours,
    /// The other user plants their files.
    Theirs,
    /// The service runs, and checks what it did.
    Run,
}

impl Step {
    const ALL: [Step; 3] = [Step::Ours, Step::Theirs, Step::Run];

    fn name(self) -> &'static str {
        match self {
            Step::Ours => "ours",
            Step::Theirs => "theirs",
            Step::Run => "run",
        }
    }
}

/// A scenario: what each step does in the shared directory.
type Scenario = fn(Step, &Path);

/// Every scenario, by the name a child is given.
const SCENARIOS: &[(&str, Scenario)] = &[
    ("future_dated", future_dated),
    ("huge_sparse", huge_sparse),
    #[cfg(feature = "gzip")]
    ("foreign_gz", foreign_gz),
    #[cfg(feature = "gzip")]
    ("foreign_rotated", foreign_rotated),
    ("planted_mode", planted_mode),
    ("last_index", last_index),
    ("durable_hard_link", durable_hard_link),
    ("swapped_dir", swapped_dir),
];

fn scenario_named(name: &str) -> Scenario {
    SCENARIOS
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no scenario {name:?}"))
        .1
}

/// Runs `scenario` in a new directory with the test as the service (as
/// root) and every name the `Theirs` step made given to uid 65534; says
/// SKIPPED (naming `test`) where this process may not give files away.
fn with_chown(test: &str, scenario: Scenario) {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    scenario(Step::Ours, d);
    let before = names(d);
    scenario(Step::Theirs, d);
    for name in names(d).into_iter().filter(|n| !before.contains(n)) {
        if !give_away(&d.join(name), test) {
            return;
        }
    }
    scenario(Step::Run, d);
}

/// What a shared directory lets others do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shared {
    /// `1777`, as `/tmp`: anyone creates names, only a name's owner
    /// removes or renames it.
    Sticky,
    /// `0770`, of [`SHARED_GID`]: the group's members create, remove and
    /// rename any name.
    Group,
}

/// A user and group to run a child as.
#[derive(Debug, Clone, Copy)]
struct User {
    uid: u32,
    gid: u32,
}

/// The service's user.
const SERVICE_USER: User = User {
    uid: SERVICE,
    gid: SHARED_GID,
};

impl Shared {
    /// The other user: in the group only where the directory is the
    /// group's.
    fn other(self) -> User {
        User {
            uid: NOBODY,
            gid: match self {
                Shared::Sticky => NOBODY,
                Shared::Group => SHARED_GID,
            },
        }
    }
}

/// The test entry the children run.
const ENTRY: &str = "as_a_user";
/// Tells a child the shared directory.
const DIR_VAR: &str = "NOWAIT_TEST_SHARED_DIR";
/// Tells a child who it must be, `UID:GID`.
const USER_VAR: &str = "NOWAIT_TEST_USER";
/// A child's exit code for "the system refuses this step": the attack
/// cannot be made here.
const REFUSED: i32 = 77;

/// Where the two-user tests run: a directory of root's that everyone may
/// enter, which holds the shared directories.
struct Users {
    base: tempfile::TempDir,
    test: String,
    /// The test binary the children run: this one, or a copy in `base`
    /// where other users cannot reach this one (a build under `/root`).
    exe: PathBuf,
}

impl Users {
    /// Ready to run children as other users, or `None` after saying
    /// SKIPPED (naming `test`) and why.
    fn here(test: &str) -> Option<Users> {
        let skip = |why: String| {
            eprintln!("SKIPPED {test}: {why}");
            None
        };
        if !rustix::process::geteuid().is_root() {
            return skip("needs root to run processes as other users".into());
        }
        let base = tempfile::tempdir().unwrap();
        fs::set_permissions(base.path(), fs::Permissions::from_mode(0o755)).unwrap();
        let mut users = Users {
            base,
            test: test.to_owned(),
            exe: std::env::current_exe().unwrap(),
        };
        // Can this binary run as the service's user at all? If the user
        // cannot reach it, a copy of it in `base` can.
        let mut probe = users.probe();
        if probe
            .as_ref()
            .is_err_and(|e| e.kind() == std::io::ErrorKind::PermissionDenied)
        {
            let copy = users.base.path().join("test-binary");
            fs::copy(&users.exe, &copy).unwrap();
            fs::set_permissions(&copy, fs::Permissions::from_mode(0o755)).unwrap();
            users.exe = copy;
            probe = users.probe();
        }
        if let Err(e) = probe {
            return skip(format!(
                "cannot run this test binary as uid {SERVICE} ({e})"
            ));
        }
        Some(users)
    }

    /// Runs the child that only checks who it is, as the service's user:
    /// an error if it cannot be started, a failure if it fails.
    fn probe(&self) -> std::io::Result<()> {
        let out = self
            .child(SERVICE_USER, "whoami", self.base.path())
            .try_spawn()?
            .output();
        assert!(out.status.success(), "the probe as uid {SERVICE}: {out:?}");
        Ok(())
    }

    /// A new shared directory of kind `shared`, named `name`.
    fn shared(&self, shared: Shared, name: &str) -> PathBuf {
        let dir = self.base.path().join(name);
        fs::create_dir(&dir).unwrap();
        let bits = match shared {
            Shared::Sticky => 0o1777,
            Shared::Group => {
                std::os::unix::fs::chown(&dir, Some(0), Some(SHARED_GID)).unwrap();
                0o770
            }
        };
        fs::set_permissions(&dir, fs::Permissions::from_mode(bits)).unwrap();
        dir
    }

    /// This binary's entry, as `user`, in role `role`, on `dir`.
    fn child(&self, user: User, role: &str, dir: &Path) -> Child {
        Child::of_binary(&self.exe, ENTRY, role)
            .user(user.uid, user.gid)
            .env(DIR_VAR, dir)
            .env(USER_VAR, format!("{}:{}", user.uid, user.gid))
            .timeout(Duration::from_secs(60))
    }

    /// Runs `role` as `user` on `dir` to its end: `false` (after saying
    /// SKIPPED) if the system refused the step; a failure fails the test.
    fn step(&self, user: User, role: &str, dir: &Path) -> bool {
        let out = self.child(user, role, dir).run();
        if out.status.code() == Some(REFUSED) {
            eprintln!(
                "SKIPPED {}: {role} as uid {}: {}",
                self.test,
                user.uid,
                out.stdout
                    .split_once("REFUSED ")
                    .map_or("refused", |(_, why)| why.trim_end())
            );
            return false;
        }
        assert!(
            out.status.success(),
            "{role} as uid {} failed ({}):\n{}\n{}",
            user.uid,
            out.status,
            out.stdout,
            out.stderr
        );
        true
    }

    /// Runs each step of scenario `name` as its user, in a new directory
    /// of each kind in `kinds`.
    fn scenario(&self, name: &str, kinds: &[Shared]) {
        for &kind in kinds {
            let dir = self.shared(kind, &format!("{name}-{kind:?}"));
            for step in Step::ALL {
                let user = match step {
                    Step::Theirs => kind.other(),
                    Step::Ours | Step::Run => SERVICE_USER,
                };
                if !self.step(user, &format!("{name}/{}", step.name()), &dir) {
                    return;
                }
            }
        }
    }
}

/// Runs scenario `name` as two real users (see the module docs), or says
/// SKIPPED.
fn as_two_users(test: &str, name: &str, kinds: &[Shared]) {
    if let Some(users) = Users::here(test) {
        users.scenario(name, kinds);
    }
}

/// Fails unless this process is `UID:GID` as [`USER_VAR`] says: real,
/// effective and saved ids, no other group, and (Linux) no capability.
fn check_identity() {
    let want = std::env::var(USER_VAR).expect("the user to be");
    let (uid, gid) = want.split_once(':').unwrap();
    let (uid, gid): (u32, u32) = (uid.parse().unwrap(), gid.parse().unwrap());
    use rustix::process::{getegid, geteuid, getgid, getgroups, getuid};
    assert_eq!((getuid().as_raw(), geteuid().as_raw()), (uid, uid));
    assert_eq!((getgid().as_raw(), getegid().as_raw()), (gid, gid));
    let groups = getgroups().unwrap();
    assert!(
        groups.iter().all(|g| g.as_raw() == gid),
        "supplementary groups {groups:?}"
    );
    if let Ok(status) = fs::read_to_string("/proc/self/status") {
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .unwrap_or_else(|| panic!("no {name} in {status}"))
                .split_whitespace()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        };
        assert_eq!(field("Uid:"), vec![uid.to_string(); 4], "{status}");
        assert_eq!(field("Gid:"), vec![gid.to_string(); 4], "{status}");
        let effective = u64::from_str_radix(&field("CapEff:")[0], 16).unwrap();
        assert_eq!(effective, 0, "capabilities left: {status}");
    }
}

/// The children's entry: nothing in an ordinary run; in a child, checks
/// who it is, then runs the step its role names (`SCENARIO/STEP`, or
/// `whoami` for the check alone) in the directory [`DIR_VAR`] names.
#[test]
fn as_a_user() {
    let Some(role) = child::role() else { return };
    check_identity();
    // One mask for every step, whatever the parent's.
    rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o022));
    if role == "whoami" {
        return;
    }
    let dir = PathBuf::from(std::env::var_os(DIR_VAR).expect("the shared directory"));
    let (name, step) = role.split_once('/').expect("SCENARIO/STEP");
    let step = Step::ALL
        .into_iter()
        .find(|s| s.name() == step)
        .unwrap_or_else(|| panic!("no step {step:?}"));
    scenario_named(name)(step, &dir);
}

/// In a child: says that the system refused this step, and why, and ends
/// the child with [`REFUSED`].
fn refused(why: &str) -> ! {
    println!("REFUSED {why}");
    std::io::stdout().flush().unwrap();
    std::process::exit(REFUSED);
}

// ---------------------------------------------------------------------------
// Retention
// ---------------------------------------------------------------------------

/// Five empty files of another user dated in 2099 do not count against
/// `max_log_files(5)`: counted (and never removed, being after the current
/// file), they would have every older log removed, then each file as soon
/// as it is rotated out. They stay, reported.
fn future_dated(step: Step, d: &Path) {
    match step {
        Step::Ours => {
            for day in 1..=4 {
                put(d, &format!("app.2026-01-0{day}.log"), b"ours\n");
            }
        }
        Step::Theirs => {
            for day in 1..=5 {
                put(d, &format!("app.2099-12-0{day}.log"), b"");
            }
        }
        Step::Run => {
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
                let theirs = d.join(format!("app.2099-12-0{day}.log"));
                assert_eq!(uid(&theirs), NOBODY);
            }
            assert!(reported, "the planted names were not reported");
        }
    }
}

#[test]
fn future_dated_files_of_another_user_do_not_make_retention_delete_our_logs() {
    with_chown(
        "future_dated_files_of_another_user_do_not_make_retention_delete_our_logs",
        future_dated,
    );
}

/// One sparse file of another user, 1 TiB as listed, counts for nothing
/// toward `max_total_size`: counted, it would have the sink's older logs
/// removed.
fn huge_sparse(step: Step, d: &Path) {
    let huge = d.join("app.2026-01-03.1.log");
    match step {
        Step::Ours => {
            for day in 1..=3 {
                put(d, &format!("app.2026-01-0{day}.log"), &[b'x'; 100]);
            }
        }
        Step::Theirs => fs::File::create(&huge).unwrap().set_len(1 << 40).unwrap(),
        Step::Run => {
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
            assert_eq!(uid(&huge), NOBODY);
            assert!(reported, "the planted name was not reported");
        }
    }
}

#[test]
fn a_huge_sparse_file_of_another_user_does_not_count_toward_max_total_size() {
    with_chown(
        "a_huge_sparse_file_of_another_user_does_not_count_toward_max_total_size",
        huge_sparse,
    );
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
fn foreign_gz(step: Step, d: &Path) {
    match step {
        Step::Ours => {
            put(d, "app.log", b"our records\n");
            put(d, "app.log.1", b"");
        }
        Step::Theirs => {
            put(d, "app.log.gz", &gzip(b"our records\n"));
        }
        Step::Run => {
            let (logger, guard) = start(Rolling::never(d, "app.log").compress(true));
            let reported = until_reported(&logger, Duration::from_secs(3));
            drop(guard);
            assert_eq!(
                fs::read(d.join("app.log")).ok().as_deref(),
                Some(&b"our records\n"[..]),
                "our log was removed or changed"
            );
            assert_eq!(uid(&d.join("app.log.gz")), NOBODY);
            assert!(reported, "the planted archive was not reported");
        }
    }
}

#[cfg(feature = "gzip")]
#[test]
fn a_gz_of_another_user_does_not_get_our_log_deleted() {
    with_chown(
        "a_gz_of_another_user_does_not_get_our_log_deleted",
        foreign_gz,
    );
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
fn foreign_rotated(step: Step, d: &Path) {
    match step {
        Step::Ours => {
            put(d, "app.log.1", b"");
        }
        Step::Theirs => {
            put(d, "app.log", b"theirs\n");
        }
        Step::Run => {
            let (logger, guard) =
                start(Rolling::never(d, "app.log").compress(true).max_log_files(1));
            let reported = until_reported(&logger, Duration::from_secs(3));
            drop(guard);
            assert_eq!(names(d), ["app.log", "app.log.1"]);
            assert_eq!(fs::read(d.join("app.log")).unwrap(), b"theirs\n");
            assert_eq!(uid(&d.join("app.log")), NOBODY);
            assert!(reported, "the planted file was not reported");
            let current = fs::read_to_string(d.join("app.log.1")).unwrap();
            assert_eq!(
                current.matches("a file of another user").count(),
                1,
                "reported once: {current}"
            );
        }
    }
}

#[cfg(feature = "gzip")]
#[test]
fn a_file_of_another_user_named_like_a_rotated_one_is_neither_compressed_nor_removed() {
    with_chown(
        "a_file_of_another_user_named_like_a_rotated_one_is_neither_compressed_nor_removed",
        foreign_rotated,
    );
}

// ---------------------------------------------------------------------------
// Modes, indices
// ---------------------------------------------------------------------------

/// A new file never takes the bits of a file the sink did not make: a
/// planted `0600` file named like the newest log does not make the new
/// log unreadable by the group that reads the logs (a new file takes at
/// most the bits of the sink's own newest file, so only a narrower file
/// changes anything).
fn planted_mode(step: Step, d: &Path) {
    match step {
        Step::Ours => {}
        Step::Theirs => {
            let planted = put(d, "app.2026-01-04.log", b"");
            fs::set_permissions(&planted, fs::Permissions::from_mode(0o600)).unwrap();
        }
        Step::Run => {
            let (logger, guard) = start(daily(d));
            log(&logger, 1);
            drop(guard);
            let current = d.join("app.2026-01-05.log");
            assert_eq!(
                mode(&current),
                0o640 & umask_allows(d),
                "{:o}",
                mode(&current)
            );
            assert_eq!(mode(&d.join("app.2026-01-04.log")), 0o600);
        }
    }
}

#[test]
fn new_files_do_not_take_the_mode_of_a_planted_file() {
    with_chown(
        "new_files_do_not_take_the_mode_of_a_planted_file",
        planted_mode,
    );
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
fn last_index(step: Step, d: &Path) {
    match step {
        Step::Ours => {}
        Step::Theirs => {
            put(d, "app.log.4294967295", b"");
        }
        Step::Run => {
            let (logger, guard) = start(Rolling::never(d, "app.log"));
            log(&logger, 3);
            drop(guard);
            assert_eq!(logger.stats().sinks[0].records_written, 3);
            assert!(d.join("app.log").exists(), "{:?}", names(d));
            assert_eq!(uid(&d.join("app.log.4294967295")), NOBODY);
        }
    }
}

#[test]
fn a_planted_name_with_the_last_index_does_not_panic() {
    with_chown(
        "a_planted_name_with_the_last_index_does_not_panic",
        last_index,
    );
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
    swapped_dir_checks(&logger, guard, parent.path());
}

/// After the swap: the sink wrote on in the directory it opened, now at
/// `logs.moved`, and left the files where the link leads alone.
fn swapped_dir_checks(logger: &Logger, guard: nowait_core::Guard, parent: &Path) {
    let (moved, elsewhere) = (parent.join("logs.moved"), parent.join("elsewhere"));
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

/// The swap as two users: the service's directory `logs` in a directory
/// the other user may write too; the service starts, logs, and waits on
/// its stdin (having said `ready`) while the other user moves `logs` away
/// and links `elsewhere`, a directory of the service's user, in its place.
fn swapped_dir(step: Step, parent: &Path) {
    let (logs, elsewhere) = (parent.join("logs"), parent.join("elsewhere"));
    match step {
        Step::Ours => {
            fs::create_dir(&elsewhere).unwrap();
            for name in ["app.log", "app.log.1", "app.log.2"] {
                put(&elsewhere, name, b"not a log\n");
            }
        }
        Step::Theirs => {
            fs::rename(&logs, parent.join("logs.moved")).unwrap();
            std::os::unix::fs::symlink(&elsewhere, &logs).unwrap();
        }
        Step::Run => {
            let (logger, guard) = start(
                Rolling::never(&logs, "app.log")
                    .max_size(64)
                    .max_log_files(2),
            );
            log(&logger, 2);
            println!("ready");
            std::io::stdout().flush().unwrap();
            let mut go = String::new();
            std::io::stdin().lock().read_line(&mut go).unwrap();
            assert_eq!(go, "go\n");
            assert!(fs::symlink_metadata(&logs).unwrap().is_symlink());
            log(&logger, 40);
            swapped_dir_checks(&logger, guard, parent);
        }
    }
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

/// The bytes of [`precious`]'s file.
fn precious_bytes() -> Vec<u8> {
    let mut bytes = vec![0u8; 64];
    bytes.extend_from_slice(b"precious data of the user\n");
    bytes
}

/// A file of the user, `0600`, whose first bytes are zero: what a durable
/// file whose creation was cut short looks like at its start.
fn precious(path: &Path) -> Vec<u8> {
    let bytes = precious_bytes();
    fs::write(path, &bytes).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o600)).unwrap();
    bytes
}

/// The refusal of a hard link at the durable path, and the linked file
/// left as it was.
fn hard_link_refused(dir: &Path, ring: &Path, victim: &Path, bytes: &[u8]) {
    let err = durable(dir, ring).build().unwrap_err();
    let text = format!("{err} {:?}", std::error::Error::source(&err));
    assert!(text.contains("hard links"), "{text}");
    assert_eq!(
        fs::read(victim).unwrap(),
        bytes,
        "the linked file was changed"
    );
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
    hard_link_refused(dir.path(), &ring, &victim, &bytes);
}

/// The hard link as two users: the other user links the service's
/// private file at the durable path. Systems that protect hard links
/// (Linux's `fs.protected_hardlinks`) refuse the link itself.
fn durable_hard_link(step: Step, d: &Path) {
    let (victim, ring) = (d.join("victim"), d.join("ring.nowait"));
    match step {
        Step::Ours => {
            precious(&victim);
        }
        Step::Theirs => match fs::hard_link(&victim, &ring) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => refused(&format!(
                "the system does not let a user link another user's file ({e}; \
                 Linux: fs.protected_hardlinks = 1): the attack cannot be made here"
            )),
            Err(e) => panic!("linking: {e}"),
        },
        Step::Run => {
            assert_eq!(fs::metadata(&ring).unwrap().nlink(), 2);
            assert_eq!(uid(&ring), SERVICE);
            hard_link_refused(d, &ring, &victim, &precious_bytes());
        }
    }
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

// ---------------------------------------------------------------------------
// As two real users
// ---------------------------------------------------------------------------

/// The scenarios above, each step a process of the user it belongs to (see
/// the module docs).
mod two_users {
    use super::*;

    #[test]
    fn future_dated_files_of_another_user_do_not_make_retention_delete_our_logs() {
        as_two_users(
            "two_users::future_dated_files_of_another_user_do_not_make_retention_delete_our_logs",
            "future_dated",
            &[Shared::Sticky, Shared::Group],
        );
    }

    #[test]
    fn a_huge_sparse_file_of_another_user_does_not_count_toward_max_total_size() {
        as_two_users(
            "two_users::a_huge_sparse_file_of_another_user_does_not_count_toward_max_total_size",
            "huge_sparse",
            &[Shared::Sticky, Shared::Group],
        );
    }

    #[cfg(feature = "gzip")]
    #[test]
    fn a_gz_of_another_user_does_not_get_our_log_deleted() {
        as_two_users(
            "two_users::a_gz_of_another_user_does_not_get_our_log_deleted",
            "foreign_gz",
            &[Shared::Sticky, Shared::Group],
        );
    }

    #[cfg(feature = "gzip")]
    #[test]
    fn a_file_of_another_user_named_like_a_rotated_one_is_neither_compressed_nor_removed() {
        as_two_users(
            "two_users::a_file_of_another_user_named_like_a_rotated_one_is_neither_compressed_nor_removed",
            "foreign_rotated",
            &[Shared::Sticky, Shared::Group],
        );
    }

    #[test]
    fn new_files_do_not_take_the_mode_of_a_planted_file() {
        as_two_users(
            "two_users::new_files_do_not_take_the_mode_of_a_planted_file",
            "planted_mode",
            &[Shared::Sticky, Shared::Group],
        );
    }

    #[test]
    fn a_planted_name_with_the_last_index_does_not_panic() {
        as_two_users(
            "two_users::a_planted_name_with_the_last_index_does_not_panic",
            "last_index",
            &[Shared::Sticky, Shared::Group],
        );
    }

    /// In a sticky directory the other user cannot link the service's
    /// file where the system protects links: SKIPPED there.
    #[test]
    fn a_hard_link_at_the_durable_path_is_refused() {
        as_two_users(
            "two_users::a_hard_link_at_the_durable_path_is_refused",
            "durable_hard_link",
            &[Shared::Sticky],
        );
    }

    /// Only where the other user may rename the service's directory:
    /// a group-writable parent (a sticky one forbids it).
    #[test]
    fn a_symlink_swapped_in_for_the_log_directory_does_not_redirect_creates_or_deletes() {
        let test = "two_users::a_symlink_swapped_in_for_the_log_directory_does_not_redirect_creates_or_deletes";
        let Some(users) = Users::here(test) else {
            return;
        };
        let parent = users.shared(Shared::Group, "swap");
        let name = "swapped_dir";
        assert!(users.step(SERVICE_USER, &format!("{name}/ours"), &parent));
        let mut service = users
            .child(SERVICE_USER, &format!("{name}/run"), &parent)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .capture_stderr()
            .spawn();
        let stdout = service.wait_for_line("ready");
        assert!(users.step(Shared::Group.other(), &format!("{name}/theirs"), &parent));
        // A service that failed already has closed its stdin: its
        // output says why.
        let _ = service.stdin().write_all(b"go\n");
        let out = service.output();
        drop(stdout);
        assert!(out.status.success(), "the service: {}", out.stderr);
    }
}
