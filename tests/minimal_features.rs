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

/// A crate that serves its tools over MCP on stdio (`features = ["macros", "mcp"]`) builds
/// rmcp but no HTTP stack: hyper and rustls come with `http` and `tls`.
#[test]
fn mcp_on_stdio_builds_no_http_stack() {
    let crates = tree("xcsh", "macros,mcp");
    assert!(crates.iter().any(|c| c == "rmcp"), "{crates:?}");
    let http: Vec<&String> = crates
        .iter()
        .filter(|c| ["hyper", "rustls", "tokio-rustls", "h2"].contains(&c.as_str()))
        .collect();
    assert!(http.is_empty(), "`mcp` alone pulls in {http:?}");
    assert!(tree("xcsh", "macros,http").iter().any(|c| c == "hyper"));
}

/// The crates `cargo tree` finds for a package with these features (normal edges only).
fn tree(package: &str, features: &str) -> Vec<String> {
    let output = Command::new(env!("CARGO"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args([
            "tree",
            "--package",
            package,
            "--no-default-features",
            "--features",
            features,
            "--edges",
            "normal",
            "--prefix",
            "none",
            "--offline",
        ])
        .output()
        .expect("cargo tree runs");
    assert!(
        output.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut found: Vec<String> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|l| l.split(' ').next())
        .map(str::to_owned)
        .collect();
    found.sort();
    found.dedup();
    found
}

/// The tree-sitter grammar crates `cargo tree` finds for a package with these features.
fn grammars(package: &str, features: &str) -> Vec<String> {
    tree(package, features)
        .into_iter()
        .filter(|name| name.starts_with("tree-sitter-") && name != "tree-sitter-language")
        .collect()
}

/// A crate needing two languages compiles two grammars; the facade's `tools` keeps the six
/// it always had; `all-languages` (on for the binary) compiles every one.
#[test]
fn grammars_are_compiled_per_language_feature() {
    assert_eq!(
        grammars("xcsh-tools", "lang-java,lang-go"),
        ["tree-sitter-go", "tree-sitter-java"]
    );
    assert_eq!(
        grammars("xcsh", "tools"),
        [
            "tree-sitter-go",
            "tree-sitter-javascript",
            "tree-sitter-python",
            "tree-sitter-rust",
            "tree-sitter-typescript"
        ]
    );
    assert_eq!(grammars("xcsh", "all-languages").len(), 28);
}
