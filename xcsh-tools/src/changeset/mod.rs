//! Stale-safe, all-or-nothing multi-file edits.
//!
//! A [`ChangeSet`] collects modifications, creations, deletions and renames of files under a
//! [`Workspace`], remembering for every existing file it touches only a [`Fingerprint`] of
//! what it held (never the old content: a preview over thousands of files stays lean). A
//! modification given as edits ([`ChangeSet::modify_splicing`] with [`Splice`]s) does not hold
//! the new content either: it is made at apply time from the file as read then.
//! [`ChangeSet::apply`] then writes them all or none:
//!
//! * **Stale-safe.** Before anything visible changes, every file is checked against its
//!   fingerprint, and every path that must be absent is checked to be absent. If anything
//!   changed since the change set was built, nothing is written and the error names every
//!   stale file and why. (A spliced file's content is checked as it is read to splice it, so
//!   that it is read once; a stale one found then removes the temporary files already made.)
//! * **All or nothing.** New contents go to temporary files next to their targets (fsynced,
//!   with the original's permissions), then replace the targets by `rename`, with every
//!   original kept reachable as a backup until the end. If any step fails, every step done so
//!   far is undone and the error says nothing was changed.
//! * **Crash-safe.** If the process is killed at any moment (SIGKILL) — or the machine loses
//!   power after the directories were synced — every file holds either its old content or
//!   its new content in full, never a truncated or mixed one; a deleted file is either there
//!   with its old content or gone; a renamed file is at exactly one of its two names; a new
//!   directory appears together with the new files in it, in one rename. Everything else
//!   left behind is a temporary file, a backup, or a staging directory, whose names
//!   [`is_temp_artifact`](crate::workspace::is_temp_artifact) recognises, and the apply's
//!   journal and lock in `<root>/.xcsh/`.
//! * **Crash-atomic, with recovery.** The apply is journalled in `<root>/.xcsh/apply.journal`;
//!   once its commit record is durable, [`recover`] finishes it, before that it undoes it.
//!   After recovery *every* file of the apply is old or *every* file is new, and nothing of
//!   the apply is left. Recovery runs by itself at the start of every apply, and as
//!   `xcsh recover` ([`Workspace::new`] only reads). A lock (`<root>/.xcsh/apply.lock`) lets one
//!   apply run per root at a time, across processes; another gets [`ApplyError::Busy`]
//!   naming the holder. The design and why every crash point recovers: docs/RELIABILITY.md.
//!
//! Confinement: every path goes through [`Workspace::resolve`]; nothing outside the root is
//! read or written. A symbolic link inside the root that leads to a file inside the root is
//! edited at its target (the link stays a link); one that leads out is refused.
//!
//! ```
//! use xcsh_tools::changeset::ChangeSet;
//! use xcsh_tools::workspace::Workspace;
//!
//! let dir = tempfile::tempdir()?;
//! std::fs::create_dir(dir.path().join("src"))?;
//! std::fs::write(dir.path().join("src/a.rs"), "fn a() {}\n")?;
//! std::fs::write(dir.path().join("src/old.rs"), "// old\n")?;
//!
//! let mut cs = ChangeSet::new(Workspace::new(dir.path())?);
//! cs.modify("src/a.rs", "fn a() -> u8 { 1 }\n")?;
//! cs.create("src/new.rs", "// new\n")?;
//! cs.delete("src/old.rs")?;
//! print!("{}", cs.diff());
//!
//! let report = cs.apply()?;
//! assert_eq!((report.modified, report.created, report.deleted), (1, 1, 1));
//! assert_eq!(std::fs::read_to_string(dir.path().join("src/a.rs"))?, "fn a() -> u8 { 1 }\n");
//! assert!(!dir.path().join("src/old.rs").exists());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod apply;
mod diff;
mod error;
mod fault;
mod fingerprint;
pub(crate) mod hunks;
mod kept;
mod splice;
mod undo;

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use apply::ApplyReport;
pub use apply::recover::{Recovered, RecoveryError, RecoveryReport, recover};
pub(crate) use diff::{Replaced, WrittenFile};
pub use error::{ApplyError, Attention, ChangeSetError, StaleFile, StaleReason};
#[doc(hidden)]
#[cfg(feature = "testing")]
pub use fault::FaultPlan;
pub use fingerprint::Fingerprint;
pub use splice::Splice;
pub use undo::{Undo, UndoEntry, UndoError, UndoLimits};

