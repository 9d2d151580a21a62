//! Durable pending stacks over Streamable HTTP: `xcsh serve --http ADDR --state DIR`.
//!
//! Each MCP session's pending stack is a durable session
//! ([`Registry::durable_session`](xcsh_core::Registry::durable_session)) keyed by its
//! `Mcp-Session-Id`, so a client whose server was restarted carries on with the same stack.
//!
//! * **Ids.** rmcp issues them (random UUIDs, unguessable). When it does, and before the
//!   session's stack exists, the client's `initialize` parameters are written to
//!   `DIR/<id>.session` ([`SessionRecords`]): that file is what makes an id *issued here*.
//! * **Restore.** rmcp's Streamable HTTP service asks its session store about an id it does
//!   not hold in memory. [`SessionRecords`] answers from `DIR`, rmcp re-creates the session
//!   under the same id and replays the recorded `initialize` to a new handler, and the
//!   handler ([`HttpConnection`]) opens the durable stack `DIR/<id>.stack`: the client's next
//!   request is served as if nothing had happened, `resolve` included.
//! * **Refusals.** An id that is not a plain name (lowercase letters, digits, `-`; at most 64) is refused
//!   with 400 before anything looks at the disk; an id with no record here is answered 404
//!   (the MCP answer for an unknown session, which tells a client to `initialize` again), with
//!   a body saying why. Neither creates a file.
//! * **End.** When a session's handler goes (DELETE, an idle timeout, shutdown) its stack
//!   files are removed if the stack is empty. A DELETE also removes the record; a stack that
//!   still holds previews then stays in `DIR/<id>.stack` for a person to look at (logged as a
//!   warning), and no session can reach it again. Without a DELETE the record stays, and the
//!   id can be restored later, until it expires: when the server starts, records unused
//!   for longer than [`McpServer::with_session_expiry`] (30 days by default) go with their
//!   stacks, unless a stack still holds previews ([`SessionRecords::expire`]).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use futures_core::Stream;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ClientJsonRpcMessage, ClientRequest, GetExtensions,
    InitializeRequestParams, InitializeResult, ListToolsResult, PaginatedRequestParams,
    ServerConfig, ServerJsonRpcMessage, SubscriptionFilter,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{
    EventStore, RestoreOutcome, ServerSseMessage, SessionId, SessionManager, SessionRestoreMarker,
    SessionState, SessionStore, SessionStoreError,
};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde::{Deserialize, Serialize};
use xcsh_core::durable::{KeptStack, StateError, forget_if_empty};
use xcsh_core::{AgentToolResult, Session};

use super::{McpServer, results};

/// The longest session id accepted (rmcp's are 36 characters).
const MAX_ID_LEN: usize = 64;

/// How long a restored session waits for the stack its previous handler (in this process)
/// still holds, e.g. one closed by an idle timeout a moment ago.
const BUSY_WAIT: Duration = Duration::from_secs(5);

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

