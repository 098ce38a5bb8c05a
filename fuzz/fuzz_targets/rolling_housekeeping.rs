#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    nowait_core::__private::fuzz::rolling_housekeeping(data)
});
