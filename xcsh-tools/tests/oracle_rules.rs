//! Rule oracle: `ast_edit` with a YAML `rule` rewrites exactly what `ast-grep scan --rule FILE
//! --update-all` (CLI 0.51.1) rewrites, byte for byte, and `ast_grep` with the same rule finds
//! the matches `ast-grep scan --rule FILE --json` reports.
//!
//! The cases use every key of the rule grammar between them (`pattern`, `kind`, `regex`,
//! `inside`, `has`, `precedes`, `follows`, `all`, `any`, `not`, `matches`, `constraints`,
//! `utils`, `transform`, `fix` with `expandEnd`, several documents), over the same fixture
//! tree as the pattern oracle (`oracle.rs`, which says how the CLI is found).

use std::ffi::OsStr;
use std::path::Path;

use xcsh_tools::engine::{self, Control, EditRequest, Scope, SearchRequest};
use xcsh_tools::workspace::Workspace;

mod common;
use common::oracle::{
    apply_plan, ast_grep, first_difference, fixtures, fresh_copy, run_ast_grep, snapshot,
};

/// `(what it exercises, the rule file)`.
const CASES: &[(&str, &str)] = &[
    (
        "broad shapes: pattern + inside a pattern (the shape prefilter reads both)",
        "id: try-in-fn-without-params
language: rust
rule:
  pattern: $X?
  inside:
    pattern: fn $F() { $$$B }
    stopBy: end
fix: ($X)?
",
    ),
    (
        "pattern + inside (stopBy: end)",
        "id: unwrap-in-match
language: rust
rule:
  pattern: $X.unwrap()
  inside:
    kind: match_expression
    stopBy: end
fix: $X.expect(\"in a match\")
",
    ),
    (
        "pattern + not inside",
        "id: unwrap-outside-tests
language: rust
rule:
  pattern: $X.unwrap()
  not:
    inside:
      kind: function_item
      has:
        kind: attribute_item
      stopBy: end
fix: $X.expect(\"checked\")
",
    ),
    (
        "kind + has + regex",
        "id: println-with-cafe
language: rust
rule:
  kind: macro_invocation
  pattern: println!($$$ARGS)
  has:
    kind: token_tree
    regex: sharing|ready
fix: tracing::info!($$$ARGS)
",
    ),
    (
        "all: a let with an unwrap in it",
        "id: let-unwrap
language: rust
rule:
  all:
    - pattern: let $P = $E;
    - has:
        pattern: $X.unwrap()
        stopBy: end
fix: let $P = $E; // may panic
",
    ),
    (
        "any of two constructors",
        "id: any-new
language: rust
rule:
  any:
    - pattern: Arc::new($A)
    - pattern: Mutex::new($A)
fix: Shared::new($A)
",
    ),
    (
        "precedes: a use before another",
        "id: use-precedes
language: rust
rule:
  pattern: use $P;
  precedes:
    kind: use_declaration
fix: use $P; // first of a group
",
    ),
    (
        "follows: a use after another",
        "id: use-follows
language: rust
rule:
  pattern: use $P;
  follows:
    kind: use_declaration
fix: pub use $P;
",
    ),
    (
        "matches + utils",
        "id: util-unwrap
language: rust
utils:
  lock-unwrap:
    pattern: $L.lock().unwrap()
rule:
  kind: call_expression
  matches: lock-unwrap
fix: $L.lock().expect(\"poisoned\")
",
    ),
    (
        "constraints on a metavariable",
        "id: print-to-logger
language: python
rule:
  pattern: $F($$$ARGS)
constraints:
  F:
    regex: ^print$
fix: logger.info($$$ARGS)
",
    ),
    (
        "transform (replace) in the fix",
        "id: console-transform
language: typescript
rule:
  pattern: console.log($$$A)
transform:
  LEVEL:
    replace:
      source: $$$A
      replace: request
      by: REQUEST
fix: logger.debug($LEVEL)
",
    ),
    (
        "fix with expandEnd: a statement removed with its `;`",
        "id: drop-println
language: rust
rule:
  pattern: println!($$$A)
  inside:
    kind: expression_statement
fix:
  template: ''
  expandEnd:
    regex: ';'
",
    ),
    (
        "two rules as two documents",
        "id: a
language: rust
rule:
  pattern: Arc::new($A)
fix: Rc::new($A)
---
id: b
language: rust
rule:
  kind: string_literal
  regex: café
fix: \"cafe\"
",
    ),
];

fn run_cli(ast_grep: &Path, rule_file: &Path, dir: &Path, args: &[&str]) -> String {
    let mut all = vec![
        OsStr::new("scan"),
        OsStr::new("--rule"),
        rule_file.as_os_str(),
    ];
    all.extend(args.iter().map(OsStr::new));
    run_ast_grep(ast_grep, dir, &all)
}

#[test]
fn rules_rewrite_and_match_exactly_like_the_cli() {
    let Some(ast_grep) = ast_grep() else { return };
    let original = snapshot(&fixtures());
    let rules_dir = tempfile::tempdir().expect("tempdir");
    let mut failures = Vec::new();
    for (index, (what, rule)) in CASES.iter().enumerate() {
        let rule_file = rules_dir.path().join(format!("rule{index}.yml"));
        std::fs::write(&rule_file, rule).expect("write rule");
        let label = format!("[{what}]");

        // Search: the same matches (file, line, column, text) as the CLI's JSON.
        let dir = fresh_copy();
        let json = run_cli(&ast_grep, &rule_file, dir.path(), &["--json=compact"]);
        let cli: Vec<serde_json::Value> = serde_json::from_str(&json).expect("CLI JSON");
        let mut theirs: Vec<(String, usize, usize, String)> = cli
            .iter()
            .map(|m| {
                (
                    m["file"].as_str().unwrap_or_default().to_owned(),
                    m["range"]["start"]["line"].as_u64().unwrap_or(0) as usize + 1,
                    m["range"]["start"]["column"].as_u64().unwrap_or(0) as usize + 1,
                    m["text"].as_str().unwrap_or_default().to_owned(),
                )
            })
            .collect();
        theirs.sort();
        let ws = Workspace::new(dir.path()).expect("workspace");
        let request = SearchRequest {
            rule: Some((*rule).to_owned()),
            ..SearchRequest::default()
        };
        let found = engine::search(&Scope::root(&ws), &request, &Control::default())
            .unwrap_or_else(|e| panic!("{label}: search refused the rule: {e}"));
        let mut ours: Vec<(String, usize, usize, String)> = found
            .matches
            .iter()
            .map(|m| (m.file.clone(), m.line, m.column, m.text.clone()))
            .collect();
        ours.sort();
        if theirs.is_empty() {
            failures.push(format!(
                "{label}: the CLI found nothing; the case tests nothing"
            ));
            continue;
        }
        if ours != theirs {
            failures.push(format!(
                "{label}: matches differ\n  CLI:  {theirs:?}\n  ours: {ours:?}"
            ));
            continue;
        }

        // Rewrite: the same tree as `--update-all`.
        let cli_dir = fresh_copy();
        let our_dir = fresh_copy();
        run_cli(&ast_grep, &rule_file, cli_dir.path(), &["--update-all"]);
        let ws = Workspace::new(our_dir.path()).expect("workspace");
        let request = EditRequest {
            rule: Some((*rule).to_owned()),
            ..EditRequest::default()
        };
        let plan = engine::plan_edits(&Scope::root(&ws), &request, &Control::default())
            .unwrap_or_else(|e| panic!("{label}: ast_edit refused the rule: {e}"));
        apply_plan(our_dir.path(), &plan);
        let cli = snapshot(cli_dir.path());
        if cli == original {
            failures.push(format!(
                "{label}: the CLI changed nothing; the case tests nothing"
            ));
            continue;
        }
        if let Some(diff) = first_difference(&cli, &snapshot(our_dir.path())) {
            failures.push(format!("{label}: {diff}"));
            continue;
        }
        eprintln!(
            "ok {label}: {} matches; {} replacements in {} files, {} parsed of {} scanned",
            ours.len(),
            plan.totals.replacements,
            plan.totals.files_changed,
            plan.totals.files_parsed,
            plan.totals.files_scanned
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
