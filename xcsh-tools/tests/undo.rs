//! Undo: every apply keeps its inverse; reverting it is a previewed, stale-checked apply that
//! leaves the tree byte-identical to what it was; records are bounded, LIFO, and a damaged,
//! foreign or out-of-date record is refused by name without writing to the tree.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use xcsh_tools::changeset::{
    ApplyError, ChangeSet, FaultPlan, Recovered, Undo, UndoError, UndoLimits, recover,
};
use xcsh_tools::workspace::Workspace;

/// Every path under `root` but `.xcsh` (xcsh's own state), with its bytes; directories `None`.
fn tree(root: &Path) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    fn walk(root: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Option<Vec<u8>>>) {
        for entry in fs::read_dir(dir).expect("read_dir") {
            let path = entry.expect("entry").path();
            let rel = path.strip_prefix(root).expect("under root").to_path_buf();
            if rel.starts_with(".xcsh") {
                continue;
            }
            if path.is_dir() {
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

fn fixture() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    fs::create_dir(root.join("src")).expect("mkdir");
    fs::write(root.join("src/a.rs"), "fn a() { x.unwrap() }\n").expect("write");
    fs::write(root.join("src/b.rs"), "fn b() {}\n").expect("write");
    fs::write(root.join("old.txt"), "to be deleted\n").expect("write");
    fs::write(root.join("from.txt"), "to be moved\n").expect("write");
    let ws = Workspace::new(root).expect("workspace");
    (dir, ws)
}

/// One of each operation, with new directories for a create and a rename.
fn mixed(ws: &Workspace) -> ChangeSet {
    let mut cs = ChangeSet::new(ws.clone());
    cs.modify("src/a.rs", "fn a() { x? }\n")
        .and_then(|cs| cs.create("docs/guide/new.md", "# New\n"))
        .and_then(|cs| cs.delete("old.txt"))
        .and_then(|cs| cs.rename("from.txt", "moved/to.txt"))
        .expect("stage");
    cs
}

#[test]
fn preview_apply_undo_apply_leaves_the_tree_byte_identical() {
    let (dir, ws) = fixture();
    let before = tree(dir.path());
    let report = mixed(&ws).apply().expect("apply");
    assert_eq!(report.undo, Some(1), "{report:?}");
    assert_eq!(report.undo_not_kept, None);
    assert_ne!(tree(dir.path()), before);

    let undo = Undo::last(&ws).expect("undo").expect("a record");
    assert_eq!(undo.entry().id, 1);
    assert_eq!(undo.entry().files, 4);
    let diff = undo.diff();
    assert!(
        diff.contains("-fn a() { x? }\n+fn a() { x.unwrap() }\n"),
        "{diff}"
    );
    assert!(diff.contains("+to be deleted"), "{diff}");
    assert!(diff.contains("-# New"), "{diff}");
    // A preview writes nothing.
    assert_ne!(tree(dir.path()), before);

    let report = undo.apply().expect("undo apply");
    assert_eq!(
        (
            report.modified,
            report.created,
            report.deleted,
            report.renamed
        ),
        (1, 1, 1, 1)
    );
    // An undo keeps no record of its own, and removes the directories the apply made.
    assert_eq!(report.undo, None);
    assert_eq!(tree(dir.path()), before);
    assert!(Undo::last(&ws).expect("undo").is_none());
    assert!(Undo::history(&ws).expect("history").is_empty());
}

#[test]
fn the_original_permissions_come_back() {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let (dir, ws) = fixture();
        let script = dir.path().join("run.sh");
        fs::write(&script, "echo 1\n").expect("write");
        fs::set_permissions(&script, fs::Permissions::from_mode(0o750)).expect("chmod");
        let mut cs = ChangeSet::new(ws.clone());
        cs.modify("run.sh", "echo 2\n").expect("stage");
        cs.apply().expect("apply");
        Undo::last(&ws)
            .expect("undo")
            .expect("record")
            .apply()
            .expect("undo");
        let meta = fs::metadata(&script).expect("meta");
        assert_eq!(meta.permissions().mode() & 0o777, 0o750);
        assert_eq!(fs::read_to_string(&script).expect("read"), "echo 1\n");
    }
}

#[test]
fn a_deleted_file_comes_back_with_its_permissions() {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let (dir, ws) = fixture();
        let script = dir.path().join("run.sh");
        fs::write(&script, "echo 1\n").expect("write");
        // Not what a new file gets by default under any usual umask; and set-user-ID, which
        // a file this process recreates must not get back.
        fs::set_permissions(&script, fs::Permissions::from_mode(0o4751)).expect("chmod");
        let mut cs = ChangeSet::new(ws.clone());
        cs.delete("run.sh").expect("stage");
        cs.apply().expect("apply");
        assert!(!script.exists());
        let undo = Undo::last(&ws).expect("undo").expect("record");
        let diff = undo.change_set().diff();
        assert!(diff.contains("new file\nnew file mode 100751\n"), "{diff}");
        // The permissions are part of what an approval of the undo is bound to.
        let digest = undo.change_set().effect_digest();
        let mut plain = ChangeSet::new(ws.clone());
        plain.create("run.sh", "echo 1\n").expect("stage");
        assert_ne!(digest, plain.effect_digest());
        // A durable pending stack keeps them too.
        let json = serde_json::to_string(undo.change_set()).expect("keep");
        let kept: ChangeSet = serde_json::from_str(&json).expect("restore");
        assert_eq!(kept.effect_digest(), digest, "{json}");
        undo.apply().expect("undo");
        let meta = fs::metadata(&script).expect("meta");
        assert_eq!(meta.permissions().mode() & 0o7777, 0o751);
        assert_eq!(fs::read_to_string(&script).expect("read"), "echo 1\n");
    }
}

