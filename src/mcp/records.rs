//! The records of what a state directory issued: MCP session ids (`DIR/<id>.session`, with
//! the client's `initialize`) and pending-action handles (`DIR/<handle>.handle`), each beside
//! the durable stack of the same name, and their expiry. Plain files, no transport: the
//! HTTP server's session store (`http_state`) and the handle-named stacks (`handles`) read
//! them.

use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rmcp::model::InitializeRequestParams;
use serde::{Deserialize, Serialize};
use xcsh_core::durable::{KeptStack, forget_if_empty};

/// The longest session id accepted (rmcp's are 36 characters).
const MAX_ID_LEN: usize = 64;

/// Whether `id` can be a session id issued here (rmcp issues lowercase UUIDs): 1 to 64 of
/// `a`–`z`, `0`–`9` and `-`. Such an id is safe as a file name: no `/`, no `.` (so never
/// `..`), and no two ids name the same file on a case-insensitive filesystem.
pub(crate) fn valid_session_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_ID_LEN
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

/// The record of an issued session, `DIR/<id>.session`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Record {
    format: String,
    version: u32,
    /// The client's `initialize` parameters, replayed when the session is restored.
    initialize: InitializeRequestParams,
}

/// A session's record is `<id>.session`.
const RECORD_EXTENSION: &str = "session";

/// A handle's record is `<handle>.handle` (see `handles`).
const HANDLE_EXTENSION: &str = "handle";

/// What a record is renamed to (`<id>.<extension>.expired`) while [`SessionRecords::expire`]
/// looks at its stack.
const ASIDE_SUFFIX: &str = "expired";

/// The session id of a file named `<id>.<extension>`, if it is a valid one.
fn session_id_of<'p>(path: &'p Path, extension: &str) -> Option<&'p str> {
    path.file_name()?
        .to_str()?
        .strip_suffix(extension)?
        .strip_suffix('.')
        .filter(|id| valid_session_id(id))
}

const RECORD_FORMAT: &str = "xcsh-http-session";
const RECORD_VERSION: u32 = 1;

/// The session ids issued by this state directory, one `DIR/<id>.session` file each: rmcp's
/// [`SessionStore`], through which it restores a session it does not hold in memory.
///
/// The records of pending-action handles (protocol 2026-07-28, see `handles`) are the same
/// kind of file, `DIR/<handle>.handle` ([`SessionRecords::handles`]), and expire the same way.
#[derive(Debug)]
pub(crate) struct SessionRecords {
    dir: PathBuf,
    extension: &'static str,
}

impl SessionRecords {
    /// The MCP sessions' records under `dir`, which must exist.
    pub(crate) fn new(dir: PathBuf) -> Self {
        SessionRecords {
            dir,
            extension: RECORD_EXTENSION,
        }
    }

    /// The pending-action handles' records under `dir`, which must exist.
    pub(crate) fn handles(dir: PathBuf) -> Self {
        SessionRecords {
            dir,
            extension: HANDLE_EXTENSION,
        }
    }

    /// The state directory.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the record of `id` is; `None` for an id that cannot be one issued here.
    pub(crate) fn path(&self, id: &str) -> Option<PathBuf> {
        valid_session_id(id).then(|| self.dir.join(format!("{id}.{}", self.extension)))
    }

    /// Whether `id` was issued here and has not ended with a DELETE.
    pub(crate) fn knows(&self, id: &str) -> bool {
        self.path(id).is_some_and(|path| path.is_file())
    }

    /// Writes the record of session `id`, with the client's `initialize`.
    pub(crate) fn write(&self, id: &str, initialize: &InitializeRequestParams) -> io::Result<()> {
        let record = Record {
            format: RECORD_FORMAT.to_owned(),
            version: RECORD_VERSION,
            initialize: initialize.clone(),
        };
        let bytes = serde_json::to_vec(&record).map_err(io::Error::other)?;
        self.write_bytes(id, &bytes)
    }

