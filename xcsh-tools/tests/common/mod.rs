//! Set-up shared by the integration tests in this directory: a session with the built-in
//! tools, a scratch workspace with a directory outside it, and a picture of a tree to compare
//! before and after.

// Each test file that says `mod common;` compiles this module into its own crate and uses
// only part of it; the rest would warn as dead code there.
#![allow(dead_code)]

pub mod oracle;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use xcsh_core::Session;
use xcsh_tools::builtin_suite;

/// A session with the built-in suite over `root`, as `xcsh serve` builds it.
pub fn session(root: &Path) -> Session {
    Session::builder()
        .suite(builtin_suite())
        .workspace_root(root)
        .build()
        .expect("session")
}

/// A workspace root `<tmp>/ws` (holding an empty `src`) beside a directory `<tmp>/outside`,
/// both canonical. Dropping it removes both.
pub struct Fixture {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub outside: PathBuf,
}

pub fn root_and_outside() -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().canonicalize().expect("canonical");
    let (root, outside) = (base.join("ws"), base.join("outside"));
    fs::create_dir_all(root.join("src")).expect("mkdir");
    fs::create_dir_all(&outside).expect("mkdir");
    Fixture {
        _dir: dir,
        root,
        outside,
    }
}

/// Every entry under `dir` by relative path: a file's bytes, a link's target (links not
/// followed), `<dir>` for a directory.
pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<PathBuf, Vec<u8>>) {
        for entry in fs::read_dir(dir).expect("read_dir") {
            let path = entry.expect("entry").path();
            let rel = path.strip_prefix(base).expect("inside").to_path_buf();
            let meta = fs::symlink_metadata(&path).expect("meta");
            if meta.file_type().is_symlink() {
                let target = fs::read_link(&path).expect("link");
                out.insert(rel, target.as_os_str().as_encoded_bytes().to_vec());
            } else if meta.is_dir() {
                out.insert(rel, b"<dir>".to_vec());
                walk(base, &path, out);
            } else {
                out.insert(rel, fs::read(&path).expect("read"));
            }
        }
    }
    let mut out = BTreeMap::new();
    walk(dir, dir, &mut out);
    out
}
