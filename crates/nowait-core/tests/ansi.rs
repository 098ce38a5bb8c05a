//! ANSI colours: only on terminals, never when `NO_COLOR` is set (and not
//! empty), never in files. One test: it changes the environment.

use nowait_core::__private::event::EventBuf;
use nowait_core::event::FieldName;
use nowait_core::format::{MakeFormat, SinkInfo, Text};
use nowait_core::record::{kind, Record};
use nowait_core::{Builder, Level, Sink};

fn render(terminal: bool) -> String {
    let mut buf = EventBuf::new();
    buf.begin_inline(0, "app");
    buf.str(FieldName::Inline("message"), "hello");
    let mut format = Text::new().make_format(&SinkInfo::new("stdout", terminal));
    let mut out = Vec::new();
    format.format(
        &Record::new(Level::Info, kind::EVENT, buf.as_bytes()),
        &mut out,
    );
    String::from_utf8(out).unwrap()
}

#[test]
fn colours_only_on_terminals_without_no_color() {
    std::env::remove_var("NO_COLOR");
    assert!(render(true).contains("\x1b[32m INFO\x1b[0m"));
    assert!(!render(false).contains('\x1b'));

    std::env::set_var("NO_COLOR", "1");
    assert!(
        !render(true).contains('\x1b'),
        "NO_COLOR=1 disables colours"
    );
    std::env::set_var("NO_COLOR", "");
    assert!(render(true).contains('\x1b'), "an empty NO_COLOR does not");
    std::env::remove_var("NO_COLOR");

    // A file sink with the default format: plain text.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app.log");
    let (logger, guard) = Builder::new()
        .catch_panics(false)
        .flush_on_exit(false)
        .sink(Sink::file(&path))
        .build()
        .unwrap();
    nowait_core::set_global(logger).unwrap();
    nowait_core::warn!(n = 1u8, "to a file");
    drop(guard);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.ends_with("  WARN ansi: to a file n=1\n"), "{text:?}");
    assert!(!text.contains('\x1b'));
}
