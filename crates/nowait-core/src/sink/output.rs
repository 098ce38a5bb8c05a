//! A sink as the writer thread holds it: its [`Output`], opened by its
//! kind's `open` (a file of this folder each), and the one place that
//! dispatches over the kinds when the writer writes, polls, flushes,
//! syncs or rotates.
//!
//! Terminals, pipes, FIFOs and character devices are written without
//! blocking (`O_NONBLOCK` on an open file description of the writer's own),
//! so that a stalled reader never holds up the writer thread and so never
//! the other sinks; sockets are written with `MSG_DONTWAIT`. Where the
//! system cannot give us such a descriptor (a pipe on macOS, the Windows
//! console), the output gets an I/O thread of its own ([`Relay`]), which
//! alone blocks. Regular files and users' writers are written with blocking
//! calls: the kernel never makes a regular file wait on a reader, and the
//! writer thread marks those calls (see `consumer::IN_IO`) so that a
//! shutdown can still end in time if one hangs (a dead NFS server).
//! What differs per system is in [`crate::sys`].
//!
//! No call into an output unwinds into the writer thread: every method
//! that runs an output's own code (write, flush, sync, reopen, rotate,
//! and so the advance of an OTLP exchange, which happens in its writes)
//! goes through [`Output::guard`], which turns a panic there into the
//! output's permanent failure. One broken output (a bug in nowait's code
//! for it, or a user's writer) then costs its own sink, counted and
//! reported like any sink that failed for good, and the other sinks go on.

use std::fs::File;
use std::io::{self, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use crate::sys::relay::{Relay, Relayed, Waker, WriteTarget};
use crate::sys::{self, Datagram, Descriptor, FileId, Journal, Open, Sent, Stream, Waitable};

pub(crate) use crate::accounting::outcome::WriteOutcome;

/// An opened sink.
pub(crate) enum Output {
    /// A regular file: blocking writes. `path` and `identity` (device,
    /// inode) let the writer notice rotation; stdout redirected to a file
    /// has no path.
    File {
        file: File,
        path: Option<PathBuf>,
        identity: FileId,
    },
    /// A terminal, pipe, FIFO or character device opened with `O_NONBLOCK`.
    /// `pipe`: a pipe or FIFO, whose free room can be asked for.
    NonBlocking { fd: Descriptor, pipe: bool },
    /// A socket, written with `MSG_DONTWAIT`.
    Socket(Descriptor),
    /// A TCP or Unix stream connection made by nowait ([`Sink::tcp`],
    /// [`Sink::unix`]): connects without waiting, reconnects after a
    /// failure.
    ///
    /// [`Sink::tcp`]: crate::sink::Sink::tcp
    /// [`Sink::unix`]: crate::sink::Sink::unix
    Stream(Stream),
    /// A Unix datagram socket ([`Sink::unix_datagram`]): one record per
    /// datagram.
    ///
    /// [`Sink::unix_datagram`]: crate::sink::Sink::unix_datagram
    Datagram(Datagram),
    /// journald's native socket ([`Sink::journald`]): one entry per
    /// datagram, a sealed memfd for an entry too large for one.
    ///
    /// [`Sink::journald`]: crate::sink::Sink::journald
    Journal(Journal),
    /// A terminal, pipe or console that cannot be written without blocking
    /// here: written by an I/O thread of its own.
    Relayed(Relay),
    /// A rolling file (blocking writes, rotated by the writer between
    /// records).
    Rolling(Box<crate::rolling::file::RollingFile>),
    /// A user's writer.
    Writer(Box<dyn Write + Send>),
    /// A sink that cannot be had (a custom writer in a forked child, a
    /// deleted file that cannot be created again, an output that
    /// panicked): every write fails for good with this reason.
    Gone(String),
    /// An output whose every write panics, standing for a bug in an
    /// output's code.
    #[cfg(test)]
    Panicking,
    /// An OTLP/HTTP receiver ([`Sink::otlp`](crate::sink::Sink::otlp)).
    #[cfg(feature = "otlp")]
    Otlp(Box<crate::sink::otlp::Client>),
}

impl std::fmt::Debug for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Output::File { .. } => "File",
            Output::NonBlocking { .. } => "NonBlocking",
            Output::Socket(_) => "Socket",
            Output::Stream(_) => "Stream",
            Output::Datagram(_) => "Datagram",
            Output::Journal(_) => "Journal",
            Output::Relayed(_) => "Relayed",
            Output::Rolling(_) => "Rolling",
            Output::Writer(_) => "Writer",
            Output::Gone(_) => "Gone",
            #[cfg(test)]
            Output::Panicking => "Panicking",
            #[cfg(feature = "otlp")]
            Output::Otlp(_) => "Otlp",
        })
    }
}

