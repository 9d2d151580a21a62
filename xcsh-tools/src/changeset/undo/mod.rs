//! Undo: every apply keeps its inverse, and reverting it is one more previewed apply.
//!
//! When a [`ChangeSet`] apply succeeds, the originals it replaced or deleted (hard links to
//! its backups, so nothing is copied) and what it wrote are kept as an *undo record* under
//! `<root>/.xcsh/undo/`, within the workspace's [`UndoLimits`] (the newest
//! [`keep`](UndoLimits::keep) applies, at most [`max_bytes`](UndoLimits::max_bytes) of
//! originals; the oldest go first, and an apply whose originals alone exceed the cap keeps
//! none). [`Undo::last`] turns the newest record into a change set that reverts it, shown as
//! a diff and applied like any other, stale-checked: a file edited since the apply makes it
//! refuse, naming the file. Applying it removes the record, so the next undo reverts the
//! apply before it. An undo keeps no record of its own (there is no redo).
//!
//! ```
//! use xcsh_tools::changeset::{ChangeSet, Undo};
//! use xcsh_tools::workspace::Workspace;
//!
//! let dir = tempfile::tempdir()?;
//! std::fs::write(dir.path().join("a.txt"), "one\n")?;
//! let ws = Workspace::new(dir.path())?;
//!
//! let mut cs = ChangeSet::new(ws.clone());
//! cs.modify("a.txt", "two\n")?.create("b.txt", "new\n")?;
//! cs.apply()?;
//!
//! let undo = Undo::last(&ws)?.expect("the apply was kept");
//! assert!(undo.diff().contains("-two\n+one\n"));
//! undo.apply()?;
//! assert_eq!(std::fs::read_to_string(dir.path().join("a.txt"))?, "one\n");
//! assert!(!dir.path().join("b.txt").exists());
//! assert!(Undo::last(&ws)?.is_none()); // nothing older to undo
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub(crate) mod store;

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::apply::durable::JFp;
use super::apply::recover::{At, at};
use super::{ApplyError, ApplyReport, ChangeSet, ChangeSetError, Fingerprint};
use crate::workspace::Workspace;
use store::{Record, Slot, UOp};

/// How many applies a workspace keeps the inverse of, and how many bytes of originals at most.
///
/// The default keeps the last 10 applies within 64 MiB of originals. Set it with
/// [`ChangeSet::with_undo`](super::ChangeSet::with_undo); [`UndoLimits::off`] keeps none.
///
/// ```
/// use xcsh_tools::changeset::UndoLimits;
///
/// let limits = UndoLimits::default();
/// assert_eq!((limits.keep(), limits.max_bytes()), (10, 64 << 20));
/// assert!(UndoLimits::off().is_off());
/// assert_eq!(UndoLimits::new(3, 1 << 20).keep(), 3);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UndoLimits {
    keep: usize,
    max_bytes: u64,
}

impl Default for UndoLimits {
    fn default() -> Self {
        Self {
            keep: 10,
            max_bytes: 64 << 20,
        }
    }
}

impl UndoLimits {
    /// Keep the inverse of the last `keep` applies, with at most `max_bytes` of originals in
    /// all. `keep == 0` keeps none.
    pub const fn new(keep: usize, max_bytes: u64) -> Self {
        Self { keep, max_bytes }
    }

    /// Keep no undo records.
    pub const fn off() -> Self {
        Self::new(0, 0)
    }

    /// How many applies are kept.
    pub const fn keep(&self) -> usize {
        self.keep
    }

    /// How many bytes of originals all kept applies may hold together.
    pub const fn max_bytes(&self) -> u64 {
        self.max_bytes
    }

    /// Whether no record is kept.
    pub const fn is_off(&self) -> bool {
        self.keep == 0
    }
}

