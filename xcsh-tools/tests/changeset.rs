//! ChangeSet: validation at build time, stale detection, atomic apply, rollback after a
//! failure at every step, and the state a crash at every step leaves behind.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use xcsh_tools::changeset::{
    ApplyError, ChangeSet, ChangeSetError, FaultPlan, Fingerprint, Recovered, Splice, StaleReason,
    recover,
};
use xcsh_tools::workspace::{PathError, Workspace, is_temp_artifact};

// ---------------------------------------------------------------------------------------
// Helpers

/// One entry of a directory tree, compared byte for byte.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Node {
    File { bytes: Vec<u8>, mode: u32 },
    Dir { mode: u32 },
    Link(PathBuf),
}

type Tree = BTreeMap<PathBuf, Node>;

#[cfg(unix)]
fn mode_of(meta: &fs::Metadata) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o7777
}

#[cfg(not(unix))]
fn mode_of(meta: &fs::Metadata) -> u32 {
    u32::from(meta.permissions().readonly())
}

/// The undo records a successful apply keeps (and the `.gitignore` keeping `.xcsh` out of
/// version control): xcsh's kept state, not part of the tree an apply changes. The journal
/// and lock stay in view. tests/undo.rs covers the records.
fn kept_state(rel: &Path) -> bool {
    rel.starts_with(".xcsh/undo") || rel == Path::new(".xcsh/.gitignore")
}

/// Everything under `root` (links not followed), by root-relative path, but [`kept_state`].
fn snapshot(root: &Path) -> Tree {
    fn walk(root: &Path, dir: &Path, out: &mut Tree) {
        let mut entries: Vec<_> = fs::read_dir(dir)
            .expect("read_dir")
            .map(|e| e.expect("dir entry").path())
            .collect();
        entries.sort();
        for path in entries {
            let rel = path.strip_prefix(root).expect("under root").to_path_buf();
            if kept_state(&rel) {
                continue;
            }
            let meta = fs::symlink_metadata(&path).expect("lstat");
            if meta.file_type().is_symlink() {
                out.insert(rel, Node::Link(fs::read_link(&path).expect("readlink")));
            } else if rel == Path::new(".xcsh") {
                // Seen only through the journal and lock inside it.
                walk(root, &path, out);
            } else if meta.is_dir() {
                out.insert(
                    rel,
                    Node::Dir {
                        mode: mode_of(&meta),
                    },
                );
                walk(root, &path, out);
            } else {
                let bytes = fs::read(&path).expect("read");
                out.insert(
                    rel,
                    Node::File {
                        bytes,
                        mode: mode_of(&meta),
                    },
                );
            }
        }
    }
    let mut out = Tree::new();
    walk(root, root, &mut out);
    out
}

/// Paths in `tree` that are temp/backup artifacts or lie inside one.
fn artifacts(tree: &Tree) -> Vec<PathBuf> {
    tree.keys()
        .filter(|p| p.iter().any(is_temp_artifact))
        .cloned()
        .collect()
}

fn without_artifacts(tree: &Tree) -> Tree {
    tree.iter()
        .filter(|(p, _)| !p.iter().any(is_temp_artifact))
        .map(|(p, n)| (p.clone(), n.clone()))
        .collect()
}

fn file_bytes(tree: &Tree, path: &str) -> Option<Vec<u8>> {
    match tree.get(Path::new(path)) {
        Some(Node::File { bytes, .. }) => Some(bytes.clone()),
        _ => None,
    }
}

#[cfg(unix)]
fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).expect("chmod");
}

fn write(root: &Path, rel: &str, bytes: &[u8]) {
    let path = root.join(rel);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).expect("mkdir");
    }
    fs::write(path, bytes).expect("write");
}

fn ws(dir: &tempfile::TempDir) -> Workspace {
    Workspace::new(dir.path()).expect("workspace")
}

/// The mixed scenario used for the fault and crash sweeps: every kind of operation (a
/// modification given as edits spliced in at apply time too), new directories, a file reached
/// through a symbolic link, and unusual permissions.
struct Mixed {
    dir: tempfile::TempDir,
    before: Tree,
}

const MIXED_OLD_A: &[u8] = b"alpha\nold\n";
const MIXED_NEW_A: &[u8] = b"alpha\nNEW\n";
const MIXED_OLD_B: &[u8] = b"fn b() {}\n";
const MIXED_NEW_B: &[u8] = b"fn b() -> u32 { 2 }\n";
const MIXED_OLD_S: &str = "fn s() { \"é\".len(); x.unwrap(); }\n";
const MIXED_NEW_S: &str = "pub fn s() { \"ü\".len(); x?; }\n";
/// Same length as the old content, different bytes: only the hash tells them apart.
const MIXED_EDITED_S: &str = "fn s() { \"é\".len(); y.unwrap(); }\n";
const MIXED_OLD_T: &[u8] = b"target old\n";
const MIXED_NEW_T: &[u8] = b"target new\n";
const MIXED_NEW_C: &[u8] = b"brand new in a new dir\n";
const MIXED_NEW_D: &[u8] = b"new beside old\n";
const MIXED_OLD_GONE: &[u8] = b"to be deleted\n";
const MIXED_E: &[u8] = b"moved into a new dir\n";
const MIXED_F: &[u8] = b"moved across\n";

fn mixed_fixture() -> Mixed {
    let dir = tempfile::tempdir().expect("tempdir");
    let r = dir.path();
    write(r, "a.txt", MIXED_OLD_A);
    write(r, "src/b.rs", MIXED_OLD_B);
    write(r, "src/s.rs", MIXED_OLD_S.as_bytes());
    write(r, "src/target.txt", MIXED_OLD_T);
    write(r, "old.txt", MIXED_OLD_GONE);
    write(r, "src/e.rs", MIXED_E);
    write(r, "f.txt", MIXED_F);
    write(r, "untouched.txt", b"leave me\n");
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("src/target.txt", r.join("link.txt")).expect("symlink");
        chmod(&r.join("a.txt"), 0o640);
        chmod(&r.join("src/b.rs"), 0o755);
        chmod(&r.join("src/s.rs"), 0o600);
    }
    #[cfg(not(unix))]
    write(r, "link.txt", MIXED_OLD_T);
    let before = snapshot(r);
    Mixed { dir, before }
}

fn mixed_changeset(m: &Mixed) -> ChangeSet {
    let mut cs = ChangeSet::new(ws(&m.dir));
    cs.modify("a.txt", MIXED_NEW_A).expect("modify a");
    cs.modify_expecting("src/b.rs", Fingerprint::of(MIXED_OLD_B), MIXED_NEW_B)
        .expect("modify b");
    cs.modify_splicing("src/s.rs", Fingerprint::of(MIXED_OLD_S), mixed_splices())
        .expect("splice s");
    cs.modify("link.txt", MIXED_NEW_T)
        .expect("modify through link");
    cs.create("new/deep/c.txt", MIXED_NEW_C).expect("create c");
    cs.create("src/d.txt", MIXED_NEW_D).expect("create d");
    cs.delete("old.txt").expect("delete");
    cs.rename("src/e.rs", "moved/inner/e2.rs")
        .expect("rename e");
    cs.rename("f.txt", "src/f.txt").expect("rename f");
    cs
}

