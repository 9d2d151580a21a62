//! [`AuditLog`]: one JSON line per push and per resolve, appended and flushed line by line.

use std::fmt;
use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::Path;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

use crate::action::PendingSummary;

/// An append-only record of decisions: one JSON object per line, flushed per line, never any
/// file contents unless asked ([`with_contents`](Self::with_contents)): files appear as
/// root-relative paths with `sha256:` hashes, and the replacement texts of the details —
/// `before`, `after`, `text`, `content`, `contents` — as their hashes.
///
/// Lines (every one has `event`, `time` in Unix seconds and `session`):
///
/// - `{"event":"push","id":1,"tool":"ast_edit","label":…,"details":…,"effectDigest":"sha256:…"}`
/// - `{"event":"resolve","id":1,"tool":…,"label":…,"action":"apply","reason":…,
///   "decidedBy":"model"|"person"|"host"|"rule:<name>","policy":"model"|"human"|"rules",
///   "rule":<name or null>,"outcome":"applied"|"discarded"|"declined"|"denied"|"pending"|"failed",
///   "effectDigest":…,"files":[{"path":…,"before":"sha256:…","after":"sha256:…"}]}`
///
/// (`files` on an apply whose details name files; a missing file hashes as `null`. With
/// contents, each file also has `beforeText` and `afterText`, its whole text, `null` when it
/// is missing or not UTF-8, and the push's details keep their texts.)
///
/// ```
/// use xcsh_core::approval::AuditLog;
/// let dir = tempfile::tempdir().unwrap();
/// let log = AuditLog::open(&dir.path().join("audit.jsonl")).unwrap();
/// let session = xcsh_core::Session::builder().audit(log).build().unwrap();
/// # let _ = session;
/// ```
pub struct AuditLog {
    out: Mutex<Box<dyn Write + Send>>,
    contents: bool,
}

impl AuditLog {
    /// Appends to `path`, creating it if need be.
    pub fn open(path: &Path) -> io::Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(Self::from_writer(file))
    }

    /// Appends to any writer (flushed after every line).
    pub fn from_writer(out: impl Write + Send + 'static) -> Self {
        AuditLog {
            out: Mutex::new(Box::new(out)),
            contents: false,
        }
    }

    /// Records file contents too: the whole text of every file an apply touches, before and
    /// after, and the details' replacement texts as they are (`xcsh --audit-contents`). Off by
    /// default: code can be confidential, and hashes prove what was written.
    ///
    /// ```
    /// use xcsh_core::approval::AuditLog;
    /// let log = AuditLog::from_writer(std::io::sink()).with_contents(true);
    /// assert!(log.records_contents());
    /// ```
    #[must_use]
    pub fn with_contents(mut self, contents: bool) -> Self {
        self.contents = contents;
        self
    }

    /// Whether file contents are recorded.
    pub fn records_contents(&self) -> bool {
        self.contents
    }

    /// Writes one event as a line. A failed write is logged and does not stop the session.
    pub(crate) fn record(&self, mut event: Value) {
        if let Value::Object(map) = &mut event {
            let time = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64());
            map.insert("time".into(), json!(time));
        }
        let mut line = event.to_string();
        line.push('\n');
        let mut out = self.out.lock().unwrap_or_else(PoisonError::into_inner);
        if let Err(error) = out.write_all(line.as_bytes()).and_then(|()| out.flush()) {
            tracing::error!(%error, "cannot write to the audit log");
        }
    }
}

impl fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("AuditLog")
    }
}

/// Where a store's events are recorded, and for which session and root.
#[derive(Debug, Clone)]
pub(crate) struct AuditSink {
    pub(crate) log: Arc<AuditLog>,
    pub(crate) session: Arc<str>,
    pub(crate) root: Arc<Path>,
}

impl AuditSink {
    pub(crate) fn push(&self, summary: &PendingSummary, effect_digest: &str) {
        self.log.record(json!({
            "event": "push",
            "session": &*self.session,
            "id": summary.id,
            "tool": summary.source_tool_name,
            "label": summary.label,
            "details": summary.details.as_ref().map(|d| {
                if self.log.contents {
                    d.clone()
                } else {
                    without_contents(d)
                }
            }),
            "effect": summary.effect,
            "effectDigest": effect_digest,
        }));
    }

    /// Each file, root-relative, now: its hash, and its text when contents are recorded.
    pub(crate) fn states(&self, files: &[String]) -> Vec<FileState> {
        files
            .iter()
            .map(|file| {
                let bytes = std::fs::read(self.root.join(file)).ok();
                FileState {
                    hash: bytes.as_deref().map(super::sha256_hex),
                    text: bytes
                        .filter(|_| self.log.contents)
                        .and_then(|b| String::from_utf8(b).ok()),
                }
            })
            .collect()
    }
}

/// A file as the audit saw it.
#[derive(Debug, Clone)]
pub(crate) struct FileState {
    pub(crate) hash: Option<String>,
    /// Only when contents are recorded (and the file is UTF-8).
    pub(crate) text: Option<String>,
}

impl FileState {
    /// `{"path", "before", "after"}`, and the texts when contents are recorded.
    pub(crate) fn json(path: &str, before: &FileState, after: &FileState, contents: bool) -> Value {
        let mut entry = json!({"path": path, "before": before.hash, "after": after.hash});
        if contents {
            entry["beforeText"] = json!(before.text);
            entry["afterText"] = json!(after.text);
        }
        entry
    }
}

/// The details with every replacement text (`before`, `after`, `text`, `content`, `contents`
/// strings) replaced by its `sha256:` hash: the log names what changed without holding the code.
fn without_contents(details: &Value) -> Value {
    match details {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| {
                    let value = match (key.as_str(), value) {
                        (
                            "before" | "after" | "text" | "content" | "contents",
                            Value::String(text),
                        ) => Value::String(super::sha256_hex(text.as_bytes())),
                        _ => without_contents(value),
                    };
                    (key.clone(), value)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_contents).collect()),
        other => other.clone(),
    }
}
