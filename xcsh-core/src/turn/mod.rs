//! The agent loop's other half: a provider's response in, the messages that answer its tool
//! calls out.
//!
//! [`Session::turn`] takes a response exactly as the provider's API returned it (Anthropic
//! Messages, OpenAI Chat Completions or Responses, Gemini `generateContent`, Bedrock
//! Converse), runs every tool call in it, and returns a [`Turn`]: the messages to append to
//! the next request, in that provider's request format, and the next request's tool choice
//! (forced toward `resolve` while anything is pending, `None` otherwise).
//!
//! | dialect | the calls it reads | the answer it returns |
//! |---|---|---|
//! | Anthropic | `tool_use` blocks of `content` | one `user` message: a `tool_result` block per call (`is_error` on failures), then the reminders as `text` blocks |
//! | OpenAI Chat | `choices[0].message.tool_calls` (arguments as a JSON string) | a `tool` message per call id (`Error: ` before a failure's text); then, if there are images or reminders, one `user` message holding them (tool messages take text only) |
//! | OpenAI Responses | `function_call` items of `output` | a `function_call_output` item per `call_id` (images as `input_image` in `output`); then the reminders in one `user` message item |
//! | Gemini | `functionCall` parts of `candidates[0].content` (no ids: answered by name, in order) | one `user` content: a `functionResponse` part per call (`response.output`, or `response.error` on failures; images as its `parts`), then the reminders as `text` parts |
//! | Bedrock Converse | `toolUse` blocks of `output.message.content` | one `user` message: a `toolResult` block per call (`status: "error"` on failures), then the reminders as `text` blocks |
//!
//! The host appends the model's own message (the assistant turn the response holds) itself,
//! as it would without xcsh, then [`Turn::messages`].
//!
//! Calls run as [`Session::call_with`] runs them: arguments sent in a strict dialect form are
//! restored ([`restore_arguments`](crate::dialect::restore_arguments)), and every failure is an
//! error result the model can act on. Consecutive calls to tools annotated
//! [`read_only`](crate::ToolAnnotations::read_only) that do not push pending actions run
//! concurrently; every other call runs alone, in the model's order, so the pending stack's
//! order is the order the model saw (a read never moves across a write). The answers come
//! back in the order of the calls either way.
//!
//! ```
//! use serde_json::json;
//! use xcsh_core::{AgentToolResult, CustomTool, Dialect, Session, ToolContext, ToolError};
//!
//! /// Says hello.
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Greet { name: String }
//!
//! impl CustomTool for Greet {
//!     const NAME: &'static str = "greet";
//!     const DESCRIPTION: &'static str = "Says hello.";
//!     async fn execute(self, _ctx: &ToolContext) -> Result<AgentToolResult, ToolError> {
//!         Ok(format!("Hello, {}!", self.name).into())
//!     }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let session = Session::builder().custom::<Greet>().build().unwrap();
//! let response = json!({
//!     "role": "assistant",
//!     "content": [
//!         {"type": "text", "text": "Greeting."},
//!         {"type": "tool_use", "id": "toolu_1", "name": "greet", "input": {"name": "Ada"}}
//!     ],
//!     "stop_reason": "tool_use"
//! });
//! let turn = session.turn(Dialect::Anthropic, &response).await?;
//! assert_eq!(turn.messages, [json!({"role": "user", "content": [{
//!     "type": "tool_result",
//!     "tool_use_id": "toolu_1",
//!     "content": [{"type": "text", "text": "Hello, Ada!"}]
//! }]})]);
//! assert_eq!(turn.tool_choice, None);
//! # Ok::<(), xcsh_core::turn::TurnError>(())
//! # }).unwrap();
//! ```

use serde_json::Value;

use crate::dialect::{Dialect, Provider};
use crate::result::AgentToolResult;
use crate::session::{ResolveBias, Session};

mod parse;
mod render;
mod run;

pub use parse::parse_calls;
pub use render::render_results;
// For the facade's adapters (rig), which show blocks to models the same way; not API.
#[doc(hidden)]
pub use render::described;

/// A tool call read from a provider's response.
///
/// ```
/// use serde_json::json;
/// use xcsh_core::turn::ToolCall;
///
/// let call = ToolCall::new(Some("call_1".into()), "greet", json!({"name": "Ada"}));
/// assert_eq!(call.name, "greet");
/// assert_eq!(call.arguments, Ok(json!({"name": "Ada"})));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolCall {
    /// The id the provider gave the call (`tool_use.id`, `tool_calls[].id`, `call_id`,
    /// `toolUseId`); Gemini's calls usually have none and are answered by name and order.
    pub id: Option<String>,
    /// The tool the model called.
    pub name: String,
    /// The arguments, or why they could not be read (an OpenAI arguments string that is not
    /// JSON, as a model cut off mid-call sends): such a call is answered with an error result
    /// saying so, and the model can send it again.
    pub arguments: Result<Value, String>,
}

impl ToolCall {
    /// A call with readable arguments.
    ///
    /// ```
    /// let call = xcsh_core::turn::ToolCall::new(None, "list", serde_json::json!({}));
    /// assert_eq!(call.id, None);
    /// ```
    pub fn new(id: Option<String>, name: impl Into<String>, arguments: Value) -> Self {
        ToolCall {
            id,
            name: name.into(),
            arguments: Ok(arguments),
        }
    }
}

