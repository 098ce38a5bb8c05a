//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::io::{self, Write};
use std::process::{Child, ExitStatus};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// An in-memory sink whose contents the test can read.
#[derive(Clone, Default)]
pub struct Shared(pub Arc<Mutex<Vec<u8>>>);

impl Shared {
    pub fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
    pub fn lines(&self) -> Vec<String> {
        self.text().lines().map(str::to_owned).collect()
    }
}

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A sink that takes `delay` per write call and at most `chunk` bytes each.
pub struct Slow {
    pub inner: Shared,
    pub delay: Duration,
    pub chunk: usize,
}

impl Write for Slow {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        std::thread::sleep(self.delay);
        let n = buf.len().min(self.chunk);
        self.inner.write(&buf[..n])
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A sink that fails its first `fail_calls` write calls, then works.
pub struct Flaky {
    pub inner: Shared,
    pub fail_calls: usize,
}

impl Write for Flaky {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.fail_calls > 0 {
            self.fail_calls -= 1;
            return Err(disk_full());
        }
        self.inner.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A full disk, as every platform spells it (the raw codes differ:
/// `ENOSPC` is 28 on Unix, where Windows' 28 is "the printer is out of
/// paper").
pub fn disk_full() -> io::Error {
    io::Error::other("No space left on device (injected)")
}

/// A reader that went away, as every platform spells it.
pub fn broken_pipe() -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, "Broken pipe (injected)")
}

/// Waits for `child` at most `limit`; past it kills it (and the process
/// group it leads, if it leads one: a forked grandchild too) and panics.
pub fn wait_bounded(child: &mut Child, limit: Duration) -> ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        if Instant::now() > deadline {
            kill_group(child);
            panic!("child did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Kills `child`'s process group (if it leads one) and `child`.
pub fn kill_group(child: &mut Child) {
    let _ = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .stderr(std::process::Stdio::null())
        .status();
    let _ = child.kill();
    let _ = child.wait();
}
