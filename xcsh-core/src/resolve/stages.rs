//! A resolve, stage by stage: **take** the top action (narrowed to some files for a partial
//! apply), pass it through the approval **gate** (a model's apply under a policy), **run** its
//! apply or discard, and **record** it (the result's details and the audit line). Each stage
//! leaves the stack as it found it when it stops the resolve: an action not resolved goes
//! back where it was.

use serde_json::Value;

use super::record::ResolveAudit;
use super::{Resolution, resolve_details};
use crate::action::{PendingSummary, ResolveAction};
use crate::approval::gate::{DecidedBy, Gate, Note, Outcome, approval_gate};
use crate::approval::{ApprovalConfig, ApprovalPolicy, EffectFacts, FileState};
use crate::error::{ErrorKind, ResolveError, ToolError};
use crate::pending::{PendingActionStore, PendingEntry};
use crate::result::{AgentToolResult, Content};
use crate::schema::JsonObject;

/// Who is resolving: the host (a person's decision already) or the model through the
/// `resolve` tool, under the session's approval policy.
#[derive(Clone, Copy)]
pub(crate) enum Caller<'a> {
    Host,
    Model(&'a ApprovalConfig),
}

/// Applies or discards the top action of `store` (only its part on `only`, for a partial
/// apply), as `caller` asks.
pub(crate) async fn resolve_as(
    store: &PendingActionStore,
    action: ResolveAction,
    reason: &str,
    caller: Caller<'_>,
    only: Option<&[String]>,
) -> Result<Resolution, ResolveError> {
    // One resolve at a time: "the top" means the same thing for the whole of it.
    let _serialised = store.resolving.lock().await;
    let mut taken = take(store, reason, only)?;
    let mut resolving = Resolving::new(store, taken.entry_mut().summary(), action, reason, caller);
    resolving.effect_digest = taken.entry_mut().effect_digest().to_owned();
    match gate(&mut taken, &mut resolving).await {
        Passed::Through => {}
        Passed::Dropped(result) => return Ok(resolving.finish(ResolveAction::Discard, result)),
        Passed::Held(message) => {
            taken.put_back();
            resolving.record(Outcome::Pending, None);
            return Err(ResolveError::NotApproved {
                approval: Box::new(resolving.note.json(&resolving.effect_digest)),
                summary: Box::new(resolving.summary),
                reason: reason.to_owned(),
                message,
            });
        }
    }
    let result = run(&mut taken, &resolving).await?;
    Ok(resolving.finish(action, result))
}

/// What the stages of one resolve share.
struct Resolving<'a> {
    store: &'a PendingActionStore,
    summary: PendingSummary,
    effect_digest: String,
    action: ResolveAction,
    reason: &'a str,
    caller: Caller<'a>,
    /// The result's details so far.
    details: JsonObject,
    /// Who decided, and how; for the result and the audit line.
    note: Note,
    /// Whether an approval policy looked at it (the result then says who let it through).
    gated: bool,
}

impl<'a> Resolving<'a> {
    fn new(
        store: &'a PendingActionStore,
        summary: &PendingSummary,
        action: ResolveAction,
        reason: &'a str,
        caller: Caller<'a>,
    ) -> Self {
        Resolving {
            store,
            summary: summary.clone(),
            effect_digest: String::new(),
            action,
            reason,
            caller,
            details: resolve_details(action, reason, summary),
            note: Note {
                policy: "model",
                decided_by: match caller {
                    Caller::Host => DecidedBy::Host,
                    Caller::Model(_) => DecidedBy::Model,
                },
                rule: None,
                decision: None,
                answer: None,
            },
            gated: false,
        }
    }

    /// Stage 4: the audit line, and the details of the result.
    fn record(&self, outcome: Outcome, files: Option<(&[String], &[FileState])>) {
        ResolveAudit {
            store: self.store,
            summary: &self.summary,
            action: self.action,
            reason: self.reason,
            effect_digest: &self.effect_digest,
        }
        .record(&self.note, outcome, files);
    }

    /// The resolution: `result` with the resolve's details (its own kept under `result`).
    fn finish(mut self, action: ResolveAction, mut result: AgentToolResult) -> Resolution {
        if let Some(own) = result.details.take() {
            self.details.insert("result".into(), own);
        }
        result.details = Some(Value::Object(self.details));
        Resolution {
            action,
            reason: self.reason.to_owned(),
            summary: self.summary,
            result,
        }
    }
}

/// Stage 1: takes the top action off the stack, narrowed to `only` for a partial apply. An
/// action that cannot be narrowed goes back, whole, and the resolve is refused.
fn take<'a>(
    store: &'a PendingActionStore,
    reason: &str,
    only: Option<&[String]>,
) -> Result<PutBackOnDrop<'a>, ResolveError> {
    let (place, mut entry) = store.pop().ok_or(ResolveError::NothingPending)?;
    if let Some(files) = only {
        if let Err(why) = entry.narrow(files) {
            let summary = entry.summary().clone();
            store.restore(place, entry);
            return Err(ResolveError::ApplyFailed {
                summary: Box::new(summary),
                reason: reason.to_owned(),
                cause: ToolError::with_kind(ErrorKind::Refused, why),
            });
        }
        store.narrowed(&entry);
    }
    // If the resolve is dropped mid-way (its caller was cancelled), the action goes back on
    // the stack instead of vanishing.
    Ok(PutBackOnDrop {
        store,
        place,
        entry: Some(entry),
    })
}

