//! The `resolve` tool: LIFO order, exact strings, reject hooks, details, failures.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use xcsh_core::{
    AgentToolResult, CustomTool, PendingAction, ResolutionView, ResolveAction, Session,
    ToolContext, ToolError,
};

/// Records every apply/reject so tests can see what ran, in which order, with which reason.
#[derive(Default, Clone)]
struct Journal(Arc<Mutex<Vec<String>>>);

impl Journal {
    fn log(&self, line: String) {
        self.0.lock().unwrap().push(line);
    }
    fn lines(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

enum Behaviour {
    Succeed,
    SucceedSilently,
    Fail,
    Panic,
}

struct Recorded {
    name: &'static str,
    journal: Journal,
    behaviour: Behaviour,
    reject_reply: Option<&'static str>,
    source: Option<&'static str>,
    details: Option<Value>,
}

impl Recorded {
    fn new(name: &'static str, journal: &Journal) -> Self {
        Recorded {
            name,
            journal: journal.clone(),
            behaviour: Behaviour::Succeed,
            reject_reply: None,
            source: None,
            details: None,
        }
    }
}

impl PendingAction for Recorded {
    fn label(&self) -> String {
        format!("Step: {}", self.name)
    }
    async fn apply(&mut self, reason: &str) -> Result<AgentToolResult, ToolError> {
        self.journal.log(format!("apply {} ({reason})", self.name));
        match self.behaviour {
            Behaviour::Succeed => Ok(format!("applied {}", self.name).into()),
            Behaviour::SucceedSilently => Ok(AgentToolResult::empty()),
            Behaviour::Fail => Err(ToolError::new("disk is read-only")),
            Behaviour::Panic => panic!("apply exploded"),
        }
    }
    async fn reject(&mut self, reason: &str) -> Option<AgentToolResult> {
        self.journal.log(format!("reject {} ({reason})", self.name));
        self.reject_reply.map(AgentToolResult::text)
    }
    fn details(&self) -> Option<Value> {
        self.details.clone()
    }
    fn source_tool_name(&self) -> &str {
        self.source.unwrap_or(xcsh_core::DEFAULT_SOURCE_TOOL_NAME)
    }
}

/// A producer tool: pushes whatever the test put in the shared slot.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Produce {
    name: String,
}

type Slot = Mutex<Vec<Recorded>>;

impl CustomTool for Produce {
    const NAME: &'static str = "produce";
    const DESCRIPTION: &'static str = "Pushes the next prepared action.";
    const PUSHES_PENDING_ACTIONS: bool = true;
    async fn execute(self, ctx: &ToolContext) -> Result<AgentToolResult, ToolError> {
        let slot = ctx.extension::<Arc<Slot>>().expect("slot registered");
        let action = {
            let mut slot = slot.lock().unwrap();
            let index = slot
                .iter()
                .position(|a| a.name == self.name)
                .ok_or_else(|| ToolError::new("no such prepared action"))?;
            slot.remove(index)
        };
        ctx.push_pending_action(action)?;
        Ok(format!("Prepared {}.", self.name).into())
    }
}

fn session_with(actions: Vec<Recorded>) -> Session {
    Session::builder()
        .custom::<Produce>()
        .extension(Arc::new(Mutex::new(actions)))
        .build()
        .unwrap()
}

async fn produce(session: &Session, name: &str) {
    let result = session.call("produce", json!({ "name": name })).await;
    assert!(!result.is_error(), "{result:?}");
}

async fn resolve(session: &Session, action: &str, reason: &str) -> AgentToolResult {
    session
        .call("resolve", json!({"action": action, "reason": reason}))
        .await
}

#[tokio::test]
async fn three_producers_are_resolved_in_reverse_order() {
    let journal = Journal::default();
    let session = session_with(vec![
        Recorded::new("one", &journal),
        Recorded::new("two", &journal),
        Recorded::new("three", &journal),
    ]);
    for name in ["one", "two", "three"] {
        produce(&session, name).await;
    }
    let labels: Vec<_> = session
        .pending()
        .snapshot()
        .into_iter()
        .map(|s| s.label)
        .collect();
    assert_eq!(labels, ["Step: three", "Step: two", "Step: one"]);

    assert_eq!(
        resolve(&session, "apply", "r3").await.text_content(),
        "applied three"
    );
    assert_eq!(
        resolve(&session, "discard", "r2").await.text_content(),
        "Discarded: Step: two. Reason: r2"
    );
    assert_eq!(
        resolve(&session, "apply", "r1").await.text_content(),
        "applied one"
    );
    assert_eq!(
        journal.lines(),
        ["apply three (r3)", "reject two (r2)", "apply one (r1)"]
    );
    assert!(!session.pending().has_pending());
}

#[tokio::test]
async fn nothing_pending_is_the_exact_error() {
    let session = session_with(vec![]);
    for action in ["apply", "discard"] {
        let result = resolve(&session, action, "why").await;
        assert!(result.is_error());
        assert_eq!(
            result.text_content(),
            "No pending action to resolve. Nothing to apply or discard."
        );
    }
}

#[tokio::test]
async fn apply_without_text_says_applied_with_the_label() {
    let journal = Journal::default();
    let mut silent = Recorded::new("quiet", &journal);
    silent.behaviour = Behaviour::SucceedSilently;
    let session = session_with(vec![silent]);
    produce(&session, "quiet").await;
    let result = resolve(&session, "apply", "ok").await;
    assert!(!result.is_error());
    assert_eq!(result.text_content(), "Applied: Step: quiet.");
}

#[tokio::test]
async fn reject_result_replaces_the_default_and_its_absence_keeps_it() {
    let journal = Journal::default();
    let mut custom = Recorded::new("custom", &journal);
    custom.reject_reply = Some("Cleaned up the staging area.");
    let plain = Recorded::new("plain", &journal);
    let session = session_with(vec![custom, plain]);

    produce(&session, "plain").await;
    let result = resolve(&session, "discard", "not needed").await;
    assert_eq!(
        result.text_content(),
        "Discarded: Step: plain. Reason: not needed"
    );

    produce(&session, "custom").await;
    let result = resolve(&session, "discard", "wrong target").await;
    assert_eq!(result.text_content(), "Cleaned up the staging area.");
    assert_eq!(
        journal.lines(),
        ["reject plain (not needed)", "reject custom (wrong target)"]
    );
}

#[tokio::test]
async fn details_and_source_tool_name_are_forwarded() {
    let journal = Journal::default();
    let mut named = Recorded::new("named", &journal);
    named.source = Some("batch_rename_preview");
    named.details = Some(json!({"files": 3}));
    let default = Recorded::new("default", &journal);
    let session = session_with(vec![named, default]);

    produce(&session, "named").await;
    let result = resolve(&session, "apply", "because").await;
    let details = result.details.expect("resolve always sets details");
    assert_eq!(details["action"], "apply");
    assert_eq!(details["reason"], "because");
    assert_eq!(details["sourceToolName"], "batch_rename_preview");
    assert_eq!(details["label"], "Step: named");
    assert_eq!(details["details"], json!({"files": 3}));

    produce(&session, "default").await;
    let result = resolve(&session, "discard", "nah").await;
    let details = result.details.unwrap();
    assert_eq!(details["action"], "discard");
    assert_eq!(details["sourceToolName"], "custom_tool");
    assert!(details.get("details").is_none());
}

#[tokio::test]
async fn failed_apply_keeps_the_action_on_top_for_a_retry_or_discard() {
    let journal = Journal::default();
    let below = Recorded::new("below", &journal);
    let mut failing = Recorded::new("failing", &journal);
    failing.behaviour = Behaviour::Fail;
    let session = session_with(vec![below, failing]);
    produce(&session, "below").await;
    produce(&session, "failing").await;
    let before = session.pending().snapshot();

    let result = resolve(&session, "apply", "try").await;
    assert!(result.is_error());
    assert!(
        result
            .text_content()
            .starts_with("Apply failed: disk is read-only"),
        "{}",
        result.text_content()
    );
    assert_eq!(
        session.pending().snapshot(),
        before,
        "same actions, same ids, same order"
    );

    // The model can retry (fails again) and then discard.
    assert!(resolve(&session, "apply", "retry").await.is_error());
    assert_eq!(
        resolve(&session, "discard", "give up").await.text_content(),
        "Discarded: Step: failing. Reason: give up"
    );
    assert_eq!(session.pending().len(), 1);
    assert_eq!(session.pending().peek().unwrap().label, "Step: below");
}

#[tokio::test]
async fn panicking_apply_keeps_the_action_and_the_session() {
    let journal = Journal::default();
    let mut panicking = Recorded::new("boom", &journal);
    panicking.behaviour = Behaviour::Panic;
    let session = session_with(vec![panicking, Recorded::new("after", &journal)]);
    produce(&session, "boom").await;

    let result = resolve(&session, "apply", "go").await;
    assert!(result.is_error());
    let text = result.text_content();
    assert!(text.starts_with("Apply failed: "), "{text}");
    assert!(text.contains("apply exploded"), "{text}");
    assert_eq!(session.pending().peek().unwrap().label, "Step: boom");

    // The session still works.
    produce(&session, "after").await;
    assert_eq!(
        resolve(&session, "apply", "fine").await.text_content(),
        "applied after"
    );
    assert_eq!(session.pending().peek().unwrap().label, "Step: boom");
}

#[tokio::test]
async fn resolve_arguments_are_strict() {
    let session = session_with(vec![]);
    let cases = [
        (json!({"action": "apply"}), "missing field `reason`"),
        (json!({"reason": "x"}), "missing field `action`"),
        (
            json!({"action": "commit", "reason": "x"}),
            "action: unknown variant `commit`, expected `apply` or `discard`",
        ),
        (
            json!({"action": "apply", "reason": "x", "force": true}),
            "unknown field `force`",
        ),
        (
            json!({"action": "apply", "reason": 5}),
            "reason: invalid type: integer `5`, expected a string",
        ),
    ];
    for (args, expected) in cases {
        let result = session.call("resolve", args.clone()).await;
        assert!(result.is_error(), "{args}");
        assert!(
            result.text_content().contains(expected),
            "{args}: {}",
            result.text_content()
        );
    }
    let schema = session
        .tools()
        .iter()
        .find(|t| t.name() == "resolve")
        .unwrap()
        .parameters()
        .clone();
    assert_eq!(
        Value::Object((*schema).clone()),
        json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["apply", "discard"], "description": "\"apply\" performs the previewed change; \"discard\" drops it"},
                "reason": {"type": "string", "description": "Why you're applying or discarding"},
                "handle": {"type": "string", "description": "The pending-action handle a preview's result gave, when it gave one; omit it otherwise"}
            },
            "required": ["action", "reason"],
            "additionalProperties": false
        })
    );
}

