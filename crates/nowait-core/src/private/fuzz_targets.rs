//! Entry points for the fuzz targets in `fuzz/` and their regression tests
//! (`tests/fuzz_regressions.rs`), compiled only with `--cfg fuzzing` (cargo-fuzz sets it; CI's portable-backend pass sets it to replay the regressions on stable). Each takes
//! arbitrary bytes and must return for every input: no panic, no
//! allocation beyond what the input's length bounds, no unbounded
//! recursion. Not part of the public API.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use crate::event::{register_callsite, register_foreign_thread, Callsite, SiteKey, ITEM_THREAD};
use crate::filter::Filter;
use crate::format::journald::{parse_entry, valid_name};
use crate::format::Journald;
use crate::format::Json;
use crate::format::Logfmt;
use crate::format::Syslog;
use crate::format::Text;
use crate::format::Timer;
use crate::format::{unescaped_at, Framing};
use crate::format::{Format, MakeFormat, Plain, SinkInfo};
use crate::level::Level;
use crate::record::{kind, Record};

/// Arbitrary text as a filter directive list: `parse` and `parse_lossy`
/// agree (a list `parse` accepts gives the same filter and no errors
/// lossily, one it refuses at least one error), the filter's `Display`
/// form parses back to it, errors print without raw control characters,
/// and matching any target returns.
pub fn filter_parse(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let strict = Filter::parse(&text);
    let (lossy, errors) = Filter::parse_lossy(&text);
    match &strict {
        Ok(filter) => {
            assert_eq!(filter, &lossy, "{text:?}");
            assert!(errors.is_empty(), "{text:?}: {errors:?}");
        }
        Err(e) => {
            assert!(!errors.is_empty(), "{text:?}: {e}");
            assert!(errors.len() <= Filter::MAX_DIRECTIVES + 1);
        }
    }
    for e in strict.as_ref().err().into_iter().chain(&errors) {
        let message = e.to_string();
        assert_eq!(unescaped_at(message.as_bytes(), &[]), None, "{message:?}");
    }
    let shown = lossy.to_string();
    assert_eq!(Filter::parse(&shown).as_ref(), Ok(&lossy), "{shown:?}");
    for target in text.split([',', '=']).chain(["", "a", "a::b"]) {
        for level in Level::ALL {
            let on = lossy.enabled(target, level);
            assert!(!on || lossy.max_level().is_some_and(|max| level >= max));
        }
    }
}

/// Arbitrary text as a rate-limit directive list (the `tracing` layer's
/// `with_limits`): the parser returns, an accepted list keeps its caps and
/// prints back to itself, an error is bounded and quotes nothing raw.
pub fn limit_directives(data: &[u8]) {
    crate::limit::fuzz_limit_directives(data);
}

/// The call sites and threads [`format_event`] events can name: keys 1
/// (an event with a deferred message), 2 (an event whose message has no
/// placeholders) and 3 (a span), and two recovered threads; every string
/// holds control, line-breaking and bidi characters.
fn fuzz_world() -> &'static [u32; 2] {
    static THREADS: OnceLock<[u32; 2]> = OnceLock::new();
    THREADS.get_or_init(|| {
        register_callsite(
            SiteKey::from_raw(1),
            Callsite::new(Level::Info, "app::db\x1b[2J\n", "ev\u{202e}")
                .fields(vec!["message", "rows", "ta\nble", "\u{2066}x", "log.file"])
                .location(Some("app::db"), Some("src/\x1b]0;t\x07.rs"), Some(42))
                .message_format("took {} ms {:?} {:>8.3e}\u{202e}\r"),
        );
        register_callsite(
            SiteKey::from_raw(2),
            Callsite::new(Level::Warn, "app", "ev")
                .fields(vec!["message", "message"])
                .message_format("done\u{2028}\x1b[1m\u{85}"),
        );
        register_callsite(
            SiteKey::from_raw(3),
            Callsite::new(Level::Info, "app", "co\x1bnn\u{2069}").fields(vec!["peer", "i\nd"]),
        );
        [
            register_foreign_thread(
                Some("w\x1b[2J\nforged\u{202e}"),
                "ThreadId(\x1b[31m\n7)",
                "ThreadId(\x1b[31m\n07)",
            ),
            register_foreign_thread(None, "ThreadId(\u{9b}\r8)", "ThreadId(\u{2028}08)"),
        ]
    })
}

