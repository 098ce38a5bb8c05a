//! Housekeeping of a rolling sink, off the writer thread: gzip of rotated
//! files and retention (`max_log_files`).
//!
//! The writer thread sends one [`Job`] per rotation (and one at start) over
//! a channel and never waits for it; one thread per sink does the jobs in
//! order, so compression and deletion never race each other. Errors come
//! back over a second channel; the writer reports them in-band and counts
//! them in `SinkStats::rotation_errors`.
//!
//! Steps of a job, `current` being the file the writer now writes:
//!
//! 1. List the directory; keep the names this sink gives (see
//!    [`naming`](super::naming)); remove `NAME.gz.tmp` leftovers of a
//!    compression that a previous process did not finish.
//! 2. With compression on, gzip every uncompressed file older than
//!    `current` into `NAME.gz.tmp`, `fsync` it, rename it to `NAME.gz`,
//!    then remove `NAME`. A failure removes the temporary file and keeps
//!    `NAME`: no data is ever deleted by a failed compression.
//! 3. With a retention count `n`, remove the oldest files (compressed or
//!    not) until `n` remain, `current` included; `current` itself is never
//!    removed.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crossbeam_channel::{Receiver, Sender};

use super::naming::{Key, Naming};

/// Work for the housekeeping thread.
#[derive(Debug)]
pub(crate) struct Job {
    pub(crate) current: Key,
}

/// What the housekeeping thread needs to know.
#[derive(Debug, Clone)]
pub(crate) struct Settings {
    pub(crate) dir: PathBuf,
    pub(crate) naming: Naming,
    pub(crate) compress: bool,
    pub(crate) max_files: Option<usize>,
}

/// The writer's end: send jobs, collect error messages.
#[derive(Debug)]
pub(crate) struct Housekeeper {
    jobs: Option<Sender<Job>>,
    errors: Receiver<String>,
    /// Without a thread (it could not be spawned), jobs run inline.
    inline: Option<(Settings, Sender<String>)>,
}

impl Housekeeper {
    /// Starts the thread. If it cannot be spawned, jobs run on the caller
    /// (the writer thread) and that is reported as the first error.
    pub(crate) fn start(settings: Settings) -> Housekeeper {
        let (jobs_tx, jobs_rx) = crossbeam_channel::unbounded::<Job>();
        let (err_tx, err_rx) = crossbeam_channel::unbounded();
        let thread_settings = settings.clone();
        let thread_errors = err_tx.clone();
        let spawned = std::thread::Builder::new()
            .name("nowait-rolling".into())
            .spawn(move || {
                while let Ok(mut job) = jobs_rx.recv() {
                    // Only the newest state matters: skip ahead.
                    while let Ok(next) = jobs_rx.try_recv() {
                        job = next;
                    }
                    run(&thread_settings, &job, &thread_errors);
                }
            });
        match spawned {
            Ok(_) => Housekeeper {
                jobs: Some(jobs_tx),
                errors: err_rx,
                inline: None,
            },
            Err(e) => {
                let _ = err_tx.send(format!(
                    "cannot start the housekeeping thread ({e}); compression and retention run on the writer thread"
                ));
                Housekeeper {
                    jobs: None,
                    errors: err_rx,
                    inline: Some((settings, err_tx)),
                }
            }
        }
    }

    /// Asks for housekeeping now that `current` is the file written.
    pub(crate) fn send(&self, job: Job) {
        if let Some(tx) = &self.jobs {
            let _ = tx.send(job);
        } else if let Some((settings, errors)) = &self.inline {
            run(settings, &job, errors);
        }
    }

    /// Errors reported since the last call.
    pub(crate) fn errors(&self) -> Vec<String> {
        self.errors.try_iter().collect()
    }
}

/// One file of the sink, compressed, plain, or (after a crash between the
/// rename and the removal) both.
#[derive(Debug, Default)]
struct Entry {
    plain: Option<PathBuf>,
    gz: Option<PathBuf>,
}

