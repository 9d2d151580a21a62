//! `ast_edit` and `ast_grep` through a session: preview, pending action, apply, discard.

use std::fs;
use std::path::Path;

use serde_json::{Value, json};
use xcsh_core::{AgentToolResult, Session};

mod common;
use common::session;

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("src")).unwrap();
    fs::write(
        dir.path().join("src/a.rs"),
        "fn a() {\n    let x = load().unwrap();\n    let y = parse(x).unwrap();\n}\n",
    )
    .unwrap();
    fs::write(
        dir.path().join("src/b.rs"),
        "fn b() -> u8 {\n    cfg.get().unwrap()\n}\n",
    )
    .unwrap();
    fs::write(dir.path().join("notes.py"), "print('hi')\n").unwrap();
    dir
}

async fn edit(session: &Session, args: Value) -> AgentToolResult {
    session.call("ast_edit", args).await
}

async fn resolve(session: &Session, action: &str) -> AgentToolResult {
    session
        .call("resolve", json!({"action": action, "reason": "test"}))
        .await
}

fn read(root: &Path, path: &str) -> String {
    fs::read_to_string(root.join(path)).unwrap()
}

#[tokio::test]
async fn preview_writes_nothing_and_apply_writes_exactly_the_preview() {
    let dir = workspace();
    let root = dir.path();
    let s = session(root);
    let before_a = read(root, "src/a.rs");
    let preview = edit(
        &s,
        json!({"ops": [{"pat": "$X.unwrap()", "out": "$X?"}], "lang": "rust"}),
    )
    .await;
    assert!(!preview.is_error(), "{}", preview.text_content());
    let text = preview.text_content();
    assert!(
        text.starts_with("AST Edit preview: 3 replacements in 2 files"),
        "{text}"
    );
    assert!(
        text.contains("src/a.rs: 2 replacements\nsrc/b.rs: 1 replacement"),
        "{text}"
    );
    assert!(text.contains("--- a/src/a.rs\n+++ b/src/a.rs"), "{text}");
    assert!(text.contains("+    let y = parse(x)?;"), "{text}");
    assert!(text.contains("Call `resolve`"), "{text}");
    assert_eq!(read(root, "src/a.rs"), before_a, "preview writes nothing");

    let details = preview.details.unwrap();
    assert_eq!(details["totals"]["replacements"], 3);
    assert_eq!(details["files"][0]["file"], "src/a.rs");
    assert_eq!(details["files"][0]["replacements"][0]["line"], 2);
    assert_eq!(details["files"][0]["replacements"][0]["column"], 13);
    assert_eq!(
        details["files"][0]["replacements"][0]["before"],
        "load().unwrap()"
    );
    assert_eq!(details["files"][0]["replacements"][0]["after"], "load()?");

    let pending = s.pending().peek().unwrap();
    assert_eq!(pending.label, "AST Edit: 3 replacements in 2 files");
    assert_eq!(pending.source_tool_name, "ast_edit");
    // The person deciding sees what the model saw: the preview's details, whole.
    assert_eq!(pending.details.as_ref(), Some(&details));
    assert!(s.tool_choice(xcsh_core::Dialect::Anthropic).is_some());

    let applied = resolve(&s, "apply").await;
    assert!(!applied.is_error(), "{}", applied.text_content());
    assert_eq!(applied.text_content(), "Applied 3 replacements in 2 files.");
    assert_eq!(
        read(root, "src/a.rs"),
        "fn a() {\n    let x = load()?;\n    let y = parse(x)?;\n}\n"
    );
    assert_eq!(
        read(root, "src/b.rs"),
        "fn b() -> u8 {\n    cfg.get()?\n}\n"
    );
    assert_eq!(read(root, "notes.py"), "print('hi')\n");
    assert!(s.tool_choice(xcsh_core::Dialect::Anthropic).is_none());
}

#[tokio::test]
async fn singular_label_and_summary() {
    let dir = workspace();
    let s = session(dir.path());
    edit(
        &s,
        json!({"ops": [{"pat": "cfg.get().unwrap()", "out": "cfg.get().unwrap_or(0)"}]}),
    )
    .await;
    assert_eq!(
        s.pending().peek().unwrap().label,
        "AST Edit: 1 replacement in 1 file"
    );
    assert_eq!(
        resolve(&s, "apply").await.text_content(),
        "Applied 1 replacement in 1 file."
    );
}

