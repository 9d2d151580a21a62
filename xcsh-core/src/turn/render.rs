//! Tool results in each provider's request format, reminders where each one reads them.

use std::borrow::Cow;

use serde_json::{Map, Value, json};

use super::AnsweredCall;
use crate::dialect::Dialect;
use crate::result::{AgentToolResult, Content};

/// What stands for a result with no content: every provider refuses an empty result block.
const NO_OUTPUT: &str = "(no output)";

/// The messages answering `answered` in `dialect`'s request format, followed by `reminders`
/// where that provider reads them (see the [module](crate::turn) for each shape; MCP has
/// none: each result is its request's response). What
/// [`Session::turn`](crate::Session::turn) returns as [`Turn::messages`](super::Turn::messages),
/// for a host that runs the calls itself. Empty when there is nothing to answer.
///
/// Text and images take the provider's own shapes; an image in a format the provider does
/// not take, and any other kind of block (a resource link: its name and URI), become a text
/// block saying what it was.
///
/// ```
/// use serde_json::json;
/// use xcsh_core::{AgentToolResult, Content, Dialect};
/// use xcsh_core::turn::{AnsweredCall, ToolCall, render_results};
///
/// let answered = [AnsweredCall {
///     call: ToolCall::new(Some("tooluse_1".into()), "shot", json!({})),
///     result: AgentToolResult::from(vec![
///         Content::text("The page:"),
///         Content::image("iVBORw0KGgo=", "image/png"),
///     ]),
/// }];
/// assert_eq!(
///     render_results(Dialect::Bedrock, &answered, &[]),
///     [json!({"role": "user", "content": [{"toolResult": {
///         "toolUseId": "tooluse_1",
///         "content": [
///             {"text": "The page:"},
///             {"image": {"format": "png", "source": {"bytes": "iVBORw0KGgo="}}}
///         ]
///     }}]})]
/// );
/// ```
pub fn render_results(
    dialect: Dialect,
    answered: &[AnsweredCall],
    reminders: &[String],
) -> Vec<Value> {
    if answered.is_empty() && reminders.is_empty() {
        return Vec::new();
    }
    match dialect {
        Dialect::Anthropic => anthropic(answered, reminders),
        Dialect::OpenAiChat => openai_chat(answered, reminders),
        Dialect::OpenAiResponses => openai_responses(answered, reminders),
        Dialect::Gemini => gemini(answered, reminders),
        Dialect::Bedrock => bedrock(answered, reminders),
        // MCP has no conversation to append to: each result is its request's response.
        Dialect::Mcp => Vec::new(),
    }
}

/// One block of a result, as a provider can show it.
enum Block<'a> {
    Text(Cow<'a, str>),
    Image { data: &'a str, mime_type: &'a str },
}

/// The image formats each provider takes in a tool result.
fn takes_image(dialect: Dialect, mime_type: &str) -> bool {
    let common = ["image/png", "image/jpeg", "image/webp"];
    match dialect {
        Dialect::Anthropic | Dialect::OpenAiChat | Dialect::OpenAiResponses | Dialect::Bedrock => {
            common.contains(&mime_type) || mime_type == "image/gif"
        }
        Dialect::Gemini => {
            common.contains(&mime_type) || mime_type == "image/heic" || mime_type == "image/heif"
        }
        Dialect::Mcp => true,
    }
}

/// The result's blocks for `dialect`: empty texts dropped (Anthropic and Bedrock refuse
/// them), images the provider does not take and blocks it has no shape for as text, and a
/// placeholder for a result left with nothing.
fn blocks(dialect: Dialect, result: &AgentToolResult) -> Vec<Block<'_>> {
    let mut out = Vec::with_capacity(result.content.len());
    for content in &result.content {
        match content {
            Content::Text { text } if text.is_empty() => {}
            Content::Text { text } => out.push(Block::Text(Cow::Borrowed(text))),
            Content::Image { data, mime_type } => {
                // `image/jpg` is common and means JPEG.
                let mime_type = if mime_type == "image/jpg" {
                    "image/jpeg"
                } else {
                    mime_type.as_str()
                };
                if takes_image(dialect, mime_type) {
                    out.push(Block::Image { data, mime_type });
                } else {
                    out.push(Block::Text(Cow::Owned(format!(
                        "[An image ({mime_type}) the tool returned is not shown: this provider does not take that format.]"
                    ))));
                }
            }
            // A resource link, and any kind `Content` gains: shown as text.
            other => out.push(Block::Text(Cow::Owned(described(other)))),
        }
    }
    if out.is_empty() {
        out.push(Block::Text(Cow::Borrowed(NO_OUTPUT)));
    }
    out
}