#[test]
fn undo_is_lifo_over_several_applies() {
    let (dir, ws) = fixture();
    let v0 = tree(dir.path());
    for text in ["one\n", "two\n"] {
        let mut cs = ChangeSet::new(ws.clone());
        cs.modify("src/b.rs", text).expect("stage");
        cs.apply().expect("apply");
    }
    let ids: Vec<u64> = Undo::history(&ws)
        .expect("history")
        .iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(ids, [1, 2]);

    let undo = Undo::last(&ws).expect("undo").expect("record");
    assert_eq!(undo.entry().id, 2);
    undo.apply().expect("undo 2");
    assert_eq!(
        fs::read_to_string(dir.path().join("src/b.rs")).expect("read"),
        "one\n"
    );
    let undo = Undo::last(&ws).expect("undo").expect("record");
    assert_eq!(undo.entry().id, 1);
    undo.apply().expect("undo 1");
    assert_eq!(tree(dir.path()), v0);
    assert!(Undo::last(&ws).expect("undo").is_none());
}

#[test]
fn a_file_changed_since_the_apply_is_named_and_nothing_is_written() {
    let (dir, ws) = fixture();
    mixed(&ws).apply().expect("apply");
    fs::write(dir.path().join("src/a.rs"), "edited by hand\n").expect("write");
    fs::write(dir.path().join("old.txt"), "made again\n").expect("write");
    let after = tree(dir.path());
    let err = Undo::last(&ws).expect_err("refused");
    let text = err.to_string();
    assert!(matches!(err, UndoError::Changed { id: 1, .. }), "{text}");
    assert!(text.starts_with("cannot undo apply #1: files changed since it was applied: `src/a.rs` (modified), `old.txt` (created again); undo would overwrite those changes, so nothing was written"), "{text}");
    assert_eq!(tree(dir.path()), after);
    // The record stays: put the file back and the undo goes through.
    fs::write(dir.path().join("src/a.rs"), "fn a() { x? }\n").expect("write");
    fs::remove_file(dir.path().join("old.txt")).expect("rm");
    assert!(Undo::last(&ws).expect("undo").is_some());
}

