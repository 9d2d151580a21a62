//! The syntax guard on every change (`ast_edit`, `apply_patch`, `edit`, `write_file`): a change that breaks
//! a Rust, Python or TypeScript file is flagged with FILE:LINE:COL; one that does not is not;
//! an error the file already had is not blamed on the change; `syntax_guard = "refuse"`
//! writes nothing.

use std::fs;

use serde_json::{Value, json};
use xcsh_core::Session;
use xcsh_tools::syntax::{SyntaxGuard, SyntaxReport, SyntaxVerdict};
use xcsh_tools::{AstToolsConfig, builtin_suite};

mod common;
use common::snapshot;

fn session(root: &std::path::Path, guard: SyntaxGuard) -> Session {
    Session::builder()
        .suite(builtin_suite())
        .extension(AstToolsConfig::default().with_syntax_guard(guard))
        .workspace_root(root)
        .build()
        .unwrap()
}

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir(root.join("src")).unwrap();
    fs::write(
        root.join("src/lib.rs"),
        "pub fn f(x: u8) -> u8 {\n    let y = x + 1;\n    y\n}\n",
    )
    .unwrap();
    fs::write(
        root.join("app.py"),
        "def f(x):\n    if x > 0:\n        return x\n    return 0\n",
    )
    .unwrap();
    fs::write(
        root.join("web.ts"),
        "export function f(x: number): number {\n  const y = x + 1;\n  return y;\n}\n",
    )
    .unwrap();
    dir
}

/// (tool, arguments that break the file, the exact flag).
fn breaking() -> Vec<(&'static str, Value, &'static str)> {
    vec![
        (
            "edit",
            json!({"path": "src/lib.rs", "old": "let y = x + 1;", "new": "let y = x + 1"}),
            "introduces a syntax error at src/lib.rs:3:5 (unexpected `y`)",
        ),
        (
            "edit",
            json!({"path": "app.py", "old": "if x > 0:", "new": "if x > 0"}),
            "introduces a syntax error at app.py:3:9 (unexpected `return`)",
        ),
        (
            "write_file",
            json!({"path": "web.ts", "content": "export function f(x: number): number {\n  const y = (x + 1;\n  return y;\n}\n"}),
            "introduces a syntax error at web.ts:2:19 (`)` expected)",
        ),
    ]
}

#[tokio::test]
async fn a_breaking_change_is_flagged_with_file_line_col() {
    let dir = workspace();
    let s = session(dir.path(), SyntaxGuard::Warn);
    for (tool, args, flag) in breaking() {
        let preview = s.call(tool, args.clone()).await;
        assert!(!preview.is_error(), "{}", preview.text_content());
        let text = preview.text_content();
        let file = flag
            .split(" at ")
            .nth(1)
            .unwrap()
            .split(':')
            .next()
            .unwrap();
        assert!(
            text.contains(&format!("Syntax: {file} {flag}.")),
            "{tool} {args}:\n{text}"
        );
        // Warn: apply still writes.
        assert!(text.contains("Nothing is written yet."), "{text}");
        let notes = &preview.structured.as_ref().unwrap()["notes"];
        assert!(notes.to_string().contains(flag), "{notes}");
        assert_eq!(
            preview.details.as_ref().unwrap()["syntax"]["files"][0]["file"],
            file
        );
        let applied = s
            .call("resolve", json!({"action": "apply", "reason": "t"}))
            .await;
        assert!(!applied.is_error(), "{}", applied.text_content());
    }
}

#[tokio::test]
async fn a_change_that_keeps_the_file_parsing_is_not_flagged() {
    let dir = workspace();
    let s = session(dir.path(), SyntaxGuard::Refuse);
    for (tool, args, file) in [
        (
            "edit",
            json!({"path": "src/lib.rs", "old": "x + 1", "new": "x + 2"}),
            "src/lib.rs",
        ),
        (
            "edit",
            json!({"path": "app.py", "old": "return 0", "new": "return -1"}),
            "app.py",
        ),
        (
            "write_file",
            json!({"path": "web.ts", "content": "export const f = (x: number): number => x + 1;\n"}),
            "web.ts",
        ),
        (
            "write_file",
            json!({"path": "notes.txt", "content": "not code (\n"}),
            "",
        ),
    ] {
        let preview = s.call(tool, args).await;
        let text = preview.text_content();
        assert!(!text.contains("syntax error"), "{text}");
        if !file.is_empty() {
            assert!(
                text.contains(&format!("Syntax: {file} parses after the change.")),
                "{text}"
            );
        } else {
            assert!(
                !text.contains("Syntax:"),
                "a file in no parsed language is not judged: {text}"
            );
        }
        let applied = s
            .call("resolve", json!({"action": "apply", "reason": "t"}))
            .await;
        assert!(!applied.is_error(), "{}", applied.text_content());
    }
}

