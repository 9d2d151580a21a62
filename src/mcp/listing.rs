//! `tools/list`: the registry's tools as MCP tool definitions.

use std::sync::Arc;

use rmcp::model::{Tool as McpTool, ToolAnnotations as McpAnnotations};
use xcsh_core::{Dialect, RESOLVE_TOOL_NAME, Session, Tool, ToolAnnotations, describe_with_stack};

/// Every tool to offer now, `resolve` last with the pending stack in its description (listed
/// whenever a tool declares it may push or anything is pending; a push sends list_changed).
pub(crate) fn tools(session: &Session) -> Vec<McpTool> {
    let registry = session.registry();
    session
        .tools()
        .iter()
        .map(|tool| {
            let name = tool.name();
            // The lowered schema is shared (an `Arc`), not copied, on every listing.
            let schema = registry
                .lowered_parameters(name, Dialect::Mcp)
                .map(Arc::clone)
                .unwrap_or_else(|_| Arc::clone(tool.parameters()));
            let description = if name == RESOLVE_TOOL_NAME {
                describe_with_stack(&session.pending().snapshot())
            } else {
                tool.description().to_owned()
            };
            McpTool::new(name.to_owned(), description, schema)
                .with_title(tool.label())
                .with_annotations(annotations(tool.as_ref()))
        })
        .collect()
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