#[tokio::test]
async fn a_file_changed_after_the_preview_makes_apply_write_nothing_and_name_it() {
    let dir = workspace();
    let root = dir.path();
    let s = session(root);
    edit(&s, json!({"ops": [{"pat": "$X.unwrap()", "out": "$X?"}]})).await;
    fs::write(root.join("src/b.rs"), "fn b() -> u8 { 0 }\n").unwrap();
    let before_a = read(root, "src/a.rs");

    let result = resolve(&s, "apply").await;
    assert!(result.is_error());
    let text = result.text_content();
    assert!(text.starts_with("Apply failed: "), "{text}");
    assert!(text.contains("src/b.rs"), "{text}");
    assert!(
        !text.contains("src/a.rs"),
        "only the stale file is named: {text}"
    );
    assert_eq!(read(root, "src/a.rs"), before_a, "nothing written");
    assert_eq!(read(root, "src/b.rs"), "fn b() -> u8 { 0 }\n");
    // Still pending: the model can discard it and preview again.
    assert_eq!(s.pending().len(), 1);
    assert!(
        resolve(&s, "discard")
            .await
            .text_content()
            .starts_with("Discarded: AST Edit: 3 replacements in 2 files.")
    );
}

#[tokio::test]
async fn discard_writes_nothing() {
    let dir = workspace();
    let root = dir.path();
    let s = session(root);
    let before = (read(root, "src/a.rs"), read(root, "src/b.rs"));
    edit(&s, json!({"ops": [{"pat": "$X.unwrap()", "out": "$X?"}]})).await;
    let result = resolve(&s, "discard").await;
    assert_eq!(
        result.text_content(),
        "Discarded: AST Edit: 3 replacements in 2 files. Reason: test"
    );
    assert_eq!((read(root, "src/a.rs"), read(root, "src/b.rs")), before);
    assert!(!s.pending().has_pending());
}

#[tokio::test]
async fn two_previews_are_resolved_in_lifo_order() {
    let dir = workspace();
    let root = dir.path();
    let s = session(root);
    edit(
        &s,
        json!({"ops": [{"pat": "$X.unwrap()", "out": "$X?"}], "path": "src/a.rs"}),
    )
    .await;
    edit(
        &s,
        json!({"ops": [{"pat": "print($A)", "out": "log($A)"}], "lang": "python"}),
    )
    .await;
    let labels: Vec<_> = s
        .pending()
        .snapshot()
        .into_iter()
        .map(|p| p.label)
        .collect();
    assert_eq!(
        labels,
        [
            "AST Edit: 1 replacement in 1 file",
            "AST Edit: 2 replacements in 1 file"
        ]
    );
    // The Python edit was pushed last: it is resolved first.
    resolve(&s, "apply").await;
    assert_eq!(read(root, "notes.py"), "log('hi')\n");
    assert!(read(root, "src/a.rs").contains("unwrap"));
    resolve(&s, "apply").await;
    assert!(!read(root, "src/a.rs").contains("unwrap"));
}

#[cfg(unix)]
#[tokio::test]
async fn paths_leaving_the_root_are_refused() {
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("secret.rs"), "fn s() { k.unwrap(); }\n").unwrap();
    let dir = workspace();
    let root = dir.path();
    std::os::unix::fs::symlink(outside.path(), root.join("escape")).unwrap();
    let s = session(root);
    for path in [
        "../".to_string(),
        outside.path().display().to_string(),
        "escape".to_string(),
        "escape/secret.rs".to_string(),
    ] {
        let result = edit(
            &s,
            json!({"ops": [{"pat": "$X.unwrap()", "out": "$X?"}], "path": path}),
        )
        .await;
        assert!(result.is_error(), "{path}: {}", result.text_content());
        assert!(
            result.text_content().contains("leaves the workspace root"),
            "{path}: {}",
            result.text_content()
        );
    }
    // A whole-workspace edit does not follow the symlink out either.
    edit(&s, json!({"ops": [{"pat": "$X.unwrap()", "out": "$X?"}]})).await;
    resolve(&s, "apply").await;
    assert_eq!(
        fs::read_to_string(outside.path().join("secret.rs")).unwrap(),
        "fn s() { k.unwrap(); }\n"
    );
    assert!(!s.pending().has_pending());
}

