//! stdout and stderr on Windows. A redirected file is written with
//! blocking calls on a duplicate handle. The console and pipes have no
//! non-blocking writes (a console blocks while someone selects text in it;
//! a pipe while its reader sleeps), so they are written through std's
//! `Stdout`/`Stderr` (UTF-16 conversion for the console included) on a
//! relay thread of their own, which alone waits. Colours are used on a
//! console only if virtual terminal processing can be turned on (Windows 10
//! and later).

use std::fs::File;
use std::io::{self, IsTerminal, Write};
use std::os::windows::io::{AsHandle, AsRawHandle};

use windows_sys::Win32::Storage::FileSystem::{GetFileType, FILE_TYPE_DISK};
use windows_sys::Win32::System::Console::{
    GetConsoleMode, SetConsoleMode, CONSOLE_MODE, ENABLE_VIRTUAL_TERMINAL_PROCESSING,
};

use super::file::file_id;
use crate::sys::Open;

/// std's stdout or stderr, as a writer a relay thread owns.
struct Std(u8);

impl Write for Std {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.0 {
            1 => io::stdout().write(buf),
            _ => io::stderr().write(buf),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self.0 {
            1 => io::stdout().flush(),
            _ => io::stderr().flush(),
        }
    }
}

/// Opens standard output (1) or error (2).
pub(crate) fn open(which: u8) -> io::Result<Open> {
    let (handle, terminal) = match which {
        1 => (
            io::stdout().as_handle().try_clone_to_owned(),
            io::stdout().is_terminal(),
        ),
        _ => (
            io::stderr().as_handle().try_clone_to_owned(),
            io::stderr().is_terminal(),
        ),
    };
    if let Ok(handle) = handle {
        // SAFETY: the handle is open (we own a duplicate) for the call.
        let kind = unsafe { GetFileType(handle.as_raw_handle()) };
        if kind == FILE_TYPE_DISK {
            let file = File::from(handle);
            if let Ok(id) = file_id(&file) {
                return Ok(Open::File { file, id });
            }
        }
    }
    let colours = terminal && enable_virtual_terminal(which);
    Ok(Open::Blocking {
        writer: Box::new(Std(which)),
        terminal: colours,
        // The normal way on Windows: no notice.
        why: None,
    })
}

/// Turns on ANSI escape sequences for the console; false where the console
/// does not take them (before Windows 10).
fn enable_virtual_terminal(which: u8) -> bool {
    let handle = match which {
        1 => io::stdout().as_raw_handle(),
        _ => io::stderr().as_raw_handle(),
    };
    let mut mode: CONSOLE_MODE = 0;
    // SAFETY: `handle` is the process's console handle (or an invalid one,
    // which the call reports as an error); `mode` is a valid out pointer.
    if unsafe { GetConsoleMode(handle, &mut mode) } == 0 {
        return false;
    }
    if mode & ENABLE_VIRTUAL_TERMINAL_PROCESSING != 0 {
        return true;
    }
    // SAFETY: as above; the mode only adds a flag to the console's own.
    unsafe { SetConsoleMode(handle, mode | ENABLE_VIRTUAL_TERMINAL_PROCESSING) != 0 }
}
