//! Input a model can invent, thrown at every built-in tool and at `resolve` through one
//! session: wrong types, missing and unknown fields, nulls, 10 MB strings, 10,000-deep
//! nesting, empty and broken patterns, unsupported languages, limits of 0, 2^63 and 2^64,
//! arguments that are not objects.
//!
//! Each case must come back as an error result naming the problem — no panic, no write, no
//! pending action — and the same session must still answer a good call afterwards.

use std::fs;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use xcsh_core::{AgentToolResult, ResolveAction, Session};

mod common;
use common::{session, snapshot};

/// The largest error text a model should ever receive: enough to name the problem, never an
/// echo of a multi-megabyte argument.
const MAX_ERROR_CHARS: usize = 16 * 1024;
const TEN_MB: usize = 10 * 1024 * 1024;

fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    fs::create_dir_all(dir.path().join("src")).expect("mkdir");
    fs::write(
        dir.path().join("src/a.rs"),
        "fn a() {\n    let x = load().unwrap();\n}\n",
    )
    .expect("write");
    fs::write(dir.path().join("app.py"), "print(load())\n").expect("write");
    dir
}

/// `[[[…"x"…]]]`, `depth` arrays deep, built without recursion.
fn nested_arrays(depth: usize) -> Value {
    let mut v = json!("x");
    for _ in 0..depth {
        v = Value::Array(vec![v]);
    }
    v
}

/// `{"a":{"a":…}}`, `depth` objects deep.
fn nested_objects(depth: usize) -> Value {
    let mut v = json!(1);
    for _ in 0..depth {
        v = object([("a", v)]);
    }
    v
}

/// An object from fields, moving the values in: `json!` would serialise a nested `Value`
/// again, recursively, which a 10,000-deep one does not survive on a 2 MiB stack.
fn object<const N: usize>(fields: [(&str, Value); N]) -> Value {
    Value::Object(fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect())
}

/// A number JSON cannot hold as an integer (2^64), as a parser would hand it over.
fn two_pow_64() -> Value {
    serde_json::from_str("18446744073709551616").expect("parses as a float")
}

struct Case {
    name: &'static str,
    tool: &'static str,
    args: Value,
    /// Fragments the error text must contain.
    expect: &'static [&'static str],
}

fn case(
    name: &'static str,
    tool: &'static str,
    args: Value,
    expect: &'static [&'static str],
) -> Case {
    Case {
        name,
        tool,
        args,
        expect,
    }
}

fn op() -> Value {
    json!([{"pat": "load()", "out": "fetch()"}])
}