/// An output and what the writer and the formats need to know about it.
#[derive(Debug)]
pub(crate) struct Opened {
    pub(crate) output: Output,
    /// A terminal (for ANSI colours).
    pub(crate) terminal: bool,
    /// Why a terminal or pipe is written by an I/O thread, if it is.
    pub(crate) fallback: Option<String>,
    /// A warning about the sink's settings, written once into every
    /// sink's output when `build` opens it (a forked child's open writes
    /// none).
    pub(crate) warning: Option<String>,
    /// Completeness is wanted (files, custom writers).
    pub(crate) durable: bool,
}

impl Opened {
    /// `output`, durable if it is a file or a user's writer.
    pub(crate) fn new(output: Output, terminal: bool) -> Opened {
        let durable = matches!(
            output,
            Output::File { .. } | Output::Rolling(_) | Output::Writer(_)
        );
        Opened {
            output,
            terminal,
            fallback: None,
            warning: None,
            durable,
        }
    }

    /// An output as the system opened it; a blocking one gets its relay
    /// thread, named after the sink.
    pub(super) fn from_sys(open: Open, path: Option<&Path>) -> io::Result<Opened> {
        Ok(match open {
            Open::File { file, id } => Opened::new(
                Output::File {
                    file,
                    path: path.map(Path::to_owned),
                    identity: id,
                },
                false,
            ),
            Open::NonBlocking { fd, pipe, terminal } => {
                Opened::new(Output::NonBlocking { fd, pipe }, terminal)
            }
            Open::Socket { fd, terminal } => Opened::new(Output::Socket(fd), terminal),
            Open::Blocking {
                writer,
                terminal,
                why,
            } => {
                let relay = Relay::spawn("nowait-relay", Box::new(WriteTarget(writer)))?;
                let mut opened = Opened::new(Output::Relayed(relay), terminal);
                opened.fallback = why;
                opened
            }
        })
    }
}

/// Writes `buf` to a blocking writer, retrying `EINTR` and short writes.
fn write_all(w: &mut impl Write, buf: &[u8]) -> WriteOutcome {
    let mut done = 0;
    while done < buf.len() {
        match w.write(&buf[done..]) {
            Ok(0) => {
                return if done > 0 {
                    WriteOutcome::Wrote(done)
                } else {
                    WriteOutcome::Failed(io::ErrorKind::WriteZero.into())
                }
            }
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                return if done > 0 {
                    WriteOutcome::Wrote(done)
                } else {
                    WriteOutcome::WouldBlock
                }
            }
            Err(e) => {
                return if done > 0 {
                    WriteOutcome::Wrote(done)
                } else {
                    WriteOutcome::Failed(e)
                }
            }
        }
    }
    WriteOutcome::Wrote(done)
}

fn from_io(r: io::Result<usize>) -> WriteOutcome {
    match r {
        Ok(n) => WriteOutcome::Wrote(n),
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => WriteOutcome::WouldBlock,
        Err(e) => WriteOutcome::Failed(e),
    }
}

fn from_sent(sent: Sent) -> WriteOutcome {
    match sent {
        Sent::Wrote(n) => WriteOutcome::Wrote(n),
        Sent::WouldBlock => WriteOutcome::WouldBlock,
        Sent::Failed(e) => WriteOutcome::Failed(e),
        Sent::Rejected(e) => WriteOutcome::Rejected(e),
    }
}

/// What a panic's payload says, if it is text.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("Box<dyn Any>")
}

impl Output {
    /// Runs `call` on this output: every method below that runs an
    /// output's own code does it through here. A panic in `call` is
    /// caught; the output, whose state can no longer be trusted, is
    /// dropped (its own drop guarded too) and replaced by
    /// [`Output::Gone`], so that nothing calls into it again; the panic
    /// comes back as a `BrokenPipe` error, with which its sink fails for
    /// good (`SinkState::failed`).
    pub(crate) fn guard<R>(&mut self, call: impl FnOnce(&mut Output) -> R) -> io::Result<R> {
        let user = matches!(self, Output::Writer(_));
        let payload = match catch_unwind(AssertUnwindSafe(|| call(self))) {
            Ok(r) => return Ok(r),
            Err(payload) => payload,
        };
        // With nowait's panic hook, its message (with the location);
        // without it, the payload's text.
        let noted = crate::shared::Shared::take_writer_panic();
        let why = if user {
            "the sink's writer panicked".to_owned()
        } else {
            let what = noted.unwrap_or_else(|| panic_text(&*payload).to_owned());
            format!("the sink's output panicked, a nowait bug: {what}")
        };
        let broken = std::mem::replace(self, Output::Gone(why.clone()));
        let _ = catch_unwind(AssertUnwindSafe(move || drop(broken)));
        Err(io::Error::new(io::ErrorKind::BrokenPipe, why))
    }

