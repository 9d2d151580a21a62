//! [`Session`]: one conversation's pending stack and reminders over a shared [`Registry`],
//! and the calls between them.

use std::fmt;
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use futures_util::FutureExt;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::approval::{ApprovalConfig, ApprovalPolicy, Approver, AuditSink};
use crate::bounds::{MAX_ARGUMENT_DEPTH, dismantle, nests_deeper_than, shorten_error_texts};
use crate::context::{CallId, ProgressSink, RESOLVE_REMINDER, Reminders, ToolContext};
use crate::dialect::{Dialect, Provider, restore_arguments};
use crate::error::{ErrorKind, ToolError, panic_message};
use crate::names::closest;
use crate::pending::PendingActionStore;
use crate::registry::{DialectNotEnabled, Registry};
use crate::resolve::{RESOLVE_TOOL_NAME, Resolution, ResolveAction, ResolveError, resolve};
use crate::resources::{ResourceContents, ResourceError, ResourceInfo, Resources};
use crate::result::AgentToolResult;
use crate::tool::Tool;

/// Options for one call.
#[derive(Clone, Default)]
pub struct CallOptions {
    /// The call id the model or client gave; generated when absent.
    pub call_id: Option<String>,
    /// Cancels the call: the model gets a `Cancelled` error result at once.
    pub cancellation: Option<CancellationToken>,
    /// Where the tool's progress reports go.
    pub progress: Option<ProgressSink>,
    /// The dialect the arguments come from. For OpenAI strict mode, explicit `null`s for
    /// omitted optional fields are removed before decoding.
    pub dialect: Option<Dialect>,
    /// Who is asked to approve an apply in this call, instead of the session's approver (the
    /// policy stays the session's): for a transport that carries the person's answer with
    /// the request, such as MCP's input-required rounds.
    pub approver: Option<Arc<dyn Approver>>,
}

/// How to steer the model toward `resolve` while something is pending.
#[derive(Debug, Clone, PartialEq)]
pub enum ResolveBias {
    /// Send this as the request's tool choice.
    ToolChoice(Value),
    /// The provider cannot force a named tool: deliver this reminder instead.
    Reminder(&'static str),
}

/// One conversation: the registered tools, its own pending-action stack and reminder queue.
/// Cheap to clone; clones share the same state.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let session = xcsh_core::Session::builder().build().unwrap();
/// let result = session.call("nope", serde_json::json!({})).await;
/// assert!(result.is_error());
/// assert_eq!(result.text_content(), "Unknown tool `nope`. No tools are registered.");
/// # });
/// ```
#[derive(Clone)]
pub struct Session {
    id: Arc<str>,
    registry: Arc<Registry>,
    store: Arc<PendingActionStore>,
    reminders: Arc<Reminders>,
    /// The registry's approval settings, or this session's own approver
    /// ([`with_approver`](Self::with_approver)).
    approval: Option<Arc<ApprovalConfig>>,
    /// The handle naming this stack, when the transport names stacks by handle.
    handle: Option<Arc<str>>,
    resources: Arc<Resources>,
}

static NEXT_SESSION: AtomicU64 = AtomicU64::new(1);
static NEXT_CALL: AtomicU64 = AtomicU64::new(1);

impl Session {
    /// A session over a registry, with an empty pending stack.
    pub fn new(registry: Arc<Registry>) -> Self {
        let id: Arc<str> = Arc::from(format!(
            "session-{}",
            NEXT_SESSION.fetch_add(1, Ordering::Relaxed)
        ));
        let store = PendingActionStore::new();
        if let Some(log) = &registry.audit {
            store.set_audit(AuditSink {
                log: Arc::clone(log),
                session: Arc::clone(&id),
                root: Arc::clone(&registry.workspace_root),
            });
        }
        Session {
            resources: Arc::new(Resources::new(&id)),
            id,
            approval: registry.approval.clone(),
            registry,
            store: Arc::new(store),
            reminders: Arc::default(),
            handle: None,
        }
    }

