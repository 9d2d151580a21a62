//! The stale check: is every tracked file still what was fingerprinted, reached the same
//! way, and every path that must be absent still absent?

use std::fs;
use std::io;
use std::path::Path;
use std::time::SystemTime;

use crate::changeset::{
    Absent, ChangeSet, Fingerprint, NewContent, Op, StaleFile, StaleReason, Tracked,
};
use crate::workspace::Workspace;

impl ChangeSet {
    /// Checks every operation against the disk. With `known`, a tracked file whose metadata
    /// is unchanged since its snapshot there is not hashed again.
    ///
    /// With `defer_splices`, a file modified by splicing is checked in everything but its
    /// content, and gets no snapshot: its content is checked as it is read for splicing (see
    /// [`read_for_splicing`]), so that it is read once. If anything is stale, the deferred
    /// contents are checked after all, so that the error names every stale file.
    pub(super) fn check_all(
        &self,
        known: Option<&[Option<Snap>]>,
        defer_splices: bool,
    ) -> Result<Vec<Option<Snap>>, Vec<StaleFile>> {
        let mut snaps = Vec::with_capacity(self.ops.len());
        let mut stale = Vec::new();
        let mut deferred = false;
        for (i, op) in self.ops.iter().enumerate() {
            let known = known.and_then(|k| k.get(i)).and_then(Option::as_ref);
            let mut note = |path: &Path, reason| {
                stale.push(StaleFile {
                    path: self.ws.display(path),
                    reason,
                })
            };
            let snap = match op {
                Op::Modify {
                    file,
                    content: NewContent::Splices(_),
                } if defer_splices => {
                    deferred = true;
                    if let Err(r) = check_tracked(&self.ws, file, Look::AllButContent) {
                        note(&file.entry.named, r);
                    }
                    None
                }
                Op::Modify { file, .. } | Op::Delete { file } => {
                    check_tracked(&self.ws, file, Look::Content { known })
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
                    let snap = check_tracked(&self.ws, from, Look::Content { known })
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
        } else if deferred {
            // Rare: name the stale files among the deferred ones too.
            Err(self.check_all(known, false).err().unwrap_or(stale))
        } else {
            Err(stale)
        }
    }
}

/// Reads the file a splicing modification edits, for the edits to be spliced in: its content
/// if it is still what was fingerprinted, and a snapshot of its metadata taken as it was
/// opened. This read is the content check of a file [`ChangeSet::check_all`] deferred.
pub(super) fn read_for_splicing(t: &Tracked) -> Result<(Vec<u8>, Snap), StaleReason> {
    // The target was resolved (and the name checked) by the first look; it is the file
    // itself, so a link standing there now is a change, not something to follow.
    let (bytes, meta) = t.expect.read_unchanged(&t.entry.target)?;
    Ok((bytes, Snap::of(&meta)))
}

/// Metadata that changes whenever the content may have: a cheap second look just before
/// committing, to narrow the window in which a concurrent writer goes unnoticed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Snap {
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

/// How far [`check_tracked`] looks.
#[derive(Clone, Copy)]
enum Look<'a> {
    /// Everything, content included, unless the metadata is still `known`.
    Content { known: Option<&'a Snap> },
    /// Everything but the content (which is checked later, as the file is read).
    AllButContent,
}

/// Is `t` still the file that was fingerprinted, reached the same way?
fn check_tracked(ws: &Workspace, t: &Tracked, look: Look<'_>) -> Result<Snap, StaleReason> {
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
    let known = match look {
        Look::AllButContent => return Ok(snap),
        Look::Content { known } => known,
    };
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
