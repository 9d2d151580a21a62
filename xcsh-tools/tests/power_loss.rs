//! A simulated power loss at every step of an apply: `FaultPlan::power_loss_at(k)` stops the
//! apply before step `k`, `lose_unsynced` reverts on disk whatever was not yet fsynced (the
//! worst case of the POSIX model, see docs/RELIABILITY.md), then `recover` must leave every
//! file old or every file new, and nothing behind: no temporary file, backup, staging
//! directory, journal or lock.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use xcsh_tools::changeset::{ApplyError, ChangeSet, FaultPlan, Recovered, recover};
use xcsh_tools::workspace::Workspace;

/// Every path under `root` (a `find`-style listing) with the bytes of its files (directories
/// as `None`), but the undo records a finished apply keeps: xcsh's own kept state, covered by
/// tests/undo.rs. The journal and lock in `.xcsh` still show.
type Tree = BTreeMap<PathBuf, Option<Vec<u8>>>;

fn tree(root: &Path) -> Tree {
    fn walk(root: &Path, dir: &Path, out: &mut Tree) {
        for entry in fs::read_dir(dir).expect("read_dir") {
            let path = entry.expect("entry").path();
            let rel = path.strip_prefix(root).expect("under root").to_path_buf();
            if rel.starts_with(".xcsh/undo") || rel == Path::new(".xcsh/.gitignore") {
                continue;
            }
            let meta = fs::symlink_metadata(&path).expect("lstat");
            if rel == Path::new(".xcsh") {
                walk(root, &path, out);
            } else if meta.is_dir() {
                out.insert(rel, None);
                walk(root, &path, out);
            } else {
                out.insert(rel, Some(fs::read(&path).expect("read")));
            }
        }
    }
    let mut out = Tree::new();
    walk(root, root, &mut out);
    out
}

fn write(root: &Path, rel: &str, bytes: &str) {
    let path = root.join(rel);
    fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    fs::write(path, bytes).expect("write");
}

/// A scenario: files before, the change set, and the tree expected after it.
struct Scenario {
    name: &'static str,
    before: &'static [(&'static str, &'static str)],
    build: fn(&mut ChangeSet),
    after: &'static [(&'static str, &'static str)],
}

/// Nothing changes directly in the root, so the protocol never fsyncs the root for its own
/// files: whatever of `.xcsh` must survive a power loss has to be made durable on purpose.
const NESTED: Scenario = Scenario {
    name: "nested",
    before: &[
        ("src/a.rs", "fn a() {}\n"),
        ("src/b.rs", "fn b() {}\n"),
        ("lib/c.rs", "fn c() {}\n"),
        ("docs/old.md", "to be deleted\n"),
        ("docs/keep.md", "kept\n"),
        ("untouched.txt", "leave me\n"),
    ],
    build: |cs| {
        cs.modify("src/a.rs", "fn a() -> u8 { 1 }\n").expect("a");
        cs.modify("src/b.rs", "fn b() -> u8 { 2 }\n").expect("b");
        cs.modify("lib/c.rs", "fn c() -> u8 { 3 }\n").expect("c");
        cs.create("src/new.rs", "fn new() {}\n").expect("new");
        cs.create("lib/gen/deep/x.rs", "fn x() {}\n").expect("x");
        cs.delete("docs/old.md").expect("delete");
    },
    after: &[
        ("src/a.rs", "fn a() -> u8 { 1 }\n"),
        ("src/b.rs", "fn b() -> u8 { 2 }\n"),
        ("lib/c.rs", "fn c() -> u8 { 3 }\n"),
        ("src/new.rs", "fn new() {}\n"),
        ("lib/gen/deep/x.rs", "fn x() {}\n"),
        ("docs/keep.md", "kept\n"),
        ("untouched.txt", "leave me\n"),
    ],
};

