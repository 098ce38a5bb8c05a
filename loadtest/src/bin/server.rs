//! Single-threaded HTTP server on std's `TcpListener`: one connection at a
//! time, a 4096-byte read buffer, every read answered with a fixed 200 and
//! logged with the mode given by `--log`.
//!
//! `server --port P --log MODE --sink SINK [--cpu N]`; stops on SIGTERM or
//! SIGINT, then prints `RESULT {json}` to stderr.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use nowait_loadtest::{arg, path_of, Logging, Mode, SinkSpec, RESPONSE};

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let port = arg(&args, "--port").unwrap_or_else(|| "8080".into());
    let mode_name = arg(&args, "--log").unwrap_or_else(|| "none".into());
    let mode = Mode::parse(&mode_name)
        .ok_or_else(|| std::io::Error::other(format!("unknown --log {mode_name}")))?;
    let sink_name = arg(&args, "--sink").unwrap_or_else(|| "stdout".into());
    let sink = SinkSpec::parse(&sink_name)
        .ok_or_else(|| std::io::Error::other(format!("bad --sink {sink_name}")))?;

    let stop = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGTERM, Arc::clone(&stop))?;
    signal_hook::flag::register(signal_hook::consts::SIGINT, Arc::clone(&stop))?;

    let listener = TcpListener::bind(format!("127.0.0.1:{port}"))?;
    listener.set_nonblocking(true)?;
    // Loggers start their threads before the request thread is pinned, so
    // those threads stay free to run on another CPU.
    let logging = Logging::new(mode, &sink)?;
    if let Some(cpu) = arg(&args, "--cpu") {
        nowait_loadtest::pin_to_cpu(&cpu)?;
    }
    eprintln!("READY {port}");

    let mut requests = 0u64;
    let mut buf = [0u8; 4096];
    while !stop.load(Ordering::Relaxed) {
        let mut conn = match listener.accept() {
            Ok((conn, _)) => conn,
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(1));
                continue;
            }
            Err(e) => return Err(e),
        };
        conn.set_nonblocking(false)?;
        conn.set_read_timeout(Some(Duration::from_millis(100)))?;
        conn.set_nodelay(true)?;
        loop {
            match conn.read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    requests += 1;
                    logging.request(requests, path_of(&buf[..n]));
                    if conn.write_all(RESPONSE).is_err() {
                        break;
                    }
                }
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    if stop.load(Ordering::Relaxed) {
                        break;
                    }
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
    }
    let counters = logging.finish();
    eprintln!("RESULT {{\"requests\":{requests},{counters}}}");
    Ok(())
}
