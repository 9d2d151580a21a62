//! The plan's own tree against the guard: where ast_edit's plan judged a result
//! ([`ResultSyntax`]), the guard reading and parsing the file judges it the same way.

use std::path::Path;
use std::sync::Mutex;

use super::{SyntaxReport, SyntaxVerdict};
use crate::changeset::ChangeSet;
use crate::engine::{
    self, Control, EditPlan, EditRequest, Lang, ORDER, Op, Order, ResultSyntax, Scope,
    syntax_errors,
};
use crate::workspace::Workspace;

/// Rewrites that keep the code parsing, that break it, and that change what a unit (an
/// item, a member, statements) starts or ends with, or how the text after it reads.
const REWRITES: &[(&str, &str)] = &[
    ("$X.unwrap()", "$X.expect(\"checked\")"),
    ("$X.unwrap()", "$X.unwrap() // checked"),
    ("$X.unwrap()", "$X.unwrap() /* open"),
    ("use $P;", "pub(crate) use $P;"),
    ("use $P;", "use $P"),
    ("use $P;", "$P();"),
    ("fn $F() { $$$B }", "fn $F() -> () { $$$B }"),
    ("fn $F() { $$$B }", "#[inline] fn $F() { $$$B }"),
    ("fn $F() { $$$B }", "$F();"),
    ("fn $F() { $$$B }", "$F!()"),
    ("fn $F() { $$$B }", "fn $F() { $$$B } (0)"),
    ("impl $T { $$$B }", "impl $T { /* inherent */ $$$B }"),
    // Cut at the items of modules: an `impl` in a `mod` parsed whole, and alone.
    (
        "impl Default for $T { $$$B }",
        "impl core::default::Default for $T { $$$B }",
    ),
    ("impl $Tr for $T { $$$B }", "impl $Tr for $T { $$$B } }"),
    ("$S { $$$F }", "$S { $$$F, }"),
    ("let $X = $V;", "$V;"),
    ("let $X = $V;", "let $X = $V; }"),
    ("let $X = $V;", "let $X = { $V;"),
    ("let $X: $T = $V;", "let $X = $V as $T;"),
    ("return $X;", "return $X"),
    ("$X?", "($X)?"),
    ("if $C { $A } else { $B }", "if !($C) { $B } else { $A }"),
    ("if $C { $A } else { $B }", "if $C { $A } else { $B } - 1"),
    ("$X.$M().$N()", "($X.$M()).$N()"),
    ("\"x\"", "\"x"),
    // Whitespace inside a char literal is its one character: more does not lex (the tree
    // must not take the wider literal for a re-indentation).
    ("' '", "'  '"),
    ("struct $S { $$$F }", "struct $S { $$$F }\nimpl $S {}"),
    ("match $E { $$$A }", "match $E { $$$A } else {}"),
];

