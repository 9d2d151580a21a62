//! The hidden `resolve` tool: applies or discards the top pending action.

//!
//! `mod.rs` holds the names and the public entry points; a resolve runs in `stages` (take,
//! gate, run, record: `record` writes its audit line); the tool the model calls is `tool`.

mod record;
mod stages;
mod tool;

use serde::Deserialize;
use serde_json::json;

use crate::action::PendingSummary;
pub use crate::action::ResolveAction;
pub use crate::error::{APPLY_FAILED_PREFIX, NOTHING_PENDING, ResolveError};
use crate::error::{ErrorKind, ToolError};
use crate::pending::PendingActionStore;
use crate::result::AgentToolResult;
use crate::schema::JsonObject;
use stages::{Caller, resolve_as};
pub use tool::ResolveTool;

/// The name of the resolve tool.
pub const RESOLVE_TOOL_NAME: &str = "resolve";
/// Its label.
pub const RESOLVE_TOOL_LABEL: &str = "Resolve";

const DESCRIPTION: &str = "Resolve the most recent pending preview: `apply` performs the \
previewed change, `discard` drops it. Pending previews are resolved last-in, first-out. \
Call this after a tool reports a preview, before doing anything else.";

/// The arguments of `resolve`.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ResolveArgs {
    /// Apply or discard.
    pub action: ResolveAction,
    /// Why; passed to the action verbatim and never changes what it does.
    pub reason: String,
    /// The stack to resolve, where stacks are named by handle (MCP protocol 2026-07-28 over
    /// HTTP, where a preview's result gives it); must be the session's own
    /// ([`Session::with_handle`](crate::Session::with_handle)). Absent: the session's stack.
    #[serde(default)]
    pub handle: Option<String>,
}

/// The error when `resolve`'s `handle` is not the session's.
pub(crate) fn unknown_handle(given: &str, own: Option<&str>) -> ToolError {
    let shown: String = given.chars().take(80).collect();
    let message = match own {
        Some(_) => format!(
            "Unknown handle `{shown}`: it names no pending stack of this server (mistyped, expired, or from another server). Nothing was applied or discarded. Pass the `handle` exactly as the preview's result gave it, or preview again to get a new one."
        ),
        None => format!(
            "Unknown handle `{shown}`: this conversation keeps its pending stack without a handle, so none is needed. Nothing was applied or discarded; call `resolve` again without `handle`."
        ),
    };
    ToolError::with_kind(ErrorKind::UnknownHandle, message)
}

/// How a resolve went: what was resolved and the result the model sees.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolution {
    /// Apply or discard.
    pub action: ResolveAction,
    /// The reason given.
    pub reason: String,
    /// The action that was resolved.
    pub summary: PendingSummary,
    /// What the model sees.
    pub result: AgentToolResult,
}

fn resolve_details(action: ResolveAction, reason: &str, summary: &PendingSummary) -> JsonObject {
    let mut details = JsonObject::new();
    details.insert("action".into(), json!(action.as_str()));
    details.insert("reason".into(), json!(reason));
    details.insert("sourceToolName".into(), json!(summary.source_tool_name));
    details.insert("label".into(), json!(summary.label));
    details.insert("pendingId".into(), json!(summary.id));
    if let Some(own) = &summary.details {
        details.insert("details".into(), own.clone());
    }
    details
}

/// Applies or discards the top pending action of `store`.
///
/// This is the engine of the `resolve` tool, usable directly by agent loops and UIs.
/// On apply, the result is apply's content, or `Applied: <label>.` when apply returned no
/// text. On discard, `reject` runs if the action has one, and a returned result replaces
/// `Discarded: <label>. Reason: <reason>`; a `reject` that fails or panics still discards
/// (the person asked to drop it), and the result, marked [`ErrorKind::RejectFailed`], says
/// the hook failed. An apply that fails, panics or returns an error result puts the action
/// back where it was, unchanged (on top, or under actions pushed while it ran), and returns
/// [`ResolveError::ApplyFailed`].
///
/// This is the only way to take an action off a store: agent loops, UIs and hosts resolve
/// through it (or through the `resolve` tool, which calls it).
///
/// ```
/// use xcsh_core::{resolve, AgentToolResult, PendingAction, PendingActionStore, ResolveAction, ToolError};
///
/// struct Write;
/// impl PendingAction for Write {
///     fn label(&self) -> String { "Write: 1 file".into() }
///     async fn apply(&mut self, _reason: &str) -> Result<AgentToolResult, ToolError> { Ok(().into()) }
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let store = PendingActionStore::new();
/// store.push(Write);
/// let done = resolve(&store, ResolveAction::Apply, "looks right").await.unwrap();
/// assert_eq!(done.result.text_content(), "Applied: Write: 1 file.");
/// let err = resolve(&store, ResolveAction::Apply, "again").await.unwrap_err();
/// assert_eq!(err.to_string(), "No pending action to resolve. Nothing to apply or discard.");
/// # });
/// ```
pub async fn resolve(
    store: &PendingActionStore,
    action: ResolveAction,
    reason: &str,
) -> Result<Resolution, ResolveError> {
    resolve_as(store, action, reason, Caller::Host, None).await
}

/// Applies only the part of the top action that touches `files` (root-relative paths, as
/// its details name them), and drops the rest: a person's partial approval, given by the host
/// (no approval policy applies). The action narrows itself
/// ([`PendingAction::select_files`](crate::PendingAction::select_files)); one that cannot, or a selection naming files it does
/// not touch, is refused with [`ResolveError::ApplyFailed`] (kind `Refused`) and stays
/// pending, whole. If the narrowed apply fails, the narrowed action stays pending.
///
/// ```
/// use xcsh_core::{resolve_files, AgentToolResult, ErrorKind, PendingAction, PendingActionStore, ResolveError, ToolError};
///
/// struct Whole;
/// impl PendingAction for Whole {
///     fn label(&self) -> String { "Whole".into() }
///     async fn apply(&mut self, _: &str) -> Result<AgentToolResult, ToolError> { Ok(().into()) }
/// }
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let store = PendingActionStore::new();
/// store.push(Whole);
/// let err = resolve_files(&store, &["a.rs".into()], "only a").await.unwrap_err();
/// assert!(matches!(&err, ResolveError::ApplyFailed { cause, .. } if cause.kind() == &ErrorKind::Refused));
/// assert!(err.to_string().contains("cannot be applied in part"), "{err}");
/// assert_eq!(store.len(), 1); // still pending, whole
/// # });
/// ```
pub async fn resolve_files(
    store: &PendingActionStore,
    files: &[String],
    reason: &str,
) -> Result<Resolution, ResolveError> {
    resolve_as(
        store,
        ResolveAction::Apply,
        reason,
        Caller::Host,
        Some(files),
    )
    .await
}

/// The description of `resolve` with the pending stack listed, top first — what an MCP
/// server shows so a client can see what is waiting.
pub fn describe_with_stack(stack: &[PendingSummary]) -> String {
    if stack.is_empty() {
        return format!("{DESCRIPTION}\n\nNothing is pending.");
    }
    let mut text = format!("{DESCRIPTION}\n\nPending, top first (resolved first):");
    for summary in stack {
        text.push_str(&format!(
            "\n- {} {} (from {})",
            summary.id, summary.label, summary.source_tool_name
        ));
    }
    text
}
