//! This test binary re-run as a child process, for the tests that need a
//! process of their own (a crash, `fork`, a signal, `exit`, a stalled
//! stdout, a kill at a random point).
//!
//! The parent describes the child with [`Child`] and starts it
//! ([`Child::spawn`], [`Child::run`]). The child is the same test binary
//! running one test, the entry: a `#[test]` that does nothing in an
//! ordinary run and does the child's work when [`role`] says it is the
//! child. In a test file, both functions below are `#[test]`s:
//!
//! ```no_run
//! use nowait_testkit::child::{self, Child};
//!
//! fn child_entry() {
//!     let Some(case) = child::role() else { return };
//!     println!("child for {case}");
//!     std::process::exit(3);
//! }
//!
//! fn exit_code_is_kept() {
//!     let out = Child::new("child_entry", "exit").run();
//!     assert_eq!(out.status.code(), Some(3));
//!     assert!(out.stdout.contains("child for exit"));
//! }
//! ```
//!
//! # Guarantees
//!
//! - The child runs the entry only (`--exact ENTRY --nocapture
//!   --test-threads=1`), with [`ROLE_VAR`] set to the role and the
//!   variables given with [`Child::env`]; the rest of the environment is
//!   inherited.
//! - With [`Child::user`] (Unix, as root) the child is a process of
//!   another user: that user and group, no supplementary groups.
//! - Its stdin, stdout and stderr are null unless the parent asks for
//!   more: a pipe it handles itself ([`Child::stdout`] and the like), or
//!   a capture ([`Child::capture_stdout`], [`Child::capture_stderr`]),
//!   read on a thread of its own from the start so that the child never
//!   blocks on it.
//! - Every wait is bounded: [`Running::wait`], [`Running::wait_for_line`]
//!   and [`Running::output`] each wait at most the timeout
//!   ([`Child::timeout`], [`DEFAULT_TIMEOUT`] by default); past it they
//!   kill the child and panic.
//! - What is killed: on Unix the child leads a process group of its own,
//!   and a kill ([`Running::kill`], a timeout, a drop) sends `SIGKILL` to
//!   that whole group (a forked grandchild too) as long as the child has
//!   not been reaped, so the group's id cannot belong to another process
//!   yet. Once a wait has returned its status, only what the child left
//!   behind in its output pipes is waited for (bounded), nothing is
//!   killed. On Windows the child alone is terminated.
//! - A kill planned with [`Child::kill_after`] is sent by the waits, on
//!   time (they poll every 2 ms, and wake at the planned instant).
//! - A [`Running`] dropped before its status was taken (a failing
//!   assertion, a panic) kills and reaps the child: a failing test leaves
//!   no process behind.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Read};
use std::process::{ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The environment variable that makes a run of the test binary the
/// child; its value is the role ([`role`]).
pub const ROLE_VAR: &str = "NOWAIT_TEST_CHILD";

/// How long each wait lasts at most, unless [`Child::timeout`] says
/// otherwise.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// In the child: the role the parent gave it ([`Child::new`]); `None`
/// in an ordinary test run.
///
/// # Examples
///
/// ```
/// if let Some(case) = nowait_testkit::child::role() {
///     println!("running as the child for {case}");
/// }
/// ```
pub fn role() -> Option<String> {
    std::env::var(ROLE_VAR).ok()
}

/// Whether this process is a child started by [`Child`].
///
/// # Examples
///
/// ```
/// assert_eq!(nowait_testkit::child::is_child(), nowait_testkit::child::role().is_some());
/// ```
pub fn is_child() -> bool {
    std::env::var_os(ROLE_VAR).is_some()
}

/// A child process to start: this test binary running the test `entry`
/// in the role `role` (see the [module docs](self) for what is
/// guaranteed).
///
/// # Examples
///
/// ```no_run
/// use nowait_testkit::child::Child;
/// use std::time::Duration;
///
/// let out = Child::new("child_entry", "crash")
///     .env("NOWAIT_FILE", "/tmp/out.log")
///     .timeout(Duration::from_secs(30))
///     .run();
/// assert!(!out.status.success(), "{}", out.stderr);
/// ```
#[derive(Debug)]
pub struct Child {
    cmd: Command,
    timeout: Duration,
    capture_stdout: bool,
    capture_stderr: bool,
    kill_after: Option<Duration>,
}

impl Child {
    /// This test binary running the test named `entry` alone, with
    /// [`ROLE_VAR`] set to `role`; stdin, stdout and stderr null.
    ///
    /// # Panics
    ///
    /// If the path of the running binary is unknown.
    pub fn new(entry: &str, role: &str) -> Child {
        let exe = std::env::current_exe().expect("the test binary's path");
        Child::of_binary(&exe, entry, role)
    }

    /// As [`Child::new`], with a copy of this test binary at `exe`
    /// (for a child of another user, who may not reach the original).
    pub fn of_binary(exe: &std::path::Path, entry: &str, role: &str) -> Child {
        let mut cmd = Command::new(exe);
        cmd.args(["--exact", entry, "--nocapture", "--test-threads=1"])
            .env(ROLE_VAR, role)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        #[cfg(unix)]
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        Child {
            cmd,
            timeout: DEFAULT_TIMEOUT,
            capture_stdout: false,
            capture_stderr: false,
            kill_after: None,
        }
    }

    /// Sets an environment variable for the child.
    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Child {
        self.cmd.env(key, value);
        self
    }

    /// The child's stdin (null by default); a pipe is taken with
    /// [`Running::stdin`].
    pub fn stdin(mut self, cfg: impl Into<Stdio>) -> Child {
        self.cmd.stdin(cfg);
        self
    }

    /// The child's stdout (null by default); a pipe is the caller's to
    /// read or leave unread ([`Running::stdout`]).
    pub fn stdout(mut self, cfg: impl Into<Stdio>) -> Child {
        self.cmd.stdout(cfg);
        self.capture_stdout = false;
        self
    }

    /// The child's stderr (null by default); a pipe is the caller's
    /// ([`Running::stderr`]).
    pub fn stderr(mut self, cfg: impl Into<Stdio>) -> Child {
        self.cmd.stderr(cfg);
        self.capture_stderr = false;
        self
    }

    /// Reads the child's stdout on a thread of its own from the start,
    /// for [`Running::output`].
    pub fn capture_stdout(mut self) -> Child {
        self.cmd.stdout(Stdio::piped());
        self.capture_stdout = true;
        self
    }

    /// Reads the child's stderr on a thread of its own from the start,
    /// for [`Running::output`].
    pub fn capture_stderr(mut self) -> Child {
        self.cmd.stderr(Stdio::piped());
        self.capture_stderr = true;
        self
    }

    /// Kills the child (as [`Running::kill`]) once `after` has passed
    /// since it started, unless it ended first: the kill comes from the
    /// waits ([`Running::wait`], [`Running::output`]), on time. `None`:
    /// no such kill.
    pub fn kill_after(mut self, after: impl Into<Option<Duration>>) -> Child {
        self.kill_after = after.into();
        self
    }

    /// How long each wait lasts at most ([`DEFAULT_TIMEOUT`] if not set).
    pub fn timeout(mut self, limit: Duration) -> Child {
        self.timeout = limit;
        self
    }

    /// Runs the child as user `uid` and group `gid`, with no
    /// supplementary groups (std drops them when it changes the user, and
    /// sets the real, effective and saved ids alike): a process of another
    /// user, for tests of what users can do to each other. Needs root (or
    /// `CAP_SETUID` and `CAP_SETGID`), and a test binary that user may
    /// run; [`Child::try_spawn`] says when either is missing.
    #[cfg(unix)]
    pub fn user(mut self, uid: u32, gid: u32) -> Child {
        use std::os::unix::process::CommandExt;
        self.cmd.uid(uid).gid(gid);
        self
    }

    /// Starts the child.
    ///
    /// # Panics
    ///
    /// If the process cannot be started.
    pub fn spawn(self) -> Running {
        self.try_spawn().expect("starting the child process")
    }

    /// Starts the child, or says why it cannot be (the binary cannot be
    /// run, the user cannot be changed).
    ///
    /// # Errors
    ///
    /// The error of `fork`, of changing the user or of `exec`.
    pub fn try_spawn(mut self) -> std::io::Result<Running> {
        let mut child = self.cmd.spawn()?;
        let kill_at = self.kill_after.map(|after| Instant::now() + after);
        let stdout = match self.capture_stdout {
            true => Some(read_on_a_thread(child.stdout.take().unwrap())),
            false => None,
        };
        let stderr = match self.capture_stderr {
            true => Some(read_on_a_thread(child.stderr.take().unwrap())),
            false => None,
        };
        Ok(Running {
            child,
            limit: self.timeout,
            kill_at,
            status: None,
            stdout,
            stderr,
        })
    }

    /// Starts the child with stdout and stderr captured and waits for its
    /// end ([`Running::output`]).
    ///
    /// # Panics
    ///
    /// If the child cannot be started, or does not end (with its output
    /// closed) within the timeout; the child is killed first.
    pub fn run(self) -> Output {
        self.capture_stdout().capture_stderr().spawn().output()
    }
}

/// Reads `r` to its end on a thread of its own; the bytes arrive on the
/// channel.
fn read_on_a_thread(mut r: impl Read + Send + 'static) -> mpsc::Receiver<Vec<u8>> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut all = Vec::new();
        let _ = r.read_to_end(&mut all);
        let _ = tx.send(all);
    });
    rx
}