/// The edits that turn [`MIXED_OLD_S`] into [`MIXED_NEW_S`]: an insertion, a replacement of
/// a two-byte character, and one of a longer run.
fn mixed_splices() -> Vec<Splice> {
    let at = |needle: &str| MIXED_OLD_S.find(needle).expect("in MIXED_OLD_S");
    let e = at("é");
    let x = at("x.unwrap()");
    vec![
        Splice::new(0..0, "pub "),
        Splice::new(e..e + "é".len(), "ü"),
        Splice::new(x..x + "x.unwrap()".len(), "x?"),
    ]
}

/// The tree after a successful apply of [`mixed_changeset`], written out by hand so the
/// sweep compares against an independent expectation.
fn mixed_expected(m: &Mixed) -> Tree {
    let mut t = m.before.clone();
    let set = |t: &mut Tree, p: &str, bytes: &[u8]| {
        let mode = match t.get(Path::new(p)) {
            Some(Node::File { mode, .. }) => *mode,
            _ => panic!("{p} not a file"),
        };
        t.insert(
            p.into(),
            Node::File {
                bytes: bytes.to_vec(),
                mode,
            },
        );
    };
    set(&mut t, "a.txt", MIXED_NEW_A);
    set(&mut t, "src/b.rs", MIXED_NEW_B);
    set(&mut t, "src/s.rs", MIXED_NEW_S.as_bytes());
    set(&mut t, "src/target.txt", MIXED_NEW_T);
    t.remove(Path::new("old.txt"));
    let e = t.remove(Path::new("src/e.rs")).expect("e");
    let f = t.remove(Path::new("f.txt")).expect("f");
    t.insert("moved/inner/e2.rs".into(), e);
    t.insert("src/f.txt".into(), f);
    t
}

/// Checks the new files and directories of a successful mixed apply, whose modes depend on
/// the umask and are therefore not in [`mixed_expected`].
fn strip_new_entries(tree: &Tree) -> Tree {
    let mut t = tree.clone();
    assert_eq!(
        file_bytes(&t, "new/deep/c.txt").as_deref(),
        Some(MIXED_NEW_C)
    );
    assert_eq!(file_bytes(&t, "src/d.txt").as_deref(), Some(MIXED_NEW_D));
    for p in [
        "new/deep/c.txt",
        "src/d.txt",
        "new",
        "new/deep",
        "moved",
        "moved/inner",
    ] {
        assert!(t.remove(Path::new(p)).is_some(), "{p} missing after apply");
    }
    t
}

// ---------------------------------------------------------------------------------------
// Successful applies

#[test]
fn successful_apply_writes_exactly_the_new_bytes_and_cleans_up() {
    let m = mixed_fixture();
    let cs = mixed_changeset(&m);
    let report = cs.apply().expect("apply");
    assert_eq!(
        (
            report.modified,
            report.created,
            report.deleted,
            report.renamed
        ),
        (4, 2, 1, 2)
    );
    let written = MIXED_NEW_A.len() + MIXED_NEW_B.len() + MIXED_NEW_S.len() + MIXED_NEW_T.len();
    let written = written + MIXED_NEW_C.len() + MIXED_NEW_D.len();
    assert_eq!(report.bytes_written, written as u64);
    assert!(report.leftovers.is_empty(), "{:?}", report.leftovers);

    let after = snapshot(m.dir.path());
    assert!(
        artifacts(&after).is_empty(),
        "leftovers: {:?}",
        artifacts(&after)
    );
    assert_eq!(strip_new_entries(&after), mixed_expected(&m));
    // The link is still a link, to the same target.
    #[cfg(unix)]
    assert_eq!(
        after.get(Path::new("link.txt")),
        Some(&Node::Link(PathBuf::from("src/target.txt")))
    );
}

#[test]
fn applying_twice_is_refused_as_stale() {
    let m = mixed_fixture();
    let cs = mixed_changeset(&m);
    cs.apply().expect("first apply");
    let after = snapshot(m.dir.path());
    let err = cs.apply().expect_err("second apply must be refused");
    assert!(matches!(err, ApplyError::Stale { .. }), "{err}");
    assert_eq!(
        snapshot(m.dir.path()),
        after,
        "second apply wrote something"
    );
}

#[test]
fn empty_changeset_applies_to_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let report = ChangeSet::new(ws(&dir)).apply().expect("apply");
    assert_eq!(report.to_string(), "nothing to do, 0 bytes written");
}

#[cfg(unix)]
#[test]
fn permissions_are_kept() {
    let dir = tempfile::tempdir().expect("tempdir");
    let r = dir.path();
    for (name, mode) in [("exec.sh", 0o755), ("private", 0o600), ("ro.txt", 0o444)] {
        write(r, name, b"old");
        chmod(&r.join(name), mode);
    }
    let mut cs = ChangeSet::new(ws(&dir));
    for name in ["exec.sh", "private", "ro.txt"] {
        cs.modify(name, "new").expect("modify");
    }
    cs.apply().expect("apply");
    let after = snapshot(r);
    for (name, mode) in [("exec.sh", 0o755), ("private", 0o600), ("ro.txt", 0o444)] {
        assert_eq!(
            after.get(Path::new(name)),
            Some(&Node::File {
                bytes: b"new".to_vec(),
                mode
            }),
            "{name}"
        );
    }
}

#[cfg(unix)]
#[test]
fn permissions_are_kept_when_backups_are_copies() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "exec.sh", b"old");
    chmod(&dir.path().join("exec.sh"), 0o751);
    let mut cs = ChangeSet::new(ws(&dir));
    cs.modify("exec.sh", "new").expect("modify");
    cs.apply_with_faults(&FaultPlan::none().without_hard_links())
        .expect("apply");
    assert_eq!(
        snapshot(dir.path()).get(Path::new("exec.sh")),
        Some(&Node::File {
            bytes: b"new".to_vec(),
            mode: 0o751
        })
    );
}

#[test]
fn changeset_is_cheap_to_clone_and_can_cross_threads() {
    fn assert_send_sync<T: Send + Sync + 'static>() {}
    assert_send_sync::<ChangeSet>();
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "a.txt", b"a");
    let mut cs = ChangeSet::new(ws(&dir));
    cs.modify("a.txt", vec![b'x'; 1 << 20]).expect("modify");
    let clone = cs.clone();
    std::thread::spawn(move || clone.apply())
        .join()
        .expect("thread")
        .expect("apply");
    assert_eq!(
        fs::read(dir.path().join("a.txt")).expect("read").len(),
        1 << 20
    );
}

#[test]
fn a_thousand_files_apply_with_only_fingerprints_kept() {
    let dir = tempfile::tempdir().expect("tempdir");
    let n = 1200;
    for i in 0..n {
        write(
            dir.path(),
            &format!("d{}/f{i}.rs", i % 10),
            format!("old {i}\n").as_bytes(),
        );
    }
    let mut cs = ChangeSet::new(ws(&dir));
    for i in 0..n {
        let old = format!("old {i}\n");
        cs.modify_expecting(
            format!("d{}/f{i}.rs", i % 10),
            Fingerprint::of(&old),
            format!("new {i}\n"),
        )
        .expect("modify");
    }
    assert_eq!(cs.len(), n);
    let report = cs.apply().expect("apply");
    assert_eq!(report.modified, n);
    let after = snapshot(dir.path());
    assert!(artifacts(&after).is_empty());
    for i in [0, 1, n / 2, n - 1] {
        let p = format!("d{}/f{i}.rs", i % 10);
        assert_eq!(
            file_bytes(&after, &p),
            Some(format!("new {i}\n").into_bytes())
        );
    }
}

