//! The apply journal on disk: `<root>/.xcsh/apply.journal`.
//!
//! Written twice per apply. *Prepared* (before the first temporary file exists) it names the
//! apply's token and every path it touches, so that recovery can find and remove the
//! artifacts of an apply that never reached its commit point. *Committed* (once every new
//! content is in a synced temporary file) it lists each operation with its temporary and
//! backup names and the fingerprints of the old and new contents: from then on recovery
//! finishes the apply. Each version is written to `apply.journal.new`, fsynced, renamed over
//! `apply.journal` and the directory fsynced; that rename of the committed version is the
//! commit point.
//!
//! Format: a first line `xcsh-apply-journal 1 <xxh3-64 of the rest, hex>`, then JSON.

use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::atomic_fs::sync_dir;
use super::lock::STATE_DIR;
use crate::changeset::Fingerprint;
use xcsh_core::framing::Frame;

/// The journal's file name in `.xcsh`.
pub(crate) const JOURNAL_FILE: &str = "apply.journal";
/// Where a new version is written before it replaces the journal.
pub(crate) const JOURNAL_NEW: &str = "apply.journal.new";
const MAGIC: &str = "xcsh-apply-journal";
const VERSION: u32 = 1;

pub(crate) fn journal_path(root: &Path) -> PathBuf {
    root.join(STATE_DIR).join(JOURNAL_FILE)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub(crate) enum State {
    Prepared,
    Committed,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct Journal {
    pub(crate) state: State,
    /// The root the apply ran in (absolute, encoded).
    pub(crate) root: String,
    /// The 8 hex digits every artifact of this apply carries.
    pub(crate) token: String,
    pub(crate) pid: u32,
    /// Files (operations) in the apply.
    pub(crate) files: usize,
    /// Every path the apply touches, root-relative: their ancestors hold its artifacts.
    pub(crate) paths: Vec<String>,
    /// Empty while prepared.
    pub(crate) ops: Vec<JOp>,
    pub(crate) stages: Vec<JStage>,
    /// The undo record this apply reverts (an [`Undo`](crate::changeset::Undo)): once it is
    /// done the record goes, and no record of the apply itself is kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) undoes: Option<u64>,
    /// The change set's effect digest (committed only), for the undo record recovery keeps
    /// when it finishes the apply, so that it too is recognised as already applied.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) effect: Option<String>,
    /// The workspace's undo limits (`keep`, `max_bytes`; committed only), which recovery
    /// keeps the apply's undo record under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) undo_limits: Option<(usize, u64)>,
}

/// One operation, root-relative paths encoded with [`enc`].
#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
pub(crate) enum JOp {
    Modify {
        target: String,
        temp: String,
        backup: String,
        old: JFp,
        new: JFp,
    },
    /// `temp` and `dest` lie inside a stage's directory when the target's directory is new.
    Create {
        target: String,
        temp: String,
        dest: String,
        new: JFp,
    },
    Delete {
        target: String,
        backup: String,
        old: JFp,
    },
    Rename {
        from: String,
        to: String,
        fp: JFp,
    },
}

/// A new directory built under `dir` and renamed to `top`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct JStage {
    pub(crate) dir: String,
    pub(crate) top: String,
    pub(crate) subdirs: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct JFp {
    len: u64,
    /// 32 hex digits.
    hash: String,
}

impl From<Fingerprint> for JFp {
    fn from(fp: Fingerprint) -> Self {
        let (len, hash) = fp.parts();
        Self {
            len,
            hash: format!("{hash:032x}"),
        }
    }
}

impl JFp {
    /// The content's length.
    pub(crate) fn len(&self) -> u64 {
        self.len
    }

    /// `None` if the hash is not 32 hex digits.
    pub(crate) fn fingerprint(&self) -> Option<Fingerprint> {
        if self.hash.len() != 32 {
            return None;
        }
        let hash = u128::from_str_radix(&self.hash, 16).ok()?;
        Some(Fingerprint::from_parts(self.len, hash))
    }
}

/// Encodes `path` (absolute, under `root`, or already relative) losslessly: `u:` and the
/// text when it is UTF-8, else `x:` and the bytes in hex.
pub(crate) fn enc(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let bytes = rel.as_os_str().as_encoded_bytes();
    match std::str::from_utf8(bytes) {
        Ok(s) => format!("u:{s}"),
        Err(_) => {
            let mut out = String::from("x:");
            for b in bytes {
                out.push_str(&format!("{b:02x}"));
            }
            out
        }
    }
}

/// The inverse of [`enc`], joined to `root`. `None` if it is not an encoding of a path
/// below the root.
pub(crate) fn dec(root: &Path, s: &str) -> Option<PathBuf> {
    let rel: PathBuf = if let Some(t) = s.strip_prefix("u:") {
        PathBuf::from(t)
    } else if let Some(h) = s.strip_prefix("x:") {
        if h.len() % 2 != 0 {
            return None;
        }
        let bytes = (0..h.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(h.get(i..i + 2)?, 16).ok())
            .collect::<Option<Vec<u8>>>()?;
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStringExt;
            PathBuf::from(OsString::from_vec(bytes))
        }
        #[cfg(not(unix))]
        {
            PathBuf::from(String::from_utf8(bytes).ok()?)
        }
    } else {
        return None;
    };
    // Root-relative, going nowhere above it.
    if rel.as_os_str().is_empty()
        || !rel
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
    {
        return None;
    }
    Some(root.join(rel))
}

/// How the journal is framed on disk.
const FRAME: Frame = Frame {
    magic: MAGIC,
    version: VERSION,
    name: "apply journal",
    other_version_hint: "; recover with the xcsh that wrote it",
};

pub(crate) fn encode(journal: &Journal) -> Vec<u8> {
    FRAME.encode(journal)
}

/// Why a journal cannot be used; the caller names the file and what to do.
pub(crate) fn decode(bytes: &[u8]) -> Result<Journal, String> {
    let journal: Journal = FRAME.decode(bytes)?;
    if journal.token.len() != 8 || !journal.token.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err("it is corrupt (bad token)".to_owned());
    }
    Ok(journal)
}

/// Writes `bytes` as the new journal of `root`: to `apply.journal.new`, fsynced.
pub(crate) fn write_new(root: &Path, bytes: &[u8]) -> io::Result<()> {
    let path = root.join(STATE_DIR).join(JOURNAL_NEW);
    let mut f = File::create(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// Makes the written version the journal: rename, then fsync `.xcsh`.
pub(crate) fn install_new(root: &Path) -> io::Result<()> {
    let dir = root.join(STATE_DIR);
    fs::rename(dir.join(JOURNAL_NEW), dir.join(JOURNAL_FILE))?;
    sync_dir(&dir)
}

/// Removes the journal (and any half-written version), then fsyncs `.xcsh`.
pub(crate) fn remove(root: &Path) -> io::Result<()> {
    let dir = root.join(STATE_DIR);
    match fs::remove_file(dir.join(JOURNAL_NEW)) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    match fs::remove_file(dir.join(JOURNAL_FILE)) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    sync_dir(&dir)
}
