//! Two sessions (as `xcsh serve --http` has, on one workspace) preview different edits of
//! the same files, then apply at the same moment: one apply wins, the other must find its
//! files stale and write nothing — never both "applied", with one edit silently lost.

use std::fs;

use serde_json::json;
use xcsh_core::Session;
use xcsh_tools::builtin_suite;

const OLD: &str = "fn f() { let v = x.unwrap(); }\n";
const FILES: usize = 8;
const ROUNDS: usize = 30;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_applies_over_the_same_file_never_both_succeed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let registry = Session::builder()
        .suite(builtin_suite())
        .workspace_root(dir.path())
        .build_registry()
        .expect("registry");
    let (mut both, mut one, mut none) = (0, 0, 0);
    for round in 0..ROUNDS {
        for i in 0..FILES {
            fs::write(dir.path().join(format!("f{i}.rs")), OLD).expect("write");
        }
        let (a, b) = (registry.session(), registry.session());
        for (session, out) in [(&a, "$X?"), (&b, "$X.expect(\"b\")")] {
            let preview = session
                .call(
                    "ast_edit",
                    json!({"ops": [{"pat": "$X.unwrap()", "out": out}]}),
                )
                .await;
            assert!(!preview.is_error(), "{}", preview.text_content());
        }
        let apply = |s: Session| {
            tokio::spawn(async move {
                s.call("resolve", json!({"action": "apply", "reason": "race"}))
                    .await
            })
        };
        let (ra, rb) = (apply(a.clone()), apply(b.clone()));
        let (ra, rb) = (ra.await.expect("a"), rb.await.expect("b"));
        let contents: Vec<String> = (0..FILES)
            .map(|i| fs::read_to_string(dir.path().join(format!("f{i}.rs"))).expect("read"))
            .collect();
        match (ra.is_error(), rb.is_error()) {
            (false, false) => both += 1,
            (true, true) => none += 1,
            _ => one += 1,
        }
        let winner = if !ra.is_error() {
            "fn f() { let v = x?; }\n"
        } else if !rb.is_error() {
            "fn f() { let v = x.expect(\"b\"); }\n"
        } else {
            OLD
        };
        assert!(
            !(!ra.is_error() && !rb.is_error()),
            "round {round}: both applies reported success; the files hold {contents:?}"
        );
        for content in &contents {
            assert_eq!(
                content, winner,
                "round {round}: a mix of both edits, or a lost one"
            );
        }
        for (s, r) in [(&a, &ra), (&b, &rb)] {
            if r.is_error() {
                assert!(
                    r.text_content().contains("modified since it was read"),
                    "{}",
                    r.text_content()
                );
                assert_eq!(s.pending().len(), 1);
            }
        }
    }
    eprintln!("{ROUNDS} races: {one} with one winner, {none} with none, {both} with both");
}

/// The same race, made certain: apply B runs (on another thread) at the moment apply A has
/// passed its last stale check and is about to replace the file.
#[test]
fn an_apply_between_anothers_check_and_commit_cannot_win_too() {
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};
    use xcsh_tools::changeset::{ChangeSet, FaultPlan};
    use xcsh_tools::workspace::Workspace;

    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("f.rs");
    fs::write(&path, OLD).expect("write");
    let ws = Workspace::new(dir.path()).expect("workspace");
    let change = |content: &str| {
        let mut cs = ChangeSet::new(ws.clone());
        cs.modify("f.rs", content).expect("modify");
        cs
    };
    // Which step replaces the file: count on a scratch copy.
    let scratch = tempfile::tempdir().expect("tempdir");
    fs::write(scratch.path().join("f.rs"), OLD).expect("write");
    let mut probe = ChangeSet::new(Workspace::new(scratch.path()).expect("workspace"));
    probe.modify("f.rs", "x").expect("modify");
    let counted = FaultPlan::none();
    probe.apply_with_faults(&counted).expect("probe apply");
    let replace = counted
        .steps()
        .iter()
        .position(|s| s.contains(": replace "))
        .expect("a replace step")
        + 1;

    let (a, b) = (change("A"), change("B"));
    let b_thread: Arc<Mutex<Option<std::thread::JoinHandle<_>>>> = Arc::default();
    let plan = {
        let b_thread = Arc::clone(&b_thread);
        FaultPlan::none().before_step(replace, move || {
            let b = b.clone();
            let handle = std::thread::spawn(move || b.apply());
            // Give B every chance to finish now, in the middle of A.
            let started = Instant::now();
            while !handle.is_finished() && started.elapsed() < Duration::from_millis(500) {
                std::thread::sleep(Duration::from_millis(5));
            }
            *b_thread.lock().expect("slot") = Some(handle);
        })
    };
    let result_a = a.apply_with_faults(&plan);
    let handle = b_thread.lock().expect("slot").take().expect("B ran");
    let result_b = handle.join().expect("B's thread");
    let now = fs::read_to_string(&path).expect("read");
    assert!(
        result_a.is_err() || result_b.is_err(),
        "both applies succeeded; the file holds {now:?}, so one edit was silently lost"
    );
    let expected = if result_a.is_ok() { "A" } else { "B" };
    assert_eq!(now, expected);
}
