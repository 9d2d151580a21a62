//! Compile-fail tests for the macros: each file in `tests/ui/` is one misuse, and its
//! `.stderr` is the exact diagnostic a user sees. Regenerate with `TRYBUILD=overwrite`
//! after a deliberate change, then read every diff.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/ui/*.rs");
}
