//! The writer's sleep on Unix: `poll` on the doorbell and on the sinks
//! waiting for room, with a timeout.

use std::os::fd::BorrowedFd;
use std::time::Duration;

use rustix::event::{PollFd, PollFlags};

use super::Doorbell;

/// Something to poll for room (`POLLOUT`): a sink's descriptor.
pub(crate) type Waitable<'a> = BorrowedFd<'a>;

/// Sleeps until the doorbell rings (if given), one of `waits` has room, one
/// of `reads` has bytes to read (an answer awaited), or `timeout` passes.
/// Clears the doorbell if it rang.
pub(crate) fn sleep(
    bell: Option<&Doorbell>,
    waits: &[Waitable<'_>],
    reads: &[Waitable<'_>],
    timeout: Duration,
) {
    if cfg!(miri) {
        // Miri runs no `poll`; a short sleep is a correct (slower) stand-in.
        std::thread::sleep(timeout.min(Duration::from_millis(1)));
        return;
    }
    let mut fds: Vec<PollFd<'_>> = Vec::with_capacity(waits.len() + reads.len() + 1);
    if let Some(bell) = bell {
        fds.push(PollFd::from_borrowed_fd(bell.fd(), PollFlags::IN));
    }
    for fd in waits {
        fds.push(PollFd::from_borrowed_fd(*fd, PollFlags::OUT));
    }
    for fd in reads {
        fds.push(PollFd::from_borrowed_fd(*fd, PollFlags::IN));
    }
    if fds.is_empty() {
        std::thread::sleep(timeout);
        return;
    }
    // Some systems refuse very long timeouts (EINVAL past INT_MAX ms); the
    // writer sleeps again after a spurious return.
    let timeout = timeout.min(Duration::from_secs(3600));
    let ts = rustix::time::Timespec {
        tv_sec: i64::try_from(timeout.as_secs()).unwrap_or(i64::MAX),
        tv_nsec: i64::from(timeout.subsec_nanos()),
    };
    let woke = matches!(rustix::event::poll(&mut fds, Some(&ts)), Ok(n) if n > 0);
    if let Some(bell) = bell {
        if woke && !fds[0].revents().is_empty() {
            bell.clear();
        }
    }
}