fn cases() -> Vec<Case> {
    let huge = "a".repeat(TEN_MB);
    let huge_broken = format!("foo({}", "(".repeat(TEN_MB));
    #[allow(unused_mut)]
    let mut cases = vec![
        // --- not an object at all
        case(
            "edit: array",
            "ast_edit",
            json!([1, 2]),
            &[
                "Invalid arguments for `ast_edit`: invalid type: sequence, expected an object of named parameters",
            ],
        ),
        case(
            "edit: string",
            "ast_edit",
            json!("ops"),
            &["Invalid arguments for `ast_edit`", "invalid type: string"],
        ),
        case(
            "edit: number",
            "ast_edit",
            json!(42),
            &["Invalid arguments for `ast_edit`", "invalid type: integer"],
        ),
        case(
            "edit: bool",
            "ast_edit",
            json!(true),
            &["Invalid arguments for `ast_edit`", "invalid type: boolean"],
        ),
        case(
            "grep: array",
            "ast_grep",
            json!(["$X"]),
            &["Invalid arguments for `ast_grep`: invalid type: sequence, expected an object"],
        ),
        case(
            "resolve: string",
            "resolve",
            json!("apply"),
            &["Invalid arguments for `resolve`", "invalid type: string"],
        ),
        case(
            "resolve: array",
            "resolve",
            json!(["apply", "why"]),
            &["Invalid arguments for `resolve`: invalid type: sequence, expected an object"],
        ),
        // --- missing, unknown, null fields
        case(
            "edit: null args",
            "ast_edit",
            Value::Null,
            &[
                "ops: at least one op is required",
                "or an ast-grep YAML rule",
            ],
        ),
        case(
            "edit: empty object",
            "ast_edit",
            json!({}),
            &[
                "ops: at least one op is required",
                "or an ast-grep YAML rule",
            ],
        ),
        case(
            "edit: ops null",
            "ast_edit",
            json!({"ops": null}),
            &["ops: invalid type: null, expected a sequence"],
        ),
        case(
            "edit: op null",
            "ast_edit",
            json!({"ops": [null]}),
            &["ops[0]: invalid type: null"],
        ),
        case(
            "edit: op missing out",
            "ast_edit",
            json!({"ops": [{"pat": "a()"}]}),
            &["ops[0]: missing field `out`"],
        ),
        case(
            "edit: pat null",
            "ast_edit",
            json!({"ops": [{"pat": null, "out": "b"}]}),
            &["ops[0].pat: invalid type: null, expected a string"],
        ),
        case(
            "edit: unknown top field",
            "ast_edit",
            json!({"ops": op(), "force": true}),
            &["unknown field `force`"],
        ),
        case(
            "edit: unknown op field",
            "ast_edit",
            json!({"ops": [{"pat": "a()", "out": "b()", "flags": 1}]}),
            &["ops[0].flags: unknown field `flags`, expected `pat` or `out`"],
        ),
        case(
            "grep: empty object",
            "ast_grep",
            json!({}),
            &[
                "pat: give the code to find",
                "or an ast-grep YAML rule in `rule`",
            ],
        ),
        case(
            "grep: pat null",
            "ast_grep",
            json!({"pat": null}),
            &["pat: give the code to find"],
        ),
        case(
            "resolve: empty object",
            "resolve",
            json!({}),
            &["missing field `action`"],
        ),
        case(
            "resolve: missing reason",
            "resolve",
            json!({"action": "apply"}),
            &["missing field `reason`"],
        ),
        case(
            "resolve: reason null",
            "resolve",
            json!({"action": "apply", "reason": null}),
            &["reason: invalid type: null, expected a string"],
        ),
        case(
            "resolve: unknown field",
            "resolve",
            json!({"action": "apply", "reason": "r", "id": 3}),
            &["unknown field `id`"],
        ),
        // --- wrong types and values
        case(
            "edit: ops a string",
            "ast_edit",
            json!({"ops": "load()"}),
            &["ops: invalid type: string \"load()\", expected a sequence"],
        ),
        case(
            "edit: pat a number",
            "ast_edit",
            json!({"ops": [{"pat": 1, "out": "b"}]}),
            &["ops[0].pat: invalid type: integer `1`, expected a string"],
        ),
        case(
            "edit: lang a number",
            "ast_edit",
            json!({"ops": op(), "lang": 5}),
            &["lang: invalid type: integer `5`, expected a string"],
        ),
        case(
            "edit: path an object",
            "ast_edit",
            json!({"ops": op(), "path": {"p": 1}}),
            &["path: invalid type: map, expected a string"],
        ),
        case(
            "resolve: unknown action",
            "resolve",
            json!({"action": "maybe", "reason": "r"}),
            &["action: unknown variant `maybe`", "apply", "discard"],
        ),
        case(
            "resolve: action upper case",
            "resolve",
            json!({"action": "APPLY", "reason": "r"}),
            &["action: unknown variant `APPLY`"],
        ),
        case(
            "resolve: reason a number",
            "resolve",
            json!({"action": "apply", "reason": 7}),
            &["reason: invalid type: integer `7`, expected a string"],
        ),
        case(
            "resolve: nothing pending",
            "resolve",
            json!({"action": "apply", "reason": "r"}),
            &["No pending action to resolve. Nothing to apply or discard."],
        ),
        // --- limits
        case(
            "edit: limit 0",
            "ast_edit",
            json!({"ops": op(), "limit": 0}),
            &["limit: must be at least 1"],
        ),
        case(
            "edit: limit -1",
            "ast_edit",
            json!({"ops": op(), "limit": -1}),
            &["limit: invalid value: integer `-1`, expected u64"],
        ),
        case(
            "edit: limit 2^64",
            "ast_edit",
            json!({"ops": op(), "limit": two_pow_64()}),
            &["limit: invalid type: floating point", "expected u64"],
        ),
        case(
            "edit: limit 1.5",
            "ast_edit",
            json!({"ops": op(), "limit": 1.5}),
            &["limit: invalid type: floating point `1.5`, expected u64"],
        ),
        case(
            "edit: limit a string",
            "ast_edit",
            json!({"ops": op(), "limit": "5"}),
            &["limit: invalid type: string \"5\", expected u64"],
        ),
        case(
            "grep: limit 0",
            "ast_grep",
            json!({"pat": "load()", "limit": 0}),
            &["limit: must be at least 1"],
        ),
        case(
            "grep: limit 2^64",
            "ast_grep",
            json!({"pat": "load()", "limit": two_pow_64()}),
            &["limit: invalid type: floating point"],
        ),
        // --- patterns and languages
        case(
            "edit: no ops",
            "ast_edit",
            json!({"ops": []}),
            &["ops: at least one op is required"],
        ),
        case(
            "edit: empty pattern",
            "ast_edit",
            json!({"ops": [{"pat": "", "out": "x"}]}),
            &["ops[0].pat: the pattern is empty"],
        ),
        case(
            "edit: blank pattern",
            "ast_edit",
            json!({"ops": [{"pat": " \n\t", "out": "x"}]}),
            &["ops[0].pat: the pattern is empty"],
        ),
        case(
            "edit: broken pattern",
            "ast_edit",
            json!({"ops": [{"pat": "foo(", "out": "x"}], "lang": "rust"}),
            &["ops[0].pat: `foo(` is not a valid rust pattern"],
        ),
        case(
            "edit: duplicate patterns",
            "ast_edit",
            json!({"ops": [{"pat": "a()", "out": "b()"}, {"pat": "a()", "out": "c()"}]}),
            &["ops[1].pat: the same pattern as ops[0].pat"],
        ),
        case(
            "edit: unsupported lang",
            "ast_edit",
            json!({"ops": op(), "lang": "cobol"}),
            &["lang: `cobol` is not a supported language", "rust, python"],
        ),
        case(
            "edit: empty lang",
            "ast_edit",
            json!({"ops": op(), "lang": ""}),
            &["lang: `` is not a supported language"],
        ),
        case(
            "grep: empty pattern",
            "ast_grep",
            json!({"pat": ""}),
            &["pat: the pattern is empty"],
        ),
        case(
            "grep: broken pattern",
            "ast_grep",
            json!({"pat": "fn (", "lang": "rust"}),
            &["pat: `fn (` is not a valid rust pattern"],
        ),
        case(
            "grep: unsupported lang",
            "ast_grep",
            json!({"pat": "x", "lang": "brainfuck"}),
            &["lang: `brainfuck` is not a supported language"],
        ),
        case(
            "edit: metavariable-only out with unknown var",
            "ast_edit",
            json!({"ops": [{"pat": "load()", "out": "$$$"}], "lang": "rust", "path": "missing.rs"}),
            &["path: path `missing.rs` does not exist"],
        ),
        // --- paths and globs (confinement has its own suite; these are malformed ones)
        case(
            "edit: broken glob",
            "ast_edit",
            json!({"ops": op(), "glob": "src/[a"}),
            &["glob: `src/[a` is not a valid glob"],
        ),
        case(
            "edit: path with NUL",
            "ast_edit",
            json!({"ops": op(), "path": "src/\u{0}a.rs"}),
            &["path"],
        ),
        case(
            "grep: glob escaping",
            "ast_grep",
            json!({"pat": "load()", "glob": "../**"}),
            &[
                "glob: `../**` is not a valid glob",
                "cannot start with `/` or contain `..`",
            ],
        ),
        // --- huge strings
        case(
            "edit: 10 MB broken pattern",
            "ast_edit",
            json!({"ops": [{"pat": huge_broken.clone(), "out": "x"}], "lang": "rust"}),
            &["ops[0].pat:", "is not a valid rust pattern"],
        ),
        case(
            "grep: 10 MB broken pattern",
            "ast_grep",
            json!({"pat": huge_broken, "lang": "python"}),
            &["pat:", "is not a valid python pattern"],
        ),
        case(
            "edit: 10 MB lang",
            "ast_edit",
            json!({"ops": op(), "lang": huge.clone()}),
            &["lang:", "is not a supported language"],
        ),
        case(
            "edit: 10 MB path",
            "ast_edit",
            json!({"ops": op(), "path": huge.clone()}),
            &["path:"],
        ),
        case(
            "edit: 10 MB glob",
            "ast_edit",
            json!({"ops": op(), "glob": format!("[{huge}")}),
            &["glob:", "is not a valid glob"],
        ),
        case(
            "resolve: 10 MB action",
            "resolve",
            json!({"action": huge, "reason": "r"}),
            &["action: unknown variant"],
        ),
        // --- deep nesting (serde_json's parser stops at 128 levels; a `Value` built in code does not)
        case(
            "edit: 100 nested arrays as ops",
            "ast_edit",
            object([("ops", nested_arrays(100))]),
            &["ops[0][0]: invalid type: sequence, expected a string"],
        ),
        case(
            "edit: 10,000 nested arrays as ops",
            "ast_edit",
            object([("ops", nested_arrays(10_000))]),
            &["nested more than 128 levels deep"],
        ),
        case(
            "edit: 10,000 nested arrays as args",
            "ast_edit",
            nested_arrays(10_000),
            &["nested more than 128 levels deep"],
        ),
        case(
            "edit: 10,000 nested objects as path",
            "ast_edit",
            object([("ops", op()), ("path", nested_objects(10_000))]),
            &["nested more than 128 levels deep"],
        ),
        case(
            "grep: 10,000 nested arrays as pat",
            "ast_grep",
            object([("pat", nested_arrays(10_000))]),
            &["nested more than 128 levels deep"],
        ),
        case(
            "resolve: 10,000 nested objects",
            "resolve",
            nested_objects(10_000),
            &["nested more than 128 levels deep"],
        ),
        case(
            "resolve: 10,000 nested arrays as reason",
            "resolve",
            object([
                ("action", json!("discard")),
                ("reason", nested_arrays(10_000)),
            ]),
            &["nested more than 128 levels deep"],
        ),
        // --- unknown tools
        case(
            "unknown tool",
            "ast_edits",
            json!({}),
            &["Unknown tool `ast_edits`.", "Did you mean `ast_edit`?"],
        ),
        case("empty tool name", "", json!({}), &["Unknown tool ``."]),
    ];
    // A language ast-grep knows whose grammar this build leaves out names its feature.
    #[cfg(not(feature = "lang-java"))]
    cases.push(case(
        "edit: grammar not shipped",
        "ast_edit",
        json!({"ops": op(), "lang": "java"}),
        &[
            "lang: `java` (java) is not compiled into this build",
            "enable the cargo feature `lang-java` of xcsh-tools",
        ],
    ));
    cases
}

