//! Replays every input a fuzz target (`fuzz/fuzz_targets/`) ever failed on,
//! on stable: each file in `tests/fuzz-regressions/TARGET/` goes through
//! the same entry point the target calls, which must return. The targets
//! whose harness is code of its own (a receiver in memory, a directory of
//! sinks) also replay their committed seeds (`fuzz/corpus/TARGET/`), so
//! that the harness runs here too. Built with `--cfg fuzzing` (CI's
//! portable-backend pass sets it).
#![cfg(fuzzing)]

use std::path::Path;

/// The inputs kept for `target`; a target with no directory has none yet.
fn inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    files_in(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fuzz-regressions")
            .join(target),
    )
}

/// The committed seeds of `target`.
fn seeds(target: &str) -> Vec<(String, Vec<u8>)> {
    let seeds = files_in(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fuzz/corpus")
            .join(target),
    );
    assert!(!seeds.is_empty(), "no seeds for {target}");
    seeds
}

/// The files in `dir`, by name, with their bytes.
fn files_in(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<_> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    out.sort();
    out
}

fn replay(target: &str, run: impl Fn(&[u8])) {
    for (name, bytes) in inputs(target) {
        eprintln!("{target}: {name} ({} bytes)", bytes.len());
        run(&bytes);
    }
}

/// [`replay`], the committed seeds too.
fn replay_with_seeds(target: &str, run: impl Fn(&[u8])) {
    for (name, bytes) in seeds(target) {
        eprintln!("{target}: seed {name} ({} bytes)", bytes.len());
        run(&bytes);
    }
    replay(target, run);
}

#[test]
fn binary_read() {
    replay_with_seeds("binary_read", nowait_core::__private::fuzz::binary_read);
}

#[test]
fn binary_compact() {
    replay_with_seeds(
        "binary_compact",
        nowait_core::__private::fuzz::binary_compact,
    );
}

#[test]
fn durable_recover() {
    replay(
        "durable_recover",
        nowait_core::__private::fuzz::durable_recover,
    );
}

/// The sinks' directory is this test's.
#[test]
fn durable_sinks() {
    let dir = tempfile::tempdir().unwrap();
    replay_with_seeds("durable_sinks", |data| {
        nowait_core::__private::fuzz::durable_sinks(data, dir.path())
    });
}

/// The receiver's certificate comes from the same CA maker as the fuzz
/// target's.
#[cfg(feature = "otlp-tls")]
#[test]
fn otlp_exchange() {
    use nowait_core::__private::fuzz::ExchangeCerts;
    let ca = nowait_testkit::ca::Ca::new("nowait fuzz CA");
    let (chain, key) = ca.leaf(&["127.0.0.1"], false);
    let certs = ExchangeCerts {
        ca: ca.pem(),
        chain,
        key,
    };
    replay_with_seeds("otlp_exchange", |data| {
        nowait_core::__private::fuzz::otlp_exchange(data, &certs)
    });
}

#[cfg(feature = "otlp")]
#[test]
fn otlp_response() {
    replay("otlp_response", nowait_core::__private::fuzz::otlp_response);
}

#[cfg(feature = "otlp")]
#[test]
fn otlp_env() {
    replay("otlp_env", nowait_core::__private::fuzz::otlp_env);
}

#[test]
fn rolling_names() {
    replay("rolling_names", nowait_core::__private::fuzz::rolling_names)
}

/// Its inputs are the listings of the shared-directory findings (names of
/// another user dated in the future, a 1 TiB file of theirs, their `.gz`
/// of the sink's log), which the decisions before them got wrong.
#[test]
fn rolling_housekeeping() {
    replay(
        "rolling_housekeeping",
        nowait_core::__private::fuzz::rolling_housekeeping,
    )
}

#[test]
fn filter_parse() {
    replay("filter_parse", nowait_core::__private::fuzz::filter_parse)
}

#[test]
fn limit_directives() {
    replay(
        "limit_directives",
        nowait_core::__private::fuzz::limit_directives,
    )
}

#[test]
fn format_event() {
    replay("format_event", nowait_core::__private::fuzz::format_event)
}