/// A call and the result it got.
///
/// ```
/// use xcsh_core::AgentToolResult;
/// use xcsh_core::turn::{AnsweredCall, ToolCall};
///
/// let answered = AnsweredCall {
///     call: ToolCall::new(Some("toolu_1".into()), "list", serde_json::json!({})),
///     result: AgentToolResult::text("a.rs"),
/// };
/// assert_eq!(answered.result.text_content(), "a.rs");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct AnsweredCall {
    /// The call, as the response held it.
    pub call: ToolCall,
    /// What the tool returned (or the error result that stands for its failure).
    pub result: AgentToolResult,
}

/// What one response asks of the host: the messages that answer its tool calls, and the next
/// request's tool choice.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use xcsh_core::{Dialect, Session};
/// let session = Session::builder().build().unwrap();
/// // A response with no tool calls: nothing to append, the loop is done.
/// let done = serde_json::json!({"content": [{"type": "text", "text": "All done."}]});
/// let turn = session.turn(Dialect::Anthropic, &done).await.unwrap();
/// assert!(turn.messages.is_empty() && turn.calls.is_empty());
/// # });
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Turn {
    /// The messages (OpenAI Responses: input items) to append to the conversation after the
    /// model's own message, in the provider's request format. Empty when the response made
    /// no tool calls.
    pub messages: Vec<Value>,
    /// The next request's tool choice (Gemini: its `tool_config`): `resolve` forced while
    /// anything is pending, `None` otherwise; `None` too for a provider that refuses a forced
    /// choice, which then gets the reminder in [`messages`](Self::messages) instead.
    pub tool_choice: Option<Value>,
    /// Each call and its result, in the model's order: for logs and user interfaces.
    pub calls: Vec<AnsweredCall>,
}

/// A response xcsh cannot take a turn from.
///
/// ```
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// use xcsh_core::{Dialect, Session};
/// use xcsh_core::turn::TurnError;
///
/// let session = Session::builder().build().unwrap();
/// let response = serde_json::json!({"content": [
///     {"type": "text", "text": "Let me look."},
///     {"type": "tool_use", "id": "toolu_1", "name": "list", "input": "src"}
/// ]});
/// let error = session.turn(Dialect::Anthropic, &response).await.unwrap_err();
/// assert_eq!(error.to_string(), "content[1].input: expected an object, found a string");
/// assert!(matches!(error, TurnError::Malformed { ref path, .. } if path == "content[1].input"));
/// # });
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TurnError {
    /// The response is not in the shape the dialect's API returns.
    #[error("{path}: {problem}")]
    Malformed {
        /// Where: `content[1].input`, `choices[0].message.tool_calls`, or `response` for the
        /// whole value.
        path: String,
        /// What was wrong there.
        problem: String,
    },
    /// The dialect has no model responses (MCP: the client owns the model).
    #[error(
        "the {0} dialect has no model responses to take a turn from; use anthropic, openai-chat, openai-responses, gemini or bedrock"
    )]
    NoResponses(Dialect),
}

impl Session {
    /// Takes one turn of the agent loop: reads the tool calls in a provider's `response` (as
    /// its API returned it), runs them (read-only ones concurrently, the others in order), and
    /// returns the messages answering them in that provider's request format, with the
    /// reminders the calls queued, and the next request's tool choice. See the
    /// [module](crate::turn) for each provider's shapes.
    ///
    /// A response without tool calls gives no messages (and leaves queued reminders queued).
    /// Pass a [`Provider`] marked [`without_forced_choice`](Provider::without_forced_choice)
    /// for a model that refuses a forced tool choice: while anything is pending its turns then
    /// carry [`RESOLVE_REMINDER`](crate::RESOLVE_REMINDER) instead.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use serde_json::json;
    /// use xcsh_core::{Dialect, Session};
    ///
    /// let session = Session::builder().build().unwrap();
    /// // OpenAI Chat Completions: arguments arrive as a JSON string.
    /// let response = json!({"choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
    ///     "role": "assistant", "content": null,
    ///     "tool_calls": [{"id": "call_1", "type": "function",
    ///                     "function": {"name": "nope", "arguments": "{}"}}]
    /// }}]});
    /// let turn = session.turn(Dialect::OpenAiChat, &response).await.unwrap();
    /// assert_eq!(turn.messages, [json!({
    ///     "role": "tool",
    ///     "tool_call_id": "call_1",
    ///     "content": "Error: Unknown tool `nope`. No tools are registered."
    /// })]);
    /// # });
    /// ```
    pub async fn turn(
        &self,
        provider: impl Into<Provider>,
        response: &Value,
    ) -> Result<Turn, TurnError> {
        let provider = provider.into();
        let calls = parse_calls(provider.dialect, response)?;
        if calls.is_empty() {
            return Ok(Turn {
                messages: Vec::new(),
                tool_choice: self.tool_choice(provider),
                calls: Vec::new(),
            });
        }
        let results = self.run_calls(provider.dialect, &calls).await;
        let calls: Vec<AnsweredCall> = calls
            .into_iter()
            .zip(results)
            .map(|(call, result)| AnsweredCall { call, result })
            .collect();
        let mut reminders = self.take_reminders();
        if let Some(ResolveBias::Reminder(reminder)) = self.resolve_bias(provider)
            && !reminders.iter().any(|queued| queued == reminder)
        {
            // No forced choice: the reminder is the only steer, so it goes with every turn
            // while anything is pending, not only with the one that pushed.
            reminders.push(reminder.to_owned());
        }
        Ok(Turn {
            messages: render_results(provider.dialect, &calls, &reminders),
            tool_choice: self.tool_choice(provider),
            calls,
        })
    }
}
