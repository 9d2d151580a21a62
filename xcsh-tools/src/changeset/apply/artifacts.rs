//! Temporary and backup files beside a target: their names (which
//! [`is_temp_artifact`](crate::workspace::is_temp_artifact) recognises), new content written
//! to one, the original kept in one.

use std::ffi::{OsStr, OsString};
use std::fs::{self, File, Permissions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use xxhash_rust::xxh3::xxh3_64;

use super::journal::Stop;
use super::{Run, parent_of};
use crate::changeset::Fingerprint;
use crate::changeset::fault::Effect;
use crate::workspace::{BACKUP_MARKER, TEMP_MARKER};

impl Run<'_> {
    /// Writes `content` to the temporary file of operation `i` beside `target`: create,
    /// write, chmod, and fsync unless a `syncfs` of its filesystem will make it durable with
    /// all the others ([`sync_prepared`](Self::sync_prepared)). Remembers its fingerprint for
    /// the journal.
    pub(super) fn write_temp(
        &mut self,
        i: usize,
        target: &Path,
        dir: &Path,
        content: &[u8],
        perms: Option<Permissions>,
    ) -> Result<(), Stop> {
        let temp = artifact_path(dir, target, TEMP_MARKER, self.token, i as u32);
        let mut file = self.step(
            "create a temporary file for",
            target,
            || vec![Effect::Link(temp.clone())],
            || create_new(&temp),
        )?;
        // Before anything is written to it: a `syncfs` through it reports what went wrong since.
        let batched = self.fs.watch(&file, dir);
        self.progress[i].temp = Some(temp);
        self.progress[i].new_fp = Some(Fingerprint::of(content));
        self.progress[i].fs_synced = batched;
        let temp = || self.progress[i].temp.clone().unwrap_or_default();
        self.step(
            "write the new content of",
            target,
            || vec![Effect::Write(temp())],
            || file.write_all(content),
        )?;
        if let Some(perms) = perms {
            self.step("copy the permissions of", target, Vec::new, || {
                file.set_permissions(perms)
            })?;
        }
        if !batched {
            self.step(
                "flush to disk the new content of",
                target,
                || vec![Effect::Sync(temp())],
                || file.sync_all(),
            )?;
        }
        Ok(())
    }

    /// The backup name of operation `i`, beside `target`.
    pub(super) fn backup_path(&self, i: usize, target: &Path) -> PathBuf {
        artifact_path(
            &parent_of(target),
            target,
            BACKUP_MARKER,
            self.token,
            i as u32,
        )
    }

    /// Keeps the original of `target` reachable: a hard link, or a copy where links fail.
    pub(super) fn backup(&mut self, i: usize, target: &Path) -> Result<PathBuf, Stop> {
        let b = self.backup_path(i, target);
        if self.plan.hard_links_allowed() {
            let link = || vec![Effect::Link(b.clone())];
            match self.step("back up", target, link, || fs::hard_link(target, &b)) {
                Ok(()) => return Ok(b),
                // The filesystem may not do hard links (or forbid them here): copy instead.
                Err(Stop::Failed(f)) if !f.injected => {}
                Err(other) => return Err(other),
            }
        }
        self.step(
            "copy to a backup",
            target,
            || {
                vec![
                    Effect::Link(b.clone()),
                    Effect::Write(b.clone()),
                    Effect::Sync(b.clone()),
                ]
            },
            || copy_backup(target, &b),
        )?;
        Ok(b)
    }
}

/// Stage `s`'s directory while it is built, and its name once withdrawn by a rollback.
pub(super) const STAGE_SLOT: u32 = 0x4000_0000;
pub(super) const WITHDRAWN_SLOT: u32 = 0x8000_0000;

/// The name of an artifact of the apply with `token` beside `target`, in `dir`:
/// `.{target name, shortened}{marker}{token: 8 hex}{slot: 8 hex}`. The slot tells the
/// artifacts of one apply apart (an operation's index, or a stage's); the token finds
/// them all again after a crash.
pub(crate) fn artifact_path(
    dir: &Path,
    target: &Path,
    marker: &str,
    token: u32,
    slot: u32,
) -> PathBuf {
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
    dir.join(OsString::from(format!(
        ".{short}{marker}{token:08x}{slot:08x}"
    )))
}

/// A fresh token for one apply.
pub(super) fn new_token() -> u32 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let seed = format!("{}:{n}:{nanos}", std::process::id());
    xxh3_64(seed.as_bytes()) as u32
}

/// Creates `path`, which must not exist.
fn create_new(path: &Path) -> io::Result<File> {
    File::options().write(true).create_new(true).open(path)
}

/// Copies `target` to the backup `path`, with its permissions. Not fsynced: the backup only
/// serves a rollback, and after a crash the target itself is old or new in full.
fn copy_backup(target: &Path, path: &Path) -> io::Result<()> {
    let mut out = create_new(path)?;
    let result = File::open(target).and_then(|mut src| {
        io::copy(&mut src, &mut out)?;
        out.set_permissions(src.metadata()?.permissions())?;
        // A rollback after a power loss may restore from it: its bytes must be on disk (a
        // hard-linked backup shares the original's, which are).
        out.sync_all()
    });
    if result.is_err() {
        let _ = fs::remove_file(path);
    }
    result
}
