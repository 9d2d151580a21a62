//! Fuzz entry points, each taking raw bytes: run by `cargo +nightly fuzz run <name>` (in
//! `fuzz/`) and, on stable, by the property tests in `xcsh-tools/tests/reliability_fuzz.rs`,
//! which include this file. Each one panics when it finds a defect:
//!
//! * [`session_call`]: arbitrary JSON (or arbitrary bytes as a string) as the arguments of
//!   `ast_edit`, `ast_grep`, `resolve` or an unknown tool, through a `Session` of the built-in
//!   suite. A panic caught by the session (an error result saying "failed unexpectedly") is a
//!   defect; so is a preview that writes, or an error result without text.
//! * [`pattern_compile`]: arbitrary patterns and rewrites in each language, planned and
//!   searched over a file of that language, the preview rendered. The engine runs directly,
//!   so a panic in it, in ast-grep or in tree-sitter surfaces.
//! * [`changeset_ops`]: arbitrary sequences of modify/create/delete/rename over hostile paths
//!   (`..`, absolute, links in and out, directories), optionally a concurrent edit, then
//!   apply. On success every operation's effect is there and no temporary file is left; on
//!   failure the tree is exactly as before; nothing outside the root ever changes.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use serde_json::Value;
use xcsh_core::{Registry, Session};
use xcsh_tools::changeset::ChangeSet;
use xcsh_tools::engine::{self, Control, EditRequest, Lang, Op, Scope, SearchRequest};
use xcsh_tools::workspace::{Workspace, is_temp_artifact};
use xcsh_tools::{builtin_suite, render_preview};

/// Reads the input a byte or a slice at a time; past the end it reads zeros.
struct Input<'a>(&'a [u8]);

impl<'a> Input<'a> {
    fn byte(&mut self) -> u8 {
        match self.0.split_first() {
            Some((&b, rest)) => {
                self.0 = rest;
                b
            }
            None => 0,
        }
    }

    /// Up to the next `sep` byte (or the end), as text.
    fn text_until(&mut self, sep: u8) -> String {
        let end = self
            .0
            .iter()
            .position(|&b| b == sep)
            .unwrap_or(self.0.len());
        let (head, rest) = self.0.split_at(end);
        self.0 = rest.get(1..).unwrap_or_default();
        String::from_utf8_lossy(head).into_owned()
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[usize::from(self.byte()) % items.len()]
    }
}

// ---------------------------------------------------------------------------------------
// session_call

struct SessionFixture {
    _dir: tempfile::TempDir,
    root: PathBuf,
    registry: Arc<Registry>,
    runtime: tokio::runtime::Runtime,
    before: BTreeMap<PathBuf, Vec<u8>>,
}

fn session_fixture() -> &'static SessionFixture {
    static FIXTURE: OnceLock<SessionFixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path().canonicalize().expect("canonical");
        write_samples(&root);
        let registry = Session::builder()
            .suite(builtin_suite())
            .workspace_root(&root)
            .build_registry()
            .expect("registry");
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let before = snapshot(&root);
        SessionFixture {
            _dir: dir,
            root,
            registry,
            runtime,
            before,
        }
    })
}

/// A file per language, with code the usual patterns match.
fn write_samples(root: &Path) {
    let files = [
        (
            "src/lib.rs",
            "fn main() { let x = load().unwrap(); foo(1, 2); }\nstruct S { a: u8 }\n",
        ),
        (
            "app/main.py",
            "def f(x):\n    print(x, 1)\n    return foo(1, 2)\n",
        ),
        (
            "web/api.ts",
            "export function f(a: number) { console.log(a); return foo(1, 2); }\n",
        ),
        (
            "web/view.tsx",
            "const V = () => <div onClick={() => foo(1, 2)}>{x}</div>;\n",
        ),
        (
            "web/lib.js",
            "function f(a) { console.log(a); return foo(1, 2); }\n",
        ),
        (
            "cmd/main.go",
            "package main\nfunc main() { x := foo(1, 2); fmt.Println(x) }\n",
        ),
    ];
    for (path, text) in files {
        let path = root.join(path);
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        fs::write(path, text).expect("write");
    }
}

fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let rel = path.strip_prefix(base).unwrap_or(&path).to_path_buf();
            let Ok(meta) = fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.file_type().is_symlink() {
                let target = fs::read_link(&path).unwrap_or_default();
                out.insert(rel, target.as_os_str().as_encoded_bytes().to_vec());
            } else if meta.is_dir() {
                out.insert(rel, b"<dir>".to_vec());
                walk(base, &path, out);
            } else {
                out.insert(rel, fs::read(&path).unwrap_or_default());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// First byte: which tool; the rest: its arguments as JSON, or as a string when not JSON.
pub fn session_call(data: &[u8]) {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let fx = session_fixture();
    let tool = ["ast_edit", "ast_grep", "resolve", "no_such_tool"][usize::from(which % 4)];
    let args = serde_json::from_slice::<Value>(rest)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(rest).into_owned()));
    let session = fx.registry.session();
    let result = fx.runtime.block_on(session.call(tool, args));
    let text = result.text_content();
    assert!(
        !text.contains("failed unexpectedly"),
        "{tool} panicked inside the session: {text}"
    );
    if result.is_error() {
        assert!(
            !text.trim().is_empty(),
            "{tool}: an error result without text"
        );
    }
    // Whatever was previewed is dropped, never applied: the workspace must stay as it was.
    drop(session);
    assert_eq!(
        snapshot(&fx.root),
        fx.before,
        "{tool}: a call changed the workspace"
    );
}

// ---------------------------------------------------------------------------------------
// pattern_compile

/// First byte: the language; then up to three ops `pat 0xFE out 0xFF`; then a limit byte.
pub fn pattern_compile(data: &[u8]) {
    let fx = session_fixture();
    let ws = Workspace::new(&fx.root).expect("workspace");
    let mut input = Input(data);
    let lang = input.pick(&Lang::DEFAULT);
    let path = match lang {
        Lang::Rust => "src/lib.rs",
        Lang::Python => "app/main.py",
        Lang::TypeScript => "web/api.ts",
        Lang::Tsx => "web/view.tsx",
        Lang::JavaScript => "web/lib.js",
        Lang::Go => "cmd/main.go",
        other => unreachable!("{other} is not one of Lang::DEFAULT"),
    };
    let count = 1 + usize::from(input.byte() % 3);
    let mut ops = Vec::new();
    for _ in 0..count {
        let pat = input.text_until(0xFE);
        let out = input.text_until(0xFF);
        ops.push(Op::new(pat, out));
    }
    let limit = match input.byte() {
        0 => None,
        n => Some(usize::from(n)),
    };
    let patterns: Vec<String> = ops.iter().map(|op| op.pat.clone()).collect();
    let request = EditRequest {
        ops,
        lang: Some(lang),
        limit,
        ..EditRequest::default()
    };
    let scope = Scope::root(&ws).with_path(path);
    if let Ok(plan) = engine::plan_edits(&scope, &request, &Control::default()) {
        let _ = render_preview(&plan, 4096);
        for file in &plan.files {
            if let Ok(original) = file.read_original() {
                for r in &file.replacements {
                    let _ = (file.before(r, &original), file.after(r, &original));
                }
            }
            let _ = engine::preview::unified_diff(file);
        }
    }
    let search = SearchRequest {
        patterns,
        lang: Some(lang),
        limit,
        ..SearchRequest::default()
    };
    let _ = engine::search(&scope, &search, &Control::default());
    // Inferred languages too: every file of the workspace.
    let inferred = EditRequest {
        lang: None,
        ..request
    };
    let _ = engine::plan_edits(&Scope::root(&ws), &inferred, &Control::default());
}

// ---------------------------------------------------------------------------------------
// changeset_ops

/// Where `path` (under `root`) leads: links followed as far as they exist, the rest as named.
fn where_is(root: &Path, path: &str) -> PathBuf {
    let full = root.join(path);
    if let Ok(real) = fs::canonicalize(&full) {
        return real;
    }
    match (
        full.parent().and_then(|p| fs::canonicalize(p).ok()),
        full.file_name(),
    ) {
        (Some(parent), Some(name)) => parent.join(name),
        _ => full,
    }
}

const PATHS: &[&str] = &[
    "a.txt",
    "b.txt",
    "d/c.txt",
    "d/new.txt",
    "n/e/w.txt",
    "n/other.txt",
    "link_in",
    "link_out",
    "link_out/file",
    "dangling",
    "../outside/file",
    "/etc/passwd",
    "d",
    "",
    ".",
    "x.txt",
    "d/../a.txt",
    "b.txt/x",
    "./d//c.txt",
    ".a.txt.xcsh-tmp.0123456789abcdef",
];

