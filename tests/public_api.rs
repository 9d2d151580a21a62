//! The facade's public surface is a decision, not an accident: every public path of `xcsh`
//! is listed in docs/API.md, and this test fails when the code and that file disagree.
//!
//! The surface is read from the source with syn (the facade re-exports explicit lists, no
//! globs, so the source names every item). After a deliberate change, run
//! `XCSH_UPDATE_API=1 cargo test --test public_api` to rewrite the list in docs/API.md, then
//! describe any new root item there.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use syn::{Attribute, Item, UseTree, Visibility};

const SURFACE_START: &str = "<!-- surface:start -->";
const SURFACE_END: &str = "<!-- surface:end -->";
/// The root holds what a tool author names in a normal program, and no more.
const MAX_ROOT_ITEMS: usize = 25;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn is_hidden(attrs: &[Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("doc")
            && attr
                .meta
                .require_list()
                .is_ok_and(|list| list.tokens.to_string() == "hidden")
    })
}

fn is_public(vis: &Visibility) -> bool {
    matches!(vis, Visibility::Public(_))
}

/// The names a `use` tree brings in (the last segment, or its `as` rename).
fn use_names(tree: &UseTree, out: &mut Vec<String>) {
    match tree {
        UseTree::Path(path) => use_names(&path.tree, out),
        UseTree::Name(name) => out.push(name.ident.to_string()),
        UseTree::Rename(rename) => out.push(rename.rename.to_string()),
        UseTree::Group(group) => group.items.iter().for_each(|t| use_names(t, out)),
        UseTree::Glob(_) => panic!("a glob re-export in the facade: list the items explicitly"),
    }
}

/// Whether `path` (a `use` path into one of xcsh's own crates) names a module of that crate:
/// re-exporting a module whole would make everything in it public without a decision.
fn is_crate_module(path: &[String]) -> bool {
    let Some((krate, rest)) = path.split_first() else {
        return false;
    };
    let dir = match krate.as_str() {
        "xcsh_core" => "xcsh-core",
        "xcsh_tools" => "xcsh-tools",
        // A proc-macro crate exports only macros (`pending` is one, and a module inside).
        _ => return false,
    };
    if rest.is_empty() {
        return false;
    }
    let mut at = repo().join(dir).join("src");
    for segment in &rest[..rest.len() - 1] {
        at = at.join(segment);
    }
    let last = &rest[rest.len() - 1];
    // Declared `pub mod` in its parent (a private module of the same name is not re-exported:
    // `xcsh_core::resolve` is a function).
    let parent = if rest.len() == 1 {
        at.join("lib.rs")
    } else if at.join("mod.rs").exists() {
        at.join("mod.rs")
    } else {
        at.with_extension("rs")
    };
    std::fs::read_to_string(parent)
        .is_ok_and(|text| text.lines().any(|l| l.trim() == format!("pub mod {last};")))
}

/// The full paths a `use` tree names (`a::b::{c, d}` gives `a::b::c` and `a::b::d`).
fn use_paths(tree: &UseTree, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    match tree {
        UseTree::Path(path) => {
            prefix.push(path.ident.to_string());
            use_paths(&path.tree, prefix, out);
            prefix.pop();
        }
        UseTree::Name(name) => {
            let mut full = prefix.clone();
            full.push(name.ident.to_string());
            out.push(full);
        }
        UseTree::Rename(rename) => {
            let mut full = prefix.clone();
            full.push(rename.ident.to_string());
            out.push(full);
        }
        UseTree::Group(group) => group.items.iter().for_each(|t| use_paths(t, prefix, out)),
        UseTree::Glob(_) => {}
    }
}

