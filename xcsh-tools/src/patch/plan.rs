//! From a parsed patch to a [`ChangeSet`]: the operations are played in order over the
//! workspace's files (read once each, through the workspace's confinement), so that a later
//! operation sees what an earlier one did, and the outcome per file becomes one change-set
//! operation. Nothing is written here; any failure refuses the whole patch.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::apply::{Site, apply_hunks, splice};
use super::error::PatchError;
use super::parse::{FileOp, Patch};
use crate::changeset::{ChangeSet, Fingerprint, Splice};
use crate::workspace::Workspace;

/// What a patch does to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileAction {
    /// Created.
    Add,
    /// `*** Add File:` on a file that exists: its content is replaced.
    Replace,
    /// Changed in place.
    Update,
    /// Deleted.
    Delete,
    /// Moved here from `from` (root-relative), its content unchanged.
    Rename {
        /// The source.
        from: String,
    },
    /// Written here from `from`'s updated content, which is deleted; `overwrites` when a
    /// file was here and is replaced.
    MoveHere {
        /// The source.
        from: String,
        /// Whether an existing file here is overwritten.
        overwrites: bool,
    },
}

impl FileAction {
    /// `added`, `replaced`, `updated`, `deleted` or `moved`: what [`summary`] counts.
    pub fn verb(&self) -> &'static str {
        match self {
            FileAction::Add => "added",
            FileAction::Replace => "replaced",
            FileAction::Update => "updated",
            FileAction::Delete => "deleted",
            FileAction::Rename { .. } | FileAction::MoveHere { .. } => "moved",
        }
    }
}

/// `2 files updated, 1 added, 1 deleted`: how many files each [`FileAction::verb`] names,
/// in a fixed order.
///
/// ```
/// assert_eq!(xcsh_tools::patch::summary(["added", "updated", "updated"]), "2 files updated, 1 added");
/// ```
pub fn summary<'a>(verbs: impl IntoIterator<Item = &'a str>) -> String {
    let verbs: Vec<&str> = verbs.into_iter().collect();
    let mut parts = Vec::new();
    for verb in ["updated", "added", "replaced", "moved", "deleted"] {
        let n = verbs.iter().filter(|v| **v == verb).count();
        if n > 0 {
            parts.push(if parts.is_empty() {
                format!("{} {verb}", super::plural(n, "file"))
            } else {
                format!("{n} {verb}")
            });
        }
    }
    if parts.is_empty() {
        "no files".to_owned()
    } else {
        parts.join(", ")
    }
}

impl PlannedFile {
    /// What the file becomes, for a preview's file list; a replaced or overwritten file says
    /// so in capitals.
    pub fn describe(&self) -> String {
        let hunks = if self.hunks > 0 {
            format!(" ({})", super::plural(self.hunks, "hunk"))
        } else {
            String::new()
        };
        match &self.action {
            FileAction::Add => "new file".to_owned(),
            FileAction::Replace => "REPLACED: the existing file's whole content is replaced (`*** Add File` on a file that exists)".to_owned(),
            FileAction::Update => format!("updated{hunks}"),
            FileAction::Delete => "deleted".to_owned(),
            FileAction::Rename { from } => format!("moved from {from}"),
            FileAction::MoveHere { from, overwrites: false } => format!("moved from {from}{hunks}"),
            FileAction::MoveHere { from, overwrites: true } => format!(
                "OVERWRITTEN: moved here from {from}{hunks}, replacing the file that was here"
            ),
        }
    }
}

/// One file a patch changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedFile {
    /// Root-relative path (the destination of a move).
    pub file: String,
    /// What happens to it.
    pub action: FileAction,
    /// Hunks applied to it.
    pub hunks: usize,
}

/// A patch ready to apply: the change set that writes it, the files it changes, and what a
/// reader should know (files replaced, hunks matched only leniently, no-op updates).
#[derive(Debug, Clone)]
pub struct PatchPlan {
    /// What applying writes (all or nothing, stale-safe: see [`ChangeSet`]).
    pub changes: ChangeSet,
    /// The files it changes, in the patch's order.
    pub files: Vec<PlannedFile>,
    /// One sentence each.
    pub notes: Vec<String>,
}