/// Removes the colour codes a painting format writes itself
/// (`ESC [ digits m`), so that any ESC left came from the record.
fn strip_colours(out: &[u8]) -> Vec<u8> {
    let mut plain = Vec::with_capacity(out.len());
    let mut rest = out;
    while let Some((&b, tail)) = rest.split_first() {
        if b == 0x1b && tail.first() == Some(&b'[') {
            let digits = tail[1..].iter().take_while(|c| c.is_ascii_digit()).count();
            if tail.get(1 + digits) == Some(&b'm') {
                rest = &tail[2 + digits..];
                continue;
            }
        }
        plain.push(b);
        rest = tail;
    }
    plain
}

/// Arbitrary bytes as a record, formatted by every format: Text (plain,
/// every option on, colours, uptime), the `tracing-subscriber` JSON
/// schema (thread, file, line, flattened; with fixed fields and flattened
/// spans), nowait's JSON schema, ECS and Cloud Logging JSON, logfmt
/// (whose line must also split into unique `key=value` pairs), syslog
/// around Text and JSON (line and octet-counted framing), journald,
/// `Plain` and OTLP's protobuf (with the `otlp` feature). The first byte picks the level, the kind (event, text, other)
/// and which call site and thread an event's header names (see
/// `fuzz_world`); the rest is the payload.
///
/// Every output is one record: a line (or a syslog frame) in which no
/// character a format must escape appears raw, once the format's own
/// framing (the final newline, an octet count, its own colour codes) is
/// taken off; journald's is one entry of valid field names, its values
/// framed rather than escaped.
pub fn format_event(data: &[u8]) {
    let Some((&control, payload)) = data.split_first() else {
        return;
    };
    let threads = fuzz_world();
    let level = Level::ALL[usize::from(control & 7) % 5];
    let record_kind = match control >> 3 & 3 {
        0 | 1 => kind::EVENT,
        2 => kind::TEXT,
        _ => 77,
    };
    let mut payload = payload.to_vec();
    if record_kind == kind::EVENT {
        aim_event(&mut payload, control >> 5, threads);
    }
    let record = Record::new(level, record_kind, &payload);

    let makes: [(Box<dyn MakeFormat>, bool); 10] = [
        (Box::new(Text::new().with_ansi(false)), false),
        (
            Box::new(
                Text::new()
                    .with_ansi(true)
                    .with_thread_names(true)
                    .with_thread_ids(true)
                    .with_file(true)
                    .with_line_number(true)
                    .with_trace_ids(true)
                    .with_timer(Timer::Uptime),
            ),
            true,
        ),
        (
            Box::new(
                Text::new()
                    .with_ansi(false)
                    .with_thread_ids(true)
                    .with_target(false)
                    .with_level(false),
            ),
            false,
        ),
        (
            Box::new(
                Json::new()
                    .with_thread_names(true)
                    .with_thread_ids(true)
                    .with_file(true)
                    .with_line_number(true)
                    .flatten_event(true),
            ),
            false,
        ),
        (Box::new(Json::new().with_thread_names(true)), false),
        (Box::new(Json::nowait_schema()), false),
        (
            Box::new(
                Json::new()
                    .field("service", "fuzz")
                    .field("level", "x")
                    .flatten_event(true)
                    .flatten_spans(true)
                    .with_file(true)
                    .with_line_number(true)
                    .with_thread_names(true),
            ),
            false,
        ),
        (
            Box::new(
                Json::ecs()
                    .field("error", "x")
                    .with_file(true)
                    .with_line_number(true)
                    .with_thread_names(true)
                    .with_thread_ids(true),
            ),
            false,
        ),
        (
            Box::new(
                Json::cloud_logging()
                    .with_cloud_project("p")
                    .with_file(true)
                    .with_line_number(true)
                    .with_thread_ids(true),
            ),
            false,
        ),
        (
            Box::new(
                Logfmt::new()
                    .field("service", "fuzz")
                    .with_file(true)
                    .with_line_number(true)
                    .with_thread_names(true)
                    .with_thread_ids(true)
                    .with_timer(Timer::Uptime),
            ),
            false,
        ),
    ];
    let sink = SinkInfo::new("fuzz", false);
    let mut out = Vec::new();
    for (i, (make, painted)) in makes.iter().enumerate() {
        let mut format = make.make_format(&sink);
        out.clear();
        format.format(&record, &mut out);
        check_line(&out, *painted, "format");
        let logfmt = i == makes.len() - 1;
        if logfmt {
            check_logfmt(&out);
        }
        out.clear();
        format.format_kept(&record, &mut out);
        check_line(&out, *painted, "kept");
        if logfmt {
            check_logfmt(&out);
        }
    }
    let syslog = Syslog::new().app_name("fuzz").hostname("host");
    for (inner, framing) in [
        (
            Text::new().with_ansi(false).make_format(&sink),
            Framing::Line,
        ),
        (Json::new().make_format(&sink), Framing::OctetCounted),
        (Json::nowait_schema().make_format(&sink), Framing::Datagram),
    ] {
        let mut format = syslog.wrap(inner, framing);
        out.clear();
        format.format(&record, &mut out);
        let frame = match framing {
            Framing::OctetCounted => {
                let (count, frame) = out
                    .iter()
                    .position(|&b| b == b' ')
                    .map(|at| (&out[..at], &out[at + 1..]))
                    .expect("an octet count");
                let count: usize = std::str::from_utf8(count).unwrap().parse().unwrap();
                assert_eq!(count, frame.len(), "octet count");
                frame.to_vec()
            }
            Framing::Line => out.strip_suffix(b"\n").expect("a line").to_vec(),
            Framing::Datagram => out.clone(),
        };
        assert!(
            frame.starts_with(b"<"),
            "{:?}",
            String::from_utf8_lossy(&out)
        );
        if let Some(at) = unescaped_at(&frame, &[]) {
            panic!(
                "syslog: raw character at {at}: {:?}",
                String::from_utf8_lossy(&out)
            );
        }
    }
    let mut journald = Journald::new()
        .syslog_identifier("fuzz")
        .with_thread_names(true)
        .with_thread_ids(true)
        .make_format(&sink);
    out.clear();
    journald.format(&record, &mut out);
    let fields = parse_entry(&out).unwrap_or_else(|| {
        panic!(
            "journald: not one entry: {:?}",
            String::from_utf8_lossy(&out)
        )
    });
    assert_eq!(fields.first().map(|f| f.0.as_str()), Some("MESSAGE"));
    assert_eq!(fields.iter().filter(|f| f.0 == "PRIORITY").count(), 1);
    for (name, _) in &fields {
        assert!(valid_name(name), "journald name {name:?}");
    }
    out.clear();
    Plain.format(&record, &mut out);
    check_line(&out, false, "plain");
    // OTLP: one whole `log_records` entry.
    #[cfg(feature = "otlp")]
    {
        let mut otlp = crate::sink::otlp::MakeOtlp.make_format(&sink);
        out.clear();
        otlp.format(&record, &mut out);
        assert_eq!(
            crate::sink::otlp::encode::entry_len(&out),
            Some(out.len()),
            "otlp: not one entry"
        );
    }
}