/// The number after `prefix` on the last line of `text` that starts
/// with it (a child's progress report, such as `acked N`); `None` if no
/// line does.
///
/// # Panics
///
/// If a line starting with `prefix` does not go on with a number.
///
/// # Examples
///
/// ```
/// let out = "test child_entry ...\nacked 0\nacked 256\n";
/// assert_eq!(nowait_testkit::child::last_number(out, "acked "), Some(256));
/// ```
pub fn last_number(text: &str, prefix: &str) -> Option<u64> {
    let mut last = None;
    for n in text.lines().filter_map(|l| l.strip_prefix(prefix)) {
        let parsed = n.parse();
        last = Some(parsed.unwrap_or_else(|_| panic!("not a number after {prefix:?}: {n:?}")));
    }
    last
}

/// What a child that ended left: its status and what it captured.
#[derive(Debug)]
pub struct Output {
    /// How the child ended.
    pub status: ExitStatus,
    /// Its stdout, if captured (else empty), invalid UTF-8 replaced.
    pub stdout: String,
    /// Its stderr, if captured (else empty), invalid UTF-8 replaced.
    pub stderr: String,
}

/// A started child (see the [module docs](self)). Dropping it before its
/// status was taken kills it (on Unix with its process group) and reaps
/// it.
#[derive(Debug)]
pub struct Running {
    child: std::process::Child,
    limit: Duration,
    /// When the child is to be killed ([`Child::kill_after`]).
    kill_at: Option<Instant>,
    /// Set once the child is reaped: from then on its id may be reused,
    /// and nothing is killed.
    status: Option<ExitStatus>,
    stdout: Option<mpsc::Receiver<Vec<u8>>>,
    stderr: Option<mpsc::Receiver<Vec<u8>>>,
}