#[tokio::test]
async fn the_refusing_policy_writes_nothing() {
    let dir = workspace();
    let root = dir.path();
    let s = session(root, SyntaxGuard::Refuse);
    let before = snapshot(root);
    for (tool, args, flag) in breaking() {
        let preview = s.call(tool, args).await;
        let label = s.pending().peek().unwrap().label;
        let text = preview.text_content();
        assert!(text.contains(&format!("This change will be refused: the syntax guard refuses this change (syntax_guard = \"refuse\"): it {flag}.")), "{text}");
        assert!(!text.contains("Nothing is written yet."), "{text}");
        let applied = s
            .call("resolve", json!({"action": "apply", "reason": "t"}))
            .await;
        assert!(applied.is_error());
        assert_eq!(
            applied.text_content(),
            format!(
                "Apply failed: the syntax guard refuses this change (syntax_guard = \"refuse\"): it {flag}. Nothing was written. Discard it and preview a change that keeps the file parsing.\nThe action `{label}` is still pending: fix the cause and call `resolve` with action \"apply\" again, or \"discard\" it."
            )
        );
        assert_eq!(snapshot(root), before, "nothing written");
        s.call("resolve", json!({"action": "discard", "reason": "t"}))
            .await;
    }
    // ast_edit too.
    let preview = s
        .call(
            "ast_edit",
            json!({"ops": [{"pat": "let $A = $B;", "out": "let $A = $B"}], "lang": "rust"}),
        )
        .await;
    let text = preview.text_content();
    assert!(
        text.contains(
            "Syntax: src/lib.rs introduces a syntax error at src/lib.rs:3:5 (unexpected `y`)."
        ),
        "{text}"
    );
    assert!(text.contains("This change will be refused"), "{text}");
    let applied = s
        .call("resolve", json!({"action": "apply", "reason": "t"}))
        .await;
    assert!(applied.is_error());
    assert!(
        applied
            .text_content()
            .contains("introduces a syntax error at src/lib.rs:3:5")
    );
    assert_eq!(snapshot(root), before, "nothing written");
}

#[tokio::test]
async fn ast_edit_is_judged_per_file() {
    let dir = workspace();
    let s = session(dir.path(), SyntaxGuard::Warn);
    let preview = s
        .call(
            "ast_edit",
            json!({"ops": [{"pat": "x + 1", "out": "x + 2"}]}),
        )
        .await;
    let text = preview.text_content();
    assert!(
        text.contains("Syntax: src/lib.rs parses after the change."),
        "{text}"
    );
    assert!(
        text.contains("Syntax: web.ts parses after the change."),
        "{text}"
    );
    assert!(!text.contains("syntax error"), "{text}");
}

/// An error the file had before the change is not the change's.
#[tokio::test]
async fn pre_existing_errors_are_not_blamed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::write(
        root.join("a.rs"),
        "fn a() {\n    let x = 1\n}\nfn b() -> u8 {\n    2\n}\n",
    )
    .unwrap();
    let s = session(root, SyntaxGuard::Refuse);
    // Lines shift above the broken one; the error moves but is the same.
    let preview = s
        .call(
            "edit",
            json!({"path": "a.rs", "old": "fn a() {\n", "new": "// doc\n// more\nfn a() {\n"}),
        )
        .await;
    let text = preview.text_content();
    assert!(text.contains("Syntax: a.rs still has syntax errors (1 error node), as before; the change introduces none."), "{text}");
    assert!(
        s.call("resolve", json!({"action": "apply", "reason": "t"}))
            .await
            .text_content()
            .starts_with("Applied")
    );
    // A new error next to the old one is the change's.
    let preview = s
        .call(
            "edit",
            json!({"path": "a.rs", "old": "    2\n", "new": "    (2\n"}),
        )
        .await;
    let text = preview.text_content();
    assert!(
        text.contains("introduces a syntax error at a.rs:"),
        "{text}"
    );
    assert!(
        !text.contains("a.rs:4:"),
        "the old error (line 4) is not named: {text}"
    );
}

