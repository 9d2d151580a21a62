//! The hidden `resolve` tool: applies or discards the top pending action.

use std::fmt;
use std::sync::{Arc, LazyLock};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::approval::gate::{Gate, Note, ResolveAudit, approval_gate};
use crate::approval::{ApprovalConfig, ApprovalPolicy, EffectFacts};
use crate::context::{STORE_UNAVAILABLE, ToolContext};
use crate::error::{ErrorKind, ToolError};
use crate::pending::PendingEntry;
use crate::pending::{PendingActionStore, PendingSummary};
use crate::result::{AgentToolResult, Content};
use crate::schema::JsonObject;
use crate::tool::{BoxFuture, Tool, ToolAnnotations, decode_arguments};

/// The name of the resolve tool.
pub const RESOLVE_TOOL_NAME: &str = "resolve";
/// Its label.
pub const RESOLVE_TOOL_LABEL: &str = "Resolve";
/// The exact error when nothing is pending.
pub const NOTHING_PENDING: &str = "No pending action to resolve. Nothing to apply or discard.";
/// Every failed apply's message starts with this.
pub const APPLY_FAILED_PREFIX: &str = "Apply failed: ";

const DESCRIPTION: &str = "Resolve the most recent pending preview: `apply` performs the \
previewed change, `discard` drops it. Pending previews are resolved last-in, first-out. \
Call this after a tool reports a preview, before doing anything else.";

/// What to do with the top pending action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResolveAction {
    /// Perform the previewed change.
    Apply,
    /// Drop it.
    Discard,
}

impl ResolveAction {
    /// `"apply"` or `"discard"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ResolveAction::Apply => "apply",
            ResolveAction::Discard => "discard",
        }
    }
}

impl fmt::Display for ResolveAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

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

/// Why a resolve did not happen.
// A failed apply carries everything the caller needs to report it; resolves are rare enough
// that the size of the `Err` does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub enum ResolveError {
    /// The stack was empty.
    NothingPending,
    /// The approval policy did not let the apply happen yet (no answer, cancelled, nobody to
    /// ask, an approval of another effect); nothing was written and the action is back where
    /// it was.
    NotApproved {
        /// The action, still pending.
        summary: PendingSummary,
        /// The reason given.
        reason: String,
        /// Why, and how to proceed.
        message: String,
        /// The approval record (`details.approval` of the result).
        approval: Value,
    },
    /// `apply` failed or panicked; the action is back on top of the stack.
    ApplyFailed {
        /// The action, still pending.
        summary: PendingSummary,
        /// The reason given.
        reason: String,
        /// What went wrong.
        cause: ToolError,
    },
}

impl fmt::Display for ResolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResolveError::NothingPending => f.write_str(NOTHING_PENDING),
            ResolveError::NotApproved {
                summary, message, ..
            } => write!(
                f,
                "Not approved: {message}\nThe action `{}` is still pending.",
                summary.label
            ),
            ResolveError::ApplyFailed { summary, cause, .. } => write!(
                f,
                "{APPLY_FAILED_PREFIX}{cause}\nThe action `{}` is still pending: fix the cause and call `resolve` with action \"apply\" again, or \"discard\" it.",
                summary.label
            ),
        }
    }
}

impl ResolveError {
    /// [`ErrorKind::NothingPending`], or for a failed apply [`ErrorKind::Stale`] when the
    /// cause was stale files and [`ErrorKind::ApplyFailed`] otherwise.
    pub fn kind(&self) -> ErrorKind {
        match self {
            ResolveError::NothingPending => ErrorKind::NothingPending,
            ResolveError::NotApproved { .. } => ErrorKind::ApprovalPending,
            ResolveError::ApplyFailed { cause, .. } => match cause.kind() {
                stale @ ErrorKind::Stale { .. } => stale.clone(),
                _ => ErrorKind::ApplyFailed,
            },
        }
    }
}

impl std::error::Error for ResolveError {}

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

/// Who is resolving: the host (a person's decision already) or the model through the
/// `resolve` tool, under the session's approval policy.
#[derive(Clone, Copy)]
pub(crate) enum Caller<'a> {
    Host,
    Model(&'a ApprovalConfig),
}