impl Running {
    /// The child's process id (on Unix also its process group's).
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Takes the write end of the child's stdin pipe; dropping it closes
    /// the child's stdin.
    ///
    /// # Panics
    ///
    /// If stdin is not a pipe ([`Child::stdin`]) or was taken already.
    pub fn stdin(&mut self) -> ChildStdin {
        self.child
            .stdin
            .take()
            .expect("stdin is a pipe, not taken yet")
    }

    /// Takes the read end of the child's stdout pipe.
    ///
    /// # Panics
    ///
    /// If stdout is not a pipe ([`Child::stdout`]), is captured, or was
    /// taken already.
    pub fn stdout(&mut self) -> ChildStdout {
        self.child
            .stdout
            .take()
            .expect("stdout is a pipe, not taken yet")
    }

    /// Takes the read end of the child's stderr pipe.
    ///
    /// # Panics
    ///
    /// If stderr is not a pipe ([`Child::stderr`]), is captured, or was
    /// taken already.
    pub fn stderr(&mut self) -> ChildStderr {
        self.child
            .stderr
            .take()
            .expect("stderr is a pipe, not taken yet")
    }

    /// Reads the child's stdout pipe up to the first line that contains
    /// `needle` and returns the pipe, still open, to read on or to drop
    /// (closing it). Keep it while the child may still write.
    ///
    /// # Panics
    ///
    /// After killing the child: if stdout ends before such a line, or none
    /// comes within the timeout; also if stdout is not a pipe.
    pub fn wait_for_line(&mut self, needle: &str) -> BufReader<ChildStdout> {
        let mut out = BufReader::new(self.stdout());
        let (tx, rx) = mpsc::channel();
        let wanted = needle.to_owned();
        std::thread::spawn(move || {
            let mut seen = String::new();
            loop {
                let mut line = String::new();
                match out.read_line(&mut line) {
                    Ok(0) | Err(_) => {
                        let _ = tx.send(Err(seen));
                        return;
                    }
                    Ok(_) if line.contains(&wanted) => {
                        let _ = tx.send(Ok(out));
                        return;
                    }
                    Ok(_) => seen.push_str(&line),
                }
            }
        });
        match rx.recv_timeout(self.limit) {
            Ok(Ok(out)) => out,
            Ok(Err(seen)) => {
                self.kill();
                panic!("the child's stdout ended before a line with {needle:?}:\n{seen}");
            }
            Err(_) => {
                self.kill();
                panic!(
                    "the child wrote no line with {needle:?} within {:?}",
                    self.limit
                );
            }
        }
    }