/// Points an event's header at the fuzz world: a site key other than 0
/// becomes one of the registered ones 1 to 3 (or stays, if a multiple of
/// 4), a thread item one of the recovered threads, this thread, or stays.
fn aim_event(payload: &mut [u8], choice: u8, threads: &[u32; 2]) {
    let Some(site) = payload.first_chunk::<16>().map(|h| {
        let mut word = [0; 8];
        word.copy_from_slice(&h[8..]);
        u64::from_le_bytes(word)
    }) else {
        return;
    };
    let thread_at = if site == 0 {
        let Some(len) = payload.get(16..18) else {
            return;
        };
        18 + usize::from(u16::from_le_bytes([len[0], len[1]]))
    } else {
        if site % 4 != 0 {
            payload[8..16].copy_from_slice(&(site % 4).to_le_bytes());
        }
        16
    };
    if payload.get(thread_at) == Some(&ITEM_THREAD) {
        if let Some(number) = payload.get_mut(thread_at + 1..thread_at + 5) {
            let pick = match choice & 3 {
                0 => threads[0],
                1 => threads[1],
                2 => crate::event::thread_number(),
                _ => return,
            };
            number.copy_from_slice(&pick.to_le_bytes());
        }
    }
}

/// One line, its newline the only line break, no character raw that a
/// format must escape (after the format's own colour codes, if `painted`).
fn check_line(out: &[u8], painted: bool, what: &str) {
    let shown = || String::from_utf8_lossy(out);
    let line = out
        .strip_suffix(b"\n")
        .unwrap_or_else(|| panic!("{what}: no final newline: {:?}", shown()));
    let line = if painted {
        strip_colours(line)
    } else {
        line.to_vec()
    };
    if let Some(at) = unescaped_at(&line, &[]) {
        panic!("{what}: raw character at {at}: {:?}", shown());
    }
}