pub(crate) async fn resolve_as(
    store: &PendingActionStore,
    action: ResolveAction,
    reason: &str,
    caller: Caller<'_>,
    only: Option<&[String]>,
) -> Result<Resolution, ResolveError> {
    let _serialised = store.resolving.lock().await;
    let (place, mut entry) = store.pop().ok_or(ResolveError::NothingPending)?;
    if let Some(files) = only
        && let Err(why) = entry.narrow(files)
    {
        let summary = entry.summary().clone();
        store.restore(place, entry);
        return Err(ResolveError::ApplyFailed {
            summary,
            reason: reason.to_owned(),
            cause: ToolError::with_kind(ErrorKind::Refused, why),
        });
    }
    if only.is_some() {
        store.narrowed(&entry);
    }
    let summary = entry.summary().clone();
    let effect_digest = entry.effect_digest().to_owned();
    // If this future is dropped mid-way (its caller was cancelled), the action goes back on
    // the stack instead of vanishing.
    let mut taken = PutBackOnDrop {
        store,
        place,
        entry: Some(entry),
    };
    let mut details = resolve_details(action, reason, &summary);
    let audit = ResolveAudit {
        store,
        summary: &summary,
        action,
        reason,
        effect_digest: &effect_digest,
    };
    let mut note = Note {
        policy: "model",
        decided_by: match caller {
            Caller::Host => "host".into(),
            Caller::Model(_) => "model".into(),
        },
        rule: None,
        decision: None,
        answer: None,
    };
    let mut approval_shown = false;
    if action == ResolveAction::Apply
        && let Caller::Model(config) = caller
        && !matches!(config.policy, ApprovalPolicy::Model)
    {
        note.policy = config.policy.name();
        approval_shown = true;
        let mut gate = approval_gate(config, &summary, reason, &effect_digest, &mut note).await;
        if let Gate::Accepted(approved) = &gate {
            // What is written must be what was approved: the digest the person saw, the one
            // taken at push time and the action's own now must all agree.
            gate = match taken.entry_mut().current_effect_digest() {
                Some(now) if &now == approved && now == effect_digest => Gate::Go,
                now => Gate::Hold(format!(
                    "the approval given was for another effect ({approved}) than the one pending ({}). Nothing was written. Call `resolve` with action \"apply\" to ask again, or \"discard\" it.",
                    now.as_deref().unwrap_or("unknown")
                )),
            };
        }
        details.insert("approval".into(), note.json(&effect_digest));
        match gate {
            Gate::Go | Gate::Accepted(_) => {}
            Gate::Drop(mut result, outcome) => {
                let hook = taken.entry_mut().reject(reason).await;
                taken.consume();
                if let Err(cause) = hook {
                    result
                        .content
                        .push(Content::text(format!("The discard hook failed: {cause}")));
                }
                result.details = Some(Value::Object(details));
                audit.record(&note, outcome, None);
                return Ok(Resolution {
                    action: ResolveAction::Discard,
                    reason: reason.to_owned(),
                    summary,
                    result,
                });
            }
            Gate::Hold(message) => {
                taken.put_back();
                audit.record(&note, "pending", None);
                return Err(ResolveError::NotApproved {
                    approval: note.json(&effect_digest),
                    summary,
                    reason: reason.to_owned(),
                    message,
                });
            }
        }
    }
    let files = match (action, store.audit()) {
        (ResolveAction::Apply, Some(audit)) => {
            let paths = EffectFacts::of(&summary).files;
            let before = audit.states(&paths);
            Some((paths, before))
        }
        _ => None,
    };
    let files_ref = files.as_ref().map(|(p, b)| (p.as_slice(), b.as_slice()));
    let result = match action {
        ResolveAction::Apply => match taken.entry_mut().apply(reason).await {
            Ok(mut result) => {
                taken.consume();
                if !result.has_text() {
                    result
                        .content
                        .push(Content::text(format!("Applied: {}.", summary.label)));
                }
                if approval_shown {
                    let by = match note.decided_by.as_str() {
                        "person" => "Approved by the person.".to_owned(),
                        _ => format!(
                            "Allowed by rule `{}` of the approval policy.",
                            note.rule.as_deref().unwrap_or("default")
                        ),
                    };
                    result.content.push(Content::text(by));
                }
                audit.record(&note, "applied", files_ref);
                result
            }
            Err(cause) => {
                taken.put_back();
                audit.record(&note, "failed", files_ref);
                return Err(ResolveError::ApplyFailed {
                    summary,
                    reason: reason.to_owned(),
                    cause,
                });
            }
        },
        ResolveAction::Discard => {
            let outcome = taken.entry_mut().reject(reason).await;
            taken.consume();
            audit.record(&note, "discarded", None);
            let default =
                || AgentToolResult::text(format!("Discarded: {}. Reason: {reason}", summary.label));
            match outcome {
                Ok(Some(result)) => result,
                Ok(None) => default(),
                // The person asked to drop it: it stays dropped, but the model hears that
                // the clean-up hook failed.
                Err(cause) => {
                    let mut result = default().with_error_kind(ErrorKind::RejectFailed);
                    result
                        .content
                        .push(Content::text(format!("The discard hook failed: {cause}")));
                    result
                }
            }
        }
    };
    let mut result = result;
    if let Some(own) = result.details.take() {
        details.insert("result".into(), own);
    }
    result.details = Some(Value::Object(details));
    Ok(Resolution {
        action,
        reason: reason.to_owned(),
        summary,
        result,
    })
}

