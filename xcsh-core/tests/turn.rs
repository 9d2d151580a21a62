//! `Session::turn`: each provider's response in, its tool-result messages out, with the
//! reminders where it reads them, images in its own shape, errors marked its way, read-only
//! calls overlapping and the others in the model's order.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::Barrier;
use xcsh_core::turn::{Turn, TurnError};
use xcsh_core::{
    AgentToolResult, Content, CustomTool, Dialect, PendingAction, Provider, RESOLVE_REMINDER,
    Session, ToolAnnotations, ToolContext, ToolError,
};

/// The order things happened in, for the tools to write and the tests to read.
#[derive(Default)]
struct Log(Mutex<Vec<String>>);

impl Log {
    fn note(&self, event: impl Into<String>) {
        self.0.lock().unwrap().push(event.into());
    }
    fn events(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

/// Finds text (read-only).
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Search {
    pattern: String,
    /// Wait at the test's barrier, so the call finishes only if another one runs with it.
    #[serde(default)]
    meet: bool,
}

impl CustomTool for Search {
    const NAME: &'static str = "search";
    const DESCRIPTION: &'static str = "Finds text.";
    const ANNOTATIONS: ToolAnnotations = ToolAnnotations::new().read_only(true);
    async fn execute(self, ctx: &ToolContext) -> Result<AgentToolResult, ToolError> {
        let log = ctx.extension::<Arc<Log>>().cloned();
        if let Some(log) = &log {
            log.note(format!("start search {}", self.pattern));
        }
        if self.meet {
            let barrier = ctx.extension::<Arc<Barrier>>().expect("the test's barrier");
            barrier.wait().await;
        }
        if let Some(log) = &log {
            log.note(format!("end search {}", self.pattern));
        }
        Ok(format!("1 match for {}", self.pattern).into())
    }
}

/// Renames, after a preview.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Rename {
    to: String,
    #[serde(default)]
    limit: u32,
}

struct Renaming(String);

impl PendingAction for Renaming {
    fn label(&self) -> String {
        format!("Rename: to {}", self.0)
    }
    async fn apply(&mut self, _reason: &str) -> Result<AgentToolResult, ToolError> {
        Ok(format!("Renamed to {}.", self.0).into())
    }
}

impl CustomTool for Rename {
    const NAME: &'static str = "rename";
    const DESCRIPTION: &'static str = "Renames after a preview.";
    // Read-only as a preview is, but it pushes: it must run alone, in order.
    const ANNOTATIONS: ToolAnnotations = ToolAnnotations::new().read_only(true);
    const PUSHES_PENDING_ACTIONS: bool = true;
    async fn execute(self, ctx: &ToolContext) -> Result<AgentToolResult, ToolError> {
        if let Some(log) = ctx.extension::<Arc<Log>>() {
            log.note(format!("rename {}", self.to));
        }
        let _ = self.limit;
        ctx.push_pending_action(Renaming(self.to.clone()))?;
        Ok(format!(
            "Will rename to {}. Call resolve to apply or discard.",
            self.to
        )
        .into())
    }
}

/// Takes a screenshot.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Shot {
    #[serde(default)]
    fail: bool,
}

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

impl CustomTool for Shot {
    const NAME: &'static str = "shot";
    const DESCRIPTION: &'static str = "Takes a screenshot.";
    async fn execute(self, _ctx: &ToolContext) -> Result<AgentToolResult, ToolError> {
        let result = AgentToolResult::from(vec![
            Content::text("The page:"),
            Content::image(PNG, "image/png"),
        ]);
        Ok(if self.fail {
            result.with_error_kind(xcsh_core::ErrorKind::Tool)
        } else {
            result
        })
    }
}

fn session() -> Session {
    session_with(Arc::new(Log::default()), Arc::new(Barrier::new(2)))
}

fn session_with(log: Arc<Log>, barrier: Arc<Barrier>) -> Session {
    Session::builder()
        .custom::<Search>()
        .custom::<Rename>()
        .custom::<Shot>()
        .extension(log)
        .extension(barrier)
        .build()
        .unwrap()
}