use crate::workspace::{Entry, Workspace};
use splice::Splices;

/// A set of file operations under one workspace, applied all together or not at all.
///
/// Build it with [`modify`](Self::modify), [`modify_expecting`](Self::modify_expecting),
/// [`modify_splicing`](Self::modify_splicing), [`create`](Self::create),
/// [`delete`](Self::delete) and [`rename`](Self::rename); show it
/// with [`diff`](Self::diff); run it with [`apply`](Self::apply). Each file may be touched by
/// one operation only. See the [module documentation](self) for the guarantees.
///
/// Cloning is cheap (new contents are shared), so a pending action can hand a clone to
/// `tokio::task::spawn_blocking` and keep its own for a retry.
///
/// ```
/// use xcsh_tools::changeset::ChangeSet;
/// use xcsh_tools::workspace::Workspace;
///
/// let dir = tempfile::tempdir()?;
/// std::fs::write(dir.path().join("x.rs"), "x")?;
/// let mut cs = ChangeSet::new(Workspace::new(dir.path())?);
/// cs.rename("x.rs", "moved/y.rs")?; // missing directories are created
/// assert_eq!(cs.len(), 1);
/// cs.apply()?;
/// assert_eq!(std::fs::read_to_string(dir.path().join("moved/y.rs"))?, "x");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct ChangeSet {
    ws: Workspace,
    ops: Vec<Op>,
    /// Every real path an operation touches, to the index of that operation.
    claimed: HashMap<PathBuf, usize>,
    /// Directories that do not exist yet and an operation will create, to its index.
    needed_dirs: HashMap<PathBuf, usize>,
    /// The undo record this change set reverts, when an [`Undo`] made it.
    undoes: Option<u64>,
    /// How many applies keep their inverse, this one's included.
    undo: UndoLimits,
}

/// New content, shared so that cloning a change set does not copy it.
type Content = Arc<Vec<u8>>;

/// What a modified file will hold: the bytes themselves, or edits spliced at apply time into
/// the file as it is read then (and checked against its fingerprint).
#[derive(Clone)]
pub(crate) enum NewContent {
    Bytes(Content),
    Splices(Arc<Splices>),
}

impl NewContent {
    /// Length of the new content.
    pub(crate) fn len(&self) -> u64 {
        match self {
            NewContent::Bytes(bytes) => bytes.len() as u64,
            NewContent::Splices(splices) => splices.new_len(),
        }
    }
}

/// An existing file an operation depends on.
#[derive(Clone, Debug)]
pub(crate) struct Tracked {
    /// The path as the caller gave it, re-resolved at apply to notice links that changed.
    pub(crate) user: PathBuf,
    pub(crate) entry: Entry,
    pub(crate) expect: Fingerprint,
}

/// A path that must be absent (the file to create, the name to rename to).
#[derive(Clone, Debug)]
pub(crate) struct Absent {
    pub(crate) user: PathBuf,
    pub(crate) entry: Entry,
}

#[derive(Clone)]
pub(crate) enum Op {
    Modify {
        file: Tracked,
        content: NewContent,
    },
    /// `perms`: the permissions to give the new file (an undo recreating a deleted file);
    /// `None` leaves the process's defaults.
    Create {
        file: Absent,
        content: Content,
        perms: Option<std::fs::Permissions>,
    },
    Delete {
        file: Tracked,
    },
    Rename {
        from: Tracked,
        to: Absent,
    },
}

impl Op {
    fn verb(&self) -> &'static str {
        match self {
            Op::Modify { .. } => "modify",
            Op::Create { .. } => "create",
            Op::Delete { .. } => "delete",
            Op::Rename { .. } => "rename",
        }
    }
}