#[tokio::test]
async fn no_match_is_a_warning_and_pushes_nothing() {
    let dir = workspace();
    let s = session(dir.path());
    let result = edit(&s, json!({"ops": [{"pat": "zzqq($A)", "out": "q($A)"}]})).await;
    assert!(!result.is_error());
    assert!(
        result.text_content().starts_with("No replacements made"),
        "{}",
        result.text_content()
    );
    assert!(!s.pending().has_pending());
    assert!(s.take_reminders().is_empty());
}

#[tokio::test]
async fn bad_requests_name_the_offending_field() {
    let dir = workspace();
    let s = session(dir.path());
    let cases = [
        (json!({"ops": []}), "ops: at least one op is required"),
        (
            json!({"ops": [{"pat": "", "out": "x"}]}),
            "ops[0].pat: the pattern is empty",
        ),
        (
            json!({"ops": [{"pat": "foo(", "out": "x"}], "lang": "rust"}),
            "ops[0].pat: `foo(` is not a valid",
        ),
        (
            json!({"ops": [{"pat": "a()", "out": "b()"}, {"pat": "a()", "out": "c()"}]}),
            "ops[1].pat: the same pattern as ops[0].pat",
        ),
        (
            json!({"ops": [{"pat": "a()", "out": "b()"}], "limit": 0}),
            "limit: must be at least 1",
        ),
        (
            json!({"ops": [{"pat": "a()", "out": "b()"}], "lang": "cobol"}),
            "lang:",
        ),
        (
            json!({"ops": [{"pat": "a()", "out": "b()"}], "path": "nope/"}),
            "nope",
        ),
        (
            json!({"ops": [{"pat": "a()"}]}),
            "ops[0]: missing field `out`",
        ),
        (
            json!({"ops": [{"pat": "a()", "out": "b()"}], "paths": "x"}),
            "unknown field `paths`",
        ),
        (
            json!({"ops": "a()"}),
            "ops: invalid type: string \"a()\", expected a sequence",
        ),
    ];
    for (args, expected) in cases {
        let result = edit(&s, args.clone()).await;
        assert!(result.is_error(), "{args}");
        assert!(
            result.text_content().contains(expected),
            "{args}: {}",
            result.text_content()
        );
    }
    let unsupported = edit(
        &s,
        json!({"ops": [{"pat": "a()", "out": "b()"}], "lang": "cobol"}),
    )
    .await;
    for lang in ["rust", "python", "typescript", "tsx", "javascript", "go"] {
        assert!(
            unsupported.text_content().to_lowercase().contains(lang),
            "{}",
            unsupported.text_content()
        );
    }
    assert!(!s.pending().has_pending());
}

#[tokio::test]
async fn ast_grep_finds_matches_with_captures_and_writes_nothing() {
    let dir = workspace();
    let s = session(dir.path());
    let result = s
        .call("ast_grep", json!({"pat": "$X.unwrap()", "lang": "rust"}))
        .await;
    assert!(!result.is_error(), "{}", result.text_content());
    let text = result.text_content();
    assert!(text.starts_with("3 matches in 2 files"), "{text}");
    assert!(
        text.contains("src/a.rs:2:13: load().unwrap()\n    $X = load()"),
        "{text}"
    );
    let details = result.details.unwrap();
    assert_eq!(details["matches"][2]["file"], "src/b.rs");
    assert_eq!(details["matches"][2]["captures"][0]["text"], "cfg.get()");
    assert!(!s.pending().has_pending());

    let limited = s
        .call("ast_grep", json!({"pat": "$X.unwrap()", "limit": 1}))
        .await;
    assert!(
        limited
            .text_content()
            .contains("Limit reached: showing the first 1 of 3 matches"),
        "{}",
        limited.text_content()
    );
    let bad = s.call("ast_grep", json!({"pat": "", "limit": 1})).await;
    assert!(bad.is_error());
    assert!(
        bad.text_content().contains("pat: the pattern is empty"),
        "{}",
        bad.text_content()
    );
}

/// The built-in tools come only from `builtin_suite()` (or a user adding them): a user's
/// `registered()` session must not grow them.
#[test]
fn the_built_in_tools_do_not_register_themselves() {
    let registered: Vec<&str> = xcsh_core::registered_tools().map(|r| r.name).collect();
    assert!(
        !registered.contains(&xcsh_tools::AST_EDIT),
        "{registered:?}"
    );
    assert!(
        !registered.contains(&xcsh_tools::AST_GREP),
        "{registered:?}"
    );
    let s = Session::builder().registered().build().unwrap();
    assert!(s.tool_names().is_empty(), "{:?}", s.tool_names());
}

