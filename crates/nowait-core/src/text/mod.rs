//! The writers of text every output shares: RFC 3339 timestamps
//! (`time.rs`), floating-point numbers exactly as Rust prints them
//! (`float.rs`) and decimal integers (`digits.rs`). They import nothing of
//! nowait.

pub(crate) mod digits;
pub(crate) mod float;
pub(crate) mod time;
