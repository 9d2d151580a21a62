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
//! * a tool that declares an output type ([`Tool::output_schema`](xcsh_core::Tool::output_schema),
//!   `#[custom_tool(output = T)]`; every built-in tool) is listed with it as `outputSchema`,
//!   and its structured output is the result's `structuredContent`; for other tools their
//!   `details` are (an object; other values are wrapped as `{"details": …}`);
//! * what is too large for a result is a resource ([`Resource`](xcsh_core::Resource)): a
//!   `resource_link` block in the result, read with `resources/read` (a preview's whole diff,
//!   and each file's new bytes);
//! * the session's `<system-reminder>` to call `resolve` follows a preview as a last text
//!   block, since MCP cannot force a tool choice;
//! * on protocol 2026-07-28 over HTTP, which has no sessions, a pending stack is named by a
//!   handle the preview's result gives (its text and `structuredContent.handle`), which
//!   `resolve` and later edits take back as their `handle` argument; a person is asked through
//!   input-required rounds instead of `elicitation/create` (docs/MCP.md);
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
// Only HTTP names stacks by handles; the module needs no HTTP crate.
#[cfg_attr(not(feature = "http"), allow(dead_code))]
mod handles;
#[cfg(feature = "http")]
mod http;
#[cfg(feature = "http")]
mod http_guard;
#[cfg(feature = "http")]
mod http_options;
#[cfg(feature = "http")]
mod http_state;
mod input_required;
#[cfg(feature = "http")]
mod limits;
mod list_changed;
mod listing;
mod progress;
#[cfg_attr(not(feature = "http"), allow(dead_code))]
mod records;
mod results;
#[cfg(feature = "tls")]
mod tls;

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, Implementation, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, ServerCapabilities, ServerConfig, SubscriptionFilter,
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
use xcsh_core::{
    AgentToolResult, CallOptions, Content, Dialect, ErrorKind, JsonObject, NOTHING_PENDING,
    RESOLVE_TOOL_NAME, Registry, Session, ToolError,
};

pub use handles::DEFAULT_MAX_HANDLES;
use handles::Handles;
use input_required::{Approvals, Asking};

#[cfg(feature = "http")]
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
/// assert_eq!(
///     first.tool_names(),
///     ["ast_grep", "ast_edit", "apply_patch", "edit", "write_file", "undo", "resolve"]
/// );
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
    #[cfg(feature = "http")]
    http: HttpOptions,
    /// What every connection of this server shares.
    shared: Arc<Shared>,
}

/// What every connection of one server shares: the handle-named stacks (HTTP), the sealing
/// key of approval questions, the lowered output schemas.
struct Shared {
    /// Set when serving HTTP: stacks for requests that come without a protocol session.
    handles: OnceLock<Arc<Handles>>,
    /// How many handle-named stacks are held in memory, at most.
    max_handles: Mutex<usize>,
    /// The sealing key of approval questions on protocol 2026-07-28, made when first needed
    /// (`None`: none could be made, and no one can be asked that way).
    approvals: OnceLock<Option<Arc<Approvals>>>,
    /// Where the key is kept across restarts (`--state`).
    key_dir: OnceLock<std::path::PathBuf>,
    /// Each tool's output schema, lowered for MCP: as is, and with `handle` added.
    outputs: OnceLock<HashMap<String, Arc<JsonObject>>>,
}

impl Shared {
    fn new() -> Self {
        Shared {
            handles: OnceLock::new(),
            max_handles: Mutex::new(DEFAULT_MAX_HANDLES),
            approvals: OnceLock::new(),
            key_dir: OnceLock::new(),
            outputs: OnceLock::new(),
        }
    }

