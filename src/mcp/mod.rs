//! Serving a [`Registry`]'s tools over the Model Context Protocol, with rmcp.
//!
//! [`McpServer`] is an rmcp [`ServerHandler`] for one client connection: it lists the
//! registry's tools (input schemas lowered for [`Dialect::Mcp`], titles, annotations) and
//! calls them through its own [`Session`], so every connection has its own pending stack and
//! `resolve` applies only what that client previewed. The registry is built once and shared:
//! a server for another connection is [`McpServer::connection`], or `McpServer::new` again.
//!
//! What a client sees:
//!
//! * every failure — unknown tool, bad arguments (naming the field), a tool error — is a
//!   result with `isError: true` and a message the model can act on, never a JSON-RPC error;
//! * a result's `details` arrive as `structuredContent` (an object; other values are wrapped
//!   as `{"details": …}`), and the session's `<system-reminder>` to call `resolve` follows a
//!   preview as a last text block, since MCP cannot force a tool choice;
//! * `resolve`'s description lists the pending stack, top first, and the server sends
//!   `notifications/tools/list_changed` whenever the stack changes (on the `initialize`
//!   lifecycle directly; on 2026-07-28 to clients that subscribe through
//!   `subscriptions/listen`);
//! * a request with a progress token gets `notifications/progress` (the `ast_*` tools report
//!   progress every few hundred files), and `notifications/cancelled` cancels the call.
//!
//! A crate with its own tools ships an MCP server in a few lines:
//!
//! ```no_run
//! use xcsh::mcp::McpServer;
//! use xcsh::{Session, ToolContext, custom_tool};
//!
//! /// Says hello.
//! #[custom_tool(read_only)]
//! struct Hello {
//!     /// Who to greet.
//!     name: String,
//! }
//!
//! impl Hello {
//!     async fn execute(self, _ctx: &ToolContext) -> String {
//!         format!("Hello, {}!", self.name)
//!     }
//! }
//!
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! let registry = Session::builder().custom::<Hello>().build_registry()?;
//! McpServer::new(registry).serve_stdio().await?;
//! # Ok(())
//! # }
//! ```

mod elicitation;
mod http;
mod http_guard;
mod http_options;
mod http_state;
mod limits;
mod list_changed;
mod listing;
mod progress;
mod results;
#[cfg(feature = "tls")]
mod tls;

use std::fmt;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, SubscriptionFilter,
};
use rmcp::service::{
    NotificationContext, RequestContext, ServerInitializeError, SubscriptionContext,
};
use rmcp::transport::IntoTransport;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use tokio::sync::watch;
use tokio::task::AbortHandle;
use xcsh_core::approval::ApprovalPolicy;
use xcsh_core::{CallOptions, Content, Dialect, Registry, Session};

pub use http_options::{
    DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_SESSIONS, HttpOptions, HttpOptionsError,
    HttpOptionsErrorKind,
};
#[cfg(feature = "tls")]
pub use tls::TlsIdentity;

/// The rmcp crate this module is built on, for naming its types (transports, models).
pub use rmcp;

/// What the server tells a client about how to use it, in the `initialize` answer.
const INSTRUCTIONS: &str = "Tools that change things only preview: they return a diff and \
push a pending action. Nothing is written until you call `resolve` with action \"apply\" (or \
\"discard\" to drop it). Pending actions are resolved last-in, first-out; `resolve`'s \
description lists them.";

/// An MCP server for one client connection: the registry's tools, called through a session
/// of its own.
///
/// ```
/// use xcsh::mcp::McpServer;
/// use xcsh::{Session, tools::builtin_suite};
///
/// let registry = Session::builder()
///     .suite(builtin_suite())
///     .workspace_root(std::env::temp_dir())
///     .build_registry()
///     .unwrap();
/// let first = McpServer::new(registry);
/// let second = first.connection(); // another client: same tools, its own pending stack
/// assert_eq!(first.tool_names(), ["ast_grep", "ast_edit", "undo", "resolve"]);
/// assert_ne!(first.session().id(), second.session().id());
/// ```
pub struct McpServer {
    session: Session,
    identity: Implementation,
    instructions: Option<String>,
    /// Subscribed when the server is made, so that no change between the handshake and the
    /// forwarder's start is missed; taken by the `initialize` lifecycle's forwarder.
    stack_changes: Mutex<Option<watch::Receiver<u64>>>,
    forwarder: Mutex<Option<AbortHandle>>,
    /// The client, once it has spoken: whom the session's elicitation approver asks.
    client: Arc<OnceLock<rmcp::Peer<RoleServer>>>,
    /// How long an HTTP session's record outlives its last use when nothing is pending
    /// ([`with_session_expiry`](Self::with_session_expiry)).
    session_expiry: Option<std::time::Duration>,
    /// Who may use the server over HTTP, and how much ([`with_http_options`](Self::with_http_options)).
    http: HttpOptions,
}