/// Why the newest apply cannot be undone. Nothing was written in any case.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum UndoError {
    /// Files the apply wrote have changed since: reverting would lose those changes.
    #[error(
        "cannot undo apply #{id}: {} changed since it was applied: {}; undo would overwrite those changes, so nothing was written. Revert them by hand, or leave the apply in place",
        if files.len() == 1 { "a file" } else { "files" },
        files.iter().map(|f| format!("`{}` ({})", f.0, f.1)).collect::<Vec<_>>().join(", ")
    )]
    Changed {
        /// The record's id.
        id: u64,
        /// Each changed file (root-relative) and what is there now.
        files: Vec<(String, String)>,
    },
    /// Every file already holds what it held before the apply: an undo was applied but a
    /// crash came before its record was removed. The record is removed now.
    #[error(
        "apply #{id} was already undone (its files hold their contents from before it); its record is removed now: undo again to revert the apply before it"
    )]
    AlreadyUndone {
        /// The record's id.
        id: u64,
    },
    /// The record (or an original it kept) is damaged, foreign, or was changed.
    #[error(
        "the undo record `{}` cannot be used: {problem}; nothing was written. Remove the directory `{}` to drop it (the applies before it stay undoable)",
        path.display(), dir.display()
    )]
    BadRecord {
        /// The file at fault.
        path: PathBuf,
        /// The record's directory.
        dir: PathBuf,
        /// What is wrong with it.
        problem: String,
    },
    /// The revert could not be staged (a path became a directory, say).
    #[error("cannot undo apply #{id}: {source}")]
    Stage {
        /// The record's id.
        id: u64,
        /// Why.
        source: ChangeSetError,
    },
    /// The records could not be read.
    #[error("cannot {step} `{}`: {source}", path.display())]
    Io {
        /// What was being done.
        step: &'static str,
        /// The path.
        path: PathBuf,
        /// The system's error.
        source: io::Error,
    },
}

/// A kept apply, as [`Undo::history`] lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct UndoEntry {
    /// The record's id: applies are numbered from 1 in the order they were kept.
    pub id: u64,
    /// When the apply finished.
    pub applied_at: SystemTime,
    /// Files the apply touched.
    pub files: usize,
    /// Bytes of originals the record keeps.
    pub bytes: u64,
}

impl fmt::Display for UndoEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ago = SystemTime::now()
            .duration_since(self.applied_at)
            .unwrap_or_default()
            .as_secs();
        let files = if self.files == 1 { "file" } else { "files" };
        write!(
            f,
            "apply #{} ({} {files}, {})",
            self.id,
            self.files,
            ago_text(ago)
        )
    }
}

fn ago_text(secs: u64) -> String {
    match secs {
        0..=59 => format!("{secs}s ago"),
        60..=3599 => format!("{}m ago", secs / 60),
        3600..=86_399 => format!("{}h ago", secs / 3600),
        _ => format!("{}d ago", secs / 86_400),
    }
}

/// The revert of the newest kept apply: a change set, and what removing its record takes.
#[derive(Clone, Debug)]
pub struct Undo {
    entry: UndoEntry,
    changes: ChangeSet,
    /// Directories the apply created, deepest first: removed after the revert if empty.
    dirs: Vec<PathBuf>,
}