/// Every public, documented path under `prefix` declared by `items`; `dir` is where an
/// out-of-line `mod name;` lives.
fn collect(items: &[Item], prefix: &str, dir: &Path, out: &mut BTreeSet<String>) {
    for item in items {
        let (vis, attrs, names): (&Visibility, &[Attribute], Vec<String>) = match item {
            Item::Use(u) => {
                let mut names = Vec::new();
                use_names(&u.tree, &mut names);
                if is_public(&u.vis) && !is_hidden(&u.attrs) {
                    let mut paths = Vec::new();
                    use_paths(&u.tree, &mut Vec::new(), &mut paths);
                    for path in paths.iter().filter(|p| is_crate_module(p)) {
                        // The testing module shows machinery on purpose.
                        assert!(
                            prefix.ends_with("::testing"),
                            "`{prefix}` re-exports the module `{}` whole: list its items in a facade module, so each is a decision",
                            path.join("::")
                        );
                    }
                }
                (&u.vis, &u.attrs, names)
            }
            Item::Struct(s) => (&s.vis, &s.attrs, vec![s.ident.to_string()]),
            Item::Enum(e) => (&e.vis, &e.attrs, vec![e.ident.to_string()]),
            Item::Fn(f) => (&f.vis, &f.attrs, vec![f.sig.ident.to_string()]),
            Item::Trait(t) => (&t.vis, &t.attrs, vec![t.ident.to_string()]),
            Item::Type(t) => (&t.vis, &t.attrs, vec![t.ident.to_string()]),
            Item::Const(c) => (&c.vis, &c.attrs, vec![c.ident.to_string()]),
            Item::Static(s) => (&s.vis, &s.attrs, vec![s.ident.to_string()]),
            Item::Mod(m) => {
                if !is_public(&m.vis) || is_hidden(&m.attrs) {
                    continue;
                }
                let path = format!("{prefix}::{}", m.ident);
                out.insert(path.clone());
                match &m.content {
                    Some((_, inner)) => collect(inner, &path, dir, out),
                    None => {
                        let file = dir.join(m.ident.to_string()).join("mod.rs");
                        let file = if file.exists() {
                            file
                        } else {
                            dir.join(format!("{}.rs", m.ident))
                        };
                        let source = std::fs::read_to_string(&file).unwrap();
                        let parsed = syn::parse_file(&source).unwrap();
                        collect(&parsed.items, &path, file.parent().unwrap(), out);
                    }
                }
                continue;
            }
            _ => continue,
        };
        if is_public(vis) && !is_hidden(attrs) {
            out.extend(names.into_iter().map(|name| format!("{prefix}::{name}")));
        }
    }
}

fn surface() -> BTreeSet<String> {
    let source = std::fs::read_to_string(repo().join("src/lib.rs")).unwrap();
    let parsed = syn::parse_file(&source).unwrap();
    let mut out = BTreeSet::new();
    collect(&parsed.items, "xcsh", &repo().join("src"), &mut out);
    out
}

fn rendered(surface: &BTreeSet<String>) -> String {
    let mut text = format!("{SURFACE_START}\n```text\n");
    for path in surface {
        text.push_str(path);
        text.push('\n');
    }
    text.push_str("```\n");
    text.push_str(SURFACE_END);
    text
}

#[test]
fn docs_api_md_lists_exactly_the_public_surface() {
    let api_md = repo().join("docs/API.md");
    let doc = std::fs::read_to_string(&api_md).unwrap();
    let (Some(start), Some(end)) = (doc.find(SURFACE_START), doc.find(SURFACE_END)) else {
        panic!("docs/API.md has no {SURFACE_START} … {SURFACE_END} block");
    };
    let listed = &doc[start..end + SURFACE_END.len()];
    let surface = surface();
    let expected = rendered(&surface);
    if listed == expected {
        return;
    }
    if std::env::var_os("XCSH_UPDATE_API").is_some() {
        let updated = format!(
            "{}{expected}{}",
            &doc[..start],
            &doc[end + SURFACE_END.len()..]
        );
        std::fs::write(&api_md, updated).unwrap();
        return;
    }
    let documented: BTreeSet<String> = listed
        .lines()
        .filter(|l| l.starts_with("xcsh::"))
        .map(str::to_owned)
        .collect();
    let added: Vec<_> = surface.difference(&documented).collect();
    let removed: Vec<_> = documented.difference(&surface).collect();
    panic!(
        "the public surface of `xcsh` changed without docs/API.md.\nnew, not in docs/API.md: {added:?}\nin docs/API.md, gone from the code: {removed:?}\nIf the change is deliberate, run `XCSH_UPDATE_API=1 cargo test --test public_api` and describe new root items in docs/API.md."
    );
}

#[test]
fn the_root_is_curated_and_each_root_item_is_described() {
    let root: Vec<String> = surface()
        .into_iter()
        .filter_map(|path| {
            let rest = path.strip_prefix("xcsh::")?;
            (!rest.contains("::")).then(|| rest.to_owned())
        })
        .collect();
    assert!(
        root.len() <= MAX_ROOT_ITEMS,
        "the root of `xcsh` has {} items (at most {MAX_ROOT_ITEMS}): move some into a module. {root:?}",
        root.len()
    );
    let doc = std::fs::read_to_string(repo().join("docs/API.md")).unwrap();
    for item in &root {
        assert!(
            doc.lines()
                .any(|line| line.starts_with(&format!("| `{item}`"))),
            "docs/API.md has no line `| `{item}` | …` describing the root item `{item}`"
        );
    }
}