/// How long, by default, a `--state` HTTP session that holds nothing pending can be restored
/// after its last use: 30 days.
pub const DEFAULT_SESSION_EXPIRY: std::time::Duration =
    std::time::Duration::from_secs(30 * 24 * 60 * 60);

impl McpServer {
    /// A server over `registry`'s tools, with a new session (an empty pending stack).
    ///
    /// Input schemas come from the registry's [`Dialect::Mcp`] lowering; a registry built
    /// without that dialect falls back to the canonical schemas (logged as a warning).
    pub fn new(registry: Arc<Registry>) -> Self {
        if registry.definitions(Dialect::Mcp).is_err() {
            tracing::warn!(
                "the registry was built without the MCP dialect; listing canonical schemas. Add Dialect::Mcp to SessionBuilder::dialects to list schemas lowered for MCP"
            );
        }
        Self::with_session(registry.session())
    }

    /// A server that calls tools through `session` (its pending stack is the connection's),
    /// e.g. to look at the stack from the serving program.
    ///
    /// ```
    /// use xcsh::mcp::McpServer;
    /// let session = xcsh::Session::builder().build().unwrap();
    /// let server = McpServer::with_session(session.clone());
    /// assert_eq!(server.session().id(), session.id());
    /// ```
    ///
    /// Under an approval policy that may ask a person (`human`, or rules), a session without
    /// an approver of its own asks the client's user by MCP elicitation; a client that did
    /// not declare that capability gets a `resolve` that refuses to apply and says how to
    /// proceed.
    pub fn with_session(session: Session) -> Self {
        let stack_changes = session.pending().changes();
        let client = Arc::new(OnceLock::new());
        let asks = !matches!(session.approval_policy(), ApprovalPolicy::Model);
        let session = if asks && !session.has_approver() {
            session.with_approver(elicitation::ElicitationApprover {
                peer: Arc::clone(&client),
            })
        } else {
            session
        };
        McpServer {
            session,
            identity: Implementation::new("xcsh", env!("CARGO_PKG_VERSION")),
            instructions: Some(INSTRUCTIONS.to_owned()),
            stack_changes: Mutex::new(Some(stack_changes)),
            forwarder: Mutex::new(None),
            client,
            session_expiry: Some(DEFAULT_SESSION_EXPIRY),
            http: HttpOptions::default(),
        }
    }

    /// How long [`serve_http_with_state`](Self::serve_http_with_state) keeps the record of
    /// an MCP session after its last use (its record's or its stack's last change), when its
    /// stack holds nothing: records older than that are removed when the server starts, and
    /// their ids are answered 404 (the client starts a new session). A session whose stack
    /// still holds previews is never expired. `None` keeps every record;
    /// the default is [`DEFAULT_SESSION_EXPIRY`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use xcsh::mcp::McpServer;
    /// let registry = xcsh::Session::builder().build_registry().unwrap();
    /// let server = McpServer::new(registry).with_session_expiry(Some(Duration::from_secs(7 * 86_400)));
    /// # let _ = server;
    /// ```
    #[must_use]
    pub fn with_session_expiry(mut self, expiry: Option<std::time::Duration>) -> Self {
        self.session_expiry = expiry;
        self
    }

