//! Fault injection for the apply protocol, so tests can prove "every file as before" for a
//! failure at every single step instead of hoping.

use std::collections::BTreeSet;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

/// Which filesystem steps of an apply should fail, for tests.
///
/// Every mutating filesystem step of
/// [`ChangeSet::apply_with_faults`](super::ChangeSet::apply_with_faults) — creating a
/// directory, creating, writing, chmod-ing or fsync-ing a temporary file, linking a backup,
/// each rename, each directory fsync, each removal, and every step of a rollback — is
/// numbered from 1 in the order it runs, as is every write of the apply journal. A plan makes chosen steps fail with an I/O error
/// instead of running, or stops the apply dead before one (as a SIGKILL would: no rollback,
/// no clean-up). Use a fresh plan per apply: the count carries on.
///
/// ```
/// use xcsh_tools::changeset::{ChangeSet, FaultPlan};
/// use xcsh_tools::workspace::Workspace;
///
/// let dir = tempfile::tempdir()?;
/// std::fs::write(dir.path().join("a.txt"), "old")?;
/// let mut cs = ChangeSet::new(Workspace::new(dir.path())?);
/// cs.modify("a.txt", "new")?;
///
/// // Make the fourth step (writing the temporary file, after the journal's two) fail:
/// // nothing changes.
/// let plan = FaultPlan::fail_at(4);
/// let err = cs.apply_with_faults(&plan).unwrap_err();
/// assert!(err.to_string().starts_with("nothing was changed"));
/// assert_eq!(std::fs::read_to_string(dir.path().join("a.txt"))?, "old");
/// assert!(plan.steps()[3].starts_with("4: write the new content of `a.txt`"));
///
/// // A clean run, counted: every k in 1..=steps_taken() is worth a fault.
/// let plan = FaultPlan::none();
/// cs.apply_with_faults(&plan)?;
/// assert!(plan.steps_taken() >= 6);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[doc(hidden)]
#[derive(Default)]
pub struct FaultPlan {
    fail: BTreeSet<usize>,
    crash_at: Option<usize>,
    no_hard_links: bool,
    no_syncfs: bool,
    /// Code to run just before a step, to play a concurrent writer.
    hooks: Vec<(usize, Hook)>,
    taken: AtomicUsize,
    log: Mutex<Vec<String>>,
    /// Record every step's effect on the disk with its before-image, for
    /// [`lose_unsynced`](Self::lose_unsynced).
    power_loss: bool,
    effects: Mutex<Vec<Recorded>>,
    /// Record when every step and phase began, for [`timings`](Self::timings).
    timed: bool,
    marks: Mutex<Vec<(String, Instant)>>,
    /// Keep no log of the steps (a real apply: nobody reads it).
    quiet: bool,
}

type Hook = Box<dyn Fn() + Send + Sync>;

impl fmt::Debug for FaultPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FaultPlan")
            .field("fail", &self.fail)
            .field("crash_at", &self.crash_at)
            .field("no_hard_links", &self.no_hard_links)
            .field("no_syncfs", &self.no_syncfs)
            .field(
                "hooks_at",
                &self.hooks.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            )
            .field("taken", &self.taken)
            .field("power_loss", &self.power_loss)
            .field("timed", &self.timed)
            .finish()
    }
}

/// What the plan says about the step about to run.
pub(crate) enum Gate {
    Run,
    Fail(usize),
    Crash(usize),
}

// Only `none` is used outside the `testing` feature; the rest is test machinery.
#[cfg_attr(not(feature = "testing"), allow(dead_code))]
impl FaultPlan {
    /// A plan that injects nothing; it still counts and logs the steps.
    pub fn none() -> Self {
        Self::default()
    }

    /// The plan of a real apply: nothing injected, nothing logged.
    pub(crate) fn quiet() -> Self {
        Self {
            quiet: true,
            ..Self::default()
        }
    }

    /// A plan that injects nothing and notes when each step, and each stretch of work between
    /// steps (a stale check, reading and splicing a file, the undo record), began: see
    /// [`timings`](Self::timings). For benchmarks.
    pub fn timed() -> Self {
        Self {
            timed: true,
            ..Self::default()
        }
    }