/// `AstToolsConfig` on the session sets the preview's diff budget: with room for one file's
/// diff, the second is summarised; without the extension both are shown.
#[tokio::test]
async fn the_session_config_sets_the_preview_budget() {
    let dir = workspace();
    let args = json!({"ops": [{"pat": "$X.unwrap()", "out": "$X?"}], "lang": "rust"});
    let omitted = "… diffs of 1 file more omitted";

    let text = edit(&session(dir.path()), args.clone())
        .await
        .text_content();
    assert!(text.contains("+++ b/src/b.rs"), "{text}");
    assert!(!text.contains(omitted), "{text}");

    let small = Session::builder()
        .suite(xcsh_tools::builtin_suite())
        .extension(xcsh_tools::AstToolsConfig::default().with_max_preview_chars(1))
        .workspace_root(dir.path())
        .build()
        .unwrap();
    let text = edit(&small, args).await.text_content();
    assert!(text.contains("+++ b/src/a.rs"), "{text}");
    assert!(!text.contains("+++ b/src/b.rs"), "{text}");
    assert!(text.contains(omitted), "{text}");
}

#[tokio::test]
async fn a_host_applies_the_files_a_person_chose_and_drops_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a.rs", "b.rs", "c.rs"] {
        std::fs::write(dir.path().join(name), "fn f() { x.unwrap(); }\n").unwrap();
    }
    let session = common::session(dir.path());
    session
        .call(
            "ast_edit",
            serde_json::json!({"ops": [{"pat": "$X.unwrap()", "out": "$X?"}], "lang": "rust"}),
        )
        .await;

    // A file the change does not touch: refused, and the action stays whole.
    let err = session
        .resolve_files(&["d.rs".to_owned()], "only d")
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("`d.rs` is not in this change; it touches: a.rs, b.rs, c.rs"),
        "{err}"
    );
    assert_eq!(
        session.pending().peek().unwrap().label,
        "AST Edit: 3 replacements in 3 files"
    );

    let done = session
        .resolve_files(
            &["a.rs".to_owned(), "c.rs".to_owned()],
            "the person took two",
        )
        .await
        .unwrap();
    assert_eq!(done.summary.label, "AST Edit: 2 replacements in 2 files");
    assert_eq!(
        done.result.text_content(),
        "Applied 2 replacements in 2 files."
    );
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
    assert_eq!(read("a.rs"), "fn f() { x?; }\n");
    assert_eq!(read("b.rs"), "fn f() { x.unwrap(); }\n");
    assert_eq!(read("c.rs"), "fn f() { x?; }\n");
    assert!(session.pending().is_empty(), "the rest is dropped");
}

#[tokio::test]
async fn an_answer_that_found_nothing_says_what_the_pattern_parsed_as() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.rs"), "fn f() { x.unwrap(); }\n").unwrap();
    let session = common::session(dir.path());
    // A statement where an expression is: `let` never matches a method call.
    let edit = session
        .call(
            "ast_edit",
            json!({"ops": [{"pat": "let $A = $B.unwrap();", "out": "x"}], "lang": "rust"}),
        )
        .await;
    let text = edit.text_content();
    assert!(
        text.starts_with("No replacements made: nothing matched"),
        "{text}"
    );
    assert!(
        text.contains("`let $A = $B.unwrap();` parsed as a `let_declaration` (rust): it matches let_declaration nodes of that shape only."),
        "{text}"
    );
    let search = session
        .call("ast_grep", json!({"pat": "$X.expect($M)", "lang": "rust"}))
        .await;
    let text = search.text_content();
    assert!(text.starts_with("No matches"), "{text}");
    assert!(
        text.contains("parsed as a `call_expression` (rust)"),
        "{text}"
    );
    assert!(text.contains("write it as the code appears"), "{text}");
    // Without a language nothing is guessed.
    let search = session
        .call("ast_grep", json!({"pat": "$X.expect($M)"}))
        .await;
    assert!(
        !search.text_content().contains("parsed as"),
        "{}",
        search.text_content()
    );
}

