//! The housekeeping thread's work: one job's steps acted out in the
//! directory, and what it reports.
//!
//! Each step acts on the plan ([`super::plan`]) made from one listing, and
//! acts through the directory's handle only: a removal checks that the
//! name still names the file listed, and a file is compressed only if it
//! is still the one listed. A condition that lasts (a name left alone, an
//! archive that does not hold its file) is reported once while it lasts,
//! not at every job.

use std::collections::HashSet;
use std::io;

use crossbeam_channel::Sender;

use super::archive::{compress, holds};
use super::plan::{
    classify, compression, retention, sort, Action, Entry, Housekeeping, Job, Listed, Part,
};
use crate::sys::nofollow::Dir;

/// The housekeeping thread's state: its directory, where to report, and
/// what was reported already.
#[derive(Debug)]
pub(super) struct Keeper {
    dir: Dir,
    settings: Housekeeping,
    errors: Sender<String>,
    /// Conditions reported that last (a name left alone, a `.gz` that does
    /// not hold its file), each reported once while it lasts.
    noticed: HashSet<String>,
}

impl Keeper {
    pub(super) fn new(dir: Dir, settings: Housekeeping, errors: Sender<String>) -> Keeper {
        Keeper {
            dir,
            settings,
            errors,
            noticed: HashSet::new(),
        }
    }

    /// The names of the sink's pattern in the directory, as listed.
    fn list(&self) -> io::Result<Vec<Listed>> {
        let mut names = Vec::new();
        self.dir.each_name(|name| {
            if classify(&self.settings.naming, name).is_some() {
                names.push(name.to_owned());
            }
        })?;
        let mut listing = Vec::with_capacity(names.len());
        for name in names {
            match self.dir.stat(&name) {
                Ok(stat) => listing.push(Listed { name, stat }),
                // Gone since it was listed.
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => self.report(format!("cannot inspect {}: {e}", self.shown(&name))),
            }
        }
        Ok(listing)
    }

    fn report(&self, what: String) {
        let _ = self.errors.send(what);
    }

    /// `name` with the directory's path, for a message.
    fn shown(&self, name: &str) -> String {
        self.dir.path().join(name).display().to_string()
    }

    /// Removes `part` if its name still names the file listed.
    fn remove(&self, part: &Part) -> io::Result<()> {
        self.dir.remove(&part.name, part.stat.id)
    }

    /// One job: the steps of the module's doc.
    pub(super) fn run(&mut self, job: &Job) {
        let mut lasting = Lasting {
            before: std::mem::take(&mut self.noticed),
            now: HashSet::new(),
        };
        let listing = match self.list() {
            Ok(l) => l,
            Err(e) => {
                self.report(format!("cannot list {}: {e}", self.dir.path().display()));
                self.noticed = lasting.before;
                return;
            }
        };
        // 1.
        let mut files = sort(&self.settings.naming, &job.current, listing);
        for (name, why) in &files.alone {
            if !lasting.known(format!("alone {name}")) {
                self.report(format!(
                    "left {} alone: named like this sink's files, but {why}",
                    self.shown(name)
                ));
            }
        }
        for tmp in &files.leftovers {
            let _ = self.remove(tmp);
        }
        // 2.
        let plan = compression(&files, self.settings.compress.is_some());
        for (key, action) in plan {
            let Some(entry) = files.older.get_mut(&key) else {
                continue;
            };
            match action {
                Action::Verify => self.verify(entry, &mut lasting),
                Action::Compress => self.compress(entry),
            }
        }
        files
            .older
            .retain(|_, e| e.plain.is_some() || !e.archives.is_empty());
        // 3. and 4.
        for (key, why) in retention(&self.settings, &files.older, job.now) {
            let Some(entry) = files.older.get(&key) else {
                continue;
            };
            for part in entry.parts() {
                if let Err(e) = self.remove(part) {
                    if e.kind() != io::ErrorKind::NotFound {
                        self.report(format!(
                            "cannot remove {} ({why}): {e}",
                            self.shown(&part.name)
                        ));
                    }
                }
            }
        }
        self.noticed = lasting.now;
    }

    /// `NAME` and an archive of it, both the sink's: compressed before a
    /// crash, not yet removed, if the archive holds exactly the plain file
    /// (it was renamed into place after its fsync); else not ours to trust.
    fn verify(&self, entry: &mut Entry, lasting: &mut Lasting) {
        let (Some(plain), Some((how, archive))) = (&entry.plain, entry.archives.first()) else {
            return;
        };
        let id = format!("differs {}", archive.name);
        if lasting.before.contains(&id) {
            lasting.now.insert(id);
            return;
        }
        match holds(&self.dir, *how, &archive.name, &plain.name) {
            Ok(true) => match self.remove(plain) {
                Ok(()) => entry.plain = None,
                Err(e) => self.report(format!("cannot remove {}: {e}", self.shown(&plain.name))),
            },
            Ok(false) => {
                lasting.now.insert(id);
                self.report(format!(
                    "{} is not the compression of {}: both kept",
                    self.shown(&archive.name),
                    self.shown(&plain.name)
                ));
            }
            Err(e) => self.report(format!(
                "cannot compare {} with {}: {e} (both kept)",
                self.shown(&plain.name),
                self.shown(&archive.name)
            )),
        }
    }

    /// Compresses the plain file of `entry`; on success the archive takes
    /// its place in `entry`.
    fn compress(&self, entry: &mut Entry) {
        let (Some(how), Some(plain)) = (self.settings.compress, &entry.plain) else {
            return;
        };
        match compress(&self.dir, how, plain, self.settings.mode) {
            Ok(archive) => {
                entry.archives.push((how, archive));
                entry.plain = None;
            }
            Err(e) => self.report(format!(
                "cannot compress {}: {e} (kept as is)",
                self.shown(&plain.name)
            )),
        }
    }
}

/// Conditions that last (a name left alone, a `.gz` that does not hold its
/// file), so that each is reported once while it lasts.
#[derive(Debug)]
struct Lasting {
    /// Those of the previous job.
    before: HashSet<String>,
    /// Those found so far in this job.
    now: HashSet<String>,
}

impl Lasting {
    /// Notes that `id` holds now; whether it held at the previous job
    /// (then it was reported already).
    fn known(&mut self, id: String) -> bool {
        let known = self.before.contains(&id);
        self.now.insert(id);
        known
    }
}
