//! [`Plain`]: the simplest format, for text records.

use super::{escape_into, Format, MakeFormat, SinkInfo};
use crate::record::{kind, Notice, Record};

/// The simplest format: a [`kind::TEXT`] record is written as its line,
/// escaped, with a newline; a record of any other kind as `<kind N record>`;
/// a notice as `nowait: <LEVEL> <message>`.
///
/// # Examples
///
/// ```
/// use nowait_core::Level;
/// use nowait_core::format::{Format, Plain};
/// use nowait_core::record::Record;
///
/// let mut out = Vec::new();
/// Plain.format(&Record::new(Level::Info, 0, b"GET / 200\nforged"), &mut out);
/// assert_eq!(out, b"GET / 200\\nforged\n");
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Plain;

impl Format for Plain {
    fn format(&mut self, record: &Record<'_>, out: &mut Vec<u8>) {
        if record.kind() == kind::TEXT {
            escape_into(record.payload(), out);
        } else {
            out.extend_from_slice(b"<kind ");
            out.extend_from_slice(itoa::Buffer::new().format(record.kind()).as_bytes());
            out.extend_from_slice(b" record>");
        }
        out.push(b'\n');
    }

    fn notice(&mut self, notice: &Notice<'_>, out: &mut Vec<u8>) {
        out.extend_from_slice(b"nowait: ");
        out.extend_from_slice(notice.level().as_str().as_bytes());
        out.push(b' ');
        escape_into(notice.message().as_bytes(), out);
        out.push(b'\n');
    }
}

impl MakeFormat for Plain {
    fn make_format(&self, _sink: &SinkInfo) -> Box<dyn Format> {
        Box::new(Plain)
    }
}