// ---------------------------------------------------------------------------------------
// Validation at build time

#[test]
fn paths_leaving_the_root_are_refused() {
    let outer = tempfile::tempdir().expect("tempdir");
    let root = outer.path().join("root");
    fs::create_dir(&root).expect("mkdir");
    write(outer.path(), "secret.txt", b"secret");
    let mut cs = ChangeSet::new(Workspace::new(&root).expect("workspace"));
    let outside_abs = outer.path().join("secret.txt");
    let attempts: Vec<(&str, Result<(), ChangeSetError>)> = vec![
        ("modify ..", cs.modify("../secret.txt", "x").map(|_| ())),
        ("create ..", cs.create("../new.txt", "x").map(|_| ())),
        ("delete ..", cs.delete("../secret.txt").map(|_| ())),
        (
            "rename to ..",
            cs.rename("../secret.txt", "in.txt").map(|_| ()),
        ),
        ("modify abs", cs.modify(&outside_abs, "x").map(|_| ())),
        (
            "create abs",
            cs.create("/tmp/xcsh-should-not-exist", "x").map(|_| ()),
        ),
    ];
    for (what, result) in attempts {
        match result {
            Err(ChangeSetError::Path(PathError::OutsideRoot { .. })) => {}
            other => panic!("{what}: expected OutsideRoot, got {other:?}"),
        }
    }
    assert!(cs.is_empty());
    assert_eq!(fs::read(&outside_abs).expect("read"), b"secret");
}

#[test]
fn duplicate_operations_on_one_file_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let r = dir.path();
    write(r, "a.txt", b"a");
    write(r, "b.txt", b"b");
    let mut cs = ChangeSet::new(ws(&dir));
    cs.modify("a.txt", "1").expect("first modify");

    let err = cs.modify("a.txt", "2").unwrap_err();
    assert!(matches!(err, ChangeSetError::Duplicate { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        "`a.txt` would be changed twice in one change set: by modify `a.txt` and by modify \
         `a.txt`; combine them into one operation (for example write the final content once)"
    );
    // Spelled differently, still the same file.
    assert!(matches!(
        cs.delete("./sub/../a.txt"),
        Err(ChangeSetError::Duplicate { .. })
    ));
    assert!(matches!(
        cs.rename("a.txt", "c.txt"),
        Err(ChangeSetError::Duplicate { .. })
    ));
    cs.rename("b.txt", "c.txt").expect("rename");
    let err = cs.create("c.txt", "x").unwrap_err();
    assert!(
        err.to_string()
            .contains("by rename `b.txt` to `c.txt` and by create `c.txt`"),
        "{err}"
    );
    // A file and a directory at the same path.
    cs.create("n", "file").expect("create n");
    let err = cs.create("n/inner.txt", "x").unwrap_err();
    assert!(
        matches!(err, ChangeSetError::FileAndDirectory { .. }),
        "{err:?}"
    );
    cs.create("m/inner.txt", "x").expect("create m/inner.txt");
    let err = cs.create("m", "x").unwrap_err();
    assert!(
        matches!(err, ChangeSetError::FileAndDirectory { .. }),
        "{err:?}"
    );
    assert_eq!(cs.len(), 4);
}

#[test]
fn build_time_errors_say_what_to_do() {
    let dir = tempfile::tempdir().expect("tempdir");
    let r = dir.path();
    write(r, "a.txt", b"a");
    fs::create_dir(r.join("dir")).expect("mkdir");
    let mut cs = ChangeSet::new(ws(&dir));

    let err = cs.modify("missing.txt", "x").unwrap_err().to_string();
    assert_eq!(
        err,
        "cannot modify `missing.txt`: it does not exist under the workspace root; use create for a new file"
    );
    let err = cs.modify("dir", "x").unwrap_err().to_string();
    assert_eq!(
        err,
        "cannot modify `dir`: it is a directory, and a change set only edits regular files"
    );
    let err = cs.create("a.txt", "x").unwrap_err().to_string();
    assert_eq!(
        err,
        "cannot create `a.txt`: a file already exists there; use modify to change it"
    );
    let err = cs.rename("a.txt", "dir").unwrap_err().to_string();
    assert!(
        err.starts_with("cannot rename to `dir`: a directory already exists there"),
        "{err}"
    );
    assert!(cs.delete("missing.txt").is_err());
    assert!(cs.delete("dir").is_err());
    assert!(cs.rename("a.txt", "a.txt").is_err());
    let err = cs.create("a.txt/child", "x").unwrap_err().to_string();
    assert_eq!(
        err,
        "path `a.txt/child` goes through `a.txt`, which is not a directory; check the path"
    );
    assert!(cs.is_empty());
}

#[cfg(unix)]
mod symlinks {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_link_inside_is_edited_at_its_target() {
        let dir = tempfile::tempdir().expect("tempdir");
        let r = dir.path();
        write(r, "real/file.txt", b"old");
        symlink("real/file.txt", r.join("link.txt")).expect("symlink");
        symlink(r.join("real"), r.join("dirlink")).expect("symlink");
        let mut cs = ChangeSet::new(ws(&dir));
        cs.modify("link.txt", "via link").expect("modify");
        // The same file through a directory link is the same file.
        assert!(matches!(
            cs.modify("dirlink/file.txt", "x"),
            Err(ChangeSetError::Duplicate { .. })
        ));
        cs.apply().expect("apply");
        assert_eq!(
            fs::read_link(r.join("link.txt")).expect("still a link"),
            PathBuf::from("real/file.txt")
        );
        assert_eq!(
            fs::read(r.join("real/file.txt")).expect("read"),
            b"via link"
        );
        assert!(artifacts(&snapshot(r)).is_empty());
    }

    #[test]
    fn a_link_leading_out_is_refused() {
        let outer = tempfile::tempdir().expect("tempdir");
        let root = outer.path().join("root");
        fs::create_dir(&root).expect("mkdir");
        write(outer.path(), "secret.txt", b"secret");
        symlink(outer.path().join("secret.txt"), root.join("out.txt")).expect("symlink");
        symlink(outer.path(), root.join("outdir")).expect("symlink");
        let mut cs = ChangeSet::new(Workspace::new(&root).expect("workspace"));
        for (what, r) in [
            ("modify", cs.modify("out.txt", "x").map(|_| ())),
            (
                "modify via dir",
                cs.modify("outdir/secret.txt", "x").map(|_| ()),
            ),
            (
                "create via dir",
                cs.create("outdir/new.txt", "x").map(|_| ()),
            ),
            ("delete", cs.delete("out.txt").map(|_| ())),
            ("rename", cs.rename("out.txt", "in.txt").map(|_| ())),
        ] {
            let err = r.expect_err(what);
            assert!(
                err.to_string().contains("leaves the workspace root"),
                "{what}: {err}"
            );
        }
        assert_eq!(
            fs::read(outer.path().join("secret.txt")).expect("read"),
            b"secret"
        );
        assert!(!outer.path().join("new.txt").exists());
    }

    #[test]
    fn a_file_swapped_for_a_link_out_after_recording_is_not_shown_in_the_diff() {
        let outer = tempfile::tempdir().expect("tempdir");
        let root = outer.path().join("root");
        fs::create_dir(&root).expect("mkdir");
        write(outer.path(), "secret.txt", b"secret\n");
        write(&root, "a.txt", b"old\n");
        let mut cs = ChangeSet::new(Workspace::new(&root).expect("workspace"));
        cs.modify("a.txt", "new\n").expect("modify");
        cs.delete("a.txt").expect_err("one operation per file");
        fs::remove_file(root.join("a.txt")).expect("rm");
        symlink(outer.path().join("secret.txt"), root.join("a.txt")).expect("symlink");

        let diff = cs.diff();
        assert!(!diff.contains("secret"), "{diff}");
        assert!(diff.contains("# note: cannot read `a.txt`"), "{diff}");
        assert!(cs.apply().is_err());
        assert_eq!(
            fs::read(outer.path().join("secret.txt")).expect("read"),
            b"secret\n"
        );
    }

    #[test]
    fn deleting_or_renaming_a_link_is_refused_with_a_hint() {
        let dir = tempfile::tempdir().expect("tempdir");
        write(dir.path(), "t.txt", b"t");
        symlink("t.txt", dir.path().join("l.txt")).expect("symlink");
        let mut cs = ChangeSet::new(ws(&dir));
        let err = cs.delete("l.txt").unwrap_err().to_string();
        assert!(err.contains("is a symbolic link (to `t.txt`)"), "{err}");
        assert!(err.contains("name the file itself (`t.txt`)"), "{err}");
        assert!(matches!(
            cs.rename("l.txt", "m.txt"),
            Err(ChangeSetError::Symlink { .. })
        ));
        // Creating over a dangling link is refused too: something is there.
        symlink("nowhere", dir.path().join("dangling")).expect("symlink");
        let err = cs.create("dangling", "x").unwrap_err().to_string();
        assert!(
            err.contains("a symbolic link already exists there"),
            "{err}"
        );
    }

    #[test]
    fn symlink_loops_are_refused_without_hanging() {
        let dir = tempfile::tempdir().expect("tempdir");
        symlink("b", dir.path().join("a")).expect("symlink");
        symlink("a", dir.path().join("b")).expect("symlink");
        let mut cs = ChangeSet::new(ws(&dir));
        for r in [
            cs.modify("a", "x").map(|_| ()),
            cs.create("a/new.txt", "x").map(|_| ()),
            cs.delete("b").map(|_| ()),
        ] {
            match r {
                Err(ChangeSetError::Path(PathError::SymlinkLoop { .. })) => {}
                other => panic!("expected a loop error, got {other:?}"),
            }
        }
    }
}

#[cfg(target_os = "linux")]
#[test]
fn non_utf8_file_names_work_without_panicking() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let r = dir.path();
    let latin1 = Path::new(OsStr::from_bytes(b"caf\xe9.txt"));
    let gone = Path::new(OsStr::from_bytes(b"\xff-gone"));
    let from = Path::new(OsStr::from_bytes(b"from-\xfe"));
    let to = Path::new(OsStr::from_bytes(b"dir-\xfd/to-\xfc"));
    let created = Path::new(OsStr::from_bytes(b"new-\xfb/\xfa.txt"));
    fs::write(r.join(latin1), "old").expect("write");
    fs::write(r.join(gone), "gone").expect("write");
    fs::write(r.join(from), "moving").expect("write");

    let mut cs = ChangeSet::new(ws(&dir));
    cs.modify(latin1, "new").expect("modify");
    cs.delete(gone).expect("delete");
    cs.rename(from, to).expect("rename");
    cs.create(created, "created").expect("create");
    let diff = cs.diff();
    assert!(diff.contains("caf\u{fffd}.txt"), "{diff}");
    cs.apply().expect("apply");

    assert_eq!(fs::read(r.join(latin1)).expect("read"), b"new");
    assert!(!r.join(gone).exists());
    assert_eq!(fs::read(r.join(to)).expect("read"), b"moving");
    assert_eq!(fs::read(r.join(created)).expect("read"), b"created");
    assert!(artifacts(&snapshot(r)).is_empty());
}