#[test]
fn a_file_changed_between_the_undo_preview_and_its_apply_is_refused() {
    let (dir, ws) = fixture();
    mixed(&ws).apply().expect("apply");
    let undo = Undo::last(&ws).expect("undo").expect("record");
    fs::write(dir.path().join("src/a.rs"), "changed after the preview\n").expect("write");
    match undo.apply() {
        Err(ApplyError::Stale { files }) => {
            assert_eq!(
                files[0].to_string(),
                "`src/a.rs` (modified since it was read)"
            );
        }
        other => panic!("expected a stale error, got {other:?}"),
    }
    assert_eq!(
        fs::read_to_string(dir.path().join("src/a.rs")).expect("read"),
        "changed after the preview\n"
    );
    assert!(
        Undo::history(&ws).expect("history").len() == 1,
        "the record stays"
    );
}

#[test]
fn records_are_bounded_by_count_and_by_bytes() {
    let (dir, ws) = fixture();
    let limits = UndoLimits::new(2, 1 << 20);
    for i in 0..4 {
        let mut cs = ChangeSet::new(ws.clone()).with_undo(limits);
        cs.modify("src/b.rs", format!("v{i}\n")).expect("stage");
        assert_eq!(cs.apply().expect("apply").undo, Some(i + 1));
    }
    let ids: Vec<u64> = Undo::history(&ws)
        .expect("history")
        .iter()
        .map(|e| e.id)
        .collect();
    assert_eq!(ids, [3, 4], "the oldest go first");

    // Originals over the size cap: this apply keeps no record, and says why.
    let big = "x".repeat(4096);
    fs::write(dir.path().join("big.txt"), &big).expect("write");
    let mut cs = ChangeSet::new(ws.clone()).with_undo(UndoLimits::new(10, 1000));
    cs.modify("big.txt", "small\n").expect("stage");
    let report = cs.apply().expect("apply");
    assert_eq!(report.undo, None);
    assert_eq!(
        report.undo_not_kept.as_deref(),
        Some("its originals (4096 bytes) exceed the undo size cap (1000 bytes)")
    );

    // Turned off: nothing kept, nothing dropped.
    let mut cs = ChangeSet::new(ws.clone()).with_undo(UndoLimits::off());
    cs.modify("src/b.rs", "off\n").expect("stage");
    let report = cs.apply().expect("apply");
    assert_eq!(report.undo, None);
    assert_eq!(Undo::history(&ws).expect("history").len(), 2);
}

#[test]
fn the_state_directory_stays_out_of_version_control() {
    let (dir, ws) = fixture();
    mixed(&ws).apply().expect("apply");
    let ignore = fs::read_to_string(dir.path().join(".xcsh/.gitignore")).expect("gitignore");
    assert!(ignore.lines().any(|l| l == "*"), "{ignore}");
}

/// Copies the newest record aside, so a test can put it back as a crash would have left it.
fn record_dir(root: &Path) -> PathBuf {
    let mut dirs: Vec<PathBuf> = fs::read_dir(root.join(".xcsh/undo"))
        .expect("undo dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs.pop().expect("a record")
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).expect("mkdir");
    for entry in fs::read_dir(from).expect("read_dir") {
        let path = entry.expect("entry").path();
        fs::copy(&path, to.join(path.file_name().expect("name"))).expect("copy");
    }
}

#[test]
fn an_undo_whose_record_outlived_a_crash_is_reported_as_already_undone() {
    let (dir, ws) = fixture();
    mixed(&ws).apply().expect("apply");
    let record = record_dir(dir.path());
    let spare = tempfile::tempdir().expect("tempdir");
    copy_dir(&record, spare.path());
    let undo = Undo::last(&ws).expect("undo").expect("record");
    undo.apply().expect("undo");
    let reverted = tree(dir.path());
    // As if the process died after the revert, before its record was removed.
    copy_dir(spare.path(), &record);

    let err = Undo::last(&ws).expect_err("already undone");
    assert!(matches!(err, UndoError::AlreadyUndone { id: 1 }), "{err}");
    assert_eq!(
        err.to_string(),
        "apply #1 was already undone (its files hold their contents from before it); its record is removed now: undo again to revert the apply before it"
    );
    assert_eq!(tree(dir.path()), reverted, "nothing written twice");
    assert!(Undo::last(&ws).expect("undo").is_none());
}