/// Holds a popped entry; unless consumed, puts it back on the stack when dropped.
struct PutBackOnDrop<'a> {
    store: &'a PendingActionStore,
    /// Where the entry was, from the bottom: where it goes back.
    place: usize,
    entry: Option<PendingEntry>,
}

impl PutBackOnDrop<'_> {
    fn entry_mut(&mut self) -> &mut PendingEntry {
        self.entry
            .as_mut()
            .expect("the entry is only taken by consume/put_back, which end its use")
    }

    /// The action was resolved: drop it for good (and from the kept stack).
    fn consume(&mut self) {
        if let Some(entry) = self.entry.take() {
            self.store.resolved(entry.summary().id);
        }
    }

    /// The action stays pending: back where it was.
    fn put_back(&mut self) {
        if let Some(entry) = self.entry.take() {
            self.store.restore(self.place, entry);
        }
    }
}

impl Drop for PutBackOnDrop<'_> {
    fn drop(&mut self) {
        self.put_back();
    }
}

static RESOLVE_SCHEMA: LazyLock<Arc<JsonObject>> = LazyLock::new(|| {
    let schema = json!({
        "type": "object",
        "properties": {
            "action": {
                "type": "string",
                "enum": ["apply", "discard"],
                "description": "\"apply\" performs the previewed change; \"discard\" drops it"
            },
            "reason": {
                "type": "string",
                "description": "Why you're applying or discarding"
            },
            "handle": {
                "type": "string",
                "description": "The pending-action handle a preview's result gave, when it gave one; omit it otherwise"
            }
        },
        "required": ["action", "reason"],
        "additionalProperties": false
    });
    match schema {
        Value::Object(map) => Arc::new(map),
        _ => unreachable!("the literal above is an object"),
    }
});

static RESOLVE_OUTPUT: LazyLock<Arc<JsonObject>> = LazyLock::new(|| {
    let schema = json!({
        "type": "object",
        "description": "What `resolve` did.",
        "properties": {
            "action": {
                "type": "string",
                "enum": ["apply", "discard"],
                "description": "What was done: a declined or denied apply is a discard"
            },
            "outcome": {
                "type": "string",
                "enum": ["applied", "discarded", "declined", "denied", "pending", "failed"],
                "description": "applied; discarded (as asked); declined (by the person asked); denied (by a rule); pending (not approved yet: an error result); failed (the apply failed and the action is still pending: an error result)"
            },
            "reason": {"type": "string", "description": "The reason given (shortened)"},
            "label": {"type": "string", "description": "The resolved action's label"},
            "files": {
                "type": "array",
                "items": {"type": "string"},
                "description": "The first files the action touches, root-relative"
            },
            "filesOmitted": {"type": "integer", "description": "Files it touches not in `files`"},
            "approval": {"type": "object", "description": "Who let the apply through, or why not, under an approval policy"},
            "pendingId": {"type": "integer", "description": "The resolved action's id"},
            "sourceToolName": {"type": "string", "description": "The tool that previewed it"},
            "remaining": {"type": "integer", "description": "Actions still pending after this one"}
        },
        "required": ["action", "outcome", "label", "pendingId", "sourceToolName", "remaining"]
    });
    match schema {
        Value::Object(map) => Arc::new(map),
        _ => unreachable!("the literal above is an object"),
    }
});

/// Files `resolve`'s structured output names, at most.
const OUTPUT_FILES: usize = 200;

/// `resolve`'s structured output for a resolution.
fn resolve_output(resolution: &Resolution, remaining: usize) -> Value {
    let outcome = match (resolution.result.error_kind(), resolution.action) {
        (Some(ErrorKind::Declined), _) => "declined",
        (Some(ErrorKind::Denied), _) => "denied",
        (_, ResolveAction::Apply) => "applied",
        (_, ResolveAction::Discard) => "discarded",
    };
    let approval = resolution
        .result
        .details
        .as_ref()
        .and_then(|d| d.get("approval"));
    bounded_output(
        resolution.action,
        outcome,
        &resolution.reason,
        &resolution.summary,
        remaining,
        approval,
    )
}