/// What a path holds in the course of the patch.
#[derive(Clone)]
enum State {
    /// As on disk (absent when `original` is `None`).
    Original,
    Content(Arc<String>),
    Deleted,
}

struct Slot {
    /// The path as the patch first named it, and as the workspace shows it.
    user: String,
    display: String,
    original: Option<Arc<Vec<u8>>>,
    state: State,
    /// The current content is the original with these edits (a single in-place update).
    edits: Option<Vec<Splice>>,
    /// The current content was moved here from this slot, and changed or not.
    moved_from: Option<usize>,
    hunks: usize,
    /// The first operation that touched it, for messages.
    op: (String, usize),
}

struct Overlay<'w> {
    ws: &'w Workspace,
    slots: Vec<Slot>,
    by_path: HashMap<PathBuf, usize>,
    notes: Vec<String>,
}

impl Overlay<'_> {
    /// The slot of `path`, reading the file the first time (confined to the workspace).
    fn slot(&mut self, path: &str, op: &FileOp) -> Result<usize, PatchError> {
        let fail = |msg: String| PatchError::file(op.header(), op.line(), msg);
        let entry = self
            .ws
            .resolve_entry(Path::new(path))
            .map_err(|e| fail(format!("{e}; paths are relative to the workspace root")))?;
        if let Some(&i) = self.by_path.get(&entry.named) {
            return Ok(i);
        }
        let display = self.ws.display(&entry.named);
        let original = if entry.exists {
            let meta = std::fs::metadata(&entry.target)
                .map_err(|e| fail(format!("cannot read `{display}`: {e}")))?;
            if !meta.is_file() {
                return Err(fail(format!(
                    "`{display}` is {}, and a patch only changes regular files",
                    if meta.is_dir() {
                        "a directory"
                    } else {
                        "not a regular file"
                    }
                )));
            }
            let bytes = std::fs::read(&entry.target)
                .map_err(|e| fail(format!("cannot read `{display}`: {e}")))?;
            Some(Arc::new(bytes))
        } else {
            None
        };
        let i = self.slots.len();
        self.slots.push(Slot {
            user: path.to_owned(),
            display,
            original,
            state: State::Original,
            edits: None,
            moved_from: None,
            hunks: 0,
            op: (op.header(), op.line()),
        });
        self.by_path.insert(entry.named, i);
        Ok(i)
    }

    /// The text `slot` holds now, or `None` when there is no file.
    fn current(&self, i: usize, op: &FileOp) -> Result<Option<Arc<String>>, PatchError> {
        let slot = &self.slots[i];
        match &slot.state {
            State::Content(c) => Ok(Some(c.clone())),
            State::Deleted => Ok(None),
            State::Original => match &slot.original {
                None => Ok(None),
                Some(bytes) => match std::str::from_utf8(bytes) {
                    Ok(text) => Ok(Some(Arc::new(text.to_owned()))),
                    Err(_) => Err(PatchError::file(
                        op.header(),
                        op.line(),
                        format!(
                            "`{}` is not UTF-8 text; a patch changes text files",
                            slot.display
                        ),
                    )),
                },
            },
        }
    }

    fn run(&mut self, op: &FileOp) -> Result<(), PatchError> {
        let fail = |msg: String| PatchError::file(op.header(), op.line(), msg);
        match op {
            FileOp::Add { path, content, .. } => {
                let i = self.slot(path, op)?;
                let slot = &self.slots[i];
                if matches!(slot.state, State::Original) && slot.original.is_some() {
                    self.notes.push(format!(
                        "`*** Add File: {path}` replaces the existing file `{}` ({}): its whole content becomes the patch's.",
                        slot.display,
                        lines_of(slot.original.as_deref().map_or(&[][..], |v| v))
                    ));
                }
                let slot = &mut self.slots[i];
                slot.state = State::Content(Arc::new(content.clone()));
                slot.edits = None;
                slot.moved_from = None;
            }
            FileOp::Delete { path, .. } => {
                let i = self.slot(path, op)?;
                if !self.exists_now(i) {
                    return Err(fail(self.missing(i, "delete")));
                }
                let slot = &mut self.slots[i];
                slot.state = State::Deleted;
                slot.edits = None;
                slot.moved_from = None;
            }
            FileOp::Update {
                path,
                move_to,
                hunks,
                ..
            } => {
                let i = self.slot(path, op)?;
                let Some(text) = self.current(i, op)? else {
                    return Err(fail(self.missing(i, "update")));
                };
                let display = self.slots[i].display.clone();
                let header = op.header();
                let site = Site {
                    header: &header,
                    op_line: op.line(),
                    display: &display,
                };
                let applied = apply_hunks(&text, hunks, &site)?;
                for (n, line, how) in &applied.lenient {
                    self.notes.push(format!(
                        "Hunk {n} of `{header}` matched {display}:{line} only ignoring {}.",
                        how.describe()
                    ));
                }
                let new = Arc::new(splice(&text, &applied.edits));
                let first_update = matches!(self.slots[i].state, State::Original);
                let target = match move_to {
                    Some(dest) => {
                        let j = self.slot(dest, op)?;
                        (j != i).then_some(j)
                    }
                    None => None,
                };
                match target {
                    None => {
                        let slot = &mut self.slots[i];
                        slot.edits = first_update.then_some(applied.edits);
                        slot.state = State::Content(new);
                        slot.hunks += hunks.len();
                    }
                    Some(j) => {
                        if self.exists_now(j) {
                            self.notes.push(format!(
                                "`*** Move to: {}` overwrites the existing file `{}`: it is replaced by the moved file.",
                                move_to.as_deref().unwrap_or_default(),
                                self.slots[j].display
                            ));
                        }
                        let moved_from = Some(i);
                        let src = &mut self.slots[i];
                        src.state = State::Deleted;
                        src.edits = None;
                        src.moved_from = None;
                        let dest = &mut self.slots[j];
                        dest.state = State::Content(new);
                        dest.edits = None;
                        dest.moved_from = moved_from;
                        dest.hunks += hunks.len();
                    }
                }
            }
        }
        Ok(())
    }

    /// Whether a file is at the slot's path at this point of the patch.
    fn exists_now(&self, i: usize) -> bool {
        let slot = &self.slots[i];
        match slot.state {
            State::Original => slot.original.is_some(),
            State::Content(_) => true,
            State::Deleted => false,
        }
    }

    fn missing(&self, i: usize, verb: &str) -> String {
        let slot = &self.slots[i];
        if matches!(slot.state, State::Deleted) {
            format!(
                "`{}` is deleted earlier in this patch; there is nothing left to {verb}",
                slot.display
            )
        } else if verb == "update" {
            format!(
                "`{}` does not exist; use `*** Add File: {}` to create it",
                slot.display, slot.user
            )
        } else {
            format!(
                "`{}` does not exist; there is nothing to delete",
                slot.display
            )
        }
    }

    /// The change set and the file list.
    fn finish(mut self) -> Result<PatchPlan, PatchError> {
        let mut changes = ChangeSet::new(self.ws.clone());
        let mut files = Vec::new();
        // Sources consumed by a plain rename; sources of any move (listed with it).
        let mut renamed: Vec<usize> = Vec::new();
        let sources: Vec<usize> = self
            .slots
            .iter()
            .filter(|s| matches!(s.state, State::Content(_)))
            .filter_map(|s| s.moved_from)
            .collect();
        for j in 0..self.slots.len() {
            let dest = &self.slots[j];
            if let (Some(i), None, State::Content(c)) =
                (dest.moved_from, &dest.original, &dest.state)
                && matches!(self.slots[i].state, State::Deleted)
                && self.slots[i].original.as_deref().map(Vec::as_slice) == Some(c.as_bytes())
            {
                renamed.push(i);
            }
        }
        for (j, slot) in self.slots.iter().enumerate() {
            let fail = |e: crate::changeset::ChangeSetError| {
                PatchError::file(slot.op.0.clone(), slot.op.1, e.to_string())
            };
            let moved = slot.moved_from.map(|i| self.slots[i].display.clone());
            let action = match (&slot.original, &slot.state) {
                (_, State::Original) | (None, State::Deleted) => None,
                (Some(_), State::Deleted) if renamed.contains(&j) => None,
                (Some(_), State::Deleted) => {
                    changes.delete(&slot.user).map_err(fail)?;
                    (!sources.contains(&j)).then_some(FileAction::Delete)
                }
                (Some(orig), State::Content(c)) => {
                    if orig.as_slice() == c.as_bytes() {
                        self.notes.push(format!(
                            "`{}` is left as it is: the patch's changes to it undo each other or change nothing.",
                            slot.display
                        ));
                        None
                    } else {
                        let fp = Fingerprint::of(orig.as_slice());
                        match &slot.edits {
                            Some(edits) => {
                                changes.modify_splicing(&slot.user, fp, edits.iter().cloned())
                            }
                            None => changes.modify_expecting(&slot.user, fp, c.as_bytes().to_vec()),
                        }
                        .map_err(fail)?;
                        Some(match (moved, slot.hunks) {
                            (Some(from), _) => FileAction::MoveHere {
                                from,
                                overwrites: true,
                            },
                            (None, 0) => FileAction::Replace,
                            (None, _) => FileAction::Update,
                        })
                    }
                }
                (None, State::Content(c)) => match slot.moved_from {
                    Some(i) if renamed.contains(&i) => {
                        changes
                            .rename(&self.slots[i].user, &slot.user)
                            .map_err(fail)?;
                        Some(FileAction::Rename {
                            from: self.slots[i].display.clone(),
                        })
                    }
                    _ => {
                        changes
                            .create(&slot.user, c.as_bytes().to_vec())
                            .map_err(fail)?;
                        Some(match moved {
                            Some(from) => FileAction::MoveHere {
                                from,
                                overwrites: false,
                            },
                            None => FileAction::Add,
                        })
                    }
                },
            };
            if let Some(action) = action {
                files.push(PlannedFile {
                    file: slot.display.clone(),
                    action,
                    hunks: slot.hunks,
                });
            }
        }
        Ok(PatchPlan {
            changes,
            files,
            notes: self.notes,
        })
    }
}

