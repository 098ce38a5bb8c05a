//! `Builder::crash_durable` on Windows (not available yet): `build()`
//! fails with an error that says so, and creates nothing at the path.
#![cfg(windows)]

use nowait_core::{Builder, Sink};

#[test]
fn crash_durable_is_a_clear_build_error() {
    let dir = tempfile::tempdir().unwrap();
    let ring = dir.path().join("app.nowait");
    let err = Builder::new()
        .sink(Sink::file(dir.path().join("app.log")))
        .crash_durable(&ring)
        .build()
        .unwrap_err();
    let text = format!("{err}: {:?}", std::error::Error::source(&err));
    assert!(text.contains("crash-durable"), "{text}");
    assert!(text.contains("not available on Windows"), "{text}");
    assert!(!ring.exists(), "build() created {}", ring.display());
}
