//! Writing the apply's journal on disk (see [`durable`](super::durable)) at its two points:
//! prepared, before the first artifact; committed, once every new content is durable.

use std::path::{Path, PathBuf};

use super::durable::JOURNAL_NEW;
use super::durable::{self, JOp, JStage, Journal, State, enc, journal_path};
use super::journal::Stop;
use super::lock::STATE_DIR;
use super::{Run, parent_of};
use crate::changeset::Op;
use crate::changeset::fault::Effect;

impl Run<'_> {
    pub(super) fn journal(&self, state: State) -> Journal {
        let root = self.cs.ws.root();
        let e = |p: &Path| enc(root, p);
        let mut paths = Vec::new();
        let mut ops = Vec::new();
        for (i, op) in self.cs.ops.iter().enumerate() {
            match op {
                Op::Modify { file, .. } => {
                    paths.push(e(&file.entry.named));
                    paths.push(e(&file.entry.target));
                    if state == State::Committed {
                        let target = &file.entry.target;
                        ops.push(JOp::Modify {
                            target: e(target),
                            temp: e(self.progress[i].temp.as_deref().unwrap_or(target)),
                            backup: e(&self.backup_path(i, target)),
                            old: file.expect.into(),
                            new: self.progress[i].new_fp.unwrap_or(file.expect).into(),
                        });
                    }
                }
                Op::Create { file, .. } => {
                    let target = &file.entry.named;
                    paths.push(e(target));
                    if state == State::Committed {
                        ops.push(JOp::Create {
                            target: e(target),
                            temp: e(self.progress[i].temp.as_deref().unwrap_or(target)),
                            dest: e(&self.locate(i, target)),
                            new: self.progress[i]
                                .new_fp
                                .unwrap_or_else(|| crate::changeset::Fingerprint::of(""))
                                .into(),
                        });
                    }
                }
                Op::Delete { file } => {
                    let target = &file.entry.named;
                    paths.push(e(target));
                    if state == State::Committed {
                        ops.push(JOp::Delete {
                            target: e(target),
                            backup: e(&self.backup_path(i, target)),
                            old: file.expect.into(),
                        });
                    }
                }
                Op::Rename { from, to } => {
                    paths.push(e(&from.entry.named));
                    paths.push(e(&to.entry.named));
                    if state == State::Committed {
                        ops.push(JOp::Rename {
                            from: e(&from.entry.named),
                            to: e(&to.entry.named),
                            fp: from.expect.into(),
                        });
                    }
                }
            }
        }
        let stages = if state == State::Committed {
            self.stages
                .iter()
                .map(|s| JStage {
                    dir: e(&s.dir),
                    top: e(&s.top),
                    subdirs: s.subdirs.iter().map(|d| e(d)).collect(),
                })
                .collect()
        } else {
            Vec::new()
        };
        Journal {
            state,
            root: enc(Path::new(""), root),
            token: format!("{:08x}", self.token),
            pid: std::process::id(),
            files: self.cs.ops.len(),
            paths,
            ops,
            stages,
            undoes: self.cs.undoes,
            effect: (state == State::Committed).then(|| self.effect.clone()),
            undo_limits: (state == State::Committed).then(|| {
                let limits = self.cs.undo_limits();
                (limits.keep(), limits.max_bytes())
            }),
        }
    }

    /// Writes the journal in `state`: the new version, then (a separate step) its rename
    /// into place and the fsync of `.xcsh`.
    pub(super) fn record(&self, state: State) -> Result<(), Stop> {
        let root = self.cs.ws.root();
        self.plan.phase(match state {
            State::Prepared => "encode the prepared journal",
            State::Committed => "encode the committed journal",
        });
        let bytes = durable::encode(&self.journal(state));
        let path = journal_path(root);
        let what = match state {
            State::Prepared => "prepare the journal",
            State::Committed => "write the commit record",
        };
        let new = || root.join(STATE_DIR).join(JOURNAL_NEW);
        self.step(
            what,
            &path,
            || {
                vec![
                    Effect::Link(new()),
                    Effect::Write(new()),
                    Effect::Sync(new()),
                ]
            },
            || durable::write_new(root, &bytes),
        )?;
        let what = match state {
            State::Prepared => "install the journal",
            State::Committed => "commit",
        };
        self.step(
            what,
            &path,
            || {
                vec![
                    Effect::Rename(new(), path.clone()),
                    Effect::SyncDir(root.join(STATE_DIR)),
                ]
            },
            || durable::install_new(root),
        )
    }

    /// Makes the new contents not fsynced yet and the directories holding the temporary files
    /// and stages durable, so that what the committed journal names is there after a power
    /// loss: one `syncfs` per filesystem where that is as durable, fsyncs elsewhere.
    pub(super) fn sync_prepared(&self) -> Result<(), Stop> {
        let mut dirs = std::collections::BTreeSet::new();
        for p in &self.progress {
            if let Some(temp) = &p.temp {
                dirs.insert(parent_of(temp));
            }
        }
        for s in &self.stages {
            dirs.insert(parent_of(&s.top));
            dirs.insert(s.dir.clone());
            for sub in &s.subdirs {
                dirs.insert(s.locate(sub));
            }
        }
        let data = self
            .progress
            .iter()
            .any(|p| p.temp.is_some() && p.fs_synced);
        self.sync_entries(
            dirs,
            data,
            "flush to disk the new contents on the filesystem of",
        )
    }

    /// Makes the entries of `dirs` durable: a `syncfs` of every watched filesystem (described
    /// as `batch`) if one of them lies there or `data` (unsynced contents there) says so, then
    /// an fsync of each directory elsewhere.
    pub(super) fn sync_entries(
        &self,
        dirs: std::collections::BTreeSet<PathBuf>,
        data: bool,
        batch: &'static str,
    ) -> Result<(), Stop> {
        let (batched, single): (Vec<PathBuf>, Vec<PathBuf>) =
            dirs.into_iter().partition(|d| self.fs.covers_dir(d));
        if data || !batched.is_empty() {
            for (i, on) in self.fs.filesystems() {
                self.step(
                    batch,
                    on,
                    || vec![Effect::SyncFs(on.to_path_buf())],
                    || self.fs.sync(i),
                )?;
            }
        }
        for dir in single {
            self.step(
                "sync the directory",
                &dir,
                || vec![Effect::SyncDir(dir.clone())],
                || super::atomic_fs::sync_dir(&dir),
            )?;
        }
        Ok(())
    }

    /// Removes the journal once the apply is done or undone. A failure leaves it as a
    /// leftover: the next recovery finds nothing left to do and removes it.
    pub(super) fn drop_journal(&mut self) -> Result<(), usize> {
        let root = self.cs.ws.root();
        let path: PathBuf = journal_path(root);
        let effects = || {
            let dir = root.join(STATE_DIR);
            vec![
                Effect::Unlink(dir.join(JOURNAL_NEW)),
                Effect::Unlink(path.clone()),
                Effect::SyncDir(dir),
            ]
        };
        match self.step("remove the journal", &path, effects, || {
            durable::remove(root)
        }) {
            Ok(()) => Ok(()),
            Err(Stop::Crash(k)) => Err(k),
            Err(_) => {
                self.leftovers.push(path);
                Ok(())
            }
        }
    }
}
