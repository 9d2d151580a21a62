//! `apply_patch` through a session: the scenario suite in `fixtures/apply_patch` (Codex's
//! scenarios, in its layout, with xcsh's all-or-nothing answer where Codex leaves a partial
//! result, and more), then the guarantees it takes from `ChangeSet` and `#[pending]`.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde_json::json;
use xcsh_core::{AgentToolResult, Session};

mod common;
use common::session;

/// Every file under `dir` (its `.xcsh` state and `.keep` placeholders aside), by relative path.
fn tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(entries) = fs::read_dir(dir) else {
            return;
        };
        for entry in entries {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if name == ".xcsh" || name == ".keep" {
                continue;
            }
            if path.is_dir() {
                walk(base, &path, out);
            } else {
                let rel = path
                    .strip_prefix(base)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.insert(rel, fs::read(&path).unwrap());
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}

/// Copies `from` (if it exists) into `to`, keeping empty directories.
fn copy_tree(from: &Path, to: &Path) {
    let Ok(entries) = fs::read_dir(from) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            fs::create_dir_all(&target).unwrap();
            copy_tree(&path, &target);
        } else if path.file_name().unwrap() != ".keep" {
            fs::copy(&path, &target).unwrap();
        }
    }
}

async fn resolve(session: &Session, action: &str) -> AgentToolResult {
    session
        .call("resolve", json!({"action": action, "reason": "test"}))
        .await
}

async fn patch(session: &Session, text: &str) -> AgentToolResult {
    session.call("apply_patch", json!({"patch": text})).await
}

fn scenarios() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/apply_patch");
    let mut dirs: Vec<PathBuf> = fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs
}

