//! A deliberately slow terminal: runs a command with a pseudo-terminal as
//! its stdout and drains the terminal side at a chosen speed.
//!
//! `slowpty [--profile P] [--save FILE] [--report FILE] [--drain-timeout S] -- CMD ARGS...`
//!
//! Profiles (read size, pause after each read):
//! * `vscode` (default): 4096 bytes, 15 ms: about 270 KB/s. Measured here with
//!   this profile, `println!` logging fell to ~0.26x of the no-logging
//!   req/s, the ratio reported for VSCode's terminal (15.1k / 56.8k).
//! * `iterm`: 16384 bytes, 4 ms (about 4 MB/s) and `alacritty`: 65536 bytes,
//!   2 ms (about 32 MB/s): assumptions standing for faster terminals, not
//!   measurements of them.
//! * `stalled`: never reads while the command runs (a terminal whose reader
//!   stopped), then drains at full speed once termination was asked for, so
//!   that the command can exit and everything it wrote is counted.
//!
//! The pty is put in raw mode (no newline translation), so the counts are
//! exact. SIGTERM/SIGINT to `slowpty` are forwarded to the command; after the
//! command exits the rest is drained at the profile's speed for at most
//! `--drain-timeout` seconds (default 30, fractions allowed); whatever is
//! still in the terminal's buffer then is read at full speed and counted
//! apart as `late_lines` / `late_bytes` (the command did hand those lines to
//! the terminal; a real one would show them a little later). The report is
//! JSON: `{"profile":..,"bytes":..,"lines":..,"late_bytes":..,"late_lines":..,"exit":..}`
//! (`bytes` and `lines` include the late ones).

use std::fs::File;
use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustix::event::{poll, PollFd, PollFlags};
use rustix::fs::{Mode, OFlags};
use rustix::pty::OpenptFlags;
use rustix::termios::OptionalActions;

struct Profile {
    read: usize,
    pause: Duration,
    stalled: bool,
}

fn profile(name: &str) -> Option<Profile> {
    let p = |read, ms| Profile {
        read,
        pause: Duration::from_millis(ms),
        stalled: false,
    };
    Some(match name {
        "vscode" => p(4096, 15),
        "iterm" => p(16384, 4),
        "alacritty" => p(65536, 2),
        "fast" => p(65536, 0),
        "stalled" => Profile {
            read: 65536,
            pause: Duration::ZERO,
            stalled: true,
        },
        _ => return None,
    })
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let split = args
        .iter()
        .position(|a| a == "--")
        .ok_or_else(|| std::io::Error::other("usage: slowpty [options] -- CMD ARGS..."))?;
    let (opts, cmd) = (&args[..split], &args[split + 1..]);
    let get = |name: &str| nowait_loadtest::arg(opts, name);
    let profile_name = get("--profile").unwrap_or_else(|| "vscode".into());
    let prof = profile(&profile_name)
        .ok_or_else(|| std::io::Error::other(format!("unknown profile {profile_name}")))?;
    let drain_timeout = Duration::from_secs_f64(
        get("--drain-timeout")
            .and_then(|s| s.parse().ok())
            .filter(|s: &f64| s.is_finite() && *s >= 0.0)
            .unwrap_or(30.0),
    );
    let mut save = get("--save").map(File::create).transpose()?;
    let program = cmd
        .first()
        .ok_or_else(|| std::io::Error::other("no command"))?;

    // The pty: master for us, slave (raw mode) for the command.
    let master = rustix::pty::openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY)?;
    rustix::pty::grantpt(&master)?;
    rustix::pty::unlockpt(&master)?;
    let name = rustix::pty::ptsname(&master, Vec::new())?;
    let slave = rustix::fs::open(
        name.as_c_str(),
        OFlags::RDWR | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let mut termios = rustix::termios::tcgetattr(&slave)?;
    termios.make_raw();
    rustix::termios::tcsetattr(&slave, OptionalActions::Now, &termios)?;

    let stop = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGTERM, Arc::clone(&stop))?;
    signal_hook::flag::register(signal_hook::consts::SIGINT, Arc::clone(&stop))?;

    let mut child = {
        let stdout = File::from(slave);
        Command::new(program)
            .args(&cmd[1..])
            .stdin(Stdio::null())
            .stdout(Stdio::from(stdout))
            .stderr(Stdio::inherit())
            .spawn()?
        // The Command, and with it our copy of the slave, is dropped here.
    };
    let pid = rustix::process::Pid::from_child(&child);

    let mut buf = vec![0u8; prof.read];
    let (mut bytes, mut lines) = (0u64, 0u64);
    let (mut late_bytes, mut late_lines) = (0u64, 0u64);
    let mut late = false;
    let mut forwarded = false;
    let mut exit = None;
    let mut exited_at: Option<Instant> = None;
    let mut draining_fast = false;
    loop {
        if stop.load(Ordering::Relaxed) && !forwarded {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
            forwarded = true;
            draining_fast = prof.stalled;
        }
        if exit.is_none() {
            if let Some(status) = child.try_wait()? {
                exit = Some(status.code().unwrap_or(-1));
                exited_at = Some(Instant::now());
                draining_fast = prof.stalled || draining_fast;
            }
        }
        if !late && exited_at.is_some_and(|t| t.elapsed() > drain_timeout) {
            // Past the bound: take what the terminal still holds at full
            // speed and count it apart.
            late = true;
            draining_fast = true;
        }
        if prof.stalled && !draining_fast {
            std::thread::sleep(Duration::from_millis(10));
            continue;
        }
        let mut fds = [PollFd::new(&master, PollFlags::IN)];
        let timeout = rustix::time::Timespec {
            tv_sec: 0,
            tv_nsec: 50_000_000,
        };
        let ready = match poll(&mut fds, Some(&timeout)) {
            Ok(n) => n,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        };
        if ready == 0 {
            if exit.is_some() {
                break; // command gone and nothing left to read
            }
            continue;
        }
        match rustix::io::read(&master, &mut buf) {
            Ok(0) => break,
            Ok(n) => {
                let newlines = buf[..n].iter().filter(|&&b| b == b'\n').count() as u64;
                bytes += n as u64;
                lines += newlines;
                if late {
                    late_bytes += n as u64;
                    late_lines += newlines;
                }
                if let Some(f) = save.as_mut() {
                    f.write_all(&buf[..n])?;
                }
                if !draining_fast && !prof.pause.is_zero() {
                    std::thread::sleep(prof.pause);
                }
            }
            // EIO: the slave side is closed and empty.
            Err(rustix::io::Errno::IO) => break,
            Err(rustix::io::Errno::INTR) | Err(rustix::io::Errno::AGAIN) => {}
            Err(e) => return Err(e.into()),
        }
    }
    if exit.is_none() {
        let status = child.wait()?;
        exit = Some(status.code().unwrap_or(-1));
    }
    let report = format!(
        "{{\"profile\":\"{profile_name}\",\"bytes\":{bytes},\"lines\":{lines},\"late_bytes\":{late_bytes},\"late_lines\":{late_lines},\"exit\":{}}}",
        exit.unwrap_or(-1)
    );
    match get("--report") {
        Some(path) => std::fs::write(path, report + "\n")?,
        None => eprintln!("SLOWPTY {report}"),
    }
    Ok(())
}
