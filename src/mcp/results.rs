//! `tools/call` answers: an [`AgentToolResult`] as an MCP `CallToolResult`.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::{Value, json};
use xcsh_core::{AgentToolResult, Content};

/// Content blocks one for one, `isError` as is, and `details` as `structuredContent`.
pub(crate) fn call_tool_result(result: AgentToolResult) -> CallToolResult {
    let content = result
        .content
        .into_iter()
        .map(|block| match block {
            Content::Text { text } => ContentBlock::text(text),
            Content::Image { data, mime_type } => ContentBlock::image(data, mime_type),
        })
        .collect();
    let mut out = if result.is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    out.structured_content = result.details.map(structured);
    out
}

/// MCP requires `structuredContent` to be an object: other details are wrapped.
fn structured(details: Value) -> Value {
    match details {
        Value::Object(_) => details,
        other => json!({ "details": other }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn details_become_structured_content_and_errors_stay_errors() {
        let ok = call_tool_result(AgentToolResult::text("done").with_details(json!({"n": 1})));
        assert_eq!(ok.is_error, Some(false));
        assert_eq!(ok.structured_content, Some(json!({"n": 1})));
        assert_eq!(
            ok.content[0].as_text().map(|t| t.text.as_str()),
            Some("done")
        );

        let failed = call_tool_result(AgentToolResult::error("bad").with_details(json!([1, 2])));
        assert_eq!(failed.is_error, Some(true));
        assert_eq!(failed.structured_content, Some(json!({"details": [1, 2]})));

        let plain = call_tool_result(AgentToolResult::text("no details"));
        assert_eq!(plain.structured_content, None);
    }
}
