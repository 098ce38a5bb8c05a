//! The standard streams ([`Sink::stdout`], [`Sink::stderr`]): opened on a
//! descriptor of the writer's own that never blocks where the system can
//! give one, through an I/O thread of their own where not (see
//! [`crate::sys`] for how each system does it). What the system opened
//! becomes an [`Opened`] in [`Opened::from_sys`], shared with file sinks
//! whose path is a terminal or a pipe.
//!
//! [`Sink::stdout`]: crate::sink::Sink::stdout
//! [`Sink::stderr`]: crate::sink::Sink::stderr

use std::io;

use super::Opened;
use crate::sys;

/// Opens standard output (1) or error (2) for writing without blocking
/// where possible, through an I/O thread of its own where not.
pub(super) fn open_stdio(which: u8) -> io::Result<Opened> {
    Opened::from_sys(sys::open_stdio(which)?, None)
}

// Unix only: pipes are Unix files; the relay that Windows uses for the
// same outputs is tested in `sys::relay`.
#[cfg(all(test, unix, not(miri)))]
mod tests {
    use std::fs::File;
    use std::os::fd::OwnedFd;

    use rustix::fs::OFlags;

    use crate::sink::{Output, WriteOutcome};
    use crate::sys::relay::{Relay, WriteTarget};
    use crate::sys::Descriptor;

    fn pipe() -> (OwnedFd, OwnedFd) {
        rustix::pipe::pipe().unwrap()
    }

    #[test]
    fn relayed_pipe_never_blocks_the_writer_on_a_full_pipe() {
        let (read, write) = pipe();
        let relay = Relay::spawn("t", Box::new(WriteTarget(File::from(write)))).unwrap();
        let mut out = Output::Relayed(relay);
        let chunk = vec![b'x'; 1 << 20];
        let mut total = 0;
        // A blocking pipe with nobody reading: the relay thread blocks in
        // its write, this thread never does.
        let start = std::time::Instant::now();
        while start.elapsed() < std::time::Duration::from_millis(300) {
            let t = std::time::Instant::now();
            match out.write(&chunk[total..]) {
                WriteOutcome::Wrote(n) => total += n,
                WriteOutcome::WouldBlock => std::thread::sleep(std::time::Duration::from_millis(5)),
                WriteOutcome::Failed(e)
                | WriteOutcome::Rejected(e)
                | WriteOutcome::Refused { error: e, .. } => panic!("{e}"),
            }
            assert!(
                t.elapsed() < std::time::Duration::from_millis(50),
                "a write waited"
            );
        }
        // What the pipe took is reported, and no more than it took.
        assert!(total >= 4096 && total < chunk.len(), "{total}");
        drop(read);
    }

    #[test]
    fn pipe_room_shrinks_as_it_fills() {
        let (_read, write) = pipe();
        rustix::fs::fcntl_setfl(&write, OFlags::NONBLOCK).unwrap();
        let mut out = Output::NonBlocking {
            fd: Descriptor::from(write),
            pipe: true,
        };
        if cfg!(any(nowait_portable, not(target_os = "linux"))) {
            // The portable backend cannot tell a pipe's room.
            assert_eq!(out.room(), None);
            return;
        }
        let before = out.room().unwrap();
        assert!(matches!(out.write(b"hello\n"), WriteOutcome::Wrote(6)));
        assert_eq!(out.room().unwrap(), before - 6);
    }
}
