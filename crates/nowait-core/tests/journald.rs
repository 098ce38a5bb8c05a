//! The journald sink against a real systemd-journald, started by each test
//! in a private mount and network namespace (no systemd as PID 1): every
//! field arrives as sent, a 400 KiB entry arrives whole (through a sealed
//! memfd), and of 20,000 entries sent into a 10-datagram queue, what is
//! missing from the journal is exactly what the sink counted as dropped,
//! and journald's own entries say so (`NOWAIT_NOTICE=1`).
//!
//! How journald runs, without touching the host's: `unshare -m -n
//! --propagation private` runs a shell that bind-mounts the test's temp
//! dirs over `/run` and `/var/log` (inside the new mount namespace only),
//! sets `net.unix.max_dgram_qlen` to 10 (inside the new network
//! namespace only) and only then, if every step worked (`set -e`), execs
//! `/lib/systemd/systemd-journald`. journald's configuration is a drop-in
//! in the temp `/run/systemd/journald.conf.d/`: volatile storage (the
//! journal files land in `TEMP/run/log/journal/MACHINE-ID/`), rate
//! limiting off (so that journald drops nothing of its own: every missing
//! entry is nowait's, counted), no kernel log, no forwarding. The test
//! checks that the socket it sends to is inside its temp dir before
//! sending anything, and stops journald by its PID.
//!
//! Entries are read back with `journalctl --directory ... -o json --all`
//! once a marker sent after the logger's shutdown has arrived (journald
//! reads its socket in order, so every entry before the marker is in).
//!
//! Skipped, with the reason, where journald or journalctl is not installed
//! (`ci/deps-journald.sh` installs them), or the namespace cannot be made
//! (not root, no `unshare`, a sandbox that refuses a mount namespace);
//! `NOWAIT_REQUIRE_TEST_TOOLS=1` (set by CI once it installed them) turns
//! a missing tool into a failure, but not a namespace the machine cannot
//! give: that one stays a skip with its reason.
//!
//! Where there is no journald (every system but Linux, and Linux's
//! portable backend), building a logger with the sink is a clear error.
#![cfg(not(miri))] // processes and sockets

use nowait_core::format::Json;
use nowait_core::{Builder, Sink};

#[test]
fn another_format_on_a_journald_sink_is_a_build_error() {
    let err = Builder::new()
        .sink(Sink::journald().format(Json::new()))
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("journald's own format"), "{err}");
}

#[cfg(not(all(target_os = "linux", not(nowait_portable))))]
#[test]
fn without_journald_building_the_sink_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let err = Builder::new()
        .sink(Sink::journald_with(
            nowait_core::format::Journald::new().socket_path(dir.path().join("socket")),
        ))
        .build()
        .unwrap_err();
    let text = format!(
        "{err}: {}",
        std::error::Error::source(&err).map_or(String::new(), |e| e.to_string())
    );
    assert!(text.contains("journald exists only on Linux"), "{text}");
}

#[cfg(all(target_os = "linux", not(nowait_portable)))]
mod real {
    use std::collections::BTreeMap;
    use std::io::Read as _;
    use std::os::unix::net::UnixDatagram;
    use std::path::{Path, PathBuf};
    use std::process::{Child, Command, Stdio};
    use std::time::{Duration, Instant};

    use nowait_core::__private::event::{register_callsite, EventBuf};
    use nowait_core::event::{Callsite, FieldName, SiteKey};
    use nowait_core::format::Journald;
    use nowait_core::record::kind;
    use nowait_core::{Builder, FullPolicy, Level, Sink};
    use serde_json::Value;

    const JOURNALD: &str = "/lib/systemd/systemd-journald";

    /// Why a journald cannot be had here: a tool is missing (a failure
    /// under `NOWAIT_REQUIRE_TEST_TOOLS=1`), or the machine will not give
    /// a mount namespace (always a skip).
    enum NoJournal {
        Missing(String),
        NoNamespace(String),
    }

    fn skip(why: NoJournal) {
        match why {
            NoJournal::Missing(why) => nowait_testkit::skip_missing_tool(&why),
            NoJournal::NoNamespace(why) => eprintln!("skipping: {why}"),
        }
    }

    fn journalctl() -> Option<PathBuf> {
        let path = std::env::var_os("PATH").unwrap_or_default();
        std::env::split_paths(&path)
            .chain([PathBuf::from("/usr/bin"), PathBuf::from("/bin")])
            .map(|d| d.join("journalctl"))
            .find(|p| p.is_file())
    }

    const SCRIPT: &str = r#"set -e
T="$1"
mount --bind "$T/run" /run
mount --bind "$T/log" /var/log
echo 10 > /proc/sys/net/unix/max_dgram_qlen
exec /lib/systemd/systemd-journald
"#;