/// A call as the test writes it: id, name, arguments.
type Call<'a> = (&'a str, &'a str, Value);

/// A response holding `calls`, in `dialect`'s response shape.
fn response(dialect: Dialect, calls: &[Call<'_>]) -> Value {
    match dialect {
        Dialect::Anthropic => {
            let mut content = vec![json!({"type": "text", "text": "On it."})];
            content.extend(calls.iter().map(|(id, name, args)| {
                json!({"type": "tool_use", "id": id, "name": name, "input": args})
            }));
            json!({"id": "msg_1", "type": "message", "role": "assistant", "content": content,
                   "stop_reason": "tool_use"})
        }
        Dialect::OpenAiChat => {
            let tool_calls: Vec<Value> = calls
                .iter()
                .map(|(id, name, args)| {
                    json!({"id": id, "type": "function",
                           "function": {"name": name, "arguments": args.to_string()}})
                })
                .collect();
            json!({"id": "chatcmpl-1", "object": "chat.completion", "choices": [{
                "index": 0, "finish_reason": "tool_calls",
                "message": {"role": "assistant", "content": null, "tool_calls": tool_calls}
            }]})
        }
        Dialect::OpenAiResponses => {
            let mut output = vec![json!({"type": "reasoning", "id": "rs_1", "summary": []})];
            output.extend(calls.iter().map(|(id, name, args)| {
                json!({"type": "function_call", "id": format!("fc_{id}"), "call_id": id,
                       "name": name, "arguments": args.to_string(), "status": "completed"})
            }));
            json!({"id": "resp_1", "object": "response", "output": output})
        }
        Dialect::Gemini => {
            let parts: Vec<Value> = calls
                .iter()
                .map(|(_, name, args)| json!({"functionCall": {"name": name, "args": args}}))
                .collect();
            json!({"candidates": [{"content": {"role": "model", "parts": parts},
                                   "finishReason": "STOP"}]})
        }
        Dialect::Bedrock => {
            let content: Vec<Value> = calls
                .iter()
                .map(|(id, name, args)| {
                    json!({"toolUse": {"toolUseId": id, "name": name, "input": args}})
                })
                .collect();
            json!({"output": {"message": {"role": "assistant", "content": content}},
                   "stopReason": "tool_use"})
        }
        other => unreachable!("{other:?} has no model responses here"),
    }
}

const PROVIDERS: [Dialect; 5] = [
    Dialect::Anthropic,
    Dialect::OpenAiChat,
    Dialect::OpenAiResponses,
    Dialect::Gemini,
    Dialect::Bedrock,
];

async fn turn(session: &Session, dialect: Dialect, calls: &[Call<'_>]) -> Turn {
    session
        .turn(dialect, &response(dialect, calls))
        .await
        .unwrap_or_else(|e| panic!("{dialect}: {e}"))
}

/// The answers in a turn's messages, in order: (id or name, text, error?), and the
/// reminders, read back from each provider's shape.
fn answers(dialect: Dialect, messages: &[Value]) -> (Vec<(String, String, bool)>, Vec<String>) {
    let text_of = |blocks: &Value, key: &str| -> String {
        blocks
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|b| b[key].as_str())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let mut answers = Vec::new();
    let mut reminders = Vec::new();
    match dialect {
        Dialect::Anthropic => {
            assert_eq!(messages.len(), 1, "{messages:?}");
            for block in messages[0]["content"].as_array().unwrap() {
                match block["type"].as_str().unwrap() {
                    "tool_result" => {
                        assert!(
                            reminders.is_empty(),
                            "a tool_result after text: {messages:?}"
                        );
                        answers.push((
                            block["tool_use_id"].as_str().unwrap().to_owned(),
                            text_of(&block["content"], "text"),
                            block["is_error"] == json!(true),
                        ));
                    }
                    "text" => reminders.push(block["text"].as_str().unwrap().to_owned()),
                    other => panic!("unexpected block {other}"),
                }
            }
        }
        Dialect::OpenAiChat => {
            for message in messages {
                match message["role"].as_str().unwrap() {
                    "tool" => {
                        let text = message["content"].as_str().unwrap();
                        answers.push((
                            message["tool_call_id"].as_str().unwrap().to_owned(),
                            text.trim_start_matches("Error: ").to_owned(),
                            text.starts_with("Error: "),
                        ));
                    }
                    "user" => reminders.push(text_of(&message["content"], "text")),
                    other => panic!("unexpected role {other}"),
                }
            }
        }
        Dialect::OpenAiResponses => {
            for item in messages {
                match item["type"].as_str().unwrap() {
                    "function_call_output" => {
                        let text = item["output"].as_str().unwrap();
                        answers.push((
                            item["call_id"].as_str().unwrap().to_owned(),
                            text.trim_start_matches("Error: ").to_owned(),
                            text.starts_with("Error: "),
                        ));
                    }
                    "message" => reminders.push(text_of(&item["content"], "text")),
                    other => panic!("unexpected item {other}"),
                }
            }
        }
        Dialect::Gemini => {
            assert_eq!(messages.len(), 1, "{messages:?}");
            for part in messages[0]["parts"].as_array().unwrap() {
                if let Some(response) = part.get("functionResponse") {
                    assert!(reminders.is_empty(), "a functionResponse after text");
                    let error = response["response"].get("error");
                    answers.push((
                        response["name"].as_str().unwrap().to_owned(),
                        error
                            .unwrap_or(&response["response"]["output"])
                            .as_str()
                            .unwrap()
                            .to_owned(),
                        error.is_some(),
                    ));
                } else {
                    reminders.push(part["text"].as_str().unwrap().to_owned());
                }
            }
        }
        Dialect::Bedrock => {
            assert_eq!(messages.len(), 1, "{messages:?}");
            for block in messages[0]["content"].as_array().unwrap() {
                if let Some(result) = block.get("toolResult") {
                    assert!(reminders.is_empty(), "a toolResult after text");
                    answers.push((
                        result["toolUseId"].as_str().unwrap().to_owned(),
                        text_of(&result["content"], "text"),
                        result.get("status") == Some(&json!("error")),
                    ));
                } else {
                    reminders.push(block["text"].as_str().unwrap().to_owned());
                }
            }
        }
        other => unreachable!("{other:?} has no model responses here"),
    }
    (answers, reminders)
}

#[tokio::test]
async fn each_provider_gets_every_call_answered_once_in_order_then_resolve_forced_and_released() {
    for dialect in PROVIDERS {
        let session = session();
        let first = turn(
            &session,
            dialect,
            &[
                ("call_a", "search", json!({"pattern": "fn main"})),
                ("call_b", "rename", json!({"to": "start"})),
            ],
        )
        .await;
        let (answered, reminders) = answers(dialect, &first.messages);
        let by_name = dialect == Dialect::Gemini;
        let key = |id: &str, name: &str| if by_name { name } else { id }.to_owned();
        assert_eq!(
            answered,
            [
                (key("call_a", "search"), "1 match for fn main".into(), false),
                (
                    key("call_b", "rename"),
                    "Will rename to start. Call resolve to apply or discard.".into(),
                    false
                ),
            ],
            "{dialect}"
        );
        assert_eq!(reminders, [RESOLVE_REMINDER], "{dialect}");
        assert_eq!(
            first.tool_choice,
            dialect.forced_tool_choice("resolve"),
            "{dialect}"
        );
        assert_eq!(first.calls.len(), 2);

        let second = turn(
            &session,
            dialect,
            &[(
                "call_c",
                "resolve",
                json!({"action": "apply", "reason": "the user agreed"}),
            )],
        )
        .await;
        let (answered, reminders) = answers(dialect, &second.messages);
        assert_eq!(
            answered,
            [(key("call_c", "resolve"), "Renamed to start.".into(), false)],
            "{dialect}"
        );
        assert!(reminders.is_empty(), "{dialect}: {reminders:?}");
        assert_eq!(second.tool_choice, None, "{dialect}");
        assert!(session.pending().is_empty());
    }
}

#[tokio::test]
async fn failures_are_marked_each_providers_way() {
    for dialect in PROVIDERS {
        let session = session();
        let turn = turn(&session, dialect, &[("call_x", "nope", json!({}))]).await;
        let (answered, _) = answers(dialect, &turn.messages);
        let id = if dialect == Dialect::Gemini {
            "nope"
        } else {
            "call_x"
        };
        assert_eq!(answered.len(), 1);
        assert_eq!(answered[0].0, id);
        assert!(
            answered[0].1.starts_with("Unknown tool `nope`."),
            "{answered:?}"
        );
        assert!(
            answered[0].2,
            "{dialect}: the failure is not marked: {turn:?}"
        );
    }
}

#[tokio::test]
async fn two_read_only_calls_overlap_in_time() {
    let log = Arc::new(Log::default());
    // Each call waits at a two-party barrier: run one after the other, the first would wait
    // for ever; run together, both pass.
    let session = session_with(Arc::clone(&log), Arc::new(Barrier::new(2)));
    for dialect in PROVIDERS {
        let started = Instant::now();
        let turn = tokio::time::timeout(
            Duration::from_secs(10),
            session.turn(
                dialect,
                &response(
                    dialect,
                    &[
                        ("call_1", "search", json!({"pattern": "one", "meet": true})),
                        ("call_2", "search", json!({"pattern": "two", "meet": true})),
                    ],
                ),
            ),
        )
        .await
        .unwrap_or_else(|_| panic!("{dialect}: the two read-only calls did not overlap"))
        .unwrap();
        assert!(started.elapsed() < Duration::from_secs(10));
        let (answered, _) = answers(dialect, &turn.messages);
        let texts: Vec<&str> = answered.iter().map(|a| a.1.as_str()).collect();
        assert_eq!(texts, ["1 match for one", "1 match for two"], "{dialect}");
    }
    // For each provider, both calls started before either ended.
    let events = log.events();
    assert_eq!(events.len(), 4 * PROVIDERS.len());
    for chunk in events.chunks(4) {
        assert!(
            chunk[..2].iter().all(|e| e.starts_with("start")),
            "{events:?}"
        );
        assert!(
            chunk[2..].iter().all(|e| e.starts_with("end")),
            "{events:?}"
        );
    }
}

#[tokio::test]
async fn calls_that_push_run_alone_in_the_models_order_and_reads_do_not_cross_them() {
    let log = Arc::new(Log::default());
    let session = session_with(Arc::clone(&log), Arc::new(Barrier::new(2)));
    let turn = turn(
        &session,
        Dialect::Anthropic,
        &[
            ("t1", "search", json!({"pattern": "before"})),
            ("t2", "rename", json!({"to": "first"})),
            ("t3", "rename", json!({"to": "second"})),
            ("t4", "search", json!({"pattern": "after"})),
        ],
    )
    .await;
    assert_eq!(
        log.events(),
        [
            "start search before",
            "end search before",
            "rename first",
            "rename second",
            "start search after",
            "end search after"
        ]
    );
    // The stack's order is the model's: the last preview on top.
    let stack: Vec<String> = session
        .pending()
        .snapshot()
        .into_iter()
        .map(|s| s.label)
        .collect();
    assert_eq!(stack, ["Rename: to second", "Rename: to first"]);
    // One reminder per push, after every result.
    let (answered, reminders) = answers(Dialect::Anthropic, &turn.messages);
    let ids: Vec<&str> = answered.iter().map(|a| a.0.as_str()).collect();
    assert_eq!(ids, ["t1", "t2", "t3", "t4"]);
    assert_eq!(reminders, [RESOLVE_REMINDER, RESOLVE_REMINDER]);
}

#[tokio::test]
async fn images_reach_each_provider_in_its_own_shape() {
    let url = format!("data:image/png;base64,{PNG}");
    let expected = [
        (
            Dialect::Anthropic,
            json!([{"role": "user", "content": [{
                "type": "tool_result", "tool_use_id": "call_1",
                "content": [
                    {"type": "text", "text": "The page:"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}
                ]
            }]}]),
        ),
        (
            Dialect::OpenAiChat,
            json!([
                {"role": "tool", "tool_call_id": "call_1",
                 "content": "The page:\n[The images this call returned follow in the next user message.]"},
                {"role": "user", "content": [
                    {"type": "text", "text": "Images returned by the `shot` call call_1:"},
                    {"type": "image_url", "image_url": {"url": url}}
                ]}
            ]),
        ),
        (
            Dialect::OpenAiResponses,
            json!([{"type": "function_call_output", "call_id": "call_1", "output": [
                {"type": "input_text", "text": "The page:"},
                {"type": "input_image", "image_url": url, "detail": "auto"}
            ]}]),
        ),
        (
            Dialect::Gemini,
            json!([{"role": "user", "parts": [{"functionResponse": {
                "name": "shot",
                "response": {"output": "The page:"},
                "parts": [{"inlineData": {"mimeType": "image/png", "data": PNG}}]
            }}]}]),
        ),
        (
            Dialect::Bedrock,
            json!([{"role": "user", "content": [{"toolResult": {
                "toolUseId": "call_1",
                "content": [
                    {"text": "The page:"},
                    {"image": {"format": "png", "source": {"bytes": PNG}}}
                ]
            }}]}]),
        ),
    ];
    for (dialect, expected) in expected {
        let session = session();
        let turn = turn(&session, dialect, &[("call_1", "shot", json!({}))]).await;
        assert_eq!(Value::Array(turn.messages), expected, "{dialect}");
    }
}

#[tokio::test]
async fn a_failed_result_with_an_image_keeps_both_the_image_and_the_mark() {
    let session = session();
    let anthropic = turn(
        &session,
        Dialect::Anthropic,
        &[("c", "shot", json!({"fail": true}))],
    )
    .await;
    let block = &anthropic.messages[0]["content"][0];
    assert_eq!(block["is_error"], json!(true));
    assert_eq!(block["content"][1]["type"], "image");
    let responses = turn(
        &session,
        Dialect::OpenAiResponses,
        &[("c", "shot", json!({"fail": true}))],
    )
    .await;
    assert_eq!(
        responses.messages[0]["output"][0],
        json!({"type": "input_text", "text": "Error:"})
    );
}

#[tokio::test]
async fn an_image_a_provider_does_not_take_is_described_in_text() {
    /// Returns an SVG.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Svg {}
    impl CustomTool for Svg {
        const NAME: &'static str = "svg";
        const DESCRIPTION: &'static str = "Returns an SVG.";
        async fn execute(self, _ctx: &ToolContext) -> Result<AgentToolResult, ToolError> {
            Ok(Content::image("PHN2Zz4=", "image/svg+xml").into())
        }
    }
    let session = Session::builder().custom::<Svg>().build().unwrap();
    let turn = turn(&session, Dialect::Bedrock, &[("c", "svg", json!({}))]).await;
    assert_eq!(
        turn.messages[0]["content"][0]["toolResult"]["content"],
        json!([{"text": "[An image (image/svg+xml) the tool returned is not shown: this provider does not take that format.]"}])
    );
}

#[tokio::test]
async fn a_resource_link_reaches_each_provider_as_its_name_and_address() {
    /// Links a large preview.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Big {}
    impl CustomTool for Big {
        const NAME: &'static str = "big";
        const DESCRIPTION: &'static str = "Links a large preview.";
        async fn execute(self, _ctx: &ToolContext) -> Result<AgentToolResult, ToolError> {
            Ok(vec![
                Content::text("Too large to show; read the link."),
                Content::ResourceLink {
                    uri: "xcsh://preview/1".into(),
                    name: "preview-1.diff".into(),
                    mime_type: Some("text/x-diff".into()),
                    description: Some("the whole diff".into()),
                },
            ]
            .into())
        }
    }
    let session = Session::builder().custom::<Big>().build().unwrap();
    let link = "Resource `preview-1.diff` (xcsh://preview/1): the whole diff";
    for dialect in PROVIDERS {
        let turn = turn(&session, dialect, &[("c", "big", json!({}))]).await;
        let (answered, _) = answers(dialect, &turn.messages);
        assert_eq!(
            answered[0].1,
            format!("Too large to show; read the link.\n{link}"),
            "{dialect}"
        );
    }
}

#[tokio::test]
async fn strict_arguments_are_restored_before_decoding() {
    let session = session();
    // Strict mode makes the model send `null` for the omitted `limit` (a `u32` with a default).
    let turn = turn(
        &session,
        Dialect::OpenAiResponses,
        &[("c", "rename", json!({"to": "x", "limit": null}))],
    )
    .await;
    assert!(
        !turn.calls[0].result.is_error(),
        "{:?}",
        turn.calls[0].result
    );
}

#[tokio::test]
async fn arguments_that_are_not_json_are_answered_to_the_model() {
    let session = session();
    let response = json!({"choices": [{"index": 0, "message": {"role": "assistant", "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "search", "arguments": "{\"pattern\": \"fn"}}
    ]}}]});
    let turn = session.turn(Dialect::OpenAiChat, &response).await.unwrap();
    let text = turn.messages[0]["content"].as_str().unwrap();
    assert!(
        text.starts_with(
            "Error: Invalid arguments for `search`: the arguments are not valid JSON ("
        ),
        "{text}"
    );
    assert_eq!(
        turn.calls[0].result.error_kind(),
        Some(&xcsh_core::ErrorKind::InvalidArguments {
            path: String::new()
        })
    );
}