    fn approvals(&self) -> Option<&Arc<Approvals>> {
        self.approvals
            .get_or_init(|| {
                let made = match self.key_dir.get() {
                    Some(dir) => Approvals::kept_in(dir),
                    None => Approvals::new(),
                };
                match made {
                Ok(approvals) => Some(Arc::new(approvals)),
                Err(e) => {
                    tracing::error!(error = %e, "no sealing key for approval questions; a person cannot be asked on protocol 2026-07-28");
                    None
                }
                }
            })
            .as_ref()
    }
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
            shared: Arc::new(Shared::new()),
            #[cfg(feature = "http")]
            http: HttpOptions::default(),
        }
    }

    /// How many stacks named by handles (protocol 2026-07-28 over HTTP, which has no
    /// sessions) are held in memory, at most ([`DEFAULT_MAX_HANDLES`] by default). Beyond it
    /// the least recently used empty stack is let go (served again, empty, when its handle
    /// comes back); when all hold previews, a new conversation's preview is refused, saying
    /// how to make room.
    ///
    /// ```
    /// let registry = xcsh::Session::builder().build_registry().unwrap();
    /// let server = xcsh::mcp::McpServer::new(registry).with_max_handles(64);
    /// # let _ = server;
    /// ```
    #[must_use]
    pub fn with_max_handles(self, max: usize) -> Self {
        *self
            .shared
            .max_handles
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = max.max(1);
        self
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

    #[cfg(feature = "http")]
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
        server.shared = Arc::clone(&self.shared);
        server
    }

    /// Serves requests without a protocol session (HTTP, protocol 2026-07-28) from stacks
    /// named by handles, durable under `state`.
    #[cfg(feature = "http")]
    pub(crate) fn use_handles(&self, state: Option<std::path::PathBuf>) {
        let max = *self
            .shared
            .max_handles
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let handles = Handles::new(
            Arc::clone(self.session.registry()),
            state.clone(),
            max,
            self.session_expiry,
        );
        if let Some(dir) = &state {
            // States sealed before a restart still open after it.
            let _ = self.shared.key_dir.set(dir.clone());
        }
        let _ = self.shared.handles.set(Arc::new(handles));
    }

    /// The handle-named stacks, when requests without sessions are served from them.
    pub(crate) fn handles(&self) -> Option<&Arc<Handles>> {
        self.shared.handles.get()
    }

    /// The output schemas, lowered for MCP once per server.
    fn outputs(&self) -> &HashMap<String, Arc<JsonObject>> {
        self.shared.outputs.get_or_init(|| {
            let registry = self.session.registry();
            registry
                .tools()
                .iter()
                .chain(registry.get(RESOLVE_TOOL_NAME))
                .filter_map(|tool| {
                    let schema = tool.output_schema()?;
                    let lowered = xcsh_core::dialect::lower_schema(Dialect::Mcp, schema)
                        .map(Arc::new)
                        .unwrap_or_else(|_| Arc::clone(schema));
                    Some((tool.name().to_owned(), lowered))
                })
                .collect()
        })
    }

    /// Whether `context`'s request comes without a protocol session, its stack named by a
    /// handle: protocol 2026-07-28 over HTTP.
    fn by_handle(&self, context: &RequestContext<RoleServer>) -> bool {
        self.handles().is_some() && modern(context)
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
    /// assert!(tools.last().unwrap().description.as_deref().unwrap().ends_with("Nothing is pending."));
    /// ```
    pub fn list(&self) -> Vec<rmcp::model::Tool> {
        listing::tools(&self.session, false, self.outputs())
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
            .enable_resources()
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
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(listing::tools(
            &self.session,
            self.by_handle(&context),
            self.outputs(),
        )))
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
        let name = request.name.to_string();
        let mut args = request.arguments.unwrap_or_default();
        let declares_output = self.outputs().contains_key(&name);
        let answer = |result: AgentToolResult, handle: Option<&str>| {
            Ok(results::call_tool_result(result, declares_output, handle).into())
        };

        // Which stack: the connection's, or on a request without a session the one its
        // handle names (a new one for a call that may push).
        let mut stack = Stack::Own;
        let session = match self.handles() {
            Some(handles) if modern(&context) => {
                match self.stack_for(handles, &name, &mut args).await {
                    Ok((session, by_handle)) => {
                        stack = by_handle;
                        session
                    }
                    Err(error) => return answer(AgentToolResult::from(error), None),
                }
            }
            _ => self.session.clone(),
        };
        let stack_key = stack.handle().unwrap_or(session.id()).to_owned();

        let mut options = CallOptions {
            call_id: Some(format!("mcp-{}", context.id)),
            cancellation: Some(context.ct.clone()),
            progress: None,
            dialect: Some(Dialect::Mcp),
            ..CallOptions::default()
        };
        // Protocol 2026-07-28 asks a person through input-required rounds: the first round
        // records the question, the retry carries the answer.
        let asked = Arc::new(Mutex::new(None));
        if name == RESOLVE_TOOL_NAME
            && modern(&context)
            && !matches!(session.approval_policy(), ApprovalPolicy::Model)
        {
            match (&request.request_state, self.shared.approvals()) {
                (Some(state), Some(approvals)) => {
                    let answering = match approvals.answered(
                        &stack_key,
                        state,
                        request.input_responses.as_ref(),
                    ) {
                        Ok(answering) => answering,
                        Err(why) => {
                            let result = AgentToolResult::failure(ErrorKind::ApprovalPending, why);
                            return answer(
                                self.finish(&session, &stack, result).await,
                                stack.handle(),
                            );
                        }
                    };
                    let top = session.pending().peek().map(|top| top.id.get());
                    if top != Some(answering.id) {
                        let result = AgentToolResult::failure(
                            ErrorKind::ApprovalPending,
                            format!(
                                "Not approved: the person's answer was about pending action #{}, which is no longer the top of the stack (it was resolved, or another preview was pushed since). Nothing was written. Call `resolve` with action \"apply\" again to ask about the top action, or \"discard\" it.",
                                answering.id
                            ),
                        );
                        return answer(self.finish(&session, &stack, result).await, stack.handle());
                    }
                    options.approver = Some(Arc::new(answering));
                }
                (None, Some(_)) => {
                    options.approver = Some(Arc::new(Asking {
                        can_ask: client_can_elicit(&context),
                        asked: Arc::clone(&asked),
                    }));
                }
                // No sealing key: nobody can be asked this way; the session's approver says so.
                (_, None) => {}
            }
        }
        let forwarder = context.meta.get_progress_token().map(|token| {
            let (sink, forwarder) = progress::forward(context.peer.clone(), token);
            options.progress = Some(sink);
            forwarder
        });

        let result = session.call_with(&name, Value::Object(args), options).await;
        if let Some(forwarder) = forwarder {
            // Every progress notification goes out before the answer, none after it.
            forwarder.finish().await;
        }
        let question = asked.lock().unwrap_or_else(PoisonError::into_inner).take();
        if let Some(question) = question
            && let Some(approvals) = self.shared.approvals()
        {
            // The action stays pending; the client asks its user and retries with the answer.
            self.finish(&session, &stack, AgentToolResult::empty())
                .await;
            return match approvals.input_required(&stack_key, &question) {
                Ok(input_required) => Ok(input_required.into()),
                Err(e) => answer(
                    AgentToolResult::failure(
                        ErrorKind::ApprovalPending,
                        format!(
                            "Not approved: the person could not be asked ({e}). Nothing was written; the action is still pending."
                        ),
                    ),
                    stack.handle(),
                ),
            };
        }
        let result = self.finish(&session, &stack, result).await;
        answer(result, stack.handle())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        // Without a session there is no "this conversation" to list: handles are not shown.
        if self.by_handle(&context) {
            return Ok(ListResourcesResult::with_all_items(Vec::new()));
        }
        let listed = self
            .session
            .resources()
            .into_iter()
            .map(|info| {
                let mut resource = rmcp::model::Resource::new(info.uri, info.name);
                if let Some(mime) = info.mime_type {
                    resource = resource.with_mime_type(mime);
                }
                if let Some(description) = info.description {
                    resource = resource.with_description(description);
                }
                resource
            })
            .collect();
        Ok(ListResourcesResult::with_all_items(listed))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        let session = match self.handles() {
            Some(handles) if modern(&context) => {
                // `xcsh://<handle>/…`: the handle is the capability to read it.
                let handle = uri
                    .strip_prefix(xcsh_core::RESOURCE_SCHEME)
                    .and_then(|rest| rest.split('/').next())
                    .unwrap_or_default();
                match handles.get(handle).await {
                    Ok(session) => session,
                    Err(_) => return Err(not_found(&xcsh_core::ResourceError::Unknown { uri })),
                }
            }
            _ => self.session.clone(),
        };
        let read = session.read_resource(&uri).map_err(|e| not_found(&e))?;
        let contents = results::resource_contents(read.uri, read.mime_type, read.body);
        let mut result = ReadResourceResult::new(vec![contents]);
        // Made from the files as they are now: never to be served from a cache.
        result.ttl_ms = Some(0);
        result.cache_scope = Some(rmcp::model::CacheScope::Private);
        Ok(result.into())
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

/// Which stack a call runs on.
enum Stack {
    /// The connection's session.
    Own,
    /// A stack named by a handle (no protocol session); `minted` for this call.
    Handle { handle: String, minted: bool },
}

impl Stack {
    fn handle(&self) -> Option<&str> {
        match self {
            Stack::Own => None,
            Stack::Handle { handle, .. } => Some(handle),
        }
    }
}

impl McpServer {
    /// The stack of a call made without a protocol session: the one its `handle` names (the
    /// argument is taken out, but for `resolve`, whose own it is), a new one for a call that
    /// may push, none (a throwaway session) for a read-only one.
    async fn stack_for(
        &self,
        handles: &Handles,
        name: &str,
        args: &mut JsonObject,
    ) -> Result<(Session, Stack), ToolError> {
        let given = if name == RESOLVE_TOOL_NAME {
            args.get("handle").cloned()
        } else {
            args.remove("handle")
        };
        match given {
            Some(Value::String(handle)) => {
                let session = handles.get(&handle).await?;
                Ok((
                    session,
                    Stack::Handle {
                        handle,
                        minted: false,
                    },
                ))
            }
            // `resolve` explains itself (the argument is its own); a tool is told here.
            Some(Value::Null) | None if name == RESOLVE_TOOL_NAME => Err(ToolError::with_kind(
                ErrorKind::NothingPending,
                format!(
                    "{NOTHING_PENDING} This server keeps no session for MCP 2026-07-28 requests over HTTP: pass the `handle` that the preview's result gave (in its text and `structuredContent.handle`)."
                ),
            )),
            Some(Value::Null) | None => {
                let pushes = self
                    .session
                    .registry()
                    .get(name)
                    .is_some_and(|tool| tool.pushes_pending_actions());
                let read_only = self.session.registry().get(name).is_some_and(|tool| {
                    tool.annotations().read_only == Some(true) && !tool.pushes_pending_actions()
                });
                if read_only {
                    return Ok((self.session.clone(), Stack::Own));
                }
                let (handle, session) = handles.mint(pushes).await?;
                Ok((
                    session,
                    Stack::Handle {
                        handle,
                        minted: true,
                    },
                ))
            }
            Some(_) if name == RESOLVE_TOOL_NAME => {
                // Not a string: `resolve`'s own decoding names the field.
                Ok((self.session.clone(), Stack::Own))
            }
            Some(other) => Err(ToolError::invalid_arguments(
                name,
                "handle",
                format!(
                    "invalid type: {}, expected a string (the handle a preview's result gave)",
                    json_kind(&other)
                ),
            )),
        }
    }

    /// The result as the client gets it: the session's reminders after it (MCP cannot force
    /// a tool choice), and on a handle-named stack the handle, kept when this call pushed.
    async fn finish(
        &self,
        session: &Session,
        stack: &Stack,
        mut result: AgentToolResult,
    ) -> AgentToolResult {
        let reminders = session.take_reminders();
        result
            .content
            .extend(reminders.into_iter().map(Content::text));
        if let Stack::Handle { handle, minted } = stack {
            let pending = session.pending().len();
            if pending > 0 {
                result.content.push(Content::text(format!(
                    "Pending-action handle: `{handle}` ({pending} pending). This connection keeps no session: pass \"handle\": \"{handle}\" to `resolve` to apply or discard, and to later edits in this conversation so they join the same stack."
                )));
            }
            if let Some(handles) = self.handles()
                && *minted
            {
                if pending > 0 {
                    handles.keep(handle, session.clone()).await;
                } else {
                    handles.forget(handle, session.clone());
                }
            }
        }
        result
    }
}

/// Whether the request speaks protocol 2026-07-28 or later (no sessions, no server-to-client
/// requests).
fn modern(context: &RequestContext<RoleServer>) -> bool {
    context
        .protocol_version()
        .is_some_and(|version| version >= ProtocolVersion::V_2026_07_28)
}

/// Whether the client of this request can show an elicitation form.
fn client_can_elicit(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .and_then(|capabilities| capabilities.elicitation)
        .is_some_and(|elicitation| elicitation.form.is_some() || elicitation.url.is_none())
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// `resources/read` of something that is not (or no longer) there.
fn not_found(error: &xcsh_core::ResourceError) -> ErrorData {
    ErrorData::resource_not_found(error.to_string(), None)
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