    /// Where the time of a [`timed`](Self::timed) plan's apply went: for each step and phase
    /// in order, what it was (a step's description without its path) and the seconds until
    /// the next one began (the last one: until the apply returned).
    ///
    /// ```
    /// # use xcsh_tools::{changeset::{ChangeSet, FaultPlan}, workspace::Workspace};
    /// # let dir = tempfile::tempdir()?;
    /// std::fs::write(dir.path().join("a.txt"), "old")?;
    /// let mut cs = ChangeSet::new(Workspace::new(dir.path())?);
    /// cs.modify("a.txt", "new")?;
    /// let plan = FaultPlan::timed();
    /// cs.apply_with_faults(&plan)?;
    /// let timings = plan.timings();
    /// assert!(timings.iter().any(|(what, _)| what == "write the new content of"));
    /// assert!(timings.iter().all(|(_, seconds)| *seconds >= 0.0));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn timings(&self) -> Vec<(String, f64)> {
        let marks = self.marks.lock().unwrap_or_else(|e| e.into_inner());
        marks
            .windows(2)
            .map(|w| (w[0].0.clone(), (w[1].1 - w[0].1).as_secs_f64()))
            .collect()
    }

    /// Notes, for a [`timed`](Self::timed) plan, that the work `what` begins (not a step: it
    /// is not numbered and cannot fail).
    pub(crate) fn phase(&self, what: &str) {
        if self.timed {
            let mut marks = self.marks.lock().unwrap_or_else(|e| e.into_inner());
            marks.push((what.to_owned(), Instant::now()));
        }
    }

    /// A plan whose `k`-th step (from 1) fails.
    pub fn fail_at(k: usize) -> Self {
        Self::none().and_fail_at(k)
    }

    /// Makes step `k` fail as well (to fail a rollback step after a first failure).
    pub fn and_fail_at(mut self, k: usize) -> Self {
        self.fail.insert(k);
        self
    }

    /// A plan that stops the apply before its `k`-th step, leaving everything as a SIGKILL
    /// at that moment would.
    pub fn crash_at(k: usize) -> Self {
        Self {
            crash_at: Some(k),
            ..Self::default()
        }
    }

    /// Like [`crash_at`](Self::crash_at), but the plan also records what every step did to
    /// the disk, so that [`lose_unsynced`](Self::lose_unsynced) can then undo whatever a power
    /// loss at that moment would lose. `k` beyond the last step: the apply runs to its end,
    /// and the power goes just after it returned.
    pub fn power_loss_at(k: usize) -> Self {
        Self {
            crash_at: Some(k),
            power_loss: true,
            ..Self::default()
        }
    }

    /// Makes backups by copying instead of hard-linking, as on filesystems without hard links.
    pub fn without_hard_links(mut self) -> Self {
        self.no_hard_links = true;
        self
    }

    /// Fsyncs every file and directory on its own, as on filesystems where one `syncfs` per
    /// filesystem would not be as durable (network filesystems, Linux before 5.8, other
    /// systems).
    pub fn without_syncfs(mut self) -> Self {
        self.no_syncfs = true;
        self
    }

    /// Runs `f` just before step `k` (whether or not that step then fails), to change the
    /// files under an apply at a chosen moment, as another process could.
    pub fn before_step(mut self, k: usize, f: impl Fn() + Send + Sync + 'static) -> Self {
        self.hooks.push((k, Box::new(f)));
        self
    }

    /// How many steps were reached so far (including a failed or crashed one).
    pub fn steps_taken(&self) -> usize {
        self.taken.load(Ordering::SeqCst)
    }

    /// A description of every step reached, in order ("3: write the new content of `a.rs`").
    pub fn steps(&self) -> Vec<String> {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    pub(crate) fn hard_links_allowed(&self) -> bool {
        !self.no_hard_links
    }

    pub(crate) fn syncfs_allowed(&self) -> bool {
        !self.no_syncfs
    }

    /// Numbers the next step and says whether it may run. `effects` says what the step will
    /// do to the disk; it is only called by a [`power_loss_at`](Self::power_loss_at) plan,
    /// which records the effects with their before-images when the step is to run.
    pub(crate) fn gate(
        &self,
        what: &str,
        path: impl FnOnce() -> String,
        effects: impl FnOnce() -> Vec<Effect>,
    ) -> Gate {
        let k = self.taken.fetch_add(1, Ordering::SeqCst) + 1;
        self.phase(what);
        if !self.quiet
            && let Ok(mut log) = self.log.lock()
        {
            log.push(format!("{k}: {what} `{}`", path()));
        }
        for (_, hook) in self.hooks.iter().filter(|(at, _)| *at == k) {
            hook();
        }
        if self.crash_at == Some(k) {
            Gate::Crash(k)
        } else if self.fail.contains(&k) {
            Gate::Fail(k)
        } else {
            if self.power_loss {
                self.capture(k, effects());
            }
            Gate::Run
        }
    }

    /// Records effects outside the numbered steps (taking and releasing the root's lock), for a
    /// [`power_loss_at`](Self::power_loss_at) plan; `effects` is not called otherwise.
    pub(crate) fn note(&self, effects: impl FnOnce() -> Vec<Effect>) {
        if self.power_loss {
            self.capture(self.steps_taken(), effects());
        }
    }

    fn capture(&self, step: usize, effects: Vec<Effect>) {
        let mut recorded = self.effects.lock().unwrap_or_else(|e| e.into_inner());
        for effect in effects {
            let (images, dirs) = match &effect {
                Effect::Link(p) | Effect::Unlink(p) => (vec![image(p)], vec![dir_id(parent(p))]),
                Effect::Rename(a, b) => (
                    vec![image(a), image(b)],
                    vec![dir_id(parent(a)), dir_id(parent(b))],
                ),
                Effect::Write(p) => (vec![image(p)], vec![dir_id(parent(p))]),
                Effect::Sync(_) => (Vec::new(), Vec::new()),
                Effect::SyncDir(d) | Effect::SyncFs(d) => (Vec::new(), vec![dir_id(d)]),
            };
            let device = device_of(effect.path());
            recorded.push(Recorded {
                step,
                effect,
                images,
                dirs,
                device,
            });
        }
    }

    /// After a [`power_loss_at`](Self::power_loss_at) plan stopped an apply (or saw it
    /// finish), reverts on disk every effect a power loss at that moment may lose, taking the
    /// worst case of the usual POSIX model: a directory entry change (create, link, unlink,
    /// either side of a rename) survives only if that directory was fsynced after it; data
    /// written to a file survives only if that file was fsynced after it (else the file holds
    /// what it held before the write: a new file is left empty). A `syncfs` of a filesystem
    /// makes every earlier change on it durable, entries and data. Every unsynced effect is
    /// lost, not some of them. Metadata (permissions, times) is not modelled.
    ///
    /// Returns how many effects were reverted, or what the model cannot revert (a path whose
    /// directory has moved since, data left unsynced in a file renamed since).
    pub fn lose_unsynced(&self) -> Result<usize, String> {
        let mut recorded =
            std::mem::take(&mut *self.effects.lock().unwrap_or_else(|e| e.into_inner()));
        // A directory made by the same step as an entry in it (`.xcsh` and the lock) had no
        // identity yet when the entry was recorded: it is the one there now.
        for r in &mut recorded {
            let dirs: Vec<&Path> = match &r.effect {
                Effect::Link(p) | Effect::Unlink(p) | Effect::Write(p) => vec![parent(p)],
                Effect::Rename(a, b) => vec![parent(a), parent(b)],
                Effect::SyncDir(d) | Effect::SyncFs(d) => vec![d],
                Effect::Sync(_) => Vec::new(),
            };
            for (id, dir) in r.dirs.iter_mut().zip(dirs) {
                if id.is_none() {
                    *id = dir_id(dir);
                }
            }
        }
        let recorded = recorded;
        // Entry changes in a directory are durable up to its last fsync: by directory identity,
        // so that a directory renamed after its fsync (a stage) keeps what was synced in it.
        // A `syncfs` after effect `t`, on the filesystem (device) effect `t` changed: by the
        // device seen when each was recorded, which no later rename of a directory moves.
        let fs_synced_after = |t: usize| {
            recorded[t].device.is_some_and(|dev| {
                recorded[t + 1..]
                    .iter()
                    .any(|r| matches!(r.effect, Effect::SyncFs(_)) && r.device == Some(dev))
            })
        };
        let synced_after = |t: usize, dir: &Option<DirId>| {
            (dir.is_some()
                && recorded[t + 1..]
                    .iter()
                    .any(|r| matches!(r.effect, Effect::SyncDir(_)) && r.dirs[0] == *dir))
                || fs_synced_after(t)
        };
        let data_synced_after = |t: usize, p: &Path| {
            recorded[t + 1..]
                .iter()
                .any(|r| matches!(&r.effect, Effect::Sync(q) if q == p))
                || fs_synced_after(t)
        };
        let mut reverted = 0;
        for t in (0..recorded.len()).rev() {
            let r = &recorded[t];
            let err = |e: io::Error| format!("reverting step {} ({:?}): {e}", r.step, r.effect);
            match &r.effect {
                Effect::Link(p) | Effect::Unlink(p) => {
                    if !synced_after(t, &r.dirs[0]) {
                        check_dir(p, &r.dirs[0], r)?;
                        restore(p, &r.images[0]).map_err(err)?;
                        reverted += 1;
                    }
                }
                Effect::Rename(a, b) => {
                    let (keep_a, keep_b) =
                        (synced_after(t, &r.dirs[0]), synced_after(t, &r.dirs[1]));
                    if keep_a && keep_b {
                        continue;
                    }
                    check_dir(a, &r.dirs[0], r)?;
                    check_dir(b, &r.dirs[1], r)?;
                    match (keep_a, keep_b) {
                        // Neither side reached the disk: the object is back at its old name.
                        (false, false) => {
                            if exists(b) {
                                remove(a).map_err(err)?;
                                fs::rename(b, a).map_err(err)?;
                            }
                            restore(b, &r.images[1]).map_err(err)?;
                        }
                        // Only the new name reached the disk: the object is at both names.
                        (false, true) => {
                            if exists(b) {
                                copy_all(b, a).map_err(err)?;
                            } else {
                                restore(a, &r.images[0]).map_err(err)?;
                            }
                        }
                        // Only the removal of the old name reached the disk: the object is lost.
                        _ => restore(b, &r.images[1]).map_err(err)?,
                    }
                    reverted += 1;
                }
                Effect::Write(p) => {
                    if data_synced_after(t, p) {
                        continue;
                    }
                    let moved = recorded[t + 1..]
                        .iter()
                        .any(|l| matches!(&l.effect, Effect::Rename(a, _) if a == p));
                    if moved {
                        return Err(format!(
                            "step {}: unsynced data in `{}`, which was renamed since: not modelled",
                            r.step,
                            p.display()
                        ));
                    }
                    if fs::symlink_metadata(p).is_ok_and(|m| m.is_file()) {
                        let bytes = match &r.images[0] {
                            Image::File { bytes, .. } => bytes.as_slice(),
                            _ => &[],
                        };
                        fs::write(p, bytes).map_err(err)?;
                        reverted += 1;
                    }
                }
                Effect::Sync(_) | Effect::SyncDir(_) | Effect::SyncFs(_) => {}
            }
        }
        Ok(reverted)
    }
}