/// Each rewrite over the Rust files under `dir`: wherever the plan's own tree says the
/// result parses, the guard reading and parsing the file finds no error either (it says
/// `Parses` or `ChangesParse`), and a whole parse of the result has none where the
/// original had none; a file the plan parsed whole (`Parses`) parses whole. Where the
/// tree finds errors, so do the guard (its first one at the same place) and a whole
/// parse. A file the tree does not judge, the hinted guard judges as the plain one does.
/// And each file gets the same verdict whichever parse comes first (see `Tally`).
/// Returns how many changed files the tree judged, and how many changed files there were.
fn judged_as_the_guard_judges(dir: &Path) -> (usize, usize) {
    // One at a time: each sets the order every plan judges in.
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|p| p.into_inner());
    let ws = Workspace::new(dir).unwrap();
    let (mut judged, mut changed) = (0, 0);
    let (mut introduced, mut same_errors) = (0, 0);
    for (pat, out) in REWRITES {
        let request = EditRequest {
            ops: vec![Op::new(*pat, *out)],
            lang: Some(Lang::Rust),
            check_syntax: true,
            ..EditRequest::default()
        };
        let plan_in = |order: Order| {
            *ORDER.lock().unwrap() = order;
            let plan = engine::plan_edits(&Scope::root(&ws), &request, &Control::default());
            *ORDER.lock().unwrap() = Order::Tally;
            plan.unwrap()
        };
        let plan = plan_in(Order::IncrementalFirst);
        // Parsed fresh first (as a plan whose results mostly broke parses them), the results
        // get the same verdicts.
        let fresh_first = plan_in(Order::FreshFirst);
        assert_eq!(plan.files.len(), fresh_first.files.len());
        for (file, other) in plan.files.iter().zip(&fresh_first.files) {
            let at = format!("{pat} -> {out} in {}", file.display);
            assert_eq!(file.syntax, other.syntax, "{at}");
        }
        let mut changes = ChangeSet::new(ws.clone());
        for file in &plan.files {
            changes
                .modify_splicing(&file.path, file.fingerprint, file.splices())
                .unwrap();
        }
        let guard = SyntaxReport::check(&changes);
        let hinted = SyntaxReport::check_planned(&changes, &plan);
        assert_eq!(guard.files.len(), plan.files.len());
        for ((file, full), fast) in plan.files.iter().zip(&guard.files).zip(&hinted.files) {
            changed += 1;
            let Some(said) = file.syntax.as_ref().map(|planned| &planned.verdict) else {
                assert_eq!(fast, full, "{pat} -> {out}");
                continue;
            };
            judged += 1;
            let at = format!("{pat} -> {out} in {}", file.display);
            let original = file.read_original().unwrap();
            let after = file.new_contents(&original).unwrap();
            let broken = !syntax_errors(&after, Lang::Rust).is_empty();
            if let ResultSyntax::Introduced { .. } = said {
                assert!(broken, "{at}: a whole parse finds no error");
                // The guard's own cut can be finer (the statements of a method the tree
                // parsed whole, as a member): then its error recovery, and so the errors
                // after the first, can differ. The first is where both look.
                let first = |v: &SyntaxVerdict| match v {
                    SyntaxVerdict::Introduced { errors, .. } => {
                        errors.first().map(|e| (e.line, e.column))
                    }
                    _ => None,
                };
                assert!(first(&fast.verdict).is_some(), "{at}: {fast:?}");
                assert_eq!(first(&fast.verdict), first(&full.verdict), "{at}");
                introduced += 1;
                same_errors += usize::from(fast == full);
                continue;
            }
            let had_errors = !syntax_errors(&original, Lang::Rust).is_empty();
            // The guard's cut can be coarser than the tree's: a whole `mod` where the plan
            // parsed an `impl` in it alone. In a module with errors of its own elsewhere (js-sys's
            // `pub type X;`) it sees those, the original's too: neither says the change
            // introduces one.
            let coarser = had_errors
                && *said == ResultSyntax::ChangesParse
                && matches!(full.verdict, SyntaxVerdict::StillBroken { .. });
            assert!(
                coarser
                    || matches!(
                        full.verdict,
                        SyntaxVerdict::Parses | SyntaxVerdict::ChangesParse
                    ),
                "{at}: the tree says {said:?}, the guard {:?}",
                full.verdict
            );
            assert!(
                !broken || had_errors,
                "{at}: the tree says {said:?}, a whole parse finds an error"
            );
            assert!(!(*said == ResultSyntax::Parses && broken), "{at}");
            let expected = match said {
                ResultSyntax::Parses => SyntaxVerdict::Parses,
                _ => SyntaxVerdict::ChangesParse,
            };
            assert_eq!(fast.verdict, expected, "{at}");
        }
    }
    eprintln!("{introduced} broken results judged, {same_errors} with the guard's very errors");
    (judged, changed)
}