    /// This session, its pending stack named by `handle`: for a transport that keeps no
    /// session between calls (MCP protocol 2026-07-28 over HTTP), where the model passes the
    /// handle back as an argument. `resolve` then accepts only this handle in its `handle`
    /// argument (a session without one refuses any), and the session's resources are named
    /// under it. Give it to a new session, before any call; the handle must be an
    /// unguessable capability (xcsh's MCP server mints 160 random bits).
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use xcsh_core::{ErrorKind, Session};
    /// let session = Session::builder().build().unwrap().with_handle("ph-0123abcd");
    /// assert_eq!(session.handle(), Some("ph-0123abcd"));
    /// let wrong = session
    ///     .call("resolve", serde_json::json!({"action": "apply", "reason": "r", "handle": "ph-other"}))
    ///     .await;
    /// assert_eq!(wrong.error_kind(), Some(&ErrorKind::UnknownHandle));
    /// # });
    /// ```
    #[must_use]
    pub fn with_handle(mut self, handle: impl Into<String>) -> Self {
        let handle: Arc<str> = Arc::from(handle.into());
        self.resources = Arc::new(Resources::new(&handle));
        self.handle = Some(handle);
        self
    }

    /// The handle naming this session's stack, if it has one ([`with_handle`](Self::with_handle)).
    pub fn handle(&self) -> Option<&str> {
        self.handle.as_deref()
    }

    /// Reads a resource a tool of this session published (a link in its result; see
    /// [`Resource`](crate::Resource)), or one of its parts.
    pub fn read_resource(&self, uri: &str) -> Result<ResourceContents, ResourceError> {
        self.resources.read(uri, &self.store)
    }

    /// The resources this session serves now, oldest first.
    pub fn resources(&self) -> Vec<ResourceInfo> {
        self.resources.list(&self.store)
    }

    /// This session with its own [`Approver`] (sharing its pending stack and reminders):
    /// for a person reachable only through this conversation, such as an MCP client asked by
    /// elicitation. The policy stays the registry's; under [`ApprovalPolicy::Model`] no one
    /// is asked.
    ///
    /// ```
    /// use xcsh_core::Session;
    /// use xcsh_core::approval::{ApprovalPolicy, ChannelApprover};
    ///
    /// let registry = Session::builder().approval(ApprovalPolicy::Human).build_registry().unwrap();
    /// let (approver, _prompts) = ChannelApprover::new(1);
    /// let session = registry.session().with_approver(approver);
    /// assert!(session.has_approver());
    /// assert!(!registry.session().has_approver());
    /// ```
    ///
    /// [`ApprovalPolicy::Model`]: crate::approval::ApprovalPolicy::Model
    #[must_use]
    pub fn with_approver(mut self, approver: impl Approver) -> Self {
        let policy = self
            .approval
            .as_ref()
            .map(|config| config.policy.clone())
            .unwrap_or_default();
        self.approval = Some(Arc::new(ApprovalConfig {
            policy,
            approver: Some(Arc::new(approver)),
        }));
        self
    }

    /// Whether someone can be asked to approve an apply: an approver given to the registry
    /// or to this session.
    pub fn has_approver(&self) -> bool {
        self.approval
            .as_ref()
            .is_some_and(|config| config.approver.is_some())
    }

    /// The approval policy `resolve` applies under.
    pub fn approval_policy(&self) -> ApprovalPolicy {
        self.approval
            .as_ref()
            .map(|config| config.policy.clone())
            .unwrap_or_default()
    }

    /// This session's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The registry it draws tools from.
    pub fn registry(&self) -> &Arc<Registry> {
        &self.registry
    }

    /// The tools to offer the model now: the registry's, and `resolve` (last) whenever a tool
    /// declares it may push pending actions or anything is pending.
    pub fn tools(&self) -> &[Arc<dyn Tool>] {
        self.registry.listed(self.store.has_pending())
    }

    /// The names of the tools to offer now.
    pub fn tool_names(&self) -> Vec<&str> {
        self.tools().iter().map(|t| t.name()).collect()
    }

    /// The pending-action stack.
    pub fn pending(&self) -> &Arc<PendingActionStore> {
        &self.store
    }

    /// Applies or discards the top pending action, as the `resolve` tool does: the host's way
    /// to resolve for a person (a UI's Accept and Discard buttons). See [`resolve()`].
    pub async fn resolve(
        &self,
        action: ResolveAction,
        reason: &str,
    ) -> Result<Resolution, ResolveError> {
        resolve(&self.store, action, reason).await
    }

    /// Applies only the part of the top action touching `files` (see
    /// [`resolve_files`](crate::resolve_files)): a person's partial approval, from the host.
    pub async fn resolve_files(
        &self,
        files: &[String],
        reason: &str,
    ) -> Result<Resolution, ResolveError> {
        crate::resolve::resolve_files(&self.store, files, reason).await
    }