    /// Writes the record of handle `id`.
    pub(crate) fn write_handle(&self, id: &str) -> io::Result<()> {
        self.write_bytes(id, br#"{"format":"xcsh-http-handle","version":1}"#)
    }

    /// Writes a record (beside it, synced, renamed, the directory synced), unless it is there
    /// already: a record never changes.
    fn write_bytes(&self, id: &str, bytes: &[u8]) -> io::Result<()> {
        let path = self
            .path(id)
            .ok_or_else(|| io::Error::other(format!("`{id}` is not a session id")))?;
        if path.is_file() {
            return Ok(());
        }
        let new = path.with_extension(format!("{}.new", self.extension));
        let written = (|| {
            let mut file = std::fs::File::create(&new)?;
            io::Write::write_all(&mut file, bytes)?;
            file.sync_all()?;
            std::fs::rename(&new, &path)
        })();
        written.map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot write the session record `{}`: {e}", path.display()),
            )
        })?;
        if let Err(e) = std::fs::File::open(&self.dir).and_then(|d| d.sync_all()) {
            tracing::debug!(error = %e, "the state directory could not be synced");
        }
        Ok(())
    }

    /// The recorded `initialize` of `id`, if it was issued here.
    pub(crate) fn read(&self, id: &str) -> io::Result<Option<InitializeRequestParams>> {
        let Some(path) = self.path(id) else {
            return Ok(None);
        };
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let bad = |why: String| {
            io::Error::other(format!(
                "the session record `{}` cannot be used: {why}; move it away (the client then starts a new session)",
                path.display()
            ))
        };
        let record: Record = serde_json::from_slice(&bytes).map_err(|e| bad(e.to_string()))?;
        if record.format != RECORD_FORMAT || record.version != RECORD_VERSION {
            return Err(bad(format!(
                "it is `{} {}`, not `{RECORD_FORMAT} {RECORD_VERSION}`",
                record.format, record.version
            )));
        }
        Ok(Some(record.initialize))
    }

    /// Marks `id` as used now (its record's modification time), for [`expire`](Self::expire):
    /// when its session starts, is restored, and ends.
    pub(crate) fn touch(&self, id: &str) {
        let Some(path) = self.path(id) else {
            return;
        };
        let touched = std::fs::File::options()
            .append(true)
            .open(&path)
            .and_then(|file| file.set_modified(std::time::SystemTime::now()));
        if let Err(e) = touched {
            tracing::debug!(error = %e, "the record of MCP session {id} could not be marked as used");
        }
    }

    /// Removes the records of sessions last used (when they started, were restored or ended,
    /// or their stack last changed) longer than `max_idle` ago whose stacks hold nothing, with
    /// those stacks; returns how many. A record that cannot be looked at is logged and kept:
    /// a bad entry never stops the server from starting.
    pub(crate) fn expire(&self, max_idle: Duration) -> io::Result<usize> {
        let now = std::time::SystemTime::now();
        let changed = |path: &Path| std::fs::metadata(path).and_then(|m| m.modified()).ok();
        let aside_extension = format!("{}.{ASIDE_SUFFIX}", self.extension);
        // A record moved aside by an expiry that stopped half-way goes back first.
        for entry in std::fs::read_dir(&self.dir)?.flatten() {
            let aside = entry.path();
            if let Some(record) =
                session_id_of(&aside, &aside_extension).and_then(|id| self.path(id))
                && !record.exists()
                && let Err(e) = std::fs::rename(&aside, &record)
            {
                tracing::warn!(error = %e, "`{}` could not be put back", aside.display());
            }
        }
        let mut expired = 0;
        for entry in std::fs::read_dir(&self.dir)? {
            let path = match entry {
                Ok(entry) => entry.path(),
                Err(e) => {
                    tracing::warn!(error = %e, "an entry of the state directory could not be read");
                    continue;
                }
            };
            let Some(id) = session_id_of(&path, self.extension) else {
                continue;
            };
            let last_use = [path.clone(), self.dir.join(format!("{id}.stack"))]
                .iter()
                .filter_map(|p| changed(p))
                .max();
            let idle = last_use.and_then(|t| now.duration_since(t).ok());
            if idle.is_none_or(|idle| idle <= max_idle) {
                continue;
            }
            match self.expire_one(id, &path) {
                Ok(true) => expired += 1,
                Ok(false) => {}
                Err(e) => tracing::warn!(
                    error = %e,
                    "MCP session {id} is past the expiry but could not be removed; it is kept"
                ),
            }
        }
        Ok(expired)
    }

    /// Removes the record at `path` of idle session `id` and its stack, unless the stack
    /// holds previews or is in use. The record is moved aside first, so that no server
    /// sharing the directory can restore the session (and push onto its stack) between the
    /// look at the stack and the removal; it is moved back when the session is kept.
    fn expire_one(&self, id: &str, path: &Path) -> io::Result<bool> {
        let aside = path.with_extension(format!("{}.{ASIDE_SUFFIX}", self.extension));
        std::fs::rename(path, &aside)?;
        let put_back = || std::fs::rename(&aside, path);
        match forget_if_empty(&self.dir, id) {
            Ok(KeptStack::Removed | KeptStack::Absent) => {
                std::fs::remove_file(&aside)?;
                Ok(true)
            }
            Ok(KeptStack::Pending(count)) => {
                tracing::info!(
                    "MCP session {id} is past the expiry but holds {count} pending action(s): kept"
                );
                put_back().map(|()| false)
            }
            // In use by another server, or anything a later version can say: kept.
            Ok(_) => put_back().map(|()| false),
            Err(e) => {
                put_back()?;
                Err(io::Error::other(e.to_string()))
            }
        }
    }

    /// Forgets `id` (its DELETE): the record goes, and the stack with it when it is empty.
    pub(crate) fn remove(&self, id: &str) -> io::Result<()> {
        let Some(path) = self.path(id) else {
            return Ok(());
        };
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        self.forget_stack(id);
        Ok(())
    }

    /// Removes the stack of `id` when it is empty; says so when a stack that holds previews
    /// can no longer be reached (its session was deleted).
    pub(crate) fn forget_stack(&self, id: &str) {
        match forget_if_empty(&self.dir, id) {
            Ok(KeptStack::Pending(count)) if !self.knows(id) => tracing::warn!(
                "MCP session {id} ended (DELETE) with {count} pending action(s) not applied; they stay in `{}` for a person to look at, and no session will resolve them",
                self.dir.join(format!("{id}.stack")).display()
            ),
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(error = %e, "the pending stack of an ended MCP session could not be cleaned up")
            }
        }
    }
}