fn run(s: &Settings, job: &Job, errors: &Sender<String>) {
    let report = |what: String| {
        let _ = errors.send(what);
    };
    let listing = match fs::read_dir(&s.dir) {
        Ok(l) => l,
        Err(e) => {
            report(format!("cannot list {}: {e}", s.dir.display()));
            return;
        }
    };
    let mut files: BTreeMap<Key, Entry> = BTreeMap::new();
    for item in listing.flatten() {
        let name = item.file_name();
        let Some(name) = name.to_str() else { continue };
        if let Some(stem) = name.strip_suffix(".gz.tmp") {
            if s.naming.parse(stem).is_some_and(|(_, gz)| !gz) {
                let _ = fs::remove_file(item.path());
            }
            continue;
        }
        let Some((key, gz)) = s.naming.parse(name) else {
            continue;
        };
        let entry = files.entry(key).or_default();
        if gz {
            entry.gz = Some(item.path());
        } else {
            entry.plain = Some(item.path());
        }
    }
    if s.compress {
        for (key, entry) in files.iter_mut() {
            if *key >= job.current {
                break;
            }
            let Some(plain) = entry.plain.clone() else {
                continue;
            };
            if entry.gz.is_some() {
                // Compressed before a crash, not yet removed: the .gz is
                // complete (it was renamed into place after its fsync).
                match fs::remove_file(&plain) {
                    Ok(()) => entry.plain = None,
                    Err(e) => report(format!("cannot remove {}: {e}", plain.display())),
                }
                continue;
            }
            match compress(&plain) {
                Ok(gz) => {
                    entry.gz = Some(gz);
                    entry.plain = None;
                }
                Err(e) => report(format!(
                    "cannot compress {}: {e} (kept as is)",
                    plain.display()
                )),
            }
        }
    }
    if let Some(max) = s.max_files {
        let excess = files.len().saturating_sub(max.max(1));
        for (key, entry) in files.iter().take(excess) {
            if *key >= job.current {
                break;
            }
            for path in [&entry.plain, &entry.gz].into_iter().flatten() {
                if let Err(e) = fs::remove_file(path) {
                    if e.kind() != io::ErrorKind::NotFound {
                        report(format!(
                            "cannot remove {} (max_log_files): {e}",
                            path.display()
                        ));
                    }
                }
            }
        }
    }
}

/// Gzips `path` into `path.gz` through a temporary name; removes `path`
/// only once `path.gz` is complete and in place.
#[cfg(feature = "gzip")]
fn compress(path: &Path) -> io::Result<PathBuf> {
    let mut gz_name = path.as_os_str().to_owned();
    gz_name.push(".gz");
    let gz = PathBuf::from(gz_name);
    let mut tmp_name = gz.as_os_str().to_owned();
    tmp_name.push(".tmp");
    let tmp = PathBuf::from(tmp_name);
    let result = (|| {
        let mut input = fs::File::open(path)?;
        let out = fs::File::create(&tmp)?;
        let mut enc =
            flate2::write::GzEncoder::new(io::BufWriter::new(out), flate2::Compression::default());
        io::copy(&mut input, &mut enc)?;
        let out = enc.finish()?.into_inner().map_err(|e| e.into_error())?;
        out.sync_all()?;
        fs::rename(&tmp, &gz)?;
        Ok::<(), io::Error>(())
    })();
    if let Err(e) = result {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    // If this fails, the next job finds both and removes the plain file.
    fs::remove_file(path)?;
    Ok(gz)
}

#[cfg(not(feature = "gzip"))]
fn compress(path: &Path) -> io::Result<PathBuf> {
    // Unreachable in practice: `build` refuses `compress(true)` without
    // the feature.
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        format!(
            "{}: nowait-core was built without the `gzip` feature",
            path.display()
        ),
    ))
}