// ---------------------------------------------------------------------------------------
// Stale files

/// Builds the stale scenario and returns the change set and the paths it names.
fn stale_case(mutate: impl FnOnce(&Path)) -> (tempfile::TempDir, Result<(), ApplyError>, Tree) {
    let dir = tempfile::tempdir().expect("tempdir");
    let r = dir.path();
    write(r, "mod.txt", b"old");
    write(r, "del.txt", b"old");
    write(r, "dirme.txt", b"old");
    write(r, "linkme.txt", b"old");
    write(r, "linkout.txt", b"old");
    write(r, "other.txt", b"other");
    write(r, "fresh.txt", b"fresh");
    write(r, "src.txt", b"src");
    let mut cs = ChangeSet::new(ws(&dir));
    cs.modify("mod.txt", "new").expect("modify");
    cs.modify("del.txt", "new").expect("modify");
    cs.modify("dirme.txt", "new").expect("modify");
    cs.modify("linkme.txt", "new").expect("modify");
    cs.modify("linkout.txt", "new").expect("modify");
    cs.modify("fresh.txt", "new").expect("modify");
    cs.create("created.txt", "new").expect("create");
    cs.rename("src.txt", "target.txt").expect("rename");
    mutate(r);
    let before = snapshot(r);
    let result = cs.apply().map(|_| ());
    (dir, result, before)
}

#[cfg(unix)]
#[test]
fn stale_files_are_all_named_and_nothing_is_written() {
    use std::os::unix::fs::symlink;
    let outside = tempfile::tempdir().expect("tempdir");
    let out_file = outside.path().join("elsewhere.txt");
    fs::write(&out_file, "outside").expect("write");
    let (dir, result, before) = stale_case(|r| {
        fs::write(r.join("mod.txt"), "changed").expect("write");
        fs::remove_file(r.join("del.txt")).expect("rm");
        fs::remove_file(r.join("dirme.txt")).expect("rm");
        fs::create_dir(r.join("dirme.txt")).expect("mkdir");
        fs::remove_file(r.join("linkme.txt")).expect("rm");
        symlink("other.txt", r.join("linkme.txt")).expect("symlink");
        fs::remove_file(r.join("linkout.txt")).expect("rm");
        symlink(&out_file, r.join("linkout.txt")).expect("symlink");
        fs::write(r.join("created.txt"), "someone else").expect("write");
        fs::write(r.join("target.txt"), "someone else").expect("write");
    });
    let files = match result {
        Err(ApplyError::Stale { files }) => files,
        other => panic!("expected stale, got {other:?}"),
    };
    let got: Vec<(String, StaleReason)> = files
        .iter()
        .map(|f| (f.path.clone(), f.reason.clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("mod.txt".into(), StaleReason::Modified),
            ("del.txt".into(), StaleReason::Deleted),
            ("dirme.txt".into(), StaleReason::ReplacedByDirectory),
            ("linkme.txt".into(), StaleReason::BecameSymlink),
            ("linkout.txt".into(), StaleReason::BecameSymlink),
            ("created.txt".into(), StaleReason::CreatedMeanwhile),
            ("target.txt".into(), StaleReason::CreatedMeanwhile),
        ]
    );
    // Nothing written anywhere, not even temporary files; fresh.txt (not stale) untouched.
    assert_eq!(snapshot(dir.path()), before);
    assert_eq!(fs::read(&out_file).expect("read"), b"outside");
}

