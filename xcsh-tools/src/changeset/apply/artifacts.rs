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
use crate::workspace::{BACKUP_MARKER, TEMP_MARKER};

impl Run<'_> {
    /// Writes `content` to a fresh temporary file beside `target`: create, write, chmod, fsync.
    pub(super) fn write_temp(
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
    pub(super) fn backup(&mut self, target: &Path) -> Result<PathBuf, Stop> {
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
pub(super) fn with_unique_name(
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