#[tokio::test]
async fn gemini_answers_by_name_in_order_and_echoes_ids_when_given() {
    let session = session();
    let response = json!({"candidates": [{"content": {"role": "model", "parts": [
        {"text": "Searching."},
        {"functionCall": {"name": "search", "args": {"pattern": "a"}}, "thoughtSignature": "c2ln"},
        {"function_call": {"id": "fc-2", "name": "search", "args": {"pattern": "b"}}}
    ]}}]});
    let turn = session.turn(Dialect::Gemini, &response).await.unwrap();
    assert_eq!(
        turn.messages,
        [json!({"role": "user", "parts": [
            {"functionResponse": {"name": "search", "response": {"output": "1 match for a"}}},
            {"functionResponse": {"name": "search", "id": "fc-2", "response": {"output": "1 match for b"}}}
        ]})]
    );
}

#[tokio::test]
async fn a_provider_that_refuses_a_forced_choice_gets_the_reminder_every_turn_while_pending() {
    let session = session();
    let thinking = Provider::new(Dialect::Anthropic).without_forced_choice();
    let push = session
        .turn(
            thinking,
            &response(Dialect::Anthropic, &[("a", "rename", json!({"to": "x"}))]),
        )
        .await
        .unwrap();
    assert_eq!(push.tool_choice, None);
    assert_eq!(
        answers(Dialect::Anthropic, &push.messages).1,
        [RESOLVE_REMINDER]
    );
    // The next turn does not resolve: the reminder comes again.
    let other = session
        .turn(
            thinking,
            &response(
                Dialect::Anthropic,
                &[("b", "search", json!({"pattern": "y"}))],
            ),
        )
        .await
        .unwrap();
    assert_eq!(
        answers(Dialect::Anthropic, &other.messages).1,
        [RESOLVE_REMINDER]
    );
    // A forcing provider gets no repeat: its tool choice does the steering.
    let forced = turn(
        &session,
        Dialect::Anthropic,
        &[("c", "search", json!({"pattern": "z"}))],
    )
    .await;
    assert!(answers(Dialect::Anthropic, &forced.messages).1.is_empty());
    assert!(forced.tool_choice.is_some());
}