/// `resolve`'s structured output: small whatever the action's details (which the result's
/// `details` carry whole, for hosts in process).
fn bounded_output(
    action: ResolveAction,
    outcome: &str,
    reason: &str,
    summary: &PendingSummary,
    remaining: usize,
    approval: Option<&Value>,
) -> Value {
    let files = EffectFacts::of(summary).files;
    let reason: String = reason.chars().take(1000).collect();
    let mut output = json!({
        "action": action.as_str(),
        "outcome": outcome,
        "reason": reason,
        "label": summary.label,
        "pendingId": summary.id,
        "sourceToolName": summary.source_tool_name,
        "remaining": remaining,
        "files": files.iter().take(OUTPUT_FILES).collect::<Vec<_>>(),
        "filesOmitted": files.len().saturating_sub(OUTPUT_FILES),
    });
    if let Some(approval) = approval {
        output["approval"] = approval.clone();
    }
    output
}

/// The hidden `resolve` tool. Every session routes it, and lists it whenever a registered
/// tool declares it may push pending actions or anything is pending; register it by hand
/// only in a custom runtime.
#[derive(Debug, Clone, Copy, Default)]
pub struct ResolveTool;

impl Tool for ResolveTool {
    fn name(&self) -> &str {
        RESOLVE_TOOL_NAME
    }
    fn label(&self) -> &str {
        RESOLVE_TOOL_LABEL
    }
    fn description(&self) -> &str {
        DESCRIPTION
    }
    fn parameters(&self) -> &Arc<JsonObject> {
        &RESOLVE_SCHEMA
    }
    fn output_schema(&self) -> Option<&Arc<JsonObject>> {
        Some(&RESOLVE_OUTPUT)
    }
    fn annotations(&self) -> ToolAnnotations {
        ToolAnnotations::new()
            .read_only(false)
            .destructive(true)
            .idempotent(false)
            .open_world(false)
    }
    fn hidden(&self) -> bool {
        true
    }
    fn execute<'a>(
        &'a self,
        ctx: &'a ToolContext,
        args: Value,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            let args: ResolveArgs = decode_arguments(RESOLVE_TOOL_NAME, args)?;
            if let Some(given) = &args.handle
                && ctx.stack_handle() != Some(given.as_str())
            {
                return Err(unknown_handle(given, ctx.stack_handle()));
            }
            let store = ctx.pending_store().ok_or_else(|| {
                ToolError::with_kind(ErrorKind::StoreUnavailable, STORE_UNAVAILABLE)
            })?;
            // Run to completion on its own task: cancelling the call stops the waiting, never
            // an apply half-way through.
            let store = Arc::clone(store);
            let reason = args.reason.clone();
            let action = args.action;
            let approval = ctx.approval.clone().unwrap_or_default();
            let outcome = tokio::spawn(async move {
                resolve_as(&store, action, &reason, Caller::Model(&approval), None)
                    .await
                    .map(|resolution| {
                        let output = resolve_output(&resolution, store.len());
                        Resolution {
                            result: resolution.result.with_structured(output),
                            ..resolution
                        }
                    })
            })
            .await
            .map_err(|join| {
                ToolError::with_kind(
                    ErrorKind::Panicked,
                    format!("resolve did not complete: {join}"),
                )
            })?;
            match outcome {
                Ok(resolution) => Ok(resolution.result),
                Err(error @ ResolveError::NothingPending) => Err(ToolError::from(error)),
                Err(error) => {
                    let remaining = ctx.pending_store().map_or(0, |store| store.len());
                    let (details, output) = match &error {
                        ResolveError::ApplyFailed {
                            summary, reason, ..
                        } => (
                            resolve_details(args.action, reason, summary),
                            bounded_output(args.action, "failed", reason, summary, remaining, None),
                        ),
                        ResolveError::NotApproved {
                            summary,
                            reason,
                            approval,
                            ..
                        } => {
                            let mut details = resolve_details(args.action, reason, summary);
                            details.insert("approval".into(), approval.clone());
                            let output = bounded_output(
                                args.action,
                                "pending",
                                reason,
                                summary,
                                remaining,
                                Some(approval),
                            );
                            (details, output)
                        }
                        ResolveError::NothingPending => (JsonObject::new(), Value::Null),
                    };
                    let result = AgentToolResult::from(ToolError::from(error))
                        .with_details(Value::Object(details));
                    Ok(match output {
                        Value::Null => result,
                        output => result.with_structured(output),
                    })
                }
            }
        })
    }
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