/// Each scenario: `input/` copied to a workspace, `patch.txt` previewed and applied, the
/// tree then equal to `expected/`. With `error.txt`, the preview must fail with each of its
/// lines (a `\n` in a line written as such), push nothing, and leave the tree as `input/`.
#[tokio::test]
async fn the_scenario_suite() {
    let all = scenarios();
    assert!(all.len() >= 34, "{} scenarios", all.len());
    let mut failures = Vec::new();
    for dir in &all {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let ws = tempfile::tempdir().unwrap();
        // The workspace is a directory inside the temporary one, so that `../x` is outside.
        let root = ws.path().join("ws");
        fs::create_dir(&root).unwrap();
        copy_tree(&dir.join("input"), &root);
        let text = fs::read_to_string(dir.join("patch.txt")).unwrap();
        let s = session(&root);
        let preview = patch(&s, &text).await;
        let shown = preview.text_content();
        match fs::read_to_string(dir.join("error.txt")) {
            Ok(want) => {
                if !preview.is_error() {
                    failures.push(format!("{name}: expected an error, got:\n{shown}"));
                    continue;
                }
                for line in want.lines().filter(|l| !l.is_empty()) {
                    let line = line.replace("\\n", "\n");
                    if !shown.contains(&line) {
                        failures.push(format!("{name}: the error lacks `{line}`:\n{shown}"));
                    }
                }
                if !s.pending().is_empty() {
                    failures.push(format!("{name}: a failed patch pushed an action"));
                }
                if tree(&root) != tree(&dir.join("input")) {
                    failures.push(format!("{name}: a failed patch changed the tree"));
                }
                if ws.path().join("escape.txt").exists() {
                    failures.push(format!("{name}: wrote outside the workspace"));
                }
            }
            Err(_) => {
                if preview.is_error() {
                    failures.push(format!("{name}: preview failed:\n{shown}"));
                    continue;
                }
                let applied = resolve(&s, "apply").await;
                if applied.is_error() {
                    failures.push(format!("{name}: apply failed: {}", applied.text_content()));
                    continue;
                }
                let (got, want) = (tree(&root), tree(&dir.join("expected")));
                if got != want {
                    let show = |t: &BTreeMap<String, Vec<u8>>| {
                        t.iter()
                            .map(|(k, v)| format!("{k}: {:?}", String::from_utf8_lossy(v)))
                            .collect::<Vec<_>>()
                            .join("\n  ")
                    };
                    failures.push(format!(
                        "{name}: the tree differs\n got:\n  {}\n want:\n  {}\npreview:\n{shown}",
                        show(&got),
                        show(&want)
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[tokio::test]
async fn the_preview_says_plainly_what_is_replaced_and_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("dup.txt"), "old\n").unwrap();
    fs::write(dir.path().join("src.txt"), "a\n").unwrap();
    fs::write(dir.path().join("dest.txt"), "d\n").unwrap();
    let s = session(dir.path());
    let text = patch(
        &s,
        "*** Begin Patch\n*** Add File: dup.txt\n+new\n*** Update File: src.txt\n*** Move to: dest.txt\n@@\n-a\n+b\n*** End Patch",
    )
    .await
    .text_content();
    assert!(text.starts_with("Apply Patch preview: 1 file replaced, 1 moved.\n\ndup.txt: REPLACED: the existing file's whole content is replaced (`*** Add File` on a file that exists)\ndest.txt: OVERWRITTEN: moved here from src.txt (1 hunk), replacing the file that was here\n"), "{text}");
    assert!(text.contains("`*** Add File: dup.txt` replaces the existing file `dup.txt` (1 line): its whole content becomes the patch's."), "{text}");
    assert!(text.contains("`*** Move to: dest.txt` overwrites the existing file `dest.txt`: it is replaced by the moved file."), "{text}");
    assert!(text.contains("-old\n+new"), "{text}");
    assert!(text.ends_with("Nothing is written yet. Call `resolve` with action \"apply\" to write these changes, or \"discard\" to drop them."), "{text}");
    assert_eq!(
        s.pending().peek().unwrap().label,
        "Apply Patch: 1 file replaced, 1 moved"
    );
    let out = resolve(&s, "apply").await;
    assert_eq!(
        out.text_content(),
        "Applied the patch: 1 file replaced, 1 moved."
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("dest.txt")).unwrap(),
        "b\n"
    );
    assert!(!dir.path().join("src.txt").exists());
}

#[tokio::test]
async fn a_stale_file_at_apply_is_refused_and_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.txt"), "one\n").unwrap();
    fs::write(dir.path().join("b.txt"), "two\n").unwrap();
    let s = session(dir.path());
    let preview = patch(&s, "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** Update File: b.txt\n@@\n-two\n+TWO\n*** End Patch").await;
    assert!(!preview.is_error(), "{}", preview.text_content());
    fs::write(dir.path().join("b.txt"), "someone else\n").unwrap();
    let out = resolve(&s, "apply").await;
    assert!(out.is_error());
    let text = out.text_content();
    assert!(
        text.contains("`b.txt` (modified since it was read)"),
        "{text}"
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "one\n",
        "all or nothing"
    );
    assert_eq!(
        s.pending().len(),
        1,
        "the action stays for a retry or a discard"
    );
}

#[tokio::test]
async fn confinement_refuses_paths_that_leave_the_workspace() {
    let fx = common::root_and_outside();
    fs::write(fx.outside.join("secret.txt"), "keep\n").unwrap();
    let s = session(&fx.root);
    for (path, what) in [
        (
            "../outside/secret.txt",
            "*** Update File: ../outside/secret.txt\n@@\n-keep\n+x",
        ),
        ("../x", "*** Add File: ../x\n+x"),
        (
            "abs",
            &format!(
                "*** Delete File: {}",
                fx.outside.join("secret.txt").display()
            ),
        ),
    ] {
        let out = patch(&s, &format!("*** Begin Patch\n{what}\n*** End Patch")).await;
        assert!(out.is_error(), "{path}: {}", out.text_content());
        assert!(
            out.text_content().contains("Nothing was written"),
            "{}",
            out.text_content()
        );
        assert!(s.pending().is_empty());
    }
    assert_eq!(
        fs::read_to_string(fx.outside.join("secret.txt")).unwrap(),
        "keep\n"
    );
    assert!(!fx.root.parent().unwrap().join("x").exists());
}

#[tokio::test]
async fn undo_restores_what_the_patch_changed() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.txt"), "a\r\nb\r\n").unwrap();
    fs::write(dir.path().join("gone.txt"), "bye\n").unwrap();
    let s = session(dir.path());
    patch(&s, "*** Begin Patch\n*** Update File: a.txt\n@@\n-b\n+B\n*** Delete File: gone.txt\n*** Add File: new/n.txt\n+n\n*** End Patch").await;
    assert!(!resolve(&s, "apply").await.is_error());
    assert_eq!(fs::read(dir.path().join("a.txt")).unwrap(), b"a\r\nB\r\n");
    let undo = s.call("undo", json!({})).await;
    assert!(!undo.is_error(), "{}", undo.text_content());
    let out = resolve(&s, "apply").await;
    assert!(
        out.text_content().starts_with("Reverted apply #1"),
        "{}",
        out.text_content()
    );
    assert_eq!(fs::read(dir.path().join("a.txt")).unwrap(), b"a\r\nb\r\n");
    assert_eq!(
        fs::read_to_string(dir.path().join("gone.txt")).unwrap(),
        "bye\n"
    );
    assert!(!dir.path().join("new/n.txt").exists());
}

#[tokio::test]
async fn a_person_accepts_part_of_a_patch_by_file() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a.txt", "b.txt", "c.txt"] {
        fs::write(dir.path().join(name), "x\n").unwrap();
    }
    let s = session(dir.path());
    patch(&s, "*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+y\n*** Update File: b.txt\n@@\n-x\n+y\n*** Delete File: c.txt\n*** End Patch").await;
    let err = s
        .resolve_files(&["d.txt".to_owned()], "only d")
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("`d.txt` is not in this change"),
        "{err}"
    );
    let done = s
        .resolve_files(&["b.txt".to_owned(), "c.txt".to_owned()], "two of three")
        .await
        .unwrap();
    assert_eq!(done.summary.label, "Apply Patch: 1 file updated, 1 deleted");
    assert_eq!(
        done.result.text_content(),
        "Applied the patch: 1 file updated, 1 deleted."
    );
    assert_eq!(fs::read_to_string(dir.path().join("a.txt")).unwrap(), "x\n");
    assert_eq!(fs::read_to_string(dir.path().join("b.txt")).unwrap(), "y\n");
    assert!(!dir.path().join("c.txt").exists());
    assert!(s.pending().is_empty());
}