    /// Whether the output is gone for good ([`Output::Gone`]).
    pub(crate) fn is_gone(&self) -> bool {
        matches!(self, Output::Gone(_))
    }

    /// Whether the output is a plain file, whose path the writer checks
    /// for renames and deletions ([`Output::reopen_if_moved`]).
    pub(crate) fn is_file(&self) -> bool {
        matches!(self, Output::File { .. })
    }

    /// Whether the output is a rolling file: rotated by the writer between
    /// records, and never cut in the middle of one.
    pub(crate) fn rolls(&self) -> bool {
        matches!(self, Output::Rolling(_))
    }

    /// A rolling file's room before its size limit (`Some(None)`: no
    /// limit); `None` for every other output.
    pub(crate) fn roll_room(&self) -> Option<Option<u64>> {
        match self {
            Output::Rolling(r) => Some(r.room()),
            _ => None,
        }
    }

    /// A rolling file's rotations and failed rotations so far.
    pub(crate) fn rotations(&self) -> Option<(u64, u64)> {
        match self {
            Output::Rolling(r) => Some((r.rotations, r.rotation_errors)),
            _ => None,
        }
    }

    /// Whether a write can block the writer thread (files, user writers).
    pub(crate) fn may_block(&self) -> bool {
        matches!(
            self,
            Output::File { .. } | Output::Rolling(_) | Output::Writer(_)
        )
    }