#[test]
fn the_plans_tree_judges_results_as_the_guard_does_in_this_repository() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let (judged, changed) = judged_as_the_guard_judges(&dir);
    eprintln!("{judged} of {changed} changed files judged by the plan's tree");
    // Most rewrites here break nothing: most files must be judged, or this tests nothing.
    assert!(judged * 3 > changed, "{judged} of {changed}");
}

/// The same over a tree of real sources: `XCSH_PARTIAL_CORPUS=dir cargo test --release -p
/// xcsh-tools -- --ignored the_guard_does_on_a_corpus`.
#[test]
#[ignore = "minutes; needs XCSH_PARTIAL_CORPUS"]
fn the_plans_tree_judges_results_as_the_guard_does_on_a_corpus() {
    let dir = std::env::var("XCSH_PARTIAL_CORPUS").expect("XCSH_PARTIAL_CORPUS");
    let (judged, changed) = judged_as_the_guard_judges(Path::new(&dir));
    eprintln!("{judged} of {changed} changed files judged by the plan's tree");
}

/// A verdict is taken only for the very edits it judged: a change set staged from the same
/// file with the same number of other edits is judged afresh.
#[test]
fn a_verdict_is_for_the_edits_it_judged_not_their_number() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("lib.rs"), "fn f() -> u8 { g().unwrap() }\n").expect("write");
    let ws = Workspace::new(dir.path()).expect("ws");
    let request = EditRequest {
        ops: vec![Op::new("$X.unwrap()", "$X?")],
        check_syntax: true,
        ..EditRequest::default()
    };
    let plan = engine::plan_edits(&Scope::root(&ws), &request, &Control::default()).expect("plan");
    let file = &plan.files[0];
    assert!(file.syntax.is_some(), "the plan judged it");
    let staged = |splices: Vec<crate::changeset::Splice>| verdict_staged(&ws, &plan, splices);
    assert_eq!(staged(file.splices().collect()), SyntaxVerdict::Parses);
    // One edit as well, but another: `g()?` becomes `g()?)`.
    let mut other: Vec<_> = file.splices().collect();
    other[0].text.push(')');
    assert!(
        matches!(staged(other), SyntaxVerdict::Introduced { .. }),
        "judged afresh"
    );
}

/// A plan whose replacements a caller changed after planning (they are public: a custom tool
/// may keep some of them) is judged afresh: the verdict is on the splices the plan judged,
/// not on what its replacements say when the guard runs.
#[test]
fn a_plan_whose_replacements_were_changed_is_judged_afresh() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("lib.rs"), "fn f() { g(x(1)); h(y(2)); }\n").expect("write");
    let ws = Workspace::new(dir.path()).expect("ws");
    // The first rewrite breaks the file (`g(x(1) +)`), the second alone does not.
    let request = EditRequest {
        ops: vec![Op::new("x($A)", "x($A) +"), Op::new("y($A)", "yy($A)")],
        check_syntax: true,
        ..EditRequest::default()
    };
    let mut plan =
        engine::plan_edits(&Scope::root(&ws), &request, &Control::default()).expect("plan");
    let planned = plan.files[0].syntax.clone().expect("the plan judged it");
    assert!(matches!(planned.verdict, ResultSyntax::Introduced { .. }));
    plan.files[0].replacements.retain(|r| r.op == 1);
    let verdict = verdict_staged(&ws, &plan, plan.files[0].splices().collect());
    assert_eq!(verdict, SyntaxVerdict::Parses, "judged afresh");
}

/// The guard's verdict, told what `plan` knows, on its first file staged with `splices`.
fn verdict_staged(
    ws: &Workspace,
    plan: &EditPlan,
    splices: Vec<crate::changeset::Splice>,
) -> SyntaxVerdict {
    let file = &plan.files[0];
    let mut changes = ChangeSet::new(ws.clone());
    changes
        .modify_splicing(&file.path, file.fingerprint, splices)
        .expect("stage");
    SyntaxReport::check_planned(&changes, plan).files[0]
        .verdict
        .clone()
}
