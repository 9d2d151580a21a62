#![no_main]
//! See `src/entry.rs` (`pattern_compile`) for what is checked.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    xcsh_fuzz::entry::pattern_compile(data);
});