#[tokio::test]
async fn a_yaml_rule_previews_applies_and_searches_like_a_pattern() {
    let dir = workspace();
    let root = dir.path();
    let s = session(root);
    // Every unwrap but the one in a `let` that calls `parse`: `not`, `inside` and `has`.
    let rule = "rule:\n  pattern: $X.unwrap()\n  not:\n    inside:\n      kind: let_declaration\n      has:\n        pattern: parse($$$A)\n        stopBy: end\n      stopBy: end\nfix: $X.expect(\"loaded\")\n";
    let found = s
        .call("ast_grep", json!({"rule": rule, "lang": "rust"}))
        .await;
    assert!(!found.is_error(), "{}", found.text_content());
    assert!(
        found.text_content().starts_with("2 matches in 2 files"),
        "{}",
        found.text_content()
    );
    let preview = edit(&s, json!({"rule": rule, "lang": "rust"})).await;
    assert!(!preview.is_error(), "{}", preview.text_content());
    assert!(
        preview
            .text_content()
            .starts_with("AST Edit preview: 2 replacements in 2 files"),
        "{}",
        preview.text_content()
    );
    assert_eq!(
        read(root, "src/b.rs"),
        "fn b() -> u8 {\n    cfg.get().unwrap()\n}\n"
    );
    let applied = resolve(&s, "apply").await;
    assert!(!applied.is_error(), "{}", applied.text_content());
    assert_eq!(
        read(root, "src/a.rs"),
        "fn a() {\n    let x = load().expect(\"loaded\");\n    let y = parse(x).unwrap();\n}\n"
    );
    assert_eq!(
        read(root, "src/b.rs"),
        "fn b() -> u8 {\n    cfg.get().expect(\"loaded\")\n}\n"
    );
}

#[tokio::test]
async fn bad_rules_name_the_line_and_key_and_change_nothing() {
    let dir = workspace();
    let root = dir.path();
    let s = session(root);
    let cases = [
        (
            json!({"rule": "rule:\n  pattern: $X.unwrap()\n  insde:\n    kind: block\nfix: x", "lang": "rust"}),
            "rule: line 3: unknown key `insde`",
        ),
        (
            json!({"rule": "rule:\n  kind: call_expresion\nfix: x", "lang": "rust"}),
            "is not a node kind of the rust grammar, so the rule can never match; did you mean `call_expression`?",
        ),
        (
            json!({"rule": "rule:\n  pattern: $X.unwrap()\n", "lang": "rust"}),
            "rule: has no `fix`",
        ),
        (
            json!({"rule": "rule:\n  pattern: $X.unwrap()\nfix: y", "lang": "rust", "ops": [{"pat": "a", "out": "b"}]}),
            "rule: give either a rule or ops, not both",
        ),
        (
            json!({"rule": "rule:\n  pattern: $X.unwrap()\nfix: y"}),
            "rule: says no `language`; add `language: <name>` to the rule or pass lang",
        ),
    ];
    for (args, expected) in cases {
        let result = edit(&s, args.clone()).await;
        assert!(result.is_error(), "{args}: {}", result.text_content());
        assert!(
            result.text_content().contains(expected),
            "{args}: {}",
            result.text_content()
        );
    }
    let neither = s.call("ast_grep", json!({"lang": "rust"})).await;
    assert!(neither.is_error());
    assert!(
        neither
            .text_content()
            .contains("or an ast-grep YAML rule in `rule`"),
        "{}",
        neither.text_content()
    );
    assert!(s.pending().peek().is_none());
    assert_eq!(
        read(root, "src/b.rs"),
        "fn b() -> u8 {\n    cfg.get().unwrap()\n}\n"
    );
}

