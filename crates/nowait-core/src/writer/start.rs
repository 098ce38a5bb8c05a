//! Starting the writer thread: once at build, with the sinks `build`
//! opened, and lazily in a forked child (on the thread of its first push),
//! with the same sinks opened again from their [`Plan`]s.
//!
//! With a CPU to pin to, the new thread pins itself before anything else
//! and says how that went; it runs only if it did, and the start fails
//! otherwise. The wait for that answer is bounded by the thread's start and
//! one system call.

use std::io;
use std::sync::atomic::Ordering;
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::Duration;

use super::{SinkState, Writer};
use crate::error::BuildError;
use crate::shared::{consumer, Shared, Start};
use crate::sink::{Opened, Plan};

/// How the writer thread runs (from the builder).
#[derive(Debug)]
pub(crate) struct WriterSettings {
    /// Wake-up interval while records flow.
    pub(crate) interval: Duration,
    /// Longest sleep while none come.
    pub(crate) idle: Duration,
    /// Bytes formatted per sink before a write.
    pub(crate) batch: usize,
    pub(crate) thread_name: String,
    /// The CPU to pin the thread to.
    pub(crate) cpu: Option<usize>,
}

/// What starts the writer of a logger whose sinks are `plans`, opened at
/// build as `opened` (one per plan), with `startup` notices to write
/// first.
pub(crate) fn starter(
    plans: Vec<Plan>,
    opened: Vec<Opened>,
    startup: Vec<String>,
    settings: WriterSettings,
) -> Start {
    let states: Vec<SinkState> = (plans.iter().zip(opened))
        .map(|(plan, opened)| SinkState::open(plan, opened, settings.batch))
        .collect();
    let initial = Mutex::new(Some((states, startup)));
    Box::new(move |shared: &Arc<Shared>| {
        // The sinks opened by `build`, or, in a forked child, the same
        // sinks opened again.
        let (states, startup) = match initial.try_lock().ok().and_then(|mut s| s.take()) {
            Some(first) => first,
            None => (
                (plans.iter())
                    .map(|p| SinkState::open(p, p.reopen_in_child(), settings.batch))
                    .collect(),
                Vec::new(),
            ),
        };
        spawn(shared, states, startup, &settings)
    })
}

/// Starts the writer thread ([`Shared::start_writer`]).
pub(crate) fn start(shared: &Arc<Shared>) -> Result<(), BuildError> {
    (shared.start_writer()).map_err(|e| BuildError::io("cannot start the writer thread", e))
}

/// Spawns the writer thread over `states`, pinned if `settings` says so.
fn spawn(
    shared: &Arc<Shared>,
    mut states: Vec<SinkState>,
    startup: Vec<String>,
    settings: &WriterSettings,
) -> io::Result<()> {
    for (i, s) in states.iter_mut().enumerate() {
        s.route = Some(super::route::Route::new(Arc::clone(&shared.routes), i));
    }
    for (c, s) in shared.sinks.iter().zip(&states) {
        c.non_blocking
            .store(!s.output.may_block(), Ordering::Relaxed);
    }
    shared.consumer.store(consumer::WRITER, Ordering::SeqCst);
    let writer = Writer::new(
        Arc::clone(shared),
        states,
        settings.interval,
        settings.idle,
        startup,
    );
    let cpu = settings.cpu;
    let (pinned_tx, pinned_rx) = cpu.map(|_| mpsc::sync_channel(1)).unzip();
    let spawned = thread::Builder::new()
        .name(settings.thread_name.clone())
        .spawn(move || {
            if let (Some(cpu), Some(tx)) = (cpu, pinned_tx) {
                let pinned = crate::sys::pin_current_thread(cpu);
                let ok = pinned.is_ok();
                let _ = tx.send(pinned);
                if !ok {
                    return;
                }
            }
            writer.run()
        })
        .map(drop)
        .and_then(|()| match (cpu, pinned_rx) {
            (Some(cpu), Some(rx)) => match rx.recv() {
                Ok(Ok(())) => Ok(()),
                Ok(Err(e)) => Err(io::Error::new(
                    e.kind(),
                    format!("cannot pin it to CPU {cpu} (writer_cpu): {e}"),
                )),
                Err(_) => Err(io::Error::other(
                    "it ended before it could pin itself (writer_cpu)",
                )),
            },
            _ => Ok(()),
        });
    spawned.inspect_err(|_| shared.consumer.store(consumer::NONE, Ordering::SeqCst))
}
