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

#[test]
fn the_version_1_sample_renders_as_it_did() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let file = std::fs::read(data.join("binary-v1.nwb")).unwrap();
    let want = |name: &str| std::fs::read_to_string(data.join(name)).unwrap();
    let text = Text::new()
        .with_ansi(false)
        .with_thread_names(true)
        .with_thread_ids(true)
        .with_file(true)
        .with_line_number(true)
        .with_trace_ids(true);
    assert_eq!(render(&file, &text), want("binary-v1.txt"));
    let json = Json::new()
        .with_thread_names(true)
        .with_thread_ids(true)
        .with_file(true)
        .with_line_number(true)
        .with_trace_ids(true);
    assert_eq!(render(&file, &json), want("binary-v1.json"));
    assert_eq!(
        render(&file, &Json::nowait_schema()),
        want("binary-v1.nowait.json")
    );
}