impl Undo {
    /// The revert of the newest apply kept in `ws`, or `None` when no apply is kept.
    /// Refused with [`UndoError::Changed`] if a file the apply wrote has changed since.
    ///
    /// ```
    /// # use xcsh_tools::{changeset::{ChangeSet, Undo, UndoError}, workspace::Workspace};
    /// # let dir = tempfile::tempdir()?;
    /// let ws = Workspace::new(dir.path())?;
    /// assert!(Undo::last(&ws)?.is_none());
    ///
    /// let mut cs = ChangeSet::new(ws.clone());
    /// cs.create("a.txt", "v1")?;
    /// cs.apply()?;
    /// std::fs::write(dir.path().join("a.txt"), "edited")?;
    /// let err = Undo::last(&ws).unwrap_err();
    /// assert!(matches!(err, UndoError::Changed { .. }));
    /// assert!(err.to_string().contains("`a.txt` (modified)"), "{err}");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn last(ws: &Workspace) -> Result<Option<Undo>, UndoError> {
        let root = ws.root();
        let slots = slots(root)?;
        let Some(slot) = slots.last().cloned() else {
            return Ok(None);
        };
        let bad = |path: PathBuf, problem: String| UndoError::BadRecord {
            path,
            dir: slot.dir.clone(),
            problem,
        };
        let record = store::read(root, &slot).map_err(|p| bad(slot.record_path(), p))?;
        Self::build(ws, slot.clone(), record, &bad).map(Some)
    }

    /// The kept applies of `ws`, oldest first.
    ///
    /// ```
    /// # use xcsh_tools::{changeset::{ChangeSet, Undo}, workspace::Workspace};
    /// # let dir = tempfile::tempdir()?;
    /// let ws = Workspace::new(dir.path())?;
    /// for name in ["a", "b"] {
    ///     let mut cs = ChangeSet::new(ws.clone());
    ///     cs.create(name, name)?;
    ///     cs.apply()?;
    /// }
    /// let ids: Vec<u64> = Undo::history(&ws)?.iter().map(|e| e.id).collect();
    /// assert_eq!(ids, [1, 2]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn history(ws: &Workspace) -> Result<Vec<UndoEntry>, UndoError> {
        let root = ws.root();
        let slots = slots(root)?;
        slots
            .iter()
            .map(|slot| {
                store::read(root, slot)
                    .map(|record| entry(slot, &record))
                    .map_err(|problem| UndoError::BadRecord {
                        path: slot.record_path(),
                        dir: slot.dir.clone(),
                        problem,
                    })
            })
            .collect()
    }

    fn build(
        ws: &Workspace,
        slot: Slot,
        record: Record,
        bad: &dyn Fn(PathBuf, String) -> UndoError,
    ) -> Result<Undo, UndoError> {
        let root = ws.root();
        let id = slot.id;
        let corrupt = || {
            bad(
                slot.record_path(),
                "it is corrupt (a path outside the workspace, or a bad fingerprint)".to_owned(),
            )
        };
        let path = |s: &str| store::path(root, s).ok_or_else(corrupt);
        let fp = |j: &JFp| j.fingerprint().ok_or_else(corrupt);

        // Where every file is now, against what the apply left (`now`) and what it found
        // (`was`).
        let mut changed = Vec::new();
        let mut all_undone = true;
        for (p, now, was) in touched(root, &record).ok_or_else(corrupt)? {
            let here = at(&p);
            if here != now {
                let what = if now == At::Missing && !matches!(here, At::Other | At::Dir) {
                    "created again"
                } else {
                    describe(here)
                };
                changed.push((ws.display(&p), what.to_owned()));
            }
            all_undone &= here == was;
        }
        if all_undone && !record.ops.is_empty() {
            store::remove(&slot).map_err(|source| UndoError::Io {
                step: "remove the undo record",
                path: slot.dir.clone(),
                source,
            })?;
            return Err(UndoError::AlreadyUndone { id });
        }
        if !changed.is_empty() {
            return Err(UndoError::Changed { id, files: changed });
        }

        let mut changes = ChangeSet::new(ws.clone());
        changes.undoes = Some(slot.id);
        let stage = |source| UndoError::Stage { id, source };
        let original = |blob: usize, was: Fingerprint| {
            let p = slot.blob_path(blob);
            let bytes = std::fs::read(&p)
                .map_err(|e| bad(p.clone(), format!("it cannot be read ({e})")))?;
            if Fingerprint::of(&bytes) != was {
                return Err(bad(
                    p,
                    "the kept original changed since it was kept (it may share its inode with another name that was edited)".to_owned(),
                ));
            }
            Ok(bytes)
        };
        for op in &record.ops {
            match op {
                UOp::Modify {
                    target,
                    was,
                    now,
                    blob,
                } => {
                    let bytes = original(*blob, fp(was)?)?;
                    changes
                        .modify_expecting(path(target)?, fp(now)?, bytes)
                        .map_err(stage)?;
                }
                UOp::Create { target, .. } => {
                    changes.delete(path(target)?).map_err(stage)?;
                }
                UOp::Delete { target, was, blob } => {
                    let bytes = original(*blob, fp(was)?)?;
                    // The kept original is the deleted file itself (a hard link to its
                    // backup), so its permissions are the ones the file had.
                    let perms = std::fs::metadata(slot.blob_path(*blob))
                        .ok()
                        .map(|m| m.permissions());
                    changes
                        .create_with(&path(target)?, bytes, perms)
                        .map_err(stage)?;
                }
                UOp::Rename { from, to, .. } => {
                    changes.rename(path(to)?, path(from)?).map_err(stage)?;
                }
            }
        }
        let mut dirs = record
            .dirs
            .iter()
            .map(|d| path(d))
            .collect::<Result<Vec<_>, _>>()?;
        dirs.sort_by_key(|d| std::cmp::Reverse(d.components().count()));
        Ok(Undo {
            entry: entry(&slot, &record),
            changes,
            dirs,
        })
    }

    /// Which apply this reverts.
    pub fn entry(&self) -> &UndoEntry {
        &self.entry
    }

    /// The change set that reverts it.
    pub fn change_set(&self) -> &ChangeSet {
        &self.changes
    }

    /// The revert keeping (or not) its own inverse by `limits` (see
    /// [`ChangeSet::with_undo`]).
    #[must_use]
    pub fn with_undo(mut self, limits: UndoLimits) -> Self {
        self.changes = self.changes.with_undo(limits);
        self
    }

    /// The revert as a unified diff.
    pub fn diff(&self) -> String {
        self.changes.diff()
    }

    /// Applies the revert (stale-checked and all-or-nothing like any apply), removes the
    /// record, and removes the directories the apply created if they are empty now.
    /// Blocking, like [`ChangeSet::apply`].
    pub fn apply(&self) -> Result<ApplyReport, ApplyError> {
        let report = self.changes.apply()?;
        for dir in &self.dirs {
            // Only if empty: anything put there since stays.
            let _ = std::fs::remove_dir(dir);
        }
        Ok(report)
    }
}