#[test]
fn stale_error_message_names_files_and_says_to_preview_again() {
    let (_dir, result, _) = stale_case(|r| {
        fs::write(r.join("mod.txt"), "changed").expect("write");
        fs::remove_file(r.join("del.txt")).expect("rm");
    });
    let msg = result.expect_err("stale").to_string();
    assert_eq!(
        msg,
        "nothing was written: 2 file(s) changed since this change set was built: \
         `mod.txt` (modified since it was read); `del.txt` (deleted). \
         Preview the change again from the current files"
    );
}

#[test]
fn same_length_change_is_detected_by_the_hash() {
    let (dir, result, before) = stale_case(|r| fs::write(r.join("mod.txt"), "OLD").expect("write"));
    match result {
        Err(ApplyError::Stale { files }) => {
            assert_eq!(files.len(), 1);
            assert_eq!(files[0].reason, StaleReason::Modified);
        }
        other => panic!("expected stale, got {other:?}"),
    }
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn modify_expecting_with_a_different_fingerprint_is_stale() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "a.txt", b"what is on disk");
    let mut cs = ChangeSet::new(ws(&dir));
    cs.modify_expecting("a.txt", Fingerprint::of("what the preview saw"), "new")
        .expect("modify");
    let err = cs.apply().expect_err("stale");
    assert!(
        err.to_string()
            .contains("`a.txt` (modified since it was read)"),
        "{err}"
    );
    assert_eq!(
        fs::read(dir.path().join("a.txt")).expect("read"),
        b"what is on disk"
    );
}

#[cfg(unix)]
#[test]
fn a_directory_on_the_way_replaced_by_a_link_is_stale() {
    use std::os::unix::fs::symlink;
    let dir = tempfile::tempdir().expect("tempdir");
    let r = dir.path();
    write(r, "sub/a.txt", b"same");
    write(r, "other/a.txt", b"same");
    let mut cs = ChangeSet::new(ws(&dir));
    cs.modify("sub/a.txt", "new").expect("modify");
    fs::rename(r.join("sub"), r.join("sub-moved")).expect("mv");
    symlink("other", r.join("sub")).expect("symlink");
    let err = cs.apply().expect_err("stale");
    match &err {
        ApplyError::Stale { files } => {
            assert_eq!(files[0].reason, StaleReason::ResolvesElsewhere, "{err}");
        }
        other => panic!("expected stale, got {other:?}"),
    }
    assert_eq!(fs::read(r.join("other/a.txt")).expect("read"), b"same");
}

// ---------------------------------------------------------------------------------------
// Failures at every step

/// `plan` after a clean apply of the mixed scenario under it: it has recorded every step.
fn clean_run(plan: FaultPlan) -> FaultPlan {
    let m = mixed_fixture();
    mixed_changeset(&m)
        .apply_with_faults(&plan)
        .expect("clean apply");
    plan
}

/// The number (counted from 1, as `FaultPlan::fail_at` takes it) of the first step `plan`
/// recorded whose description contains `needle`.
fn step_number(plan: &FaultPlan, needle: &str) -> usize {
    plan.steps()
        .iter()
        .position(|s| s.contains(needle))
        .unwrap_or_else(|| panic!("no step contains {needle:?}: {:#?}", plan.steps()))
        + 1
}

/// The last commit step (renaming `f.txt`) and a plan failing it, after an apply under that
/// plan: it has recorded the rollback's steps too.
fn failed_at_the_last_commit_step() -> (usize, FaultPlan) {
    let k = step_number(&clean_run(FaultPlan::none()), "rename `f.txt`");
    let first = FaultPlan::fail_at(k);
    let m = mixed_fixture();
    assert!(mixed_changeset(&m).apply_with_faults(&first).is_err());
    (k, first)
}

/// Runs the mixed scenario with a failure injected at every step in turn. Before the commit
/// point the apply must fail and leave the tree byte-identical with no artifact; after it
/// (only backup removal) it must succeed. Without hard links, also without `syncfs`: every
/// file and directory fsynced on its own, as on filesystems lacking both.
fn sweep_failures(hard_links: bool) {
    let plan_for = |k: usize| {
        let p = FaultPlan::fail_at(k);
        if hard_links {
            p
        } else {
            p.without_hard_links().without_syncfs()
        }
    };
    let clean = FaultPlan::none();
    let clean = clean_run(if hard_links {
        clean
    } else {
        clean.without_hard_links().without_syncfs()
    });
    let total = clean.steps_taken();
    let log = clean.steps();
    assert!(total >= 30, "suspiciously few steps: {log:#?}");

    let mut failed = 0;
    // After the commit, the backups are removed and their directories fsynced: a failure
    // there leaves the apply done.
    let first_removal = log
        .iter()
        .position(|s| s.contains("remove the backup"))
        .expect("backup removal");
    let after_commit = |k: usize| k > first_removal && log[k - 1].contains("sync the director");
    for k in 1..=total {
        let m = mixed_fixture();
        let cs = mixed_changeset(&m);
        let plan = plan_for(k);
        let result = cs.apply_with_faults(&plan);
        let after = snapshot(m.dir.path());
        let step = &log[k - 1];
        match result {
            Err(ApplyError::Failed { leftovers, .. }) => {
                failed += 1;
                assert!(leftovers.is_empty(), "step {step}: leftovers {leftovers:?}");
                assert_eq!(
                    after,
                    m.before,
                    "step {step}: tree changed\nsteps: {:#?}",
                    plan.steps()
                );
            }
            Ok(report) if step.contains("remove the journal") => {
                // Done; the journal stays as a leftover, which recovery removes.
                assert_eq!(report.leftovers.len(), 1, "step {step}");
                assert!(report.leftovers[0].ends_with(".xcsh/apply.journal"));
                assert_eq!(
                    assert_recovered(&m, step),
                    Recovered::RolledForward { files: 9 }
                );
            }
            Ok(report) if after_commit(k) => {
                // Only the durability of the removals is at risk: nothing is left.
                assert!(report.leftovers.is_empty(), "step {step}");
                assert!(artifacts(&after).is_empty(), "step {step}");
                assert_eq!(
                    strip_new_entries(&without_artifacts(&after)),
                    mixed_expected(&m)
                );
            }
            Ok(report) => {
                assert!(
                    step.contains("remove the backup"),
                    "step {step} failed but the apply succeeded"
                );
                assert_eq!(report.leftovers.len(), 1, "step {step}");
                assert!(
                    artifacts(&after).len() == 1,
                    "step {step}: {:?}",
                    artifacts(&after)
                );
                assert_eq!(
                    strip_new_entries(&without_artifacts(&after)),
                    mixed_expected(&m)
                );
            }
            Err(other) => panic!("step {step}: unexpected error {other}"),
        }
    }
    // Every step but the backup removals (and the syncs after them) must have been a failure.
    let removals = log
        .iter()
        .filter(|s| s.contains("remove the backup") || s.contains("remove the journal"))
        .count()
        + (1..=total).filter(|&k| after_commit(k)).count();
    assert_eq!(failed, total - removals);
}

