//! A crash-durable file's recovery over arbitrary bytes (see
//! `nowait_core::__private::fuzz::durable_recover`).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| nowait_core::__private::fuzz::durable_recover(data));
