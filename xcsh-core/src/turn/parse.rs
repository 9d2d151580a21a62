//! Reading the tool calls out of each provider's response, naming the part that is wrong.

use serde_json::{Map, Value};

use super::{ToolCall, TurnError};
use crate::dialect::Dialect;

/// The tool calls in a provider's response, in the model's order.
///
/// `response` is the response body as the API returns it (or its JSON from the provider's
/// SDK): Anthropic `{"content": [...]}`, OpenAI Chat `{"choices": [{"message": ...}]}` (the
/// first choice is read), OpenAI Responses `{"output": [...]}`, Gemini
/// `{"candidates": [{"content": {"parts": [...]}}]}` (the first candidate; `functionCall`
/// or `function_call`), Bedrock Converse `{"output": {"message": {"content": [...]}}}`.
/// Everything that is not a call of a function tool (text, reasoning, server-side tools) is
/// left for the host. A part that is not in the API's shape is an error naming it.
///
/// ```
/// use serde_json::json;
/// use xcsh_core::Dialect;
/// use xcsh_core::turn::parse_calls;
///
/// let response = json!({"output": [
///     {"type": "reasoning", "id": "rs_1", "summary": []},
///     {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "list",
///      "arguments": "{\"path\": \"src\"}", "status": "completed"}
/// ]});
/// let calls = parse_calls(Dialect::OpenAiResponses, &response)?;
/// assert_eq!(calls.len(), 1);
/// assert_eq!(calls[0].id.as_deref(), Some("call_1"));
/// assert_eq!(calls[0].arguments, Ok(json!({"path": "src"})));
///
/// let cut_off = json!({"output": [{"type": "function_call", "call_id": "call_2",
///                                   "name": "list", "arguments": "{\"path\": \"sr"}]});
/// let calls = parse_calls(Dialect::OpenAiResponses, &cut_off)?;
/// assert!(calls[0].arguments.as_ref().unwrap_err().starts_with("the arguments are not valid JSON"));
/// # Ok::<(), xcsh_core::turn::TurnError>(())
/// ```
pub fn parse_calls(dialect: Dialect, response: &Value) -> Result<Vec<ToolCall>, TurnError> {
    let Value::Object(response) = response else {
        return Err(malformed(
            "response",
            format!(
                "expected an object, found {} (pass the {} response as the API returns it)",
                kind(response),
                api_name(dialect)
            ),
        ));
    };
    match dialect {
        Dialect::Anthropic => anthropic(response),
        Dialect::OpenAiChat => openai_chat(response),
        Dialect::OpenAiResponses => openai_responses(response),
        Dialect::Gemini => gemini(response),
        Dialect::Bedrock => bedrock(response),
        Dialect::Mcp => Err(TurnError::NoResponses(dialect)),
    }
}

fn api_name(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Anthropic => "Anthropic Messages",
        Dialect::OpenAiChat => "OpenAI Chat Completions",
        Dialect::OpenAiResponses => "OpenAI Responses",
        Dialect::Gemini => "Gemini generateContent",
        Dialect::Bedrock => "Bedrock Converse",
        Dialect::Mcp => "MCP",
    }
}

/// `{"content": [{"type": "tool_use", "id", "name", "input": {…}}, …]}`
fn anthropic(response: &Map<String, Value>) -> Result<Vec<ToolCall>, TurnError> {
    let blocks = array(required(response, "content", "content")?, "content")?;
    let mut calls = Vec::new();
    for (i, block) in blocks.iter().enumerate() {
        let path = format!("content[{i}]");
        let block = object(block, &path)?;
        if string(required(block, "type", &path)?, &at(&path, "type"))? != "tool_use" {
            continue;
        }
        calls.push(ToolCall {
            id: Some(string(required(block, "id", &path)?, &at(&path, "id"))?.to_owned()),
            name: string(required(block, "name", &path)?, &at(&path, "name"))?.to_owned(),
            arguments: Ok(object_value(
                required(block, "input", &path)?,
                &at(&path, "input"),
            )?),
        });
    }
    Ok(calls)
}