/// Files in the root, a new top directory, and renames across directories (into a new one
/// too): each rename changes two directories, fsynced one after the other.
const ACROSS: Scenario = Scenario {
    name: "across",
    before: &[
        ("a.txt", "alpha old\n"),
        ("src/b.rs", "fn b() {}\n"),
        ("src/c.rs", "fn c() {}\n"),
        ("old.txt", "to be deleted\n"),
        ("src/e.rs", "moved into a new dir\n"),
        ("f.txt", "moved across\n"),
        ("untouched.txt", "leave me\n"),
    ],
    build: |cs| {
        cs.modify("a.txt", "alpha NEW\n").expect("a");
        cs.modify("src/b.rs", "fn b() -> u8 { 2 }\n").expect("b");
        cs.modify("src/c.rs", "fn c() -> u8 { 3 }\n").expect("c");
        cs.create("new/deep/n.txt", "brand new\n").expect("n");
        cs.create("src/d.txt", "new beside old\n").expect("d");
        cs.delete("old.txt").expect("delete");
        cs.rename("src/e.rs", "moved/inner/e2.rs")
            .expect("rename e");
        cs.rename("f.txt", "src/f.txt").expect("rename f");
    },
    after: &[
        ("a.txt", "alpha NEW\n"),
        ("src/b.rs", "fn b() -> u8 { 2 }\n"),
        ("src/c.rs", "fn c() -> u8 { 3 }\n"),
        ("new/deep/n.txt", "brand new\n"),
        ("src/d.txt", "new beside old\n"),
        ("moved/inner/e2.rs", "moved into a new dir\n"),
        ("src/f.txt", "moved across\n"),
        ("untouched.txt", "leave me\n"),
    ],
};

impl Scenario {
    /// A fresh root holding the files before, its change set, and the listings expected
    /// before and after (built by hand, independent of the apply).
    fn setup(&self) -> (tempfile::TempDir, ChangeSet, Tree, Tree) {
        let dir = tempfile::tempdir().expect("tempdir");
        for (p, c) in self.before {
            write(dir.path(), p, c);
        }
        let before = tree(dir.path());
        let expected = {
            let scratch = tempfile::tempdir().expect("tempdir");
            for (p, c) in self.after {
                write(scratch.path(), p, c);
            }
            tree(scratch.path())
        };
        let mut cs = ChangeSet::new(Workspace::new(dir.path()).expect("workspace"));
        (self.build)(&mut cs);
        (dir, cs, before, expected)
    }

    /// Power loss before every step `k` of the apply, and once just after it returned; with
    /// `copies`, backups are copied instead of hard-linked (filesystems without hard links);
    /// with `syncfs` off, every file and directory is fsynced on its own (filesystems where one
    /// `syncfs` would not be as durable).
    fn sweep(&self, copies: bool, syncfs: bool) -> usize {
        let plan_for = |plan: FaultPlan| {
            let plan = if copies {
                plan.without_hard_links()
            } else {
                plan
            };
            if syncfs { plan } else { plan.without_syncfs() }
        };
        let clean = plan_for(FaultPlan::none());
        {
            let (dir, cs, _, expected) = self.setup();
            cs.apply_with_faults(&clean).expect("clean apply");
            assert_eq!(tree(dir.path()), expected, "{}: clean apply", self.name);
        }
        let total = clean.steps_taken();
        let log = clean.steps();
        let commit = 1 + log
            .iter()
            .position(|s| s.contains(": commit `"))
            .expect("commit step");
        for k in 1..=total + 1 {
            let at = log
                .get(k - 1)
                .map_or("after the apply returned", String::as_str);
            let what = format!("{}: power loss before step {at}", self.name);
            let (dir, cs, before, expected) = self.setup();
            let plan = plan_for(FaultPlan::power_loss_at(k));
            let result = cs.apply_with_faults(&plan);
            if k <= total {
                assert!(
                    matches!(result, Err(ApplyError::SimulatedCrash { step }) if step == k),
                    "{what}: {result:?}"
                );
            } else {
                result.unwrap_or_else(|e| panic!("{what}: {e}"));
            }
            plan.lose_unsynced()
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            let report = recover(dir.path()).unwrap_or_else(|e| panic!("{what}: {e}"));
            let got = tree(dir.path());
            // The commit record (renamed into place and `.xcsh` fsynced in step `commit`) is
            // the point of no return, power loss or not.
            if k <= commit {
                assert_eq!(got, before, "{what}: not the old tree after {report}");
            } else {
                assert_eq!(got, expected, "{what}: not the new tree after {report}");
            }
            let again = recover(dir.path()).expect("second recovery");
            assert_eq!(again.outcome, Recovered::NothingToDo, "{what}");
            assert_eq!(tree(dir.path()), got, "{what}");
        }
        total + 1
    }
}

