//! What can go wrong while building or applying a change set, worded for the model that has
//! to act on it.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use xcsh_core::{ErrorKind, ToolError};

use crate::workspace::PathError;

/// Why an operation could not be added to a [`ChangeSet`](super::ChangeSet).
///
/// Paths in messages are root-relative, as the caller gave them.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ChangeSetError {
    /// The path was refused by [`Workspace::resolve`](crate::workspace::Workspace::resolve).
    #[error(transparent)]
    Path(#[from] PathError),
    /// The same file would be touched by two operations.
    #[error(
        "`{path}` would be changed twice in one change set: by {first} and by {second}; \
         combine them into one operation (for example write the final content once)"
    )]
    Duplicate {
        /// The file, root-relative.
        path: String,
        /// The operation already in the change set.
        first: String,
        /// The operation refused.
        second: String,
    },
    /// One operation writes a file where another needs a directory.
    #[error(
        "`{path}` would be both a file ({as_file}) and a directory ({as_dir}); \
         keep one of the two operations"
    )]
    FileAndDirectory {
        /// The path, root-relative.
        path: String,
        /// The operation that makes it a file.
        as_file: String,
        /// The operation that needs it as a directory.
        as_dir: String,
    },
    /// The file to modify, delete or rename does not exist.
    #[error("cannot {op} `{path}`: it does not exist under the workspace root; {hint}")]
    Missing {
        /// The operation.
        op: &'static str,
        /// The file, root-relative.
        path: String,
        /// What to do instead.
        hint: &'static str,
    },
    /// The path names something other than a regular file (a directory, a device, …).
    #[error("cannot {op} `{path}`: it is {kind}, and a change set only edits regular files")]
    NotAFile {
        /// The operation.
        op: &'static str,
        /// The path, root-relative.
        path: String,
        /// What it is instead ("a directory").
        kind: &'static str,
    },
    /// The path to create (or rename to) already exists.
    #[error("cannot {op} `{path}`: {kind} already exists there; {hint}")]
    AlreadyExists {
        /// The operation.
        op: &'static str,
        /// The path, root-relative.
        path: String,
        /// What is there ("a file", "a directory", "a symbolic link").
        kind: &'static str,
        /// What to do instead.
        hint: &'static str,
    },
    /// Deleting or renaming a symbolic link is not supported: it is ambiguous whether the link
    /// or its target is meant.
    #[error(
        "cannot {op} `{path}`: it is a symbolic link (to `{target}`); a change set deletes and \
         renames regular files only, so name the file itself (`{target}`) if that is what you mean"
    )]
    Symlink {
        /// The operation.
        op: &'static str,
        /// The link, root-relative.
        path: String,
        /// Where it leads, root-relative.
        target: String,
    },
    /// The edits given to [`modify_splicing`](super::ChangeSet::modify_splicing) are out of
    /// order, overlap, or reach past the end of the file as it was read.
    #[error(
        "cannot modify `{path}` by splicing: {problem}; give the edits as byte ranges of the file \
         as it was read, sorted by position and not overlapping"
    )]
    InvalidSplice {
        /// The file, root-relative.
        path: String,
        /// Which edit is wrong, and how (`edits[1] (bytes 3..5) overlaps edits[0] (bytes 2..4)`).
        problem: String,
    },
    /// The file could not be read to record its fingerprint.
    #[error("cannot read `{path}` to record what it holds: {source}; check its permissions")]
    Read {
        /// The file, root-relative.
        path: String,
        /// The underlying error.
        source: io::Error,
    },
}

/// Why a file recorded in a change set no longer matches the disk.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StaleReason {
    /// Its content changed since it was read.
    Modified,
    /// It was deleted.
    Deleted,
    /// A directory now stands where the file was.
    ReplacedByDirectory,
    /// It became a symbolic link (or a link on the way was added or changed).
    BecameSymlink,
    /// It was a symbolic link and is now a regular file.
    NoLongerSymlink,
    /// It is no longer a regular file (a device, a socket, a FIFO).
    NotARegularFile,
    /// Something was created at a path that must be absent (a create or rename target).
    CreatedMeanwhile,
    /// The path now resolves to a different file (a directory on the way was replaced, or a
    /// symbolic link now points elsewhere).
    ResolvesElsewhere,
    /// The path cannot be resolved any more (it now leads outside the root, say); the text
    /// says why.
    Unresolvable(String),
}

impl StaleReason {
    /// Why the file at `path` is stale, given that opening it as a regular file (not
    /// following a link in its place) failed with `error`.
    pub(crate) fn unreadable(path: &Path, error: &io::Error) -> Self {
        if error.kind() == io::ErrorKind::NotFound {
            return Self::Deleted;
        }
        match std::fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => Self::BecameSymlink,
            Ok(m) if m.is_dir() => Self::ReplacedByDirectory,
            Ok(m) if !m.is_file() => Self::NotARegularFile,
            Err(e) if e.kind() == io::ErrorKind::NotFound => Self::Deleted,
            _ => Self::Unresolvable(format!("cannot read it: {error}")),
        }
    }
}

impl fmt::Display for StaleReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Modified => f.write_str("modified since it was read"),
            Self::Deleted => f.write_str("deleted"),
            Self::ReplacedByDirectory => f.write_str("replaced by a directory"),
            Self::BecameSymlink => f.write_str("became a symbolic link"),
            Self::NoLongerSymlink => f.write_str("was a symbolic link and no longer is"),
            Self::NotARegularFile => f.write_str("no longer a regular file"),
            Self::CreatedMeanwhile => f.write_str("created meanwhile, but it must not exist"),
            Self::ResolvesElsewhere => f.write_str("now resolves to a different file"),
            Self::Unresolvable(why) => write!(f, "cannot be resolved any more: {why}"),
        }
    }
}