/// `{"choices": [{"message": {"tool_calls": [{"id", "type": "function", "function": {"name",
/// "arguments": "<JSON>"}}]}}]}`
fn openai_chat(response: &Map<String, Value>) -> Result<Vec<ToolCall>, TurnError> {
    let choices = array(required(response, "choices", "choices")?, "choices")?;
    let Some(choice) = choices.first() else {
        return Err(malformed(
            "choices",
            "expected at least one choice, found none",
        ));
    };
    let choice = object(choice, "choices[0]")?;
    let message = object(
        required(choice, "message", "choices[0]")?,
        "choices[0].message",
    )?;
    let tool_calls = match message.get("tool_calls") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(value) => array(value, "choices[0].message.tool_calls")?,
    };
    let mut calls = Vec::with_capacity(tool_calls.len());
    for (i, call) in tool_calls.iter().enumerate() {
        let path = format!("choices[0].message.tool_calls[{i}]");
        let call = object(call, &path)?;
        let ty = string(required(call, "type", &path)?, &at(&path, "type"))?;
        if ty != "function" {
            return Err(malformed(
                &at(&path, "type"),
                format!(
                    "expected \"function\", found {ty:?}: xcsh defines function tools only, so it cannot answer this call"
                ),
            ));
        }
        let id = string(required(call, "id", &path)?, &at(&path, "id"))?.to_owned();
        let function_path = at(&path, "function");
        let function = object(required(call, "function", &path)?, &function_path)?;
        calls.push(ToolCall {
            id: Some(id),
            name: string(
                required(function, "name", &function_path)?,
                &at(&function_path, "name"),
            )?
            .to_owned(),
            arguments: json_arguments(
                required(function, "arguments", &function_path)?,
                &at(&function_path, "arguments"),
            )?,
        });
    }
    Ok(calls)
}

/// `{"output": [{"type": "function_call", "call_id", "name", "arguments": "<JSON>"}, …]}`
fn openai_responses(response: &Map<String, Value>) -> Result<Vec<ToolCall>, TurnError> {
    let items = array(required(response, "output", "output")?, "output")?;
    let mut calls = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let path = format!("output[{i}]");
        let item = object(item, &path)?;
        if string(required(item, "type", &path)?, &at(&path, "type"))? != "function_call" {
            continue;
        }
        calls.push(ToolCall {
            id: Some(string(required(item, "call_id", &path)?, &at(&path, "call_id"))?.to_owned()),
            name: string(required(item, "name", &path)?, &at(&path, "name"))?.to_owned(),
            arguments: json_arguments(
                required(item, "arguments", &path)?,
                &at(&path, "arguments"),
            )?,
        });
    }
    Ok(calls)
}

/// `{"candidates": [{"content": {"parts": [{"functionCall": {"name", "args", "id"?}}]}}]}`
fn gemini(response: &Map<String, Value>) -> Result<Vec<ToolCall>, TurnError> {
    let Some(candidates) = response.get("candidates") else {
        let why = match response
            .get("promptFeedback")
            .or_else(|| response.get("prompt_feedback"))
        {
            Some(feedback) => {
                format!("missing: the response has no candidate (promptFeedback: {feedback})")
            }
            None => "missing".to_owned(),
        };
        return Err(malformed("candidates", why));
    };
    let candidates = array(candidates, "candidates")?;
    let Some(candidate) = candidates.first() else {
        return Err(malformed(
            "candidates",
            "expected at least one candidate, found none",
        ));
    };
    let candidate = object(candidate, "candidates[0]")?;
    // A candidate stopped for safety or recitation may have no content: no calls.
    let content = match candidate.get("content") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(content) => object(content, "candidates[0].content")?,
    };
    let parts = match content.get("parts") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(parts) => array(parts, "candidates[0].content.parts")?,
    };
    let mut calls = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        let path = format!("candidates[0].content.parts[{i}]");
        let part = object(part, &path)?;
        let (key, call) = match (part.get("functionCall"), part.get("function_call")) {
            (Some(call), _) => ("functionCall", call),
            (None, Some(call)) => ("function_call", call),
            (None, None) => continue,
        };
        let call_path = at(&path, key);
        let call = object(call, &call_path)?;
        let id = match call.get("id") {
            None | Some(Value::Null) => None,
            Some(id) => Some(string(id, &at(&call_path, "id"))?.to_owned()),
        };
        let arguments = match call.get("args") {
            // A function without parameters may be called without `args`.
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(args) => object_value(args, &at(&call_path, "args"))?,
        };
        calls.push(ToolCall {
            id,
            name: string(required(call, "name", &call_path)?, &at(&call_path, "name"))?.to_owned(),
            arguments: Ok(arguments),
        });
    }
    Ok(calls)
}

