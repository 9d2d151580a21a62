//! A change set as JSON, for a durable pending stack: what it will do (paths, the fingerprint
//! each file must still have, new contents or edits), and the workspace it does it in.
//!
//! Decoding does not look at the files: a file changed, deleted or created since the change
//! set was kept, or a path that now resolves elsewhere (a file that became a link, a
//! directory swapped on the way), is found by the apply's stale check, which refuses naming
//! it, as it would have in the process that previewed it: the kept paths are the resolution
//! made then, each checked to lie below the root.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::apply::durable::{JFp, dec, enc};
use super::splice::Splices;
use super::{Absent, ChangeSet, NewContent, Op, Splice, Tracked, UndoLimits};
use crate::workspace::{Entry, Workspace};

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Kept {
    /// The canonical root, encoded as the journal encodes paths.
    root: String,
    undo: (usize, u64),
    ops: Vec<KeptOp>,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
enum KeptOp {
    Modify {
        path: KeptEntry,
        expect: JFp,
        content: KeptContent,
    },
    Create {
        path: KeptEntry,
        content: KeptBytes,
        /// Unix permission bits to give the file (see [`Op::Create`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mode: Option<u32>,
    },
    Delete {
        path: KeptEntry,
        expect: JFp,
    },
    Rename {
        from: KeptEntry,
        to: KeptEntry,
        expect: JFp,
    },
}

/// A path as the change set resolved it when it was made: the path given, where it led
/// (the name, and the file a link there pointed to) and whether it was a link. Kept whole so
/// that the apply's stale check compares today's resolution with *that* one (a file that
/// became a link, a directory swapped on the way), as it would have without a restart.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct KeptEntry {
    user: String,
    named: String,
    target: String,
    link: bool,
}

impl KeptEntry {
    fn of(root: &Path, user: &Path, entry: &Entry) -> Self {
        KeptEntry {
            user: enc(root, user),
            named: enc(root, &entry.named),
            target: enc(root, &entry.target),
            link: entry.is_symlink,
        }
    }

    /// The path given and the entry, each below `root`; `exists` as it was when kept.
    fn entry(&self, root: &Path, exists: bool) -> Result<(PathBuf, Entry), String> {
        let below = |s: &str| dec(root, s).ok_or("a path outside the workspace");
        Ok((
            below(&self.user)?,
            Entry {
                named: below(&self.named)?,
                target: below(&self.target)?,
                is_symlink: self.link,
                exists,
            },
        ))
    }
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum KeptContent {
    Bytes(KeptBytes),
    /// `[start, end, text]` per edit.
    Edits(Vec<(usize, usize, String)>),
}

/// Bytes as text when they are UTF-8, else as hex.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
enum KeptBytes {
    Text(String),
    Hex(String),
}

impl KeptBytes {
    fn of(bytes: &[u8]) -> Self {
        match std::str::from_utf8(bytes) {
            Ok(text) => KeptBytes::Text(text.to_owned()),
            Err(_) => KeptBytes::Hex(bytes.iter().map(|b| format!("{b:02x}")).collect()),
        }
    }

