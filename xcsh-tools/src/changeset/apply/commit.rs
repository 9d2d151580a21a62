//! The forward pass: prepare out of sight, check again, make each operation visible in one
//! rename, sync the directories; on success, drop the backups.

use std::fs;
use std::io;
use std::path::Path;

use super::atomic_fs::{rename_noreplace, sync_dir};
use super::durable::State;
use super::journal::Stop;
use super::stale::{Snap, read_for_splicing};
use super::{ApplyReport, Run, parent_of};
use crate::changeset::fault::Effect;
use crate::changeset::undo::store as undo_store;
use crate::changeset::{ApplyError, NewContent, Op, StaleFile, StaleReason};

impl Run<'_> {
    /// `snaps` holds what the first look saw; a file modified by splicing has none until it
    /// is read here.
    pub(super) fn forward(&mut self, mut snaps: Vec<Option<Snap>>) -> Result<(), Stop> {
        let cs = self.cs;
        // Prepare: nothing visible changes yet.
        for (i, op) in cs.ops.iter().enumerate() {
            match op {
                Op::Modify { file, content } => {
                    self.plan.phase("read the original (and splice)");
                    let target = &file.entry.target;
                    let perms = fs::metadata(target)
                        .map_err(|e| self.fail("read the permissions of", target, e))?
                        .permissions();
                    let dir = parent_of(target);
                    match content {
                        NewContent::Bytes(bytes) => {
                            self.write_temp(i, target, &dir, bytes, Some(perms))?;
                        }
                        NewContent::Splices(splices) => {
                            // One read: the content check and the original to splice into.
                            let (original, snap) = match read_for_splicing(file) {
                                Ok(read) => read,
                                Err(reason) => {
                                    return Err(self.stale_at(&file.entry.named, reason, &snaps));
                                }
                            };
                            snaps[i] = Some(snap);
                            let spliced = splices.apply(&original).map_err(|problem| {
                                let e = io::Error::new(io::ErrorKind::InvalidData, problem);
                                self.fail("splice the edits into", target, e)
                            })?;
                            drop(original);
                            self.write_temp(i, target, &dir, &spliced, Some(perms))?;
                        }
                    }
                }
                Op::Create {
                    file,
                    content,
                    perms,
                } => {
                    let dir = self.prepare_parent(i, &file.entry.named)?;
                    self.write_temp(i, &file.entry.named, &dir, content, perms.clone())?;
                }
                Op::Rename { to, .. } => {
                    self.prepare_parent(i, &to.entry.named)?;
                }
                Op::Delete { .. } => {}
            }
        }
        // A second, cheap look: the prepare phase may have taken a while.
        self.plan.phase("second stale check");
        cs.check_all(Some(&snaps), false).map_err(Stop::Stale)?;

        // The commit point: every new content and directory is durable; the journal that
        // lets recovery finish the job becomes durable too.
        self.sync_prepared()?;
        self.record(State::Committed)?;

        // Commit: each operation becomes visible in one atomic rename. New files in new
        // directories land in their stage first, the stages then appear whole, and renames
        // come last because they may move files into a stage's directory.
        for (i, op) in cs.ops.iter().enumerate() {
            match op {
                Op::Modify { file, .. } => {
                    let target = &file.entry.target;
                    let backup = self.backup(i, target)?;
                    self.progress[i].backup = Some(backup);
                    let temp = self.progress[i].temp.clone().ok_or_else(|| {
                        self.fail("find the temporary file for", target, missing_temp())
                    })?;
                    self.step(
                        "replace",
                        target,
                        || vec![Effect::Rename(temp.clone(), target.clone())],
                        || fs::rename(&temp, target),
                    )?;
                    self.progress[i].temp = None;
                    self.progress[i].committed = true;
                    self.sync_later(target);
                }
                Op::Create { file, .. } => {
                    let target = &file.entry.named;
                    let temp = self.progress[i].temp.clone().ok_or_else(|| {
                        self.fail("find the temporary file for", target, missing_temp())
                    })?;
                    let dest = self.locate(i, target);
                    self.step(
                        "create",
                        target,
                        || vec![Effect::Rename(temp.clone(), dest.clone())],
                        || rename_noreplace(&temp, &dest),
                    )?;
                    self.progress[i].temp = None;
                    self.progress[i].committed = true;
                    self.sync_later(target);
                }
                Op::Rename { .. } => {}
                Op::Delete { file } => {
                    let target = &file.entry.named;
                    let backup = self.backup_path(i, target);
                    self.step(
                        "delete",
                        target,
                        || vec![Effect::Rename(target.clone(), backup.clone())],
                        || rename_noreplace(target, &backup),
                    )?;
                    self.progress[i].backup = Some(backup);
                    self.progress[i].committed = true;
                    self.sync_later(target);
                }
            }
        }
        for s in 0..self.stages.len() {
            let (dir, top) = (self.stages[s].dir.clone(), self.stages[s].top.clone());
            self.step(
                "create the directory",
                &top,
                || vec![Effect::Rename(dir.clone(), top.clone())],
                || rename_noreplace(&dir, &top),
            )?;
            self.stages[s].committed = true;
            self.sync_later(&top);
            for sub in self.stages[s].subdirs.clone() {
                self.sync_later(&sub);
            }
        }
        // A rename across directories changes two of them, and a power loss may keep the
        // fsync of one and not the other: if the source's were kept alone, the file would be
        // at neither name. So the destination is made durable before the source can be: every
        // directory changed so far first (a stage the destination lies in among them), then
        // each destination right after its rename; the sources are synced below. A power loss
        // in between leaves the file at both names, which recovery resolves (found by the
        // power-loss simulation).
        if cs.ops.iter().any(|op| matches!(op, Op::Rename { .. })) {
            self.sync_dirs()?;
        }
        for (i, op) in cs.ops.iter().enumerate() {
            if let Op::Rename { from, to } = op {
                let (from, to) = (&from.entry.named, &to.entry.named);
                self.step(
                    "rename",
                    from,
                    || vec![Effect::Rename(from.clone(), to.clone())],
                    || rename_noreplace(from, to),
                )?;
                self.progress[i].committed = true;
                let dest = parent_of(to);
                self.step(
                    "sync the directory",
                    &dest,
                    || vec![Effect::SyncDir(dest.clone())],
                    || sync_dir(&dest),
                )?;
                self.sync_later(from);
            }
        }
        // Make the renames durable before the backups go.
        self.sync_dirs()
    }

    /// Makes durable the entries of every directory changed since the last time.
    fn sync_dirs(&mut self) -> Result<(), Stop> {
        let dirs = std::mem::take(&mut self.unsynced);
        self.sync_entries(dirs, false, "sync the directories on the filesystem of")
    }

    /// The file `named`, read for splicing, is stale: look at every file again so the error
    /// names all the stale ones, as the first look would have.
    fn stale_at(&self, named: &Path, reason: StaleReason, snaps: &[Option<Snap>]) -> Stop {
        let stale = self.cs.check_all(Some(snaps), false).err();
        Stop::Stale(stale.unwrap_or_else(|| {
            // It changed back meanwhile; what was read is what counts.
            vec![StaleFile {
                path: self.cs.ws.display(named),
                reason,
            }]
        }))
    }

    fn sync_later(&mut self, path: &Path) {
        if let Some(parent) = path.parent() {
            self.dirs_to_sync.insert(parent.to_path_buf());
            self.unsynced.insert(parent.to_path_buf());
        }
    }

    /// After a successful commit: keep the undo record (or drop the one this apply reverts),
    /// remove backups and report.
    pub(super) fn finish(mut self) -> Result<ApplyReport, ApplyError> {
        let mut report = ApplyReport::default();
        // While the backups (the originals) still exist. The apply is done whatever happens
        // here: a record that cannot be kept is reported, not an error.
        let root = self.cs.ws.root();
        self.plan.phase("keep the undo record");
        match self.cs.undoes {
            Some(id) => {
                if let Err(e) = undo_store::forget(root, id) {
                    report.undo_not_kept = Some(format!(
                        "the undo record #{id} this apply reverted could not be removed ({e}); the next undo will find it already undone"
                    ));
                }
            }
            None => match undo_store::keep(
                root,
                &self.journal(State::Committed),
                Some(self.effect.clone()),
                self.cs.undo_limits(),
            ) {
                Ok(id) => report.undo = Some(id),
                Err(why) => report.undo_not_kept = Some(why),
            },
        }
        self.plan.phase("report");
        let mut emptied = std::collections::BTreeSet::new();
        for (i, op) in self.cs.ops.iter().enumerate() {
            match op {
                Op::Modify { content, .. } => {
                    report.modified += 1;
                    report.bytes_written += content.len();
                }
                Op::Create { content, .. } => {
                    report.created += 1;
                    report.bytes_written += content.len() as u64;
                }
                Op::Delete { .. } => report.deleted += 1,
                Op::Rename { .. } => report.renamed += 1,
            }
            if let Some(backup) = self.progress[i].backup.take() {
                let unlink = || vec![Effect::Unlink(backup.clone())];
                match self.step("remove the backup", &backup, unlink, || {
                    fs::remove_file(&backup)
                }) {
                    Ok(()) => {
                        emptied.insert(parent_of(&backup));
                    }
                    Err(Stop::Crash(step)) => return Err(ApplyError::SimulatedCrash { step }),
                    // The change is done and durable; a stray backup is only clutter.
                    Err(_) => self.leftovers.push(backup),
                }
            }
        }
        // The removals must be durable before the journal's: once it is gone, nothing names
        // the backups any more, and a power loss bringing them back would leave them behind
        // for good (found by the power-loss simulation). A failure only costs that risk.
        if let Err(Stop::Crash(step)) =
            self.sync_entries(emptied, false, "sync the directories on the filesystem of")
        {
            return Err(ApplyError::SimulatedCrash { step });
        }
        if let Err(step) = self.drop_journal() {
            return Err(ApplyError::SimulatedCrash { step });
        }
        report.leftovers = self.leftovers;
        Ok(report)
    }
}

fn missing_temp() -> io::Error {
    io::Error::other("internal error: the temporary file was not prepared")
}