#[test]
fn a_corrupt_truncated_or_foreign_record_is_named_and_nothing_is_written() {
    let (dir, ws) = fixture();
    mixed(&ws).apply().expect("apply");
    let record = record_dir(dir.path()).join("record");
    let good = fs::read(&record).expect("read");
    let after = tree(dir.path());

    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "truncated",
            good[..good.len() / 2].to_vec(),
            "its checksum does not match",
        ),
        (
            "garbage",
            b"hello\nworld".to_vec(),
            "it is not an xcsh undo record",
        ),
        ("empty", Vec::new(), "it is truncated"),
    ];
    for (what, bytes, expected) in cases {
        fs::write(&record, bytes).expect("write");
        let err = Undo::last(&ws).expect_err(what);
        let text = err.to_string();
        assert!(matches!(err, UndoError::BadRecord { .. }), "{what}: {text}");
        assert!(text.contains(expected), "{what}: {text}");
        assert!(
            text.contains(&record.display().to_string()),
            "{what}: {text}"
        );
        assert!(text.contains("Remove the directory"), "{what}: {text}");
        assert_eq!(tree(dir.path()), after, "{what}");
    }

    // A state directory copied from another workspace.
    fs::write(&record, &good).expect("write");
    let (other, other_ws) = fixture();
    fs::create_dir_all(other.path().join(".xcsh/undo")).expect("mkdir");
    copy_dir(
        record.parent().expect("dir"),
        &other
            .path()
            .join(".xcsh/undo")
            .join(record.parent().unwrap().file_name().unwrap()),
    );
    let before_other = tree(other.path());
    let err = Undo::last(&other_ws).expect_err("foreign");
    assert!(
        err.to_string()
            .contains("it was written for another workspace"),
        "{err}"
    );
    assert_eq!(tree(other.path()), before_other);
}

#[test]
fn a_kept_original_that_changed_is_refused() {
    let (dir, ws) = fixture();
    let mut cs = ChangeSet::new(ws.clone());
    cs.modify("src/b.rs", "new\n").expect("stage");
    cs.apply().expect("apply");
    let blob = record_dir(dir.path()).join("0");
    fs::write(&blob, "tampered\n").expect("write");
    let err = Undo::last(&ws).expect_err("refused");
    assert!(
        err.to_string()
            .contains("the kept original changed since it was kept"),
        "{err}"
    );
    assert_eq!(
        fs::read_to_string(dir.path().join("src/b.rs")).expect("read"),
        "new\n"
    );
}

#[test]
fn an_apply_finished_by_recovery_is_undoable_too() {
    let (dir, ws) = fixture();
    let before = tree(dir.path());
    // Find the commit step on a probe, then crash just after it.
    let (_probe_dir, probe_ws) = fixture();
    let probe = FaultPlan::none();
    mixed(&probe_ws).apply_with_faults(&probe).expect("clean");
    let commit = probe
        .steps()
        .iter()
        .position(|s| s.contains(": commit `"))
        .expect("commit step")
        + 1;
    let cs = mixed(&ws);
    let result = cs.apply_with_faults(&FaultPlan::crash_at(commit + 1));
    assert!(matches!(result, Err(ApplyError::SimulatedCrash { .. })));
    let report = recover(dir.path()).expect("recover");
    assert_eq!(report.outcome, Recovered::RolledForward { files: 4 });
    // Recovery kept the record with the change set's digest: it is recognised as applied.
    assert!(cs.already_applied());

    let undo = Undo::last(&ws)
        .expect("undo")
        .expect("recovery kept the record");
    undo.apply().expect("undo");
    assert_eq!(tree(dir.path()), before);
}

// ---------------------------------------------------------------------------------------
// The `undo` tool, through a session as `xcsh serve` builds it.

mod common;

