//! Sessions: registration, dispatch, argument errors, panics, cancellation, gates.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use xcsh_core::{
    AgentToolResult, CallOptions, CancellationToken, CustomTool, Dialect, PendingAction,
    PendingEvent, RESOLVE_REMINDER, ResolveBias, STORE_UNAVAILABLE, Session, ToolContext,
    ToolError, ToolSuite,
};

/// Renames files (test double: only reports).
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Rename {
    files: Vec<String>,
    #[serde(default)]
    dry_run: Option<bool>,
}

struct Plan(usize);

impl PendingAction for Plan {
    fn label(&self) -> String {
        format!("Batch rename: {} files", self.0)
    }
    async fn apply(&mut self, _reason: &str) -> Result<AgentToolResult, ToolError> {
        Ok(().into())
    }
}

impl CustomTool for Rename {
    const NAME: &'static str = "rename";
    const DESCRIPTION: &'static str = "Renames files after a preview.";
    const PUSHES_PENDING_ACTIONS: bool = true;
    async fn execute(self, ctx: &ToolContext) -> Result<AgentToolResult, ToolError> {
        let _ = self.dry_run;
        ctx.push_pending_action(Plan(self.files.len()))?;
        Ok(format!("Prepared rename plan for {} files.", self.files.len()).into())
    }
}

/// Echoes its text.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Echo {
    text: String,
}

impl CustomTool for Echo {
    const NAME: &'static str = "echo";
    const DESCRIPTION: &'static str = "Echoes the text.";
    async fn execute(self, _ctx: &ToolContext) -> Result<AgentToolResult, ToolError> {
        if self.text == "panic" {
            panic!("echo was asked to panic");
        }
        if self.text == "slow" {
            tokio::time::sleep(Duration::from_secs(60)).await;
        }
        Ok(self.text.into())
    }
}

fn session() -> Session {
    Session::builder()
        .custom::<Rename>()
        .custom::<Echo>()
        .build()
        .unwrap()
}

#[tokio::test]
async fn resolve_is_offered_only_when_a_tool_pushes_pending_actions() {
    assert_eq!(session().tool_names(), ["rename", "echo", "resolve"]);
    let plain = Session::builder().custom::<Echo>().build().unwrap();
    assert_eq!(plain.tool_names(), ["echo"]);
    let resolve = session()
        .tools()
        .iter()
        .find(|t| t.name() == "resolve")
        .cloned()
        .unwrap();
    assert!(resolve.hidden());
    assert_eq!(resolve.label(), "Resolve");
}

#[tokio::test]
async fn unknown_tools_list_the_available_ones_and_suggest() {
    let result = session().call("rename_files", json!({})).await;
    assert!(result.is_error());
    assert_eq!(
        result.text_content(),
        "Unknown tool `rename_files`. Did you mean `rename`? Available tools: rename, echo, resolve."
    );
    let result = session().call("zzz", json!({})).await;
    assert_eq!(
        result.text_content(),
        "Unknown tool `zzz`. Available tools: rename, echo, resolve."
    );
}

#[tokio::test]
async fn bad_arguments_name_the_json_path_and_the_expected_type() {
    let s = session();
    let result = s.call("rename", json!({"files": ["a", "b", 2]})).await;
    assert!(result.is_error());
    assert_eq!(
        result.text_content(),
        "Invalid arguments for `rename`: files[2]: invalid type: integer `2`, expected a string. Fix the arguments to match the tool's parameter schema and call it again."
    );
    let result = s.call("rename", json!({})).await;
    assert!(
        result
            .text_content()
            .contains("Invalid arguments for `rename`: missing field `files`")
    );
    let result = s
        .call("rename", json!({"files": [], "dry_run": "yes"}))
        .await;
    assert!(
        result
            .text_content()
            .contains("dry_run: invalid type: string \"yes\", expected a boolean"),
        "{}",
        result.text_content()
    );
    let result = s.call("rename", json!("files")).await;
    assert!(
        result
            .text_content()
            .contains("invalid type: string \"files\", expected struct Rename"),
        "{}",
        result.text_content()
    );
    assert!(!s.pending().has_pending(), "nothing pushed by failed calls");
}

#[tokio::test]
async fn a_panicking_tool_becomes_an_error_result_and_the_session_survives() {
    let s = session();
    let result = s.call("echo", json!({"text": "panic"})).await;
    assert!(result.is_error());
    assert!(
        result
            .text_content()
            .contains("Tool `echo` failed unexpectedly (panic: echo was asked to panic)"),
        "{}",
        result.text_content()
    );
    assert_eq!(
        s.call("echo", json!({"text": "still here"}))
            .await
            .text_content(),
        "still here"
    );
}

