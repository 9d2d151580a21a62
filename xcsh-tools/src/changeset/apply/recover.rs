//! Recovery of an apply interrupted by a crash: finish it (its journal was committed) or
//! undo it (it was not, or a rollback was under way), then remove every artifact it left.

use std::collections::BTreeSet;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use super::atomic_fs::{rename_noreplace, sync_dir};
use super::durable::{self, JOp, Journal, State, dec, enc, journal_path};
use super::lock::{LockError, RootLock};
use crate::changeset::Fingerprint;
use crate::workspace::{TOKEN_LEN, is_temp_artifact};

/// What [`recover`] found and did.
///
/// ```
/// # let dir = tempfile::tempdir()?;
/// let report = xcsh_tools::changeset::recover(dir.path())?;
/// assert_eq!(report.to_string(), "nothing to do");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RecoveryReport {
    /// The journal of the interrupted apply, if one was found (absolute path).
    pub journal: Option<PathBuf>,
    /// What was done about it.
    pub outcome: Recovered,
    /// Temporary files, backups and staging directories of the interrupted apply removed.
    pub artifacts_removed: usize,
}

/// What [`recover`] did with an interrupted apply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Recovered {
    /// No apply was interrupted.
    NothingToDo,
    /// The apply had reached its commit point: it was finished; all its files are new.
    RolledForward {
        /// Files (operations) in the apply.
        files: usize,
    },
    /// The apply had not reached its commit point, or was being undone: it was undone; all
    /// its files are as before.
    RolledBack {
        /// Files (operations) in the apply.
        files: usize,
    },
}

impl fmt::Display for RecoveryReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural = |n: usize| if n == 1 { "" } else { "s" };
        match self.outcome {
            Recovered::NothingToDo => f.write_str("nothing to do"),
            Recovered::RolledForward { files } => {
                write!(f, "rolled forward {files} file{}", plural(files))
            }
            Recovered::RolledBack { files } => {
                write!(f, "rolled back {files} file{}", plural(files))
            }
        }?;
        if self.artifacts_removed > 0 {
            write!(
                f,
                " ({} temporary file{} removed)",
                self.artifacts_removed,
                plural(self.artifacts_removed)
            )?;
        }
        Ok(())
    }
}

/// Why [`recover`] could not recover. In every case it has written nothing to the tree.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecoveryError {
    /// Another process (or another apply in this one) is applying in this root right now.
    #[error(
        "an apply is running in this workspace: `{}` is held by {holder}; wait for it to \
         finish and try again",
        lock.display()
    )]
    Busy {
        /// The lock file.
        lock: PathBuf,
        /// Who holds it ("pid 123 on host h").
        holder: String,
    },
    /// The journal is corrupt, truncated, foreign or of another version.
    #[error(
        "the apply journal `{}` cannot be used: {problem}. xcsh has changed no file; check \
         the files of the last apply, then move the journal away to go on",
        path.display()
    )]
    BadJournal {
        /// The journal file.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
    },
    /// Files of the interrupted apply changed since the crash, so it can be neither finished
    /// nor undone safely.
    #[error(
        "the interrupted apply recorded in `{}` can be neither finished nor undone: {} file(s) \
         changed since it stopped: {}. xcsh has changed no file; check them, then move the \
         journal away to go on",
        path.display(), files.len(), files.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ")
    )]
    Conflict {
        /// The journal file.
        path: PathBuf,
        /// The files (root-relative) neither old nor new.
        files: Vec<String>,
    },
    /// A filesystem step of the recovery failed. Running it again continues where it stopped.
    #[error(
        "recovery could not {step} `{}`: {source}; fix the cause and run `xcsh recover` again",
        path.display()
    )]
    Io {
        /// The step ("rename").
        step: String,
        /// The file it failed on.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
}