/// One logfmt record: `key=value` pairs separated by single spaces, each
/// key once and free of space, `=` and `"`, each value bare (no space,
/// `=`, `"`) or one quoted string whose escapes end inside it.
fn check_logfmt(out: &[u8]) {
    let shown = || String::from_utf8_lossy(out).into_owned();
    let line = out.strip_suffix(b"\n").unwrap_or(out);
    let mut keys: Vec<&[u8]> = Vec::new();
    let mut rest = line;
    while !rest.is_empty() {
        let eq = rest
            .iter()
            .position(|&b| b == b'=')
            .unwrap_or_else(|| panic!("logfmt: a key without `=`: {:?}", shown()));
        let key = &rest[..eq];
        assert!(
            !key.is_empty() && !key.iter().any(|&b| b == b' ' || b == b'"'),
            "logfmt: key {key:?} in {:?}",
            shown()
        );
        assert!(
            !keys.contains(&key),
            "logfmt: key {key:?} twice in {:?}",
            shown()
        );
        keys.push(key);
        rest = &rest[eq + 1..];
        let end = if rest.first() == Some(&b'"') {
            let mut i = 1;
            loop {
                match rest.get(i) {
                    Some(b'\\') => i += 2,
                    Some(b'"') => break i + 1,
                    Some(_) => i += 1,
                    None => panic!("logfmt: an open quote in {:?}", shown()),
                }
            }
        } else {
            let end = rest.iter().position(|&b| b == b' ').unwrap_or(rest.len());
            assert!(
                !rest[..end].iter().any(|&b| b == b'=' || b == b'"'),
                "logfmt: bare value {:?} in {:?}",
                String::from_utf8_lossy(&rest[..end]),
                shown()
            );
            end
        };
        rest = &rest[end..];
        if let Some(tail) = rest.strip_prefix(b" ") {
            assert!(
                !tail.is_empty(),
                "logfmt: a trailing space in {:?}",
                shown()
            );
            rest = tail;
        } else {
            assert!(
                rest.is_empty(),
                "logfmt: no space after a value in {:?}",
                shown()
            );
        }
    }
}

/// A dead process's crash-durable file, as the next start reads it. The
/// input is the file's first bytes; the file is as long as its header
/// states (zeros past the input) when that is at most 8 MiB, else the
/// input alone. No sink is named, so no file is written: every pending
/// mirror byte must come out as a counted loss.
pub fn durable_recover(data: &[u8]) {
    const MAX: usize = 8 << 20;
    let mut file = data.to_vec();
    if let Some(len) = crate::durable::stated_len(data).filter(|&n| n <= MAX) {
        file.resize(len.max(file.len()), 0);
    }
    let out = crate::durable::recover_bytes(&file, &[]);
    assert!(out.notices.iter().all(|n| !n.is_empty()));
}

/// 2026-01-05T12:00:00Z, the rolling sink's clock in [`durable_sinks`].
fn jan_5() -> std::time::SystemTime {
    std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_767_614_400)
}

/// Every regular file under `dir`, by its path from there, with its bytes.
fn files_under(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut todo = vec![PathBuf::new()];
    while let Some(rel) = todo.pop() {
        let entries = std::fs::read_dir(dir.join(&rel)).expect("the harness's directory");
        for entry in entries {
            let entry = entry.expect("a directory entry");
            let path = rel.join(entry.file_name());
            let kind = entry.file_type().expect("a file type");
            if kind.is_dir() {
                todo.push(path);
            } else {
                assert!(kind.is_file(), "{}: made by recovery", path.display());
                let bytes = std::fs::read(dir.join(&path)).expect("a file of the harness");
                files.insert(path, bytes);
            }
        }
    }
    files
}