/// `{"output": {"message": {"content": [{"toolUse": {"toolUseId", "name", "input": {…}}}]}}}`
fn bedrock(response: &Map<String, Value>) -> Result<Vec<ToolCall>, TurnError> {
    let output = object(required(response, "output", "output")?, "output")?;
    let message = object(required(output, "message", "output")?, "output.message")?;
    let blocks = array(
        required(message, "content", "output.message")?,
        "output.message.content",
    )?;
    let mut calls = Vec::new();
    for (i, block) in blocks.iter().enumerate() {
        let path = format!("output.message.content[{i}]");
        let block = object(block, &path)?;
        let Some(tool_use) = block.get("toolUse") else {
            continue;
        };
        let use_path = at(&path, "toolUse");
        let tool_use = object(tool_use, &use_path)?;
        calls.push(ToolCall {
            id: Some(
                string(
                    required(tool_use, "toolUseId", &use_path)?,
                    &at(&use_path, "toolUseId"),
                )?
                .to_owned(),
            ),
            name: string(
                required(tool_use, "name", &use_path)?,
                &at(&use_path, "name"),
            )?
            .to_owned(),
            arguments: Ok(object_value(
                required(tool_use, "input", &use_path)?,
                &at(&use_path, "input"),
            )?),
        });
    }
    Ok(calls)
}

/// OpenAI's arguments: a string holding JSON. A string that does not parse is the model's
/// mistake (a call cut off by the token limit), answered to the model; anything but a string
/// is the response's.
fn json_arguments(value: &Value, path: &str) -> Result<Result<Value, String>, TurnError> {
    let text = string(value, path)?;
    if text.trim().is_empty() {
        // Some models send "" for a function without parameters.
        return Ok(Ok(Value::Object(Map::new())));
    }
    Ok(serde_json::from_str(text).map_err(|error| {
        format!("the arguments are not valid JSON ({error}); send them again as one JSON object")
    }))
}

fn malformed(path: &str, problem: impl Into<String>) -> TurnError {
    TurnError::Malformed {
        path: path.to_owned(),
        problem: problem.into(),
    }
}

fn at(path: &str, key: &str) -> String {
    format!("{path}.{key}")
}

/// `object[key]`, or an error naming `path.key` (`key` alone at the root, where the path is
/// the key itself).
fn required<'a>(
    object: &'a Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<&'a Value, TurnError> {
    object.get(key).ok_or_else(|| {
        let full = if path == key {
            key.to_owned()
        } else {
            at(path, key)
        };
        malformed(&full, "missing")
    })
}

fn object<'a>(value: &'a Value, path: &str) -> Result<&'a Map<String, Value>, TurnError> {
    match value {
        Value::Object(map) => Ok(map),
        other => Err(malformed(
            path,
            format!("expected an object, found {}", kind(other)),
        )),
    }
}

fn object_value(value: &Value, path: &str) -> Result<Value, TurnError> {
    object(value, path)?;
    Ok(value.clone())
}

fn array<'a>(value: &'a Value, path: &str) -> Result<&'a Vec<Value>, TurnError> {
    match value {
        Value::Array(items) => Ok(items),
        other => Err(malformed(
            path,
            format!("expected an array, found {}", kind(other)),
        )),
    }
}

fn string<'a>(value: &'a Value, path: &str) -> Result<&'a str, TurnError> {
    match value {
        Value::String(text) => Ok(text),
        other => Err(malformed(
            path,
            format!("expected a string, found {}", kind(other)),
        )),
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