/// What a step does to the disk, for [`FaultPlan::power_loss_at`].
#[derive(Clone, Debug)]
pub(crate) enum Effect {
    /// A name appears (create, mkdir, hard link); it may have replaced one (create
    /// truncating).
    Link(PathBuf),
    /// A name goes (unlink, rmdir).
    Unlink(PathBuf),
    /// A name moves, replacing whatever had the new name: a change in both directories.
    Rename(PathBuf, PathBuf),
    /// Data written to the file.
    Write(PathBuf),
    /// The file fsynced.
    Sync(PathBuf),
    /// The directory fsynced.
    SyncDir(PathBuf),
    /// `syncfs(2)` on the filesystem holding this directory: every change there is durable.
    SyncFs(PathBuf),
}

impl Effect {
    /// The path it acts on (a rename's source: both sides are on one filesystem).
    fn path(&self) -> &Path {
        match self {
            Effect::Link(p)
            | Effect::Unlink(p)
            | Effect::Rename(p, _)
            | Effect::Write(p)
            | Effect::Sync(p)
            | Effect::SyncDir(p)
            | Effect::SyncFs(p) => p,
        }
    }
}

/// One effect with what its paths held before it, the identity of the directories whose
/// entries it changes (or that it syncs), and the filesystem it is on.
struct Recorded {
    step: usize,
    effect: Effect,
    images: Vec<Image>,
    dirs: Vec<Option<DirId>>,
    device: Option<u64>,
}