/// A dead process's crash-durable file recovered into real sinks
/// (`fuzz_targets/durable_sinks.rs`), in `dir`, a directory of this
/// process's that the target owns (it puts `dir/work` back as it starts
/// on every call). The input is the file, padded as [`durable_recover`] pads it;
/// the recovering logger has a file sink, `work/app.log`, and a daily
/// rolling sink in `work/roll` (`app.DATE.log`), and a stored path
/// `/fuzz/NAME` in the input names `work/NAME` (see
/// `durable::recover_into`), so that the file's pending bytes can be
/// completed into them.
///
/// Recovery touches no file but those sinks' own: the file sink's and the
/// rolling sink's named files are only appended to (a rolling name may be
/// created), any other file (`work/outside/victim`) stays as it was, and
/// nothing else is made. What recovery hands the new logger (its notices,
/// then the records, in the order the build pushes them) goes through
/// Text (plain, and every option with colours), JSON (the
/// `tracing-subscriber` schema flattened with every option, and nowait's),
/// logfmt and `Plain`: each is one line with nothing raw in it.
pub fn durable_sinks(data: &[u8], dir: &Path) {
    const MAX: usize = 8 << 20;
    let work = dir.join("work");
    for sub in ["roll", "outside"] {
        std::fs::create_dir_all(work.join(sub)).expect("the harness's directory");
    }
    let work = std::fs::canonicalize(&work).expect("the harness's directory");
    let start: [(&str, &[u8]); 3] = [
        ("app.log", b"an earlier line\n"),
        ("roll/app.2026-01-05.log", b"an earlier line of today\n"),
        ("outside/victim", b"not a log\n"),
    ];
    // Back to the start, touching only what the last call changed (a
    // directory's metadata is slow to change on a journaling file system).
    for (path, bytes) in files_under(&work) {
        match start.iter().find(|(name, _)| Path::new(name) == path) {
            Some((_, want)) if bytes == *want => {}
            Some((_, want)) => {
                std::fs::write(work.join(&path), want).expect("a file of the harness")
            }
            None => std::fs::remove_file(work.join(&path)).expect("a file of the harness"),
        }
    }
    for (name, bytes) in start {
        if !work.join(name).exists() {
            std::fs::write(work.join(name), bytes).expect("a file of the harness");
        }
    }
    let rolling = crate::rolling::Rolling::daily(work.join("roll"), "app")
        .filename_suffix("log")
        .clock(jan_5);
    let before = files_under(&work);

    let mut file = data.to_vec();
    if let Some(len) = crate::durable::stated_len(data).filter(|&n| n <= MAX) {
        file.resize(len.max(file.len()), 0);
    }
    let recovered = crate::durable::recover_into(&mut file, &work, &rolling);
    assert!(recovered.notices.iter().all(|n| !n.is_empty()));

    let naming = rolling.naming();
    let sinks = |path: &Path| {
        path == Path::new("app.log")
            || (path.parent() == Some(Path::new("roll"))
                && path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .and_then(|n| naming.parse(n))
                    .is_some_and(|(_, compressed)| !compressed))
    };
    let after = files_under(&work);
    for (path, old) in &before {
        assert!(after.contains_key(path), "{}: removed", path.display());
        if !sinks(path) {
            assert_eq!(&after[path], old, "{}: changed", path.display());
        }
    }
    for (path, now) in &after {
        assert!(
            sinks(path) || before.contains_key(path),
            "{}: made",
            path.display()
        );
        let old = before.get(path).map_or(&[][..], Vec::as_slice);
        assert!(
            now.starts_with(old),
            "{}: changed, not appended to",
            path.display()
        );
    }

    // Each format, whether it paints, whether it is logfmt.
    let makes: [(Box<dyn MakeFormat>, bool, bool); 6] = [
        (Box::new(Text::new().with_ansi(false)), false, false),
        (
            Box::new(
                Text::new()
                    .with_ansi(true)
                    .with_thread_names(true)
                    .with_thread_ids(true)
                    .with_file(true)
                    .with_line_number(true)
                    .with_trace_ids(true),
            ),
            true,
            false,
        ),
        (
            Box::new(
                Json::new()
                    .with_thread_names(true)
                    .with_thread_ids(true)
                    .with_file(true)
                    .with_line_number(true)
                    .with_trace_ids(true)
                    .flatten_event(true),
            ),
            false,
            false,
        ),
        (Box::new(Json::nowait_schema()), false, false),
        (
            Box::new(
                Logfmt::new()
                    .with_file(true)
                    .with_line_number(true)
                    .with_thread_names(true)
                    .with_thread_ids(true),
            ),
            false,
            true,
        ),
        (Box::new(Plain), false, false),
    ];
    let sink = SinkInfo::new("fuzz", false);
    let mut formats: Vec<_> = makes
        .iter()
        .map(|(make, painted, logfmt)| (make.make_format(&sink), *painted, *logfmt))
        .collect();
    let mut out = Vec::new();
    for (level, kind, payload) in crate::durable::items(recovered) {
        let record = Record::new(level, kind, &payload);
        for (format, painted, logfmt) in &mut formats {
            out.clear();
            format.format(&record, &mut out);
            check_line(&out, *painted, "durable");
            if *logfmt {
                check_logfmt(&out);
            }
        }
    }
}

