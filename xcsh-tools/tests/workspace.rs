//! Path confinement: every way out of the workspace root is refused, every way that stays
//! inside is accepted.

use std::fs;
use std::path::{Path, PathBuf};

use xcsh_tools::workspace::{PathError, Workspace, WorkspaceError, is_temp_artifact};

/// A workspace at `<tmp>/root`, with `<tmp>/outside` next to it.
struct Fixture {
    _tmp: tempfile::TempDir,
    ws: Workspace,
    outside: PathBuf,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().expect("tempdir");
    let root = tmp.path().join("root");
    let outside = tmp.path().join("outside");
    fs::create_dir_all(root.join("src/nested")).expect("mkdir");
    fs::create_dir_all(&outside).expect("mkdir");
    fs::write(root.join("src/a.rs"), "a").expect("write");
    fs::write(outside.join("secret.txt"), "secret").expect("write");
    let ws = Workspace::new(&root).expect("workspace");
    let outside = outside.canonicalize().expect("canonicalize");
    Fixture {
        _tmp: tmp,
        ws,
        outside,
    }
}

fn root(f: &Fixture) -> &Path {
    f.ws.root()
}

fn assert_outside(result: Result<PathBuf, PathError>, what: &str) {
    match result {
        Err(e @ PathError::OutsideRoot { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains("leaves the workspace root"), "{what}: {msg}");
            assert!(msg.contains("give a path inside it"), "{what}: {msg}");
        }
        other => panic!("{what}: expected OutsideRoot, got {other:?}"),
    }
}