    /// The child's status if it has ended (reaping it), without waiting.
    pub fn try_wait(&mut self) -> Option<ExitStatus> {
        if self.status.is_none() {
            self.status = self.child.try_wait().expect("polling the child");
        }
        self.status
    }

    /// Waits for the child to end, at most the timeout, and returns its
    /// status.
    ///
    /// # Panics
    ///
    /// If the child is still running after the timeout; it is killed
    /// first (on Unix with its process group).
    pub fn wait(&mut self) -> ExitStatus {
        let deadline = Instant::now() + self.limit;
        loop {
            if let Some(status) = self.try_wait() {
                return status;
            }
            let now = Instant::now();
            if now > deadline {
                self.kill();
                panic!("the child did not end within {:?}", self.limit);
            }
            let mut nap = Duration::from_millis(2);
            if let Some(at) = self.kill_at {
                if now >= at {
                    self.kill_at = None;
                    self.kill();
                    continue;
                }
                nap = nap.min(at - now);
            }
            std::thread::sleep(nap);
        }
    }

    /// Waits for the child's end ([`wait`](Self::wait)) and for the end of
    /// its captured output (a grandchild may hold the pipes open), within
    /// the timeout each, and returns both. What was not captured comes
    /// back empty.
    ///
    /// # Panics
    ///
    /// As [`wait`](Self::wait); also if the captured output does not end
    /// within the timeout after the child did.
    pub fn output(mut self) -> Output {
        let status = self.wait();
        let limit = self.limit;
        let deadline = Instant::now() + limit;
        let collect = |rx: Option<mpsc::Receiver<Vec<u8>>>| -> String {
            let Some(rx) = rx else {
                return String::new();
            };
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
                Err(_) => panic!("the child's output was not closed within {limit:?} of its end"),
            }
        };
        let stdout = collect(self.stdout.take());
        let stderr = collect(self.stderr.take());
        Output {
            status,
            stdout,
            stderr,
        }
    }

    /// Kills the child (on Unix its whole process group, with `SIGKILL`)
    /// unless it was reaped already; does not wait: [`wait`](Self::wait)
    /// then returns how it died.
    pub fn kill(&mut self) {
        if self.status.is_some() {
            return;
        }
        #[cfg(unix)]
        {
            let group = -(self.child.id() as libc::pid_t);
            // SAFETY: kill(2) touches no memory of ours. The child leads
            // the group (`process_group(0)`) and is not reaped yet, so the
            // group id is still its own.
            unsafe { libc::kill(group, libc::SIGKILL) };
        }
        let _ = self.child.kill();
    }

    /// Sends `signal` to the child alone (not its group).
    ///
    /// # Panics
    ///
    /// If the child was reaped already, or the signal cannot be sent.
    #[cfg(unix)]
    pub fn signal(&self, signal: i32) {
        assert!(self.status.is_none(), "signal to a child already reaped");
        // SAFETY: kill(2) touches no memory of ours; the child is not
        // reaped, so its id is still its own.
        let r = unsafe { libc::kill(self.child.id() as libc::pid_t, signal) };
        assert_eq!(r, 0, "kill: {}", std::io::Error::last_os_error());
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.status.is_none() {
            self.kill();
            let _ = self.child.wait();
        }
    }
}