    fn bytes(self) -> Option<Vec<u8>> {
        match self {
            KeptBytes::Text(text) => Some(text.into_bytes()),
            KeptBytes::Hex(hex) => (0..hex.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
                .collect(),
        }
    }
}

impl Serialize for ChangeSet {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let root = self.ws.root();
        let tracked = |t: &Tracked| KeptEntry::of(root, &t.user, &t.entry);
        let absent = |a: &Absent| KeptEntry::of(root, &a.user, &a.entry);
        let ops = self
            .ops
            .iter()
            .map(|op| match op {
                Op::Modify { file, content } => KeptOp::Modify {
                    path: tracked(file),
                    expect: file.expect.into(),
                    content: match content {
                        NewContent::Bytes(bytes) => KeptContent::Bytes(KeptBytes::of(bytes)),
                        NewContent::Splices(splices) => KeptContent::Edits(
                            splices
                                .edits()
                                .iter()
                                .map(|s| (s.range.start, s.range.end, s.text.clone()))
                                .collect(),
                        ),
                    },
                },
                Op::Create {
                    file,
                    content,
                    perms,
                } => KeptOp::Create {
                    path: absent(file),
                    content: KeptBytes::of(content),
                    mode: perms.as_ref().and_then(mode_of),
                },
                Op::Delete { file } => KeptOp::Delete {
                    path: tracked(file),
                    expect: file.expect.into(),
                },
                Op::Rename { from, to } => KeptOp::Rename {
                    from: tracked(from),
                    to: absent(to),
                    expect: from.expect.into(),
                },
            })
            .collect();
        let undo = self.undo_limits();
        Kept {
            root: enc(Path::new(""), root),
            undo: (undo.keep(), undo.max_bytes()),
            ops,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for ChangeSet {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let kept = Kept::deserialize(deserializer)?;
        let root = absolute(&kept.root)
            .ok_or_else(|| D::Error::custom("its workspace root is not an absolute path"))?;
        let ws = Workspace::new(&root)
            .map_err(|e| D::Error::custom(format!("its workspace cannot be opened: {e}")))?;
        let mut cs = ChangeSet::new(ws).with_undo(UndoLimits::new(kept.undo.0, kept.undo.1));
        for op in kept.ops {
            let op = cs.op_from(op).map_err(D::Error::custom)?;
            cs.push(op).map_err(|e| D::Error::custom(e.to_string()))?;
        }
        Ok(cs)
    }
}

/// The inverse of `enc(Path::new(""), root)` for an absolute root.
fn absolute(encoded: &str) -> Option<PathBuf> {
    let path = if let Some(text) = encoded.strip_prefix("u:") {
        PathBuf::from(text)
    } else {
        let hex = encoded.strip_prefix("x:")?;
        let bytes = KeptBytes::Hex(hex.to_owned()).bytes()?;
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStringExt;
            PathBuf::from(std::ffi::OsString::from_vec(bytes))
        }
        #[cfg(not(unix))]
        {
            PathBuf::from(String::from_utf8(bytes).ok()?)
        }
    };
    path.is_absolute().then_some(path)
}

impl ChangeSet {
    /// One kept operation with its paths as they were resolved when it was made (each below
    /// the root), nothing checked against the disk: that is the apply's stale check.
    fn op_from(&self, op: KeptOp) -> Result<Op, String> {
        let root = self.ws.root();
        let fp = |j: &JFp| j.fingerprint().ok_or("a bad fingerprint");
        let tracked = |kept: &KeptEntry, expect: &JFp| {
            let (user, entry) = kept.entry(root, true)?;
            Ok::<_, String>(Tracked {
                user,
                entry,
                expect: fp(expect)?,
            })
        };
        let absent = |kept: &KeptEntry| {
            let (user, entry) = kept.entry(root, false)?;
            Ok::<_, String>(Absent { user, entry })
        };
        Ok(match op {
            KeptOp::Modify {
                path,
                expect,
                content,
            } => {
                let file = tracked(&path, &expect)?;
                let content = match content {
                    KeptContent::Bytes(bytes) => {
                        NewContent::Bytes(Arc::new(bytes.bytes().ok_or("bad hex content")?))
                    }
                    KeptContent::Edits(edits) => {
                        let edits = edits
                            .into_iter()
                            .map(|(start, end, text)| Splice::new(start..end, text))
                            .collect();
                        NewContent::Splices(Arc::new(Splices::new(edits, file.expect.len())?))
                    }
                };
                Op::Modify { file, content }
            }
            KeptOp::Create {
                path,
                content,
                mode,
            } => Op::Create {
                file: absent(&path)?,
                content: Arc::new(content.bytes().ok_or("bad hex content")?),
                perms: mode.and_then(perms_of),
            },
            KeptOp::Delete { path, expect } => Op::Delete {
                file: tracked(&path, &expect)?,
            },
            KeptOp::Rename { from, to, expect } => Op::Rename {
                from: tracked(&from, &expect)?,
                to: absent(&to)?,
            },
        })
    }
}

/// The permission bits a created file may be given: read, write, execute and sticky; never
/// set-user-ID or set-group-ID (see [`ChangeSet::create_with`]).
const CREATE_MODE_MASK: u32 = 0o1777;

/// The permission bits of `perms` a created file may be given, where they can be kept (Unix).
pub(crate) fn mode_of(perms: &std::fs::Permissions) -> Option<u32> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        Some(perms.mode() & CREATE_MODE_MASK)
    }
    #[cfg(not(unix))]
    {
        let _ = perms;
        None
    }
}

/// Permissions from bits [`mode_of`] kept (a kept file asking for more gets no more);
/// `None` where there are none to give (not Unix).
pub(crate) fn perms_of(mode: u32) -> Option<std::fs::Permissions> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        Some(std::fs::Permissions::from_mode(mode & CREATE_MODE_MASK))
    }
    #[cfg(not(unix))]
    {
        let _ = mode;
        None
    }
}