#[test]
fn a_failure_at_any_step_leaves_every_file_as_before() {
    sweep_failures(true);
}

#[test]
fn a_failure_at_any_step_leaves_every_file_as_before_with_copied_backups() {
    sweep_failures(false);
}

#[test]
fn failure_message_says_what_failed_where_and_that_nothing_changed() {
    let k = step_number(&clean_run(FaultPlan::none()), "replace `src/b.rs`");
    let m = mixed_fixture();
    let err = mixed_changeset(&m)
        .apply_with_faults(&FaultPlan::fail_at(k))
        .expect_err("fails");
    assert_eq!(
        err.to_string(),
        format!(
            "nothing was changed: could not replace `src/b.rs`: injected fault at step {k}. \
             Every file was restored to what it was before; fix the cause and apply again"
        )
    );
}

#[test]
fn a_failed_rollback_names_every_file_that_needs_attention() {
    // Fail the last commit step, then also the restore of the first modified file.
    let (k, first) = failed_at_the_last_commit_step();
    let j = step_number(&first, "restore the original of `a.txt`");
    assert!(j > k);

    let m = mixed_fixture();
    let err = mixed_changeset(&m)
        .apply_with_faults(&FaultPlan::fail_at(k).and_fail_at(j))
        .expect_err("fails");
    let attention = match &err {
        ApplyError::RollbackFailed { attention, .. } => attention.clone(),
        other => panic!("expected RollbackFailed, got {other}"),
    };
    assert_eq!(attention.len(), 1, "{err}");
    assert_eq!(attention[0].path, "a.txt");
    assert!(
        attention[0]
            .problem
            .starts_with("holds the new content; its original is in `")
    );
    let msg = err.to_string();
    assert!(
        msg.contains("undoing the partial apply also failed"),
        "{msg}"
    );
    assert!(msg.contains("`a.txt`: holds the new content"), "{msg}");

    // Every other file is restored; a.txt has the new content and its backup the old.
    let after = snapshot(m.dir.path());
    let mut expected = m.before.clone();
    expected.insert(
        "a.txt".into(),
        Node::File {
            bytes: MIXED_NEW_A.to_vec(),
            mode: match m.before.get(Path::new("a.txt")) {
                Some(Node::File { mode, .. }) => *mode,
                _ => unreachable!(),
            },
        },
    );
    let journal = Path::new(".xcsh/apply.journal");
    let without_state = |t: &Tree| -> Tree {
        t.iter()
            .filter(|(p, _)| !p.starts_with(".xcsh"))
            .map(|(p, n)| (p.clone(), n.clone()))
            .collect()
    };
    assert_eq!(without_state(&without_artifacts(&after)), expected);
    let backups = artifacts(&after);
    assert_eq!(backups.len(), 1, "{backups:?}");
    assert_eq!(
        file_bytes(&after, backups[0].to_str().expect("utf8")).as_deref(),
        Some(MIXED_OLD_A)
    );
    // The journal stays, so recovery can finish the undo once the cause is fixed.
    assert!(after.contains_key(journal), "{:?}", after.keys());
    let report = recover(m.dir.path()).expect("recover");
    assert_eq!(report.outcome, Recovered::RolledBack { files: 9 });
    assert_eq!(snapshot(m.dir.path()), m.before);
}

// ---------------------------------------------------------------------------------------
// Crashes at every step

/// Checks the state a crash may leave: each file old or new in full, a deleted file present
/// (old) or absent, a renamed file at exactly one of its names, other files untouched, and
/// nothing else but artifacts — except, for a rename into a directory that did not exist,
/// that directory (possibly empty) once it has appeared.
fn assert_crash_state(m: &Mixed, after: &Tree, step: &str) {
    let one_of = |p: &str, options: &[Option<&[u8]>]| {
        let got = file_bytes(after, p);
        assert!(
            options.iter().any(|o| o.map(<[u8]>::to_vec) == got),
            "step {step}: `{p}` holds {:?}",
            got.map(|b| String::from_utf8_lossy(&b).into_owned())
        );
    };
    one_of("a.txt", &[Some(MIXED_OLD_A), Some(MIXED_NEW_A)]);
    one_of("src/b.rs", &[Some(MIXED_OLD_B), Some(MIXED_NEW_B)]);
    one_of(
        "src/s.rs",
        &[Some(MIXED_OLD_S.as_bytes()), Some(MIXED_NEW_S.as_bytes())],
    );
    one_of("src/target.txt", &[Some(MIXED_OLD_T), Some(MIXED_NEW_T)]);
    one_of("new/deep/c.txt", &[None, Some(MIXED_NEW_C)]);
    one_of("src/d.txt", &[None, Some(MIXED_NEW_D)]);
    one_of("old.txt", &[None, Some(MIXED_OLD_GONE)]);
    let e = (
        file_bytes(after, "src/e.rs"),
        file_bytes(after, "moved/inner/e2.rs"),
    );
    assert!(
        matches!(&e, (Some(b), None) | (None, Some(b)) if b == MIXED_E),
        "step {step}: e at {e:?}"
    );
    let f = (file_bytes(after, "f.txt"), file_bytes(after, "src/f.txt"));
    assert!(
        matches!(&f, (Some(b), None) | (None, Some(b)) if b == MIXED_F),
        "step {step}: f at {f:?}"
    );
    let known = [
        "a.txt",
        "src/b.rs",
        "src/s.rs",
        "src/target.txt",
        "new/deep/c.txt",
        "src/d.txt",
        "old.txt",
        "src/e.rs",
        "moved/inner/e2.rs",
        "f.txt",
        "src/f.txt",
        "new",
        "new/deep",
    ];
    for (path, node) in without_artifacts(after) {
        // The lock and journal, for recovery.
        if path.starts_with(".xcsh") {
            continue;
        }
        if known.iter().any(|k| Path::new(k) == path) {
            continue;
        }
        if path == Path::new("moved") || path == Path::new("moved/inner") {
            // A new directory for a rename appears (whole) just before the rename.
            assert!(matches!(node, Node::Dir { .. }), "step {step}: {path:?}");
            continue;
        }
        assert_eq!(
            m.before.get(&path),
            Some(&node),
            "step {step}: `{}` is new or changed and not an artifact",
            path.display()
        );
    }
    // A new directory for new files never appears without them.
    if after.contains_key(Path::new("new")) {
        assert!(
            file_bytes(after, "new/deep/c.txt").is_some(),
            "step {step}: empty `new`"
        );
    }
}

#[test]
fn a_crash_at_any_step_leaves_every_file_old_or_new_in_full() {
    let clean = clean_run(FaultPlan::none());
    let total = clean.steps_taken();
    let log = clean.steps();
    let mut outcomes = Vec::new();
    for k in 1..=total {
        let m = mixed_fixture();
        let result = mixed_changeset(&m).apply_with_faults(&FaultPlan::crash_at(k));
        assert!(
            matches!(result, Err(ApplyError::SimulatedCrash { step }) if step == k),
            "step {k}: {result:?}"
        );
        assert_crash_state(&m, &snapshot(m.dir.path()), &log[k - 1]);
        let outcome = assert_recovered(&m, &log[k - 1]);
        outcomes.push((k, outcome));
    }
    // Before the commit point recovery undoes the apply; from it on, it finishes it.
    let commit = step_number(&clean, ": commit `");
    let prepared = step_number(&clean, ": install the journal `");
    for (k, outcome) in outcomes {
        let expected = if k <= prepared {
            Recovered::NothingToDo
        } else if k <= commit {
            Recovered::RolledBack { files: 9 }
        } else {
            Recovered::RolledForward { files: 9 }
        };
        assert_eq!(outcome, expected, "step {}", log[k - 1]);
    }
}

