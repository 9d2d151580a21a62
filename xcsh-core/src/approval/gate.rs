//! The approval gate `resolve` passes an apply the model asks for through: the policy, the
//! rules, the person (through the approver), and the audit line of each resolve.

use std::panic::AssertUnwindSafe;

use futures_util::FutureExt;
use serde_json::{Value, json};

use super::{
    ApprovalAnswer, ApprovalConfig, ApprovalPolicy, ApprovalRequest, Decision, EffectFacts,
};
use crate::action::PendingSummary;
use crate::error::ErrorKind;
use crate::result::AgentToolResult;

/// Who decided a resolve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DecidedBy {
    /// The host (a person's decision already: a UI's button).
    Host,
    /// The model, with no policy that asks.
    Model,
    /// A person, asked through the approver.
    Person,
    /// A rule of the policy.
    Rule(String),
    /// Nobody: there was no one to ask.
    Nobody,
}

impl DecidedBy {
    /// As the result's details and the audit log spell it: `host`, `model`, `person`,
    /// `rule:<name>`, `nobody`.
    pub(crate) fn spelt(&self) -> String {
        match self {
            DecidedBy::Host => "host".into(),
            DecidedBy::Model => "model".into(),
            DecidedBy::Person => "person".into(),
            DecidedBy::Rule(name) => format!("rule:{name}"),
            DecidedBy::Nobody => "nobody".into(),
        }
    }
}

/// What came of a resolve, as the audit log records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Outcome {
    Applied,
    Discarded,
    Declined,
    Denied,
    /// Not approved (yet): the action stays pending.
    Pending,
    /// The apply failed: the action stays pending.
    Failed,
}

impl Outcome {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Outcome::Applied => "applied",
            Outcome::Discarded => "discarded",
            Outcome::Declined => "declined",
            Outcome::Denied => "denied",
            Outcome::Pending => "pending",
            Outcome::Failed => "failed",
        }
    }
}

/// How an apply was let through, or why not, for the result and the audit log.
pub(crate) struct Note {
    pub(crate) policy: &'static str,
    pub(crate) decided_by: DecidedBy,
    pub(crate) rule: Option<String>,
    pub(crate) decision: Option<Decision>,
    pub(crate) answer: Option<&'static str>,
}

impl Note {
    pub(crate) fn json(&self, effect_digest: &str) -> Value {
        json!({
            "policy": self.policy,
            "decidedBy": self.decided_by.spelt(),
            "rule": self.rule,
            "decision": self.decision.map(Decision::as_str),
            "answer": self.answer,
            "effectDigest": effect_digest,
        })
    }
}

/// What the approval policy says about an apply the model asked for.
pub(crate) enum Gate {
    /// Apply.
    Go,
    /// Apply if the effect still has this digest (a person accepted it).
    Accepted(String),
    /// Discard, with this result (declined or denied).
    Drop(AgentToolResult, Outcome),
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
    let facts = EffectFacts::of(summary);
    let rule = match &config.policy {
        ApprovalPolicy::Model => return Gate::Go,
        ApprovalPolicy::Human => None,
        ApprovalPolicy::Rules(policy) => {
            let mut decided = policy.decide(&facts);
            // An action that does not say what it touches may touch anything: no rule allows
            // it unseen, a person is asked.
            if !facts.known && decided.decision == Decision::Allow {
                decided.decision = Decision::Ask;
            }
            note.decision = Some(decided.decision);
            note.rule = Some(decided.rule.clone());
            match decided.decision {
                Decision::Allow => {
                    note.decided_by = DecidedBy::Rule(decided.rule.clone());
                    return Gate::Go;
                }
                Decision::Deny => {
                    note.decided_by = DecidedBy::Rule(decided.rule.clone());
                    return Gate::Drop(
                        AgentToolResult::failure(
                            ErrorKind::Denied,
                            format!(
                                "Denied by rule `{}` of the approval policy: `{}` was not applied, nothing was written, and the action was discarded. Do not retry the same change: tell the user, or make a change the policy allows.",
                                decided.rule, summary.label
                            ),
                        ),
                        Outcome::Denied,
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
    // Nobody to ask: held, saying why and how to proceed; an action of unknown effect under
    // rules is denied instead, since no rule could allow it.
    let unknown_under_rules = !facts.known && matches!(config.policy, ApprovalPolicy::Rules(_));
    let nobody = |why: &str, note: &mut Note| {
        note.decided_by = DecidedBy::Nobody;
        if unknown_under_rules {
            note.decision = Some(Decision::Deny);
            return Gate::Drop(
                AgentToolResult::failure(
                    ErrorKind::Denied,
                    format!(
                        "Denied: `{}` does not say which files it touches, so the approval policy's rules cannot allow it, and there is no one to ask ({why}). Nothing was written, and the action was discarded. Tell the user, or make the change with a tool that declares its effect.",
                        summary.label
                    ),
                ),
                Outcome::Denied,
            );
        }
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
    note.decided_by = DecidedBy::Person;
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
                Outcome::Declined,
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