/// The marker a session's `initialize` carries to its handler: the session's id, which is
/// the key of its durable stack. Only [`StateSessionManager`] inserts it, for ids rmcp issued
/// or restored from a record.
#[derive(Debug, Clone)]
struct SessionKey(String);

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
    fn path(&self, id: &str) -> Option<PathBuf> {
        valid_session_id(id).then(|| self.dir.join(format!("{id}.{}", self.extension)))
    }

    /// Whether `id` was issued here and has not ended with a DELETE.
    pub(crate) fn knows(&self, id: &str) -> bool {
        self.path(id).is_some_and(|path| path.is_file())
    }

    /// Writes the record of session `id`, with the client's `initialize`.
    fn write(&self, id: &str, initialize: &InitializeRequestParams) -> io::Result<()> {
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
    fn read(&self, id: &str) -> io::Result<Option<InitializeRequestParams>> {
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
    fn forget_stack(&self, id: &str) {
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

#[async_trait::async_trait]
impl SessionStore for SessionRecords {
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        Ok(self.read(session_id)?.map(SessionState::new))
    }

    async fn store(&self, session_id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        Ok(self.write(session_id, &state.initialize_params)?)
    }

    async fn delete(&self, session_id: &str) -> Result<(), SessionStoreError> {
        Ok(self.remove(session_id)?)
    }
}

/// rmcp's [`LocalSessionManager`] (random ids, sessions in memory, restore supported), plus:
/// a new session's record is written before its handler sees `initialize`, and every
/// `initialize` (new or replayed on restore) carries the session's id to its handler.
#[derive(Debug)]
pub(crate) struct StateSessionManager {
    local: LocalSessionManager,
    records: Arc<SessionRecords>,
}

impl StateSessionManager {
    pub(crate) fn new(records: Arc<SessionRecords>) -> Self {
        StateSessionManager {
            local: LocalSessionManager::default(),
            records,
        }
    }
}

impl SessionManager for StateSessionManager {
    type Error = io::Error;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.local.create_session().await.map_err(io::Error::other)
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        mut message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        if let ClientJsonRpcMessage::Request(request) = &mut message
            && let ClientRequest::InitializeRequest(initialize) = &request.request
        {
            let restoring = request
                .request
                .extensions()
                .get::<SessionRestoreMarker>()
                .is_some();
            if restoring {
                self.records.touch(id);
            } else {
                // The record first: every stack in DIR belongs to a recorded id.
                self.records.write(id, &initialize.params)?;
            }
            request
                .request
                .extensions_mut()
                .insert(SessionKey(id.to_string()));
        }
        self.local
            .initialize_session(id, message)
            .await
            .map_err(io::Error::other)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.local.has_session(id).await.map_err(io::Error::other)
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.local.close_session(id).await.map_err(io::Error::other)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.local
            .create_stream(id, message)
            .await
            .map_err(io::Error::other)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.local
            .accept_message(id, message)
            .await
            .map_err(io::Error::other)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.local
            .create_standalone_stream(id)
            .await
            .map_err(io::Error::other)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.local
            .resume(id, last_event_id)
            .await
            .map_err(io::Error::other)
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        self.local
            .restore_session(id)
            .await
            .map_err(io::Error::other)
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.local.event_store()
    }
}

/// The handler of one MCP session under `--state`: an [`McpServer`] whose session is the
/// durable stack of the session's id, opened when `initialize` arrives (new or replayed). A
/// request served without a session (protocol 2026-07-28, per request) gets a plain session
/// of its own, as without `--state`.
pub(crate) struct HttpConnection {
    template: Arc<McpServer>,
    records: Arc<SessionRecords>,
    server: OnceLock<McpServer>,
    /// The session id whose stack this handler holds.
    key: OnceLock<String>,
    /// Why the stack could not be opened: every tool call answers with it.
    broken: OnceLock<String>,
}

impl HttpConnection {
    pub(crate) fn new(template: Arc<McpServer>, records: Arc<SessionRecords>) -> Self {
        HttpConnection {
            template,
            records,
            server: OnceLock::new(),
            key: OnceLock::new(),
            broken: OnceLock::new(),
        }
    }

    fn server(&self) -> &McpServer {
        self.server.get_or_init(|| self.template.connection())
    }

    /// Opens the durable stack of `key`, waiting a little while this process's previous
    /// handler of the same session still holds it.
    async fn open(&self, key: &str) -> Result<Session, StateError> {
        let started = Instant::now();
        loop {
            let registry = Arc::clone(self.template.session().registry());
            let dir = self.records.dir().to_path_buf();
            let owned = key.to_owned();
            let opened =
                tokio::task::spawn_blocking(move || registry.durable_session(&dir, &owned))
                    .await
                    .unwrap_or_else(|join| {
                        Err(StateError::Io {
                            step: "open the pending stack",
                            path: self.records.dir().join(key),
                            source: io::Error::other(join.to_string()),
                        })
                    });
            match opened {
                Err(StateError::Busy { .. }) if started.elapsed() < BUSY_WAIT => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                other => return other,
            }
        }
    }
}

impl Drop for HttpConnection {
    fn drop(&mut self) {
        let Some(key) = self.key.get() else {
            return;
        };
        // The server holds the stack's lock; let it go before looking at the stack.
        drop(self.server.take());
        self.records.forget_stack(key);
        self.records.touch(key);
    }
}

impl ServerHandler for HttpConnection {
    fn get_info(&self) -> ServerConfig {
        self.template.get_info()
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        if let Some(SessionKey(key)) = context.extensions.get::<SessionKey>() {
            let server = match self.open(key).await {
                Ok(session) => self.template.connection_with(session),
                Err(e) => {
                    tracing::error!(session = %key, error = %e, "an MCP session's pending stack cannot be opened");
                    let _ = self.broken.set(format!(
                        "This MCP session's pending stack cannot be opened: {e}. Nothing was applied; start a new MCP session to go on."
                    ));
                    self.template.connection()
                }
            };
            if self.server.set(server).is_ok() {
                let _ = self.key.set(key.clone());
            }
        }
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.server().list_tools(request, context).await
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if let Some(why) = self.broken.get() {
            return Ok(
                results::call_tool_result(AgentToolResult::error(why.clone()), false, None).into(),
            );
        }
        self.server().call_tool(request, context).await
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        self.server().on_initialized(context).await;
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.server().accepted_subscription_filter(requested)
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        self.server().listen(context).await
    }
}
