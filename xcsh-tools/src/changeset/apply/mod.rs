//! The apply protocol: check, prepare, commit, sync, clean up — or roll back.
//!
//! Why it is crash-safe (SIGKILL at any instant leaves every file old-or-new in full):
//! * new content is only ever written to a fresh temporary file, and becomes visible through
//!   one `rename(2)` over the target, which is atomic;
//! * before that rename the original is hard-linked to a backup name, so it stays reachable
//!   for rollback without the target ever being missing (moving it aside instead would leave
//!   a window where the file does not exist);
//! * deletion is one rename of the file to its backup name, and a rename one `renameat2`;
//! * everything else this module creates carries a name
//!   [`is_temp_artifact`](crate::workspace::is_temp_artifact) recognises.

use std::collections::BTreeSet;
use std::fmt;
use std::path::{Path, PathBuf};

use super::fault::{Effect, FaultPlan};
use super::{ApplyError, ChangeSet};

mod artifacts;
pub(crate) mod atomic_fs;
mod commit;
pub(crate) mod durable;
mod journal;
pub(crate) mod lock;
mod record;
pub(crate) mod recover;
mod rollback;
mod staging;
mod stale;

use journal::{Crashed, Progress, Stop};
use lock::{LockError, RootLock};
use staging::Stage;

/// What an apply did.
///
/// ```
/// # use xcsh_tools::{changeset::ChangeSet, workspace::Workspace};
/// # let dir = tempfile::tempdir()?;
/// let mut cs = ChangeSet::new(Workspace::new(dir.path())?);
/// cs.create("a.txt", "12345")?;
/// let report = cs.apply()?;
/// assert_eq!(report.created, 1);
/// assert_eq!(report.bytes_written, 5);
/// assert_eq!(report.to_string(), "1 file created, 5 bytes written");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ApplyReport {
    /// Files whose content was replaced.
    pub modified: usize,
    /// Files created.
    pub created: usize,
    /// Files deleted.
    pub deleted: usize,
    /// Files renamed.
    pub renamed: usize,
    /// Bytes of new content written.
    pub bytes_written: u64,
    /// Backup files that could not be removed after the apply succeeded (absolute paths).
    /// They hold originals nobody needs any more and may be deleted;
    /// [`is_temp_artifact`](crate::workspace::is_temp_artifact) recognises them.
    pub leftovers: Vec<PathBuf>,
    /// The id of the undo record this apply kept ([`Undo`](super::Undo) reverts it), or
    /// `None`: see [`undo_not_kept`](Self::undo_not_kept).
    pub undo: Option<u64>,
    /// Why no undo record was kept (limits turned off or exceeded, a write that failed), or
    /// why the record an undo reverted could not be removed.
    pub undo_not_kept: Option<String>,
}

impl fmt::Display for ApplyReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        for (n, what) in [
            (self.modified, "modified"),
            (self.created, "created"),
            (self.deleted, "deleted"),
            (self.renamed, "renamed"),
        ] {
            if n > 0 {
                let s = if n == 1 { "" } else { "s" };
                parts.push(format!("{n} file{s} {what}"));
            }
        }
        if parts.is_empty() {
            parts.push("nothing to do".to_owned());
        }
        write!(
            f,
            "{}, {} bytes written",
            parts.join(", "),
            self.bytes_written
        )?;
        if !self.leftovers.is_empty() {
            write!(
                f,
                " ({} backup file(s) could not be removed)",
                self.leftovers.len()
            )?;
        }
        Ok(())
    }
}

/// Applies in this process run one at a time. Each checks its files, then replaces them; two
/// applies over the same file (two sessions of one server) interleaving those steps would both
/// pass the check, and the second would silently overwrite the first. Applies by other
/// processes are not covered: the stale check narrows that window, it cannot close it.
static APPLYING: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The root the apply holding [`APPLYING`] works in, so that a recovery of that root called
/// meanwhile (from another thread, or from inside the apply) is told it is busy rather than
/// waiting for the apply, or for itself.
static APPLYING_ROOT: std::sync::Mutex<Option<PathBuf>> = std::sync::Mutex::new(None);

/// Names the root of the running apply in [`APPLYING_ROOT`] while it lives.
struct ApplyingRoot;

impl ApplyingRoot {
    fn enter(root: &Path) -> Self {
        *lock_ignoring_poison(&APPLYING_ROOT) = Some(root.to_path_buf());
        ApplyingRoot
    }
}

impl Drop for ApplyingRoot {
    fn drop(&mut self) {
        *lock_ignoring_poison(&APPLYING_ROOT) = None;
    }
}

