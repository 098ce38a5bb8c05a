//! The binary log's compact event form, both ways (see
//! `nowait_core::__private::fuzz::binary_compact`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| nowait_core::__private::fuzz::binary_compact(data));