/// Runs recovery after a (simulated) crash: the tree must then be exactly the old one or
/// exactly the new one, with no artifact, journal or lock left; a second recovery has
/// nothing to do.
fn assert_recovered(m: &Mixed, step: &str) -> Recovered {
    let report = recover(m.dir.path()).unwrap_or_else(|e| panic!("step {step}: {e}"));
    let after = snapshot(m.dir.path());
    if after != m.before {
        assert!(
            file_bytes(&after, "src/d.txt").is_some(),
            "step {step}: after recovery ({report}) neither old nor new: {:#?}",
            after.keys().collect::<Vec<_>>()
        );
        assert_eq!(
            strip_new_entries(&after),
            mixed_expected(m),
            "step {step}: after recovery ({report})"
        );
    }
    let again = recover(m.dir.path()).expect("second recovery");
    assert_eq!(again.outcome, Recovered::NothingToDo, "step {step}");
    assert_eq!(snapshot(m.dir.path()), after, "step {step}");
    report.outcome
}

#[test]
fn a_crash_during_rollback_also_leaves_every_file_old_or_new() {
    let (k, first) = failed_at_the_last_commit_step();
    let total = first.steps_taken();
    for j in k + 1..=total {
        let m = mixed_fixture();
        let plan = FaultPlan::crash_at(j).and_fail_at(k);
        let result = mixed_changeset(&m).apply_with_faults(&plan);
        assert!(
            matches!(result, Err(ApplyError::SimulatedCrash { .. })),
            "{result:?}"
        );
        assert_crash_state(&m, &snapshot(m.dir.path()), &first.steps()[j - 1]);
        assert_recovered(&m, &first.steps()[j - 1]);
    }
}

// ---------------------------------------------------------------------------------------
// Diff

#[test]
fn diff_shows_every_operation() {
    let dir = tempfile::tempdir().expect("tempdir");
    let r = dir.path();
    write(r, "m.txt", b"one\ntwo\nthree\n");
    write(r, "gone.txt", b"bye\n");
    write(r, "from.txt", b"same\n");
    let mut cs = ChangeSet::new(ws(&dir));
    cs.modify("m.txt", "one\n2\nthree\n").expect("modify");
    cs.create("sub/new.txt", "hello\n").expect("create");
    cs.delete("gone.txt").expect("delete");
    cs.rename("from.txt", "to.txt").expect("rename");
    assert_eq!(
        cs.diff(),
        "diff --git a/m.txt b/m.txt\n\
         --- a/m.txt\n+++ b/m.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n\
         diff --git a/sub/new.txt b/sub/new.txt\nnew file\n\
         --- /dev/null\n+++ b/sub/new.txt\n@@ -0,0 +1 @@\n+hello\n\
         diff --git a/gone.txt b/gone.txt\ndeleted file\n\
         --- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n\
         diff --git a/from.txt b/to.txt\nrename from from.txt\nrename to to.txt\n"
    );
}

#[test]
fn diff_notes_files_changed_on_disk_and_binary_content() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "a.txt", b"a\n");
    write(dir.path(), "bin", b"\x00\xff\x01");
    let mut cs = ChangeSet::new(ws(&dir));
    cs.modify("a.txt", "b\n").expect("modify");
    cs.modify("bin", b"\x00\xfe".to_vec()).expect("modify");
    write(dir.path(), "a.txt", b"z\n");
    let diff = cs.diff();
    assert!(
        diff.contains(
            "# note: `a.txt` changed on disk since it was recorded; apply will refuse it"
        ),
        "{diff}"
    );
    assert!(
        diff.contains("Binary files a/bin and b/bin differ"),
        "{diff}"
    );
}

// ---------------------------------------------------------------------------------------
// Concurrent writers

#[test]
fn a_file_changed_while_the_apply_prepares_is_caught_before_anything_is_visible() {
    let probe = mixed_fixture();
    let clean = FaultPlan::none();
    mixed_changeset(&probe)
        .apply_with_faults(&clean)
        .expect("clean");
    // Everything before the new contents and directories are synced for the commit point is
    // preparation: the journal, temp files and staging.
    let first_commit = clean
        .steps()
        .iter()
        .position(|s| {
            s.contains("sync the director") || s.contains("flush to disk the new contents")
        })
        .expect("sync step")
        + 1;
    assert!(first_commit > 5, "{:#?}", clean.steps());
    for k in 1..first_commit {
        let m = mixed_fixture();
        let cs = mixed_changeset(&m);
        let root = m.dir.path().to_path_buf();
        let plan = FaultPlan::none().before_step(k, move || {
            fs::write(root.join("src/b.rs"), "a concurrent edit\n").expect("write");
            fs::write(root.join("src/s.rs"), MIXED_EDITED_S).expect("write");
            fs::remove_file(root.join("old.txt")).expect("rm");
        });
        let files = match cs.apply_with_faults(&plan) {
            Err(ApplyError::Stale { files }) => files,
            other => panic!("step {k}: expected stale, got {other:?}"),
        };
        let got: Vec<_> = files.iter().map(|f| (f.path.as_str(), &f.reason)).collect();
        assert_eq!(
            got,
            vec![
                ("src/b.rs", &StaleReason::Modified),
                ("src/s.rs", &StaleReason::Modified),
                ("old.txt", &StaleReason::Deleted)
            ],
            "step {k}"
        );
        let mut expected = m.before.clone();
        expected.remove(Path::new("old.txt"));
        for (path, edit) in [
            ("src/b.rs", &b"a concurrent edit\n"[..]),
            ("src/s.rs", MIXED_EDITED_S.as_bytes()),
        ] {
            if let Some(Node::File { bytes, .. }) = expected.get_mut(Path::new(path)) {
                *bytes = edit.to_vec();
            }
        }
        assert_eq!(
            snapshot(m.dir.path()),
            expected,
            "step {k}: {:#?}",
            plan.steps()
        );
    }
}

// ---------------------------------------------------------------------------------------
// Modifications spliced in at apply time

