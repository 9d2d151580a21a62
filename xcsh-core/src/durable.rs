//! Durable pending stacks: a session's pending actions kept in a state directory, so that a
//! restarted process finds the same stack, in the same order.
//!
//! A session opened with [`Registry::durable_session`](crate::Registry::durable_session) writes
//! its stack to `<state dir>/<key>.stack` whenever it changes: on a push (before the tool's
//! preview is returned) and when `resolve` has applied or discarded an action. An action
//! taken off for `resolve` stays in the file until it is done, so a crash in the middle of an
//! apply leaves it pending after the restart (and the apply's own stale check decides what
//! happens then). The file is replaced atomically (written beside it, synced, renamed).
//!
//! An action is kept whole when it is durable ([`PendingAction::durable`](crate::PendingAction::durable); `#[pending(durable)]`
//! on a `Serialize + Deserialize` struct): its state is stored with its kind, and the kind's
//! [`DurableKind`] turns it back into the action. Any other action is stored as its label
//! only: after a restart the model is told "`<label>` was lost when the server restarted;
//! preview again" with the next result, never silently.
//!
//! Format: xcsh's state-file framing ([`Frame`]), a first line
//! `xcsh-pending-stack 2 <xxh3-64 of the rest, hex>`, then JSON. (Version 1, before the
//! framing was shared, had a SHA-256 checksum: such a file is refused, naming it.)

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use crate::action::{PendingId, PendingSummary};
use crate::framing::Frame;
pub use crate::kept::{DurableState, StateError};
use crate::pending::{Keeper, PendingActionStore};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A durable stack's framing.
const FRAME: Frame = Frame {
    magic: "xcsh-pending-stack",
    version: 2,
    name: "pending stack",
    other_version_hint: "; it was written by another version of xcsh: resolve its previews with that version, or move the file away",
};

/// A kind of durable action: how to turn its stored state back into a pending action.
/// `#[pending(durable)]` registers one for its struct (with `inventory`, at link time).
pub struct DurableKind {
    /// The name [`DurableState::kind`] carries.
    pub kind: &'static str,
    /// Decodes the state and pushes the action on `store`; the error says why it cannot.
    pub restore: fn(&PendingActionStore, Value) -> Result<PendingId, String>,
    /// Serialises an action of this kind (given as `Any`; `None` if it is another type or
    /// cannot be serialised).
    pub save: fn(&dyn std::any::Any) -> Option<Value>,
}

inventory::collect!(DurableKind);

fn kind(name: &str) -> Option<&'static DurableKind> {
    inventory::iter::<DurableKind>
        .into_iter()
        .find(|k| k.kind == name)
}

/// Refuses a session key that is not safe as a file name: letters, digits, `-`, `_` and
/// `.`, not starting with `.` (so never `..`, a `/` or an absolute path).
pub(crate) fn check_key(state_dir: &Path, key: &str) -> Result<(), StateError> {
    if key.is_empty()
        || !key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        || key.starts_with('.')
    {
        return Err(StateError::Io {
            step: "use the session key",
            path: state_dir.join(key),
            source: io::Error::other(
                "a session key is letters, digits, `-`, `_` and `.`, not starting with `.`",
            ),
        });
    }
    Ok(())
}

/// What [`forget_if_empty`] found for a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum KeptStack {
    /// The stack was empty: its file and its lock file are gone.
    Removed,
    /// The stack holds this many actions (lost ones included); it was left as it was.
    Pending(usize),
    /// A session holds the stack now; it was left alone.
    InUse,
    /// Nothing is kept under this key.
    Absent,
}

/// Removes the stack kept under `key` in `state_dir` (its `.stack` and `.lock` files) when it
/// holds no action, e.g. when the session that kept it has ended. A stack that still holds
/// actions, or that a live session holds, is left as it is; nothing is created for a key that
/// has no files.
///
/// ```
/// use xcsh_core::Session;
/// use xcsh_core::durable::{KeptStack, forget_if_empty};
///
/// let dir = tempfile::tempdir().unwrap();
/// let registry = Session::builder().build_registry().unwrap();
/// let session = registry.durable_session(dir.path(), "main").unwrap();
/// assert_eq!(forget_if_empty(dir.path(), "main").unwrap(), KeptStack::InUse);
/// drop(session);
/// assert_eq!(forget_if_empty(dir.path(), "main").unwrap(), KeptStack::Removed);
/// assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
/// assert_eq!(forget_if_empty(dir.path(), "main").unwrap(), KeptStack::Absent);
/// ```
pub fn forget_if_empty(state_dir: &Path, key: &str) -> Result<KeptStack, StateError> {
    check_key(state_dir, key)?;
    let path = state_dir.join(format!("{key}.stack"));
    let lock_path = path.with_extension("lock");
    if !path.exists() && !lock_path.exists() {
        return Ok(KeptStack::Absent);
    }
    let file = match StackFile::lock(path.clone()) {
        Ok(file) => file,
        Err(StateError::Busy { .. }) => return Ok(KeptStack::InUse),
        Err(e) => return Err(e),
    };
    let kept = read(&path)?.len();
    if kept > 0 {
        return Ok(KeptStack::Pending(kept));
    }
    let remove = |path: &Path| match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(StateError::Io {
            step: "remove",
            path: path.to_path_buf(),
            source: e,
        }),
        _ => Ok(()),
    };
    // The stack first, then its lock (still held): a crash between the two leaves a lock
    // file alone, which the next `forget_if_empty` or session takes as an empty stack.
    remove(&path)?;
    remove(&lock_path)?;
    drop(file);
    if let Err(e) = File::open(state_dir).and_then(|d| d.sync_all()) {
        tracing::debug!(error = %e, "the state directory could not be synced");
    }
    Ok(KeptStack::Removed)
}

