//! The filesystem primitives the protocol's atomicity rests on: a rename that never
//! replaces, and making a directory's entries durable.

use std::fs::{self, File};
use std::io;
use std::path::Path;

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
pub(crate) fn sync_dir(dir: &Path) -> io::Result<()> {
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

/// Durability for a whole batch of writes at once: one `syncfs(2)` per filesystem instead of
/// an fsync per file and per directory, where that is exactly as safe.
///
/// An fsync of each of a thousand files costs a thousand journal commits and cache flushes
/// (about 0.7 ms each here); one `syncfs` writes back everything the batch left in the page
/// cache and commits it in one go. It is used only where it gives what the fsyncs gave:
/// * Linux 5.17 or later, where `syncfs` reports any writeback error the filesystem met since
///   the descriptor it is called on was opened — which is why that descriptor is one of the
///   apply's own temporary files, opened before anything was written there;
/// * a filesystem whose `syncfs` commits its journal and flushes the device (ext2/3/4, XFS,
///   Btrfs, F2FS), or tmpfs (nothing there survives a power loss, with fsync or without).
///
/// Anywhere else (network and FUSE filesystems, other systems) each file and directory is
/// fsynced, as before.
#[derive(Debug, Default)]
pub(crate) struct FsSync {
    /// One descriptor per filesystem (by device), with a directory on it for messages.
    fds: Vec<(u64, File, std::path::PathBuf)>,
    /// Turned off (a test, through the fault plan): every file and directory is fsynced.
    off: bool,
}

impl FsSync {
    /// Every file and directory will be fsynced on its own.
    pub(crate) fn off() -> Self {
        Self {
            fds: Vec::new(),
            off: true,
        }
    }

    /// Called with a file just created in `dir`, before anything is written to it: whether a
    /// later [`sync`](Self::sync) makes its data (and the entries of `dir`) durable. The first
    /// file on each such filesystem is kept open for that.
    pub(crate) fn watch(&mut self, file: &File, dir: &Path) -> bool {
        if self.off {
            return false;
        }
        let Some(dev) = batch_capable(file) else {
            return false;
        };
        if !self.fds.iter().any(|(d, _, _)| *d == dev) {
            match file.try_clone() {
                Ok(fd) => self.fds.push((dev, fd, dir.to_path_buf())),
                Err(_) => return false,
            }
        }
        true
    }

    /// Whether the entries of `dir` are made durable by [`sync`](Self::sync).
    pub(crate) fn covers_dir(&self, dir: &Path) -> bool {
        device(dir).is_some_and(|dev| self.fds.iter().any(|(d, _, _)| *d == dev))
    }

    /// The watched filesystems, each named by a directory on it.
    pub(crate) fn filesystems(&self) -> impl Iterator<Item = (usize, &Path)> {
        self.fds
            .iter()
            .enumerate()
            .map(|(i, (_, _, dir))| (i, dir.as_path()))
    }

    /// `syncfs(2)` on the `i`-th watched filesystem: everything written there is durable, or
    /// the error the writeback met.
    pub(crate) fn sync(&self, i: usize) -> io::Result<()> {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        if let Some((_, fd, _)) = self.fds.get(i) {
            return rustix::fs::syncfs(fd).map_err(io::Error::from);
        }
        let _ = i;
        Err(io::Error::other("internal error: no such filesystem"))
    }
}

/// The device of `path`.
fn device(path: &Path) -> Option<u64> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        fs::metadata(path).ok().map(|m| m.dev())
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// The device of `file` if one `syncfs` there is as durable as fsyncs (see [`FsSync`]).
fn batch_capable(file: &File) -> Option<u64> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use std::os::unix::fs::MetadataExt;
        // ext2/3/4, XFS, Btrfs, F2FS, tmpfs.
        const COMMITTING: [u32; 5] = [0xEF53, 0x5846_5342, 0x9123_683E, 0xF2F5_2010, 0x0102_1994];
        if !syncfs_reports_errors() {
            return None;
        }
        let kind = rustix::fs::fstatfs(file).ok()?.f_type as u32;
        if !COMMITTING.contains(&kind) {
            return None;
        }
        file.metadata().ok().map(|m| m.dev())
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = file;
        None
    }
}

/// Linux 5.17 or later: `syncfs` reports writeback errors (5.8 added the superblock's error
/// sequence, but until 5.17 `sync_filesystem` dropped what a filesystem's `sync_fs` returned,
/// so a failed journal commit went unreported; an fsync reports it).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn syncfs_reports_errors() -> bool {
    static KNOWN: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *KNOWN.get_or_init(|| {
        fs::read_to_string("/proc/sys/kernel/osrelease").is_ok_and(|release| {
            let mut parts = release
                .trim()
                .split(|c: char| !c.is_ascii_digit())
                .map(|n| n.parse::<u32>().unwrap_or(0));
            let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
            (major, minor) >= (5, 17)
        })
    })
}
