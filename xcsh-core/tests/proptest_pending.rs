//! Property tests: random sequences of pushes, applies, discards, failing and panicking
//! applies, and bursts of concurrent callers, run through a real session's `resolve` tool and
//! checked step by step against a plain model of a LIFO stack.
//!
//! The model's rules: `resolve` always takes the top; an apply that fails (or panics) leaves
//! the action on top unchanged; a successful apply or any discard removes it; nothing is ever
//! applied twice or lost. Concurrent `resolve` calls are serialised by the store, so `k` of them
//! at once must give the same outcomes (as a multiset) as `k` in a row; concurrent pushes may
//! land in any order, but all of them land, on top.

use std::sync::{Arc, Mutex, PoisonError};

use proptest::prelude::*;
use serde::Deserialize;
use serde_json::{Value, json};
use xcsh_core::{
    APPLY_FAILED_PREFIX, AgentToolResult, BoxFuture, JsonObject, NOTHING_PENDING, PendingAction,
    Session, Tool, ToolContext, ToolError, decode_arguments,
};

/// What happened to an action, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Event {
    Applied(u64),
    Rejected(u64),
}

type Journal = Arc<Mutex<Vec<Event>>>;

fn record(journal: &Journal, event: Event) {
    journal
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(event);
}

/// An action that fails its first `fails` applies (by error, or by panicking), then works.
struct Act {
    token: u64,
    fails: u32,
    panics: bool,
    journal: Journal,
}

impl PendingAction for Act {
    fn label(&self) -> String {
        format!("Act: {}", self.token)
    }

    async fn apply(&mut self, _reason: &str) -> Result<AgentToolResult, ToolError> {
        tokio::task::yield_now().await;
        if self.fails > 0 {
            self.fails -= 1;
            if self.panics {
                panic!("act {} panicked", self.token);
            }
            return Err(ToolError::new(format!("act {} failed", self.token)));
        }
        record(&self.journal, Event::Applied(self.token));
        Ok(AgentToolResult::text(format!("applied {}", self.token)))
    }

    async fn reject(&mut self, _reason: &str) -> Option<AgentToolResult> {
        record(&self.journal, Event::Rejected(self.token));
        None
    }
}

/// A tool that pushes one [`Act`] per call.
struct Producer {
    journal: Journal,
    params: Arc<JsonObject>,
}

#[derive(Deserialize)]
struct ProduceArgs {
    token: u64,
    fails: u32,
    panics: bool,
}

impl Tool for Producer {
    fn name(&self) -> &str {
        "produce"
    }
    fn label(&self) -> &str {
        "Produce"
    }
    fn description(&self) -> &str {
        "Pushes a pending action."
    }
    fn parameters(&self) -> &Arc<JsonObject> {
        &self.params
    }
    fn pushes_pending_actions(&self) -> bool {
        true
    }
    fn execute<'a>(
        &'a self,
        ctx: &'a ToolContext,
        args: Value,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            let args: ProduceArgs = decode_arguments("produce", args)?;
            ctx.push_pending_action(Act {
                token: args.token,
                fails: args.fails,
                panics: args.panics,
                journal: Arc::clone(&self.journal),
            })?;
            Ok(AgentToolResult::text("pushed"))
        })
    }
}

#[derive(Clone, Debug)]
enum Op {
    Push { fails: u32, panics: bool },
    Apply,
    Discard,
    ConcurrentApplies(usize),
    ConcurrentDiscards(usize),
    ConcurrentPushes(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u32..3, any::<bool>()).prop_map(|(fails, panics)| Op::Push { fails, panics }),
        3 => Just(Op::Apply),
        2 => Just(Op::Discard),
        1 => (2usize..7).prop_map(Op::ConcurrentApplies),
        1 => (2usize..5).prop_map(Op::ConcurrentDiscards),
        1 => (2usize..6).prop_map(Op::ConcurrentPushes),
    ]
}

/// What one `resolve` call answered, reduced to what the model predicts.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    Applied(u64),
    ApplyFailed(u64),
    Discarded(u64),
    NothingPending,
}

#[derive(Clone, Debug)]
struct ModelAct {
    token: u64,
    fails: u32,
}

#[derive(Default)]
struct Model {
    stack: Vec<ModelAct>,
    journal: Vec<Event>,
}

impl Model {
    fn apply(&mut self) -> Outcome {
        let Some(top) = self.stack.last_mut() else {
            return Outcome::NothingPending;
        };
        if top.fails > 0 {
            top.fails -= 1;
            return Outcome::ApplyFailed(top.token);
        }
        let token = top.token;
        self.stack.pop();
        self.journal.push(Event::Applied(token));
        Outcome::Applied(token)
    }

    fn discard(&mut self) -> Outcome {
        match self.stack.pop() {
            Some(top) => {
                self.journal.push(Event::Rejected(top.token));
                Outcome::Discarded(top.token)
            }
            None => Outcome::NothingPending,
        }
    }
}

fn token_of_label(label: &str) -> u64 {
    label
        .strip_prefix("Act: ")
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| panic!("unexpected label {label:?}"))
}

