//! `edit` and `write_file` through a session: refusals with their exact texts, CRLF files,
//! and the guarantees they share with `ast_edit` (confinement, stale check at apply, undo,
//! typed effect, approval prompt with the change).

use std::fs;
use std::path::Path;

use serde_json::{Value, json};
use xcsh_core::approval::ApprovalRequest;
use xcsh_core::{AgentToolResult, EffectKind, Session};

mod common;
use common::{root_and_outside, session, snapshot};

async fn call(session: &Session, tool: &str, args: Value) -> AgentToolResult {
    session.call(tool, args).await
}

async fn resolve(session: &Session, action: &str) -> AgentToolResult {
    session
        .call("resolve", json!({"action": action, "reason": "test"}))
        .await
}

fn read(root: &Path, path: &str) -> String {
    fs::read_to_string(root.join(path)).unwrap()
}

const LIB: &str = "fn main() {\n    let x = 1;\n    if x > 0 {\n        println!(\"pos\");\n    }\n    let y = 2;\n    let y = 2;\n}\n";

/// Every refusal names the line(s): a table of inputs and the exact text each gets.
#[tokio::test]
async fn refusals_name_the_line_and_what_differs() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("lib.rs"), LIB).unwrap();
    fs::write(root.join("win.txt"), "alpha\r\nbeta\r\ngamma\n delta\r\n").unwrap();
    let s = session(root);
    let table: &[(&str, Value, &str)] = &[
        (
            "missing, a changed line",
            json!({"path": "lib.rs", "old": "let x = 3;", "new": "let x = 4;"}),
            "`old` was not found in lib.rs. The nearest candidate:\n- line 2: the file has `let x = 1;` where `old` has `let x = 3;`\nCopy `old` exactly as the file has it (indentation, whitespace and all), or read the file again: it may have changed.",
        ),
        (
            "ambiguous",
            json!({"path": "lib.rs", "old": "let y = 2;", "new": "let y = 3;"}),
            "`old` occurs 2 times in lib.rs, at lines 6 and 7; include more of the surrounding lines in `old` to make it unique, or set `replace_all` to true to replace every occurrence.",
        ),
        (
            "whitespace only",
            json!({"path": "lib.rs", "old": "let x  =  1;", "new": "let x = 5;"}),
            "`old` was not found in lib.rs. The nearest candidate:\n- line 2: differs only in whitespace (first at line 2):\n        2 | \"    let x = 1;\"\nCopy `old` exactly as the file has it (indentation, whitespace and all), or read the file again: it may have changed.",
        ),
        (
            "indentation",
            json!({"path": "lib.rs", "old": "if x > 0 {\n    println!(\"pos\");\n}", "new": "if x > 1 {\n}"}),
            "`old` was not found in lib.rs. The nearest candidate:\n- lines 3-5: differs only in indentation (line 3 is indented with 4 spaces in the file, with no indentation in `old`):\n        3 | \"    if x > 0 {\"\n        4 | \"        println!(\\\"pos\\\");\"\n        5 | \"    }\"\nCopy `old` exactly as the file has it (indentation, whitespace and all), or read the file again: it may have changed.",
        ),
        (
            "CRLF file whose matched lines mix endings",
            json!({"path": "win.txt", "old": "beta\ngamma\n delta\n", "new": "b\n"}),
            "`old` matches win.txt at lines 2-4 only with line endings ignored, and those lines mix CRLF (\\r\\n) and LF (\\n) endings; give `old` and `new` with the file's exact line endings there.",
        ),
        (
            "CRLF file, missing",
            json!({"path": "win.txt", "old": "alpha\nbeta\ngama\n", "new": "a\n"}),
            "`old` was not found in win.txt (a file with CRLF (\\r\\n) line endings; `old` may use either ending). The nearest candidate:\n- lines 1-3: differs in 1 changed line (line 3: the file has `gamma`, `old` has `gama`):\n        1 | alpha\n        2 | beta\n        3 | gamma\nCopy `old` exactly as the file has it (indentation, whitespace and all), or read the file again: it may have changed.",
        ),
        (
            "empty old",
            json!({"path": "lib.rs", "old": "", "new": "x"}),
            "`old` is empty: give the exact text to replace (to create a file or replace all of it, use `write_file`).",
        ),
        (
            "old equals new",
            json!({"path": "lib.rs", "old": "let x = 1;", "new": "let x = 1;"}),
            "`old` and `new` are the same text, so the edit would change nothing: give in `new` the text that should replace `old`.",
        ),
        (
            "missing file",
            json!({"path": "nope.rs", "old": "a", "new": "b"}),
            "nope.rs does not exist: `edit` changes an existing file; create it with `write_file`.",
        ),
    ];
    let before = snapshot(root);
    for (case, args, expected) in table {
        let result = call(&s, "edit", args.clone()).await;
        assert!(result.is_error(), "{case}: {}", result.text_content());
        assert_eq!(result.text_content(), *expected, "{case}");
        assert!(!s.pending().has_pending(), "{case}: nothing pending");
    }
    assert_eq!(snapshot(root), before, "a refusal writes nothing");
}

