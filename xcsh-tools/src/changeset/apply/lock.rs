//! The per-root lock: one apply (or recovery) at a time across processes.
//!
//! `<root>/.xcsh/apply.lock` is locked with `flock(2)`, which the kernel releases when its
//! holder dies, so a lock left by a killed process is simply taken over. The file holds the
//! holder's pid and host, for the error a second process sees. It is removed (and `.xcsh`
//! with it, when empty) once the apply or recovery is done.

use std::fs::{self, File};
use std::io::{self, Read, Seek, Write};
use std::path::{Path, PathBuf};

use super::atomic_fs::sync_dir;

/// The directory in a root where an apply keeps its lock and journal.
pub(crate) const STATE_DIR: &str = ".xcsh";
/// The lock's file name in [`STATE_DIR`].
pub(crate) const LOCK_FILE: &str = "apply.lock";

/// A held lock. Dropping it releases the `flock` but leaves the file, as a crash would;
/// [`RootLock::release`] removes it.
pub(crate) struct RootLock {
    file: File,
    path: PathBuf,
    dir: PathBuf,
    /// `.xcsh` was created (and the root fsynced) by this acquisition.
    made_dir: bool,
}

/// Why the lock could not be taken.
pub(crate) enum LockError {
    /// Another process (or another apply in this one) holds it.
    Held {
        lock: PathBuf,
        holder: String,
    },
    Io {
        path: PathBuf,
        source: io::Error,
    },
}

impl RootLock {
    /// Takes the lock of `root` without waiting.
    pub(crate) fn acquire(root: &Path) -> Result<Self, LockError> {
        let dir = root.join(STATE_DIR);
        let path = dir.join(LOCK_FILE);
        let io_err = |path: &Path| {
            let path = path.to_path_buf();
            move |source| LockError::Io { path, source }
        };
        let mut made_dir = false;
        for _ in 0..100 {
            match fs::create_dir(&dir) {
                // The journal will live in `.xcsh`, and a journal is only durable if the
                // entry of its directory is: fsync the root once, when `.xcsh` is new. (Found
                // by the power-loss simulation: an apply changing nothing directly in the root
                // never fsynced it, so a power loss could take `.xcsh` away with a committed
                // journal in it, leaving some directories new and others old.)
                Ok(()) => {
                    sync_dir(root).map_err(io_err(root))?;
                    made_dir = true;
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(io_err(&dir)(e)),
            }
            let mut file = match File::options()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
            {
                Ok(f) => f,
                // `.xcsh` was removed by a releasing holder meanwhile: make it again.
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io_err(&path)(e)),
            };
            if !try_lock(&file).map_err(io_err(&path))? {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                let holder = if holder.is_empty() {
                    "another process".to_owned()
                } else {
                    holder.to_owned()
                };
                return Err(LockError::Held { lock: path, holder });
            }
            // The holder before us may have removed the file after we opened it: then our
            // lock is on a file nobody else will see; start again.
            if !same_file(&file, &path) {
                continue;
            }
            let me = format!("{}\n", this_process());
            file.set_len(0)
                .and_then(|()| file.rewind())
                .and_then(|()| file.write_all(me.as_bytes()))
                .map_err(io_err(&path))?;
            return Ok(Self {
                file,
                path,
                dir,
                made_dir,
            });
        }
        Err(LockError::Io {
            path,
            source: io::Error::other("the lock file kept disappearing"),
        })
    }

    /// Whether this acquisition created `.xcsh` (and fsynced the root to keep it).
    pub(crate) fn made_dir(&self) -> bool {
        self.made_dir
    }

    /// Removes the lock file (while still holding it), then `.xcsh` if it is empty.
    pub(crate) fn release(self) {
        let _ = fs::remove_file(&self.path);
        drop(self.file);
        let _ = fs::remove_dir(&self.dir);
    }
}

#[cfg(unix)]
fn try_lock(file: &File) -> io::Result<bool> {
    use rustix::fs::{FlockOperation, flock};
    match flock(file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(true),
        Err(e) if e == rustix::io::Errno::WOULDBLOCK => Ok(false),
        Err(e) => Err(e.into()),
    }
}

#[cfg(not(unix))]
fn try_lock(file: &File) -> io::Result<bool> {
    match file.try_lock() {
        Ok(()) => Ok(true),
        Err(std::fs::TryLockError::WouldBlock) => Ok(false),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_: &File, path: &Path) -> bool {
    path.exists()
}

/// How the lock file names its holder: `pid N on host H`.
pub(crate) fn this_process() -> String {
    format!("pid {} on host {}", std::process::id(), host())
}

fn host() -> String {
    fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| fs::read_to_string("/etc/hostname"))
        .map(|h| h.trim().to_owned())
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown".to_owned())
}
