//! Undo records on disk: `<root>/.xcsh/undo/<id>-<token>/`, one directory per kept apply.
//!
//! A record directory holds `record` (what the apply did: a header line
//! `xcsh-undo-record 1 <xxh3-64 of the rest, hex>`, then JSON, as the apply journal) and the
//! originals the apply replaced or deleted, named `0`, `1`, …: hard links to the apply's
//! backups, taken before the backups are removed, so keeping them copies nothing (a copy
//! where links fail). `.xcsh/.gitignore` (`*`) keeps all of it out of version control.
//!
//! A record is written under `.new-<token>` and renamed to its id once complete and synced,
//! so a record directory with a `record` file is whole. Removal takes the `record` file first:
//! a directory without one is the remains of a removal or of a write a crash cut short, and
//! is removed by the next apply that keeps a record.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::super::apply::atomic_fs::sync_dir;
use super::super::apply::durable::{JFp, JOp, Journal, dec, enc};
use super::super::apply::lock::STATE_DIR;
use super::UndoLimits;
use xcsh_core::framing::Frame;

const UNDO_DIR: &str = "undo";
const RECORD_FILE: &str = "record";
const NEW_PREFIX: &str = ".new-";
/// The last id given out, so that ids are never reused.
const LAST_ID: &str = "last-id";

fn last_id(root: &Path) -> u64 {
    fs::read_to_string(undo_dir(root).join(LAST_ID))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}
const MAGIC: &str = "xcsh-undo-record";
const VERSION: u32 = 1;

/// What one apply did, enough to revert it: the originals are the numbered blobs beside it.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Record {
    /// The apply's token (its journal's), so that recovery finishing an apply whose record
    /// was already kept does not keep it twice.
    pub(crate) token: String,
    /// The root the apply ran in (absolute, encoded as in the journal).
    pub(crate) root: String,
    /// Seconds since the Unix epoch when the record was kept.
    pub(crate) applied_at: u64,
    /// Bytes of originals kept.
    pub(crate) bytes: u64,
    pub(crate) ops: Vec<UOp>,
    /// Directories the apply created (outermost first), removed by an undo if left empty.
    pub(crate) dirs: Vec<String>,
    /// The applied change set's [`effect_digest`](crate::changeset::ChangeSet::effect_digest),
    /// to recognise it as already applied (unknown for an apply finished by recovery).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) effect: Option<String>,
}

/// One operation of the apply, root-relative paths encoded as in the journal.
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum UOp {
    Modify {
        target: String,
        was: JFp,
        now: JFp,
        blob: usize,
    },
    Create {
        target: String,
        now: JFp,
    },
    Delete {
        target: String,
        was: JFp,
        blob: usize,
    },
    Rename {
        from: String,
        to: String,
        fp: JFp,
    },
}

/// One record directory.
#[derive(Clone, Debug)]
pub(crate) struct Slot {
    pub(crate) id: u64,
    pub(crate) token: String,
    pub(crate) dir: PathBuf,
}

impl Slot {
    pub(crate) fn record_path(&self) -> PathBuf {
        self.dir.join(RECORD_FILE)
    }

    pub(crate) fn blob_path(&self, blob: usize) -> PathBuf {
        self.dir.join(blob.to_string())
    }
}

pub(crate) fn undo_dir(root: &Path) -> PathBuf {
    root.join(STATE_DIR).join(UNDO_DIR)
}