#[tokio::test]
async fn the_undo_tool_previews_then_resolve_apply_reverts_byte_for_byte() {
    let (dir, _) = fixture();
    let before = tree(dir.path());
    let session = common::session(dir.path());
    let apply = serde_json::json!({"action": "apply", "reason": "test"});

    let nothing = session.call("undo", serde_json::json!({})).await;
    assert!(!nothing.is_error());
    assert_eq!(
        nothing.text_content(),
        "Nothing to undo: no applied change is kept in this workspace (the last 10 applied changes are kept; an undo removes the one it reverts)."
    );
    assert!(session.pending().is_empty());

    let edit = serde_json::json!({"ops": [{"pat": "$X.unwrap()", "out": "$X?"}], "lang": "rust"});
    session.call("ast_edit", edit).await;
    let applied = session.call("resolve", apply.clone()).await;
    assert_eq!(applied.text_content(), "Applied 1 replacement in 1 file.");
    let edited = tree(dir.path());

    let preview = session.call("undo", serde_json::json!({})).await;
    let text = preview.text_content();
    assert!(!preview.is_error(), "{text}");
    assert!(
        text.starts_with("Undo preview: revert apply #1 (1 file, "),
        "{text}"
    );
    assert!(
        text.contains("-fn a() { x? }\n+fn a() { x.unwrap() }\n"),
        "{text}"
    );
    assert!(text.ends_with("Nothing is written yet. Call `resolve` with action \"apply\" to revert this change, or \"discard\" to keep it."), "{text}");
    assert_eq!(tree(dir.path()), edited, "a preview writes nothing");
    assert!(
        session
            .pending()
            .peek()
            .expect("pending")
            .label
            .starts_with("Undo: revert apply #1 (1 file, ")
    );

    let reverted = session.call("resolve", apply).await;
    assert!(
        reverted
            .text_content()
            .starts_with("Reverted apply #1: 1 file modified"),
        "{}",
        reverted.text_content()
    );
    assert_eq!(tree(dir.path()), before);
}

#[tokio::test]
async fn the_undo_tool_names_a_changed_file_with_a_stale_kind() {
    let (dir, _) = fixture();
    let session = common::session(dir.path());
    let edit = serde_json::json!({"ops": [{"pat": "$X.unwrap()", "out": "$X?"}], "lang": "rust"});
    session.call("ast_edit", edit).await;
    session
        .call(
            "resolve",
            serde_json::json!({"action": "apply", "reason": "t"}),
        )
        .await;
    fs::write(dir.path().join("src/a.rs"), "// mine now\n").expect("write");

    let refused = session.call("undo", serde_json::json!({})).await;
    assert!(refused.is_error());
    assert!(
        refused.text_content().starts_with(
            "cannot undo apply #1: a file changed since it was applied: `src/a.rs` (modified)"
        ),
        "{}",
        refused.text_content()
    );
    assert!(matches!(
        refused.error_kind(),
        Some(xcsh_core::ErrorKind::Stale { files }) if files == &["src/a.rs"]
    ));
    assert!(session.pending().is_empty());
    assert_eq!(
        fs::read_to_string(dir.path().join("src/a.rs")).expect("read"),
        "// mine now\n"
    );
}

#[test]
fn ids_are_never_reused_and_an_undo_is_applied_whole() {
    let (dir, ws) = fixture();
    let mut cs = ChangeSet::new(ws.clone());
    cs.modify("src/b.rs", "one\n").expect("stage");
    assert_eq!(cs.apply().expect("apply").undo, Some(1));
    let undo = Undo::last(&ws).expect("undo").expect("record");
    // A revert cannot be narrowed: part of it would leave the rest without its record.
    let mut narrowed = undo.change_set().clone();
    let err = narrowed.retain_files(&["src/b.rs".to_owned()]).unwrap_err();
    assert!(err.contains("an undo reverts a whole apply"), "{err}");
    undo.apply().expect("undo");
    // The next apply gets a new id, not the one the undo removed.
    let mut cs = ChangeSet::new(ws.clone());
    cs.modify("src/b.rs", "two\n").expect("stage");
    assert_eq!(cs.apply().expect("apply").undo, Some(2));
    assert_eq!(
        fs::read_to_string(dir.path().join("src/b.rs")).expect("read"),
        "two\n"
    );
}
