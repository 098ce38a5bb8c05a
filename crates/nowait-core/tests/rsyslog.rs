//! The syslog TCP sink against a real rsyslog: every record arrives exactly
//! once; rsyslog killed mid-run and restarted on the same port costs no
//! waiting, every loss is counted and reported to rsyslog in-band, and
//! delivery resumes.
//!
//! rsyslogd runs in the foreground from a config in a temp dir (its work
//! directory and output file there too), with only `imtcp` on a free
//! loopback port (no `/dev/log`, no kernel log), and is stopped by its
//! PID. Without rsyslogd these tests print why and pass.
// rsyslogd is a Unix daemon, killed here by SIGKILL; under Wine the Linux
// binary is found on the PATH but cannot be run as a Windows child process.
// The TCP sink under it is tested on Windows in tests/net.rs.
#![cfg(all(unix, not(miri)))] // processes and sockets

use std::collections::BTreeMap;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use nowait_core::format::{Plain, Syslog};
use nowait_core::{Builder, FullPolicy, Level, Sink};

const APP: &str = "nowait-test";

fn rsyslogd() -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/sbin")])
        .map(|d| d.join("rsyslogd"))
        .find(|p| p.is_file())
}

macro_rules! rsyslogd_or_skip {
    () => {
        match rsyslogd() {
            Some(p) => p,
            None => {
                eprintln!("skipping: rsyslogd is not installed (apt-get install rsyslog)");
                return;
            }
        }
    };
}

/// An rsyslogd of our own, listening on `127.0.0.1:port` with imtcp and
/// writing `SEVERITY APP-NAME PROCID HOSTNAME|MSG` lines to `out`.
struct Rsyslog {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
    out: PathBuf,
    child: Option<Child>,
}

impl Rsyslog {
    fn start(bin: PathBuf, dir: &Path) -> Rsyslog {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut r = Rsyslog {
            bin,
            dir: dir.to_owned(),
            port,
            out: dir.join("out.log"),
            child: None,
        };
        let conf = format!(
            r#"global(workDirectory="{dir}")
module(load="imtcp")
template(name="seq" type="string" string="%syslogseverity% %app-name% %procid% %hostname%|%msg%\n")
ruleset(name="fromtest") {{
  action(type="omfile" file="{out}" template="seq")
}}
input(type="imtcp" port="{port}" address="127.0.0.1" ruleset="fromtest")
"#,
            dir = dir.display(),
            out = r.out.display(),
        );
        std::fs::write(dir.join("rsyslog.conf"), conf).unwrap();
        r.spawn();
        r
    }