/// One file that is no longer as the change set recorded it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StaleFile {
    /// The file, root-relative with `/` separators.
    pub path: String,
    /// What happened to it.
    pub reason: StaleReason,
}

impl fmt::Display for StaleFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` ({})", self.path, self.reason)
    }
}

/// A stale file is also what reading a plan's file again reports
/// ([`FileEdit::read_original`](crate::engine::FileEdit::read_original)).
impl std::error::Error for StaleFile {}

/// A file that a failed rollback left in a state a person must fix.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attention {
    /// The file, root-relative.
    pub path: String,
    /// What is wrong and how to fix it.
    pub problem: String,
}

impl fmt::Display for Attention {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}`: {}", self.path, self.problem)
    }
}

/// Why [`ChangeSet::apply`](super::ChangeSet::apply) changed nothing (or, rarely, could not
/// undo what it had begun).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ApplyError {
    /// Files changed since the change set was built; nothing was written.
    #[error(
        "nothing was written: {} file(s) changed since this change set was built: {}. \
         Preview the change again from the current files",
        files.len(), List(files)
    )]
    Stale {
        /// Every stale file, in the order of the change set.
        files: Vec<StaleFile>,
    },
    /// A filesystem step failed; everything done before it was undone.
    #[error(
        "nothing was changed: could not {step} `{path}`: {source}. Every file was restored to \
         what it was before; fix the cause and apply again{}",
        Leftovers(leftovers)
    )]
    Failed {
        /// The step that failed ("write the new content of").
        step: String,
        /// The file it failed on, root-relative.
        path: String,
        /// The underlying error.
        source: io::Error,
        /// Temporary or backup files that could not be removed (absolute paths). They hold no
        /// user data that is not elsewhere, and
        /// [`is_temp_artifact`](crate::workspace::is_temp_artifact) recognises them.
        leftovers: Vec<PathBuf>,
    },
    /// A step failed, and undoing the steps before it failed too.
    #[error(
        "apply failed: could not {step} `{path}`: {source}; undoing the partial apply also \
         failed, so these files need attention: {}{}",
        List(attention),
        Leftovers(leftovers)
    )]
    RollbackFailed {
        /// The step that failed first.
        step: String,
        /// The file it failed on, root-relative.
        path: String,
        /// The underlying error.
        source: io::Error,
        /// Every file not restored, with what to do about it.
        attention: Vec<Attention>,
        /// Temporary or backup files that could not be removed (absolute paths).
        leftovers: Vec<PathBuf>,
    },
    /// Another process (or another apply in this one) is applying in this workspace; nothing
    /// was written.
    #[error(
        "nothing was written: an apply is running in this workspace: `{}` is held by \
         {holder}; wait for it to finish and apply again",
        lock.display()
    )]
    Busy {
        /// The lock file.
        lock: PathBuf,
        /// Who holds it ("pid 123 on host h").
        holder: String,
    },
    /// An earlier apply in this workspace was interrupted and could not be recovered; nothing
    /// was written.
    #[error("nothing was written: {0}")]
    Recovery(#[source] super::RecoveryError),
    /// A fault plan (feature `testing`) stopped the apply dead, as a SIGKILL would: no
    /// rollback and no clean-up ran. Only fault-injection tests see this.
    #[doc(hidden)]
    #[error("apply stopped by a simulated crash before step {step}")]
    SimulatedCrash {
        /// The step that did not run.
        step: usize,
    },
}

impl ApplyError {
    /// The error for the model, with its kind: [`ErrorKind::Stale`] naming the stale files
    /// (root-relative paths), [`ErrorKind::ApplyFailed`] otherwise. `?` would give
    /// [`ErrorKind::Tool`]; a pending action's `apply` should use this.
    ///
    /// ```
    /// # use xcsh_tools::{changeset::{ApplyError, ChangeSet}, workspace::Workspace};
    /// # let dir = tempfile::tempdir()?;
    /// std::fs::write(dir.path().join("a.txt"), "v1")?;
    /// let mut cs = ChangeSet::new(Workspace::new(dir.path())?);
    /// cs.modify("a.txt", "v2")?;
    /// std::fs::write(dir.path().join("a.txt"), "edited meanwhile")?;
    /// let error = cs.apply().unwrap_err().into_tool_error();
    /// assert_eq!(error.kind(), &xcsh_core::ErrorKind::Stale { files: vec!["a.txt".into()] });
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn into_tool_error(self) -> ToolError {
        let kind = match &self {
            ApplyError::Stale { files } => ErrorKind::Stale {
                files: files.iter().map(|file| file.path.clone()).collect(),
            },
            _ => ErrorKind::ApplyFailed,
        };
        let message = ToolError::from(self).into_message();
        ToolError::with_kind(kind, message)
    }
}

/// Joins items as "`a` (why), `b` (why)".
struct List<'a, T>(&'a [T]);

impl<T: fmt::Display> fmt::Display for List<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, item) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{item}")?;
        }
        Ok(())
    }
}

/// Renders the leftover artifacts, if any, after a failure.
struct Leftovers<'a>(&'a [PathBuf]);

impl fmt::Display for Leftovers<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return Ok(());
        }
        f.write_str(". These temporary files could not be removed and may be deleted: ")?;
        for (i, p) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "`{}`", p.display())?;
        }
        Ok(())
    }
}