#[tokio::test]
async fn reason_is_passed_verbatim() {
    let journal = Journal::default();
    let session = session_with(vec![Recorded::new("x", &journal)]);
    produce(&session, "x").await;
    let reason = "  multi\nline — ünïcode  ";
    resolve(&session, "apply", reason).await;
    assert_eq!(journal.lines(), [format!("apply x ({reason})")]);
}

#[test]
fn renderer_splits_the_label_at_the_first_colon_space() {
    let view = ResolutionView::new(
        ResolveAction::Apply,
        "AST Edit: 2 replacements in 1 file",
        "tests pass",
    );
    assert_eq!(
        view.to_string(),
        "Accept: 2 replacements in 1 file [AST Edit]\n  tests pass"
    );
    let view = ResolutionView::new(ResolveAction::Discard, "AST Edit: a: b", "wrong file");
    assert_eq!(view.to_string(), "Discard: a: b [AST Edit]\n  wrong file");
    assert_eq!(view.source, Some("AST Edit"));
    let ansi = view.to_ansi();
    assert!(ansi.contains("Discard:") && ansi.contains("[AST Edit]") && ansi.contains("\x1b["));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_pushes_are_each_applied_exactly_once() {
    const N: usize = 1000;
    struct Count {
        index: usize,
        applied: Arc<Vec<AtomicUsize>>,
    }
    impl PendingAction for Count {
        fn label(&self) -> String {
            format!("Count: {}", self.index)
        }
        async fn apply(&mut self, _reason: &str) -> Result<AgentToolResult, ToolError> {
            self.applied[self.index].fetch_add(1, Ordering::SeqCst);
            tokio::task::yield_now().await;
            Ok(().into())
        }
    }

    let applied: Arc<Vec<AtomicUsize>> = Arc::new((0..N).map(|_| AtomicUsize::new(0)).collect());
    let session = session_with(vec![]);
    let store = session.pending().clone();
    let mut pushes = Vec::new();
    for index in 0..N {
        let store = store.clone();
        let applied = applied.clone();
        pushes.push(tokio::spawn(async move {
            let ctx = ToolContext::new().with_pending_store(store);
            ctx.push_pending_action(Count { index, applied }).unwrap()
        }));
    }
    let mut ids = Vec::new();
    for push in pushes {
        ids.push(push.await.unwrap());
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), N, "ids are unique");
    assert_eq!(store.len(), N);

    // Resolve concurrently from many tasks too: each action must run exactly once.
    let mut resolves = Vec::new();
    for _ in 0..N {
        let session = session.clone();
        resolves.push(tokio::spawn(async move {
            resolve(&session, "apply", "bulk").await
        }));
    }
    for r in resolves {
        let result = r.await.unwrap();
        assert!(!result.is_error(), "{result:?}");
    }
    assert!(store.is_empty());
    for (index, count) in applied.iter().enumerate() {
        assert_eq!(count.load(Ordering::SeqCst), 1, "action {index}");
    }
    assert_eq!(
        resolve(&session, "apply", "none left").await.text_content(),
        xcsh_core::NOTHING_PENDING
    );
}

