//! nowait-core's OTLP test receiver (`tests/otlp_receiver.py`, which
//! decodes every request with OpenTelemetry's own protobuf types), run as
//! a child process on loopback and killed on drop.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// A running receiver: the port it listens on, and the file it writes
/// each request and record to.
///
/// The receiver's output has one line per request
/// (`REQ status rejected _ gzip time head`) followed by one line per
/// record (`REC` accepted, `REJ` refused for good, `NAK` not answered or
/// to be retried, then the record as the receiver decoded it).
///
/// # Examples
///
/// ```no_run
/// let dir = tempfile::tempdir().unwrap();
/// // Answers 503 once, then 200 to everything.
/// let rx = nowait_testkit::receiver::Receiver::start(dir.path(), "503:1,ok", 0);
/// println!("send to {}", rx.url());
/// let accepted = rx.output().lines().filter(|l| l.starts_with("REC ")).count();
/// # let _ = accepted;
/// ```
#[derive(Debug)]
pub struct Receiver {
    child: Child,
    /// The port it listens on (127.0.0.1).
    pub port: u16,
    out: PathBuf,
}

impl Receiver {
    /// Whether the receiver can run here (python3 with
    /// `opentelemetry-proto`); if not, says so through
    /// [`skip_missing_tool`](crate::skip_missing_tool), which fails the
    /// test when the tools are required.
    pub fn available() -> bool {
        let ok = Command::new("python3")
            .args([
                "-c",
                "import opentelemetry.proto.collector.logs.v1.logs_service_pb2",
            ])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            crate::skip_missing_tool(
                "python3 with opentelemetry-proto is not installed (run ci/deps-otlp.sh)",
            );
        }
        ok
    }

    /// Starts the receiver with its answer `script` (for example
    /// `"503:1,503:1,ok"`) on `port` (0: a free one), writing to
    /// `dir/received.txt` (appending: receivers started one after another
    /// in `dir` share one output).
    ///
    /// # Panics
    ///
    /// If `python3` cannot be run or the receiver does not say its port.
    pub fn start(dir: &Path, script: &str, port: u16) -> Receiver {
        Receiver::start_with(dir, script, port, &[])
    }

    /// [`start`](Self::start) with the receiver's options
    /// (`--require-header=...`, `--tls=...`).
    ///
    /// # Panics
    ///
    /// As [`start`](Self::start).
    pub fn start_with(dir: &Path, script: &str, port: u16, options: &[String]) -> Receiver {
        let out = dir.join("received.txt");
        let script_path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../nowait-core/tests/otlp_receiver.py");
        let mut child = Command::new("python3")
            .arg(&script_path)
            .arg(port.to_string())
            .arg(&out)
            .arg(script)
            .args(options)
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped"))
            .read_line(&mut line)
            .expect("the receiver's first line");
        let port = line
            .strip_prefix("PORT ")
            .and_then(|p| p.trim().parse().ok())
            .unwrap_or_else(|| panic!("receiver said {line:?}"));
        Receiver { child, port, out }
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Kills the receiver (SIGKILL) and reaps it.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// What the receiver wrote so far (empty if nothing yet).
    pub fn output(&self) -> String {
        std::fs::read_to_string(&self.out).unwrap_or_default()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.kill();
    }
}
