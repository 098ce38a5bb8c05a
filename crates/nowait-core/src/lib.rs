//! nowait core (work in progress).
#![deny(unsafe_code)]
#![warn(
    missing_docs,
    missing_debug_implementations,
    unreachable_pub,
    unsafe_op_in_unsafe_fn,
    clippy::undocumented_unsafe_blocks
)]

mod level;
mod record;
#[allow(unsafe_code)]
mod ring;
mod sync;

pub use level::{Level, ParseLevelError};
pub use record::{escape_into, kind, Format, MakeFormat, Notice, Plain, Record, SinkInfo};

// === front-end support (event encoding, formats, macros) ===