#[test]
fn invalid_splices_are_refused_when_added_and_name_the_edit() {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "a.rs", b"fn main() {}\n");
    let seen = Fingerprint::of("fn main() {}\n"); // 13 bytes
    let mut cs = ChangeSet::new(ws(&dir));
    #[allow(clippy::reversed_empty_ranges)] // on purpose: it must be refused
    let backwards = Splice::new(6..3, "x");
    let cases: [(Vec<Splice>, &str); 4] = [
        (
            vec![Splice::new(3..7, "go"), Splice::new(0..2, "")],
            "edits[1] (bytes 0..2) comes before edits[0] (bytes 3..7): the edits are not sorted by position",
        ),
        (
            vec![Splice::new(0..5, "x"), Splice::new(4..6, "y")],
            "edits[1] (bytes 4..6) overlaps edits[0] (bytes 0..5)",
        ),
        (
            vec![Splice::new(10..14, "x")],
            "edits[0] (bytes 10..14) reaches past the end of the file as it was read (13 bytes)",
        ),
        (
            vec![backwards],
            "edits[0] (bytes 6..3) ends before it starts",
        ),
    ];
    for (edits, problem) in cases {
        let err = cs
            .modify_splicing("a.rs", seen, edits)
            .expect_err("refused");
        assert!(
            matches!(err, ChangeSetError::InvalidSplice { .. }),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!(
                "cannot modify `a.rs` by splicing: {problem}; give the edits as byte ranges of \
                 the file as it was read, sorted by position and not overlapping"
            )
        );
    }
    assert!(cs.is_empty(), "a refused operation is not added");
    // Insertions at one place, and right after a replacement, are fine.
    cs.modify_splicing(
        "a.rs",
        seen,
        [
            Splice::new(3..3, "my_"),
            Splice::new(3..7, "main2"),
            Splice::new(7..7, "_x"),
        ],
    )
    .expect("valid");
    // One operation per file, whatever its kind.
    let err = cs.modify("a.rs", "x").expect_err("duplicate");
    assert!(matches!(err, ChangeSetError::Duplicate { .. }), "{err}");
    let report = cs.apply().expect("apply");
    assert_eq!(report.bytes_written, "fn my_main2_x() {}\n".len() as u64);
    assert_eq!(
        fs::read_to_string(dir.path().join("a.rs")).expect("read"),
        "fn my_main2_x() {}\n"
    );
}

/// A change set with a modification by bytes, then one by splicing, over fresh files; the
/// spliced file's edits rename `f` to `g` and add `pub`.
fn splice_case() -> (tempfile::TempDir, ChangeSet) {
    let dir = tempfile::tempdir().expect("tempdir");
    write(dir.path(), "first.txt", b"first\n");
    write(dir.path(), "spliced.rs", b"fn f() {}\n");
    write(dir.path(), "other.txt", b"other\n");
    let mut cs = ChangeSet::new(ws(&dir));
    cs.modify("first.txt", "FIRST\n").expect("modify");
    cs.modify_splicing(
        "spliced.rs",
        Fingerprint::of("fn f() {}\n"),
        [Splice::new(0..0, "pub "), Splice::new(3..4, "g")],
    )
    .expect("splice");
    (dir, cs)
}

#[cfg(unix)]
#[test]
fn a_spliced_file_changed_since_it_was_read_is_named_and_nothing_is_written() {
    use std::os::unix::fs::symlink;
    type Mutation = fn(&Path);
    let cases: [(&str, Mutation, StaleReason); 4] = [
        (
            "same length",
            |r| fs::write(r.join("spliced.rs"), "fn h() {}\n").expect("write"),
            StaleReason::Modified,
        ),
        (
            "longer",
            |r| fs::write(r.join("spliced.rs"), "fn f() {}\n\n").expect("write"),
            StaleReason::Modified,
        ),
        (
            "deleted",
            |r| fs::remove_file(r.join("spliced.rs")).expect("rm"),
            StaleReason::Deleted,
        ),
        (
            "now a link",
            |r| {
                fs::remove_file(r.join("spliced.rs")).expect("rm");
                symlink("other.txt", r.join("spliced.rs")).expect("symlink");
            },
            StaleReason::BecameSymlink,
        ),
    ];
    for (what, mutate, reason) in cases {
        let (dir, cs) = splice_case();
        mutate(dir.path());
        let before = snapshot(dir.path());
        match cs.apply() {
            Err(ApplyError::Stale { files }) => {
                let got: Vec<_> = files.iter().map(|f| (f.path.as_str(), &f.reason)).collect();
                assert_eq!(got, [("spliced.rs", &reason)], "{what}");
            }
            other => panic!("{what}: expected stale, got {other:?}"),
        }
        // Not even the temporary file of `first.txt`, written before the spliced file was
        // read, is left.
        assert_eq!(snapshot(dir.path()), before, "{what}");
    }
}

#[test]
fn every_stale_file_is_named_when_spliced_and_other_files_changed() {
    let (dir, cs) = splice_case();
    // The spliced file keeps its length: only reading it tells.
    fs::write(dir.path().join("spliced.rs"), "fn h() {}\n").expect("write");
    fs::write(dir.path().join("first.txt"), "changed\n").expect("write");
    let before = snapshot(dir.path());
    let err = cs.apply().expect_err("stale");
    assert_eq!(
        err.to_string(),
        "nothing was written: 2 file(s) changed since this change set was built: \
         `first.txt` (modified since it was read); `spliced.rs` (modified since it was read). \
         Preview the change again from the current files"
    );
    assert_eq!(snapshot(dir.path()), before);
}

#[test]
fn splices_that_do_not_fit_the_text_are_refused_at_apply_and_nothing_is_written() {
    for (content, edit, problem) in [
        (
            &b"let s = \"\xc3\xa9\";\n"[..],
            Splice::new(9..10, "e"),
            "edits[0] (bytes 9..10) splits a UTF-8 character: ranges must start and end on character boundaries",
        ),
        (
            &b"bin\xff\n"[..],
            Splice::new(0..3, "txt"),
            "the file is not UTF-8 text (invalid byte at offset 3), and splices edit text",
        ),
    ] {
        let dir = tempfile::tempdir().expect("tempdir");
        write(dir.path(), "first.txt", b"first\n");
        write(dir.path(), "a.rs", content);
        let mut cs = ChangeSet::new(ws(&dir));
        cs.modify("first.txt", "FIRST\n").expect("modify");
        cs.modify_splicing("a.rs", Fingerprint::of(content), [edit])
            .expect("valid by position");
        let before = snapshot(dir.path());
        let err = cs.apply().expect_err("refused");
        assert!(matches!(err, ApplyError::Failed { .. }), "{err:?}");
        assert_eq!(
            err.to_string(),
            format!(
                "nothing was changed: could not splice the edits into `a.rs`: {problem}. Every \
                 file was restored to what it was before; fix the cause and apply again"
            )
        );
        assert_eq!(snapshot(dir.path()), before);
        assert!(
            cs.diff().contains(&format!(
                "# note: the edits of `a.rs` cannot be spliced in: {problem}"
            )),
            "{}",
            cs.diff()
        );
    }
}

#[test]
fn the_diff_of_a_spliced_file_is_made_from_the_file_and_notes_a_change() {
    let (dir, cs) = splice_case();
    assert_eq!(
        cs.diff(),
        "diff --git a/first.txt b/first.txt\n\
         --- a/first.txt\n+++ b/first.txt\n@@ -1 +1 @@\n-first\n+FIRST\n\
         diff --git a/spliced.rs b/spliced.rs\n\
         --- a/spliced.rs\n+++ b/spliced.rs\n@@ -1 +1 @@\n-fn f() {}\n+pub fn g() {}\n"
    );
    fs::write(dir.path().join("spliced.rs"), "fn h() {}\n").expect("write");
    // The edits fit only what was read: no diff against what is there now.
    assert!(cs.diff().ends_with(
        "diff --git a/spliced.rs b/spliced.rs\n\
         # note: `spliced.rs` changed on disk since it was recorded; apply will refuse it\n"
    ));
}