/// One action in the file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(crate) struct Stored {
    pub(crate) label: String,
    pub(crate) source: String,
    /// `None` for an action that cannot be kept.
    pub(crate) kind: Option<String>,
    #[serde(default)]
    pub(crate) state: Value,
}

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File_ {
    /// Bottom first.
    actions: Vec<Stored>,
}

/// [`File_`] as written, borrowing the entries.
#[derive(Serialize)]
struct FileOut<'a> {
    actions: Vec<&'a Stored>,
}

/// The file a store keeps its stack in, and the entries it holds (bottom first). Holds the
/// stack's lock (`<key>.lock`, an advisory lock the system releases when the process dies)
/// for as long as it lives.
pub(crate) struct StackFile {
    path: PathBuf,
    entries: Mutex<Vec<(PendingId, Stored)>>,
    _lock: File,
}

impl StackFile {
    /// Takes the stack at `path` for this session, refusing while another holds it.
    pub(crate) fn lock(path: PathBuf) -> Result<Self, StateError> {
        let lock_path = path.with_extension("lock");
        let io = |step| {
            let lock_path = lock_path.clone();
            move |source| StateError::Io {
                step,
                path: lock_path,
                source,
            }
        };
        let mut lock = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&lock_path)
            .map_err(io("open the lock"))?;
        match lock.try_lock() {
            Ok(()) => {}
            Err(fs::TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = io::Read::read_to_string(&mut lock, &mut holder);
                let holder = match holder.trim() {
                    "" => "another session".to_owned(),
                    text => text.to_owned(),
                };
                return Err(StateError::Busy { path, holder });
            }
            Err(fs::TryLockError::Error(e)) => return Err(io("lock")(e)),
        }
        lock.set_len(0)
            .and_then(|()| io::Seek::rewind(&mut lock))
            .and_then(|()| lock.write_all(format!("pid {}\n", std::process::id()).as_bytes()))
            .map_err(io("write the lock"))?;
        Ok(StackFile {
            path,
            entries: Mutex::new(Vec::new()),
            _lock: lock,
        })
    }

    /// Replaces every entry and writes the file.
    pub(crate) fn replace(&self, now: Vec<(PendingId, Stored)>) -> Result<(), StateError> {
        self.rewrite(|entries| {
            *entries = now;
            true
        })
    }

    /// Adds an entry on top and writes the file; on failure the entry is not kept.
    pub(crate) fn push(&self, id: PendingId, stored: Stored) -> Result<(), StateError> {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        entries.push((id, stored));
        let written = self.write(&entries);
        if written.is_err() {
            entries.pop();
        }
        written
    }

    /// Replaces the kept form of entry `id` (an action narrowed for a partial apply) and
    /// writes the file.
    pub(crate) fn update(&self, id: PendingId, stored: Stored) -> Result<(), StateError> {
        self.rewrite(
            |entries| match entries.iter_mut().find(|(have, _)| *have == id) {
                Some(slot) => {
                    slot.1 = stored;
                    true
                }
                None => false,
            },
        )
    }

    /// Drops the entries kept only to report them lost (their notices were delivered).
    pub(crate) fn forget_lost(&self) -> Result<(), StateError> {
        self.remove(PendingId::LOST)
    }

    /// Removes a resolved entry (or every lost one, for [`PendingId::LOST`]) and writes the
    /// file.
    pub(crate) fn remove(&self, id: PendingId) -> Result<(), StateError> {
        self.rewrite(|entries| {
            let before = entries.len();
            entries.retain(|(have, _)| *have != id);
            entries.len() != before
        })
    }

    /// Changes the entries with `change`, and writes the file when it says it changed them.
    fn rewrite(
        &self,
        change: impl FnOnce(&mut Vec<(PendingId, Stored)>) -> bool,
    ) -> Result<(), StateError> {
        let mut entries = self.entries.lock().unwrap_or_else(PoisonError::into_inner);
        if change(&mut entries) {
            self.write(&entries)
        } else {
            Ok(())
        }
    }

    fn write(&self, entries: &[(PendingId, Stored)]) -> Result<(), StateError> {
        // Borrowed, not cloned: a kept `ast_edit` holds every edit.
        let actions: Vec<&Stored> = entries.iter().map(|(_, s)| s).collect();
        let bytes = FRAME.encode(&FileOut { actions });
        let new = self.path.with_extension("stack.new");
        let io = |step| {
            let path = self.path.clone();
            move |source| StateError::Io { step, path, source }
        };
        (|| -> io::Result<()> {
            let mut f = File::create(&new)?;
            f.write_all(&bytes)?;
            f.sync_all()?;
            fs::rename(&new, &self.path)
        })()
        .map_err(io("write the pending stack to"))?;
        // The new stack is in place: from here it counts as written. Making the rename
        // durable is best effort (some filesystems, and Windows, cannot sync a directory).
        if let Some(dir) = self.path.parent()
            && let Err(e) = File::open(dir).and_then(|d| d.sync_all())
        {
            tracing::debug!(error = %e, "the state directory could not be synced");
        }
        Ok(())
    }
}

