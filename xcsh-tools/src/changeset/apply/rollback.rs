//! Rollback: undoing every step done so far, in reverse, and naming each file that could
//! not be restored.

use std::fs;
use std::io;
use std::path::Path;

use super::artifacts::{WITHDRAWN_SLOT, artifact_path};
use super::atomic_fs::{rename_noreplace, sync_dir};
use super::journal::{Crashed, Stop};
use super::{Run, parent_of};
use crate::changeset::fault::Effect;
use crate::changeset::{Attention, Op};
use crate::workspace::TEMP_MARKER;

impl Run<'_> {
    /// Undoes everything in reverse order. Returns the files that could not be restored.
    ///
    /// Renames are undone first (they may have moved files into new directories), then new
    /// directories are withdrawn under a temporary name in one step each — so a crash during
    /// rollback, too, never shows a new directory without its files — then everything else.
    pub(super) fn rollback(&mut self) -> Result<Vec<Attention>, Crashed> {
        let cs = self.cs;
        let mut attention = Vec::new();
        let renames = (0..cs.ops.len())
            .rev()
            .filter(|&i| matches!(cs.ops[i], Op::Rename { .. }));
        for i in renames.collect::<Vec<_>>() {
            self.undo_op(i, &mut attention)?;
        }
        for s in (0..self.stages.len()).rev() {
            if !self.stages[s].committed {
                continue;
            }
            let top = self.stages[s].top.clone();
            let dir = artifact_path(
                &parent_of(&top),
                &top,
                TEMP_MARKER,
                self.token,
                WITHDRAWN_SLOT + s as u32,
            );
            let withdrawn = self.step(
                "withdraw the new directory",
                &top,
                || vec![Effect::Rename(top.clone(), dir.clone())],
                || rename_noreplace(&top, &dir),
            );
            match withdrawn {
                Ok(()) => {
                    self.stages[s].dir = dir;
                    self.stages[s].committed = false;
                }
                Err(Stop::Crash(k)) => return Err(Crashed(k)),
                // Clean it up in place below.
                Err(_) => {}
            }
        }
        let others = (0..cs.ops.len())
            .rev()
            .filter(|&i| !matches!(cs.ops[i], Op::Rename { .. }));
        for i in others.collect::<Vec<_>>() {
            self.undo_op(i, &mut attention)?;
        }
        for stage in std::mem::take(&mut self.stages).into_iter().rev() {
            let dirs = stage
                .subdirs
                .iter()
                .rev()
                .chain(std::iter::once(&stage.top));
            for dir in dirs {
                let at = stage.locate(dir);
                let unlink = || vec![Effect::Unlink(at.clone())];
                if self.undo("remove the new directory", dir, unlink, || {
                    fs::remove_dir(&at)
                })? {
                    if stage.committed {
                        attention.push(self.attention(
                            dir,
                            "is a directory created by the failed apply; remove it if it is empty"
                                .to_owned(),
                        ));
                    } else {
                        self.leftovers.push(at);
                    }
                }
            }
        }
        // Best effort: the restored state is already visible; this only makes it durable.
        for dir in &self.dirs_to_sync {
            let _ = sync_dir(dir);
        }
        Ok(attention)
    }

    /// Undoes what was done for operation `i`.
    fn undo_op(&mut self, i: usize, attention: &mut Vec<Attention>) -> Result<(), Crashed> {
        let cs = self.cs;
        let p = std::mem::take(&mut self.progress[i]);
        match &cs.ops[i] {
            Op::Modify { file, .. } => {
                let target = &file.entry.target;
                if let (true, Some(backup)) = (p.committed, &p.backup) {
                    // The backup is the original inode (or its copy): moving it back is
                    // one atomic rename.
                    if self.undo(
                        "restore the original of",
                        target,
                        || vec![Effect::Rename(backup.clone(), target.clone())],
                        || fs::rename(backup, target),
                    )? {
                        attention.push(self.attention(target, format!(
                                "holds the new content; its original is in `{}`: move that back over it",
                                backup.display()
                            )));
                    }
                } else if let Some(backup) = &p.backup {
                    self.remove_artifact(backup)?;
                }
            }
            Op::Create { file, .. } => {
                let target = &file.entry.named;
                let at = self.locate(i, target);
                if p.committed
                    && self.undo(
                        "remove the new file",
                        target,
                        || vec![Effect::Unlink(at.clone())],
                        || fs::remove_file(&at),
                    )?
                {
                    if at == *target {
                        attention.push(self.attention(
                            target,
                            "was created by the failed apply; delete it".to_owned(),
                        ));
                    } else {
                        // Still inside its stage: an artifact, not a visible change.
                        self.leftovers.push(at);
                    }
                }
            }
            Op::Delete { file } => {
                let target = &file.entry.named;
                if let (true, Some(backup)) = (p.committed, &p.backup)
                    && self.undo(
                        "restore the deleted",
                        target,
                        || vec![Effect::Rename(backup.clone(), target.clone())],
                        || rename_noreplace(backup, target),
                    )?
                {
                    attention.push(self.attention(target, format!(
                            "was deleted by the failed apply; its content is in `{}`: rename that back",
                            backup.display()
                        )));
                }
            }
            Op::Rename { from, to } => {
                let (from, to) = (&from.entry.named, &to.entry.named);
                let back = || vec![Effect::Rename(to.clone(), from.clone())];
                if p.committed
                    && self.undo("rename back", to, back, || rename_noreplace(to, from))?
                {
                    attention.push(self.attention(
                        from,
                        format!(
                            "was renamed to `{}` by the failed apply; rename it back",
                            cs.ws.display(to)
                        ),
                    ));
                }
            }
        }
        if let Some(temp) = &p.temp {
            self.remove_artifact(temp)?;
        }
        Ok(())
    }

    /// Runs an undo step. `Ok(true)` means it failed (the caller records attention).
    fn undo(
        &self,
        what: &'static str,
        path: &Path,
        effects: impl FnOnce() -> Vec<Effect>,
        f: impl FnOnce() -> io::Result<()>,
    ) -> Result<bool, Crashed> {
        match self.step(what, path, effects, f) {
            Ok(()) => Ok(false),
            Err(Stop::Crash(k)) => Err(Crashed(k)),
            Err(_) => Ok(true),
        }
    }

    fn remove_artifact(&mut self, path: &Path) -> Result<(), Crashed> {
        let unlink = || vec![Effect::Unlink(path.to_path_buf())];
        if self.undo("remove the temporary file", path, unlink, || {
            fs::remove_file(path)
        })? {
            self.leftovers.push(path.to_path_buf());
        }
        Ok(())
    }

    fn attention(&self, path: &Path, problem: String) -> Attention {
        Attention {
            path: self.cs.ws.display(path),
            problem,
        }
    }
}