/// A binary log file (`fuzz_targets/binary_read.rs`): the first byte
/// picks the size of the reads the rest is fed in (a file read as it
/// grows), the rest is the file. The reader returns for every input; it
/// reads the same entries whole and in pieces; where it stops is
/// consistent with the input's length; every entry renders as one line
/// (or, a backtrace's marker line in JSON, none) with nothing raw in Text
/// (no colours), both JSON schemas and `Plain`;
/// its error messages quote nothing raw.
pub fn binary_read(data: &[u8]) {
    use crate::binary::{Reader, Stop};
    let Some((&control, file)) = data.split_first() else {
        return;
    };
    let makes: [Box<dyn MakeFormat>; 4] = [
        Box::new(
            Text::new()
                .with_ansi(false)
                .with_thread_names(true)
                .with_thread_ids(true)
                .with_file(true)
                .with_line_number(true)
                .with_trace_ids(true),
        ),
        Box::new(
            Json::new()
                .with_thread_names(true)
                .with_file(true)
                .with_line_number(true)
                .with_trace_ids(true),
        ),
        Box::new(Json::nowait_schema()),
        Box::new(Plain),
    ];
    let sink = SinkInfo::new("fuzz", false);
    let mut formats: Vec<Box<dyn Format>> = makes.iter().map(|m| m.make_format(&sink)).collect();
    let mut whole = Reader::new(file);
    let mut offsets = Vec::new();
    let mut out = Vec::new();
    for entry in whole.by_ref() {
        match entry {
            Ok(entry) => {
                assert!(entry.offset() < file.len() as u64);
                offsets.push(entry.offset());
                for format in &mut formats {
                    out.clear();
                    entry.render(&mut **format, &mut out);
                    if out.is_empty() {
                        // A backtrace's marker line, which JSON leaves out.
                        assert!(entry.is_notice());
                        continue;
                    }
                    let line = out.strip_suffix(b"\n").expect("one line");
                    assert!(!line.contains(&b'\n'));
                    assert_eq!(
                        unescaped_at(line, &[]),
                        None,
                        "{:?}",
                        String::from_utf8_lossy(&out)
                    );
                }
                let _ = (entry.target(), entry.field("message"), entry.time_nanos());
            }
            Err(e) => {
                assert!(e.offset() <= file.len() as u64);
                assert_eq!(unescaped_at(e.to_string().as_bytes(), &[]), None);
            }
        }
    }
    let stop = whole.stop();
    match stop {
        Stop::End => assert_eq!(whole.offset(), file.len() as u64),
        Stop::Cut { at, len } => assert_eq!(at + len, file.len() as u64),
        _ => {}
    }
    // The same file arriving `step` bytes at a time, the reader asked
    // for more after each.
    struct Trickle<'a> {
        file: &'a [u8],
        at: usize,
        there: std::rc::Rc<std::cell::Cell<usize>>,
    }
    impl std::io::Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let end = self.there.get().min(self.file.len());
            let n = buf.len().min(end.saturating_sub(self.at));
            buf[..n].copy_from_slice(&self.file[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }
    let step = usize::from(control).max(1);
    let there = std::rc::Rc::new(std::cell::Cell::new(0));
    let mut pieces = Reader::new(Trickle {
        file,
        at: 0,
        there: there.clone(),
    });
    let mut again = Vec::new();
    loop {
        there.set(there.get() + step);
        for entry in pieces.by_ref().flatten() {
            again.push(entry.offset());
        }
        if there.get() >= file.len() || pieces.stop() == Stop::Failed {
            break;
        }
    }
    assert_eq!(again, offsets);
    assert_eq!(pieces.stop(), stop);
}