#[tokio::test]
async fn an_answer_that_found_nothing_shows_near_misses_with_patterns_that_match() {
    let dir = workspace();
    let root = dir.path();
    fs::write(
        root.join("src/c.rs"),
        "pub fn load_all(dir: &str) -> Vec<u8> {\n    Vec::new()\n}\n",
    )
    .unwrap();
    let s = session(root);
    let found = s
        .call(
            "ast_grep",
            json!({"pat": "fn load_all($$$A) { $$$B }", "lang": "rust"}),
        )
        .await;
    let text = found.text_content();
    assert!(text.starts_with("No matches"), "{text}");
    assert!(
        text.contains("Near misses (code close to the pattern that it does not match):\n- src/c.rs:1:1 `pub fn load_all(dir: &str) -> Vec<u8> {`"),
        "{text}"
    );
    assert!(
        text.contains("it has `-> Vec<u8>` where the pattern has nothing"),
        "{text}"
    );
    assert!(
        text.contains("      pub fn load_all($$$A) -> Vec<u8> {"),
        "{text}"
    );
    assert_eq!(found.details.as_ref().unwrap()["nearMisses"][0]["line"], 1);

    // The same through ast_edit, which pushes nothing.
    let preview = edit(
        &s,
        json!({"ops": [{"pat": "fn load_all($$$A) { $$$B }", "out": "fn x() {}"}], "lang": "rust"}),
    )
    .await;
    assert!(
        preview.text_content().contains("src/c.rs:1:1"),
        "{}",
        preview.text_content()
    );
    assert!(s.pending().peek().is_none());
}

/// How many files a session's cache was asked about: one per file per walk.
fn lookups(cache: &xcsh_tools::engine::ParseCache) -> u64 {
    let stats = cache.stats();
    stats.misses + stats.text_hits + stats.parsed_hits
}

#[tokio::test]
async fn an_answer_that_found_nothing_walks_again_only_where_a_near_miss_can_be() {
    use xcsh_tools::engine::ParseCache;
    let dir = workspace();
    let root = dir.path();
    let cache = ParseCache::new(16 << 20);
    let s = Session::builder()
        .suite(xcsh_tools::builtin_suite())
        .extension(cache.clone())
        .workspace_root(root)
        .build()
        .unwrap();
    let rust_files = 2;

    // No file holds `frobnicate`: the search parses nothing, and with one literal no walk
    // could find a near miss. One walk in all, for either tool.
    for (tool, args) in [
        ("ast_grep", json!({"pat": "frobnicate($A)", "lang": "rust"})),
        (
            "ast_edit",
            json!({"ops": [{"pat": "frobnicate($A)", "out": "f($A)"}], "lang": "rust"}),
        ),
    ] {
        let before = lookups(&cache);
        let found = s.call(tool, args).await;
        assert!(!found.is_error(), "{}", found.text_content());
        assert!(!found.text_content().contains("Near misses"), "{tool}");
        assert_eq!(
            lookups(&cache) - before,
            rust_files,
            "{tool}: {:?}",
            cache.stats()
        );
    }

    // `load().expect()` holds neither word in sequence; the files holding either one are
    // walked for near misses, and `load().unwrap()` is found.
    let before = lookups(&cache);
    let found = s
        .call(
            "ast_grep",
            json!({"pat": "load().expect()", "lang": "rust"}),
        )
        .await;
    let text = found.text_content();
    assert!(text.contains("src/a.rs:2"), "{text}");
    assert_eq!(
        lookups(&cache) - before,
        2 * rust_files,
        "{:?}",
        cache.stats()
    );
}

/// A partial accept narrows the change set without losing the session's undo limits: with
/// undo turned off, the part applied keeps no undo record either (`retain_files` once reset
/// them to the default, which keeps one).
#[tokio::test]
async fn a_partial_accept_keeps_the_sessions_undo_limits() {
    use xcsh_tools::changeset::{Undo, UndoLimits};
    use xcsh_tools::{AstToolsConfig, builtin_suite, workspace::Workspace};
    let dir = tempfile::tempdir().unwrap();
    for name in ["a.rs", "b.rs"] {
        fs::write(dir.path().join(name), "fn f() { x.unwrap(); }\n").unwrap();
    }
    let session = Session::builder()
        .suite(builtin_suite())
        .extension(AstToolsConfig::default().with_undo_limits(UndoLimits::off()))
        .workspace_root(dir.path())
        .build()
        .unwrap();
    session
        .call(
            "ast_edit",
            json!({"ops": [{"pat": "$X.unwrap()", "out": "$X?"}], "lang": "rust"}),
        )
        .await;
    session
        .resolve_files(&["a.rs".to_owned()], "only a")
        .await
        .unwrap();
    assert_eq!(
        fs::read_to_string(dir.path().join("a.rs")).unwrap(),
        "fn f() { x?; }\n"
    );
    let ws = Workspace::new(dir.path()).unwrap();
    assert!(
        Undo::history(&ws).unwrap().is_empty(),
        "undo is off: the part applied keeps no record"
    );
}