/// An `old` written with `\n` edits a CRLF file, which stays CRLF; the preview says so.
#[tokio::test]
async fn lf_old_edits_a_crlf_file_keeping_crlf() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("a.txt"), "one\r\ntwo\r\nthree\r\n").unwrap();
    let s = session(root);
    let preview = call(
        &s,
        "edit",
        json!({"path": "a.txt", "old": "one\ntwo\n", "new": "uno\ndos\ntres\n"}),
    )
    .await;
    assert!(!preview.is_error(), "{}", preview.text_content());
    assert!(
        preview.text_content().contains("Line endings: `old` has LF (\\n) line breaks where a.txt has CRLF (\\r\\n) (from line 1); it was matched ignoring line endings, and `new` is written with CRLF (\\r\\n) to keep the file's."),
        "{}",
        preview.text_content()
    );
    let applied = resolve(&s, "apply").await;
    assert_eq!(applied.text_content(), "Applied 1 replacement in a.txt.");
    assert_eq!(read(root, "a.txt"), "uno\r\ndos\r\ntres\r\nthree\r\n");
}

#[tokio::test]
async fn replace_all_replaces_every_occurrence_and_names_their_lines() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("lib.rs"), LIB).unwrap();
    let s = session(root);
    let preview = call(
        &s,
        "edit",
        json!({"path": "lib.rs", "old": "let y = 2;", "new": "let z = 2;", "replace_all": true}),
    )
    .await;
    assert!(!preview.is_error(), "{}", preview.text_content());
    let summary = s.pending().peek().unwrap();
    assert_eq!(summary.label, "Edit: 2 replacements in lib.rs");
    let lines: Vec<u64> = summary.details.as_ref().unwrap()["files"][0]["replacements"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, [6, 7]);
    resolve(&s, "apply").await;
    assert_eq!(
        read(root, "lib.rs"),
        LIB.replace("let y = 2;", "let z = 2;")
    );
}

#[tokio::test]
async fn paths_outside_the_workspace_are_refused() {
    let fx = root_and_outside();
    fs::write(fx.outside.join("x"), "secret\n").unwrap();
    let s = session(&fx.root);
    for (tool, args) in [
        (
            "edit",
            json!({"path": "../outside/x", "old": "secret", "new": "gone"}),
        ),
        (
            "write_file",
            json!({"path": "../outside/x", "content": "gone\n"}),
        ),
        ("write_file", json!({"path": "../x", "content": "gone\n"})),
    ] {
        let result = call(&s, tool, args.clone()).await;
        assert!(result.is_error(), "{tool} {args}");
        assert!(
            result.text_content().starts_with("path: ")
                && result.text_content().contains("leaves the workspace root"),
            "{tool}: {}",
            result.text_content()
        );
    }
    assert_eq!(
        fs::read_to_string(fx.outside.join("x")).unwrap(),
        "secret\n"
    );
    assert!(!fx.root.parent().unwrap().join("x").exists());
    assert!(!s.pending().has_pending());
}

#[tokio::test]
async fn a_file_changed_after_the_preview_is_refused_at_apply() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("lib.rs"), LIB).unwrap();
    fs::write(root.join("w.txt"), "old\n").unwrap();
    let s = session(root);
    for (tool, args, file) in [
        (
            "edit",
            json!({"path": "lib.rs", "old": "let x = 1;", "new": "let x = 9;"}),
            "lib.rs",
        ),
        (
            "write_file",
            json!({"path": "w.txt", "content": "new\n"}),
            "w.txt",
        ),
    ] {
        let preview = call(&s, tool, args).await;
        assert!(!preview.is_error(), "{}", preview.text_content());
        fs::write(root.join(file), "changed meanwhile\n").unwrap();
        let applied = resolve(&s, "apply").await;
        assert!(applied.is_error(), "{tool}");
        assert!(
            applied
                .text_content()
                .contains(&format!("`{file}` (modified since it was read)")),
            "{}",
            applied.text_content()
        );
        assert_eq!(
            read(root, file),
            "changed meanwhile\n",
            "{tool}: nothing written"
        );
        resolve(&s, "discard").await;
    }
}

