//! Helpers shared by the integration tests.
#![allow(dead_code)]

use std::io::{self, Write};
use std::sync::{Arc, Mutex};
use std::time::Duration;

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
            return Err(io::Error::from_raw_os_error(libc_enospc()));
        }
        self.inner.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn libc_enospc() -> i32 {
    28
}