/// What the gate let through.
enum Passed {
    /// Go on to apply (or discard).
    Through,
    /// Declined or denied: discarded, with this result.
    Dropped(AgentToolResult),
    /// Not approved yet: back on the stack, and why.
    Held(String),
}

/// Stage 2: a model's apply under an approval policy goes through the gate (rules, a
/// person); anything else passes. An accepted apply passes only if the effect is still the one
/// approved.
async fn gate(taken: &mut PutBackOnDrop<'_>, resolving: &mut Resolving<'_>) -> Passed {
    let config = match resolving.caller {
        Caller::Model(config)
            if resolving.action == ResolveAction::Apply
                && !matches!(config.policy, ApprovalPolicy::Model) =>
        {
            config
        }
        _ => return Passed::Through,
    };
    resolving.note.policy = config.policy.name();
    resolving.gated = true;
    let digest = resolving.effect_digest.clone();
    let mut gate = approval_gate(
        config,
        &resolving.summary,
        resolving.reason,
        &digest,
        &mut resolving.note,
    )
    .await;
    if let Gate::Accepted(approved) = &gate {
        // What is written must be what was approved: the digest the person saw, the one
        // taken at push time and the action's own now must all agree.
        gate = match taken.entry_mut().current_effect_digest() {
            Some(now) if &now == approved && now == digest => Gate::Go,
            now => Gate::Hold(format!(
                "the approval given was for another effect ({approved}) than the one pending ({}). Nothing was written. Call `resolve` with action \"apply\" to ask again, or \"discard\" it.",
                now.as_deref().unwrap_or("unknown")
            )),
        };
    }
    resolving
        .details
        .insert("approval".into(), resolving.note.json(&digest));
    match gate {
        Gate::Go | Gate::Accepted(_) => Passed::Through,
        Gate::Drop(mut result, outcome) => {
            let hook = taken.entry_mut().reject(resolving.reason).await;
            taken.consume();
            if let Err(cause) = hook {
                result
                    .content
                    .push(Content::text(format!("The discard hook failed: {cause}")));
            }
            resolving.record(outcome, None);
            Passed::Dropped(result)
        }
        Gate::Hold(message) => Passed::Held(message),
    }
}

/// Stage 3: applies or discards the action, and records it. A failed apply puts it back.
async fn run(
    taken: &mut PutBackOnDrop<'_>,
    resolving: &Resolving<'_>,
) -> Result<AgentToolResult, ResolveError> {
    let (summary, reason) = (&resolving.summary, resolving.reason);
    match resolving.action {
        ResolveAction::Apply => {
            // The audit log hashes each file the effect touches, before and after.
            let files = resolving.store.audit().map(|audit| {
                let paths = EffectFacts::of(summary).files;
                let before = audit.states(&paths);
                (paths, before)
            });
            let files_ref = files.as_ref().map(|(p, b)| (p.as_slice(), b.as_slice()));
            match taken.entry_mut().apply(reason).await {
                Ok(mut result) => {
                    taken.consume();
                    if !result.has_text() {
                        result
                            .content
                            .push(Content::text(format!("Applied: {}.", summary.label)));
                    }
                    if resolving.gated {
                        let by = match &resolving.note.decided_by {
                            DecidedBy::Person => "Approved by the person.".to_owned(),
                            _ => format!(
                                "Allowed by rule `{}` of the approval policy.",
                                resolving.note.rule.as_deref().unwrap_or("default")
                            ),
                        };
                        result.content.push(Content::text(by));
                    }
                    resolving.record(Outcome::Applied, files_ref);
                    Ok(result)
                }
                Err(cause) => {
                    taken.put_back();
                    resolving.record(Outcome::Failed, files_ref);
                    Err(ResolveError::ApplyFailed {
                        summary: Box::new(summary.clone()),
                        reason: reason.to_owned(),
                        cause,
                    })
                }
            }
        }
        ResolveAction::Discard => {
            let outcome = taken.entry_mut().reject(reason).await;
            taken.consume();
            resolving.record(Outcome::Discarded, None);
            let default =
                || AgentToolResult::text(format!("Discarded: {}. Reason: {reason}", summary.label));
            Ok(match outcome {
                Ok(Some(result)) => result,
                Ok(None) => default(),
                // The person asked to drop it: it stays dropped, but the model hears that
                // the clean-up hook failed.
                Err(cause) => {
                    let mut result = default().with_error_kind(ErrorKind::RejectFailed);
                    result
                        .content
                        .push(Content::text(format!("The discard hook failed: {cause}")));
                    result
                }
            })
        }
    }
}

/// Holds a popped entry; unless consumed, puts it back on the stack when dropped.
struct PutBackOnDrop<'a> {
    store: &'a PendingActionStore,
    /// Where the entry was, from the bottom: where it goes back.
    place: usize,
    entry: Option<PendingEntry>,
}

impl PutBackOnDrop<'_> {
    fn entry_mut(&mut self) -> &mut PendingEntry {
        self.entry
            .as_mut()
            .expect("the entry is only taken by consume/put_back, which end its use")
    }

    /// The action was resolved: drop it for good (and from the kept stack).
    fn consume(&mut self) {
        if let Some(entry) = self.entry.take() {
            self.store.resolved(entry.summary().id);
        }
    }

    /// The action stays pending: back where it was.
    fn put_back(&mut self) {
        if let Some(entry) = self.entry.take() {
            self.store.restore(self.place, entry);
        }
    }
}

impl Drop for PutBackOnDrop<'_> {
    fn drop(&mut self) {
        self.put_back();
    }
}