#[tokio::test(start_paused = true)]
async fn cancelling_a_resolve_call_never_loses_the_action() {
    struct Slow;
    impl PendingAction for Slow {
        fn label(&self) -> String {
            "Slow: apply".into()
        }
        async fn apply(&mut self, _reason: &str) -> Result<AgentToolResult, ToolError> {
            tokio::time::sleep(std::time::Duration::from_secs(5)).await;
            Err(ToolError::new("gave up"))
        }
    }
    let session = session_with(vec![]);
    session.pending().push(Slow);
    let token = xcsh_core::CancellationToken::new();
    let call = {
        let session = session.clone();
        let token = token.clone();
        tokio::spawn(async move {
            session
                .call_with(
                    "resolve",
                    json!({"action": "apply", "reason": "x"}),
                    xcsh_core::CallOptions {
                        cancellation: Some(token),
                        ..Default::default()
                    },
                )
                .await
        })
    };
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    token.cancel();
    let result = call.await.unwrap();
    assert!(result.is_error());
    assert!(
        result.text_content().starts_with("Cancelled"),
        "{}",
        result.text_content()
    );
    // The apply keeps running to completion on its own task; it fails, so the action is back.
    tokio::time::sleep(std::time::Duration::from_secs(10)).await;
    assert_eq!(session.pending().peek().unwrap().label, "Slow: apply");
}