/// The whole records under `root`, oldest first. Directories that are not records (a
/// half-written or half-removed one) are skipped.
pub(crate) fn list(root: &Path) -> io::Result<Vec<Slot>> {
    let dir = undo_dir(root);
    let entries = match fs::read_dir(&dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut slots = Vec::new();
    for entry in entries {
        let entry = entry?;
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        let Some((id, token)) = name.split_once('-') else {
            continue;
        };
        let Ok(id) = id.parse::<u64>() else { continue };
        let slot = Slot {
            id,
            token: token.to_owned(),
            dir: entry.path(),
        };
        if fs::symlink_metadata(slot.record_path()).is_ok() {
            slots.push(slot);
        }
    }
    slots.sort_by_key(|s| s.id);
    Ok(slots)
}

/// Reads and checks a record; the error says what is wrong with it.
pub(crate) fn read(root: &Path, slot: &Slot) -> Result<Record, String> {
    let bytes = fs::read(slot.record_path()).map_err(|e| format!("it cannot be read ({e})"))?;
    let record = decode(&bytes)?;
    if record.root != enc(Path::new(""), root) {
        return Err(format!(
            "it was written for another workspace (`{}`); it may have been copied here",
            record.root.trim_start_matches("u:")
        ));
    }
    Ok(record)
}

/// How a record is framed on disk.
const FRAME: Frame = Frame {
    magic: MAGIC,
    version: VERSION,
    name: "undo record",
    other_version_hint: "",
};

fn encode(record: &Record) -> Vec<u8> {
    FRAME.encode(record)
}

fn decode(bytes: &[u8]) -> Result<Record, String> {
    FRAME.decode(bytes)
}

/// Why an apply's inverse was not kept, for the report.
pub(crate) type NotKept = String;

/// Keeps the inverse of the apply `journal` describes (committed; its backups still exist),
/// then drops the oldest records beyond `limits`. Runs under the root's lock. Returns the
/// new record's id, or why none was kept; the apply itself is done either way.
pub(crate) fn keep(
    root: &Path,
    journal: &Journal,
    effect: Option<String>,
    limits: UndoLimits,
) -> Result<u64, NotKept> {
    if limits.is_off() {
        return Err("keeping undo records is turned off".to_owned());
    }
    let bytes: u64 = journal
        .ops
        .iter()
        .map(|op| match op {
            JOp::Modify { old, .. } | JOp::Delete { old, .. } => old.len(),
            JOp::Create { .. } | JOp::Rename { .. } => 0,
        })
        .sum();
    if bytes > limits.max_bytes() {
        return Err(format!(
            "its originals ({bytes} bytes) exceed the undo size cap ({} bytes)",
            limits.max_bytes()
        ));
    }
    let slots = list(root).map_err(|e| format!("the undo records cannot be listed ({e})"))?;
    if let Some(same) = slots.iter().find(|s| s.token == journal.token) {
        return Ok(same.id);
    }
    // Ids are never reused (an undo removes the newest record; a later apply must not take
    // its id, which a pending undo built earlier still names).
    let next = slots.last().map_or(0, |s| s.id).max(last_id(root)) + 1;
    write_record(root, journal, effect, bytes, next)
        .map_err(|e| format!("the undo record could not be written ({e})"))?;
    let _ = fs::write(undo_dir(root).join(LAST_ID), format!("{next}\n"));
    // Over the limits, the oldest go; a failure to remove one only leaves it longer.
    let _ = evict(root, limits);
    Ok(next)
}

fn write_record(
    root: &Path,
    journal: &Journal,
    effect: Option<String>,
    bytes: u64,
    id: u64,
) -> io::Result<()> {
    let undo = undo_dir(root);
    fs::create_dir_all(&undo)?;
    let ignore = root.join(STATE_DIR).join(".gitignore");
    if fs::symlink_metadata(&ignore).is_err() {
        fs::write(
            &ignore,
            "# xcsh's state: undo records, apply journal and lock.\n*\n",
        )?;
    }
    clear_remains(&undo);
    let tmp = undo.join(format!("{NEW_PREFIX}{}", journal.token));
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir(&tmp)?;
    let bad = || io::Error::other("the journal names a path outside the workspace");
    let mut ops = Vec::with_capacity(journal.ops.len());
    let mut blobs = 0;
    let mut blob = |backup: &str| -> io::Result<usize> {
        let from = dec(root, backup).ok_or_else(bad)?;
        let to = tmp.join(blobs.to_string());
        if fs::hard_link(&from, &to).is_err() {
            fs::copy(&from, &to)?;
            File::open(&to)?.sync_all()?;
        }
        blobs += 1;
        Ok(blobs - 1)
    };
    for op in &journal.ops {
        ops.push(match op {
            JOp::Modify {
                target,
                backup,
                old,
                new,
                ..
            } => UOp::Modify {
                target: target.clone(),
                was: old.clone(),
                now: new.clone(),
                blob: blob(backup)?,
            },
            JOp::Create { target, new, .. } => UOp::Create {
                target: target.clone(),
                now: new.clone(),
            },
            JOp::Delete {
                target,
                backup,
                old,
            } => UOp::Delete {
                target: target.clone(),
                was: old.clone(),
                blob: blob(backup)?,
            },
            JOp::Rename { from, to, fp } => UOp::Rename {
                from: from.clone(),
                to: to.clone(),
                fp: fp.clone(),
            },
        });
    }
    let mut dirs = Vec::new();
    for stage in &journal.stages {
        dirs.push(stage.top.clone());
        // Subdirectories are named inside the stage; as created they lie under `top`.
        for sub in &stage.subdirs {
            dirs.push(sub.clone());
        }
    }
    let record = Record {
        token: journal.token.clone(),
        root: journal.root.clone(),
        applied_at: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        bytes,
        ops,
        dirs,
        effect,
    };
    let mut f = File::create(tmp.join(RECORD_FILE))?;
    f.write_all(&encode(&record))?;
    f.sync_all()?;
    sync_dir(&tmp)?;
    fs::rename(&tmp, undo.join(format!("{id:08}-{}", journal.token)))?;
    sync_dir(&undo)
}

/// Removes record directories that are not whole (no `record` file, or still under their
/// `.new-` name): a write or a removal a crash cut short. Runs under the root's lock.
fn clear_remains(undo: &Path) {
    let Ok(entries) = fs::read_dir(undo) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let unfinished = entry.file_name().to_string_lossy().starts_with(NEW_PREFIX);
        if path.is_dir() && (unfinished || fs::symlink_metadata(path.join(RECORD_FILE)).is_err()) {
            let _ = fs::remove_dir_all(&path);
        }
    }
}

/// Removes the oldest records until at most `limits.keep()` remain and their originals fit
/// in `limits.max_bytes()`.
fn evict(root: &Path, limits: UndoLimits) -> io::Result<()> {
    let mut slots = list(root)?;
    let mut sizes: Vec<u64> = slots
        .iter()
        .map(|s| read(root, s).map_or(0, |r| r.bytes))
        .collect();
    while !slots.is_empty()
        && (slots.len() > limits.keep() || sizes.iter().sum::<u64>() > limits.max_bytes())
    {
        remove(&slots.remove(0))?;
        sizes.remove(0);
    }
    Ok(())
}

/// Removes a record: its `record` file first (from then on it is no record), then the rest.
pub(crate) fn remove(slot: &Slot) -> io::Result<()> {
    match fs::remove_file(slot.record_path()) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    // The unlink durable before the originals go: a record never comes back without them.
    let _ = sync_dir(&slot.dir);
    fs::remove_dir_all(&slot.dir)
}

/// Removes the record with id `id`, if there is one (the apply that undid it is done).
pub(crate) fn forget(root: &Path, id: u64) -> io::Result<()> {
    match list(root)?.into_iter().find(|s| s.id == id) {
        Some(slot) => remove(&slot),
        None => Ok(()),
    }
}

/// Decodes a path of a record, `None` if it is not below the root.
pub(crate) fn path(root: &Path, encoded: &str) -> Option<PathBuf> {
    dec(root, encoded)
}