/// Whether the apply running in this process works in `root`.
pub(crate) fn applying_in(root: &Path) -> bool {
    lock_ignoring_poison(&APPLYING_ROOT).as_deref() == Some(root)
}

fn lock_ignoring_poison<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl ChangeSet {
    /// Applies every operation, or none. Blocking: from async code run it in
    /// `tokio::task::spawn_blocking` (on a clone, which is cheap).
    ///
    /// 1. Every recorded file is checked against its fingerprint (and that it is still a
    ///    regular file reached the same way), every create or rename target that it is still
    ///    absent. If any is stale, nothing is written and [`ApplyError::Stale`] names each.
    /// 2. New contents are written to temporary files beside their targets, fsynced, with the
    ///    originals' permissions; missing directories are created. A file modified by
    ///    [splicing](Self::modify_splicing) is read now, once: checked against its fingerprint
    ///    (stale: as in 1, after removing the temporary files made so far), and its edits
    ///    spliced into it (not UTF-8, or a range splitting a character: [`ApplyError::Failed`],
    ///    nothing changed). One file's original and new content are in memory at a time.
    /// 3. Each original is kept as a backup (hard link, or a copy where links fail) and the
    ///    temporary file renamed over it; deletions move the file to a backup; renames never
    ///    overwrite. The directories are fsynced.
    ///
    /// The whole apply runs under the root's lock (another apply meanwhile:
    /// [`ApplyError::Busy`]), after [`recover`](super::recover) has finished or undone any
    /// apply a crash interrupted there ([`ApplyError::Recovery`] if it could not). A journal in
    /// `<root>/.xcsh/` makes it atomic across a crash: written before step 2, committed
    /// (after every temporary file and its directory are synced) just before step 3.
    ///
    /// 4. On success the backups are removed, then the journal. If any step fails, everything done is undone
    ///    and [`ApplyError::Failed`] says what failed and that nothing changed; if undoing
    ///    fails too, [`ApplyError::RollbackFailed`] lists each file needing attention.
    ///
    /// Ownership is not copied (only permissions), and a file with several hard links is
    /// replaced at this name only: both follow from replacing by rename, which is what makes
    /// the write atomic.
    ///
    /// ```
    /// # use xcsh_tools::{changeset::{ApplyError, ChangeSet}, workspace::Workspace};
    /// # let dir = tempfile::tempdir()?;
    /// std::fs::write(dir.path().join("a.txt"), "v1")?;
    /// let mut cs = ChangeSet::new(Workspace::new(dir.path())?);
    /// cs.modify("a.txt", "v2")?;
    /// std::fs::remove_file(dir.path().join("a.txt"))?; // the world moved on
    /// match cs.apply() {
    ///     Err(ApplyError::Stale { files }) => assert_eq!(files[0].to_string(), "`a.txt` (deleted)"),
    ///     other => panic!("expected a stale error, got {other:?}"),
    /// }
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn apply(&self) -> Result<ApplyReport, ApplyError> {
        self.apply_faulty(&FaultPlan::quiet())
    }

    /// [`apply`](Self::apply) with injected faults, for tests: see [`FaultPlan`]. Only with
    /// the `testing` feature.
    ///
    /// ```
    /// # use xcsh_tools::{changeset::{ChangeSet, FaultPlan}, workspace::Workspace};
    /// # let dir = tempfile::tempdir()?;
    /// std::fs::write(dir.path().join("a.txt"), "old")?;
    /// let mut cs = ChangeSet::new(Workspace::new(dir.path())?);
    /// cs.modify("a.txt", "new")?;
    /// assert!(cs.apply_with_faults(&FaultPlan::fail_at(3)).is_err());
    /// assert_eq!(std::fs::read_to_string(dir.path().join("a.txt"))?, "old");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[cfg(feature = "testing")]
    pub fn apply_with_faults(&self, plan: &FaultPlan) -> Result<ApplyReport, ApplyError> {
        self.apply_faulty(plan)
    }

    fn apply_faulty(&self, plan: &FaultPlan) -> Result<ApplyReport, ApplyError> {
        if self.ops.is_empty() {
            return Ok(ApplyReport::default());
        }
        plan.phase("lock");
        let _one_at_a_time = lock_ignoring_poison(&APPLYING);
        let root = self.ws.root();
        let _named = ApplyingRoot::enter(root);
        let state_dir = || root.join(lock::STATE_DIR);
        let lock_file = || state_dir().join(lock::LOCK_FILE);
        plan.note(|| {
            vec![
                Effect::Link(state_dir()),
                Effect::Link(lock_file()),
                Effect::Write(lock_file()),
            ]
        });
        let lock = RootLock::acquire(root).map_err(|e| match e {
            LockError::Held { lock, holder } => ApplyError::Busy { lock, holder },
            LockError::Io { path, source } => ApplyError::Failed {
                step: "lock".to_owned(),
                path: self.ws.display(&path),
                source,
                leftovers: Vec::new(),
            },
        })?;
        if lock.made_dir() {
            plan.note(|| vec![Effect::SyncDir(root.to_path_buf())]);
        }
        let result = self.apply_locked(plan);
        // A simulated crash leaves the lock file, as a real one would.
        if !matches!(result, Err(ApplyError::SimulatedCrash { .. })) {
            plan.phase("unlock");
            plan.note(|| vec![Effect::Unlink(lock_file()), Effect::Unlink(state_dir())]);
            lock.release();
        }
        plan.phase("(returned)");
        result
    }

    fn apply_locked(&self, plan: &FaultPlan) -> Result<ApplyReport, ApplyError> {
        // An apply interrupted by a crash is finished or undone first.
        if recover::has_journal(self.ws.root()) {
            recover::recover_locked(self.ws.root()).map_err(ApplyError::Recovery)?;
        }
        plan.phase("first stale check");
        let snaps = self
            .check_all(None, true)
            .map_err(|files| ApplyError::Stale { files })?;
        let mut run = Run {
            cs: self,
            plan,
            token: artifacts::new_token(),
            progress: vec![Progress::default(); self.ops.len()],
            stages: Vec::new(),
            op_stage: vec![None; self.ops.len()],
            dirs_to_sync: BTreeSet::new(),
            unsynced: BTreeSet::new(),
            leftovers: Vec::new(),
            effect: self.effect_digest(),
            fs: if plan.syncfs_allowed() {
                atomic_fs::FsSync::default()
            } else {
                atomic_fs::FsSync::off()
            },
        };
        let outcome = run
            .record(durable::State::Prepared)
            .and_then(|()| run.forward(snaps));
        let crashed = |step| Err(ApplyError::SimulatedCrash { step });
        match outcome {
            Ok(()) => run.finish(),
            Err(Stop::Crash(step)) => crashed(step),
            Err(Stop::Stale(files)) => match run.rollback() {
                Err(Crashed(step)) => crashed(step),
                // Only temporary files and fresh directories existed; whatever could not be
                // removed of them is an artifact, so the stale files are what matters.
                Ok(_) => match run.drop_journal() {
                    Err(step) => crashed(step),
                    Ok(()) => Err(ApplyError::Stale { files }),
                },
            },
            Err(Stop::Failed(failure)) => match run.rollback() {
                Err(Crashed(step)) => crashed(step),
                Ok(attention) => {
                    if attention.is_empty()
                        && let Err(step) = run.drop_journal()
                    {
                        return crashed(step);
                    }
                    // Files needing attention: the journal stays, so that `xcsh recover`
                    // can still finish or undo the apply once they are fixed.
                    if attention.is_empty() {
                        Err(ApplyError::Failed {
                            step: failure.what.to_owned(),
                            path: failure.path,
                            source: failure.source,
                            leftovers: run.leftovers,
                        })
                    } else {
                        Err(ApplyError::RollbackFailed {
                            step: failure.what.to_owned(),
                            path: failure.path,
                            source: failure.source,
                            attention,
                            leftovers: run.leftovers,
                        })
                    }
                }
            },
        }
    }
}

