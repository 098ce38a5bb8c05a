//! nowait core (work in progress).
#![deny(unsafe_code)]
#![warn(
    missing_docs,
    missing_debug_implementations,
    unreachable_pub,
    unsafe_op_in_unsafe_fn,
    clippy::undocumented_unsafe_blocks
)]

mod error;
#[allow(unsafe_code)]
mod exit_hook;
mod hooks;
mod level;
mod logger;
mod policy;
mod record;
#[allow(unsafe_code)]
mod ring;
mod sink;
mod stats;
mod sync;
mod timefmt;
mod writer;

pub use error::{BuildError, FlushError, PushError, SetGlobalError};
pub use level::{Level, ParseLevelError};
pub use logger::{
    global, set_global, Builder, Guard, Logger, DEFAULT_BATCH_SIZE, DEFAULT_CAPACITY,
    DEFAULT_FLUSH_INTERVAL,
};
pub use policy::FullPolicy;
pub use record::{escape_into, kind, Format, MakeFormat, Notice, Plain, Record, SinkInfo};
pub use sink::Sink;
pub use stats::{SinkStats, Stats};

// === front-end support (event encoding, formats, macros) ===
