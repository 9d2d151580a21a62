#![no_main]
//! See `src/entry.rs` (`changeset_ops`) for what is checked.

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    xcsh_fuzz::entry::changeset_ops(data);
});
