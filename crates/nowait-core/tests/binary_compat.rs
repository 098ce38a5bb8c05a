//! Binary logs stay readable: the committed sample of each format version
//! (`tests/data/binary-vN.nwb`, written by nowait's own tests when that
//! version was made) renders exactly as it did then, through Text and
//! both JSON schemas. This process has none of the sample's call sites or
//! threads: every name comes from the file's catalog.

use std::path::Path;

use nowait_core::binary::{Reader, Stop};
use nowait_core::format::{Json, MakeFormat, SinkInfo, Text};

fn render(file: &[u8], make: &dyn MakeFormat) -> String {
    let mut format = make.make_format(&SinkInfo::new("compat", false));
    let mut out = Vec::new();
    let mut reader = Reader::new(file);
    for entry in &mut reader {
        entry.unwrap().render(&mut *format, &mut out);
    }
    assert_eq!(reader.stop(), Stop::End);
    String::from_utf8(out).unwrap()
}

fn text() -> Text {
    Text::new()
        .with_ansi(false)
        .with_thread_names(true)
        .with_thread_ids(true)
        .with_file(true)
        .with_line_number(true)
        .with_trace_ids(true)
}

fn json() -> Json {
    Json::new()
        .with_thread_names(true)
        .with_thread_ids(true)
        .with_file(true)
        .with_line_number(true)
        .with_trace_ids(true)
}

/// Each rendering of the samples: its file suffix and its format.
fn renderings() -> [(&'static str, Box<dyn MakeFormat>); 3] {
    [
        ("txt", Box::new(text())),
        ("json", Box::new(json())),
        ("nowait.json", Box::new(Json::nowait_schema())),
    ]
}

fn sample_renders_as_it_did(version: u32) {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let name = format!("binary-v{version}");
    let file = std::fs::read(data.join(format!("{name}.nwb"))).unwrap();
    assert_eq!(file[8..12], version.to_le_bytes(), "{name}: its header");
    for (suffix, make) in renderings() {
        let want = std::fs::read_to_string(data.join(format!("{name}.{suffix}"))).unwrap();
        assert_eq!(render(&file, &*make), want, "{name}.{suffix}");
    }
}

/// Rewrites the expected renderings of every committed sample with this
/// build's: run only when a rendering changes on purpose (a fix), and
/// review the diff.
#[test]
#[ignore = "rewrites the committed renderings: run with --ignored after a deliberate change"]
fn rewrite_the_renderings_of_every_sample() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    for version in 1..=nowait_core::binary::VERSION {
        let name = format!("binary-v{version}");
        let file = std::fs::read(data.join(format!("{name}.nwb"))).unwrap();
        for (suffix, make) in renderings() {
            std::fs::write(data.join(format!("{name}.{suffix}")), render(&file, &*make)).unwrap();
        }
    }
}

#[test]
fn the_version_1_sample_renders_as_it_did() {
    sample_renders_as_it_did(1);
}

#[test]
fn the_version_2_sample_renders_as_it_did() {
    sample_renders_as_it_did(2);
}

/// Both samples hold the same records: the two versions render them the
/// same (but for the name and id of the thread that wrote each sample).
#[test]
fn both_versions_render_the_same_records_alike() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let read = |n: &str| std::fs::read_to_string(data.join(n)).unwrap();
    // The writer's thread: the sample-writing test's name, and its id.
    let same_thread = |s: String| -> String {
        let mut out = String::new();
        for line in s.lines() {
            let mut line = line
                .replace("write_the_version_1_sample", "WRITER")
                .replace("write_the_sample_of_this_version", "WRITER");
            if let Some(at) = line.find("ThreadId(") {
                if let Some(end) = line[at..].find(')') {
                    line.replace_range(at..at + end + 1, "ThreadId(_)");
                }
            }
            out.push_str(&line);
            out.push('\n');
        }
        out
    };
    for suffix in ["txt", "json", "nowait.json"] {
        assert_eq!(
            same_thread(read(&format!("binary-v1.{suffix}"))),
            same_thread(read(&format!("binary-v2.{suffix}"))),
            "{suffix}"
        );
    }
    assert!(
        std::fs::metadata(data.join("binary-v2.nwb")).unwrap().len()
            < std::fs::metadata(data.join("binary-v1.nwb")).unwrap().len()
    );
}
