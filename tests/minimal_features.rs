//! "Pay for what you use": a crate that only defines tools
//! (`default-features = false, features = ["macros"]`, as `tests/downstream` does) builds the
//! runtime and the macros and none of rmcp, hyper, clap, tree-sitter or ast-grep.

use std::process::Command;

#[test]
fn a_tools_only_crate_builds_none_of_the_heavy_dependencies() {
    let output = Command::new(env!("CARGO"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "tree",
            "--package",
            "xcsh-downstream",
            "--edges",
            "normal",
            "--prefix",
            "none",
            "--offline",
        ])
        .output()
        .expect("cargo tree runs");
    let tree = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let crates: Vec<&str> = tree.lines().filter_map(|l| l.split(' ').next()).collect();
    for wanted in ["xcsh", "xcsh-core", "xcsh-macros"] {
        assert!(crates.contains(&wanted), "{wanted} missing from:\n{tree}");
    }
    let heavy: Vec<&&str> = crates
        .iter()
        .filter(|name| {
            [
                "rmcp",
                "hyper",
                "clap",
                "tree-sitter",
                "ast-grep",
                "xcsh-tools",
            ]
            .iter()
            .any(|h| name.starts_with(h))
        })
        .collect();
    assert!(
        heavy.is_empty(),
        "a tools-only crate pulls in {heavy:?}:\n{tree}"
    );
}