impl ChangeSet {
    /// Whether this change set was already applied: a kept undo record carries its
    /// [`effect_digest`](Self::effect_digest) (the same paths, from the same fingerprints, to
    /// the same bytes), and every file is now as that apply left it. What an apply refused as
    /// stale asks before telling the model someone else changed the files: a process that
    /// applied it and stopped before it could say so (a crash, a restart of `xcsh serve
    /// --state`) leaves exactly this. Needs the apply's undo record (see [`UndoLimits`]).
    ///
    /// ```
    /// # use xcsh_tools::{changeset::ChangeSet, workspace::Workspace};
    /// # let dir = tempfile::tempdir()?;
    /// std::fs::write(dir.path().join("a.txt"), "old")?;
    /// let mut cs = ChangeSet::new(Workspace::new(dir.path())?);
    /// cs.modify("a.txt", "new")?;
    /// assert!(!cs.already_applied());
    /// cs.apply()?;
    /// assert!(cs.already_applied());
    /// assert!(cs.apply().is_err()); // stale: the file is no longer "old"
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn already_applied(&self) -> bool {
        let root = self.ws.root();
        let Ok(slots) = store::list(root) else {
            return false;
        };
        let effect = self.effect_digest();
        slots.iter().rev().any(|slot| {
            store::read(root, slot).is_ok_and(|record| {
                record.effect.as_deref() == Some(effect.as_str()) && left_as_applied(root, &record)
            })
        })
    }
}

/// Whether every file is as the recorded apply left it.
fn left_as_applied(root: &Path, record: &Record) -> bool {
    touched(root, record).is_some_and(|files| files.iter().all(|(p, now, _)| at(p) == *now))
}

/// Every path the recorded apply touched, with what it left there and what it found there;
/// `None` if the record names a path outside the root or a bad fingerprint.
fn touched(root: &Path, record: &Record) -> Option<Vec<(PathBuf, At, At)>> {
    let path = |s: &str| store::path(root, s);
    let fp = |j: &JFp| j.fingerprint();
    let mut out = Vec::with_capacity(record.ops.len());
    for op in &record.ops {
        match op {
            UOp::Modify {
                target, was, now, ..
            } => out.push((
                path(target)?,
                expected(Some(fp(now)?)),
                expected(Some(fp(was)?)),
            )),
            UOp::Create { target, now } => {
                out.push((path(target)?, expected(Some(fp(now)?)), At::Missing));
            }
            UOp::Delete { target, was, .. } => {
                out.push((path(target)?, At::Missing, expected(Some(fp(was)?))));
            }
            UOp::Rename {
                from,
                to,
                fp: moved,
            } => {
                let moved = expected(Some(fp(moved)?));
                out.push((path(to)?, moved, At::Missing));
                out.push((path(from)?, At::Missing, moved));
            }
        }
    }
    Some(out)
}

/// The whole records under `root`, oldest first.
fn slots(root: &Path) -> Result<Vec<Slot>, UndoError> {
    store::list(root).map_err(|source| UndoError::Io {
        step: "list the undo records in",
        path: store::undo_dir(root),
        source,
    })
}

fn entry(slot: &Slot, record: &Record) -> UndoEntry {
    UndoEntry {
        id: slot.id,
        applied_at: SystemTime::UNIX_EPOCH + Duration::from_secs(record.applied_at),
        files: record.ops.len(),
        bytes: record.bytes,
    }
}

/// What a file the apply touched should be: a file with this content, or nothing.
fn expected(fp: Option<Fingerprint>) -> At {
    fp.map_or(At::Missing, At::File)
}

/// Why a path is not as the apply left it.
fn describe(here: At) -> &'static str {
    match here {
        At::Missing => "deleted",
        At::File(_) => "modified",
        At::Dir | At::Other => "no longer a regular file",
    }
}
