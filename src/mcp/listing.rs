//! `tools/list`: the registry's tools as MCP tool definitions.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::{Tool as McpTool, ToolAnnotations as McpAnnotations};
use serde_json::{Value, json};
use xcsh_core::{
    Dialect, JsonObject, RESOLVE_TOOL_NAME, Session, Tool, ToolAnnotations, describe_with_stack,
};

/// What the `handle` property says, in the input schema of a tool that pushes.
const HANDLE_INPUT: &str = "The pending-action handle an earlier preview's result gave in this conversation: pass it so this change joins the same pending stack. Omit it in a new conversation (the result then gives a new one).";

/// What `structuredContent.handle` is.
const HANDLE_OUTPUT: &str = "The pending-action handle naming this conversation's stack: pass it as `handle` to `resolve` (and to later edits).";

/// What `resolve`'s description says where stacks are named by handles.
const RESOLVE_BY_HANDLE: &str = "On this connection pending stacks are named by handles: pass the `handle` the preview's result gave (its text and `structuredContent.handle`).";

/// Every tool to offer now, `resolve` last with the pending stack in its description (listed
/// whenever a tool declares it may push or anything is pending; a push sends list_changed).
///
/// `by_handle`: the client speaks without a session (protocol 2026-07-28 over HTTP), so
/// stacks are named by handles: the tools that push take an optional `handle` and give one
/// back in their structured output, and `resolve`'s description says to pass it (the stack it
/// would list is not this request's to show).
///
/// `outputs`: each tool's output schema, lowered for MCP.
pub(crate) fn tools(
    session: &Session,
    by_handle: bool,
    outputs: &HashMap<String, Arc<JsonObject>>,
) -> Vec<McpTool> {
    let registry = session.registry();
    let listed = session.tools();
    // Without a session no request can see a stack, so `resolve` is always offered: a tool
    // that pushes without declaring it still leaves a preview that can be resolved.
    let resolve = registry
        .get(RESOLVE_TOOL_NAME)
        .filter(|_| by_handle && !listed.iter().any(|t| t.name() == RESOLVE_TOOL_NAME));
    listed
        .iter()
        .chain(resolve)
        .map(|tool| {
            let name = tool.name();
            let pushes = tool.pushes_pending_actions();
            // The lowered schema is shared (an `Arc`), not copied, on every listing.
            let mut schema = registry
                .lowered_parameters(name, Dialect::Mcp)
                .map(Arc::clone)
                .unwrap_or_else(|_| Arc::clone(tool.parameters()));
            if by_handle && pushes {
                schema = with_property(&schema, HANDLE_INPUT);
            }
            let description = match (name == RESOLVE_TOOL_NAME, by_handle) {
                (true, false) => describe_with_stack(&session.pending().snapshot()),
                (true, true) => format!("{}\n\n{RESOLVE_BY_HANDLE}", tool.description()),
                (false, _) => tool.description().to_owned(),
            };
            let mut listed = McpTool::new(name.to_owned(), description, schema)
                .with_title(tool.label())
                .with_annotations(annotations(tool.as_ref()));
            if let Some(output) = outputs.get(name) {
                let output = if by_handle && (pushes || name == RESOLVE_TOOL_NAME) {
                    with_property(output, HANDLE_OUTPUT)
                } else {
                    Arc::clone(output)
                };
                listed = listed.with_raw_output_schema(output);
            }
            listed
        })
        .collect()
}

/// `schema` with an optional string property `handle` described by `description`.
fn with_property(schema: &Arc<JsonObject>, description: &str) -> Arc<JsonObject> {
    let mut schema = JsonObject::clone(schema);
    let properties = schema
        .entry("properties")
        .or_insert_with(|| Value::Object(JsonObject::new()));
    if let Value::Object(properties) = properties {
        properties.insert(
            "handle".into(),
            json!({"type": "string", "description": description}),
        );
    }
    Arc::new(schema)
}

/// The tool's hints, with its label as the annotation title too (older clients read it there).
fn annotations(tool: &dyn Tool) -> McpAnnotations {
    let ToolAnnotations {
        read_only,
        destructive,
        idempotent,
        open_world,
    } = tool.annotations();
    McpAnnotations::from_raw(
        Some(tool.label().to_owned()),
        read_only,
        destructive,
        idempotent,
        open_world,
    )
}