#[tokio::test]
async fn write_file_creates_overwrites_and_undo_restores() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("a.txt"), "one\ntwo\nthree\n").unwrap();
    let s = session(root);

    // Overwrite: the preview is a diff against what is there; the effect is a modify.
    let preview = call(
        &s,
        "write_file",
        json!({"path": "a.txt", "content": "one\n2\nthree\n"}),
    )
    .await;
    assert!(!preview.is_error(), "{}", preview.text_content());
    assert!(
        preview
            .text_content()
            .contains("--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"),
        "{}",
        preview.text_content()
    );
    let top = s.pending().peek().unwrap();
    assert_eq!(
        top.label,
        "Write File: overwrite a.txt (1 line changed of 3)"
    );
    assert_eq!(top.effect.file_effects()[0].kind, EffectKind::Modify);
    assert_eq!(top.source_tool_name, "write_file");
    assert_eq!(
        resolve(&s, "apply").await.text_content(),
        "Wrote overwrite a.txt (1 line changed of 3)."
    );
    assert_eq!(read(root, "a.txt"), "one\n2\nthree\n");

    // Create: a new file, in a new directory; the effect is a create.
    let preview = call(
        &s,
        "write_file",
        json!({"path": "new/b.txt", "content": "b\n"}),
    )
    .await;
    assert!(
        preview
            .text_content()
            .contains("--- /dev/null\n+++ b/new/b.txt\n@@ -0,0 +1 @@\n+b\n"),
        "{}",
        preview.text_content()
    );
    assert_eq!(
        s.pending().peek().unwrap().effect.file_effects()[0].kind,
        EffectKind::Create
    );
    resolve(&s, "apply").await;
    assert_eq!(read(root, "new/b.txt"), "b\n");

    // Undo reverts the create, then the overwrite.
    call(&s, "undo", json!({})).await;
    assert!(
        resolve(&s, "apply")
            .await
            .text_content()
            .starts_with("Reverted apply")
    );
    assert!(!root.join("new/b.txt").exists());
    call(&s, "undo", json!({})).await;
    resolve(&s, "apply").await;
    assert_eq!(read(root, "a.txt"), "one\ntwo\nthree\n");

    // The same content: nothing to write, nothing pending.
    let same = call(
        &s,
        "write_file",
        json!({"path": "a.txt", "content": "one\ntwo\nthree\n"}),
    )
    .await;
    assert!(!same.is_error());
    assert_eq!(
        same.text_content(),
        "Nothing to write: a.txt already holds exactly this content."
    );
    assert!(!s.pending().has_pending());

    // A directory is refused.
    fs::create_dir(root.join("d")).unwrap();
    let refused = call(&s, "write_file", json!({"path": "d", "content": "x"})).await;
    assert!(refused.is_error());
    assert_eq!(
        refused.text_content(),
        "d is a directory: `write_file` writes one file; give the path of a file (a directory cannot be overwritten)."
    );
}

#[tokio::test]
async fn edit_apply_then_undo_restores_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("lib.rs"), LIB).unwrap();
    let s = session(root);
    call(
        &s,
        "edit",
        json!({"path": "lib.rs", "old": "let x = 1;", "new": "let x = 10;"}),
    )
    .await;
    assert_eq!(
        s.pending().peek().unwrap().effect.file_effects()[0].kind,
        EffectKind::Modify
    );
    resolve(&s, "apply").await;
    assert!(read(root, "lib.rs").contains("let x = 10;"));
    call(&s, "undo", json!({})).await;
    resolve(&s, "apply").await;
    assert_eq!(read(root, "lib.rs"), LIB);
}

/// The approval prompt shows the change: each replaced place with its line, before → after.
#[tokio::test]
async fn the_approval_prompt_shows_the_change() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("lib.rs"), LIB).unwrap();
    fs::write(root.join("w.txt"), "one\ntwo\n").unwrap();
    let s = session(root);
    call(
        &s,
        "edit",
        json!({"path": "lib.rs", "old": "let x = 1;", "new": "let x = 10;"}),
    )
    .await;
    let describe = |s: &Session| {
        let summary = s.pending().peek().unwrap();
        ApprovalRequest {
            summary,
            reason: "r".into(),
            effect_digest: "sha256:x".into(),
            rule: None,
        }
        .describe()
    };
    let text = describe(&s);
    assert!(
        text.contains("Edit: 1 replacement in lib.rs (from edit)"),
        "{text}"
    );
    assert!(
        text.contains("lib.rs\n    2: let x = 1; → let x = 10;"),
        "{text}"
    );
    resolve(&s, "discard").await;
    call(
        &s,
        "write_file",
        json!({"path": "w.txt", "content": "one\nTWO\n"}),
    )
    .await;
    let text = describe(&s);
    assert!(text.contains("w.txt\n    2: two → TWO"), "{text}");
}

/// The structured output is bounded and links the preview, as `ast_edit`'s does.
#[tokio::test]
async fn structured_output_names_the_file_and_digest() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(root.join("lib.rs"), LIB).unwrap();
    let s = session(root);
    let preview = call(
        &s,
        "edit",
        json!({"path": "lib.rs", "old": "let x = 1;", "new": "let x = 10;"}),
    )
    .await;
    let out = preview.structured.clone().expect("structured output");
    assert_eq!(out["status"], "preview");
    assert_eq!(out["summary"], "Edit: 1 replacement in lib.rs");
    assert_eq!(out["files"][0]["file"], "lib.rs");
    assert_eq!(out["totals"]["replacements"], 1);
    assert!(out["effectDigest"].as_str().unwrap().starts_with("sha256:"));
    assert!(serde_json::to_vec(&out).unwrap().len() < xcsh_tools::MAX_OUTPUT_BYTES);
}
