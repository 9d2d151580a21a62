//! [`ToolContext`]: what a running tool can see and do besides its arguments.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use tokio_util::sync::CancellationToken;

use crate::error::{ErrorKind, ToolError};
use crate::pending::{PendingAction, PendingActionStore, PendingId};
use crate::resources::{Resource, Resources};
use crate::result::Content;

/// The exact error of [`ToolContext::push_pending_action`] when the runtime has no store.
pub const STORE_UNAVAILABLE: &str =
    "Pending action store unavailable for custom tools in this runtime.";

/// The reminder queued for the agent loop each time a preview pushes a pending action.
pub const RESOLVE_REMINDER: &str = "<system-reminder>\nThis is a preview. Call the `resolve` tool to apply or discard these changes.\n</system-reminder>";

/// A progress report from a long-running tool.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// Work done so far, in the tool's own unit (files scanned, say).
    pub progress: f64,
    /// Total work, when known.
    pub total: Option<f64>,
    /// A short human-readable note.
    pub message: Option<String>,
}

/// Receives progress reports (an MCP server turns them into notifications).
pub type ProgressSink = Arc<dyn Fn(Progress) + Send + Sync>;

/// Messages queued for the agent loop to deliver to the model with the next turn.
///
/// ```
/// let reminders = xcsh_core::Reminders::default();
/// reminders.push("check the diff");
/// assert_eq!(reminders.drain(), vec!["check the diff".to_string()]);
/// assert!(reminders.drain().is_empty());
/// ```
#[derive(Debug, Default)]
pub struct Reminders {
    queue: Mutex<Vec<String>>,
}

impl Reminders {
    /// Queues a reminder.
    pub fn push(&self, text: impl Into<String>) {
        self.queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(text.into());
    }

    /// Takes every queued reminder, oldest first.
    pub fn drain(&self) -> Vec<String> {
        std::mem::take(&mut *self.queue.lock().unwrap_or_else(PoisonError::into_inner))
    }

    /// How many reminders are queued.
    pub fn len(&self) -> usize {
        self.queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Typed values a session shares with every tool call (configuration, clients, caches).
///
/// ```
/// let mut extensions = xcsh_core::Extensions::default();
/// extensions.insert(42_u32);
/// assert_eq!(extensions.get::<u32>(), Some(&42));
/// assert_eq!(extensions.get::<u64>(), None);
/// ```
#[derive(Default)]
pub struct Extensions {
    values: HashMap<TypeId, Box<dyn Any + Send + Sync>>,
}

impl Extensions {
    /// Stores a value, replacing any earlier value of the same type.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        self.values.insert(TypeId::of::<T>(), Box::new(value));
    }

    /// The value of type `T`, if one was stored.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.values
            .get(&TypeId::of::<T>())
            .and_then(|value| value.downcast_ref())
    }
}

impl fmt::Debug for Extensions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Extensions")
            .field("len", &self.values.len())
            .finish()
    }
}

/// What a tool's `execute` receives besides its arguments: the call's identity, the
/// workspace root, cancellation, progress, shared extensions and the pending-action store.
///
/// A [`Session`](crate::Session) builds one per call. Build one yourself to test a tool in
/// isolation:
///
/// ```
/// use std::sync::Arc;
/// use xcsh_core::{PendingActionStore, ToolContext, STORE_UNAVAILABLE};
///
/// struct Noop;
/// impl xcsh_core::PendingAction for Noop {
///     fn label(&self) -> String { "Noop: nothing".into() }
///     async fn apply(&mut self, _reason: &str) -> Result<xcsh_core::AgentToolResult, xcsh_core::ToolError> {
///         Ok(().into())
///     }
/// }
///
/// let detached = ToolContext::new();
/// assert_eq!(detached.push_pending_action(Noop).unwrap_err().to_string(), STORE_UNAVAILABLE);
///
/// let store = Arc::new(PendingActionStore::new());
/// let ctx = ToolContext::new().with_pending_store(store.clone());
/// ctx.push_pending_action(Noop).unwrap();
/// assert_eq!(store.len(), 1);
/// assert_eq!(ctx.reminders().drain().len(), 1);
/// ```
pub struct ToolContext {
    // Crate-visible so a session builds one per call from shared parts, with no allocation.
    pub(crate) call_id: CallId,
    pub(crate) session_id: Arc<str>,
    pub(crate) workspace_root: Arc<Path>,
    /// The caller's token, or one made when the tool first asks: most calls come without a
    /// token and never ask, and making (or sharing) one costs a lock per call.
    pub(crate) cancellation: OnceLock<CancellationToken>,
    pub(crate) progress: Option<ProgressSink>,
    pub(crate) pending: Option<Arc<PendingActionStore>>,
    pub(crate) reminders: Arc<Reminders>,
    pub(crate) extensions: Arc<Extensions>,
    /// The session's approval policy, for `resolve` (none: the model decides).
    pub(crate) approval: Option<Arc<crate::approval::ApprovalConfig>>,
    /// The session's handle, when it has one ([`Session::with_handle`](crate::Session::with_handle)).
    pub(crate) handle: Option<Arc<str>>,
    /// Where [`publish_resource`](Self::publish_resource) publishes.
    pub(crate) resources: Option<Arc<Resources>>,
}