/// A block the providers have no shape for, as text: a resource link as its name, address
/// and description, any other kind as its JSON. Shared with the facade's rig adapter.
pub fn described(content: &Content) -> String {
    match content {
        Content::ResourceLink {
            uri,
            name,
            description,
            ..
        } => match description {
            Some(about) => format!("Resource `{name}` ({uri}): {about}"),
            None => format!("Resource `{name}` ({uri})"),
        },
        other => serde_json::to_string(other).unwrap_or_default(),
    }
}

/// The texts of `blocks` joined by newlines, `Error: ` first when `error` (a failure, for a
/// provider with no error flag).
fn joined_text(blocks: &[Block<'_>], error: bool) -> String {
    let mut text = String::new();
    if error {
        text.push_str("Error: ");
    }
    let mut first = true;
    for block in blocks {
        if let Block::Text(t) = block {
            if !first {
                text.push('\n');
            }
            text.push_str(t);
            first = false;
        }
    }
    text
}

fn has_image(blocks: &[Block<'_>]) -> bool {
    blocks.iter().any(|b| matches!(b, Block::Image { .. }))
}

fn data_url(mime_type: &str, data: &str) -> String {
    format!("data:{mime_type};base64,{data}")
}

fn id(answered: &AnsweredCall) -> &str {
    answered.call.id.as_deref().unwrap_or_default()
}

/// One user message: every `tool_result` first (Anthropic refuses text before them), then
/// the reminders as text blocks.
fn anthropic(answered: &[AnsweredCall], reminders: &[String]) -> Vec<Value> {
    let mut content = Vec::with_capacity(answered.len() + reminders.len());
    for a in answered {
        let blocks: Vec<Value> = blocks(Dialect::Anthropic, &a.result)
            .into_iter()
            .map(|block| match block {
                Block::Text(text) => json!({"type": "text", "text": text}),
                Block::Image { data, mime_type } => json!({
                    "type": "image",
                    "source": {"type": "base64", "media_type": mime_type, "data": data},
                }),
            })
            .collect();
        let mut result = Map::new();
        result.insert("type".into(), json!("tool_result"));
        result.insert("tool_use_id".into(), json!(id(a)));
        result.insert("content".into(), Value::Array(blocks));
        if a.result.is_error() {
            result.insert("is_error".into(), json!(true));
        }
        content.push(Value::Object(result));
    }
    content.extend(reminders.iter().map(|r| json!({"type": "text", "text": r})));
    vec![json!({"role": "user", "content": content})]
}

/// A `tool` message per call (text only: Chat Completions takes no images there), then one
/// `user` message with the images, each introduced by its call, and the reminders.
fn openai_chat(answered: &[AnsweredCall], reminders: &[String]) -> Vec<Value> {
    let mut messages = Vec::with_capacity(answered.len() + 1);
    let mut user_parts = Vec::new();
    for a in answered {
        let blocks = blocks(Dialect::OpenAiChat, &a.result);
        let mut text = joined_text(&blocks, a.result.is_error());
        if has_image(&blocks) {
            if !text.is_empty() {
                text.push('\n');
            }
            text.push_str("[The images this call returned follow in the next user message.]");
            user_parts.push(json!({
                "type": "text",
                "text": format!("Images returned by the `{}` call {}:", a.call.name, id(a)),
            }));
            for block in &blocks {
                if let Block::Image { data, mime_type } = block {
                    user_parts.push(json!({
                        "type": "image_url",
                        "image_url": {"url": data_url(mime_type, data)},
                    }));
                }
            }
        }
        messages.push(json!({"role": "tool", "tool_call_id": id(a), "content": text}));
    }
    user_parts.extend(reminders.iter().map(|r| json!({"type": "text", "text": r})));
    if !user_parts.is_empty() {
        messages.push(json!({"role": "user", "content": user_parts}));
    }
    messages
}

/// A `function_call_output` item per call (a string, or text and `input_image` parts), then
/// the reminders in one user message item.
fn openai_responses(answered: &[AnsweredCall], reminders: &[String]) -> Vec<Value> {
    let mut items = Vec::with_capacity(answered.len() + 1);
    for a in answered {
        let blocks = blocks(Dialect::OpenAiResponses, &a.result);
        let output = if has_image(&blocks) {
            let mut parts = Vec::with_capacity(blocks.len() + 1);
            if a.result.is_error() {
                parts.push(json!({"type": "input_text", "text": "Error:"}));
            }
            for block in blocks {
                parts.push(match block {
                    Block::Text(text) => json!({"type": "input_text", "text": text}),
                    Block::Image { data, mime_type } => json!({
                        "type": "input_image",
                        "image_url": data_url(mime_type, data),
                        "detail": "auto",
                    }),
                });
            }
            Value::Array(parts)
        } else {
            Value::String(joined_text(&blocks, a.result.is_error()))
        };
        items.push(json!({"type": "function_call_output", "call_id": id(a), "output": output}));
    }
    if !reminders.is_empty() {
        let content: Vec<Value> = reminders
            .iter()
            .map(|r| json!({"type": "input_text", "text": r}))
            .collect();
        items.push(json!({"type": "message", "role": "user", "content": content}));
    }
    items
}

/// One user content: a `functionResponse` part per call, by name and in order (with the id
/// when the call had one), then the reminders as text parts.
fn gemini(answered: &[AnsweredCall], reminders: &[String]) -> Vec<Value> {
    let mut parts = Vec::with_capacity(answered.len() + reminders.len());
    for a in answered {
        let blocks = blocks(Dialect::Gemini, &a.result);
        let text = joined_text(&blocks, false);
        let key = if a.result.is_error() {
            "error"
        } else {
            "output"
        };
        let mut response = Map::new();
        response.insert("name".into(), json!(a.call.name));
        if let Some(id) = &a.call.id {
            response.insert("id".into(), json!(id));
        }
        response.insert("response".into(), json!({ key: text }));
        let images: Vec<Value> = blocks
            .iter()
            .filter_map(|block| match block {
                Block::Image { data, mime_type } => {
                    Some(json!({"inlineData": {"mimeType": mime_type, "data": data}}))
                }
                Block::Text(_) => None,
            })
            .collect();
        if !images.is_empty() {
            response.insert("parts".into(), Value::Array(images));
        }
        parts.push(json!({ "functionResponse": response }));
    }
    parts.extend(reminders.iter().map(|r| json!({"text": r})));
    vec![json!({"role": "user", "parts": parts})]
}

/// One user message: a `toolResult` block per call (`status: "error"` on failures), then
/// the reminders as text blocks.
fn bedrock(answered: &[AnsweredCall], reminders: &[String]) -> Vec<Value> {
    let mut content = Vec::with_capacity(answered.len() + reminders.len());
    for a in answered {
        let blocks: Vec<Value> = blocks(Dialect::Bedrock, &a.result)
            .into_iter()
            .map(|block| match block {
                Block::Text(text) => json!({ "text": text }),
                Block::Image { data, mime_type } => json!({"image": {
                    "format": mime_type.trim_start_matches("image/"),
                    "source": {"bytes": data},
                }}),
            })
            .collect();
        let mut result = Map::new();
        result.insert("toolUseId".into(), json!(id(a)));
        result.insert("content".into(), Value::Array(blocks));
        if a.result.is_error() {
            result.insert("status".into(), json!("error"));
        }
        content.push(json!({ "toolResult": result }));
    }
    content.extend(reminders.iter().map(|r| json!({ "text": r })));
    vec![json!({"role": "user", "content": content})]
}