#[tokio::test(start_paused = true)]
async fn cancellation_ends_a_call_promptly() {
    let s = session();
    let token = CancellationToken::new();
    let call = {
        let s = s.clone();
        let token = token.clone();
        tokio::spawn(async move {
            s.call_with(
                "echo",
                json!({"text": "slow"}),
                CallOptions {
                    cancellation: Some(token),
                    call_id: Some("call-7".into()),
                    ..Default::default()
                },
            )
            .await
        })
    };
    tokio::time::sleep(Duration::from_millis(10)).await;
    token.cancel();
    let result = call.await.unwrap();
    assert!(result.is_error());
    assert!(result.text_content().starts_with("Cancelled"));
}

#[tokio::test]
async fn push_queues_the_exact_reminder_and_tool_choice_forces_resolve() {
    let s = session();
    for dialect in Dialect::ALL {
        assert_eq!(s.tool_choice(dialect), None, "{dialect:?}: nothing pending");
    }
    s.call("rename", json!({"files": ["a", "b"]})).await;
    assert_eq!(
        s.take_reminders(),
        [
            "<system-reminder>\nThis is a preview. Call the `resolve` tool to apply or discard these changes.\n</system-reminder>"
        ]
    );
    assert_eq!(
        RESOLVE_REMINDER,
        "<system-reminder>\nThis is a preview. Call the `resolve` tool to apply or discard these changes.\n</system-reminder>"
    );
    assert!(s.take_reminders().is_empty());

    let expected = [
        (
            Dialect::Anthropic,
            json!({"type": "tool", "name": "resolve"}),
        ),
        (
            Dialect::OpenAiChat,
            json!({"type": "function", "function": {"name": "resolve"}}),
        ),
        (
            Dialect::OpenAiResponses,
            json!({"type": "function", "name": "resolve"}),
        ),
        (
            Dialect::Gemini,
            json!({"function_calling_config": {"mode": "ANY", "allowed_function_names": ["resolve"]}}),
        ),
        (Dialect::Bedrock, json!({"tool": {"name": "resolve"}})),
    ];
    for (dialect, choice) in expected {
        assert_eq!(s.tool_choice(dialect), Some(choice.clone()), "{dialect:?}");
        assert_eq!(
            s.resolve_bias(dialect),
            Some(ResolveBias::ToolChoice(choice))
        );
    }
    // MCP cannot force a named tool: the reminder is the fallback.
    assert_eq!(s.tool_choice(Dialect::Mcp), None);
    assert_eq!(
        s.resolve_bias(Dialect::Mcp),
        Some(ResolveBias::Reminder(RESOLVE_REMINDER))
    );

    s.call("resolve", json!({"action": "discard", "reason": "no"}))
        .await;
    for dialect in Dialect::ALL {
        assert_eq!(s.tool_choice(dialect), None, "{dialect:?}: no stale force");
        assert_eq!(s.resolve_bias(dialect), None);
    }
}

#[tokio::test]
async fn the_strict_gate_refuses_other_calls_while_actions_are_pending() {
    let s = Session::builder()
        .custom::<Rename>()
        .custom::<Echo>()
        .strict_resolve_gate(true)
        .build()
        .unwrap();
    assert_eq!(
        s.call("echo", json!({"text": "free"})).await.text_content(),
        "free"
    );
    s.call("rename", json!({"files": ["a"]})).await;
    let refused = s.call("echo", json!({"text": "blocked"})).await;
    assert!(refused.is_error());
    assert_eq!(
        refused.text_content(),
        "Call refused: 1 pending action(s) await resolution, the most recent being `Batch rename: 1 files`. Call the `resolve` tool first to apply or discard it, then call `echo` again."
    );
    s.call("resolve", json!({"action": "apply", "reason": "ok"}))
        .await;
    assert_eq!(
        s.call("echo", json!({"text": "free again"}))
            .await
            .text_content(),
        "free again"
    );

    // Without the gate, other calls go through.
    let open = session();
    open.call("rename", json!({"files": ["a"]})).await;
    assert_eq!(
        open.call("echo", json!({"text": "x"})).await.text_content(),
        "x"
    );
}

