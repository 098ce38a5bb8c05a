//! The writers of text every output shares: RFC 3339 timestamps
//! (`time.rs`) and floating-point numbers exactly as Rust prints them
//! (`float.rs`). They import nothing of nowait.

pub(crate) mod float;
pub(crate) mod time;