#[test]
fn the_report_over_a_change_set() {
    use xcsh_tools::changeset::ChangeSet;
    use xcsh_tools::workspace::Workspace;
    let dir = workspace();
    let mut cs = ChangeSet::new(Workspace::new(dir.path()).unwrap());
    cs.modify("app.py", "def f(x):\n    return (x\n").unwrap();
    cs.create("new.rs", "fn ok() {}\n").unwrap();
    cs.create("README.md.txt", "(").unwrap();
    let report = SyntaxReport::check(&cs);
    assert_eq!(report.files.len(), 2, "{report:?}");
    assert_eq!(report.broken_files(), ["app.py"]);
    assert_eq!(report.files[1].verdict, SyntaxVerdict::Parses);
    assert!(report.refusal(SyntaxGuard::Warn).is_none());
    assert!(
        report
            .refusal(SyntaxGuard::Refuse)
            .unwrap()
            .contains("app.py:2:")
    );
}

#[tokio::test]
async fn apply_patch_is_guarded_too() {
    const PATCH: &str = "*** Begin Patch\n*** Update File: web.ts\n@@\n-  const y = x + 1;\n+  const y = (x + 1;\n*** End Patch";
    const FLAG: &str = "introduces a syntax error at web.ts:2:19 (`)` expected)";
    let dir = workspace();
    let root = dir.path();
    let before = snapshot(root);
    // Refuse: said in the preview, and the apply writes nothing.
    let s = session(root, SyntaxGuard::Refuse);
    let preview = s.call("apply_patch", json!({ "patch": PATCH })).await;
    let text = preview.text_content();
    assert!(text.contains(&format!("Syntax: web.ts {FLAG}.")), "{text}");
    assert!(text.contains("This change will be refused"), "{text}");
    assert_eq!(
        preview.details.as_ref().unwrap()["syntax"]["files"][0]["file"],
        "web.ts"
    );
    let applied = s
        .call("resolve", json!({"action": "apply", "reason": "t"}))
        .await;
    assert!(applied.is_error());
    assert!(
        applied.text_content().contains(FLAG),
        "{}",
        applied.text_content()
    );
    assert_eq!(snapshot(root), before, "nothing written");
    // Warn: flagged, and written.
    let s = session(root, SyntaxGuard::Warn);
    let preview = s.call("apply_patch", json!({ "patch": PATCH })).await;
    let text = preview.text_content();
    assert!(text.contains(&format!("Syntax: web.ts {FLAG}.")), "{text}");
    assert!(text.contains("Nothing is written yet."), "{text}");
    let applied = s
        .call("resolve", json!({"action": "apply", "reason": "t"}))
        .await;
    assert!(!applied.is_error(), "{}", applied.text_content());
    assert!(
        fs::read_to_string(root.join("web.ts"))
            .unwrap()
            .contains("(x + 1;")
    );
}

/// A large Rust file: the guard parses only the items a change touches. A change that keeps
/// them parsing says so; one that breaks an item is still found at its FILE:LINE:COL.
#[tokio::test]
async fn a_large_rust_file_is_judged_by_the_items_that_changed() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mut src = String::new();
    for i in 0..400 {
        src.push_str(&format!(
            "pub fn item_{i}(x: u32) -> u32 {{\n    x + {i}\n}}\n\n"
        ));
    }
    fs::write(root.join("big.rs"), &src).unwrap();
    let s = session(root, SyntaxGuard::Refuse);
    let fine = s
        .call(
            "edit",
            json!({"path": "big.rs", "old": "x + 7\n", "new": "x * 7\n"}),
        )
        .await;
    let text = fine.text_content();
    assert!(
        text.contains(
            "Syntax: big.rs: the items the change touches parse; it introduces no syntax error."
        ),
        "{text}"
    );
    s.call("resolve", json!({"action": "discard", "reason": "t"}))
        .await;
    let broken = s
        .call(
            "edit",
            json!({"path": "big.rs", "old": "    x + 300\n", "new": "    x + (300\n"}),
        )
        .await;
    let text = broken.text_content();
    assert!(
        text.contains("Syntax: big.rs introduces a syntax error at big.rs:1202:13 (`)` expected)."),
        "{text}"
    );
    assert!(text.contains("This change will be refused"), "{text}");
}

