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
use xcsh_core::durable::StateError;
use xcsh_core::{AgentToolResult, Session};

use super::records::SessionRecords;
use super::{McpServer, results};

/// How long a restored session waits for the stack its previous handler (in this process)
/// still holds, e.g. one closed by an idle timeout a moment ago.
const BUSY_WAIT: Duration = Duration::from_secs(5);

/// The marker a session's `initialize` carries to its handler: the session's id, which is
/// the key of its durable stack. Only [`StateSessionManager`] inserts it, for ids rmcp issued
/// or restored from a record.
#[derive(Debug, Clone)]
struct SessionKey(String);

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
