//! One turn per provider: a response with two calls of a screenshot tool (one succeeds with
//! text and an image, one fails), and the messages `Session::turn` answers it with, in each
//! provider's own request format.
//!
//! `cargo run --example provider_turns` prints one JSON line per provider:
//! `{"dialect": …, "messages": [...], "tool_choice": …}`. `tests/interop/test_provider_sdks.py`
//! validates those messages against each provider's own SDK types.

use xcsh::serde_json::{Value, json};
use xcsh::tool::{AgentToolResult, Content};
use xcsh::{Dialect, Session, ToolContext, ToolError, custom_tool};

/// A 1×1 PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

/// Takes a screenshot of a page of the app.
#[custom_tool(read_only)]
struct Screenshot {
    /// The page: `home` or `settings`.
    page: String,
}

impl Screenshot {
    async fn execute(self, _ctx: &ToolContext) -> Result<AgentToolResult, ToolError> {
        if !["home", "settings"].contains(&self.page.as_str()) {
            return Err(ToolError::new(format!(
                "page: there is no page `{}`; take `home` or `settings`",
                self.page
            )));
        }
        Ok(AgentToolResult::from(vec![
            Content::text(format!("The {} page:", self.page)),
            Content::image(PNG, "image/png"),
        ]))
    }
}

/// A response calling `screenshot` for `home` and for `missing`, as `dialect`'s API returns it.
fn response(dialect: Dialect) -> Value {
    let home = json!({"page": "home"});
    let missing = json!({"page": "missing"});
    match dialect {
        Dialect::Anthropic => json!({
            "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
            "content": [
                {"type": "text", "text": "Let me look at both pages."},
                {"type": "tool_use", "id": "toolu_01", "name": "screenshot", "input": home},
                {"type": "tool_use", "id": "toolu_02", "name": "screenshot", "input": missing}
            ],
            "stop_reason": "tool_use", "stop_sequence": null,
            "usage": {"input_tokens": 10, "output_tokens": 10}
        }),
        Dialect::OpenAiChat => json!({
            "id": "chatcmpl-01", "object": "chat.completion", "created": 1, "model": "gpt-5",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": null,
                "tool_calls": [
                    {"id": "call_01", "type": "function",
                     "function": {"name": "screenshot", "arguments": home.to_string()}},
                    {"id": "call_02", "type": "function",
                     "function": {"name": "screenshot", "arguments": missing.to_string()}}
                ]
            }}]
        }),
        Dialect::OpenAiResponses => json!({
            "id": "resp_01", "object": "response", "model": "gpt-5",
            "output": [
                {"type": "function_call", "id": "fc_01", "call_id": "call_01", "name": "screenshot",
                 "arguments": home.to_string(), "status": "completed"},
                {"type": "function_call", "id": "fc_02", "call_id": "call_02", "name": "screenshot",
                 "arguments": missing.to_string(), "status": "completed"}
            ]
        }),
        Dialect::Gemini => json!({
            "candidates": [{"index": 0, "finishReason": "STOP", "content": {"role": "model", "parts": [
                {"functionCall": {"name": "screenshot", "args": home}},
                {"functionCall": {"name": "screenshot", "args": missing}}
            ]}}]
        }),
        Dialect::Bedrock => json!({
            "output": {"message": {"role": "assistant", "content": [
                {"text": "Let me look at both pages."},
                {"toolUse": {"toolUseId": "tooluse_01", "name": "screenshot", "input": home}},
                {"toolUse": {"toolUseId": "tooluse_02", "name": "screenshot", "input": missing}}
            ]}},
            "stopReason": "tool_use"
        }),
        other => unreachable!("{other:?}: an MCP client owns its model"),
    }
}

#[tokio::main]
async fn main() {
    let session = Session::builder().custom::<Screenshot>().build().unwrap();
    for dialect in [
        Dialect::Anthropic,
        Dialect::OpenAiChat,
        Dialect::OpenAiResponses,
        Dialect::Gemini,
        Dialect::Bedrock,
    ] {
        let turn = session
            .turn(dialect, &response(dialect))
            .await
            .expect("a well-formed response");
        println!(
            "{}",
            json!({"dialect": dialect, "messages": turn.messages, "tool_choice": turn.tool_choice})
        );
    }
}