/// A large Rust file with an error already in it: the items a change touches are compared,
/// before and after, without parsing the whole file; the old error is not blamed on a change
/// elsewhere, a new one is, and an item that stays broken the same way is "still broken".
#[test]
fn a_large_rust_file_with_an_old_error_is_judged_by_the_changed_items() {
    use xcsh_tools::changeset::ChangeSet;
    use xcsh_tools::workspace::Workspace;
    let dir = tempfile::tempdir().unwrap();
    let mut src = String::new();
    for i in 0..200 {
        src.push_str(&format!(
            "pub fn item_{i}(x: u32) -> u32 {{\n    x + {i}\n}}\n\n"
        ));
    }
    // An old error, in item 10: a `let` without its `;`.
    let src = src.replace("    x + 10\n", "    let y = 1\n    x + 10\n");
    fs::write(dir.path().join("big.rs"), &src).unwrap();
    let check = |after: String| {
        let mut cs = ChangeSet::new(Workspace::new(dir.path()).unwrap());
        cs.modify("big.rs", after).unwrap();
        SyntaxReport::check(&cs).files.remove(0).verdict
    };
    // Elsewhere, a change that parses: the old error is not the change's.
    assert_eq!(
        check(src.replace("    x + 150\n", "    x * 150\n")),
        SyntaxVerdict::ChangesParse
    );
    // A new error in item 150 is found at its line, the old one left out.
    let line = 1 + src[..src.find("    x + 150\n").unwrap()]
        .matches('\n')
        .count();
    match check(src.replace("    x + 150\n", "    x + (150\n")) {
        SyntaxVerdict::Introduced { errors, more } => {
            assert_eq!(more, 0, "{errors:?}");
            assert_eq!(errors.len(), 1, "{errors:?}");
            assert_eq!(
                errors[0].to_string(),
                format!("introduces a syntax error at big.rs:{line}:13 (`)` expected)")
            );
        }
        other => panic!("{other:?}"),
    }
    // The broken item changed elsewhere in it, still broken the same way.
    assert_eq!(
        check(src.replace("    x + 10\n", "    x - 10\n")),
        SyntaxVerdict::StillBroken { errors: 1 }
    );
}

/// A large Rust file whose change leaves a brace open (a `}` swallowed by a `// comment`, what
/// a rewrite of a body that ends in a comment does), as whole new content and as spliced
/// edits: the result cannot be cut into items (the guard parses the changed item alone), and
/// the error is reported in that item, where a whole parse reports it too.
#[test]
fn a_brace_left_open_in_a_large_rust_file_is_reported_in_the_changed_item() {
    use xcsh_tools::changeset::{ChangeSet, Fingerprint, Splice};
    use xcsh_tools::workspace::Workspace;
    let dir = tempfile::tempdir().unwrap();
    let mut src = String::new();
    for i in 0..200 {
        src.push_str(&format!(
            "pub fn item_{i}(x: u32) -> u32 {{\n    x + {i}\n}}\n\n"
        ));
    }
    fs::write(dir.path().join("big.rs"), &src).unwrap();
    let at = src.find("    x + 150\n}").unwrap() + "    x + 150".len();
    let line = 1 + src[..at].matches('\n').count();
    let splice = Splice::new(at..at + 2, " // the end }");
    let mut whole = ChangeSet::new(Workspace::new(dir.path()).unwrap());
    let mut after = src.clone();
    after.replace_range(splice.range.clone(), &splice.text);
    whole.modify("big.rs", after).unwrap();
    let mut spliced = ChangeSet::new(Workspace::new(dir.path()).unwrap());
    spliced
        .modify_splicing("big.rs", Fingerprint::of(src.as_bytes()), vec![splice])
        .unwrap();
    for changes in [whole, spliced] {
        match SyntaxReport::check(&changes).files.remove(0).verdict {
            SyntaxVerdict::Introduced { errors, more: 0 } => {
                assert_eq!(errors.len(), 1, "{errors:?}");
                // The item's first line (its text, up to the comment, is what the parser
                // could not place) to its last.
                assert!(
                    (line - 1..line + 3).contains(&errors[0].line),
                    "line {line}: {}",
                    errors[0]
                );
            }
            other => panic!("{other:?}"),
        }
    }
}