/// Finishes or undoes an apply in `root` that a crash interrupted, and removes what it left
/// behind (temporary files, backups, staging directories, its journal and lock). Safe to run
/// at any time: with no interrupted apply it does nothing; run again after a crash of its
/// own, it carries on. The tools, `ChangeSet::apply`, `Workspace::new` and `xcsh recover`
/// call it for you.
///
/// ```
/// # use xcsh_tools::changeset::{recover, Recovered};
/// # let dir = tempfile::tempdir()?;
/// assert_eq!(recover(dir.path())?.outcome, Recovered::NothingToDo);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn recover(root: impl AsRef<Path>) -> Result<RecoveryReport, RecoveryError> {
    let root = root.as_ref();
    // An apply of this process in this root: busy, as the file lock would tell another
    // process (waiting could be waiting for itself, when called from inside the apply).
    if let Ok(canonical) = fs::canonicalize(root)
        && super::applying_in(&canonical)
    {
        return Err(RecoveryError::Busy {
            lock: canonical
                .join(super::lock::STATE_DIR)
                .join(super::lock::LOCK_FILE),
            holder: super::lock::this_process(),
        });
    }
    // Otherwise one apply or recovery at a time in this process, as the file lock does
    // across processes: a recovery that took the lock between an apply's turn and its lock
    // would make that apply fail as "busy".
    let _one_at_a_time = super::lock_ignoring_poison(&super::APPLYING);
    recover_serialised(root)
}

fn recover_serialised(root: &Path) -> Result<RecoveryReport, RecoveryError> {
    let root = fs::canonicalize(root).map_err(|source| RecoveryError::Io {
        step: "open the workspace root".to_owned(),
        path: root.to_path_buf(),
        source,
    })?;
    // Nothing of an apply here: nothing to do, and nothing written.
    if !has_state(&root) {
        return Ok(RecoveryReport {
            journal: None,
            outcome: Recovered::NothingToDo,
            artifacts_removed: 0,
        });
    }
    let lock = RootLock::acquire(&root).map_err(lock_error)?;
    let result = recover_locked(&root);
    lock.release();
    result
}

/// Whether `root` has an apply journal (one stat).
pub(crate) fn has_journal(root: &Path) -> bool {
    fs::symlink_metadata(journal_path(root)).is_ok()
}

/// Whether `root` has an apply journal, or a lock, half-written journal or empty `.xcsh` an
/// apply may have left (a kill can land between creating `.xcsh` and the lock in it, or
/// between removing them). One stat when there is no `.xcsh`.
pub(crate) fn has_state(root: &Path) -> bool {
    let dir = root.join(super::lock::STATE_DIR);
    if fs::symlink_metadata(&dir).is_err() {
        return false;
    }
    has_journal(root)
        || fs::symlink_metadata(dir.join(super::lock::LOCK_FILE)).is_ok()
        || fs::symlink_metadata(dir.join(durable::JOURNAL_NEW)).is_ok()
        || fs::read_dir(&dir).is_ok_and(|mut entries| entries.next().is_none())
}

pub(crate) fn lock_error(e: LockError) -> RecoveryError {
    match e {
        LockError::Held { lock, holder } => RecoveryError::Busy { lock, holder },
        LockError::Io { path, source } => RecoveryError::Io {
            step: "lock".to_owned(),
            path,
            source,
        },
    }
}

fn io_err(step: &str, path: &Path) -> impl FnOnce(io::Error) -> RecoveryError {
    let (step, path) = (step.to_owned(), path.to_path_buf());
    move |source| RecoveryError::Io { step, path, source }
}

