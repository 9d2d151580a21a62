//! The README's snippets build as written: its Rust blocks run as doc tests of the crate
//! (`src/lib.rs`), and this checks that the manifest it shows names every crate they use, so
//! a new crate made of that `[dependencies]` block and a snippet compiles.

use std::collections::BTreeSet;

const README: &str = include_str!("../README.md");

/// The fenced blocks of one language, in order.
fn blocks(lang: &str) -> Vec<String> {
    let fence = format!("```{lang}");
    let mut out = Vec::new();
    let mut current: Option<String> = None;
    for line in README.lines() {
        match &mut current {
            None if line.trim_end() == fence => current = Some(String::new()),
            Some(_) if line.trim_end() == "```" => out.extend(current.take()),
            Some(block) => {
                block.push_str(line);
                block.push('\n');
            }
            None => {}
        }
    }
    out
}

/// The crates a Rust snippet names: roots of `use` paths and of `name::` paths in
/// attributes and expressions.
fn crates_used(code: &str) -> BTreeSet<String> {
    let mut used = BTreeSet::new();
    let bytes = code.as_bytes();
    for (at, _) in code.match_indices("::") {
        let start = code[..at]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map_or(0, |i| i + 1);
        let name = &code[start..at];
        // A path's root: not preceded by another `::` segment, nor a method's turbofish
        // (`.custom::<T>()`), nor a type (capitalised).
        let preceded = (start >= 2 && &bytes[start - 2..start] == b"::")
            || (start >= 1 && bytes[start - 1] == b'.')
            || bytes.get(at + 2) == Some(&b'<');
        let lowercase = name.chars().next().is_some_and(|c| c.is_ascii_lowercase());
        if !name.is_empty() && !preceded && lowercase {
            used.insert(name.to_owned());
        }
    }
    for builtin in ["std", "core", "alloc", "crate", "self", "super"] {
        used.remove(builtin);
    }
    used
}

#[test]
fn the_manifest_names_every_crate_the_snippets_use() {
    let manifest = blocks("toml")
        .into_iter()
        .find(|block| block.contains("[dependencies]"))
        .expect("README.md shows a `[dependencies]` block");
    let table: toml::Table = manifest
        .parse()
        .expect("the README's manifest is valid TOML");
    let deps = table["dependencies"]
        .as_table()
        .expect("[dependencies] is a table");
    let snippets = blocks("rust");
    assert!(!snippets.is_empty(), "README.md has Rust examples");
    for (i, code) in snippets.iter().enumerate() {
        for name in crates_used(code) {
            // Items of the snippet itself (`session::`, …) are not crates: only names that are
            // neither a module nor a local of the snippet count.
            if code.contains(&format!("mod {name}")) || code.contains(&format!("let {name}")) {
                continue;
            }
            assert!(
                deps.contains_key(&name),
                "README example {} uses `{name}::`, but the README's [dependencies] block does not \
                 list `{name}`: add it there",
                i + 1
            );
        }
    }
    assert!(
        deps.contains_key("tokio"),
        "the examples run on #[tokio::main]"
    );
}

#[test]
fn crate_roots_are_found() {
    let used = crates_used(
        "use xcsh::serde_json::json;\n#[tokio::main]\nfn f() { std::mem::drop(a::B); }",
    );
    assert_eq!(
        used,
        BTreeSet::from(["a".into(), "tokio".into(), "xcsh".into()])
    );
}
