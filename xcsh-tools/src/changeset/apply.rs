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
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::fs::{self, File, Permissions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use xxhash_rust::xxh3::xxh3_64;

use super::fault::{FaultPlan, Gate};
use super::{
    Absent, ApplyError, Attention, ChangeSet, Fingerprint, Op, StaleFile, StaleReason, Tracked,
};
use crate::workspace::{BACKUP_MARKER, TEMP_MARKER, Workspace};

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

impl ChangeSet {
    /// Applies every operation, or none. Blocking: from async code run it in
    /// `tokio::task::spawn_blocking` (on a clone, which is cheap).
    ///
    /// 1. Every recorded file is checked against its fingerprint (and that it is still a
    ///    regular file reached the same way), every create or rename target that it is still
    ///    absent. If any is stale, nothing is written and [`ApplyError::Stale`] names each.
    /// 2. New contents are written to temporary files beside their targets, fsynced, with the
    ///    originals' permissions; missing directories are created.
    /// 3. Each original is kept as a backup (hard link, or a copy where links fail) and the
    ///    temporary file renamed over it; deletions move the file to a backup; renames never
    ///    overwrite. The directories are fsynced.
    /// 4. On success the backups are removed. If any step fails, everything done is undone
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
        self.apply_with_faults(&FaultPlan::none())
    }

    /// [`apply`](Self::apply) with injected faults, for tests: see [`FaultPlan`].
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
    #[doc(hidden)]
    pub fn apply_with_faults(&self, plan: &FaultPlan) -> Result<ApplyReport, ApplyError> {
        if self.ops.is_empty() {
            return Ok(ApplyReport::default());
        }
        let snaps = self
            .check_all(None)
            .map_err(|files| ApplyError::Stale { files })?;
        let mut run = Run {
            cs: self,
            plan,
            progress: vec![Progress::default(); self.ops.len()],
            stages: Vec::new(),
            op_stage: vec![None; self.ops.len()],
            dirs_to_sync: BTreeSet::new(),
            leftovers: Vec::new(),
        };
        let outcome = run.forward(&snaps);
        match outcome {
            Ok(()) => run.finish(),
            Err(Stop::Crash(step)) => Err(ApplyError::SimulatedCrash { step }),
            Err(Stop::Stale(files)) => match run.rollback() {
                Err(Crashed(step)) => Err(ApplyError::SimulatedCrash { step }),
                // Only temporary files and fresh directories existed; whatever could not be
                // removed of them is an artifact, so the stale files are what matters.
                Ok(_) => Err(ApplyError::Stale { files }),
            },
            Err(Stop::Failed(failure)) => match run.rollback() {
                Err(Crashed(step)) => Err(ApplyError::SimulatedCrash { step }),
                Ok(attention) if attention.is_empty() => Err(ApplyError::Failed {
                    step: failure.what.to_owned(),
                    path: failure.path,
                    source: failure.source,
                    leftovers: run.leftovers,
                }),
                Ok(attention) => Err(ApplyError::RollbackFailed {
                    step: failure.what.to_owned(),
                    path: failure.path,
                    source: failure.source,
                    attention,
                    leftovers: run.leftovers,
                }),
            },
        }
    }

    /// Checks every operation against the disk. With `known`, a tracked file whose metadata
    /// is unchanged since that snapshot is not hashed again.
    fn check_all(
        &self,
        known: Option<&[Option<Snap>]>,
    ) -> Result<Vec<Option<Snap>>, Vec<StaleFile>> {
        let mut snaps = Vec::with_capacity(self.ops.len());
        let mut stale = Vec::new();
        for (i, op) in self.ops.iter().enumerate() {
            let known = known.and_then(|k| k.get(i)).and_then(Option::as_ref);
            let mut note = |path: &Path, reason| {
                stale.push(StaleFile {
                    path: self.ws.display(path),
                    reason,
                })
            };
            let snap = match op {
                Op::Modify { file, .. } | Op::Delete { file } => {
                    check_tracked(&self.ws, file, known)
                        .map_err(|r| note(&file.entry.named, r))
                        .ok()
                }
                Op::Create { file, .. } => {
                    if let Err(r) = check_absent(&self.ws, file) {
                        note(&file.entry.named, r);
                    }
                    None
                }
                Op::Rename { from, to } => {
                    let snap = check_tracked(&self.ws, from, known)
                        .map_err(|r| note(&from.entry.named, r))
                        .ok();
                    if let Err(r) = check_absent(&self.ws, to) {
                        note(&to.entry.named, r);
                    }
                    snap
                }
            };
            snaps.push(snap);
        }
        if stale.is_empty() {
            Ok(snaps)
        } else {
            Err(stale)
        }
    }
}