/// [`recover`] with the lock held.
pub(crate) fn recover_locked(root: &Path) -> Result<RecoveryReport, RecoveryError> {
    let jpath = journal_path(root);
    let bytes = match fs::read(&jpath) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            // At most a half-written first version: nothing had begun.
            let _ = fs::remove_file(root.join(super::lock::STATE_DIR).join(durable::JOURNAL_NEW));
            return Ok(RecoveryReport {
                journal: None,
                outcome: Recovered::NothingToDo,
                artifacts_removed: 0,
            });
        }
        Err(e) => return Err(io_err("read the apply journal", &jpath)(e)),
    };
    let bad = |problem: String| RecoveryError::BadJournal {
        path: jpath.clone(),
        problem,
    };
    let journal = durable::decode(&bytes).map_err(bad)?;
    if journal.root != enc(Path::new(""), root) {
        return Err(bad(format!(
            "it was written for another workspace (`{}`); it may have been copied here",
            journal.root.trim_start_matches("u:")
        )));
    }
    let plan = Plan::decode(root, &journal).ok_or_else(|| {
        bad("it is corrupt (a path outside the workspace, or a bad fingerprint)".to_owned())
    })?;
    let files = journal.files;
    let outcome = match journal.state {
        State::Prepared => Recovered::RolledBack { files },
        State::Committed => match plan.forward_todo() {
            Ok(todo) => {
                plan.forward(&todo)?;
                // As the apply would have on finishing, while its backups still exist: keep
                // its undo record (under the workspace's limits, which the journal names), or
                // drop the record it reverted. Best effort: the files are what recovery is for.
                match journal.undoes {
                    Some(id) => {
                        let _ = crate::changeset::undo::store::forget(root, id);
                    }
                    None => {
                        let _ = crate::changeset::undo::store::keep(
                            root,
                            &journal,
                            journal.effect.clone(),
                            journal.undo_limits.map_or_else(
                                crate::changeset::UndoLimits::default,
                                |(keep, max)| crate::changeset::UndoLimits::new(keep, max),
                            ),
                        );
                    }
                }
                Recovered::RolledForward { files }
            }
            Err(conflicts) => match plan.backward_todo() {
                Ok(todo) => {
                    plan.backward(&todo)?;
                    Recovered::RolledBack { files }
                }
                Err(_) => {
                    return Err(RecoveryError::Conflict {
                        path: jpath,
                        files: conflicts.iter().map(|p| display(root, p)).collect(),
                    });
                }
            },
        },
    };
    let removed = plan.remove_artifacts()?;
    for dir in &plan.dirs {
        match sync_dir(dir) {
            // Removed by the roll back (a new directory).
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            other => other.map_err(io_err("sync the directory", dir))?,
        }
    }
    durable::remove(root).map_err(io_err("remove the apply journal", &jpath))?;
    Ok(RecoveryReport {
        journal: Some(jpath),
        outcome,
        artifacts_removed: removed,
    })
}

fn display(root: &Path, p: &Path) -> String {
    p.strip_prefix(root).unwrap_or(p).display().to_string()
}

/// What is at a path (also what undo compares a file with).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum At {
    Missing,
    File(Fingerprint),
    Dir,
    Other,
}

pub(crate) fn at(path: &Path) -> At {
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => At::Missing,
        Err(_) => At::Other,
        Ok(m) if m.is_dir() => At::Dir,
        Ok(m) if m.is_file() => Fingerprint::of_file(path).map_or(At::Other, At::File),
        Ok(_) => At::Other,
    }
}

enum Op {
    Modify {
        target: PathBuf,
        temp: PathBuf,
        backup: PathBuf,
        old: Fingerprint,
        new: Fingerprint,
    },
    Create {
        target: PathBuf,
        temp: PathBuf,
        dest: PathBuf,
        new: Fingerprint,
    },
    Delete {
        target: PathBuf,
        backup: PathBuf,
        old: Fingerprint,
    },
    Rename {
        from: PathBuf,
        to: PathBuf,
        fp: Fingerprint,
    },
}

struct Stage {
    dir: PathBuf,
    top: PathBuf,
    subdirs: Vec<PathBuf>,
}

/// The journal, decoded: absolute paths.
struct Plan {
    token: String,
    ops: Vec<Op>,
    stages: Vec<Stage>,
    /// Every directory that may hold an artifact of the apply (ancestors of its paths).
    dirs: BTreeSet<PathBuf>,
}

/// Step `k` of a roll forward or back: which operation (or stage, after the operations).
type Todo = Vec<usize>;