#[derive(Debug)]
enum Planned {
    Modify(&'static str, String),
    Create(&'static str, String),
    Delete(&'static str),
    Rename(&'static str, &'static str),
}

/// A fresh tree per input; ops `kind path [path] content`, then maybe a concurrent edit.
pub fn changeset_ops(data: &[u8]) {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().canonicalize().expect("canonical");
    let (root, outside) = (base.join("ws"), base.join("outside"));
    fs::create_dir_all(root.join("d")).expect("mkdir");
    fs::create_dir_all(&outside).expect("mkdir");
    fs::write(root.join("a.txt"), "A").expect("write");
    fs::write(root.join("b.txt"), "B").expect("write");
    fs::write(root.join("d/c.txt"), "C").expect("write");
    fs::write(outside.join("file"), "OUT").expect("write");
    #[cfg(unix)]
    {
        use std::os::unix::fs::symlink;
        symlink("a.txt", root.join("link_in")).expect("link");
        symlink("../outside", root.join("link_out")).expect("link");
        symlink("nowhere", root.join("dangling")).expect("link");
    }
    let outside_before = snapshot(&outside);

    let ws = Workspace::new(&root).expect("workspace");
    let mut cs = ChangeSet::new(ws);
    let mut input = Input(data);
    let mut accepted = Vec::new();
    for _ in 0..usize::from(input.byte() % 7) {
        let kind = input.byte() % 4;
        let path = input.pick(PATHS);
        let planned = match kind {
            0 => Planned::Modify(path, input.text_until(0xFF)),
            1 => Planned::Create(path, input.text_until(0xFF)),
            2 => Planned::Delete(path),
            _ => Planned::Rename(path, input.pick(PATHS)),
        };
        let ok = match &planned {
            Planned::Modify(p, c) => cs.modify(p, c.as_bytes()).is_ok(),
            Planned::Create(p, c) => cs.create(p, c.as_bytes()).is_ok(),
            Planned::Delete(p) => cs.delete(p).is_ok(),
            Planned::Rename(from, to) => cs.rename(from, to).is_ok(),
        };
        if ok {
            accepted.push(planned);
        }
    }
    // Sometimes the world moves on between building and applying.
    let mut meanwhile = None;
    if input.byte() % 5 == 0 {
        let path = input.pick(&["a.txt", "b.txt", "d/c.txt", "d/new.txt", "x.txt"]);
        if fs::write(root.join(path), "changed meanwhile").is_ok() {
            meanwhile = Some(where_is(&root, path));
        }
    }
    // Where each accepted operation lands, seen before the apply.
    let touched: Vec<PathBuf> = accepted
        .iter()
        .flat_map(|op| match op {
            Planned::Modify(p, _) | Planned::Create(p, _) | Planned::Delete(p) => vec![*p],
            Planned::Rename(from, to) => vec![*from, *to],
        })
        .map(|p| where_is(&root, p))
        .collect();
    let olds: BTreeMap<&str, Option<Vec<u8>>> = PATHS
        .iter()
        .map(|p| (*p, fs::read(root.join(p)).ok()))
        .collect();
    let before = snapshot(&root);

    match cs.apply() {
        Ok(_) => {
            if let Some(changed) = &meanwhile {
                assert!(
                    !touched.contains(changed),
                    "the apply succeeded over a file changed after the change set was built ({}): {accepted:?}",
                    changed.display()
                );
            }
            for op in &accepted {
                match op {
                    Planned::Modify(p, c) | Planned::Create(p, c) => assert_eq!(
                        fs::read(root.join(p)).ok().as_deref(),
                        Some(c.as_bytes()),
                        "{op:?} applied, but the file does not hold the new content"
                    ),
                    Planned::Delete(p) => assert!(
                        fs::symlink_metadata(root.join(p)).is_err(),
                        "{op:?} applied, but the file is still there"
                    ),
                    Planned::Rename(from, to) => {
                        assert!(
                            fs::symlink_metadata(root.join(from)).is_err(),
                            "{op:?} applied, but the source is still there"
                        );
                        assert_eq!(
                            fs::read(root.join(to)).ok(),
                            olds[from].clone(),
                            "{op:?} applied, but the target does not hold the old content"
                        );
                    }
                }
            }
            let left: Vec<_> = snapshot(&root)
                .into_keys()
                .filter(|p| p.iter().any(is_temp_artifact))
                .collect();
            // The seeded `.a.txt.xcsh-tmp…` name is only ever created by a create op.
            assert!(
                left.iter().all(|p| p.ends_with(PATHS[19])),
                "temporary files left after a successful apply: {left:?}"
            );
        }
        Err(error) => {
            assert_eq!(
                snapshot(&root),
                before,
                "a failed apply ({error}) changed the tree"
            );
        }
    }
    assert_eq!(
        snapshot(&outside),
        outside_before,
        "something outside the root changed"
    );
}