#[test]
fn duplicate_and_invalid_names_are_all_reported_at_build() {
    struct Named(&'static str);
    impl xcsh_core::Tool for Named {
        fn name(&self) -> &str {
            self.0
        }
        fn description(&self) -> &str {
            "test"
        }
        fn parameters(&self) -> &Arc<xcsh_core::JsonObject> {
            static EMPTY: std::sync::LazyLock<Arc<xcsh_core::JsonObject>> =
                std::sync::LazyLock::new(Default::default);
            &EMPTY
        }
        fn execute<'a>(
            &'a self,
            _ctx: &'a ToolContext,
            _args: serde_json::Value,
        ) -> xcsh_core::BoxFuture<'a, Result<AgentToolResult, ToolError>> {
            Box::pin(async { Ok(().into()) })
        }
    }
    let error = Session::builder()
        .custom::<Echo>()
        .custom::<Echo>()
        .tool(Named("9lives"))
        .tool(Named("resolve"))
        .build()
        .unwrap_err();
    assert_eq!(error.problems().len(), 3, "{error}");
    let text = error.to_string();
    assert!(
        text.starts_with("cannot build the session (3 problems):"),
        "{text}"
    );
    assert!(
        text.contains("two tools are named `echo` (registrations 1 and 2)"),
        "{text}"
    );
    assert!(
        text.contains("tool name `9lives` must start with a letter or `_`"),
        "{text}"
    );
    assert!(
        text.contains("reserved for the runtime's resolve tool"),
        "{text}"
    );
}

#[test]
fn selection_keeps_named_tools_and_resolve_cannot_be_selected() {
    let s = Session::builder()
        .custom::<Rename>()
        .custom::<Echo>()
        .select(["echo"])
        .build()
        .unwrap();
    assert_eq!(s.tool_names(), ["echo"]);
    let s = Session::builder()
        .custom::<Rename>()
        .custom::<Echo>()
        .select(["rename"])
        .build()
        .unwrap();
    assert_eq!(
        s.tool_names(),
        ["rename", "resolve"],
        "resolve follows the pushing tool"
    );
    let error = Session::builder()
        .custom::<Echo>()
        .select(["resolve", "ecco"])
        .build()
        .unwrap_err();
    let text = error.to_string();
    assert!(text.contains("`resolve` cannot be selected"), "{text}");
    assert!(
        text.contains("selected tool `ecco` is not registered; did you mean `echo`?"),
        "{text}"
    );
}

#[tokio::test]
async fn suites_register_their_tools() {
    let suite = ToolSuite::new().with::<Echo>().with::<Rename>();
    let s = Session::builder().suite(suite).build().unwrap();
    assert_eq!(s.tool_names(), ["echo", "rename", "resolve"]);
}

#[test]
fn a_context_and_its_clones_share_one_cancellation_token() {
    // Made when first asked for, but one token for the call and every clone of its context.
    let ctx = ToolContext::new();
    let clone = ctx.clone();
    assert!(!ctx.is_cancelled() && !clone.is_cancelled());
    clone.cancellation().cancel();
    assert!(ctx.is_cancelled() && ctx.cancellation().is_cancelled());

    let token = CancellationToken::new();
    let given = ToolContext::new().with_cancellation(token.clone());
    token.cancel();
    assert!(given.is_cancelled() && given.clone().is_cancelled());
}

#[tokio::test]
async fn a_context_without_a_store_refuses_pushes_with_the_exact_message() {
    let ctx = ToolContext::new();
    let error = ctx.push_pending_action(Plan(1)).unwrap_err();
    assert_eq!(
        error.to_string(),
        "Pending action store unavailable for custom tools in this runtime."
    );
    assert_eq!(STORE_UNAVAILABLE, error.message());
    assert!(ctx.reminders().is_empty(), "no reminder for a failed push");
}

#[tokio::test]
async fn sessions_from_one_registry_have_separate_stacks() {
    let registry = Session::builder()
        .custom::<Rename>()
        .build_registry()
        .unwrap();
    let a = registry.session();
    let b = registry.session();
    assert_ne!(a.id(), b.id());
    a.call("rename", json!({"files": ["x"]})).await;
    assert_eq!(a.pending().len(), 1);
    assert_eq!(b.pending().len(), 0);
    let result = b
        .call("resolve", json!({"action": "apply", "reason": "r"}))
        .await;
    assert_eq!(result.text_content(), xcsh_core::NOTHING_PENDING);
    assert_eq!(a.pending().len(), 1);
}

#[tokio::test]
async fn store_events_report_push_pop_and_restore() {
    struct Failing;
    impl PendingAction for Failing {
        fn label(&self) -> String {
            "Fail: once".into()
        }
        async fn apply(&mut self, _reason: &str) -> Result<AgentToolResult, ToolError> {
            Err(ToolError::new("no"))
        }
    }
    let s = session();
    let mut events = s.pending().subscribe();
    let id = s.pending().push(Failing);
    s.call("resolve", json!({"action": "apply", "reason": "r"}))
        .await;
    let mut kinds = Vec::new();
    while let Ok(event) = events.try_recv() {
        kinds.push(match event {
            PendingEvent::Pushed(s) => ("pushed", s.id),
            PendingEvent::Popped(s) => ("popped", s.id),
            PendingEvent::Restored(s) => ("restored", s.id),
            other => panic!("an event this test does not know: {other:?}"),
        });
    }
    assert_eq!(kinds, [("pushed", id), ("popped", id), ("restored", id)]);
}