    const CONF: &str = "[Journal]
Storage=volatile
RateLimitIntervalSec=0
RateLimitBurst=0
ReadKMsg=no
ForwardToSyslog=no
ForwardToKMsg=no
ForwardToConsole=no
ForwardToWall=no
Audit=no
RuntimeMaxUse=1G
RuntimeMaxFileSize=256M
";

    /// A systemd-journald of our own (see the module docs).
    struct Journal {
        dir: tempfile::TempDir,
        child: Option<Child>,
        journalctl: PathBuf,
    }

    impl Journal {
        /// Starts journald, or says why it cannot (the caller skips).
        fn start() -> Result<Journal, NoJournal> {
            if !Path::new(JOURNALD).is_file() {
                return Err(NoJournal::Missing(format!(
                    "{JOURNALD} is not installed (bash ci/deps-journald.sh)"
                )));
            }
            let Some(journalctl) = journalctl() else {
                return Err(NoJournal::Missing(
                    "journalctl is not installed (bash ci/deps-journald.sh)".into(),
                ));
            };
            if !rustix::process::geteuid().is_root() {
                return Err(NoJournal::NoNamespace(
                    "not root: cannot make a mount namespace for journald".into(),
                ));
            }
            let dir = tempfile::tempdir().unwrap();
            let t = dir.path();
            for d in ["run/systemd/journald.conf.d", "log"] {
                std::fs::create_dir_all(t.join(d)).unwrap();
            }
            std::fs::write(
                t.join("run/systemd/journald.conf.d/zz-nowait-test.conf"),
                CONF,
            )
            .unwrap();
            let child = Command::new("unshare")
                .args([
                    "-m",
                    "-n",
                    "--propagation",
                    "private",
                    "sh",
                    "-c",
                    SCRIPT,
                    "sh",
                ])
                .arg(t)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|e| NoJournal::Missing(format!("cannot run unshare: {e}")))?;
            let mut j = Journal {
                dir,
                child: Some(child),
                journalctl,
            };
            let socket = j.socket();
            let deadline = Instant::now() + Duration::from_secs(10);
            while !(socket.exists() && j.journal_dir().is_some()) {
                if let Some(status) = j.child.as_mut().unwrap().try_wait().unwrap() {
                    let mut err = String::new();
                    let _ = j
                        .child
                        .take()
                        .unwrap()
                        .stderr
                        .take()
                        .unwrap()
                        .read_to_string(&mut err);
                    let why = format!(
                        "cannot make the namespace for journald ({status}): {}",
                        err.trim()
                    );
                    // `unshare` or `mount` refused: the machine gives no
                    // namespace. Anything else (journald itself failing)
                    // is a failure to look at.
                    return Err(if err.contains("unshare") || err.contains("mount") {
                        NoJournal::NoNamespace(why)
                    } else {
                        NoJournal::Missing(why)
                    });
                }
                assert!(Instant::now() < deadline, "journald never made its socket");
                std::thread::sleep(Duration::from_millis(20));
            }
            // Never a byte to a journald outside the temp dir.
            let real = socket.canonicalize().unwrap();
            assert!(
                real.starts_with(j.dir.path().canonicalize().unwrap()),
                "{}",
                real.display()
            );
            Ok(j)
        }

        fn socket(&self) -> PathBuf {
            self.dir.path().join("run/systemd/journal/socket")
        }

        /// `TEMP/run/log/journal/MACHINE-ID`, once journald made it.
        fn journal_dir(&self) -> Option<PathBuf> {
            std::fs::read_dir(self.dir.path().join("run/log/journal"))
                .ok()?
                .filter_map(Result::ok)
                .map(|e| e.path())
                .find(|p| p.is_dir())
        }