impl ChangeSet {
    /// An empty change set under `ws`.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// use xcsh_tools::{changeset::ChangeSet, workspace::Workspace};
    /// let cs = ChangeSet::new(Workspace::new(dir.path())?);
    /// assert!(cs.is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new(ws: Workspace) -> Self {
        Self {
            ws,
            ops: Vec::new(),
            claimed: HashMap::new(),
            needed_dirs: HashMap::new(),
            undoes: None,
            undo: UndoLimits::default(),
        }
    }

    /// Sets how many applies in the workspace keep their inverse for [`Undo`] (default:
    /// [`UndoLimits::default`]); this apply's inverse is kept, or not, by them.
    ///
    /// ```
    /// use xcsh_tools::changeset::{ChangeSet, Undo, UndoLimits};
    /// use xcsh_tools::workspace::Workspace;
    ///
    /// let dir = tempfile::tempdir()?;
    /// let ws = Workspace::new(dir.path())?;
    /// let mut cs = ChangeSet::new(ws.clone()).with_undo(UndoLimits::off());
    /// cs.create("a.txt", "a")?;
    /// let report = cs.apply()?;
    /// assert_eq!(report.undo, None);
    /// assert!(Undo::last(&ws)?.is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[must_use]
    pub fn with_undo(mut self, limits: UndoLimits) -> Self {
        self.undo = limits;
        self
    }

    /// How many applies keep their inverse.
    pub fn undo_limits(&self) -> UndoLimits {
        self.undo
    }

    /// The workspace this change set works in.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// # use xcsh_tools::{changeset::ChangeSet, workspace::Workspace};
    /// let ws = Workspace::new(dir.path())?;
    /// assert_eq!(ChangeSet::new(ws.clone()).workspace(), &ws);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn workspace(&self) -> &Workspace {
        &self.ws
    }

    /// How many operations the change set holds.
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// # use xcsh_tools::{changeset::ChangeSet, workspace::Workspace};
    /// let mut cs = ChangeSet::new(Workspace::new(dir.path())?);
    /// cs.create("a.txt", "a")?;
    /// assert_eq!(cs.len(), 1);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether the change set holds no operation (applying it does nothing).
    ///
    /// ```
    /// # let dir = tempfile::tempdir()?;
    /// # use xcsh_tools::{changeset::ChangeSet, workspace::Workspace};
    /// assert!(ChangeSet::new(Workspace::new(dir.path())?).is_empty());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Replaces the content of an existing file with `content`. The file is read now (in
    /// chunks, not kept) to record its [`Fingerprint`]; apply refuses if it changed since.
    ///
    /// A symbolic link leading to a file inside the root is edited at its target.
    ///
    /// ```
    /// # use xcsh_tools::{changeset::ChangeSet, workspace::Workspace};
    /// # let dir = tempfile::tempdir()?;
    /// std::fs::write(dir.path().join("a.txt"), "old")?;
    /// let mut cs = ChangeSet::new(Workspace::new(dir.path())?);
    /// cs.modify("a.txt", "new")?;
    /// assert!(cs.modify("missing.txt", "x").is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn modify(
        &mut self,
        path: impl AsRef<Path>,
        content: impl Into<Vec<u8>>,
    ) -> Result<&mut Self, ChangeSetError> {
        let (user, entry) = self.existing_file("modify", path.as_ref(), true)?;
        let expect = self.read_fingerprint(&entry.target)?;
        let file = Tracked {
            user,
            entry,
            expect,
        };
        let content = NewContent::Bytes(Arc::new(content.into()));
        self.push(Op::Modify { file, content })
    }

    /// Like [`modify`](Self::modify), for a caller that has already read the file (a preview
    /// engine): `expected` is the fingerprint of what it read, and the file is not read again.
    /// Apply refuses if the file does not match `expected`.
    ///
    /// ```
    /// use xcsh_tools::changeset::{ChangeSet, Fingerprint};
    /// # use xcsh_tools::workspace::Workspace;
    /// # let dir = tempfile::tempdir()?;
    /// std::fs::write(dir.path().join("a.rs"), "let x = 1;")?;
    ///
    /// let seen = std::fs::read(dir.path().join("a.rs"))?; // what the preview worked on
    /// let mut cs = ChangeSet::new(Workspace::new(dir.path())?);
    /// cs.modify_expecting("a.rs", Fingerprint::of(&seen), "let x = 2;")?;
    ///
    /// std::fs::write(dir.path().join("a.rs"), "let x = 3;")?; // someone else edits it
    /// let err = cs.apply().unwrap_err();
    /// assert!(err.to_string().contains("`a.rs` (modified since it was read)"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn modify_expecting(
        &mut self,
        path: impl AsRef<Path>,
        expected: Fingerprint,
        content: impl Into<Vec<u8>>,
    ) -> Result<&mut Self, ChangeSetError> {
        let (user, entry) = self.existing_file("modify", path.as_ref(), true)?;
        let file = Tracked {
            user,
            entry,
            expect: expected,
        };
        let content = NewContent::Bytes(Arc::new(content.into()));
        self.push(Op::Modify { file, content })
    }

    /// Like [`modify_expecting`](Self::modify_expecting), with the change given as edits
    /// rather than as the whole new content: each [`Splice`] replaces a byte range of the file
    /// as it was read (whose fingerprint is `expected`) with new text. The change set keeps
    /// only the edits; the new content is made at apply time from the file as apply reads it
    /// (one read, which is also the stale check) and exists for as long as it takes to write
    /// it. This is how a preview over thousands of files stays small: it holds neither the
    /// originals nor the results.
    ///
    /// The edits must be sorted by position and must not overlap (insertions at one offset
    /// are kept in the order given, and an insertion may directly follow a replacement that
    /// ends there), and each range must lie within `expected.len()` bytes: otherwise
    /// [`ChangeSetError::InvalidSplice`] names the first offending edit, and nothing is added.
    /// The file must be UTF-8 text and the ranges must fall on its character boundaries;
    /// that can only be seen with the content in hand, so apply (and [`diff`](Self::diff))
    /// check it, and apply refuses, writing nothing, if it does not hold. Everything else is as
    /// for [`modify`](Self::modify): apply refuses if the file no longer matches `expected`,
    /// and writes atomically, all or nothing with the other operations.
    ///
    /// ```
    /// use xcsh_tools::changeset::{ChangeSet, Fingerprint, Splice};
    /// # use xcsh_tools::workspace::Workspace;
    /// # let dir = tempfile::tempdir()?;
    /// std::fs::write(dir.path().join("a.rs"), "fn f() { x.unwrap() }\n")?;
    ///
    /// let seen = std::fs::read_to_string(dir.path().join("a.rs"))?; // what the preview read
    /// let at = seen.find("x.unwrap()").unwrap();
    /// let mut cs = ChangeSet::new(Workspace::new(dir.path())?);
    /// cs.modify_splicing(
    ///     "a.rs",
    ///     Fingerprint::of(&seen),
    ///     [Splice::new(0..0, "pub "), Splice::new(at..at + 10, "x?")],
    /// )?;
    /// drop(seen); // the change set does not need it
    ///
    /// assert!(cs.diff().contains("-fn f() { x.unwrap() }\n+pub fn f() { x? }\n"));
    /// cs.apply()?;
    /// assert_eq!(std::fs::read_to_string(dir.path().join("a.rs"))?, "pub fn f() { x? }\n");
    ///
    /// // Edits out of order are refused when added.
    /// let mut cs = ChangeSet::new(Workspace::new(dir.path())?);
    /// let err = cs
    ///     .modify_splicing("a.rs", Fingerprint::of_file(dir.path().join("a.rs"))?, [
    ///         Splice::new(4..5, "g"),
    ///         Splice::new(0..3, ""),
    ///     ])
    ///     .unwrap_err();
    /// assert!(err.to_string().contains("edits[1] (bytes 0..3) comes before edits[0] (bytes 4..5)"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn modify_splicing(
        &mut self,
        path: impl AsRef<Path>,
        expected: Fingerprint,
        edits: impl IntoIterator<Item = Splice>,
    ) -> Result<&mut Self, ChangeSetError> {
        let (user, entry) = self.existing_file("modify", path.as_ref(), true)?;
        let splices =
            Splices::new(edits.into_iter().collect(), expected.len()).map_err(|problem| {
                ChangeSetError::InvalidSplice {
                    path: self.ws.display(&entry.named),
                    problem,
                }
            })?;
        let file = Tracked {
            user,
            entry,
            expect: expected,
        };
        let content = NewContent::Splices(Arc::new(splices));
        self.push(Op::Modify { file, content })
    }

    /// Creates a new file holding `content`; missing parent directories are created too.
    /// Nothing may exist at the path, now or at apply.
    ///
    /// ```
    /// # use xcsh_tools::{changeset::ChangeSet, workspace::Workspace};
    /// # let dir = tempfile::tempdir()?;
    /// let mut cs = ChangeSet::new(Workspace::new(dir.path())?);
    /// cs.create("docs/guide/intro.md", "# Intro\n")?;
    /// cs.apply()?;
    /// assert!(dir.path().join("docs/guide/intro.md").is_file());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn create(
        &mut self,
        path: impl AsRef<Path>,
        content: impl Into<Vec<u8>>,
    ) -> Result<&mut Self, ChangeSetError> {
        self.create_with(path.as_ref(), content.into(), None)
    }

    /// [`create`](Self::create) giving the new file `perms`: an undo recreates a deleted
    /// file as it was, executable bit included — but never set-user-ID or set-group-ID,
    /// since the file it writes is owned by this process, not by the deleted file's owner.
    pub(crate) fn create_with(
        &mut self,
        path: &Path,
        content: Vec<u8>,
        perms: Option<std::fs::Permissions>,
    ) -> Result<&mut Self, ChangeSetError> {
        let perms = perms
            .as_ref()
            .and_then(kept::mode_of)
            .and_then(kept::perms_of);
        let file = self.absent("create", path, "use modify to change it")?;
        let content = Arc::new(content);
        self.push(Op::Create {
            file,
            content,
            perms,
        })
    }

    /// Deletes an existing regular file; its fingerprint is recorded now. Symbolic links are
    /// refused (name the file itself).
    ///
    /// ```
    /// # use xcsh_tools::{changeset::ChangeSet, workspace::Workspace};
    /// # let dir = tempfile::tempdir()?;
    /// std::fs::write(dir.path().join("old.txt"), "bye")?;
    /// let mut cs = ChangeSet::new(Workspace::new(dir.path())?);
    /// cs.delete("old.txt")?;
    /// cs.apply()?;
    /// assert!(!dir.path().join("old.txt").exists());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn delete(&mut self, path: impl AsRef<Path>) -> Result<&mut Self, ChangeSetError> {
        let (user, entry) = self.existing_file("delete", path.as_ref(), false)?;
        let expect = self.read_fingerprint(&entry.target)?;
        let file = Tracked {
            user,
            entry,
            expect,
        };
        self.push(Op::Delete { file })
    }

    /// Renames an existing regular file to a path where nothing exists (missing parent
    /// directories are created). The source's fingerprint is recorded now; symbolic links are
    /// refused.
    ///
    /// ```
    /// # use xcsh_tools::{changeset::ChangeSet, workspace::Workspace};
    /// # let dir = tempfile::tempdir()?;
    /// std::fs::write(dir.path().join("a.txt"), "a")?;
    /// std::fs::write(dir.path().join("b.txt"), "b")?;
    /// let mut cs = ChangeSet::new(Workspace::new(dir.path())?);
    /// assert!(cs.rename("a.txt", "b.txt").is_err()); // never overwrites
    /// cs.rename("a.txt", "c.txt")?;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn rename(
        &mut self,
        from: impl AsRef<Path>,
        to: impl AsRef<Path>,
    ) -> Result<&mut Self, ChangeSetError> {
        let (user, entry) = self.existing_file("rename", from.as_ref(), false)?;
        let to = self.absent(
            "rename to",
            to.as_ref(),
            "delete it first in a separate change, or pick another name",
        )?;
        let expect = self.read_fingerprint(&entry.target)?;
        let from = Tracked {
            user,
            entry,
            expect,
        };
        self.push(Op::Rename { from, to })
    }

    /// Keeps only the operations on `files` (root-relative paths with `/`, as
    /// [`Workspace::display`] and the diff name them; a rename is named by its source). A
    /// path the change set does not touch is refused, naming the ones it does, and nothing
    /// changes. What the set carries besides its operations, such as its
    /// [`undo_limits`](Self::undo_limits), stays as it was.
    ///
    /// ```
    /// # use xcsh_tools::{changeset::{ChangeSet, UndoLimits}, workspace::Workspace};
    /// # let dir = tempfile::tempdir()?;
    /// let mut cs = ChangeSet::new(Workspace::new(dir.path())?).with_undo(UndoLimits::off());
    /// cs.create("a.txt", "a")?.create("b.txt", "b")?;
    /// assert!(cs.retain_files(&["c.txt".into()]).unwrap_err().contains("`c.txt` is not in this change"));
    /// cs.retain_files(&["b.txt".into()])?;
    /// assert_eq!(cs.len(), 1);
    /// assert_eq!(cs.undo_limits(), UndoLimits::off());
    /// cs.apply()?;
    /// assert!(!dir.path().join("a.txt").exists() && dir.path().join("b.txt").exists());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn retain_files(&mut self, files: &[String]) -> Result<(), String> {
        if self.undoes.is_some() {
            return Err(
                "an undo reverts a whole apply: apply or discard it whole (a part would leave the rest of the apply without its undo record)"
                    .to_owned(),
            );
        }
        let name = |op: &Op| match op {
            Op::Modify { file, .. } | Op::Delete { file } => self.ws.display(&file.entry.named),
            Op::Create { file, .. } => self.ws.display(&file.entry.named),
            Op::Rename { from, .. } => self.ws.display(&from.entry.named),
        };
        let names: Vec<String> = self.ops.iter().map(name).collect();
        if let Some(missing) = files.iter().find(|f| !names.contains(f)) {
            return Err(format!(
                "`{missing}` is not in this change; it touches: {}",
                names.join(", ")
            ));
        }
        // Everything the set carries besides its operations (the undo record it reverts, its
        // undo limits) is kept; only the operations are rebuilt, re-claiming their paths.
        let mut kept = ChangeSet {
            ws: self.ws.clone(),
            ops: Vec::new(),
            claimed: HashMap::new(),
            needed_dirs: HashMap::new(),
            undoes: self.undoes,
            undo: self.undo,
        };
        for (op, name) in self.ops.iter().zip(&names) {
            if files.contains(name) {
                kept.push(op.clone()).map_err(|e| e.to_string())?;
            }
        }
        *self = kept;
        Ok(())
    }

    /// A digest of exactly what applying would do: every operation with its paths, the
    /// fingerprint each file it changes must still have, and its new content (or its edits).
    /// Two change sets with the same digest write the same bytes to the same files from the
    /// same originals; this is what a person's approval of an `ast_edit` preview is bound to.
    ///
    /// ```
    /// # use xcsh_tools::{changeset::ChangeSet, workspace::Workspace};
    /// # let dir = tempfile::tempdir()?;
    /// std::fs::write(dir.path().join("a.txt"), "old")?;
    /// let ws = Workspace::new(dir.path())?;
    /// let digest = |new: &str| -> Result<String, Box<dyn std::error::Error>> {
    ///     let mut cs = ChangeSet::new(ws.clone());
    ///     cs.modify("a.txt", new)?;
    ///     Ok(cs.effect_digest())
    /// };
    /// assert_eq!(digest("new")?, digest("new")?);
    /// assert_ne!(digest("new")?, digest("newer")?);
    /// assert!(digest("new")?.starts_with("sha256:"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn effect_digest(&self) -> String {
        use xcsh_core::approval::sha256_hex;
        // Lossless (`u:` text, or `x:` hex for names that are not UTF-8), as in the journal.
        let root = self.ws.root();
        let path = |p: &Path| apply::durable::enc(root, p);
        let fp = |f: &Fingerprint| {
            let (len, hash) = f.parts();
            format!("{len}:{hash:032x}")
        };
        let content = |c: &NewContent| match c {
            NewContent::Bytes(bytes) => sha256_hex(bytes),
            NewContent::Splices(splices) => {
                // `[[start,end,"text"],…]`: the same bytes as a JSON value of arrays would
                // print, without copying every replacement's text into one first.
                let edits: Vec<(usize, usize, &str)> = splices
                    .edits()
                    .iter()
                    .map(|s| (s.range.start, s.range.end, &*s.text))
                    .collect();
                let json = serde_json::to_vec(&edits).expect("tuples of numbers and text");
                format!("edits:{}", sha256_hex(&json))
            }
        };
        let ops: Vec<serde_json::Value> = self
            .ops
            .iter()
            .map(|op| match op {
                Op::Modify { file, content: c } => serde_json::json!({
                    "op": "modify", "path": path(&file.entry.target),
                    "expect": fp(&file.expect), "new": content(c),
                }),
                Op::Create {
                    file,
                    content: c,
                    perms,
                } => {
                    let mut op = serde_json::json!({
                        "op": "create", "path": path(&file.entry.named), "new": sha256_hex(c),
                    });
                    // Only when set, so that the digests of plain creates stay as they were.
                    if let Some(mode) = perms.as_ref().and_then(kept::mode_of) {
                        op["mode"] = mode.into();
                    }
                    op
                }
                Op::Delete { file } => serde_json::json!({
                    "op": "delete", "path": path(&file.entry.named), "expect": fp(&file.expect),
                }),
                Op::Rename { from, to } => serde_json::json!({
                    "op": "rename", "path": path(&from.entry.named), "to": path(&to.entry.named),
                    "expect": fp(&from.expect),
                }),
            })
            .collect();
        let manifest =
            serde_json::json!({"root": apply::durable::enc(Path::new(""), root), "ops": ops});
        sha256_hex(manifest.to_string().as_bytes())
    }

    /// Resolves `path` and checks it names an existing regular file (through a link only when
    /// `follow_link`).
    fn existing_file(
        &self,
        op: &'static str,
        path: &Path,
        follow_link: bool,
    ) -> Result<(PathBuf, Entry), ChangeSetError> {
        let entry = self.ws.resolve_entry(path)?;
        let shown = self.ws.display(&entry.named);
        if entry.is_symlink && !follow_link {
            return Err(ChangeSetError::Symlink {
                op,
                path: shown,
                target: self.ws.display(&entry.target),
            });
        }
        if !entry.exists {
            return Err(ChangeSetError::Missing {
                op,
                path: shown,
                hint: if op == "modify" {
                    "use create for a new file"
                } else {
                    "check the path"
                },
            });
        }
        let meta = std::fs::metadata(&entry.target).map_err(|source| ChangeSetError::Read {
            path: self.ws.display(&entry.target),
            source,
        })?;
        if !meta.is_file() {
            return Err(ChangeSetError::NotAFile {
                op,
                path: shown,
                kind: kind_of(&meta),
            });
        }
        Ok((path.to_path_buf(), entry))
    }

    /// Resolves `path` and checks that nothing (not even a dangling link) is there.
    fn absent(
        &self,
        op: &'static str,
        path: &Path,
        hint: &'static str,
    ) -> Result<Absent, ChangeSetError> {
        let entry = self.ws.resolve_entry(path)?;
        let shown = self.ws.display(&entry.named);
        let kind = if entry.is_symlink {
            Some("a symbolic link")
        } else if entry.exists {
            Some(match std::fs::symlink_metadata(&entry.named) {
                Ok(meta) => kind_of(&meta),
                Err(_) => "something",
            })
        } else {
            None
        };
        if let Some(kind) = kind {
            return Err(ChangeSetError::AlreadyExists {
                op,
                path: shown,
                kind,
                hint,
            });
        }
        Ok(Absent {
            user: path.to_path_buf(),
            entry,
        })
    }

    fn read_fingerprint(&self, target: &Path) -> Result<Fingerprint, ChangeSetError> {
        Fingerprint::of_file(target).map_err(|source| ChangeSetError::Read {
            path: self.ws.display(target),
            source,
        })
    }

    /// Adds `op` after checking that no other operation touches the same real file, and that
    /// no file it writes is a directory another operation needs (or the reverse).
    fn push(&mut self, op: Op) -> Result<&mut Self, ChangeSetError> {
        let index = self.ops.len();
        let paths = op_paths(&op);
        for p in &paths {
            if let Some(&earlier) = self.claimed.get(*p) {
                return Err(ChangeSetError::Duplicate {
                    path: self.ws.display(p),
                    first: self.describe(&self.ops[earlier]),
                    second: self.describe(&op),
                });
            }
            if let Some(&earlier) = self.needed_dirs.get(*p) {
                return Err(ChangeSetError::FileAndDirectory {
                    path: self.ws.display(p),
                    as_file: self.describe(&op),
                    as_dir: self.describe(&self.ops[earlier]),
                });
            }
        }
        let needed = missing_dirs(&op);
        for d in &needed {
            if let Some(&earlier) = self.claimed.get(d) {
                return Err(ChangeSetError::FileAndDirectory {
                    path: self.ws.display(d),
                    as_file: self.describe(&self.ops[earlier]),
                    as_dir: self.describe(&op),
                });
            }
        }
        for p in paths {
            self.claimed.insert(p.clone(), index);
        }
        for d in needed {
            self.needed_dirs.entry(d).or_insert(index);
        }
        self.ops.push(op);
        Ok(self)
    }

    /// "modify `l` (a symbolic link to `f`)", for messages.
    fn describe(&self, op: &Op) -> String {
        let one = |t: &Entry| {
            if t.is_symlink {
                format!(
                    "`{}` (a symbolic link to `{}`)",
                    self.ws.display(&t.named),
                    self.ws.display(&t.target)
                )
            } else {
                format!("`{}`", self.ws.display(&t.named))
            }
        };
        match op {
            Op::Modify { file, .. } | Op::Delete { file } => {
                format!("{} {}", op.verb(), one(&file.entry))
            }
            Op::Create { file, .. } => format!("{} {}", op.verb(), one(&file.entry)),
            Op::Rename { from, to } => {
                format!("rename {} to {}", one(&from.entry), one(&to.entry))
            }
        }
    }
}