impl Plan {
    fn decode(root: &Path, j: &Journal) -> Option<Self> {
        let d = |s: &String| dec(root, s);
        let mut ops = Vec::new();
        for op in &j.ops {
            ops.push(match op {
                JOp::Modify {
                    target,
                    temp,
                    backup,
                    old,
                    new,
                } => Op::Modify {
                    target: d(target)?,
                    temp: d(temp)?,
                    backup: d(backup)?,
                    old: old.fingerprint()?,
                    new: new.fingerprint()?,
                },
                JOp::Create {
                    target,
                    temp,
                    dest,
                    new,
                } => Op::Create {
                    target: d(target)?,
                    temp: d(temp)?,
                    dest: d(dest)?,
                    new: new.fingerprint()?,
                },
                JOp::Delete {
                    target,
                    backup,
                    old,
                } => Op::Delete {
                    target: d(target)?,
                    backup: d(backup)?,
                    old: old.fingerprint()?,
                },
                JOp::Rename { from, to, fp } => Op::Rename {
                    from: d(from)?,
                    to: d(to)?,
                    fp: fp.fingerprint()?,
                },
            });
        }
        let mut stages = Vec::new();
        for s in &j.stages {
            stages.push(Stage {
                dir: d(&s.dir)?,
                top: d(&s.top)?,
                subdirs: s.subdirs.iter().map(d).collect::<Option<_>>()?,
            });
        }
        let mut dirs = BTreeSet::new();
        for p in &j.paths {
            let p = d(p)?;
            let mut cur = p.parent();
            while let Some(dir) = cur {
                if !dir.starts_with(root) || !dirs.insert(dir.to_path_buf()) {
                    break;
                }
                cur = dir.parent();
            }
        }
        dirs.retain(|d| d.is_dir());
        Some(Self {
            token: j.token.to_ascii_lowercase(),
            ops,
            stages,
            dirs,
        })
    }

    /// The steps left to finish the apply, or the files that prevent it.
    fn forward_todo(&self) -> Result<Todo, Vec<PathBuf>> {
        let (mut todo, mut conflicts) = (Vec::new(), Vec::new());
        for (i, op) in self.ops.iter().enumerate() {
            let (done, can, name) = match op {
                Op::Modify {
                    target,
                    temp,
                    new,
                    old,
                    ..
                } => {
                    let t = at(target);
                    (
                        t == At::File(*new),
                        t == At::File(*old) && at(temp) == At::File(*new),
                        target,
                    )
                }
                Op::Create {
                    target,
                    temp,
                    dest,
                    new,
                } => {
                    let t = at(target);
                    let done = t == At::File(*new)
                        || (t == At::Missing && dest != target && at(dest) == At::File(*new));
                    (done, t == At::Missing && at(temp) == At::File(*new), target)
                }
                Op::Delete { target, old, .. } => {
                    let t = at(target);
                    (t == At::Missing, t == At::File(*old), target)
                }
                Op::Rename { from, to, fp } => {
                    let (f, t) = (at(from), at(to));
                    // At both names: a power loss kept the destination's directory entry
                    // and lost the source's removal (the apply fsyncs them in that order).
                    (
                        f == At::Missing && t == At::File(*fp),
                        f == At::File(*fp) && (t == At::Missing || t == At::File(*fp)),
                        from,
                    )
                }
            };
            if !done && can {
                todo.push(i);
            } else if !done {
                conflicts.push(name.clone());
            }
        }
        for (s, stage) in self.stages.iter().enumerate() {
            let (d, t) = (at(&stage.dir), at(&stage.top));
            if d == At::Dir && t == At::Missing {
                todo.push(self.ops.len() + s);
            } else if !(d == At::Missing && t == At::Dir) {
                conflicts.push(stage.top.clone());
            }
        }
        if conflicts.is_empty() {
            Ok(todo)
        } else {
            Err(conflicts)
        }
    }

    /// Finishes the apply in the order it commits: files, new directories, renames.
    fn forward(&self, todo: &Todo) -> Result<(), RecoveryError> {
        let n = self.ops.len();
        let is_rename = |i: &usize| *i < n && matches!(self.ops[*i], Op::Rename { .. });
        let firsts = todo.iter().filter(|i| **i < n && !is_rename(i));
        let stages = todo.iter().filter(|i| **i >= n);
        let renames = todo.iter().filter(|i| is_rename(i));
        for &i in firsts.chain(stages).chain(renames) {
            if i >= n {
                let s = &self.stages[i - n];
                rename_noreplace(&s.dir, &s.top).map_err(io_err("rename", &s.dir))?;
                continue;
            }
            match &self.ops[i] {
                Op::Modify {
                    target,
                    temp,
                    backup,
                    ..
                } => {
                    // Keep the original as the apply would have (for its undo record); a
                    // filesystem without hard links just keeps none.
                    if fs::symlink_metadata(backup).is_err() {
                        let _ = fs::hard_link(target, backup);
                    }
                    fs::rename(temp, target).map_err(io_err("replace", target))?
                }
                Op::Create { temp, dest, .. } => {
                    rename_noreplace(temp, dest).map_err(io_err("create", dest))?
                }
                Op::Delete { target, backup, .. } => {
                    // Moved to its backup name, as the apply deletes: kept for the undo
                    // record, removed with the other artifacts.
                    if rename_noreplace(target, backup).is_err() {
                        fs::remove_file(target).map_err(io_err("delete", target))?
                    }
                }
                Op::Rename { from, to, fp } => {
                    if at(to) == At::File(*fp) {
                        // Already at both names (see `forward_todo`).
                        fs::remove_file(from).map_err(io_err("rename", from))?
                    } else {
                        rename_noreplace(from, to).map_err(io_err("rename", from))?
                    }
                }
            }
        }
        Ok(())
    }

