//! A rig agent with xcsh's tools: it searches and previews an edit in one turn, is forced to
//! `resolve` while the preview is pending, applies it, and answers.
//!
//! `cargo run --features rig --example rig_agent`
//!
//! The model is scripted, with no network: rig's own Anthropic provider sends its requests
//! to an HTTP client that answers each with the next Messages API response of a script. So
//! what rig really sends is visible: the example prints each request's `tool_choice` (rig's
//! rendering of the forced `resolve`) and checks that the file is written only by the apply.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use xcsh::Session;
use xcsh::rig::RigTools;
use xcsh::rig::rig_agent::AgentBuilder;
use xcsh::rig::rig_core::http_client::{self, HttpClientExt, LazyBody, Request, Response};
use xcsh::rig::rig_core::providers::anthropic::AnthropicConfig;
use xcsh::serde_json::{self, Value, json};

const SOURCE: &str = "pub fn port(text: &str) -> u16 {\n    text.trim().parse().unwrap()\n}\n";
const APPLIED: &str = "pub fn port(text: &str) -> u16 {\n    text.trim().parse()?\n}\n";

/// An Anthropic endpoint that answers from a script and keeps the requests it got.
#[derive(Clone, Default)]
struct ScriptedAnthropic {
    replies: Arc<Mutex<VecDeque<Value>>>,
    requests: Arc<Mutex<Vec<Value>>>,
}

impl ScriptedAnthropic {
    fn new(replies: impl IntoIterator<Item = Value>) -> Self {
        ScriptedAnthropic {
            replies: Arc::new(Mutex::new(replies.into_iter().collect())),
            requests: Arc::default(),
        }
    }

    fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }
}

/// A Messages API response: `content` blocks, stopping for tools when it calls any.
fn message(content: Value) -> Value {
    let calls_tools = content
        .as_array()
        .is_some_and(|blocks| blocks.iter().any(|b| b["type"] == "tool_use"));
    json!({
        "id": "msg_scripted", "type": "message", "role": "assistant",
        "model": "claude-sonnet-4-6", "content": content,
        "stop_reason": if calls_tools { "tool_use" } else { "end_turn" },
        "stop_sequence": null,
        "usage": {"input_tokens": 100, "output_tokens": 20}
    })
}

fn unsupported() -> http_client::Error {
    http_client::Error::instance(std::io::Error::other(
        "the scripted endpoint answers unary JSON requests only",
    ))
}

impl HttpClientExt for ScriptedAnthropic {
    fn send<T, U>(
        &self,
        request: Request<T>,
    ) -> impl Future<Output = http_client::Result<Response<LazyBody<U>>>> + Send + 'static
    where
        T: Into<Bytes> + Send,
        U: From<Bytes> + Send + 'static,
    {
        let body: Bytes = request.into_body().into();
        self.requests
            .lock()
            .unwrap()
            .push(serde_json::from_slice(&body).unwrap_or(Value::Null));
        let reply = self.replies.lock().unwrap().pop_front();
        async move {
            let Some(reply) = reply else {
                return Err(unsupported());
            };
            let body: LazyBody<U> =
                Box::pin(async move { Ok(U::from(Bytes::from(reply.to_string()))) });
            Ok(Response::builder()
                .status(200)
                .header("content-type", "application/json")
                .body(body)?)
        }
    }

    // The future must not borrow `self` (`'static`), which an `async fn` would.
    #[allow(clippy::manual_async_fn)]
    fn send_multipart<U>(
        &self,
        _request: Request<http_client::MultipartForm>,
    ) -> impl Future<Output = http_client::Result<Response<LazyBody<U>>>> + Send + 'static
    where
        U: From<Bytes> + Send + 'static,
    {
        async { Err(unsupported()) }
    }

    async fn send_streaming<T>(
        &self,
        _request: Request<T>,
    ) -> http_client::Result<http_client::StreamingResponse>
    where
        T: Into<Bytes> + Send,
    {
        Err(unsupported())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let workspace = tempfile::tempdir()?;
    let file = workspace.path().join("src/port.rs");
    std::fs::create_dir_all(file.parent().unwrap())?;
    std::fs::write(&file, SOURCE)?;

    let endpoint = ScriptedAnthropic::new([
        message(json!([
            {"type": "text", "text": "I'll find the unwrap and preview propagating the error."},
            {"type": "tool_use", "id": "toolu_1", "name": "ast_grep",
             "input": {"pat": "$X.unwrap()", "lang": "rust"}},
            {"type": "tool_use", "id": "toolu_2", "name": "ast_edit",
             "input": {"ops": [{"pat": "$X.unwrap()", "out": "$X?"}], "lang": "rust"}}
        ])),
        message(json!([
            {"type": "tool_use", "id": "toolu_3", "name": "resolve",
             "input": {"action": "apply", "reason": "The user asked for `?` instead of unwrap."}}
        ])),
        message(json!([{"type": "text", "text": "Done: src/port.rs now propagates the error."}])),
    ]);
    let model = AnthropicConfig::new("scripted-no-key")
        .connect(endpoint.clone())
        .completion("claude-sonnet-4-6");

    let session = Session::builder()
        .suite(xcsh::tools::builtin_suite())
        .workspace_root(workspace.path())
        .build()?;
    let xcsh_tools = RigTools::new(session.clone());
    let agent = AgentBuilder::new(model)
        .preamble("You edit code with previews; apply a preview with `resolve`.")
        .dynamic_tools(xcsh_tools.tools())
        .add_hook(xcsh_tools.hook())
        .build();

    let answer = agent
        .prompt("Replace the unwrap in src/port.rs with `?`.")
        .max_turns(5)
        .tool_concurrency(2)
        .await?;
    println!("answer: {}", answer.output());

    let requests = endpoint.requests();
    for (i, request) in requests.iter().enumerate() {
        println!("request {}: tool_choice {}", i + 1, request["tool_choice"]);
    }
    assert_eq!(requests.len(), 3, "{requests:#?}");
    // While the preview was pending, rig forced `resolve`; before and after it did not.
    assert_eq!(
        requests[1]["tool_choice"],
        json!({"type": "tool", "name": "resolve"})
    );
    assert_ne!(requests[0]["tool_choice"]["name"], "resolve");
    assert_ne!(requests[2]["tool_choice"]["name"], "resolve");
    // The model saw both results of its first turn, then the apply's.
    let results = |request: &Value| -> Vec<String> {
        let messages = request["messages"].as_array().cloned().unwrap_or_default();
        let last = messages.last().cloned().unwrap_or(Value::Null);
        last["content"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .into_iter()
            .filter(|b| b["type"] == "tool_result")
            .map(|b| b["tool_use_id"].as_str().unwrap_or_default().to_owned())
            .collect()
    };
    assert_eq!(results(&requests[1]), ["toolu_1", "toolu_2"]);
    assert_eq!(results(&requests[2]), ["toolu_3"]);
    assert!(session.pending().is_empty());
    assert_eq!(std::fs::read_to_string(&file)?, APPLIED);
    println!("src/port.rs:\n{}", std::fs::read_to_string(&file)?);
    Ok(())
}
