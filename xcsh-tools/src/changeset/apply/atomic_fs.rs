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
