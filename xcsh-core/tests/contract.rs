//! The pending-action contract at its edges: no pushed action is ever a dead end, a failed
//! apply keeps LIFO order, and every failure carries a kind as well as its exact text.

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::Notify;
use xcsh_core::{
    AgentToolResult, CustomTool, Dialect, ErrorKind, PendingAction, PendingActionStore,
    ResolveAction, ResolveTool, Session, Tool, ToolContext, ToolError,
};

/// An action whose outcome each test chooses.
struct Step {
    name: &'static str,
    apply: Outcome,
    reject_panics: bool,
}

enum Outcome {
    Applies,
    /// Returns `Ok` with an error result: a failed apply all the same.
    ErrorResult,
    /// Waits until told, then fails.
    FailsAfter(Arc<Notify>, Arc<Notify>),
}

impl Step {
    fn applies(name: &'static str) -> Self {
        Step {
            name,
            apply: Outcome::Applies,
            reject_panics: false,
        }
    }
}

impl PendingAction for Step {
    fn label(&self) -> String {
        format!("Step: {}", self.name)
    }
    async fn apply(&mut self, _reason: &str) -> Result<AgentToolResult, ToolError> {
        match &self.apply {
            Outcome::Applies => Ok(format!("Did {}.", self.name).into()),
            Outcome::ErrorResult => Ok(AgentToolResult::error("the disk is read-only")),
            Outcome::FailsAfter(started, release) => {
                started.notify_one();
                release.notified().await;
                Err(ToolError::new("the remote refused"))
            }
        }
    }
    async fn reject(&mut self, _reason: &str) -> Option<AgentToolResult> {
        assert!(!self.reject_panics, "reject hook exploded");
        None
    }
}

/// Pushes a pending action without declaring that it may (`PUSHES_PENDING_ACTIONS` left
/// `false`): the case that used to leave the action with no way out.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Undeclared {}

impl CustomTool for Undeclared {
    const NAME: &'static str = "undeclared";
    const DESCRIPTION: &'static str = "Pushes without declaring it.";
    async fn execute(self, ctx: &ToolContext) -> Result<AgentToolResult, ToolError> {
        ctx.push_pending_action(Step::applies("undeclared"))?;
        Ok("Previewed. Call resolve to apply or discard.".into())
    }
}

/// A read-only neighbour, for calls the strict gate refuses.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Look {}

impl CustomTool for Look {
    const NAME: &'static str = "look";
    const DESCRIPTION: &'static str = "Looks around.";
    async fn execute(self, _ctx: &ToolContext) -> Result<AgentToolResult, ToolError> {
        Ok("Nothing to see.".into())
    }
}

/// The tool names of definitions in any dialect's shape: the shallowest `name` in each.
fn names(definitions: &[Value]) -> Vec<String> {
    fn shallowest_name(value: &Value) -> Option<String> {
        let object = value.as_object()?;
        if let Some(Value::String(name)) = object.get("name") {
            return Some(name.clone());
        }
        object.values().find_map(shallowest_name)
    }
    definitions
        .iter()
        .map(|d| shallowest_name(d).expect("every definition names its tool"))
        .collect()
}

async fn apply(session: &Session) -> AgentToolResult {
    session
        .call("resolve", json!({"action": "apply", "reason": "ok"}))
        .await
}

#[tokio::test]
async fn an_undeclared_push_lists_routes_and_forces_resolve_until_it_is_resolved() {
    let session = Session::builder()
        .custom::<Undeclared>()
        .custom::<Look>()
        .build()
        .unwrap();
    assert_eq!(session.tool_names(), ["undeclared", "look"]);
    assert_eq!(session.tool_choice(Dialect::Anthropic), None);

    let preview = session.call("undeclared", json!({})).await;
    assert!(!preview.is_error(), "{}", preview.text_content());
    assert_eq!(session.take_reminders().len(), 1);

    // While the action waits, every request offers `resolve` and forces it.
    assert_eq!(session.tool_names(), ["undeclared", "look", "resolve"]);
    for dialect in Dialect::ALL {
        let listed = names(session.definitions(dialect).unwrap());
        assert_eq!(
            listed.last().map(String::as_str),
            Some("resolve"),
            "{dialect}"
        );
    }
    assert_eq!(
        session.tool_choice(Dialect::Anthropic),
        Some(json!({"type": "tool", "name": "resolve"}))
    );

    let applied = apply(&session).await;
    assert_eq!(applied.text_content(), "Did undeclared.");
    assert!(!applied.is_error());

    // Nothing pending: back to the declared list, no force.
    assert_eq!(session.tool_names(), ["undeclared", "look"]);
    assert_eq!(
        names(session.definitions(Dialect::OpenAiChat).unwrap()),
        ["undeclared", "look"]
    );
    assert_eq!(session.tool_choice(Dialect::Anthropic), None);
    // The registry's resting list never changed.
    assert_eq!(session.registry().tools().len(), 2);
}

