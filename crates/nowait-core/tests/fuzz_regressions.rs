//! Replays every input a fuzz target (`fuzz/fuzz_targets/`) ever failed on,
//! on stable: each file in `tests/fuzz-regressions/TARGET/` goes through
//! the same entry point the target calls, which must return. Built with
//! `--cfg fuzzing` (CI's portable-backend pass sets it).
#![cfg(fuzzing)]

use std::path::Path;

/// The inputs kept for `target`; a target with no directory has none yet.
fn inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz-regressions")
        .join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
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

#[test]
fn binary_read() {
    replay("binary_read", nowait_core::__private::fuzz::binary_read);
}

#[test]
fn durable_recover() {
    replay(
        "durable_recover",
        nowait_core::__private::fuzz::durable_recover,
    );
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