/// One apply in progress. Its steps are `impl` blocks beside it: `commit` (the forward pass),
/// `rollback`, `staging` (new directories), `artifacts` (temporary files and backups), and
/// `journal` (numbered steps and what each operation has done).
struct Run<'a> {
    cs: &'a ChangeSet,
    plan: &'a FaultPlan,
    /// Carried by the names of all this apply's artifacts.
    token: u32,
    progress: Vec<Progress>,
    /// Directories being built under temporary names, one per missing top directory.
    stages: Vec<Stage>,
    /// For each operation, the stage its target lies in, if any.
    op_stage: Vec<Option<usize>>,
    /// Every directory the commit changed (a rollback syncs them too).
    dirs_to_sync: BTreeSet<PathBuf>,
    /// Those of them changed since they were last fsynced.
    unsynced: BTreeSet<PathBuf>,
    /// Artifacts that could not be removed.
    leftovers: Vec<PathBuf>,
    /// The change set's effect digest, for the journal and the undo record.
    effect: String,
    /// The filesystems whose changes one `syncfs` each makes durable.
    fs: atomic_fs::FsSync,
}

/// The directory holding `path` (every path here is absolute and below the root, so it has
/// one; `.` is a harmless fallback).
fn parent_of(path: &Path) -> PathBuf {
    path.parent().unwrap_or(Path::new(".")).to_path_buf()
}
