//! Compile-fail and compile-pass fixtures of `graph!`, checked with trybuild.
//!
//! Regenerate the expected `.stderr` files with `TRYBUILD=overwrite cargo test -p ui-tests`, then read them.

#![forbid(unsafe_code)]

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/fail/*/*.rs");
    t.pass("tests/pass/*.rs");
}