    /// The steps left to undo the apply, or the files that prevent it.
    fn backward_todo(&self) -> Result<Todo, Vec<PathBuf>> {
        let (mut todo, mut conflicts) = (Vec::new(), Vec::new());
        for (i, op) in self.ops.iter().enumerate() {
            let (undone, can, name) = match op {
                Op::Modify {
                    target,
                    backup,
                    old,
                    new,
                    ..
                } => {
                    let t = at(target);
                    (
                        t == At::File(*old),
                        t == At::File(*new) && at(backup) == At::File(*old),
                        target,
                    )
                }
                Op::Create { target, new, .. } => {
                    let t = at(target);
                    (t == At::Missing, t == At::File(*new), target)
                }
                Op::Delete {
                    target,
                    backup,
                    old,
                } => {
                    let t = at(target);
                    (
                        t == At::File(*old),
                        t == At::Missing && at(backup) == At::File(*old),
                        target,
                    )
                }
                Op::Rename { from, to, fp } => {
                    let (f, t) = (at(from), at(to));
                    (
                        f == At::File(*fp) && t == At::Missing,
                        t == At::File(*fp) && (f == At::Missing || f == At::File(*fp)),
                        from,
                    )
                }
            };
            if !undone && can {
                todo.push(i);
            } else if !undone {
                conflicts.push(name.clone());
            }
        }
        if conflicts.is_empty() {
            Ok(todo)
        } else {
            Err(conflicts)
        }
    }

    /// Undoes the apply: renames first (they may lead into new directories), then files,
    /// then the new directories, if empty.
    fn backward(&self, todo: &Todo) -> Result<(), RecoveryError> {
        let is_rename = |i: &&usize| matches!(self.ops[**i], Op::Rename { .. });
        let renames = todo.iter().filter(is_rename);
        let others = todo.iter().filter(|i| !is_rename(i));
        for &i in renames.chain(others) {
            match &self.ops[i] {
                Op::Modify { target, backup, .. } => {
                    fs::rename(backup, target).map_err(io_err("restore", target))?
                }
                Op::Create { target, .. } => {
                    fs::remove_file(target).map_err(io_err("remove", target))?
                }
                Op::Delete { target, backup, .. } => {
                    rename_noreplace(backup, target).map_err(io_err("restore", target))?
                }
                Op::Rename { from, to, fp } => {
                    if at(from) == At::File(*fp) {
                        // At both names (see `forward_todo`).
                        fs::remove_file(to).map_err(io_err("rename back", to))?
                    } else {
                        rename_noreplace(to, from).map_err(io_err("rename back", to))?
                    }
                }
            }
        }
        for s in self.stages.iter().rev() {
            for dir in s.subdirs.iter().rev().chain(std::iter::once(&s.top)) {
                // Not empty: something else was put there since; leave it.
                let _ = fs::remove_dir(dir);
            }
        }
        Ok(())
    }

    /// Removes every artifact carrying this apply's token.
    fn remove_artifacts(&self) -> Result<usize, RecoveryError> {
        let mut removed = 0;
        for dir in &self.dirs {
            let Ok(entries) = fs::read_dir(dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                let bytes = name.as_encoded_bytes();
                if !is_temp_artifact(&name)
                    || !bytes[bytes.len() - TOKEN_LEN..].starts_with(self.token.as_bytes())
                {
                    continue;
                }
                let path = entry.path();
                let is_dir = fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir());
                let result = if is_dir {
                    fs::remove_dir_all(&path)
                } else {
                    fs::remove_file(&path)
                };
                result.map_err(io_err("remove the temporary file", &path))?;
                removed += 1;
            }
        }
        Ok(removed)
    }
}
