//! Recovery of an interrupted apply: what `recover` says and does, the lock a second
//! process meets, and bad journals (corrupt, truncated, foreign), which are reported naming
//! the file and never make xcsh write to the tree.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use xcsh_tools::changeset::{ApplyError, ChangeSet, FaultPlan, Recovered, RecoveryError, recover};
use xcsh_tools::workspace::Workspace;

mod common;

/// Every path under `root` with its bytes (directories as `None`), but kept undo records.
fn tree(root: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Option<Vec<u8>>>) {
        for entry in fs::read_dir(dir).expect("read_dir") {
            let path = entry.expect("entry").path();
            let rel = path.strip_prefix(root).expect("under root").to_path_buf();
            // The undo record a finished apply keeps is xcsh's state, not the tree
            // (tests/undo.rs covers it); a journal or lock in `.xcsh` still shows.
            if rel.starts_with(".xcsh/undo") || rel == Path::new(".xcsh/.gitignore") {
                continue;
            }
            if rel == Path::new(".xcsh") {
                walk(root, &path, out);
            } else if path.is_dir() {
                out.insert(rel, None);
                walk(root, &path, out);
            } else {
                out.insert(rel, Some(fs::read(&path).expect("read")));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

/// [`tree`] without the lock file: a stale one (left by the crash) is xcsh's own state, and
/// taking it over is not a write to the tree.
fn tree_but_lock(root: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    let mut t = tree(root);
    t.remove(Path::new(".xcsh/apply.lock"));
    t
}

fn fixture() -> (tempfile::TempDir, ChangeSet) {
    let dir = tempfile::tempdir().expect("tempdir");
    for i in 0..5 {
        fs::write(dir.path().join(format!("f{i}.txt")), format!("old {i}\n")).expect("write");
    }
    let mut cs = ChangeSet::new(Workspace::new(dir.path()).expect("workspace"));
    for i in 0..5 {
        cs.modify(format!("f{i}.txt"), format!("new {i}\n"))
            .expect("modify");
    }
    (dir, cs)
}

/// A tree left by a crash just after the commit point (the journal committed, no file
/// replaced yet).
fn crashed_after_commit() -> (tempfile::TempDir, ChangeSet) {
    let (dir, cs) = fixture();
    let probe = FaultPlan::none();
    let (probe_dir, probe_cs) = fixture();
    probe_cs.apply_with_faults(&probe).expect("clean");
    drop(probe_dir);
    let commit = probe
        .steps()
        .iter()
        .position(|s| s.contains(": commit `"))
        .expect("commit step")
        + 1;
    let result = cs.apply_with_faults(&FaultPlan::crash_at(commit + 1));
    assert!(matches!(result, Err(ApplyError::SimulatedCrash { .. })));
    (dir, cs)
}

#[test]
fn nothing_to_do_writes_nothing() {
    let (dir, _) = fixture();
    let before = tree(dir.path());
    let report = recover(dir.path()).expect("recover");
    assert_eq!(report.outcome, Recovered::NothingToDo);
    assert_eq!(report.to_string(), "nothing to do");
    assert_eq!(tree(dir.path()), before);
}

#[test]
fn a_committed_apply_is_rolled_forward_and_reported() {
    let (dir, _) = crashed_after_commit();
    let report = recover(dir.path()).expect("recover");
    assert_eq!(report.outcome, Recovered::RolledForward { files: 5 });
    assert!(
        report.to_string().starts_with("rolled forward 5 files"),
        "{report}"
    );
    let after = tree(dir.path());
    assert_eq!(after.len(), 5, "{:?}", after.keys());
    for i in 0..5 {
        assert_eq!(
            after[Path::new(&format!("f{i}.txt"))].as_deref(),
            Some(format!("new {i}\n").as_bytes())
        );
    }
}

#[test]
fn the_next_apply_and_workspace_recover_first() {
    // The next apply: recovers (rolls forward), then finds its own change set stale.
    let (dir, cs) = crashed_after_commit();
    match cs.apply() {
        Err(ApplyError::Stale { files }) => assert_eq!(files.len(), 5),
        other => panic!("expected stale after the roll forward, got {other:?}"),
    }
    assert_eq!(tree(dir.path()).len(), 5);
    assert_eq!(
        fs::read_to_string(dir.path().join("f0.txt")).expect("read"),
        "new 0\n"
    );
    // Opening the workspace only reads: the journal stays for the next apply to finish.
    let (dir, _) = crashed_after_commit();
    let before = tree_but_lock(dir.path());
    Workspace::new(dir.path()).expect("workspace");
    assert_eq!(tree_but_lock(dir.path()), before, "opening wrote");
    assert!(dir.path().join(".xcsh/apply.journal").exists());
}

/// Replaces the journal left by a crash with `bytes`: recovery and the next apply refuse,
/// naming the file and what to do, and write nothing; opening the workspace still works (it
/// only reads).
fn bad_journal(edit: impl FnOnce(Vec<u8>) -> Vec<u8>, problem: &str) {
    let (dir, cs) = crashed_after_commit();
    let journal = dir.path().join(".xcsh/apply.journal");
    let bytes = fs::read(&journal).expect("journal");
    fs::write(&journal, edit(bytes)).expect("write");
    let before = tree_but_lock(dir.path());
    let err = recover(dir.path()).expect_err("refused");
    let msg = err.to_string();
    assert!(matches!(err, RecoveryError::BadJournal { .. }), "{msg}");
    assert!(msg.contains(&journal.display().to_string()), "{msg}");
    assert!(msg.contains(problem), "{msg}");
    assert!(msg.contains("xcsh has changed no file"), "{msg}");
    assert!(msg.contains("move the journal away"), "{msg}");
    assert_eq!(tree_but_lock(dir.path()), before, "{msg}");

    let err = cs.apply().expect_err("refused");
    assert!(matches!(err, ApplyError::Recovery(_)), "{err}");
    assert!(err.to_string().contains(problem), "{err}");
    assert_eq!(tree_but_lock(dir.path()), before);

    Workspace::new(dir.path()).expect("opening only reads");
    assert_eq!(tree_but_lock(dir.path()), before);
}

#[test]
fn a_truncated_journal_is_refused() {
    bad_journal(|b| b[..b.len() / 2].to_vec(), "truncated or corrupt");
    bad_journal(|b| b[..10].to_vec(), "truncated");
    bad_journal(|_| Vec::new(), "truncated");
}

#[test]
fn a_corrupt_journal_is_refused() {
    bad_journal(
        |mut b| {
            let n = b.len() - 20;
            b[n] ^= 0x55;
            b
        },
        "checksum does not match",
    );
}

#[test]
fn a_foreign_journal_is_refused() {
    bad_journal(
        |_| b"hello, this is not ours\n{}".to_vec(),
        "not an xcsh apply journal",
    );
    bad_journal(|_| vec![0xff; 100], "not an xcsh apply journal");
    bad_journal(
        |b| {
            let s = String::from_utf8(b).expect("utf8");
            let nl = s.find('\n').expect("header");
            format!("xcsh-apply-journal 99 0\n{}", &s[nl + 1..]).into_bytes()
        },
        "format version 99",
    );
    // A journal copied from another workspace.
    let (other, _) = crashed_after_commit();
    let theirs = fs::read(other.path().join(".xcsh/apply.journal")).expect("journal");
    bad_journal(move |_| theirs, "written for another workspace");
}

#[test]
fn a_second_applier_meets_the_lock_and_its_holder() {
    let (dir, cs) = fixture();
    let root = dir.path().to_path_buf();
    let seen = Arc::new(Mutex::new(None));
    let seen2 = Arc::clone(&seen);
    // While the apply runs (just before its third step), another recovery tries the root.
    let plan = FaultPlan::none().before_step(3, move || {
        *seen2.lock().expect("lock") = Some(recover(&root).map(|r| r.to_string()));
    });
    cs.apply_with_faults(&plan).expect("apply");
    let got = seen.lock().expect("lock").take().expect("ran");
    let err = got.expect_err("busy");
    let msg = err.to_string();
    assert!(matches!(err, RecoveryError::Busy { .. }), "{msg}");
    assert!(
        msg.contains(&format!("is held by pid {} on host", std::process::id())),
        "{msg}"
    );
    assert!(msg.contains("apply.lock"), "{msg}");
    // Nothing is left once the apply is done.
    assert_eq!(tree(dir.path()).len(), 5);
}

#[test]
fn a_lock_left_by_a_dead_process_is_taken_over() {
    let (dir, cs) = fixture();
    fs::create_dir(dir.path().join(".xcsh")).expect("mkdir");
    fs::write(
        dir.path().join(".xcsh/apply.lock"),
        "pid 999999 on host gone\n",
    )
    .expect("write");
    let report = recover(dir.path()).expect("recover");
    assert_eq!(report.outcome, Recovered::NothingToDo);
    assert_eq!(tree(dir.path()).len(), 5, "lock and .xcsh removed");
    cs.apply().expect("apply");
    assert_eq!(tree(dir.path()).len(), 5);
}

#[tokio::test]
async fn a_search_on_a_root_with_a_bad_journal_only_reads_and_the_apply_says_what_to_do() {
    let (dir, cs) = crashed_after_commit();
    let journal = dir.path().join(".xcsh/apply.journal");
    fs::write(&journal, "garbage").expect("write");
    let before = tree_but_lock(dir.path());
    let session = common::session(dir.path());
    let result = session
        .call("ast_grep", serde_json::json!({"pat": "$X", "lang": "rust"}))
        .await;
    assert!(!result.is_error(), "{}", result.text_content());
    assert_eq!(tree_but_lock(dir.path()), before, "a search wrote");
    let err = cs.apply().expect_err("refused");
    let text = err.to_string();
    assert!(
        text.contains("cannot be used: it is not an xcsh apply journal"),
        "{text}"
    );
    assert!(text.contains(&journal.display().to_string()), "{text}");
    assert_eq!(tree_but_lock(dir.path()), before);
}

/// While an apply runs (its journal and lock on disk), a search naming `.xcsh` or the
/// journal itself shows neither.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_journal_and_lock_never_appear_in_a_search() {
    let (dir, cs) = fixture();
    let (at_step, reached) = std::sync::mpsc::channel::<()>();
    let (go_on, wait) = std::sync::mpsc::channel::<()>();
    let wait = Mutex::new(wait);
    let at_step = Mutex::new(at_step);
    // Step 3: the prepared journal is installed and the lock held.
    let plan = FaultPlan::none().before_step(3, move || {
        at_step.lock().expect("lock").send(()).expect("send");
        wait.lock().expect("lock").recv().expect("recv");
    });
    let applier = std::thread::spawn(move || cs.apply_with_faults(&plan).map(|_| ()));
    reached.recv().expect("reached step 3");
    assert!(dir.path().join(".xcsh/apply.journal").is_file());
    assert!(dir.path().join(".xcsh/apply.lock").is_file());
    let session = common::session(dir.path());
    for path in [".xcsh", ".xcsh/apply.journal", ".xcsh/apply.lock"] {
        let result = session
            .call(
                "ast_grep",
                serde_json::json!({"pat": "$X", "lang": "rust", "path": path}),
            )
            .await;
        let text = result.text_content();
        assert!(!text.contains("xcsh-apply-journal"), "{path}: {text}");
        assert!(!text.contains("apply.journal:"), "{path}: {text}");
        assert!(!text.contains("apply.lock:"), "{path}: {text}");
    }
    go_on.send(()).expect("go on");
    applier.join().expect("join").expect("apply");
    assert_eq!(tree(dir.path()).len(), 5);
}
