//! A change set as JSON, for a durable pending stack: what it will do (paths, the fingerprint
//! each file must still have, new contents or edits), and the workspace it does it in.
//!
//! Decoding does not look at the files: a file changed, deleted or created since the change
//! set was kept is found by the apply's stale check, which refuses naming it, as it would
//! have in the process that previewed it. Only the paths are resolved again (they must still
//! lead inside the root).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::apply::durable::{JFp, dec, enc};
use super::splice::Splices;
use super::{Absent, ChangeSet, NewContent, Op, Splice, Tracked, UndoLimits};
use crate::workspace::Workspace;

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
        path: String,
        expect: JFp,
        content: KeptContent,
    },
    Create {
        path: String,
        content: KeptBytes,
    },
    Delete {
        path: String,
        expect: JFp,
    },
    Rename {
        from: String,
        to: String,
        expect: JFp,
    },
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
        let path = |p: &Path| enc(root, p);
        let ops = self
            .ops
            .iter()
            .map(|op| match op {
                Op::Modify { file, content } => KeptOp::Modify {
                    path: path(&file.entry.named),
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
                Op::Create { file, content } => KeptOp::Create {
                    path: path(&file.entry.named),
                    content: KeptBytes::of(content),
                },
                Op::Delete { file } => KeptOp::Delete {
                    path: path(&file.entry.named),
                    expect: file.expect.into(),
                },
                Op::Rename { from, to } => KeptOp::Rename {
                    from: path(&from.entry.named),
                    to: path(&to.entry.named),
                    expect: from.expect.into(),
                },
            })
            .collect();
        let undo = self.ws.undo_limits();
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
            .map_err(|e| D::Error::custom(format!("its workspace cannot be opened: {e}")))?
            .with_undo(UndoLimits::new(kept.undo.0, kept.undo.1));
        let mut cs = ChangeSet::new(ws);
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
    /// One kept operation, its paths resolved again (confined to the root), nothing else
    /// checked: that is the apply's job.
    fn op_from(&self, op: KeptOp) -> Result<Op, String> {
        let root = self.ws.root();
        let entry = |encoded: &str| {
            let path = dec(root, encoded).ok_or("a path outside the workspace")?;
            let entry = self.ws.resolve_entry(&path).map_err(|e| e.to_string())?;
            Ok::<_, String>((path, entry))
        };
        let fp = |j: &JFp| j.fingerprint().ok_or("a bad fingerprint");
        let tracked = |encoded: &str, expect: &JFp| {
            let (user, entry) = entry(encoded)?;
            Ok::<_, String>(Tracked {
                user,
                entry,
                expect: fp(expect)?,
            })
        };
        let absent = |encoded: &str| {
            let (user, entry) = entry(encoded)?;
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
            KeptOp::Create { path, content } => Op::Create {
                file: absent(&path)?,
                content: Arc::new(content.bytes().ok_or("bad hex content")?),
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