/// Reads a `resolve` answer as an [`Outcome`], checking its shape on the way.
fn outcome(action: &str, result: &AgentToolResult) -> Outcome {
    let text = result.text_content();
    if text == NOTHING_PENDING {
        assert!(result.is_error(), "{text}");
        return Outcome::NothingPending;
    }
    let label = result
        .details
        .as_ref()
        .and_then(|d| d.get("label"))
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("a resolve result without a label: {result:?}"));
    let token = token_of_label(label);
    match action {
        "apply" if result.is_error() => {
            assert!(text.starts_with(APPLY_FAILED_PREFIX), "{text}");
            assert!(text.contains(&format!("act {token}")), "{text}");
            assert!(text.contains("is still pending"), "{text}");
            Outcome::ApplyFailed(token)
        }
        "apply" => {
            assert_eq!(text, format!("applied {token}"));
            Outcome::Applied(token)
        }
        _ => {
            assert!(!result.is_error(), "{text}");
            assert!(text.starts_with("Discarded: Act: "), "{text}");
            Outcome::Discarded(token)
        }
    }
}

async fn resolve(session: &Session, action: &'static str) -> Outcome {
    let result = session
        .call("resolve", json!({"action": action, "reason": "property"}))
        .await;
    outcome(action, &result)
}

async fn push(session: &Session, token: u64, fails: u32, panics: bool) {
    let result = session
        .call(
            "produce",
            json!({"token": token, "fails": fails, "panics": panics}),
        )
        .await;
    assert!(!result.is_error(), "{}", result.text_content());
}

fn stack_tokens(session: &Session) -> Vec<u64> {
    // snapshot() is top first; the model keeps the top last.
    let mut tokens: Vec<u64> = session
        .pending()
        .snapshot()
        .iter()
        .map(|s| token_of_label(&s.label))
        .collect();
    tokens.reverse();
    tokens
}

async fn run(ops: Vec<Op>) {
    let journal: Journal = Arc::default();
    let session = Session::builder()
        .tool(Producer {
            journal: Arc::clone(&journal),
            params: Arc::new(JsonObject::from_iter([(
                "type".to_owned(),
                json!("object"),
            )])),
        })
        .build()
        .expect("session");
    let mut model = Model::default();
    let mut next_token = 0u64;
    for (step, op) in ops.into_iter().enumerate() {
        let context = format!("step {step} ({op:?})");
        match op {
            Op::Push { fails, panics } => {
                next_token += 1;
                push(&session, next_token, fails, panics).await;
                model.stack.push(ModelAct {
                    token: next_token,
                    fails,
                });
            }
            Op::Apply => {
                let got = resolve(&session, "apply").await;
                assert_eq!(got, model.apply(), "{context}");
            }
            Op::Discard => {
                let got = resolve(&session, "discard").await;
                assert_eq!(got, model.discard(), "{context}");
            }
            Op::ConcurrentApplies(k) | Op::ConcurrentDiscards(k) => {
                let action = if matches!(op, Op::ConcurrentApplies(_)) {
                    "apply"
                } else {
                    "discard"
                };
                let calls: Vec<_> = (0..k)
                    .map(|_| {
                        let session = session.clone();
                        tokio::spawn(async move { resolve(&session, action).await })
                    })
                    .collect();
                let mut got = Vec::new();
                for call in calls {
                    got.push(call.await.expect("a resolve task panicked"));
                }
                let mut expected: Vec<Outcome> = (0..k)
                    .map(|_| {
                        if action == "apply" {
                            model.apply()
                        } else {
                            model.discard()
                        }
                    })
                    .collect();
                got.sort();
                expected.sort();
                assert_eq!(got, expected, "{context}");
            }
            Op::ConcurrentPushes(k) => {
                let tokens: Vec<u64> = (1..=k as u64).map(|i| next_token + i).collect();
                next_token += k as u64;
                let calls: Vec<_> = tokens
                    .iter()
                    .map(|&token| {
                        let session = session.clone();
                        tokio::spawn(async move { push(&session, token, 0, false).await })
                    })
                    .collect();
                for call in calls {
                    call.await.expect("a push task panicked");
                }
                // Any order among them, but all of them, above what was there.
                let now = stack_tokens(&session);
                let below = model.stack.len();
                let mut landed = now[below.min(now.len())..].to_vec();
                landed.sort_unstable();
                assert_eq!(landed, tokens, "{context}: pushes lost or misplaced");
                model.stack.extend(
                    now[below..]
                        .iter()
                        .map(|&token| ModelAct { token, fails: 0 }),
                );
            }
        }
        let model_tokens: Vec<u64> = model.stack.iter().map(|a| a.token).collect();
        assert_eq!(stack_tokens(&session), model_tokens, "{context}: stack");
        let journal_now = journal
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        assert_eq!(journal_now, model.journal, "{context}: journal");
    }

    // Nothing lost, nothing applied twice: every token is pending, applied or rejected, once.
    let journal = journal
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .clone();
    let mut seen: Vec<u64> = journal
        .iter()
        .map(|e| match e {
            Event::Applied(t) | Event::Rejected(t) => *t,
        })
        .chain(stack_tokens(&session))
        .collect();
    seen.sort_unstable();
    assert_eq!(seen, (1..=next_token).collect::<Vec<_>>());
    // And the session still works: drain it.
    while session.pending().has_pending() {
        let _ = resolve(&session, "discard").await;
    }
    assert_eq!(resolve(&session, "apply").await, Outcome::NothingPending);
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(96),
        ..ProptestConfig::default()
    })]

    #[test]
    fn resolve_matches_a_lifo_model(ops in proptest::collection::vec(op(), 1..60)) {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        runtime.block_on(run(ops));
    }
}
