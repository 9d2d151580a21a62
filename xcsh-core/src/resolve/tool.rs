//! The hidden `resolve` tool: its schema, its structured output, and the call that runs a
//! resolve on its own task.

use std::sync::{Arc, LazyLock};

use serde_json::{Value, json};

use super::stages::{Caller, resolve_as};
use super::{
    DESCRIPTION, RESOLVE_TOOL_LABEL, RESOLVE_TOOL_NAME, Resolution, ResolveArgs, resolve_details,
    unknown_handle,
};
use crate::action::{PendingSummary, ResolveAction};
use crate::approval::EffectFacts;
use crate::context::{STORE_UNAVAILABLE, ToolContext};
use crate::error::{ErrorKind, ResolveError, ToolError};
use crate::future::BoxFuture;
use crate::result::AgentToolResult;
use crate::schema::JsonObject;
use crate::tool::{Tool, ToolAnnotations, decode_arguments};

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
                            details.insert("approval".into(), (**approval).clone());
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
