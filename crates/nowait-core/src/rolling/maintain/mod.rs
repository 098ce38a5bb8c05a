//! Housekeeping of a rolling sink, off the writer thread: compression of
//! rotated files and retention (`max_log_files`, `max_age`,
//! `max_total_size`).
//!
//! The writer thread sends one [`Job`] per rotation (and one at start) over
//! a channel and never waits for it; one thread per sink does the jobs in
//! order, so compression and deletion never race each other. Errors come
//! back over a second channel; the writer reports them in-band and counts
//! them in `SinkStats::rotation_errors`.
//!
//! Others may write the directory, and put anything under any name there,
//! at any time; whoever can write one of its parents can put a link in its
//! place. So the directory is the handle the sink opened at build
//! ([`Dir`]), never its path; a file is the sink's only if it is a regular
//! file owned by the process's effective user, with one name
//! ([`Stat::is_ours`](crate::sys::nofollow::Stat::is_ours)),
//! whose name is exactly one this sink gives, before the current one (step
//! 1); every open is a no-follow open checked on the opened file
//! ([`nofollow`](crate::sys::nofollow)); an archive is created exclusively under a temporary name
//! of its own with the permissions of its file, and renamed into place
//! without replacing any name. A removal checks first that the name still
//! names the file that was decided on, and never follows a link.
//!
//! Steps of a job, `current` being the file the writer now writes. Steps 1
//! and 3 decide from the listing alone ([`sort`](plan::sort),
//! [`retention`](plan::retention): pure functions, fuzzed by the
//! `rolling_housekeeping` target); steps 2 and 4 act.
//!
//! 1. List the directory; keep the names this sink gives (see
//!    [`naming`](super::naming)) that are the sink's own files and come
//!    before `current` (period, then index). Anything else under such a
//!    name (a link, a directory, another user's file, a file with other
//!    names) is left alone and reported once while it stays; if it holds
//!    an archive's name, the file of that name is not compressed. The
//!    sink's own files named after `current` (a clock that went back) are
//!    neither counted nor touched. Temporaries of a compression that a
//!    process of this user did not finish (`NAME.gz.TOKEN.tmp`, and
//!    `NAME.gz.tmp`) are removed if they are the sink's own; others are
//!    left alone (reported), and block nothing.
//! 2. With compression on, compress every plain file: open it without
//!    following a link, refuse it unless it is a regular file of this user
//!    with one name, write `NAME.gz.TOKEN.tmp` (created new, `TOKEN` random,
//!    another tried if the name is taken; with the bits of the file and of
//!    [`Rolling::mode`](super::Rolling::mode)), `fsync` it, rename it to
//!    `NAME.gz` unless that name exists, then remove `NAME`. A failure
//!    removes the temporary file and keeps `NAME`: no data is ever deleted
//!    by a failed compression. `NAME` and `NAME.gz` both the sink's own
//!    (the removal was cut short): `NAME` is removed only if `NAME.gz`
//!    decompresses to exactly its bytes; otherwise both stay, reported
//!    once.
//! 3. Retention, oldest file first (by name: period, then index), over
//!    the sink's own files before `current` (compressed or not; `current`
//!    itself is never removed): remove a file while more than
//!    `max_log_files` remain (`current` included), or while they take more
//!    than `max_total_size` bytes (as listed), or if it was last modified
//!    more than `max_age` before the job's time (the sink's clock). A
//!    modification time in the future counts as now.
//! 4. Remove what step 3 chose.
//!
//! The files: `plan` decides (steps 1 and 3, and step 2's plan), `keeper`
//! acts (steps 2 and 4) through `archive`, which makes and checks
//! archives; this file is the writer's end, [`Housekeeper`].

mod archive;
mod keeper;
mod plan;
#[cfg(all(test, not(miri)))]
mod tests;

#[cfg(fuzzing)]
pub(crate) use plan::fuzz_housekeeping;
pub(crate) use plan::{is_sinks, Housekeeping, Job};

use crossbeam_channel::{Receiver, Sender};

use crate::sys::nofollow::Dir;
use keeper::Keeper;

/// The writer's end: send jobs, collect error messages.
#[derive(Debug)]
pub(crate) struct Housekeeper {
    jobs: Option<Sender<Job>>,
    errors: Receiver<String>,
    /// Without a thread (it could not be spawned), jobs run inline.
    inline: Option<Keeper>,
}

impl Housekeeper {
    /// Starts the thread, which works in `dir`. If it cannot be spawned,
    /// jobs run on the caller (the writer thread) and that is reported as
    /// the first error.
    pub(crate) fn start(dir: Dir, settings: Housekeeping) -> Housekeeper {
        let (jobs_tx, jobs_rx) = crossbeam_channel::unbounded::<Job>();
        let (err_tx, err_rx) = crossbeam_channel::unbounded();
        let spare = dir.try_clone();
        let mut keeper = Keeper::new(dir, settings.clone(), err_tx.clone());
        let spawned = std::thread::Builder::new()
            .name("nowait-rolling".into())
            .spawn(move || {
                while let Ok(mut job) = jobs_rx.recv() {
                    // Only the newest state matters: skip ahead.
                    while let Ok(next) = jobs_rx.try_recv() {
                        job = next;
                    }
                    keeper.run(&job);
                }
            });
        match (spawned, spare) {
            (Ok(_), _) => Housekeeper {
                jobs: Some(jobs_tx),
                errors: err_rx,
                inline: None,
            },
            (Err(e), spare) => {
                let inline = match spare {
                    Ok(dir) => {
                        let _ = err_tx.send(format!(
                            "cannot start the housekeeping thread ({e}); compression and retention run on the writer thread"
                        ));
                        Some(Keeper::new(dir, settings, err_tx))
                    }
                    Err(e2) => {
                        let _ = err_tx.send(format!(
                            "cannot start the housekeeping thread ({e}) nor open its directory again ({e2}); no compression or retention"
                        ));
                        None
                    }
                };
                Housekeeper {
                    jobs: None,
                    errors: err_rx,
                    inline,
                }
            }
        }
    }

    /// Asks for housekeeping now that `current` is the file written.
    pub(crate) fn send(&mut self, job: Job) {
        if let Some(tx) = &self.jobs {
            let _ = tx.send(job);
        } else if let Some(keeper) = &mut self.inline {
            keeper.run(&job);
        }
    }

    /// Errors reported since the last call.
    pub(crate) fn errors(&self) -> Vec<String> {
        self.errors.try_iter().collect()
    }
}