/// Metadata that changes whenever the content may have: a cheap second look just before
/// committing, to narrow the window in which a concurrent writer goes unnoticed.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Snap {
    len: u64,
    modified: Option<SystemTime>,
    #[cfg(unix)]
    ino: (u64, u64),
}

impl Snap {
    fn of(meta: &fs::Metadata) -> Self {
        #[cfg(unix)]
        use std::os::unix::fs::MetadataExt;
        Self {
            len: meta.len(),
            modified: meta.modified().ok(),
            #[cfg(unix)]
            ino: (meta.dev(), meta.ino()),
        }
    }
}

/// Is `t` still the file that was fingerprinted, reached the same way?
fn check_tracked(ws: &Workspace, t: &Tracked, known: Option<&Snap>) -> Result<Snap, StaleReason> {
    // The name itself first: a file replaced by a link (even one leading out) is "became a
    // symbolic link", whatever resolving it would say.
    match fs::symlink_metadata(&t.entry.named) {
        Ok(m) if m.file_type().is_symlink() && !t.entry.is_symlink => {
            return Err(StaleReason::BecameSymlink);
        }
        Ok(m) if !m.file_type().is_symlink() && t.entry.is_symlink => {
            return Err(if m.is_dir() {
                StaleReason::ReplacedByDirectory
            } else {
                StaleReason::NoLongerSymlink
            });
        }
        _ => {}
    }
    let now = ws
        .resolve_entry(&t.user)
        .map_err(|e| StaleReason::Unresolvable(e.to_string()))?;
    if now.named != t.entry.named || now.target != t.entry.target {
        return Err(StaleReason::ResolvesElsewhere);
    }
    let meta = match fs::symlink_metadata(&now.target) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Err(StaleReason::Deleted),
        Err(e) => return Err(StaleReason::Unresolvable(e.to_string())),
    };
    let ft = meta.file_type();
    if ft.is_dir() {
        return Err(StaleReason::ReplacedByDirectory);
    }
    if ft.is_symlink() {
        return Err(StaleReason::BecameSymlink);
    }
    if !ft.is_file() {
        return Err(StaleReason::NotARegularFile);
    }
    let snap = Snap::of(&meta);
    if meta.len() != t.expect.len() {
        return Err(StaleReason::Modified);
    }
    if known == Some(&snap) {
        return Ok(snap);
    }
    match Fingerprint::of_file(&now.target) {
        Ok(fp) if fp == t.expect => Ok(snap),
        Ok(_) => Err(StaleReason::Modified),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(StaleReason::Deleted),
        Err(e) => Err(StaleReason::Unresolvable(format!("cannot read it: {e}"))),
    }
}

/// Is nothing at `a` yet, reached the same way?
fn check_absent(ws: &Workspace, a: &Absent) -> Result<(), StaleReason> {
    match fs::symlink_metadata(&a.entry.named) {
        Ok(_) => return Err(StaleReason::CreatedMeanwhile),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        // A directory on the way became a file.
        Err(e) if e.kind() == io::ErrorKind::NotADirectory => {
            return Err(StaleReason::ResolvesElsewhere);
        }
        Err(e) => return Err(StaleReason::Unresolvable(e.to_string())),
    }
    let now = ws
        .resolve_entry(&a.user)
        .map_err(|e| StaleReason::Unresolvable(e.to_string()))?;
    if now.named != a.entry.named {
        return Err(StaleReason::ResolvesElsewhere);
    }
    Ok(())
}