impl Keeper for StackFile {
    fn push(
        &self,
        id: PendingId,
        summary: &PendingSummary,
        state: Option<DurableState>,
    ) -> Result<(), StateError> {
        StackFile::push(self, id, stored(summary, state))
    }

    fn update(
        &self,
        id: PendingId,
        summary: &PendingSummary,
        state: Option<DurableState>,
    ) -> Result<(), StateError> {
        StackFile::update(self, id, stored(summary, state))
    }

    fn remove(&self, id: PendingId) -> Result<(), StateError> {
        StackFile::remove(self, id)
    }

    fn forget_lost(&self) -> Result<(), StateError> {
        StackFile::forget_lost(self)
    }
}

/// Keeps `store`'s stack in `file` from now on, writing what it holds now first; `lost`
/// (actions that could not be restored) stay in the file, at the bottom, until their notices
/// are delivered.
pub(crate) fn keep(
    store: &PendingActionStore,
    file: StackFile,
    lost: Vec<Stored>,
) -> Result<(), StateError> {
    let mut now: Vec<_> = lost.into_iter().map(|s| (PendingId::LOST, s)).collect();
    now.extend(
        store
            .kept_now()
            .into_iter()
            .map(|(id, summary, state)| (id, stored(&summary, state))),
    );
    file.replace(now)?;
    store.keep_with(Box::new(file));
    Ok(())
}

/// What an action is kept as.
pub(crate) fn stored(summary: &PendingSummary, durable: Option<DurableState>) -> Stored {
    let (kind, state) = match durable {
        Some(DurableState { kind, state }) => (Some(kind.to_owned()), state),
        None => (None, Value::Null),
    };
    Stored {
        label: summary.label.clone(),
        source: summary.source_tool_name.clone(),
        kind,
        state,
    }
}

/// Reads the stack kept at `path` (none yet: empty), bottom first.
pub(crate) fn read(path: &Path) -> Result<Vec<Stored>, StateError> {
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(StateError::Io {
                step: "read the pending stack",
                path: path.to_path_buf(),
                source,
            });
        }
    };
    let file: File_ = FRAME
        .decode(&bytes)
        .map_err(|problem| StateError::Corrupt {
            path: path.to_path_buf(),
            problem,
        })?;
    Ok(file.actions)
}

/// Pushes the kept actions back on `store` (bottom first) and returns the notices for those
/// that could not be restored (with why), and those actions as kept: they stay in the file
/// until their notices have been delivered.
pub(crate) fn restore(store: &PendingActionStore, kept: Vec<Stored>) -> (Vec<String>, Vec<Stored>) {
    let mut lost = Vec::new();
    let mut unrestored = Vec::new();
    for stored in kept {
        let restored = match stored.kind.as_deref() {
            None => Err(None),
            Some(name) => match kind(name) {
                None => Err(Some(format!(
                    "this program does not know its kind `{name}`"
                ))),
                Some(kind) => (kind.restore)(store, stored.state.clone()).map_err(Some),
            },
        };
        match restored {
            Ok(_) => {}
            Err(why) => {
                let because = why.map(|w| format!(" ({w})")).unwrap_or_default();
                lost.push(format!(
                    "`{}` was lost when the server restarted{because}; preview again.",
                    stored.label
                ));
                unrestored.push(stored);
            }
        }
    }
    (lost, unrestored)
}
