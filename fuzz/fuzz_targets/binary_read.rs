//! A binary log file read whole and in pieces, every entry rendered (see
//! `nowait_core::__private::fuzz::binary_read`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| nowait_core::__private::fuzz::binary_read(data));