    /// What [`serve_http`](Self::serve_http) and
    /// [`serve_http_with_state`](Self::serve_http_with_state) let in: a bearer token, the
    /// allowed `Origin`s and `Host`s, body and session limits, TLS (see [`HttpOptions`];
    /// `docs/HTTP.md` says how to expose a server safely). Stdio ignores them.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// use xcsh::mcp::{HttpOptions, McpServer};
    /// let registry = xcsh::Session::builder()
    ///     .suite(xcsh::tools::builtin_suite())
    ///     .build_registry()?;
    /// let options = HttpOptions::new().auth_token_file("/etc/xcsh/token")?;
    /// let listener = tokio::net::TcpListener::bind("0.0.0.0:8931").await?;
    /// let shutdown = tokio_util::sync::CancellationToken::new();
    /// McpServer::new(registry)
    ///     .with_http_options(options)
    ///     .serve_http(listener, shutdown)
    ///     .await?;
    /// # Ok(())
    /// # }
    /// ```
    #[must_use]
    pub fn with_http_options(mut self, options: HttpOptions) -> Self {
        self.http = options;
        self
    }

    /// Names the server in the handshake (`serverInfo`), e.g. after the crate serving it.
    ///
    /// ```
    /// use xcsh::mcp::{McpServer, rmcp::ServerHandler};
    /// let registry = xcsh::Session::builder().build_registry().unwrap();
    /// let server = McpServer::new(registry).with_name("my-tools", "1.2.0");
    /// assert_eq!(server.get_info().server_info.name, "my-tools");
    /// ```
    #[must_use]
    pub fn with_name(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.identity = Implementation::new(name, version);
        self
    }

    /// Replaces the instructions sent in the handshake (`None` sends none).
    ///
    /// ```
    /// use xcsh::mcp::{McpServer, rmcp::ServerHandler};
    /// let registry = xcsh::Session::builder().build_registry().unwrap();
    /// let server = McpServer::new(registry).with_instructions(Some("Search before editing.".into()));
    /// assert_eq!(server.get_info().instructions.as_deref(), Some("Search before editing."));
    /// ```
    #[must_use]
    pub fn with_instructions(mut self, instructions: Option<String>) -> Self {
        self.instructions = instructions;
        self
    }

    /// A server for another connection: the same registry, name and instructions, and a
    /// new session with its own empty pending stack.
    #[must_use]
    pub fn connection(&self) -> Self {
        self.connection_with(self.session.registry().session())
    }

    /// A server for another connection that calls tools through `session` (a durable one,
    /// say), with this server's name and instructions.
    pub(crate) fn connection_with(&self, session: Session) -> Self {
        let mut server = Self::with_session(session);
        server.identity = self.identity.clone();
        server.instructions = self.instructions.clone();
        server.session_expiry = self.session_expiry;
        server
    }

    /// The session tools are called through.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// The names of the listed tools, `resolve` included when a tool declares it may push or
    /// anything is pending.
    pub fn tool_names(&self) -> Vec<&str> {
        self.session.tool_names()
    }

    /// The tools as `tools/list` returns them now (`resolve` describing the pending stack).
    ///
    /// ```
    /// use xcsh::mcp::McpServer;
    /// let registry = xcsh::Session::builder()
    ///     .suite(xcsh::tools::builtin_suite())
    ///     .build_registry()
    ///     .unwrap();
    /// let tools = McpServer::new(registry).list();
    /// assert_eq!(tools[1].title.as_deref(), Some("AST Edit"));
    /// assert_eq!(tools[1].annotations.as_ref().unwrap().read_only_hint, Some(true));
    /// assert!(tools[3].description.as_deref().unwrap().ends_with("Nothing is pending."));
    /// ```
    pub fn list(&self) -> Vec<rmcp::model::Tool> {
        listing::tools(&self.session)
    }