/// What has been done for one operation, so it can be undone.
#[derive(Clone, Debug, Default)]
struct Progress {
    /// A temporary file holding the new content, not yet renamed into place.
    temp: Option<PathBuf>,
    /// The original, kept for rollback (modify: a link or copy; delete: the moved file).
    backup: Option<PathBuf>,
    /// The visible change has happened.
    committed: bool,
}

/// Why the forward pass stopped.
enum Stop {
    Failed(Failure),
    Stale(Vec<StaleFile>),
    Crash(usize),
}

/// A simulated SIGKILL during rollback.
struct Crashed(usize);

struct Failure {
    what: &'static str,
    path: String,
    source: io::Error,
    /// Injected by a [`FaultPlan`] rather than reported by the system.
    injected: bool,
}

/// A directory that does not exist yet, built under a temporary name beside where it goes
/// (with its subdirectories and new files inside) and renamed into place in one step, so a
/// crash never leaves a new, empty directory with an ordinary name behind.
struct Stage {
    /// Where the directory goes (the highest missing ancestor of some target).
    top: PathBuf,
    /// Its temporary name while being built.
    dir: PathBuf,
    /// Subdirectories created in it, parents first, as their final paths.
    subdirs: Vec<PathBuf>,
    /// Renamed into place.
    committed: bool,
}

impl Stage {
    /// Where `path` (under `top`) currently is: inside the stage until it is committed.
    fn locate(&self, path: &Path) -> PathBuf {
        match (self.committed, path.strip_prefix(&self.top)) {
            (false, Ok(rel)) => self.dir.join(rel),
            _ => path.to_path_buf(),
        }
    }
}

struct Run<'a> {
    cs: &'a ChangeSet,
    plan: &'a FaultPlan,
    progress: Vec<Progress>,
    /// Directories being built under temporary names, one per missing top directory.
    stages: Vec<Stage>,
    /// For each operation, the stage its target lies in, if any.
    op_stage: Vec<Option<usize>>,
    dirs_to_sync: BTreeSet<PathBuf>,
    /// Artifacts that could not be removed.
    leftovers: Vec<PathBuf>,
}