    /// Takes the reminders queued for the model (one per pushed preview).
    pub fn take_reminders(&self) -> Vec<String> {
        let taken = self.reminders.drain();
        if !taken.is_empty() {
            // Among them, in a durable session, the notices of actions lost in a restart.
            self.store.lost_delivered();
        }
        taken
    }

    /// The reminder queue.
    pub fn reminders(&self) -> &Arc<Reminders> {
        &self.reminders
    }

    /// The tool choice to send with the next request: `resolve` forced while anything is
    /// pending, `None` otherwise (never a stale force), and `None` for a provider that cannot
    /// force a named tool (deliver [`RESOLVE_REMINDER`] instead; see [`resolve_bias`](Self::resolve_bias)).
    pub fn tool_choice(&self, provider: impl Into<Provider>) -> Option<Value> {
        match self.resolve_bias(provider)? {
            ResolveBias::ToolChoice(choice) => Some(choice),
            ResolveBias::Reminder(_) => None,
        }
    }

    /// How to steer the model toward `resolve`, or `None` when nothing is pending.
    ///
    /// While anything is pending, [`tools`](Self::tools) and [`definitions`](Self::definitions)
    /// list `resolve`: take the definitions and the tool choice for a request at the same
    /// time, so the choice never names a tool the provider was not given.
    pub fn resolve_bias(&self, provider: impl Into<Provider>) -> Option<ResolveBias> {
        if !self.store.has_pending() {
            return None;
        }
        Some(
            match provider.into().forced_tool_choice(RESOLVE_TOOL_NAME) {
                Some(choice) => ResolveBias::ToolChoice(choice),
                None => ResolveBias::Reminder(RESOLVE_REMINDER),
            },
        )
    }

    /// The tool definitions for `dialect` to send now: [`Registry::definitions`], with
    /// `resolve` added while anything is pending.
    pub fn definitions(&self, dialect: Dialect) -> Result<&[Value], DialectNotEnabled> {
        self.registry
            .definitions_listed(dialect, self.store.has_pending())
    }

    /// Calls a tool. Failures of every kind come back as error results the model can act
    /// on: unknown names (with the available ones), bad arguments (with the JSON path and
    /// the expected type), tool errors, and panics (the session keeps working).
    pub async fn call(&self, name: &str, args: Value) -> AgentToolResult {
        self.call_with(name, args, CallOptions::default()).await
    }

    /// [`call`](Self::call) with a call id, a cancellation token and a progress sink.
    pub async fn call_with(
        &self,
        name: &str,
        mut args: Value,
        options: CallOptions,
    ) -> AgentToolResult {
        if nests_deeper_than(&args, MAX_ARGUMENT_DEPTH) {
            // Dropping (or decoding) such a value recursively would overflow the stack and
            // abort the process: take it apart in a loop, and tell the model.
            dismantle(args);
            return ToolError::invalid_arguments(
                name,
                "",
                format!("arrays and objects are nested more than {MAX_ARGUMENT_DEPTH} levels deep"),
            )
            .into();
        }
        let Some(tool) = self.registry.get(name) else {
            let mut result = AgentToolResult::failure(
                ErrorKind::UnknownTool {
                    name: name.to_owned(),
                },
                self.unknown_tool_message(name),
            );
            shorten_error_texts(&mut result);
            return result;
        };
        if self.registry.strict_gate
            && name != RESOLVE_TOOL_NAME
            && let Some(top) = self.store.peek()
        {
            return AgentToolResult::failure(
                ErrorKind::Refused,
                format!(
                    "Call refused: {} pending action(s) await resolution, the most recent being `{}`. Call the `{RESOLVE_TOOL_NAME}` tool first to apply or discard it, then call `{name}` again.",
                    self.store.len(),
                    top.label
                ),
            );
        }

        if let Some(dialect) = options.dialect {
            restore_arguments(dialect, tool.parameters(), &mut args);
        }

        let call_id = match options.call_id {
            Some(id) => CallId::Given(Arc::from(id)),
            None => CallId::Numbered(NEXT_CALL.fetch_add(1, Ordering::Relaxed), OnceLock::new()),
        };
        let ctx = ToolContext {
            call_id,
            session_id: Arc::clone(&self.id),
            workspace_root: Arc::clone(&self.registry.workspace_root),
            // Without a caller's token, one is made only if the tool asks for it.
            cancellation: options
                .cancellation
                .clone()
                .map(OnceLock::from)
                .unwrap_or_default(),
            progress: options.progress,
            pending: Some(Arc::clone(&self.store)),
            reminders: Arc::clone(&self.reminders),
            extensions: Arc::clone(&self.registry.extensions),
            approval: match options.approver {
                Some(approver) => Some(Arc::new(ApprovalConfig {
                    policy: self.approval_policy(),
                    approver: Some(approver),
                })),
                None => self.approval.clone(),
            },
            handle: self.handle.clone(),
            resources: Some(Arc::clone(&self.resources)),
        };

        let span = tracing::debug_span!("tool_call", tool = name);
        let run = AssertUnwindSafe(tool.execute(&ctx, args))
            .catch_unwind()
            .instrument(span);
        let outcome = match &options.cancellation {
            Some(token) => tokio::select! {
                biased;
                () = token.cancelled() => Ok(Err(ToolError::cancelled())),
                outcome = run => outcome,
            },
            None => run.await,
        };
        let mut result = match outcome {
            Ok(Ok(result)) => result,
            Ok(Err(error)) => AgentToolResult::from(error),
            Err(payload) => {
                let message = panic_message(payload.as_ref());
                tracing::error!(tool = name, %message, "tool panicked");
                AgentToolResult::failure(
                    ErrorKind::Panicked,
                    format!(
                        "Tool `{name}` failed unexpectedly (panic: {message}). Nothing else was affected; you may retry with different arguments or use another tool."
                    ),
                )
            }
        };
        if result.is_error() {
            shorten_error_texts(&mut result);
        }
        result
    }