#[tokio::test]
async fn the_effect_names_every_file_and_the_digest_binds_the_bytes() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.txt"), "x\n").unwrap();
    fs::write(dir.path().join("m.txt"), "m\n").unwrap();
    let s = session(dir.path());
    let preview = patch(&s, "*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+y\n*** Update File: m.txt\n*** Move to: moved/m.txt\n*** Add File: n.txt\n+n\n*** End Patch").await;
    let effect = s.pending().peek().unwrap().effect;
    let files: Vec<String> = effect
        .file_effects()
        .iter()
        .map(|f| f.path.clone())
        .collect();
    assert_eq!(files, ["a.txt", "m.txt", "n.txt"], "{effect:?}");
    let out = preview.structured.clone().unwrap();
    assert!(
        out["effectDigest"].as_str().unwrap().starts_with("sha256:"),
        "{out}"
    );
    assert_eq!(out["status"], "preview");
}

#[tokio::test]
async fn a_hunk_that_does_not_apply_names_the_hunk_and_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("a.py"), "def f():\n    return 1\n").unwrap();
    let s = session(dir.path());
    let out = patch(&s, "*** Begin Patch\n*** Add File: b.py\n+x = 1\n*** Update File: a.py\n@@ def f():\n-    return 1\n+    return 2\n@@\n-    missing\n+    x\n*** End Patch").await;
    let text = out.text_content();
    assert!(out.is_error());
    assert!(text.starts_with("The patch was not applied: `*** Update File: a.py` (patch line 4), hunk 2 (patch line 8): its 1 line (context and `-` lines) is not in `a.py` after line 2"), "{text}");
    assert!(
        text.contains("Nothing was written: a patch applies whole or not at all."),
        "{text}"
    );
    assert!(!dir.path().join("b.py").exists());
}

/// A patch of 100 hunks against a file of 75,000 lines: every hunk lands where it belongs.
/// (How fast: `bench/patch_bench.py`, part `patch` of `bench/run.sh`; timing is no unit
/// test's business on a shared machine.)
#[tokio::test]
async fn a_large_file_takes_every_hunk() {
    let dir = tempfile::tempdir().unwrap();
    let mut src = String::new();
    for i in 0..25_000 {
        src.push_str(&format!("fn item_{i}() -> u32 {{\n    {i}\n}}\n"));
    }
    fs::write(dir.path().join("big.rs"), &src).unwrap();
    let mut body = String::from("*** Begin Patch\n*** Update File: big.rs\n");
    for i in (0..25_000).step_by(250) {
        body.push_str(&format!(
            "@@\n fn item_{i}() -> u32 {{\n-    {i}\n+    {i} + 1\n }}\n"
        ));
    }
    body.push_str("*** End Patch\n");
    let s = session(dir.path());
    let out = patch(&s, &body).await;
    assert!(!out.is_error(), "{}", out.text_content());
    assert!(
        out.text_content().contains("+    0 + 1"),
        "the diff starts with the first hunk"
    );
    assert!(!resolve(&s, "apply").await.is_error());
    let after = fs::read_to_string(dir.path().join("big.rs")).unwrap();
    assert!(after.contains("fn item_250() -> u32 {\n    250 + 1\n}"));
    assert_eq!(after.lines().count(), 75_000);
}

/// A partial accept narrows the change set without losing the session's undo limits: with
/// undo turned off, the part applied keeps no undo record either.
#[tokio::test]
async fn a_partial_accept_keeps_the_sessions_undo_limits() {
    use xcsh_tools::changeset::{Undo, UndoLimits};
    use xcsh_tools::{AstToolsConfig, builtin_suite, workspace::Workspace};
    let dir = tempfile::tempdir().unwrap();
    for name in ["a.txt", "b.txt"] {
        fs::write(dir.path().join(name), "x\n").unwrap();
    }
    let s = Session::builder()
        .suite(builtin_suite())
        .extension(AstToolsConfig::default().with_undo_limits(UndoLimits::off()))
        .workspace_root(dir.path())
        .build()
        .unwrap();
    patch(&s, "*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+y\n*** Update File: b.txt\n@@\n-x\n+y\n*** End Patch").await;
    s.resolve_files(&["b.txt".to_owned()], "only b")
        .await
        .unwrap();
    assert_eq!(fs::read_to_string(dir.path().join("b.txt")).unwrap(), "y\n");
    let ws = Workspace::new(dir.path()).unwrap();
    assert!(
        Undo::history(&ws).unwrap().is_empty(),
        "undo is off: the part applied keeps no record"
    );
}
