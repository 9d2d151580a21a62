//! `tools/call` answers: an [`AgentToolResult`] as an MCP `CallToolResult`, and resources as
//! `resources/read` contents.

use base64::Engine as _;
use rmcp::model::{CallToolResult, ContentBlock, Resource as McpResource, ResourceContents};
use serde_json::{Value, json};
use xcsh_core::{AgentToolResult, Content, ResourceBody};

/// The largest `details` sent in place of a declared output that is missing.
const MAX_FALLBACK_BYTES: usize = 64 * 1024;

/// Content blocks one for one, `isError` as is, and as `structuredContent` the tool's
/// declared output when it declares one (`declares_output`), its `details` otherwise. `handle`
/// (a stack named by handle, protocol 2026-07-28 over HTTP) goes in as `structuredContent.handle`.
pub(crate) fn call_tool_result(
    result: AgentToolResult,
    declares_output: bool,
    handle: Option<&str>,
) -> CallToolResult {
    let failed = result.is_error();
    let content = result.content.into_iter().map(block).collect();
    let mut out = if failed {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    let structured = match (declares_output, result.structured, result.details) {
        (true, Some(output), _) => Some(output),
        // A declared output missing (an error result, or a tool that forgot it): the details,
        // as for a tool without one, when they are small; nothing rather than megabytes.
        (true, None, details) => {
            if !failed {
                tracing::warn!(
                    "a tool that declares an output schema returned a result without its structured output; sending its details instead"
                );
            }
            details.filter(|d| {
                serde_json::to_vec(d).is_ok_and(|bytes| bytes.len() <= MAX_FALLBACK_BYTES)
            })
        }
        (false, _, details) => details,
    };
    out.structured_content = match (structured.map(object), handle) {
        (Some(mut object), Some(handle)) => {
            object.insert("handle".into(), json!(handle));
            Some(Value::Object(object))
        }
        (None, Some(handle)) => Some(json!({ "handle": handle })),
        (object, None) => object.map(Value::Object),
    };
    out
}

fn block(content: Content) -> ContentBlock {
    match content {
        Content::Text { text } => ContentBlock::text(text),
        Content::Image { data, mime_type } => ContentBlock::image(data, mime_type),
        Content::ResourceLink {
            uri,
            name,
            mime_type,
            description,
        } => {
            let mut resource = McpResource::new(uri, name);
            if let Some(mime) = mime_type {
                resource = resource.with_mime_type(mime);
            }
            if let Some(description) = description {
                resource = resource.with_description(description);
            }
            ContentBlock::resource_link(resource)
        }
        // A kind of block this server does not know yet: shown as what it serialises to.
        other => ContentBlock::text(serde_json::to_string(&other).unwrap_or_default()),
    }
}

/// MCP requires `structuredContent` to be an object: other values are wrapped.
fn object(value: Value) -> serde_json::Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => {
            let mut map = serde_json::Map::new();
            map.insert("details".into(), other);
            map
        }
    }
}

/// A resource's contents as `resources/read` returns them: text as is, bytes in base64.
pub(crate) fn resource_contents(
    uri: String,
    mime_type: Option<String>,
    body: ResourceBody,
) -> ResourceContents {
    let contents = match body {
        ResourceBody::Text(text) => ResourceContents::text(text, uri),
        ResourceBody::Blob(bytes) => {
            ResourceContents::blob(base64::engine::general_purpose::STANDARD.encode(bytes), uri)
        }
        other => ResourceContents::blob(
            base64::engine::general_purpose::STANDARD.encode(other.as_bytes()),
            uri,
        ),
    };
    match mime_type {
        Some(mime) => contents.with_mime_type(mime),
        None => contents,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn details_become_structured_content_and_errors_stay_errors() {
        let ok = call_tool_result(
            AgentToolResult::text("done").with_details(json!({"n": 1})),
            false,
            None,
        );
        assert_eq!(ok.is_error, Some(false));
        assert_eq!(ok.structured_content, Some(json!({"n": 1})));
        assert_eq!(
            ok.content[0].as_text().map(|t| t.text.as_str()),
            Some("done")
        );

        let failed = call_tool_result(
            AgentToolResult::error("bad").with_details(json!([1, 2])),
            false,
            None,
        );
        assert_eq!(failed.is_error, Some(true));
        assert_eq!(failed.structured_content, Some(json!({"details": [1, 2]})));

        let plain = call_tool_result(AgentToolResult::text("no details"), false, None);
        assert_eq!(plain.structured_content, None);
    }

    #[test]
    fn a_declared_output_wins_over_details_and_the_handle_joins_it() {
        let result = AgentToolResult::text("x")
            .with_details(json!({"big": "…"}))
            .with_structured(json!({"files": 1}));
        let out = call_tool_result(result, true, Some("ph-1"));
        assert_eq!(
            out.structured_content,
            Some(json!({"files": 1, "handle": "ph-1"}))
        );
        let link = call_tool_result(
            AgentToolResult::from(Content::ResourceLink {
                uri: "xcsh://s/1".into(),
                name: "preview".into(),
                mime_type: Some("text/x-diff".into()),
                description: None,
            }),
            false,
            None,
        );
        let block = serde_json::to_value(&link.content[0]).unwrap();
        assert_eq!(block["type"], "resource_link");
        assert_eq!(block["uri"], "xcsh://s/1");
        assert_eq!(block["mimeType"], "text/x-diff");
    }
}
