//! Multi-threaded tokio HTTP server (several connections at once), logging
//! with the mode given by `--log`: a logging call runs on a runtime worker,
//! so a blocking logger blocks the runtime.
//!
//! `tokio-server --port P --log MODE --sink SINK [--workers N]`; stops on
//! SIGTERM or SIGINT, then prints `RESULT {json}` to stderr.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use nowait_loadtest::{arg, path_of, Logging, Mode, SinkSpec, RESPONSE};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let port = arg(&args, "--port").unwrap_or_else(|| "8080".into());
    let mode_name = arg(&args, "--log").unwrap_or_else(|| "none".into());
    let mode = Mode::parse(&mode_name)
        .ok_or_else(|| std::io::Error::other(format!("unknown --log {mode_name}")))?;
    let sink_name = arg(&args, "--sink").unwrap_or_else(|| "stdout".into());
    let sink = SinkSpec::parse(&sink_name)
        .ok_or_else(|| std::io::Error::other(format!("bad --sink {sink_name}")))?;
    let workers: usize = arg(&args, "--workers")
        .and_then(|w| w.parse().ok())
        .unwrap_or(2);

    let stop = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGTERM, Arc::clone(&stop))?;
    signal_hook::flag::register(signal_hook::consts::SIGINT, Arc::clone(&stop))?;
    let logging = Arc::new(Logging::new(mode, &sink)?);
    let requests = Arc::new(AtomicU64::new(0));

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let listener = TcpListener::bind(format!("127.0.0.1:{port}")).await?;
        eprintln!("READY {port}");
        while !stop.load(Ordering::Relaxed) {
            let accepted =
                tokio::time::timeout(Duration::from_millis(100), listener.accept()).await;
            let Ok(Ok((mut conn, _))) = accepted else {
                continue;
            };
            let logging = Arc::clone(&logging);
            let requests = Arc::clone(&requests);
            let stop = Arc::clone(&stop);
            tokio::spawn(async move {
                let _ = conn.set_nodelay(true);
                let mut buf = [0u8; 4096];
                while !stop.load(Ordering::Relaxed) {
                    let n =
                        match tokio::time::timeout(Duration::from_millis(100), conn.read(&mut buf))
                            .await
                        {
                            Err(_) => continue,
                            Ok(Ok(0)) | Ok(Err(_)) => break,
                            Ok(Ok(n)) => n,
                        };
                    let i = requests.fetch_add(1, Ordering::Relaxed) + 1;
                    logging.request(i, path_of(&buf[..n]));
                    if conn.write_all(RESPONSE).await.is_err() {
                        break;
                    }
                }
            });
        }
        Ok::<(), std::io::Error>(())
    })?;
    // Let in-flight handlers see the flag and finish their request.
    runtime.shutdown_timeout(Duration::from_secs(2));
    let logging = Arc::try_unwrap(logging)
        .map_err(|_| std::io::Error::other("handlers still hold the logger"))?;
    let counters = logging.finish();
    eprintln!(
        "RESULT {{\"requests\":{},{counters}}}",
        requests.load(Ordering::Relaxed)
    );
    Ok(())
}