#[test]
fn a_power_loss_at_any_step_recovers_to_all_old_or_all_new() {
    let nested = NESTED.sweep(false, true);
    let across = ACROSS.sweep(false, true);
    eprintln!("power loss points: nested {nested}, across {across}");
    assert!(nested > 20 && across > 30, "{nested} and {across} points");
    // Copied backups must be as durable as linked ones: a rollback may restore from them.
    let copied = NESTED.sweep(true, true) + ACROSS.sweep(true, true);
    eprintln!("with copied backups: {copied}");
}

/// Where one `syncfs` per filesystem is not as durable as fsyncs, each file and directory is
/// fsynced on its own: that order must hold up as well.
#[test]
fn a_power_loss_at_any_step_recovers_with_a_fsync_per_file_and_directory() {
    let nested = NESTED.sweep(false, false);
    let across = ACROSS.sweep(false, false);
    eprintln!("power loss points: nested {nested}, across {across}");
    assert!(nested > 30 && across > 40, "{nested} and {across} points");
    let copied = NESTED.sweep(true, false) + ACROSS.sweep(true, false);
    eprintln!("with copied backups: {copied}");
}

/// The model itself: unsynced creations vanish, a synced file with an unsynced entry too,
/// synced data in a synced directory stays.
#[test]
fn the_model_loses_what_was_not_synced() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "src/a.rs", "fn a() {}\n");
    let mut cs = ChangeSet::new(Workspace::new(dir.path()).expect("workspace"));
    cs.modify("src/a.rs", "fn a() -> u8 { 1 }\n").expect("a");
    let clean = FaultPlan::none();
    {
        let probe = tempfile::tempdir().expect("tempdir");
        write(probe.path(), "src/a.rs", "fn a() {}\n");
        let mut cs = ChangeSet::new(Workspace::new(probe.path()).expect("workspace"));
        cs.modify("src/a.rs", "fn a() -> u8 { 1 }\n").expect("a");
        cs.apply_with_faults(&clean).expect("apply");
    }
    let log = clean.steps();
    let step = |needle: &str| 1 + log.iter().position(|s| s.contains(needle)).expect(needle);
    // Stopped just after the temporary file was written, before it was flushed (by the
    // `syncfs` of its filesystem, or by its own fsync): a crash leaves it full, a power loss
    // takes it away (its directory was never fsynced).
    let flush = step(": flush to disk the new content");
    let plan = FaultPlan::power_loss_at(flush);
    assert!(cs.apply_with_faults(&plan).is_err());
    let temps = |root: &Path| {
        tree(root)
            .into_keys()
            .filter(|p| p.to_string_lossy().contains(".xcsh-tmp."))
            .count()
    };
    assert_eq!(temps(dir.path()), 1);
    let reverted = plan.lose_unsynced().expect("model");
    assert!(reverted >= 2, "{reverted}");
    assert_eq!(temps(dir.path()), 0);
    // The prepared journal was fsynced, with its directory: it survives.
    assert!(dir.path().join(".xcsh/apply.journal").is_file());
    let report = recover(dir.path()).expect("recover");
    assert_eq!(report.outcome, Recovered::RolledBack { files: 1 });
    assert_eq!(
        fs::read_to_string(dir.path().join("src/a.rs")).expect("read"),
        "fn a() {}\n"
    );
}
