//! New directories: built under a temporary name beside where they go, with their
//! subdirectories and new files inside, and renamed into place whole.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::artifacts::{STAGE_SLOT, artifact_path};
use super::journal::Stop;
use super::{Run, parent_of};
use crate::changeset::fault::Effect;
use crate::workspace::TEMP_MARKER;

/// A directory that does not exist yet, built under a temporary name beside where it goes
/// (with its subdirectories and new files inside) and renamed into place in one step, so a
/// crash never leaves a new, empty directory with an ordinary name behind.
pub(super) struct Stage {
    /// Where the directory goes (the highest missing ancestor of some target).
    pub(super) top: PathBuf,
    /// Its temporary name while being built.
    pub(super) dir: PathBuf,
    /// Subdirectories created in it, parents first, as their final paths.
    pub(super) subdirs: Vec<PathBuf>,
    /// Renamed into place.
    pub(super) committed: bool,
}

impl Stage {
    /// Where `path` (under `top`) currently is: inside the stage until it is committed.
    pub(super) fn locate(&self, path: &Path) -> PathBuf {
        match (self.committed, path.strip_prefix(&self.top)) {
            (false, Ok(rel)) => self.dir.join(rel),
            _ => path.to_path_buf(),
        }
    }
}

impl Run<'_> {
    /// Makes sure the directory for `target` will exist at commit: returns where to put its
    /// temporary file now. Missing directories are built inside a stage (see [`Stage`]).
    pub(super) fn prepare_parent(&mut self, i: usize, target: &Path) -> Result<PathBuf, Stop> {
        // The missing ancestors, deepest first.
        let mut missing = Vec::new();
        let mut cur = target.parent();
        while let Some(dir) = cur {
            match fs::symlink_metadata(dir) {
                Ok(m) if m.is_dir() => break,
                Ok(_) => {
                    let e = io::Error::new(io::ErrorKind::NotADirectory, "not a directory");
                    return Err(self.fail("create the directory", dir, e));
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => missing.push(dir.to_path_buf()),
                Err(e) => return Err(self.fail("inspect the directory", dir, e)),
            }
            cur = dir.parent();
        }
        let Some(top) = missing.pop() else {
            return Ok(parent_of(target));
        };
        let s = match self.stages.iter().position(|s| s.top == top) {
            Some(s) => s,
            None => {
                let dir = artifact_path(
                    &parent_of(&top),
                    &top,
                    TEMP_MARKER,
                    self.token,
                    STAGE_SLOT + self.stages.len() as u32,
                );
                self.step(
                    "create a staging directory for",
                    &top,
                    || vec![Effect::Link(dir.clone())],
                    || fs::create_dir(&dir),
                )?;
                self.stages.push(Stage {
                    top,
                    dir,
                    subdirs: Vec::new(),
                    committed: false,
                });
                self.stages.len() - 1
            }
        };
        self.op_stage[i] = Some(s);
        for sub in missing.into_iter().rev() {
            if self.stages[s].subdirs.contains(&sub) {
                continue;
            }
            let inside = self.stages[s].locate(&sub);
            self.step(
                "create the directory",
                &sub,
                || vec![Effect::Link(inside.clone())],
                || fs::create_dir(&inside),
            )?;
            self.stages[s].subdirs.push(sub);
        }
        Ok(self.locate(i, &parent_of(target)))
    }

    /// Where `path`, in operation `i`'s target directory, currently is.
    pub(super) fn locate(&self, i: usize, path: &Path) -> PathBuf {
        match self.op_stage[i] {
            Some(s) => self.stages[s].locate(path),
            None => path.to_path_buf(),
        }
    }
}