/// A call's id: the one the client gave, or a number spelt `call-N` only if someone asks.
#[derive(Clone, Debug)]
pub(crate) enum CallId {
    Given(Arc<str>),
    Numbered(u64, OnceLock<Arc<str>>),
}

impl CallId {
    fn as_str(&self) -> &str {
        match self {
            CallId::Given(id) => id,
            CallId::Numbered(n, text) => text.get_or_init(|| Arc::from(format!("call-{n}"))),
        }
    }
}

impl Default for ToolContext {
    fn default() -> Self {
        Self::new()
    }
}

impl ToolContext {
    /// A context with no pending store, rooted at the current directory.
    pub fn new() -> Self {
        ToolContext {
            call_id: CallId::Given(Arc::from("")),
            session_id: Arc::from(""),
            workspace_root: Arc::from(
                std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
            ),
            cancellation: OnceLock::new(),
            progress: None,
            pending: None,
            reminders: Arc::default(),
            extensions: Arc::default(),
            approval: None,
            handle: None,
            resources: None,
        }
    }

    /// Sets the call id.
    #[must_use]
    pub fn with_call_id(mut self, call_id: impl Into<Arc<str>>) -> Self {
        self.call_id = CallId::Given(call_id.into());
        self
    }

    /// Sets the session id.
    #[must_use]
    pub fn with_session_id(mut self, session_id: impl Into<Arc<str>>) -> Self {
        self.session_id = session_id.into();
        self
    }

    /// Sets the workspace root.
    #[must_use]
    pub fn with_workspace_root(mut self, root: impl Into<PathBuf>) -> Self {
        self.workspace_root = Arc::from(root.into());
        self
    }

    /// Sets the cancellation token.
    #[must_use]
    pub fn with_cancellation(mut self, token: CancellationToken) -> Self {
        self.cancellation = OnceLock::from(token);
        self
    }

    /// Sets where progress reports go.
    #[must_use]
    pub fn with_progress(mut self, sink: ProgressSink) -> Self {
        self.progress = Some(sink);
        self
    }

    /// Connects a pending-action store.
    #[must_use]
    pub fn with_pending_store(mut self, store: Arc<PendingActionStore>) -> Self {
        self.pending = Some(store);
        self
    }

    /// Sets the reminder queue.
    #[must_use]
    pub fn with_reminders(mut self, reminders: Arc<Reminders>) -> Self {
        self.reminders = reminders;
        self
    }

    /// Sets the shared extensions.
    #[must_use]
    pub fn with_extensions(mut self, extensions: Arc<Extensions>) -> Self {
        self.extensions = extensions;
        self
    }

    /// The id of this tool call (as the model or client gave it).
    pub fn call_id(&self) -> &str {
        self.call_id.as_str()
    }

    /// The id of the session the call belongs to.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// The workspace root: tools that touch files stay inside it.
    pub fn workspace_root(&self) -> &Path {
        &self.workspace_root
    }