#[tokio::test]
async fn the_strict_gate_lets_resolve_through_for_an_undeclared_push() {
    let session = Session::builder()
        .custom::<Undeclared>()
        .custom::<Look>()
        .strict_resolve_gate(true)
        .build()
        .unwrap();
    session.call("undeclared", json!({})).await;

    let refused = session.call("look", json!({})).await;
    assert_eq!(refused.error_kind(), Some(&ErrorKind::Refused));
    assert_eq!(
        refused.text_content(),
        "Call refused: 1 pending action(s) await resolution, the most recent being `Step: undeclared`. Call the `resolve` tool first to apply or discard it, then call `look` again."
    );

    let discarded = session
        .call(
            "resolve",
            json!({"action": "discard", "reason": "not needed"}),
        )
        .await;
    assert_eq!(
        discarded.text_content(),
        "Discarded: Step: undeclared. Reason: not needed"
    );
    assert_eq!(
        session.call("look", json!({})).await.text_content(),
        "Nothing to see."
    );
}

#[tokio::test]
async fn a_host_push_onto_a_session_without_pushing_tools_is_resolvable() {
    let session = Session::builder().custom::<Look>().build().unwrap();
    session.pending().push(Step::applies("host"));
    assert_eq!(session.tool_names(), ["look", "resolve"]);
    assert_eq!(apply(&session).await.text_content(), "Did host.");
    assert!(session.pending().is_empty());
}

#[tokio::test]
async fn an_apply_that_returns_an_error_result_failed_and_the_action_stays() {
    let session = Session::builder().custom::<Look>().build().unwrap();
    session.pending().push(Step {
        name: "write",
        apply: Outcome::ErrorResult,
        reject_panics: false,
    });
    let failed = apply(&session).await;
    assert!(failed.is_error());
    assert_eq!(failed.error_kind(), Some(&ErrorKind::ApplyFailed));
    assert_eq!(
        failed.text_content(),
        "Apply failed: the disk is read-only\nThe action `Step: write` is still pending: fix the cause and call `resolve` with action \"apply\" again, or \"discard\" it."
    );
    assert_eq!(session.pending().peek().unwrap().label, "Step: write");
}

#[tokio::test]
async fn a_reject_that_panics_still_discards_and_says_the_hook_failed() {
    let session = Session::builder().custom::<Look>().build().unwrap();
    session.pending().push(Step {
        name: "tmp",
        apply: Outcome::Applies,
        reject_panics: true,
    });
    let discarded = session
        .call("resolve", json!({"action": "discard", "reason": "no"}))
        .await;
    assert_eq!(discarded.error_kind(), Some(&ErrorKind::RejectFailed));
    assert_eq!(
        discarded.text_content(),
        "Discarded: Step: tmp. Reason: no\nThe discard hook failed: reject panicked: reject hook exploded"
    );
    assert!(session.pending().is_empty());
}

#[tokio::test]
async fn a_failed_apply_overtaken_by_a_newer_push_goes_back_under_it() {
    let store = Arc::new(PendingActionStore::new());
    let (started, release) = (Arc::new(Notify::new()), Arc::new(Notify::new()));
    store.push(Step::applies("oldest"));
    store.push(Step {
        name: "slow",
        apply: Outcome::FailsAfter(started.clone(), release.clone()),
        reject_panics: false,
    });

    let resolving = tokio::spawn({
        let store = Arc::clone(&store);
        async move { xcsh_core::resolve(&store, ResolveAction::Apply, "go").await }
    });
    started.notified().await;
    // Pushed while `slow` is being applied: the newest, so it must end on top.
    store.push(Step::applies("newer"));
    release.notify_one();
    let error = resolving.await.unwrap().unwrap_err();
    assert_eq!(error.kind(), ErrorKind::ApplyFailed);
    assert!(
        error
            .to_string()
            .starts_with("Apply failed: the remote refused\n"),
        "{error}"
    );

    let labels: Vec<_> = store.snapshot().into_iter().map(|s| s.label).collect();
    assert_eq!(labels, ["Step: newer", "Step: slow", "Step: oldest"]);
}

#[tokio::test]
async fn resolve_without_a_store_says_so_exactly() {
    let ctx = ToolContext::new();
    let error = ResolveTool
        .execute(&ctx, json!({"action": "apply", "reason": "x"}))
        .await
        .unwrap_err();
    assert_eq!(error.kind(), &ErrorKind::StoreUnavailable);
    assert_eq!(
        error.message(),
        "Pending action store unavailable for custom tools in this runtime."
    );
    let pushed = ctx.push_pending_action(Step::applies("x")).unwrap_err();
    assert_eq!(pushed.kind(), &ErrorKind::StoreUnavailable);
}

#[tokio::test]
async fn every_runtime_failure_carries_its_kind() {
    let session = Session::builder()
        .custom::<Look>()
        .custom::<Undeclared>()
        .build()
        .unwrap();

    let nothing = apply(&session).await;
    assert_eq!(nothing.error_kind(), Some(&ErrorKind::NothingPending));
    assert_eq!(
        nothing.text_content(),
        "No pending action to resolve. Nothing to apply or discard."
    );

    let unknown = session.call("lok", json!({})).await;
    assert_eq!(
        unknown.error_kind(),
        Some(&ErrorKind::UnknownTool { name: "lok".into() })
    );

    let bad = session
        .call("resolve", json!({"action": "maybe", "reason": "x"}))
        .await;
    assert_eq!(
        bad.error_kind(),
        Some(&ErrorKind::InvalidArguments {
            path: "action".into()
        })
    );

    let whole = session.call("look", json!([1])).await;
    assert_eq!(
        whole.error_kind(),
        Some(&ErrorKind::InvalidArguments {
            path: String::new()
        })
    );

    assert_eq!(session.call("look", json!({})).await.error_kind(), None);
}