/// Calls on a tokio worker thread (as an MCP server does: 2 MiB stacks), bounded in time.
async fn call(session: &Session, tool: &str, args: Value) -> AgentToolResult {
    let (s, tool) = (session.clone(), tool.to_owned());
    let task = tokio::spawn(async move { s.call(&tool, args).await });
    tokio::time::timeout(Duration::from_secs(120), task)
        .await
        .expect("the call finished within 2 minutes")
        .expect("the call did not take its task down")
}

/// A good preview and its discard: the session still works.
async fn still_usable(session: &Session, root: &Path, after: &str) {
    let preview = call(
        session,
        "ast_edit",
        json!({"ops": op(), "lang": "rust", "path": "src"}),
    )
    .await;
    assert!(
        !preview.is_error()
            && preview
                .text_content()
                .contains("+    let x = fetch().unwrap();"),
        "after {after}, a good preview failed: {}",
        preview.text_content()
    );
    let discarded = call(
        session,
        "resolve",
        json!({"action": "discard", "reason": "probe"}),
    )
    .await;
    assert!(
        !discarded.is_error(),
        "after {after}: {}",
        discarded.text_content()
    );
    let found = call(session, "ast_grep", json!({"pat": "load()"})).await;
    assert!(
        found.text_content().starts_with("2 matches in 2 files"),
        "after {after}: {}",
        found.text_content()
    );
    assert!(root.join("src/a.rs").is_file());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_bad_input_is_an_error_result_naming_the_problem() {
    let dir = workspace();
    let root = dir.path();
    let before = snapshot(root);
    let session = session(root);
    let cases = cases();
    assert!(cases.len() >= 30, "the table shrank to {}", cases.len());
    let mut failures = Vec::new();
    for case in cases {
        let started = std::time::Instant::now();
        let result = call(&session, case.tool, case.args).await;
        eprintln!("{}: {:?}", case.name, started.elapsed());
        let text = result.text_content();
        let shown: String = text.chars().take(400).collect();
        if !result.is_error() {
            failures.push(format!("{}: not an error: {shown}", case.name));
        }
        for fragment in case.expect {
            if !text.contains(fragment) {
                failures.push(format!("{}: `{fragment}` missing from: {shown}", case.name));
            }
        }
        if text.contains("lang: lang:") {
            failures.push(format!("{}: the field is named twice: {shown}", case.name));
        }
        if text.contains("panic") || text.contains("failed unexpectedly") {
            failures.push(format!("{}: a panic reached the model: {shown}", case.name));
        }
        if text.len() > MAX_ERROR_CHARS {
            failures.push(format!(
                "{}: the error is {} bytes long; it must name the problem, not echo the input",
                case.name,
                text.len()
            ));
        }
        if session.pending().has_pending() {
            failures.push(format!("{}: pushed a pending action", case.name));
            while session
                .resolve(ResolveAction::Discard, "bad input must not preview")
                .await
                .is_ok()
            {}
        }
        if snapshot(root) != before {
            failures.push(format!("{}: the workspace changed", case.name));
        }
        session.take_reminders();
        still_usable(&session, root, case.name).await;
    }
    assert!(
        failures.is_empty(),
        "{} problem(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert_eq!(snapshot(root), before);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn positional_arguments_never_apply_anything() {
    // serde reads an array as a struct's fields in order; `["apply", "why"]` must not be
    // taken as {action: "apply", reason: "why"}.
    let dir = workspace();
    let session = session(dir.path());
    let before = snapshot(dir.path());
    let preview = call(&session, "ast_edit", json!({"ops": op()})).await;
    assert!(!preview.is_error(), "{}", preview.text_content());
    let positional = call(&session, "resolve", json!(["apply", "why"])).await;
    assert!(positional.is_error(), "{}", positional.text_content());
    assert_eq!(
        snapshot(dir.path()),
        before,
        "a positional resolve wrote files"
    );
    assert_eq!(session.pending().len(), 1);
    let positional_edit = call(
        &session,
        "ast_edit",
        json!([[{"pat": "print($X)", "out": "$X"}]]),
    )
    .await;
    assert!(
        positional_edit.is_error(),
        "{}",
        positional_edit.text_content()
    );
    assert_eq!(session.pending().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn huge_limits_are_accepted_and_do_not_allocate_by_them() {
    // 2^63 and u64::MAX are valid limits ("no limit" in practice): they must work, not try to
    // reserve room for that many matches.
    let dir = workspace();
    let session = session(dir.path());
    for limit in [json!(1u64 << 63), json!(u64::MAX)] {
        let found = call(
            &session,
            "ast_grep",
            json!({"pat": "load()", "limit": limit}),
        )
        .await;
        assert!(
            found.text_content().starts_with("2 matches in 2 files"),
            "limit {limit}: {}",
            found.text_content()
        );
        let preview = call(&session, "ast_edit", json!({"ops": op(), "limit": limit})).await;
        assert!(
            preview
                .text_content()
                .contains("AST Edit preview: 2 replacements in 2 files"),
            "limit {limit}: {}",
            preview.text_content()
        );
        let applied = call(
            &session,
            "resolve",
            json!({"action": "discard", "reason": "r"}),
        )
        .await;
        assert!(!applied.is_error());
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_10_mb_reason_is_passed_through_and_nothing_breaks() {
    let dir = workspace();
    let session = session(dir.path());
    let preview = call(&session, "ast_edit", json!({"ops": op(), "path": "src"})).await;
    assert!(!preview.is_error(), "{}", preview.text_content());
    let reason = "r".repeat(TEN_MB);
    let applied = call(
        &session,
        "resolve",
        json!({"action": "apply", "reason": reason}),
    )
    .await;
    assert_eq!(applied.text_content(), "Applied 1 replacement in 1 file.");
    assert_eq!(
        fs::read_to_string(dir.path().join("src/a.rs")).expect("read"),
        "fn a() {\n    let x = fetch().unwrap();\n}\n"
    );
}