    /// The call's cancellation token. Long-running tools should check it (or select on
    /// [`CancellationToken::cancelled`]) and stop promptly. When the caller gave none, it is
    /// made on first use, and the context's clones share it.
    pub fn cancellation(&self) -> &CancellationToken {
        self.cancellation.get_or_init(CancellationToken::new)
    }

    /// Whether the call has been cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.cancellation
            .get()
            .is_some_and(CancellationToken::is_cancelled)
    }

    /// Reports progress, if anyone listens.
    pub fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<String>) {
        if let Some(sink) = &self.progress {
            sink(Progress {
                progress,
                total,
                message,
            });
        }
    }

    /// Whether anyone listens to progress reports (skip computing them otherwise).
    pub fn wants_progress(&self) -> bool {
        self.progress.is_some()
    }

    /// A shared value of type `T` registered on the session.
    pub fn extension<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.extensions.get::<T>()
    }

    /// The session's pending-action store, if this runtime has one.
    pub fn pending_store(&self) -> Option<&Arc<PendingActionStore>> {
        self.pending.as_ref()
    }

    /// The reminder queue this context writes to.
    pub fn reminders(&self) -> &Arc<Reminders> {
        &self.reminders
    }

    /// The handle naming the session's pending stack, when the transport keeps no session
    /// and the stack is named by one (MCP protocol 2026-07-28 over HTTP; see
    /// [`Session::with_handle`](crate::Session::with_handle)).
    pub fn stack_handle(&self) -> Option<&str> {
        self.handle.as_deref()
    }

    /// Publishes `resource` on the session (see [`Resource`]) and returns the link to put in
    /// the result: an MCP client reads it with `resources/read`, a host with
    /// [`Session::read_resource`](crate::Session::read_resource). Fails when the runtime
    /// serves no resources (a context made by hand).
    pub fn publish_resource(&self, resource: Resource) -> Result<Content, ToolError> {
        let (Some(resources), Some(store)) = (&self.resources, &self.pending) else {
            return Err(ToolError::new(format!(
                "resource `{}` cannot be published: this runtime serves no resources (call the tool through a Session)",
                resource.name()
            )));
        };
        Ok(resources.publish(resource, store))
    }

    /// Defers a destructive change: pushes `action` on the session's pending stack, where
    /// the `resolve` tool will apply or discard it, and queues [`RESOLVE_REMINDER`].
    ///
    /// Fails with exactly [`STORE_UNAVAILABLE`] ([`ErrorKind::StoreUnavailable`]) when the
    /// runtime has no store. In a [`Session`](crate::Session) the push always succeeds and
    /// `resolve` is reachable while the action waits, even from a tool that did not declare
    /// it may push (declare it, so `resolve` is listed from the start).
    pub fn push_pending_action(&self, action: impl PendingAction) -> Result<PendingId, ToolError> {
        let store = self
            .pending
            .as_ref()
            .ok_or_else(|| ToolError::with_kind(ErrorKind::StoreUnavailable, STORE_UNAVAILABLE))?;
        let id = store.try_push(action).map_err(|e| {
            ToolError::new(format!(
                "the preview could not be kept as a pending action: {e}; nothing is pending, and nothing was written"
            ))
        })?;
        self.reminders.push(RESOLVE_REMINDER);
        Ok(id)
    }
}

impl Clone for ToolContext {
    /// A clone shares the call's cancellation token: cancelling either cancels both.
    fn clone(&self) -> Self {
        ToolContext {
            call_id: self.call_id.clone(),
            session_id: Arc::clone(&self.session_id),
            workspace_root: Arc::clone(&self.workspace_root),
            cancellation: OnceLock::from(self.cancellation().clone()),
            progress: self.progress.clone(),
            pending: self.pending.clone(),
            reminders: Arc::clone(&self.reminders),
            extensions: Arc::clone(&self.extensions),
            approval: self.approval.clone(),
            handle: self.handle.clone(),
            resources: self.resources.clone(),
        }
    }
}

impl fmt::Debug for ToolContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolContext")
            .field("call_id", &self.call_id.as_str())
            .field("session_id", &self.session_id)
            .field("workspace_root", &self.workspace_root)
            .field("cancelled", &self.is_cancelled())
            .field("has_pending_store", &self.pending.is_some())
            .finish_non_exhaustive()
    }
}
