#![no_main]
//! See `src/entry.rs` (`session_call`) for what is checked.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    xcsh_fuzz::entry::session_call(data);
});