#[test]
fn new_canonicalises_and_rejects_missing_or_file_roots() {
    let f = fixture();
    assert!(root(&f).is_absolute());
    assert_eq!(root(&f), root(&f).canonicalize().expect("canonicalize"));

    // A root given with `..` and a trailing `.` is canonicalised.
    let odd = root(&f).join("src/../.");
    assert_eq!(Workspace::new(&odd).expect("workspace").root(), root(&f));

    let missing = root(&f).join("nope");
    let err = Workspace::new(&missing).unwrap_err();
    assert!(matches!(err, WorkspaceError::NotFound { .. }), "{err:?}");
    assert!(err.to_string().contains("does not exist"), "{err}");

    let err = Workspace::new(root(&f).join("src/a.rs")).unwrap_err();
    assert!(
        matches!(err, WorkspaceError::NotADirectory { .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("is not a directory"), "{err}");
}

#[test]
fn relative_paths_resolve_under_the_root() {
    let f = fixture();
    let r = root(&f);
    assert_eq!(
        f.ws.resolve("src/a.rs").expect("resolve"),
        r.join("src/a.rs")
    );
    assert_eq!(
        f.ws.resolve("./src/./a.rs").expect("resolve"),
        r.join("src/a.rs")
    );
    assert_eq!(f.ws.resolve(".").expect("resolve"), r);
    // `..` that stays inside is fine.
    assert_eq!(
        f.ws.resolve("src/nested/../a.rs").expect("resolve"),
        r.join("src/a.rs")
    );
    assert_eq!(f.ws.resolve("src/..").expect("resolve"), r);
}

#[test]
fn paths_that_do_not_exist_yet_resolve_for_creation() {
    let f = fixture();
    let r = root(&f);
    assert_eq!(
        f.ws.resolve("src/new.rs").expect("resolve"),
        r.join("src/new.rs")
    );
    assert_eq!(
        f.ws.resolve("brand/new/dir/file.rs").expect("resolve"),
        r.join("brand/new/dir/file.rs")
    );
    // `..` inside the missing part is applied to it.
    assert_eq!(
        f.ws.resolve("brand/x/../y.rs").expect("resolve"),
        r.join("brand/y.rs")
    );
    // …and still may not climb out.
    assert_outside(
        f.ws.resolve("brand/../../escape.rs"),
        "missing part climbing out",
    );
}

#[test]
fn dot_dot_that_climbs_out_is_refused() {
    let f = fixture();
    assert_outside(f.ws.resolve(".."), "..");
    assert_outside(
        f.ws.resolve("../outside/secret.txt"),
        "../outside/secret.txt",
    );
    assert_outside(f.ws.resolve("src/../../outside"), "src/../../outside");
    assert_outside(f.ws.resolve("../../../../../../etc/passwd"), "many ..");
    let err = f.ws.resolve("../etc/passwd").unwrap_err().to_string();
    assert!(
        err.starts_with(&format!(
            "path `../etc/passwd` leaves the workspace root `{}`",
            root(&f).display()
        )),
        "{err}"
    );
}

#[test]
fn absolute_paths_inside_are_accepted_and_outside_refused() {
    let f = fixture();
    let inside = root(&f).join("src/a.rs");
    assert_eq!(f.ws.resolve(&inside).expect("resolve"), inside);
    assert_eq!(f.ws.resolve(root(&f)).expect("resolve"), root(&f));
    assert_outside(f.ws.resolve("/etc/passwd"), "/etc/passwd");
    assert_outside(f.ws.resolve(f.outside.join("secret.txt")), "sibling dir");
    assert_outside(f.ws.resolve("/"), "/");
    // A sibling whose name merely starts with the root's name is not inside it.
    let sibling = PathBuf::from(format!("{}2/x", root(&f).display()));
    assert_outside(f.ws.resolve(&sibling), "prefix sibling");
    // Nonexistent absolute paths outside are refused too, and the message does not probe.
    assert_outside(f.ws.resolve("/definitely/not/here"), "missing outside");
    assert_outside(f.ws.resolve("/etc/passwd/below"), "below a file outside");
}

#[test]
fn empty_path_is_refused_with_a_hint() {
    let f = fixture();
    let err = f.ws.resolve("").unwrap_err();
    assert!(matches!(err, PathError::Empty { .. }), "{err:?}");
    assert!(err.to_string().contains("`.` is the root itself"), "{err}");
}

#[cfg(unix)]
mod symlinks {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn link_to_a_file_inside_resolves_to_its_target() {
        let f = fixture();
        let r = root(&f);
        symlink("src/a.rs", r.join("link.rs")).expect("symlink");
        assert_eq!(
            f.ws.resolve("link.rs").expect("resolve"),
            r.join("src/a.rs")
        );
        // A directory link inside, used in the middle of a path.
        symlink(r.join("src"), r.join("srclink")).expect("symlink");
        assert_eq!(
            f.ws.resolve("srclink/a.rs").expect("resolve"),
            r.join("src/a.rs")
        );
        // `..` after a directory link goes to the link target's parent, as in the kernel.
        symlink("src/nested", r.join("deep")).expect("symlink");
        assert_eq!(
            f.ws.resolve("deep/../a.rs").expect("resolve"),
            r.join("src/a.rs")
        );
    }

    #[test]
    fn link_leading_out_is_refused_and_named() {
        let f = fixture();
        let r = root(&f);
        symlink(&f.outside, r.join("out")).expect("symlink");
        symlink(f.outside.join("secret.txt"), r.join("secret")).expect("symlink");
        symlink("../../outside/secret.txt", r.join("src/rel")).expect("symlink");
        assert_outside(f.ws.resolve("out/secret.txt"), "dir link out");
        assert_outside(f.ws.resolve("out/new.txt"), "create through a dir link out");
        assert_outside(f.ws.resolve("secret"), "file link out");
        assert_outside(f.ws.resolve("src/rel"), "relative link out");
        let msg = f.ws.resolve("secret").unwrap_err().to_string();
        assert!(msg.contains("through the symbolic link `secret`"), "{msg}");
        // A dangling link out is refused too (it would create a file outside).
        symlink(f.outside.join("not-yet"), r.join("dangling")).expect("symlink");
        assert_outside(f.ws.resolve("dangling"), "dangling link out");
        // resolve_existing refuses a link out as outside, not as missing.
        assert!(matches!(
            f.ws.resolve_existing("secret"),
            Err(PathError::OutsideRoot { .. })
        ));
    }

    #[test]
    fn link_out_and_back_in_is_accepted() {
        // The final location is what matters: a chain leaving and re-entering ends inside.
        let f = fixture();
        let r = root(&f);
        symlink(r.join("src/a.rs"), f.outside.join("back")).expect("symlink");
        symlink(f.outside.join("back"), r.join("hop")).expect("symlink");
        assert_eq!(f.ws.resolve("hop").expect("resolve"), r.join("src/a.rs"));
    }

    #[test]
    fn symlink_loops_are_refused_without_hanging() {
        let f = fixture();
        let r = root(&f);
        symlink("loop_b", r.join("loop_a")).expect("symlink");
        symlink("loop_a", r.join("loop_b")).expect("symlink");
        symlink("self", r.join("self")).expect("symlink");
        symlink(".", r.join("dot")).expect("symlink");
        for p in ["loop_a", "loop_b/x", "self", "self/new.rs"] {
            let err = f.ws.resolve(p).unwrap_err();
            assert!(matches!(err, PathError::SymlinkLoop { .. }), "{p}: {err:?}");
            assert!(err.to_string().contains("symbolic-link loop"), "{err}");
        }
        // A link to `.` is not a loop: it is followed a bounded number of times.
        assert_eq!(
            f.ws.resolve("dot/dot/dot/src/a.rs").expect("resolve"),
            r.join("src/a.rs")
        );
    }

    #[test]
    fn root_reached_through_a_link_is_inside() {
        let f = fixture();
        let alias = f.outside.join("alias");
        symlink(root(&f), &alias).expect("symlink");
        assert_eq!(
            f.ws.resolve(alias.join("src/a.rs")).expect("resolve"),
            root(&f).join("src/a.rs")
        );
        // And a workspace opened through the alias has the canonical root.
        assert_eq!(Workspace::new(&alias).expect("workspace").root(), root(&f));
    }
}

#[test]
fn a_file_in_the_middle_of_a_path_is_reported() {
    let f = fixture();
    let err = f.ws.resolve("src/a.rs/child").unwrap_err();
    assert!(matches!(err, PathError::NotADirectory { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains("goes through `src/a.rs`, which is not a directory"),
        "{err}"
    );
}

#[test]
fn resolve_existing_names_the_path_and_the_root() {
    let f = fixture();
    assert_eq!(
        f.ws.resolve_existing("src/a.rs").expect("resolve"),
        root(&f).join("src/a.rs")
    );
    let err =
        f.ws.resolve_existing("src/missing.rs")
            .unwrap_err()
            .to_string();
    assert_eq!(
        err,
        format!(
            "path `src/missing.rs` does not exist under the workspace root `{}`; check the spelling or list the directory first",
            root(&f).display()
        )
    );
}

#[test]
fn display_is_root_relative_with_slashes() {
    let f = fixture();
    assert_eq!(f.ws.display(&root(&f).join("src").join("a.rs")), "src/a.rs");
    assert_eq!(f.ws.display(root(&f)), ".");
    assert_eq!(f.ws.display(Path::new("/etc/passwd")), "/etc/passwd");
}

#[cfg(target_os = "linux")]
#[test]
fn non_utf8_names_do_not_panic() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let f = fixture();
    let name = OsStr::from_bytes(b"caf\xe9.rs");
    fs::write(root(&f).join(name), "x").expect("write");
    let resolved = f.ws.resolve(Path::new(name)).expect("resolve");
    assert_eq!(resolved, root(&f).join(name));
    assert_eq!(f.ws.display(&resolved), "caf\u{fffd}.rs");
    let missing = OsStr::from_bytes(b"\xff\xfe/x");
    assert_eq!(
        f.ws.resolve(Path::new(missing)).expect("resolve"),
        root(&f).join(missing)
    );
    let err =
        f.ws.resolve(Path::new(OsStr::from_bytes(b"../\xff")))
            .unwrap_err();
    assert!(
        err.to_string().contains("leaves the workspace root"),
        "{err}"
    );
    // A NUL byte cannot be a file name; it is an error, not a panic.
    assert!(f.ws.resolve(Path::new(OsStr::from_bytes(b"a\0b"))).is_err());
}

#[test]
fn temp_artifacts_are_recognised_and_nothing_else() {
    assert!(is_temp_artifact(".a.rs.xcsh-tmp.0123456789abcdef"));
    assert!(is_temp_artifact(".a.rs.xcsh-bak.fedcba9876543210"));
    assert!(is_temp_artifact(".\u{e9}t\u{e9}.xcsh-bak.fedcba9876543210"));
    for name in [
        "a.rs",
        ".a.rs",
        "a.rs.xcsh-tmp.0123456789abcdef",  // no leading dot
        ".a.rs.xcsh-tmp.0123456789ABCDEF", // upper-case hex is not ours
        ".a.rs.xcsh-tmp.0123456789abcde",  // 15 digits
        ".a.rs.xcsh-tmp.0123456789abcdefg",
        ".a.rs.xcsh-old.0123456789abcdef",
        "",
    ] {
        assert!(!is_temp_artifact(name), "{name:?}");
    }
}