    /// Starts rsyslogd and waits (bounded) until it accepts connections.
    fn spawn(&mut self) {
        let child = Command::new(&self.bin)
            .arg("-n")
            .arg("-f")
            .arg(self.dir.join("rsyslog.conf"))
            .arg("-i")
            .arg(self.dir.join("rsyslogd.pid"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start rsyslogd");
        self.child = Some(child);
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            if let Some(status) = self.child.as_mut().unwrap().try_wait().unwrap() {
                panic!(
                    "rsyslogd exited ({status}); config: {}",
                    std::fs::read_to_string(self.dir.join("rsyslog.conf")).unwrap()
                );
            }
            assert!(Instant::now() < deadline, "rsyslogd never listened");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILL by PID: no chance to flush its queue. A line it was in the
    /// middle of writing stays torn in its output; it is cut off here (a
    /// record in flight at the kill, which the accounting allows for), or
    /// the next rsyslogd would append its first line to it.
    fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
            if let Ok(text) = std::fs::read(&self.out) {
                let whole = text.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
                if whole < text.len() {
                    std::fs::write(&self.out, &text[..whole]).unwrap();
                }
            }
        }
    }

    /// The complete lines written so far (rsyslog may be mid-line).
    fn lines(&self) -> Vec<String> {
        let text = std::fs::read_to_string(&self.out).unwrap_or_default();
        let complete = text.rfind('\n').map_or("", |end| &text[..end]);
        complete.lines().map(str::to_owned).collect()
    }
}

impl Drop for Rsyslog {
    fn drop(&mut self) {
        self.kill();
    }
}

/// What rsyslog wrote: records by sequence number (how often each came),
/// and the notices.
#[derive(Default)]
struct Received {
    seqs: BTreeMap<u64, u32>,
    notices: Vec<String>,
}

fn parse(lines: &[String]) -> Received {
    let pid = std::process::id().to_string();
    let mut r = Received::default();
    for line in lines {
        let (head, msg) = line.split_once('|').expect(line);
        let fields: Vec<&str> = head.split(' ').collect();
        assert_eq!(fields[1], APP, "{line}");
        assert_eq!(fields[2], pid, "{line}");
        if let Some(n) = msg.strip_prefix("seq=") {
            assert_eq!(fields[0], "6", "INFO is severity 6: {line}");
            *r.seqs.entry(n.parse().expect(line)).or_default() += 1;
        } else {
            assert!(msg.starts_with("nowait: "), "{line}");
            r.notices.push(line.clone());
        }
    }
    r
}

/// Waits (bounded) until rsyslog's output satisfies `done`.
fn wait_output(rs: &Rsyslog, what: &str, done: impl Fn(&Received) -> bool) -> Received {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let r = parse(&rs.lines());
        if done(&r) {
            return r;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits (bounded) until the writer thread has taken the `accepted`
/// records from the ring and the sink has nothing pending.
fn wait_drained(logger: &nowait_core::Logger, accepted: u64) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let _ = logger.flush_within(Duration::from_millis(100));
        let s = logger.stats();
        if s.records_written == accepted && s.sinks[0].pending_bytes == 0 {
            return;
        }
        assert!(Instant::now() < deadline, "never drained: {:?}", s.sinks[0]);
    }
}

fn syslog_sink(port: u16) -> Sink {
    Sink::tcp(("127.0.0.1", port))
        .format(Plain)
        .syslog(Syslog::new().app_name(APP))
}

/// One rsyslogd at a time. Each picks a free port by binding port 0 and
/// letting it go, so two at once can be handed the same one: the second
/// daemon fails to listen, the probe reaches the first, and the other test
/// killing its daemon looked like a refused connection here (CI, once).
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn every_record_arrives_exactly_once() {
    let bin = rsyslogd_or_skip!();
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let rs = Rsyslog::start(bin, dir.path());
    let n = 100_000u64;
    let (logger, guard) = Builder::new()
        // The process-wide panic hook stays out: a panic in the other test
        // must not log into this one's logger.
        .catch_panics(false)
        .capacity(16 << 20)
        .full_policy(FullPolicy::Block)
        .sink(syslog_sink(rs.port).buffer_size(64 << 20))
        .build()
        .unwrap();
    for i in 0..n {
        logger.log(Level::Info, &format!("seq={i}")).unwrap();
    }
    // A flush or shutdown does not wait for a receiver that took nothing
    // for 100 ms (stalled); rsyslog on a busy machine can: wait here.
    wait_drained(&logger, n);
    logger.flush().unwrap();
    drop(guard);
    let stats = logger.stats();
    assert_eq!(stats.sinks[0].records_written, n, "{:?}", stats.sinks[0]);
    let got = wait_output(&rs, "all records", |r| r.seqs.len() as u64 == n);
    assert!(got.seqs.values().all(|&c| c == 1), "a record arrived twice");
    assert_eq!(got.seqs.keys().next_back(), Some(&(n - 1)));
    assert!(got.notices.is_empty(), "{:?}", got.notices);
}

#[test]
fn rsyslog_killed_and_restarted_costs_no_wait_and_every_loss_is_reported() {
    let bin = rsyslogd_or_skip!();
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let mut rs = Rsyslog::start(bin, dir.path());
    let (logger, guard) = Builder::new()
        // The process-wide panic hook stays out: a panic in the other test
        // must not log into this one's logger.
        .catch_panics(false)
        .capacity(1 << 20)
        .full_policy(FullPolicy::Drop)
        .sink(syslog_sink(rs.port).buffer_size(256 << 10))
        .build()
        .unwrap();
    let mut seq = 0u64;
    let mut accepted = Vec::new();
    let mut slowest = Duration::ZERO;
    let mut log = |count: u64| {
        for _ in 0..count {
            let t = Instant::now();
            if logger.log(Level::Info, &format!("seq={seq}")).is_ok() {
                accepted.push(seq);
            }
            slowest = slowest.max(t.elapsed());
            seq += 1;
            if seq % 500 == 0 {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        seq
    };
    // A: delivered while rsyslog runs.
    let killed_at = log(20_000);
    // B: rsyslog dies mid-stream and stays down while records keep coming:
    // the sink fails, keeps 256 KiB, then drops and counts.
    rs.kill();
    let restarted_at = log(40_000);
    let down = logger.stats().sinks[0].clone();
    assert!(
        down.write_errors > 0,
        "the loss of rsyslog went unnoticed: {down:?}"
    );
    // C: rsyslog is back on the same port; once the sink has reconnected
    // and drained, everything logged arrives.
    rs.spawn();
    let deadline = Instant::now() + Duration::from_secs(10);
    while logger.stats().sinks[0].pending_bytes > 0 {
        assert!(Instant::now() < deadline, "never reconnected");
        std::thread::sleep(Duration::from_millis(10));
    }
    let end = log(20_000);
    // Not a speed check: a push that waited on the network would take as
    // long as the outage (or the connect timeout).
    assert!(
        slowest < Duration::from_millis(50),
        "a log call waited {slowest:?}"
    );
    wait_drained(&logger, accepted.len() as u64);
    drop(guard);

    let stats = logger.stats();
    let sink = &stats.sinks[0];
    assert_eq!(
        stats.dropped(),
        seq - accepted.len() as u64,
        "ring losses counted"
    );
    assert_eq!(stats.records_written, sink.records_written + sink.dropped());
    // Shed while failing, or while slow if rsyslog fell behind before the
    // kill (the episode keeps its first cause).
    let shed = sink.dropped_overflow + sink.dropped_failed;
    assert!(shed > 0, "the outage shed nothing: {sink:?}");
    // The gap, reported in-band to rsyslog itself (WARN is severity 4)
    // with exactly the count in the stats.
    let gap = format!("dropped (sink tcp:127.0.0.1:{}", rs.port);
    let counted = |r: &Received| -> u64 {
        r.notices
            .iter()
            .filter(|l| l.contains(&gap))
            .map(|l| {
                assert!(l.starts_with("4 "), "{l}");
                let msg = l.split_once("nowait: WARN ").expect(l).1;
                msg.split(' ').next().unwrap().parse::<u64>().expect(l)
            })
            .sum()
    };
    let got = wait_output(&rs, "the last record and the notices", |r| {
        r.seqs.contains_key(&(end - 1))
            && r.notices.iter().any(|l| l.contains("recovered after"))
            && counted(r) >= shed
    });
    assert!(got.seqs.values().all(|&c| c == 1), "a record arrived twice");
    let counted_in_notices = counted(&got);
    assert_eq!(counted_in_notices, shed, "{:?}", got.notices);
    assert!(
        got.notices.iter().any(|l| l.contains(&gap)),
        "{:?}",
        got.notices
    );
    // Accounting: each accepted record arrived, or was counted as dropped,
    // or was in flight when rsyslog was killed (written into the socket, or
    // read by rsyslog but not yet written out: no sender can know).
    let arrived = accepted.iter().filter(|s| got.seqs.contains_key(s)).count() as u64;
    assert_eq!(
        got.seqs.len() as u64,
        arrived,
        "only accepted records arrive"
    );
    let accepted_n = accepted.len() as u64;
    let in_flight = sink.records_written - arrived;
    assert_eq!(arrived + sink.dropped() + in_flight, accepted_n);
    assert!(sink.records_written >= arrived);
    // What was in flight was written before the kill was noticed: at most
    // what was logged before it (in practice far less: the socket buffers).
    assert!(in_flight <= killed_at, "{in_flight}");
    let missing_after_restart: Vec<u64> = accepted
        .iter()
        .copied()
        .filter(|&s| s >= restarted_at && !got.seqs.contains_key(&s))
        .collect();
    assert!(
        missing_after_restart.is_empty(),
        "records logged after the reconnect were lost: {} of them",
        missing_after_restart.len()
    );
    eprintln!(
        "rsyslog kill: accepted {accepted_n}, arrived {arrived}, dropped and counted {} \
         (reported in-band: {counted_in_notices}), lost in flight at the kill {in_flight} \
         (records logged before the kill: {killed_at})",
        sink.dropped()
    );
}
