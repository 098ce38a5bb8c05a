//! Pinning the calling thread to one CPU: `sched_setaffinity` where the
//! system has a hard affinity (Linux and FreeBSD, tested and compiled
//! here; Android and DragonFly take the same rustix call but nothing here
//! builds them). macOS only takes affinity hints, and NetBSD and OpenBSD
//! are not covered: there [`SUPPORTED`] is false and `Builder::build`
//! refuses the setting.
//!
//! Not the `core_affinity` crate: its `set_for_current` answers only a
//! `bool` (no reason to put in the build error), and on macOS it sets the
//! affinity tag, a hint, and reports success. rustix, which nowait already
//! uses for its other Unix calls, has the call without `unsafe`.

use std::io;

/// Whether this system can pin a thread to a CPU.
pub(crate) const SUPPORTED: bool = cfg!(any(
    target_os = "linux",
    target_os = "android",
    target_os = "freebsd",
    target_os = "dragonfly"
));

/// Restricts the calling thread to CPU `cpu` (numbered as `taskset -c` and
/// `cpuset -l` number them). Fails if the CPU does not exist or lies
/// outside what the process may use (its cgroup or cpuset).
#[cfg(any(
    target_os = "linux",
    target_os = "android",
    target_os = "freebsd",
    target_os = "dragonfly"
))]
pub(crate) fn pin_current_thread(cpu: usize) -> io::Result<()> {
    use rustix::thread::{sched_setaffinity, CpuSet};
    if cpu >= CpuSet::MAX_CPU {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "CPU {cpu} is past the last one this system can name ({})",
                CpuSet::MAX_CPU - 1
            ),
        ));
    }
    let mut set = CpuSet::new();
    set.set(cpu);
    sched_setaffinity(None, &set).map_err(io::Error::from)
}

/// See the module docs: no hard affinity here.
#[cfg(not(any(
    target_os = "linux",
    target_os = "android",
    target_os = "freebsd",
    target_os = "dragonfly"
)))]
pub(crate) fn pin_current_thread(_cpu: usize) -> io::Result<()> {
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "this system cannot pin a thread to a CPU",
    ))
}
