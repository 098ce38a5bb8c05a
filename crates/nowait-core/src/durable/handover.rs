//! What `build` does with the crash-durable file
//! (`Builder::crash_durable`): open it for this logger's file sinks,
//! recovering what a process that died left in it, then hand what it
//! recovered to the new logger around the start of its writer.
//!
//! The order is the invariant: the recovered notices and records go into
//! the new ring before the writer runs, then the new file takes the old
//! one's path, then the writer starts, so that nothing recovered is
//! written before the new file replaces the old: a process killed during
//! `build` leaves either the old file (nothing of it written yet) or the
//! new one (holding the rest). Only what the new ring could not take
//! waits for the writer (a kill from then until it is in loses it).
//!

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::file::DurableFile;
use super::recover::{Recovered, SinkFiles};
use crate::error::BuildError;
use crate::level::Level;
use crate::record::kind;
use crate::ring::ClaimError;

/// Pushes one recovered item into the new logger's ring, waiting for room
/// until the deadline (`Shared::push_recovered`).
pub(crate) type Push<'a> = dyn FnMut(Level, u8, &[u8], Instant) -> Result<(), ClaimError> + 'a;

/// Opens the crash-durable file at `path`, if any, for a ring of
/// `capacity` bytes and the logger's file sinks (`files`, with each sink's
/// buffer size), recovering first what a dead process left (into those
/// files only, never one the durable file names).
pub(crate) fn open_for(
    path: Option<&Path>,
    capacity: usize,
    files: &[(SinkFiles<'_>, usize)],
) -> Result<Option<(Arc<DurableFile>, Recovered)>, BuildError> {
    let Some(path) = path else {
        return Ok(None);
    };
    // Each mirror holds twice the largest file sink's buffer.
    let mirror = (files.iter().map(|(_, buffer)| *buffer).max())
        .unwrap_or(0)
        .saturating_mul(2)
        .max(64 << 10);
    let files: Vec<_> = files.iter().map(|(f, _)| *f).collect();
    super::open::open(path, capacity, mirror, &files)
        .map(Some)
        .map_err(|e| {
            BuildError::io(
                format!("cannot use {} as a crash-durable ring", path.display()),
                e,
            )
        })
}

/// Hands `recovered` over to a logger whose ring lives in `file`, starting
/// its writer with `start_writer` in between (see the module docs for the
/// order); waits at most `timeout` for room once the writer runs.
pub(crate) fn hand_over(
    file: Option<&DurableFile>,
    recovered: Option<Recovered>,
    push: &mut Push<'_>,
    start_writer: impl FnOnce() -> Result<(), BuildError>,
    timeout: Duration,
) -> Result<(), BuildError> {
    let mut recovery = recovered.map(Recovery::new);
    let all_in = recovery.as_mut().map_or(true, |r| r.push(push, None));
    if let Some(file) = file {
        file.take_path()
            .map_err(|e| BuildError::io("cannot replace the crash-durable file", e))?;
    }
    start_writer()?;
    if let Some(recovery) = &mut recovery {
        let deadline = crate::record::clock::deadline_after(timeout);
        if !all_in {
            // More than the new ring holds (the durable file's ring is
            // sized to hold all it recovered, so only a ring at its size
            // cap gets here): the rest waits for the writer.
            recovery.push(push, Some(deadline));
        }
        recovery.report(push, deadline);
    }
    Ok(())
}

/// What goes into the new logger's ring, in order: the notices (plain
/// text warnings), then the records.
pub(crate) fn items(recovered: Recovered) -> Vec<(Level, u8, Vec<u8>)> {
    (recovered.notices.into_iter())
        .map(|n| (Level::Warn, kind::TEXT, n.into_bytes()))
        .chain(recovered.records)
        .collect()
}

/// What a crash-durable file held when its process died, pushed into the
/// new logger's ring before any new record (the logger is not handed out
/// yet): the notices, then the records.
struct Recovery {
    items: std::vec::IntoIter<(Level, u8, Vec<u8>)>,
    total: usize,
    pushed: usize,
    lost: usize,
}

impl Recovery {
    fn new(recovered: Recovered) -> Recovery {
        let total = recovered.records.len();
        let items = items(recovered);
        Recovery {
            items: items.into_iter(),
            total,
            pushed: 0,
            lost: 0,
        }
    }

    /// Pushes what fits without waiting (before the writer runs), or all,
    /// waiting for room until `deadline` (the writer running). Returns
    /// whether everything went in.
    fn push(&mut self, push: &mut Push<'_>, deadline: Option<Instant>) -> bool {
        let now = Instant::now();
        while let Some((level, kind, payload)) = self.items.as_slice().first() {
            match push(*level, *kind, payload, deadline.unwrap_or(now)) {
                Ok(()) => {}
                Err(ClaimError::Full) if deadline.is_none() => return false,
                Err(ClaimError::Full) => {
                    // The ring stayed full until the deadline (a writer
                    // stuck in a sink): the rest are lost, and counted.
                    self.lost += self.items.len();
                    self.items = Vec::new().into_iter();
                    break;
                }
                Err(_) => self.lost += 1,
            }
            self.items.next();
            self.pushed += 1;
        }
        true
    }

    /// Says what could not be pushed.
    fn report(&self, push: &mut Push<'_>, deadline: Instant) {
        if self.lost > 0 {
            let msg = format!(
                "{} of {} recovered records lost: the ring stayed full, or a record was \
                 larger than this ring takes",
                self.lost, self.total
            );
            let _ = push(Level::Error, kind::TEXT, msg.as_bytes(), deadline);
        }
    }
}