    fn unknown_tool_message(&self, name: &str) -> String {
        let names = self.tool_names();
        if names.is_empty() {
            return format!("Unknown tool `{name}`. No tools are registered.");
        }
        let hint = closest(name, names.iter().copied())
            .map(|c| format!(" Did you mean `{c}`?"))
            .unwrap_or_default();
        format!(
            "Unknown tool `{name}`.{hint} Available tools: {}.",
            names.join(", ")
        )
    }
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session")
            .field("id", &self.id)
            .field("tools", &self.tool_names())
            .field("pending", &self.store.len())
            .finish()
    }
}

impl Registry {
    /// A new session over these tools, with its own empty pending stack.
    pub fn session(self: &Arc<Self>) -> Session {
        Session::new(Arc::clone(self))
    }

    /// A session whose pending stack is kept in `state_dir` under `key` (see
    /// [`durable`](crate::durable)): the stack a previous process left there is restored
    /// first, in order; actions that could not be kept are reported to the model with the
    /// next result ("`<label>` was lost when the server restarted; preview again.").
    ///
    /// ```
    /// use xcsh_core::Session;
    ///
    /// let dir = tempfile::tempdir().unwrap();
    /// let registry = Session::builder().build_registry().unwrap();
    /// let session = registry.durable_session(dir.path(), "main").unwrap();
    /// assert!(session.pending().is_empty());
    /// // A corrupt file is refused, naming it.
    /// std::fs::write(dir.path().join("other.stack"), "garbage").unwrap();
    /// let err = registry.durable_session(dir.path(), "other").unwrap_err();
    /// assert!(err.to_string().contains("other.stack` cannot be used"), "{err}");
    /// ```
    pub fn durable_session(
        self: &Arc<Self>,
        state_dir: &Path,
        key: &str,
    ) -> Result<Session, crate::durable::StateError> {
        crate::durable::check_key(state_dir, key)?;
        std::fs::create_dir_all(state_dir).map_err(|source| crate::durable::StateError::Io {
            step: "create the state directory",
            path: state_dir.to_path_buf(),
            source,
        })?;
        let path = state_dir.join(format!("{key}.stack"));
        let file = crate::durable::StackFile::lock(path.clone())?;
        let kept = crate::durable::read(&path)?;
        let session = Session::new(Arc::clone(self));
        // Restored in memory first, then written once: a crash meanwhile leaves the old file.
        let (lost, unrestored) = crate::durable::restore(session.pending(), kept);
        // The lost stay in the file until their notices are taken (`take_reminders`): a
        // process that dies before telling anyone tells the next one.
        crate::durable::keep(session.pending(), file, unrestored)?;
        for lost in lost {
            session.reminders().push(lost);
        }
        Ok(session)
    }
}