    /// What to poll for room while the sink is blocked.
    pub(crate) fn poll_fd(&self) -> Option<Waitable<'_>> {
        match self {
            Output::NonBlocking { fd, .. } | Output::Socket(fd) => Some(fd.waitable()),
            Output::Stream(s) => s.poll_fd(),
            Output::Datagram(d) => d.poll_fd(),
            Output::Journal(j) => j.poll_fd(),
            #[cfg(feature = "otlp")]
            Output::Otlp(c) => c.poll_fd(),
            _ => None,
        }
    }

    /// What to poll for bytes to read while the sink waits for an answer
    /// (OTLP).
    pub(crate) fn poll_read_fd(&self) -> Option<Waitable<'_>> {
        match self {
            #[cfg(feature = "otlp")]
            Output::Otlp(c) => c.poll_read_fd(),
            _ => None,
        }
    }

    /// How long the sink may take no bytes, with bytes pending, before it
    /// counts as stalled: `default` (100 ms) for all but an
    /// OTLP sink, whose answer may take its timeout.
    pub(crate) fn stall_after(&self, default: std::time::Duration) -> std::time::Duration {
        match self {
            #[cfg(feature = "otlp")]
            Output::Otlp(c) => c.stall_after(),
            _ => default,
        }
    }

    /// The delay the receiver asked for before the next retry, if any
    /// (OTLP's `Retry-After`), once.
    pub(crate) fn take_retry_after(&mut self) -> Option<std::time::Duration> {
        match self {
            #[cfg(feature = "otlp")]
            Output::Otlp(c) => c.take_retry_after(),
            _ => None,
        }
    }

    /// Whether a failure is always worth a retry (a receiver that went away
    /// may come back: the output connects again), even `EPIPE` or
    /// `ECONNRESET`, which are final for an inherited descriptor.
    pub(crate) fn reconnects(&self) -> bool {
        match self {
            Output::Stream(_) | Output::Datagram(_) | Output::Journal(_) => true,
            #[cfg(feature = "otlp")]
            Output::Otlp(_) => true,
            _ => false,
        }
    }

    /// Whether each write must be exactly one record (datagrams).
    pub(crate) fn per_record(&self) -> bool {
        matches!(self, Output::Datagram(_) | Output::Journal(_))
    }

    /// Free room in bytes, where the kernel can tell (pipes and FIFOs).
    pub(crate) fn room(&self) -> Option<usize> {
        self.pipe_room().map(|(_, room)| room)
    }

    /// A pipe's whole size and free room, where the kernel can tell.
    pub(crate) fn pipe_room(&self) -> Option<(usize, usize)> {
        match self {
            Output::NonBlocking { fd, pipe: true } => fd.pipe_room(),
            _ => None,
        }
    }

    /// A shutdown gives up on the bytes pending: an I/O thread drops what
    /// it queued; returns the bytes it still holds (being written, or
    /// written and not yet reported), the first bytes pending, which may
    /// still be reported written. Zero for every other output.
    pub(crate) fn abandon_held(&self) -> usize {
        match self {
            Output::Relayed(relay) => relay.abandon(),
            Output::Stream(s) => s.abandon_held(),
            #[cfg(feature = "otlp")]
            Output::Otlp(c) => c.in_flight(),
            _ => 0,
        }
    }

    /// Gives an I/O thread a way to wake the writer when it finished.
    pub(crate) fn set_waker(&self, waker: &Waker) {
        match self {
            Output::Relayed(relay) => relay.set_waker(Arc::clone(waker)),
            Output::Stream(s) => s.set_waker(waker),
            _ => {}
        }
    }

    /// One write attempt (for OTLP, one step of its exchange). Blocking
    /// outputs write everything or fail.
    pub(crate) fn write(&mut self, buf: &[u8]) -> WriteOutcome {
        self.guard(|output| output.write_unguarded(buf))
            .unwrap_or_else(WriteOutcome::Failed)
    }

    fn write_unguarded(&mut self, buf: &[u8]) -> WriteOutcome {
        match self {
            Output::NonBlocking { fd, .. } => from_io(fd.write(buf)),
            Output::Socket(fd) => from_io(fd.send(buf)),
            Output::Stream(s) => from_sent(s.write(buf)),
            Output::Datagram(d) => from_sent(d.write(buf)),
            Output::Journal(j) => from_sent(j.write(buf)),
            Output::Relayed(relay) => match relay.write(buf) {
                Relayed::Wrote(n) => WriteOutcome::Wrote(n),
                Relayed::Pending => WriteOutcome::WouldBlock,
                Relayed::Failed(e) => WriteOutcome::Failed(e),
            },
            Output::File { file, .. } => write_all(file, buf),
            Output::Rolling(r) => write_all(&mut **r, buf),
            Output::Writer(w) => write_all(w, buf),
            Output::Gone(why) => {
                WriteOutcome::Failed(io::Error::new(io::ErrorKind::BrokenPipe, why.clone()))
            }
            #[cfg(feature = "otlp")]
            Output::Otlp(c) => c.write(buf),
            #[cfg(test)]
            Output::Panicking => panic!("an output's bug"),
        }
    }

    /// Flushes user writers (files and descriptors have no user-space
    /// buffer).
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        self.guard(|output| match output {
            Output::Writer(w) => w.flush(),
            _ => Ok(()),
        })
        .and_then(|flushed| flushed)
    }

    /// `fdatasync` for files (write-through with fsync).
    pub(crate) fn sync(&mut self) -> io::Result<()> {
        self.guard(|output| match output {
            Output::File { file, .. } => file.sync_data(),
            Output::Rolling(r) => r.sync(),
            _ => Ok(()),
        })
        .and_then(|synced| synced)
    }

    /// A rolling file: rotates before a record of `next` bytes if its
    /// period is over or the record would pass its size limit. Returns a
    /// notice for the sink, if any.
    pub(crate) fn rotate_if_due(&mut self, now: Instant, next: u64) -> io::Result<Option<String>> {
        self.guard(|output| match output {
            Output::Rolling(r) => {
                let wall = r.wall();
                r.due(wall, now, next)
                    .then(|| r.rotate(wall, now))
                    .flatten()
            }
            _ => None,
        })
    }

    /// A rolling file: hands the files before the current one to its
    /// housekeeping thread (after a rotation, once the crash-durable
    /// snapshot names the new file).
    pub(crate) fn housekeep(&mut self) -> io::Result<()> {
        self.guard(|output| {
            if let Output::Rolling(r) = output {
                r.housekeep();
            }
        })
    }

    /// A rolling file: reopens its current file if it was renamed or
    /// deleted (or if `force`); a failure keeps the old file and comes
    /// back as a notice.
    pub(crate) fn reopen_rolling(&mut self, force: bool) -> io::Result<Option<String>> {
        self.guard(|output| match output {
            Output::Rolling(r) => r.reopen_if_moved(force),
            _ => None,
        })
    }

    /// A rolling file: what its housekeeping thread could not do since
    /// the last call.
    pub(crate) fn housekeeping_errors(&mut self) -> io::Result<Vec<String>> {
        self.guard(|output| match output {
            Output::Rolling(r) => r.housekeeping_errors(),
            _ => Vec::new(),
        })
    }

    /// The regular file this output appends to now, with its path and
    /// identity (the crash-durable ring's mirrors follow it).
    pub(crate) fn current_file(&self) -> Option<(&File, &Path, sys::FileId)> {
        match self {
            Output::File {
                file,
                path: Some(path),
                identity,
            } => Some((file, path, *identity)),
            Output::Rolling(r) => Some(r.current()),
            _ => None,
        }
    }

    /// For a file sink, whether the path now names another file (rotated) or
    /// none (deleted); if so, or if `force`, reopens it. Returns `Ok(true)`
    /// after a reopen.
    pub(crate) fn reopen_if_moved(&mut self, force: bool) -> io::Result<bool> {
        self.guard(|output| super::file::reopen_if_moved(output, force))
            .and_then(|reopened| reopened)
    }
}