/// The binary log's compact event form (`fuzz_targets/binary_compact.rs`):
/// the first byte picks the time difference's base, the rest is read both
/// as a compact body and as an event payload. A body that decodes encodes
/// back to the same bytes; a payload that encodes decodes back to the same
/// payload; neither side panics, and a refusal leaves its output as it
/// was.
pub fn binary_compact(data: &[u8]) {
    crate::binary::fuzz_compact(data);
}

/// An OTLP receiver's answer (`fuzz_targets/otlp_response.rs`): the first
/// byte picks how the rest is cut into reads (and whether it is sent
/// again and again past the response bound), then the connection ends.
/// The reader must give an answer or refuse it, holding at most its
/// bound.
#[cfg(feature = "otlp")]
pub fn otlp_response(data: &[u8]) {
    crate::sink::otlp::fuzz_response(data);
}

/// The OTLP exporter's environment variables
/// (`fuzz_targets/otlp_env.rs`): the first two bytes pick two variables,
/// the rest, split at its first NUL, gives their values (names resolve
/// without the network).
/// [`Otlp::from_env_with`](crate::sink::otlp::Otlp::from_env_with) must
/// return, the list parser keep its bounds, no error show a header's
/// value or anything raw, the default endpoint serve only when no
/// endpoint variable is set, and credentials over plain HTTP and TLS
/// settings with an `http://` endpoint be refused as documented.
#[cfg(feature = "otlp")]
pub fn otlp_env(data: &[u8]) {
    crate::sink::otlp::fuzz_env(data);
}

/// The receiver's certificates for [`otlp_exchange`], PEM.
#[cfg(feature = "otlp-tls")]
#[derive(Debug, Clone)]
pub struct ExchangeCerts {
    /// The CA the client trusts.
    pub ca: String,
    /// The receiver's certificate chain, for `127.0.0.1`, leaf first.
    pub chain: String,
    /// The receiver's private key.
    pub key: String,
}

/// The OTLP sink's whole exchange with a receiver
/// (`fuzz_targets/otlp_exchange.rs`): the client, as a sink opens and
/// drives it, against a receiver in memory whose bytes the input gives:
/// plain HTTP, TLS bytes made up from the first, or after a real TLS 1.3
/// or 1.2 handshake (with `certs`), records sealed with the receiver's
/// keys or application data; cut into pieces of every size, ending or
/// coming without end. The exchange must settle, at the end of the
/// connection or by its timeout, within the reader's bound, and without
/// an error that shows a control character.
#[cfg(feature = "otlp-tls")]
pub fn otlp_exchange(data: &[u8], certs: &ExchangeCerts) {
    crate::sink::otlp::fuzz_exchange(data, &certs.ca, &certs.chain, &certs.key);
}

/// Names in a rolling sink's directory (`fuzz_targets/rolling_names.rs`):
/// a name the sink takes for one of its files is exactly a name it gives.
pub fn rolling_names(data: &[u8]) {
    crate::rolling::naming::fuzz_names(data);
}

/// A rolling sink's housekeeping over a hostile directory listing
/// (`fuzz_targets/rolling_housekeeping.rs`): only the sink's own files
/// before the current one are compressed, counted or removed, and the
/// retention limits hold after.
pub fn rolling_housekeeping(data: &[u8]) {
    crate::rolling::maintain::fuzz_housekeeping(data);
}
