//! A crash-durable file's recovery into real sinks: a file sink and a
//! rolling sink in a directory of this process's, and the formats (see
//! `nowait_core::__private::fuzz::durable_sinks`). The directory is made
//! once per process under the system's temporary directory and left there
//! (libFuzzer ends the process without unwinding).
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("nowait-fuzz-durable-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a directory for the sinks");
        dir
    })
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| nowait_core::__private::fuzz::durable_sinks(data, dir()));