        /// Waits until every entry sent before now has been stored: sends a
        /// marker (blocking: it waits for room in journald's queue) and reads
        /// until it is there.
        fn sync(&self, tag: &str) {
            let marker = format!("MESSAGE=sync\nSYSLOG_IDENTIFIER={tag}-sync\n");
            let tx = UnixDatagram::unbound().unwrap();
            tx.send_to(marker.as_bytes(), self.socket()).unwrap();
            let deadline = Instant::now() + Duration::from_secs(30);
            while self.entries(&format!("{tag}-sync")).is_empty() {
                assert!(
                    Instant::now() < deadline,
                    "journald never stored the marker"
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        }

        /// The entries of `SYSLOG_IDENTIFIER=tag`, in journal order.
        fn entries(&self, tag: &str) -> Vec<BTreeMap<String, Value>> {
            let out = self
                .journalctl()
                .args(["-o", "json", "--all"])
                .arg(format!("SYSLOG_IDENTIFIER={tag}"))
                .output()
                .unwrap();
            assert!(
                out.status.success() || out.stdout.is_empty(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8(out.stdout)
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect()
        }

        fn journalctl(&self) -> Command {
            let mut c = Command::new(&self.journalctl);
            c.arg("--directory").arg(self.journal_dir().unwrap());
            c
        }
    }

    impl Drop for Journal {
        fn drop(&mut self) {
            if let Some(mut child) = self.child.take() {
                let _ = child.kill();
                let _ = child.wait();
            }
        }
    }

    macro_rules! journal_or_skip {
        () => {
            match Journal::start() {
                Ok(j) => j,
                Err(why) => return skip(why),
            }
        };
    }

    /// A field's value as bytes: journalctl writes a value that is not
    /// printable UTF-8 as an array of byte values.
    fn bytes(v: &Value) -> Vec<u8> {
        match v {
            Value::String(s) => s.clone().into_bytes(),
            Value::Array(a) => a.iter().map(|b| b.as_u64().unwrap() as u8).collect(),
            other => panic!("not a field value: {other}"),
        }
    }

    /// The fields a client sent (journald's own start with `_`).
    fn sent(entry: &BTreeMap<String, Value>) -> BTreeMap<String, Vec<u8>> {
        entry
            .iter()
            .filter(|(k, _)| !k.starts_with('_'))
            .map(|(k, v)| (k.clone(), bytes(v)))
            .collect()
    }

    static SITE: u8 = 0;
    static SPAN: u8 = 0;

    #[test]
    fn every_field_arrives_as_sent_and_a_400_kib_entry_through_a_memfd() {
        let journal = journal_or_skip!();
        let tag = "nowait-fields";
        let (logger, guard) = Builder::new()
            .capacity(4 << 20)
            .sink(Sink::journald_with(
                Journald::new()
                    .syslog_identifier(tag)
                    .socket_path(journal.socket())
                    .with_thread_names(true)
                    .with_thread_ids(true),
            ))
            .build()
            .unwrap();

        let key = SiteKey::of(&SITE);
        register_callsite(
            key,
            Callsite::new(Level::Warn, "app::http", "event")
                .fields(vec!["message", "status", "_pid", "priority", "user.name"])
                .location(Some("app::http"), Some("src/http.rs"), Some(42)),
        );
        register_callsite(
            SiteKey::of(&SPAN),
            Callsite::new(Level::Info, "app", "conn").fields(vec!["peer"]),
        );
        let event = std::thread::Builder::new()
            .name("worker-1".into())
            .spawn(move || {
                let mut buf = EventBuf::new();
                buf.begin_at(1, key);
                buf.thread();
                buf.begin_span(SiteKey::of(&SPAN));
                buf.str(FieldName::Index(0), "10.0.0.7");
                buf.end_span();
                buf.str(FieldName::Index(0), "GET /\nforged=1");
                buf.u64(FieldName::Index(1), 200);
                buf.i64(FieldName::Index(2), -7);
                buf.bool(FieldName::Index(3), true);
                buf.str(FieldName::Index(4), "\x1b[31mroot");
                buf.f64(FieldName::Inline("ratio"), 0.5);
                buf.str(FieldName::Inline("9lives"), "cat");
                buf.str(FieldName::Inline(&"x".repeat(70)), "long");
                (
                    buf.as_bytes().to_vec(),
                    format!("{:?}", std::thread::current().id()),
                )
            })
            .unwrap()
            .join()
            .unwrap();
        let (payload, thread_id) = event;
        nowait_core::__private::logger::push(&logger, Level::Warn, kind::EVENT, &[&payload])
            .unwrap();
        logger.log(Level::Error, "plain line").unwrap();
        let big: String = (0..400 << 10)
            .map(|i| (b'a' + (i % 26) as u8) as char)
            .collect();
        logger.log(Level::Debug, &big).unwrap();
        drop(guard);
        let stats = logger.stats();
        assert_eq!(stats.sinks[0].records_written, 3, "{stats:?}");

        journal.sync(tag);
        let entries = journal.entries(tag);
        assert_eq!(entries.len(), 3, "{entries:?}");
        let id = thread_id
            .trim_start_matches("ThreadId(")
            .trim_end_matches(')');
        let want: BTreeMap<String, Vec<u8>> = [
            ("MESSAGE", "GET /\nforged=1"),
            ("PRIORITY", "4"),
            ("SYSLOG_IDENTIFIER", tag),
            ("TARGET", "app::http"),
            ("CODE_FILE", "src/http.rs"),
            ("CODE_LINE", "42"),
            ("THREAD_NAME", "worker-1"),
            ("THREAD_ID", id),
            ("SPAN_NAME", "conn"),
            ("PEER", "10.0.0.7"),
            ("STATUS", "200"),
            ("F_PID", "-7"),
            ("F_PRIORITY", "true"),
            ("USER_NAME", "\x1b[31mroot"),
            ("RATIO", "0.5"),
            ("F9LIVES", "cat"),
            (&"X".repeat(64), "long"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.as_bytes().to_vec()))
        .collect();
        assert_eq!(sent(&entries[0]), want);
        // journald's own fields are its own: a client's `_PID` is not one.
        assert_eq!(
            bytes(&entries[0]["_PID"]),
            std::process::id().to_string().into_bytes()
        );

        let want: BTreeMap<String, Vec<u8>> = [
            ("MESSAGE", "plain line"),
            ("PRIORITY", "3"),
            ("SYSLOG_IDENTIFIER", tag),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.as_bytes().to_vec()))
        .collect();
        assert_eq!(sent(&entries[1]), want);

        let fields = sent(&entries[2]);
        assert_eq!(fields["PRIORITY"], b"7");
        assert!(
            fields["MESSAGE"] == big.as_bytes(),
            "the 400 KiB message arrived with {} bytes",
            fields["MESSAGE"].len()
        );

        // No escape sequence reaches a terminal through journalctl.
        let shown = journal
            .journalctl()
            .args(["-o", "verbose"])
            .arg(format!("SYSLOG_IDENTIFIER={tag}"))
            .output()
            .unwrap();
        assert!(!shown.stdout.contains(&0x1b));
        let shown = String::from_utf8_lossy(&shown.stdout);
        assert!(
            shown.contains("USER_NAME=[9B blob data]"),
            "{}",
            shown
                .lines()
                .filter(|l| l.contains("USER"))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }

    #[test]
    fn of_20000_entries_into_a_full_queue_the_missing_are_the_counted() {
        let journal = journal_or_skip!();
        let tag = "nowait-loss";
        let (logger, guard) = Builder::new()
            .capacity(16 << 20)
            .full_policy(FullPolicy::Drop)
            .sink(
                Sink::journald_with(
                    Journald::new()
                        .syslog_identifier(tag)
                        .socket_path(journal.socket()),
                )
                .buffer_size(8 << 10),
            )
            .build()
            .unwrap();
        let mut accepted = 0u64;
        for i in 0..20_000u64 {
            if logger.log(Level::Info, &format!("entry {i:05}")).is_ok() {
                accepted += 1;
            }
        }
        drop(guard);
        let s = logger.stats();
        let sink = &s.sinks[0];
        journal.sync(tag);
        let entries = journal.entries(tag);
        let (notices, records): (Vec<_>, Vec<_>) = entries
            .iter()
            .partition(|e| e.contains_key("NOWAIT_NOTICE"));
        let arrived = records.len() as u64;
        let dropped = sink.dropped_overflow + sink.dropped_failed + sink.dropped_format;
        eprintln!(
        "accepted {accepted}, arrived {arrived}, dropped {} (overflow {}, failed {}), abandoned {}, {} notices",
        dropped,
        sink.dropped_overflow,
        sink.dropped_failed,
        sink.abandoned,
        notices.len()
    );
        assert_eq!(accepted, 20_000, "{s:?}");
        assert_eq!(arrived, sink.records_written, "{s:?}");
        assert_eq!(arrived + dropped + sink.abandoned, accepted, "{s:?}");
        assert!(sink.dropped_overflow > 0, "the queue never filled: {s:?}");
        // In order, each once.
        let mut last = None;
        for r in &records {
            let msg = String::from_utf8(bytes(&r["MESSAGE"])).unwrap();
            let n: u64 = msg.strip_prefix("entry ").unwrap().parse().unwrap();
            assert!(last < Some(n), "{msg} after {last:?}");
            last = Some(n);
        }
        // journald holds the drops' counts. The notice of the last shedding
        // episode goes at the very end; if journald takes nothing for 100 ms
        // then (a loaded machine), the shutdown does not wait for it and that
        // notice is lost with the sink's other pending bytes, its count still
        // in `Stats`. Seen once in about 20 runs of both tests at once, never
        // alone: so at most the drops, and never none of them.
        let reported: u64 = notices
            .iter()
            .map(|n| {
                let msg = String::from_utf8(bytes(&n["MESSAGE"])).unwrap();
                assert_eq!(bytes(&n["PRIORITY"]), b"4", "{msg}");
                assert_eq!(bytes(&n["TARGET"]), b"nowait", "{msg}");
                msg.split(' ').next().unwrap().parse::<u64>().unwrap()
            })
            .sum();
        let messages = || {
            notices
                .iter()
                .map(|n| String::from_utf8_lossy(&bytes(&n["MESSAGE"])).into_owned())
                .collect::<Vec<_>>()
        };
        assert!(reported > 0, "{:?}", messages());
        assert!(reported <= dropped + sink.abandoned, "{:?}", messages());
        if reported < dropped + sink.abandoned {
            eprintln!(
                "the last loss notice did not reach journald: {:?}",
                messages()
            );
        }
    }
}