#[tokio::test]
async fn a_response_without_calls_gives_no_messages_and_keeps_the_reminders_queued() {
    let session = session();
    session.call("rename", json!({"to": "x"})).await;
    for dialect in PROVIDERS {
        let turn = turn(&session, dialect, &[]).await;
        assert!(turn.messages.is_empty(), "{dialect}: {:?}", turn.messages);
        assert_eq!(turn.tool_choice, dialect.forced_tool_choice("resolve"));
    }
    assert_eq!(session.reminders().len(), 1);
    // A Gemini candidate stopped for safety has no content: no calls either.
    let blocked = json!({"candidates": [{"finishReason": "SAFETY"}]});
    assert!(
        session
            .turn(Dialect::Gemini, &blocked)
            .await
            .unwrap()
            .messages
            .is_empty()
    );
}

#[tokio::test]
async fn a_malformed_response_names_the_part() {
    let session = session();
    let cases = [
        (
            Dialect::Anthropic,
            json!([]),
            "response: expected an object, found an array (pass the Anthropic Messages response as the API returns it)",
        ),
        (
            Dialect::Anthropic,
            json!({"role": "assistant"}),
            "content: missing",
        ),
        (
            Dialect::Anthropic,
            json!({"content": [{"type": "text", "text": "x"}, {"type": "tool_use", "id": "t", "name": "n", "input": 3}]}),
            "content[1].input: expected an object, found a number",
        ),
        (
            Dialect::Anthropic,
            json!({"content": [{"type": "tool_use", "name": "n", "input": {}}]}),
            "content[0].id: missing",
        ),
        (
            Dialect::OpenAiChat,
            json!({"choices": []}),
            "choices: expected at least one choice, found none",
        ),
        (
            Dialect::OpenAiChat,
            json!({"choices": [{"message": {"tool_calls": [{"id": "c", "type": "function", "function": {"name": "n", "arguments": {}}}]}}]}),
            "choices[0].message.tool_calls[0].function.arguments: expected a string, found an object",
        ),
        (
            Dialect::OpenAiChat,
            json!({"choices": [{"message": {"tool_calls": [{"id": "c", "type": "custom", "custom": {"name": "n", "input": ""}}]}}]}),
            "choices[0].message.tool_calls[0].type: expected \"function\", found \"custom\": xcsh defines function tools only, so it cannot answer this call",
        ),
        (
            Dialect::OpenAiResponses,
            json!({"output": [{"type": "function_call", "name": "n", "arguments": "{}"}]}),
            "output[0].call_id: missing",
        ),
        (
            Dialect::Gemini,
            json!({"promptFeedback": {"blockReason": "SAFETY"}}),
            "candidates: missing: the response has no candidate (promptFeedback: {\"blockReason\":\"SAFETY\"})",
        ),
        (
            Dialect::Gemini,
            json!({"candidates": [{"content": {"parts": [{"functionCall": {"name": "n", "args": [1]}}]}}]}),
            "candidates[0].content.parts[0].functionCall.args: expected an object, found an array",
        ),
        (
            Dialect::Bedrock,
            json!({"output": {}}),
            "output.message: missing",
        ),
        (
            Dialect::Bedrock,
            json!({"output": {"message": {"content": [{"toolUse": {"toolUseId": 7, "name": "n", "input": {}}}]}}}),
            "output.message.content[0].toolUse.toolUseId: expected a string, found a number",
        ),
    ];
    for (dialect, response, expected) in cases {
        let error = session.turn(dialect, &response).await.unwrap_err();
        assert_eq!(error.to_string(), expected, "{dialect}");
        assert!(matches!(error, TurnError::Malformed { .. }));
    }
    // Nothing ran.
    assert!(session.pending().is_empty());
    let mcp = session.turn(Dialect::Mcp, &json!({})).await.unwrap_err();
    assert_eq!(mcp, TurnError::NoResponses(Dialect::Mcp));
}
