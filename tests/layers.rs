//! The layers of the library crates: no circle between the top-level modules of `xcsh-core`
//! or of `xcsh-tools`. An arrow goes from module A to module B when A's code (comments aside)
//! names `crate::B`; a circle means two concepts that cannot be understood, tested or changed
//! apart. The crate docs draw the layers this enforces.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The top-level modules of the crate whose sources are in `src`, each with its files.
fn modules(src: &Path) -> BTreeMap<String, Vec<PathBuf>> {
    let mut modules = BTreeMap::new();
    for entry in std::fs::read_dir(src).expect("read src") {
        let path = entry.expect("entry").path();
        let name = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default();
        if path.is_dir() {
            let mut files = Vec::new();
            let mut stack = vec![path.clone()];
            while let Some(dir) = stack.pop() {
                for entry in std::fs::read_dir(&dir).expect("read dir") {
                    let p = entry.expect("entry").path();
                    if p.is_dir() {
                        stack.push(p);
                    } else if p.extension().is_some_and(|e| e == "rs") {
                        files.push(p);
                    }
                }
            }
            modules
                .entry(name.to_owned())
                .or_insert_with(Vec::new)
                .extend(files);
        } else if path.extension().is_some_and(|e| e == "rs") && name != "lib" && name != "main" {
            modules
                .entry(name.to_owned())
                .or_insert_with(Vec::new)
                .push(path);
        }
    }
    modules
}

/// Source text without `//` comments (doc comments included: a link is not a dependency).
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("read source");
    text.lines()
        .map(|line| match line.find("//") {
            // Keep `//` inside a string literal, roughly: only strip when no quote precedes it.
            Some(at) if !line[..at].contains('"') => &line[..at],
            _ => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The modules each module names through `crate::…`, also inside `use crate::{a, b::c}`.
fn arrows(modules: &BTreeMap<String, Vec<PathBuf>>) -> BTreeMap<String, BTreeSet<String>> {
    let mut graph = BTreeMap::new();
    for (module, files) in modules {
        let mut to = BTreeSet::new();
        for file in files {
            let text = code(file);
            let mut rest = text.as_str();
            while let Some(at) = rest.find("crate::") {
                rest = &rest[at + "crate::".len()..];
                let names: Vec<&str> = if let Some(group) = rest.strip_prefix('{') {
                    let end = group.find('}').unwrap_or(group.len());
                    group[..end]
                        .split(',')
                        .filter_map(|item| item.trim().split("::").next())
                        .collect()
                } else {
                    let end = rest
                        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                        .unwrap_or(rest.len());
                    vec![&rest[..end]]
                };
                for name in names {
                    let name = name.trim();
                    if name != module && modules.contains_key(name) {
                        to.insert(name.to_owned());
                    }
                }
            }
        }
        graph.insert(module.clone(), to);
    }
    graph
}

/// The circles of the graph (strongly connected components of more than one module).
fn circles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Reachability by repeated search: the graphs are a few dozen nodes.
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.to_owned()];
        while let Some(node) = stack.pop() {
            for next in graph.get(&node).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&String, BTreeSet<String>> =
        graph.keys().map(|m| (m, reach(m))).collect();
    let mut circles: Vec<Vec<String>> = Vec::new();
    let mut placed = BTreeSet::new();
    for module in graph.keys() {
        if placed.contains(module) {
            continue;
        }
        let mut circle: Vec<String> = graph
            .keys()
            .filter(|other| {
                *other != module
                    && reaches[module].contains(*other)
                    && reaches[other].contains(module)
            })
            .cloned()
            .collect();
        if !circle.is_empty() {
            circle.push(module.clone());
            circle.sort();
            placed.extend(circle.iter().cloned());
            circles.push(circle);
        }
    }
    circles
}

fn check(crate_dir: &str) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(crate_dir)
        .join("src");
    let modules = modules(&src);
    assert!(modules.len() > 5, "no modules found in {}", src.display());
    let graph = arrows(&modules);
    let circles = circles(&graph);
    let arrows_of = |circle: &[String]| {
        circle
            .iter()
            .map(|m| {
                let inside: Vec<&String> =
                    graph[m].iter().filter(|to| circle.contains(to)).collect();
                format!("  {m} -> {inside:?}")
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(
        circles.is_empty(),
        "the top-level modules of {crate_dir} form circles:\n{}",
        circles
            .iter()
            .map(|c| format!("{c:?}\n{}", arrows_of(c)))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn xcsh_core_modules_form_layers() {
    check("xcsh-core");
}

#[test]
fn xcsh_tools_modules_form_layers() {
    check("xcsh-tools");
}

#[test]
fn a_circle_is_found() {
    let graph: BTreeMap<String, BTreeSet<String>> = [
        ("a", vec!["b"]),
        ("b", vec!["c"]),
        ("c", vec!["a"]),
        ("d", vec!["a"]),
    ]
    .into_iter()
    .map(|(m, to)| (m.to_owned(), to.into_iter().map(str::to_owned).collect()))
    .collect();
    assert_eq!(circles(&graph), [["a", "b", "c"]]);
}
