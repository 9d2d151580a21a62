//! The ast-grep CLI oracle: finding the CLI, copies of the fixture tree for it and for the
//! engine, and comparing the two trees afterwards (`oracle.rs`, `oracle_rules.rs`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use xcsh_tools::changeset::ChangeSet;
use xcsh_tools::engine::EditPlan;
use xcsh_tools::workspace::Workspace;

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xcsh-tools sits in the repository root")
        .to_path_buf()
}

/// The ast-grep CLI, or `None` (the test is skipped, saying how to run it) when it is not
/// installed and `XCSH_REQUIRE_ORACLE=1` is not set.
pub fn ast_grep() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("AST_GREP") {
        let path = PathBuf::from(path);
        assert!(
            path.is_file(),
            "AST_GREP={} is not a file; point it at the ast-grep 0.51.1 binary or run scripts/bootstrap-python.sh",
            path.display()
        );
        return Some(path);
    }
    let venv = repo_root().join(".venv/bin/ast-grep");
    if venv.is_file() {
        return Some(venv);
    }
    let how = format!(
        "run scripts/bootstrap-python.sh (installs ast-grep-cli==0.51.1 into {}) or set AST_GREP to an ast-grep 0.51.1 binary",
        repo_root().join(".venv").display()
    );
    if std::env::var("XCSH_REQUIRE_ORACLE").as_deref() == Ok("1") {
        panic!("the ast-grep CLI oracle is missing and XCSH_REQUIRE_ORACLE=1 requires it: {how}");
    }
    eprintln!("SKIPPED: the ast-grep CLI oracle is not installed; to run it, {how}");
    None
}

pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/oracle")
}

pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("create copy dir");
    for entry in std::fs::read_dir(from).expect("read fixture dir") {
        let entry = entry.expect("fixture entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("file type").is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).expect("copy fixture");
        }
    }
}

/// A fresh copy of the fixtures that both walkers treat as a git repository, so .gitignore
/// applies (the `ignore` crate only looks for a `.git` directory).
pub fn fresh_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    copy_tree(&fixtures(), dir.path());
    std::fs::create_dir(dir.path().join(".git")).expect("mark as git repo");
    dir
}

/// Every file under `dir` (outside `.git`, and `.xcsh`: the undo record an apply keeps),
/// root-relative, with its bytes.
pub fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        for entry in std::fs::read_dir(dir).expect("read dir") {
            let entry = entry.expect("entry");
            let path = entry.path();
            if entry.file_name() == ".git" || entry.file_name() == ".xcsh" {
                continue;
            }
            if entry.file_type().expect("file type").is_dir() {
                walk(root, &path, out);
            } else {
                let rel = path
                    .strip_prefix(root)
                    .expect("under root")
                    .to_string_lossy()
                    .into_owned();
                out.insert(rel, std::fs::read(&path).expect("read file"));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Applies `plan` to `dir` through a `ChangeSet`, as `resolve apply` would.
pub fn apply_plan(dir: &Path, plan: &EditPlan) {
    let ws = Workspace::new(dir).expect("workspace");
    let mut changes = ChangeSet::new(ws);
    for file in &plan.files {
        changes
            .modify_splicing(&file.path, file.fingerprint, file.splices())
            .expect("queue modification");
    }
    if !changes.is_empty() {
        changes.apply().expect("apply");
    }
}

pub fn first_difference(
    cli: &BTreeMap<String, Vec<u8>>,
    ours: &BTreeMap<String, Vec<u8>>,
) -> Option<String> {
    let names: std::collections::BTreeSet<&String> = cli.keys().chain(ours.keys()).collect();
    for name in names {
        let (a, b) = (cli.get(name), ours.get(name));
        if a == b {
            continue;
        }
        let text = |v: Option<&Vec<u8>>| v.map(|v| String::from_utf8_lossy(v).into_owned());
        let (a, b) = (text(a).unwrap_or_default(), text(b).unwrap_or_default());
        let diff = similar::TextDiff::from_lines(&a, &b)
            .unified_diff()
            .header("ast-grep CLI", "engine")
            .to_string();
        return Some(format!("{name} differs:\n{diff}"));
    }
    None
}