fn lines_of(bytes: &[u8]) -> String {
    let n = bytes.iter().filter(|&&b| b == b'\n').count()
        + usize::from(!bytes.is_empty() && !bytes.ends_with(b"\n"));
    super::plural(n, "line")
}

/// Plans `patch` over `ws`: every operation checked against the files as they are now, the
/// outcome as a [`ChangeSet`]. Nothing is written; the first problem refuses the whole patch.
///
/// ```
/// use xcsh_tools::patch::{FileAction, parse, plan};
/// use xcsh_tools::workspace::Workspace;
///
/// let dir = tempfile::tempdir()?;
/// std::fs::write(dir.path().join("a.txt"), "one\r\ntwo\r\n")?;
/// let ws = Workspace::new(dir.path())?;
///
/// let patch = parse("*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+2\n*** Add File: b.txt\n+new\n*** End Patch")?;
/// let planned = plan(&ws, &patch)?;
/// assert_eq!(planned.files[0].action, FileAction::Update);
/// assert_eq!(planned.files[1].action, FileAction::Add);
/// planned.changes.apply()?;
/// assert_eq!(std::fs::read_to_string(dir.path().join("a.txt"))?, "one\r\n2\r\n");
///
/// // A hunk that matches nowhere refuses the patch, naming the closest place.
/// let patch = parse("*** Begin Patch\n*** Add File: c.txt\n+c\n*** Update File: a.txt\n@@\n one\n-three\n+3\n*** End Patch")?;
/// let err = plan(&ws, &patch).unwrap_err().to_string();
/// assert!(err.starts_with("`*** Update File: a.txt` (patch line 4), hunk 1 (patch line 5): its 2 lines"), "{err}");
/// assert!(err.contains("The closest place is a.txt:1"), "{err}");
/// assert!(!dir.path().join("c.txt").exists());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn plan(ws: &Workspace, patch: &Patch) -> Result<PatchPlan, PatchError> {
    let mut overlay = Overlay {
        ws,
        slots: Vec::new(),
        by_path: HashMap::new(),
        notes: Vec::new(),
    };
    for op in &patch.ops {
        overlay.run(op)?;
    }
    overlay.finish()
}