    /// Serves this connection over any rmcp transport until the client disconnects.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use xcsh::mcp::McpServer;
    /// let registry = xcsh::Session::builder().build_registry().unwrap();
    /// let (server_end, client_end) = tokio::io::duplex(4096);
    /// drop(client_end); // a client that hangs up before the handshake
    /// let err = McpServer::new(registry).serve(server_end).await.unwrap_err();
    /// assert!(err.to_string().contains("before the MCP handshake"));
    /// # });
    /// ```
    pub async fn serve<T, E, A>(self, transport: T) -> Result<(), ServeError>
    where
        T: IntoTransport<RoleServer, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let running = ServiceExt::serve(self, transport)
            .await
            .map_err(|e| match e {
                ServerInitializeError::ConnectionClosed(_) => {
                    ServeError::ClosedBeforeHandshake(e.to_string())
                }
                other => ServeError::Handshake(other.to_string()),
            })?;
        let reason = running
            .waiting()
            .await
            .map_err(|e| ServeError::Stopped(e.to_string()))?;
        tracing::debug!(?reason, "MCP connection ended");
        Ok(())
    }

    /// Serves this connection on the process's stdin and stdout until the client
    /// disconnects. Nothing else may write to stdout meanwhile: log to stderr.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), Box<dyn std::error::Error>> {
    /// let registry = xcsh::Session::builder()
    ///     .suite(xcsh::tools::builtin_suite())
    ///     .build_registry()?;
    /// xcsh::mcp::McpServer::new(registry).serve_stdio().await?;
    /// # Ok(())
    /// # }
    /// ```
    pub async fn serve_stdio(self) -> Result<(), ServeError> {
        self.serve(rmcp::transport::io::stdio_pipes()).await
    }

    fn start_forwarder(&self, peer: rmcp::Peer<RoleServer>) {
        let changes = self
            .stack_changes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some(changes) = changes {
            let handle = list_changed::forward_to_peer(peer, changes);
            *self
                .forwarder
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = Some(handle);
        }
    }
}

impl Drop for McpServer {
    fn drop(&mut self) {
        if let Some(forwarder) = self
            .forwarder
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        {
            forwarder.abort();
        }
    }
}

impl fmt::Debug for McpServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.identity.name)
            .field("session", &self.session)
            .finish_non_exhaustive()
    }
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        let capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_tool_list_changed()
            .build();
        let config = ServerConfig::new(capabilities).with_server_info(self.identity.clone());
        match &self.instructions {
            Some(text) => config.with_instructions(text.clone()),
            None => config,
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.list()))
    }

    // `get_tool` stays unimplemented on purpose: rmcp's HTTP transport would validate
    // arguments against the schema it returns and answer a JSON-RPC error, where a model
    // needs an `isError` result naming the field.

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.client.get_or_init(|| context.peer.clone());
        let args = request.arguments.map(Value::Object).unwrap_or(Value::Null);
        let mut options = CallOptions {
            call_id: Some(format!("mcp-{}", context.id)),
            cancellation: Some(context.ct.clone()),
            progress: None,
            dialect: Some(Dialect::Mcp),
        };
        let forwarder = context.meta.get_progress_token().map(|token| {
            let (sink, forwarder) = progress::forward(context.peer.clone(), token);
            options.progress = Some(sink);
            forwarder
        });

        let mut result = self.session.call_with(&request.name, args, options).await;
        if let Some(forwarder) = forwarder {
            // Every progress notification goes out before the answer, none after it.
            forwarder.finish().await;
        }
        // MCP has no forced tool choice, so the nudge toward `resolve` travels in the result.
        result
            .content
            .extend(self.session.take_reminders().into_iter().map(Content::text));
        Ok(results::call_tool_result(result).into())
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // The `initialize` lifecycle: the client accepts list_changed whenever the server
        // declared `listChanged`, so changes go straight to it.
        self.client.get_or_init(|| context.peer.clone());
        self.start_forwarder(context.peer);
    }

    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(SubscriptionFilter::builder().tools_list_changed().build())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        list_changed::serve_subscription(context, self.session.pending().changes()).await;
        Ok(())
    }
}

/// Why serving a connection stopped with an error; its message says what to check.
///
/// ```
/// let err = xcsh::mcp::ServeError::ClosedBeforeHandshake("connection closed".into());
/// assert!(err.to_string().starts_with("the client closed the connection before the MCP handshake"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ServeError {
    /// The client hung up before the MCP handshake.
    ClosedBeforeHandshake(String),
    /// The MCP handshake failed (the client sent something else, or an unsupported version).
    Handshake(String),
    /// The connection's task ended abnormally.
    Stopped(String),
}

impl fmt::Display for ServeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServeError::ClosedBeforeHandshake(cause) => write!(
                f,
                "the client closed the connection before the MCP handshake ({cause}); start the server from an MCP client, which speaks first"
            ),
            ServeError::Handshake(cause) => write!(
                f,
                "the MCP handshake failed: {cause}; check that the client speaks MCP over stdio"
            ),
            ServeError::Stopped(cause) => {
                write!(f, "the MCP connection stopped abnormally: {cause}")
            }
        }
    }
}

impl std::error::Error for ServeError {}