impl Run<'_> {
    /// Runs one numbered filesystem step, unless the fault plan says otherwise.
    fn step<T>(
        &self,
        what: &'static str,
        path: &Path,
        f: impl FnOnce() -> io::Result<T>,
    ) -> Result<T, Stop> {
        let shown = self.cs.ws.display(path);
        match self.plan.gate(what, &shown) {
            Gate::Crash(k) => Err(Stop::Crash(k)),
            Gate::Fail(k) => Err(Stop::Failed(Failure {
                what,
                path: shown,
                source: io::Error::other(format!("injected fault at step {k}")),
                injected: true,
            })),
            Gate::Run => f().map_err(|source| {
                Stop::Failed(Failure {
                    what,
                    path: shown,
                    source,
                    injected: false,
                })
            }),
        }
    }

    fn fail(&self, what: &'static str, path: &Path, source: io::Error) -> Stop {
        Stop::Failed(Failure {
            what,
            path: self.cs.ws.display(path),
            source,
            injected: false,
        })
    }

    fn forward(&mut self, snaps: &[Option<Snap>]) -> Result<(), Stop> {
        let cs = self.cs;
        // Prepare: nothing visible changes yet.
        for (i, op) in cs.ops.iter().enumerate() {
            match op {
                Op::Modify { file, content } => {
                    let target = &file.entry.target;
                    let perms = fs::metadata(target)
                        .map_err(|e| self.fail("read the permissions of", target, e))?
                        .permissions();
                    let dir = parent_of(target);
                    self.write_temp(i, target, &dir, content, Some(perms))?;
                }
                Op::Create { file, content } => {
                    let dir = self.prepare_parent(i, &file.entry.named)?;
                    self.write_temp(i, &file.entry.named, &dir, content, None)?;
                }
                Op::Rename { to, .. } => {
                    self.prepare_parent(i, &to.entry.named)?;
                }
                Op::Delete { .. } => {}
            }
        }
        // A second, cheap look: the prepare phase may have taken a while.
        cs.check_all(Some(snaps)).map_err(Stop::Stale)?;

        // Commit: each operation becomes visible in one atomic rename. New files in new
        // directories land in their stage first, the stages then appear whole, and renames
        // come last because they may move files into a stage's directory.
        for (i, op) in cs.ops.iter().enumerate() {
            match op {
                Op::Modify { file, .. } => {
                    let target = &file.entry.target;
                    let backup = self.backup(target)?;
                    self.progress[i].backup = Some(backup);
                    let temp = self.progress[i].temp.clone().ok_or_else(|| {
                        self.fail("find the temporary file for", target, missing_temp())
                    })?;
                    self.step("replace", target, || fs::rename(&temp, target))?;
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
                    self.step("create", target, || rename_noreplace(&temp, &dest))?;
                    self.progress[i].temp = None;
                    self.progress[i].committed = true;
                    self.sync_later(target);
                }
                Op::Rename { .. } => {}
                Op::Delete { file } => {
                    let target = &file.entry.named;
                    let backup = self.step("delete", target, || {
                        with_unique_name(&parent_of(target), target, BACKUP_MARKER, |b| {
                            rename_noreplace(target, b)
                        })
                    })?;
                    self.progress[i].backup = Some(backup);
                    self.progress[i].committed = true;
                    self.sync_later(target);
                }
            }
        }
        for s in 0..self.stages.len() {
            let (dir, top) = (self.stages[s].dir.clone(), self.stages[s].top.clone());
            self.step("create the directory", &top, || {
                rename_noreplace(&dir, &top)
            })?;
            self.stages[s].committed = true;
            self.sync_later(&top);
            for sub in self.stages[s].subdirs.clone() {
                self.sync_later(&sub);
            }
        }
        for (i, op) in cs.ops.iter().enumerate() {
            if let Op::Rename { from, to } = op {
                let (from, to) = (&from.entry.named, &to.entry.named);
                self.step("rename", from, || rename_noreplace(from, to))?;
                self.progress[i].committed = true;
                self.sync_later(from);
                self.sync_later(to);
            }
        }
        // Make the renames durable before the backups go.
        for dir in self.dirs_to_sync.clone() {
            self.step("sync the directory", &dir, || sync_dir(&dir))?;
        }
        Ok(())
    }

    /// Writes `content` to a fresh temporary file beside `target`: create, write, chmod, fsync.
    fn write_temp(
        &mut self,
        i: usize,
        target: &Path,
        dir: &Path,
        content: &[u8],
        perms: Option<Permissions>,
    ) -> Result<(), Stop> {
        let (temp, mut file) = self.step("create a temporary file for", target, || {
            create_unique(dir, target, TEMP_MARKER)
        })?;
        self.progress[i].temp = Some(temp);
        self.step("write the new content of", target, || {
            file.write_all(content)
        })?;
        if let Some(perms) = perms {
            self.step("copy the permissions of", target, || {
                file.set_permissions(perms)
            })?;
        }
        self.step("flush to disk the new content of", target, || {
            file.sync_all()
        })?;
        Ok(())
    }

    /// Keeps the original of `target` reachable: a hard link, or a copy where links fail.
    fn backup(&mut self, target: &Path) -> Result<PathBuf, Stop> {
        if self.plan.hard_links_allowed() {
            match self.step("back up", target, || {
                with_unique_name(&parent_of(target), target, BACKUP_MARKER, |b| {
                    fs::hard_link(target, b)
                })
            }) {
                Ok(b) => return Ok(b),
                // The filesystem may not do hard links (or forbid them here): copy instead.
                Err(Stop::Failed(f)) if !f.injected => {}
                Err(other) => return Err(other),
            }
        }
        self.step("copy to a backup", target, || copy_backup(target))
    }

    /// Makes sure the directory for `target` will exist at commit: returns where to put its
    /// temporary file now. Missing directories are built inside a stage (see [`Stage`]).
    fn prepare_parent(&mut self, i: usize, target: &Path) -> Result<PathBuf, Stop> {
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
                let dir = self.step("create a staging directory for", &top, || {
                    with_unique_name(&parent_of(&top), &top, TEMP_MARKER, |c| fs::create_dir(c))
                })?;
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
            self.step("create the directory", &sub, || fs::create_dir(&inside))?;
            self.stages[s].subdirs.push(sub);
        }
        Ok(self.locate(i, &parent_of(target)))
    }

    /// Where `path`, in operation `i`'s target directory, currently is.
    fn locate(&self, i: usize, path: &Path) -> PathBuf {
        match self.op_stage[i] {
            Some(s) => self.stages[s].locate(path),
            None => path.to_path_buf(),
        }
    }

    fn sync_later(&mut self, path: &Path) {
        if let Some(parent) = path.parent() {
            self.dirs_to_sync.insert(parent.to_path_buf());
        }
    }

    /// After a successful commit: remove backups and report.
    fn finish(mut self) -> Result<ApplyReport, ApplyError> {
        let mut report = ApplyReport::default();
        for (i, op) in self.cs.ops.iter().enumerate() {
            match op {
                Op::Modify { content, .. } => {
                    report.modified += 1;
                    report.bytes_written += content.len() as u64;
                }
                Op::Create { content, .. } => {
                    report.created += 1;
                    report.bytes_written += content.len() as u64;
                }
                Op::Delete { .. } => report.deleted += 1,
                Op::Rename { .. } => report.renamed += 1,
            }
            if let Some(backup) = self.progress[i].backup.take() {
                match self.step("remove the backup", &backup, || fs::remove_file(&backup)) {
                    Ok(()) => {}
                    Err(Stop::Crash(step)) => return Err(ApplyError::SimulatedCrash { step }),
                    // The change is done and durable; a stray backup is only clutter.
                    Err(_) => self.leftovers.push(backup),
                }
            }
        }
        report.leftovers = self.leftovers;
        Ok(report)
    }

    /// Undoes everything in reverse order. Returns the files that could not be restored.
    ///
    /// Renames are undone first (they may have moved files into new directories), then new
    /// directories are withdrawn under a temporary name in one step each — so a crash during
    /// rollback, too, never shows a new directory without its files — then everything else.
    fn rollback(&mut self) -> Result<Vec<Attention>, Crashed> {
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
            let withdrawn = self.step("withdraw the new directory", &top, || {
                with_unique_name(&parent_of(&top), &top, TEMP_MARKER, |c| {
                    rename_noreplace(&top, c)
                })
            });
            match withdrawn {
                Ok(dir) => {
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
                if self.undo("remove the new directory", dir, || fs::remove_dir(&at))? {
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
                    if self.undo("restore the original of", target, || {
                        fs::rename(backup, target)
                    })? {
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
                    && self.undo("remove the new file", target, || fs::remove_file(&at))?
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
                    && self.undo("restore the deleted", target, || {
                        rename_noreplace(backup, target)
                    })?
                {
                    attention.push(self.attention(target, format!(
                            "was deleted by the failed apply; its content is in `{}`: rename that back",
                            backup.display()
                        )));
                }
            }
            Op::Rename { from, to } => {
                let (from, to) = (&from.entry.named, &to.entry.named);
                if p.committed && self.undo("rename back", to, || rename_noreplace(to, from))? {
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
        f: impl FnOnce() -> io::Result<()>,
    ) -> Result<bool, Crashed> {
        match self.step(what, path, f) {
            Ok(()) => Ok(false),
            Err(Stop::Crash(k)) => Err(Crashed(k)),
            Err(_) => Ok(true),
        }
    }

    fn remove_artifact(&mut self, path: &Path) -> Result<(), Crashed> {
        if self.undo("remove the temporary file", path, || fs::remove_file(path))? {
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

/// The directory holding `path` (every path here is absolute and below the root, so it has
/// one; `.` is a harmless fallback).
fn parent_of(path: &Path) -> PathBuf {
    path.parent().unwrap_or(Path::new(".")).to_path_buf()
}

fn missing_temp() -> io::Error {
    io::Error::other("internal error: the temporary file was not prepared")
}

/// A name for a temporary or backup file beside `target`:
/// `.{target name, shortened}{marker}{16 hex digits}`.
fn artifact_name(target: &Path, marker: &str) -> OsString {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let base = target
        .file_name()
        .map(OsStr::to_string_lossy)
        .unwrap_or_default();
    // File names are limited to 255 bytes; keep the hint short enough to leave room.
    let mut short = String::new();
    for c in base.chars() {
        if short.len() + c.len_utf8() > 100 {
            break;
        }
        short.push(c);
    }
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let seed = format!("{}:{n}:{nanos}", std::process::id());
    OsString::from(format!(".{short}{marker}{:016x}", xxh3_64(seed.as_bytes())))
}

/// Tries fresh artifact names beside `target` until `f` does not report a collision.
fn with_unique_name(
    dir: &Path,
    target: &Path,
    marker: &str,
    mut f: impl FnMut(&Path) -> io::Result<()>,
) -> io::Result<PathBuf> {
    let mut last = None;
    for _ in 0..16 {
        let candidate = dir.join(artifact_name(target, marker));
        match f(&candidate) {
            Ok(()) => return Ok(candidate),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("could not find a free temporary name")))
}

/// Creates a fresh artifact file in `dir`, named after `target`.
fn create_unique(dir: &Path, target: &Path, marker: &str) -> io::Result<(PathBuf, File)> {
    let mut file = None;
    let path = with_unique_name(dir, target, marker, |candidate| {
        file = Some(
            File::options()
                .write(true)
                .create_new(true)
                .open(candidate)?,
        );
        Ok(())
    })?;
    let file = file.ok_or_else(|| io::Error::other("temporary file vanished"))?;
    Ok((path, file))
}

/// Copies `target` to a fresh backup name, with its permissions. Not fsynced: the backup only
/// serves an in-process rollback, and after a crash the target itself is old or new in full.
fn copy_backup(target: &Path) -> io::Result<PathBuf> {
    let (path, mut out) = create_unique(&parent_of(target), target, BACKUP_MARKER)?;
    let result = File::open(target).and_then(|mut src| {
        io::copy(&mut src, &mut out)?;
        out.set_permissions(src.metadata()?.permissions())
    });
    match result {
        Ok(()) => Ok(path),
        Err(e) => {
            let _ = fs::remove_file(&path);
            Err(e)
        }
    }
}

/// Renames `from` to `to`, failing with `AlreadyExists` instead of replacing anything at
/// `to` (a file that appeared after the stale check must not be clobbered).
pub(crate) fn rename_noreplace(from: &Path, to: &Path) -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use rustix::fs::{CWD, RenameFlags, renameat_with};
        use rustix::io::Errno;
        match renameat_with(CWD, from, CWD, to, RenameFlags::NOREPLACE) {
            Ok(()) => return Ok(()),
            // The filesystem (or kernel) cannot do it atomically: fall back below.
            Err(e) if e == Errno::INVAL || e == Errno::NOSYS || e == Errno::OPNOTSUPP => {}
            Err(e) => return Err(e.into()),
        }
    }
    // Check, then rename: a file created in the instant between would be replaced, which the
    // stale check just before makes unlikely; no portable primitive does better.
    match fs::symlink_metadata(to) {
        Ok(_) => Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("`{}` already exists", to.display()),
        )),
        Err(e) if e.kind() == io::ErrorKind::NotFound => fs::rename(from, to),
        Err(e) => Err(e),
    }
}

/// Makes the entries of `dir` durable (renames and creations in it).
fn sync_dir(dir: &Path) -> io::Result<()> {
    #[cfg(unix)]
    {
        match File::open(dir).and_then(|d| d.sync_all()) {
            // Some filesystems cannot fsync a directory; their renames are as durable as
            // they get.
            Err(e) if e.kind() == io::ErrorKind::InvalidInput => Ok(()),
            other => other,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}
