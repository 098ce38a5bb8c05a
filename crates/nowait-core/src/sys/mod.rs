//! Everything that differs between operating systems, one small portable
//! interface per facility, as std's `sys` and mio's keep theirs. The rest of
//! the crate (writer, formats, ring, front ends) has no `cfg(target_os)`.
//!
//! | facility | Linux | Unix, portable | Windows |
//! |---|---|---|---|
//! | full-ring and flush wait ([`wait`], [`wake_all`]) | futex (`wait_futex.rs`) | parking lot (`wait_park.rs`) | parking lot |
//! | writer's doorbell and sleep ([`Doorbell`], [`sleep`]) | eventfd + `poll` | self-pipe + `poll` | flag + parking lot; nothing to poll |
//! | stdout/stderr without blocking ([`stdio`]) | reopen `/proc/self/fd/N` | reopen the terminal by name; a pipe goes to a relay thread | console and pipes go to a relay thread |
//! | pipe room ([`Descriptor::pipe_room`]) | `F_GETPIPE_SZ`, `FIONREAD` | unknown | (no descriptors) |
//! | file identity ([`FileId`]) | device, inode | device, inode | volume serial, file index |
//! | files only read, a certificate (`open_readable`) | `O_NONBLOCK`, `fstat`: regular files only | same | regular files only |
//! | files in a directory others may write ([`nofollow`]) | a directory descriptor (`openat`, `fstatat`, `unlinkat`), `O_NOFOLLOW`, `fstat` (owner, links), mode at create, `renameat2` no-replace | same; `renamex_np` on macOS, `linkat` + `unlinkat` elsewhere | by path under a held directory handle; `FILE_FLAG_OPEN_REPARSE_POINT`, owner SID, `MoveFileExW` no-replace |
//! | sockets (`net`) | non-blocking, `MSG_NOSIGNAL` | same; `SO_NOSIGPIPE` on macOS | TCP on a relay thread; no Unix sockets |
//! | journald ([`Journal`]) | datagrams, sealed memfd past `EMSGSIZE` | none: a build error (`journal_none.rs`) | none: a build error |
//! | signals (`signals`) | SIGTERM/SIGINT drain, SIGHUP reopen | same | Ctrl-C, close, logoff and shutdown events drain |
//! | `atexit`, `fork` (`process`) | `atexit`, `pthread_atfork` | same | `atexit`; no fork |
//! | a blocking output on an I/O thread of its own ([`relay`]) | portable: custom writers with `own_thread` | same, plus pipes it cannot reopen | same, plus the console, pipes and TCP |
//! | writer's CPU ([`pin_current_thread`]) | `sched_setaffinity` | same on FreeBSD (and DragonFly, not built here); none on macOS, NetBSD, OpenBSD (a build error) | `SetThreadAffinityMask` |
//!
//! "Unix, portable" is what macOS and the BSDs compile; Linux compiles it
//! too with `RUSTFLAGS="--cfg nowait_portable"`, so that its code runs in
//! the test suite here. What no Linux build runs is listed in
//! `docs::design` ("Platforms").
//!
//! `sys` is a leaf: nothing in it imports a module of the crate outside
//! `sys`, so every other module may build on it. The relay thread is
//! portable code, but the platform outputs hand their blocking writes to
//! it, so it lives here too.

#[cfg(all(target_os = "linux", not(nowait_portable), not(miri)))]
#[path = "wait_futex.rs"]
mod wait;
#[cfg(not(all(target_os = "linux", not(nowait_portable), not(miri))))]
#[path = "wait_park.rs"]
mod wait;

pub(crate) use wait::{wait, wake_all};

pub(crate) mod relay;
pub(crate) mod sync;

mod entry;
mod mapping;
mod net;

#[cfg(unix)]
mod unix;
#[cfg(unix)]
use unix as imp;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
use windows as imp;

pub(crate) use imp::affinity::{pin_current_thread, SUPPORTED as CAN_PIN_THREADS};
pub(crate) use imp::crash::{on_fatal_signals, signal_name, thread_name};
#[cfg(feature = "otlp-tls")]
pub(crate) use imp::file::open_readable;
pub(crate) use imp::file::{file_id, is_deleted, open_append, open_path, path_id, FileId};
#[cfg(all(target_os = "linux", not(nowait_portable)))]
pub(crate) use imp::journal::Journal;
pub(crate) use imp::mapping::{check_private, create_durable, open_durable, try_lock, Mapping};
pub(crate) use imp::net::{Datagram, Stream};
pub(crate) use imp::nofollow;
pub(crate) use net::{Peer, Sent};
#[cfg(not(all(target_os = "linux", not(nowait_portable))))]
mod journal_none;
pub(crate) use imp::process::{at_exit, at_fork, hostname};
#[cfg(feature = "signals")]
pub(crate) use imp::signals::{on_hangup, on_terminate, on_user1};
pub(crate) use imp::stdio::open as open_stdio;
pub(crate) use imp::{is_permanent, sleep, Descriptor, Doorbell, Waitable, RENAME_NEEDS_CLOSE};
#[cfg(not(all(target_os = "linux", not(nowait_portable))))]
pub(crate) use journal_none::Journal;

use std::fs::File;
use std::io::Write;

/// An output as the system opened it; the sink that opened it decides how
/// to write it.
pub(crate) enum Open {
    /// A regular file: blocking writes.
    File { file: File, id: FileId },
    /// A terminal, pipe, FIFO or device on a descriptor of our own that
    /// never blocks. `pipe`: its room can be asked for.
    #[cfg_attr(windows, allow(dead_code))]
    NonBlocking {
        fd: Descriptor,
        pipe: bool,
        terminal: bool,
    },
    /// A socket (stdout handed over by a supervisor), sent to without
    /// waiting.
    #[cfg_attr(windows, allow(dead_code))]
    Socket { fd: Descriptor, terminal: bool },
    /// Something that can only be written with blocking calls (a pipe
    /// where the system cannot reopen it, the Windows console); the caller
    /// gives it an I/O thread of its own. `why`: set when that is a
    /// fallback worth a notice (a reopen that failed), not the system's
    /// normal way.
    Blocking {
        writer: Box<dyn Write + Send>,
        terminal: bool,
        why: Option<String>,
    },
}