/// The real paths an operation writes: the target of a modified link, the names otherwise.
fn op_paths(op: &Op) -> Vec<&PathBuf> {
    match op {
        Op::Modify { file, .. } | Op::Delete { file } => vec![&file.entry.target],
        Op::Create { file, .. } => vec![&file.entry.named],
        Op::Rename { from, to } => vec![&from.entry.named, &to.entry.named],
    }
}

/// The directories above a create or rename target that do not exist yet.
fn missing_dirs(op: &Op) -> Vec<PathBuf> {
    let absent = match op {
        Op::Create { file, .. } => &file.entry.named,
        Op::Rename { to, .. } => &to.entry.named,
        Op::Modify { .. } | Op::Delete { .. } => return Vec::new(),
    };
    absent
        .ancestors()
        .skip(1)
        .take_while(|d| std::fs::symlink_metadata(d).is_err())
        .map(Path::to_path_buf)
        .collect()
}

/// "a directory", "a symbolic link", … for messages.
fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    let ft = meta.file_type();
    if ft.is_dir() {
        "a directory"
    } else if ft.is_symlink() {
        "a symbolic link"
    } else if ft.is_file() {
        "a file"
    } else {
        "a special file (device, socket or FIFO)"
    }
}

impl fmt::Debug for ChangeSet {
    /// Lists the operations, not the contents (which may be megabytes).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ops: Vec<String> = self.ops.iter().map(|op| self.describe(op)).collect();
        f.debug_struct("ChangeSet")
            .field("root", &self.ws.root())
            .field("ops", &ops)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    /// The effect digest of a spliced file hashes its edits as `[[start,end,"text"],…]`,
    /// written from tuples: the bytes must stay those a JSON value of arrays prints (as the
    /// digest was first taken), so that digests recorded before still compare equal.
    #[test]
    fn spliced_edits_are_hashed_as_a_json_value_of_arrays_would_print() {
        let edits = vec![
            (0usize, 3usize, "a \"quoted\" \\ line\n\t\u{1}é😀</script>"),
            (5, 5, ""),
        ];
        let value = serde_json::Value::Array(
            edits
                .iter()
                .map(|(start, end, text)| serde_json::json!([start, end, text]))
                .collect(),
        );
        assert_eq!(
            serde_json::to_vec(&edits).unwrap(),
            value.to_string().into_bytes()
        );
    }
}