/// What a path held (a directory as a mere marker: the apply only ever removes empty ones).
enum Image {
    Absent,
    File { bytes: Vec<u8>, mode: Option<u32> },
    Dir,
    Other,
}

type DirId = (u64, u64);

/// The device of the filesystem holding `p`: that of its nearest ancestor that exists (a
/// path about to be created, in a directory about to be made, is on its parent's).
fn device_of(p: &Path) -> Option<u64> {
    p.ancestors()
        .find_map(|a| dir_id(a).or_else(|| file_id(a)))
        .map(|(dev, _)| dev)
}

#[cfg(unix)]
fn file_id(p: &Path) -> Option<DirId> {
    use std::os::unix::fs::MetadataExt;
    fs::symlink_metadata(p).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn file_id(_: &Path) -> Option<DirId> {
    None
}

fn parent(p: &Path) -> &Path {
    p.parent().unwrap_or(Path::new("."))
}

#[cfg(unix)]
fn dir_id(dir: &Path) -> Option<DirId> {
    use std::os::unix::fs::MetadataExt;
    fs::metadata(dir).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn dir_id(dir: &Path) -> Option<DirId> {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    fs::canonicalize(dir).ok()?.hash(&mut h);
    Some((0, h.finish()))
}

#[cfg(unix)]
fn mode(m: &fs::Metadata) -> Option<u32> {
    use std::os::unix::fs::PermissionsExt;
    Some(m.permissions().mode())
}

#[cfg(not(unix))]
fn mode(_: &fs::Metadata) -> Option<u32> {
    None
}

fn image(p: &Path) -> Image {
    match fs::symlink_metadata(p) {
        Err(_) => Image::Absent,
        Ok(m) if m.is_dir() => Image::Dir,
        Ok(m) if m.is_file() => match fs::read(p) {
            Ok(bytes) => Image::File {
                bytes,
                mode: mode(&m),
            },
            Err(_) => Image::Other,
        },
        Ok(_) => Image::Other,
    }
}

fn exists(p: &Path) -> bool {
    fs::symlink_metadata(p).is_ok()
}

/// The entry `p` is to be reverted in the directory it was recorded in; one since moved
/// (its path now names another directory, or none) is beyond the model.
fn check_dir(p: &Path, dir: &Option<DirId>, r: &Recorded) -> Result<(), String> {
    let now = dir_id(parent(p));
    if now.is_none() || now == *dir {
        // Gone: its own creation, reverted later in this pass, removes it whole.
        return Ok(());
    }
    Err(format!(
        "step {} ({:?}): the directory of `{}` has moved since: not modelled",
        r.step,
        r.effect,
        p.display()
    ))
}

fn remove(p: &Path) -> io::Result<()> {
    match fs::symlink_metadata(p) {
        Err(_) => Ok(()),
        Ok(m) if m.is_dir() => fs::remove_dir_all(p),
        Ok(_) => fs::remove_file(p),
    }
}

/// Puts `image` back at `p` (a directory already there stays as it is). Nothing is done in
/// a directory that no longer exists.
fn restore(p: &Path, image: &Image) -> io::Result<()> {
    if !parent(p).is_dir() {
        return Ok(());
    }
    match image {
        Image::Dir if fs::symlink_metadata(p).is_ok_and(|m| m.is_dir()) => Ok(()),
        Image::Dir => {
            remove(p)?;
            fs::create_dir(p)
        }
        Image::Absent => remove(p),
        Image::File { bytes, mode } => {
            remove(p)?;
            fs::write(p, bytes)?;
            set_mode(p, *mode)
        }
        Image::Other => Err(io::Error::other("not a file or directory: not modelled")),
    }
}

#[cfg(unix)]
fn set_mode(p: &Path, mode: Option<u32>) -> io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    match mode {
        Some(mode) => fs::set_permissions(p, fs::Permissions::from_mode(mode)),
        None => Ok(()),
    }
}

#[cfg(not(unix))]
fn set_mode(_: &Path, _: Option<u32>) -> io::Result<()> {
    Ok(())
}

fn copy_all(from: &Path, to: &Path) -> io::Result<()> {
    remove(to)?;
    if fs::symlink_metadata(from)?.is_dir() {
        fs::create_dir(to)?;
        for entry in fs::read_dir(from)? {
            let entry = entry?;
            copy_all(&entry.path(), &to.join(entry.file_name()))?;
        }
        Ok(())
    } else {
        fs::copy(from, to).map(drop)
    }
}
