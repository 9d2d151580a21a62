//! The approval gate `resolve` passes an apply the model asks for through: the policy, the
//! rules, the person (through the approver), and the audit line of each resolve.

use std::panic::AssertUnwindSafe;

use futures_util::FutureExt;
use serde_json::{Value, json};

use super::audit::FileState;
use super::{
    ApprovalAnswer, ApprovalConfig, ApprovalPolicy, ApprovalRequest, Decision, EffectFacts,
};
use crate::error::ErrorKind;
use crate::pending::{PendingActionStore, PendingSummary};
use crate::resolve::ResolveAction;
use crate::result::AgentToolResult;

/// How an apply was let through, or why not, for the result and the audit log.
pub(crate) struct Note {
    pub(crate) policy: &'static str,
    pub(crate) decided_by: String,
    pub(crate) rule: Option<String>,
    pub(crate) decision: Option<Decision>,
    pub(crate) answer: Option<&'static str>,
}

impl Note {
    pub(crate) fn json(&self, effect_digest: &str) -> Value {
        json!({
            "policy": self.policy,
            "decidedBy": self.decided_by,
            "rule": self.rule,
            "decision": self.decision.map(Decision::as_str),
            "answer": self.answer,
            "effectDigest": effect_digest,
        })
    }
}

/// What every audit line of one resolve shares.
pub(crate) struct ResolveAudit<'a> {
    pub(crate) store: &'a PendingActionStore,
    pub(crate) summary: &'a PendingSummary,
    pub(crate) action: ResolveAction,
    pub(crate) reason: &'a str,
    pub(crate) effect_digest: &'a str,
}

impl ResolveAudit<'_> {
    /// Appends the resolve's line to the session's audit log, if it keeps one: who decided,
    /// the outcome, and for an apply each file's hash before and after.
    pub(crate) fn record(
        &self,
        note: &Note,
        outcome: &str,
        files: Option<(&[String], &[FileState])>,
    ) {
        let Some(audit) = self.store.audit() else {
            return;
        };
        let summary = self.summary;
        let mut line = json!({
            "event": "resolve",
            "session": &*audit.session,
            "id": summary.id,
            "tool": summary.source_tool_name,
            "label": summary.label,
            "action": self.action.as_str(),
            "reason": self.reason,
            "decidedBy": note.decided_by,
            "policy": note.policy,
            "rule": note.rule,
            "decision": note.decision.map(Decision::as_str),
            "answer": note.answer,
            "outcome": outcome,
            "effectDigest": self.effect_digest,
        });
        if let Some((paths, before)) = files {
            let after = audit.states(paths);
            let contents = audit.log.records_contents();
            line["files"] = paths
                .iter()
                .zip(before)
                .zip(&after)
                .map(|((path, before), after)| FileState::json(path, before, after, contents))
                .collect();
        }
        audit.log.record(line);
    }
}

/// What the approval policy says about an apply the model asked for.
pub(crate) enum Gate {
    /// Apply.
    Go,
    /// Apply if the effect still has this digest (a person accepted it).
    Accepted(String),
    /// Discard, with this result (declined or denied).
    Drop(AgentToolResult, &'static str),
    /// Leave it pending: why, and how to proceed.
    Hold(String),
}

pub(crate) async fn approval_gate(
    config: &ApprovalConfig,
    summary: &PendingSummary,
    reason: &str,
    effect_digest: &str,
    note: &mut Note,
) -> Gate {
    let rule = match &config.policy {
        ApprovalPolicy::Model => return Gate::Go,
        ApprovalPolicy::Human => None,
        ApprovalPolicy::Rules(policy) => {
            let decided = policy.decide(&EffectFacts::of(summary));
            note.decision = Some(decided.decision);
            note.rule = Some(decided.rule.clone());
            match decided.decision {
                Decision::Allow => {
                    note.decided_by = format!("rule:{}", decided.rule);
                    return Gate::Go;
                }
                Decision::Deny => {
                    note.decided_by = format!("rule:{}", decided.rule);
                    return Gate::Drop(
                        AgentToolResult::failure(
                            ErrorKind::Denied,
                            format!(
                                "Denied by rule `{}` of the approval policy: `{}` was not applied, nothing was written, and the action was discarded. Do not retry the same change: tell the user, or make a change the policy allows.",
                                decided.rule, summary.label
                            ),
                        ),
                        "denied",
                    );
                }
                Decision::Ask => Some(decided.rule),
            }
        }
    };
    let asked_by = rule
        .as_ref()
        .map(|r| format!(" (rule `{r}`)"))
        .unwrap_or_default();
    // Nobody to ask: held, saying why and how to proceed.
    let nobody = |why: &str, note: &mut Note| {
        note.decided_by = "nobody".into();
        Gate::Hold(format!(
            "this session's approval policy (`{}`{asked_by}) needs a person to approve the change, and there is no one to ask: {why}. Nothing was written. To proceed, the user must approve outside this conversation (for example by running the server with `--approval model`, or with a rules file that allows this change), or call `resolve` with action \"discard\".",
            config.policy.name()
        ))
    };
    let Some(approver) = &config.approver else {
        return nobody(
            "no approver (the client offers no way to ask, such as MCP elicitation)",
            note,
        );
    };
    let request = ApprovalRequest {
        summary: summary.clone(),
        reason: reason.to_owned(),
        effect_digest: effect_digest.to_owned(),
        rule,
    };
    let answer = AssertUnwindSafe(approver.ask(&request))
        .catch_unwind()
        .await
        .unwrap_or(ApprovalAnswer::Cancel);
    note.decided_by = "person".into();
    match answer {
        ApprovalAnswer::Accept {
            effect_digest: approved,
        } => {
            note.answer = Some("accept");
            Gate::Accepted(approved)
        }
        ApprovalAnswer::Decline { message } => {
            note.answer = Some("decline");
            let mut text = format!(
                "The person declined to apply `{}`: nothing was written, and the action was discarded.",
                summary.label
            );
            if let Some(words) = message.as_deref().map(str::trim).filter(|w| !w.is_empty()) {
                text.push_str(&format!("\nThey said: {words}"));
            }
            Gate::Drop(
                AgentToolResult::failure(ErrorKind::Declined, text),
                "declined",
            )
        }
        ApprovalAnswer::Unavailable { why } => {
            note.answer = Some("unavailable");
            nobody(&why, note)
        }
        ApprovalAnswer::Deferred => {
            note.answer = Some("asked");
            Gate::Hold(
                "a person has been asked to approve it; their answer comes with the client's retry of this call. Nothing was written yet.".into(),
            )
        }
        ApprovalAnswer::Cancel => {
            note.answer = Some("cancel");
            Gate::Hold(
                "the person gave no answer (the approval was cancelled). Nothing was written. Call `resolve` with action \"apply\" to ask again, or \"discard\" it.".into(),
            )
        }
    }
}
