//! Pinning the calling thread to one CPU of its processor group
//! (`SetThreadAffinityMask`).

use std::io;

use windows_sys::Win32::System::Threading::{GetCurrentThread, SetThreadAffinityMask};

/// Whether this system can pin a thread to a CPU.
pub(crate) const SUPPORTED: bool = true;

/// Restricts the calling thread to CPU `cpu` of its processor group (0 to
/// 63). Fails if the CPU is not in the process's affinity mask.
pub(crate) fn pin_current_thread(cpu: usize) -> io::Result<()> {
    if cpu >= usize::BITS as usize {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "CPU {cpu}: a Windows thread can be pinned to CPUs 0 to {} of its processor group",
                usize::BITS - 1
            ),
        ));
    }
    // SAFETY: `GetCurrentThread` returns a pseudo-handle for the calling
    // thread, valid for the whole call and never closed; the mask is a
    // plain integer. The call touches no memory of ours.
    let previous = unsafe { SetThreadAffinityMask(GetCurrentThread(), 1usize << cpu) };
    if previous == 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}
