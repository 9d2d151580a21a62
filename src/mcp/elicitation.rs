//! Asking the person behind an MCP client whether to apply: `elicitation/create`.
//!
//! Under an approval policy that asks (`human`, or a rule that says `ask`), a server whose
//! registry has no approver of its own gives each connection's session an
//! [`ElicitationApprover`]: `resolve apply` then sends the client a form with the label, the
//! reason and a bounded summary of the effect ([`ApprovalRequest::describe`]), and one
//! required yes/no field. The answer maps to an [`ApprovalAnswer`]:
//!
//! * `accept` with `{"approve": true}`: apply exactly the effect shown (its digest is
//!   checked again before writing);
//! * `accept` with `{"approve": false}`, or `decline`: discard, telling the model the person
//!   declined (with their `comment`, if any);
//! * `cancel`, an error, no answer within 15 minutes, or an `accept` whose content has
//!   another shape: no decision, the action stays pending (never an apply);
//! * a client that did not declare the capability: nobody to ask, the action stays pending
//!   and the model is told how to proceed.

use std::sync::{Arc, OnceLock};

use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema};
use rmcp::service::ElicitationMode;
use rmcp::{Peer, RoleServer};
use serde_json::Value;
use xcsh_core::BoxFuture;
use xcsh_core::approval::{ApprovalAnswer, ApprovalRequest, Approver};

/// The field of the form that says yes or no.
const APPROVE: &str = "approve";
/// The optional field for the person's words to the model.
const COMMENT: &str = "comment";
/// How long a person has to answer before the question counts as unanswered (the action
/// stays pending; asking again is one more `resolve` away).
const ANSWER_WAIT: std::time::Duration = std::time::Duration::from_secs(15 * 60);

/// An [`Approver`] that asks through the connection's client. The peer is known once the
/// client has made its first request.
pub(crate) struct ElicitationApprover {
    pub(crate) peer: Arc<OnceLock<Peer<RoleServer>>>,
}

impl Approver for ElicitationApprover {
    fn ask<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalAnswer> {
        Box::pin(async move {
            let Some(peer) = self.peer.get() else {
                return unavailable();
            };
            if !peer
                .supported_elicitation_modes()
                .contains(&ElicitationMode::Form)
            {
                return unavailable();
            }
            let params = ElicitRequestParams::FormElicitationParams {
                meta: None,
                message: format!(
                    "The model asks to apply this change. Nothing is written unless you approve.\n\n{}",
                    request.describe()
                ),
                requested_schema: form(),
            };
            // A person may take a while; a client that never answers must not hold the
            // session's `resolve` for ever: after the wait it counts as no answer.
            match peer
                .create_elicitation_with_timeout(params, Some(ANSWER_WAIT))
                .await
            {
                Ok(result) => answer(request, result),
                Err(e) => {
                    tracing::warn!(error = %e, "the elicitation request failed; treated as no answer");
                    ApprovalAnswer::Cancel
                }
            }
        })
    }
}

fn unavailable() -> ApprovalAnswer {
    ApprovalAnswer::Unavailable {
        why: "the MCP client did not declare the elicitation capability (or speaks protocol 2026-07-28, where xcsh cannot ask through the client yet), so the person using it cannot be asked".to_owned(),
    }
}

/// One required yes/no, one optional comment.
fn form() -> ElicitationSchema {
    ElicitationSchema::builder()
        .required_bool_with(APPROVE, |b| {
            b.title("Apply this change")
                .description("Yes writes exactly the change shown; no discards it.")
        })
        .optional_string_with(COMMENT, |s| {
            s.title("Comment")
                .description("Optional: words for the model, e.g. why you declined.")
        })
        .description("Approve or decline the change the model asked to apply.")
        .build_unchecked()
}

/// The answer a form result gives; anything but a clear yes or no is no decision.
fn answer(request: &ApprovalRequest, result: ElicitResult) -> ApprovalAnswer {
    let content = result.content.as_ref().and_then(Value::as_object);
    let comment = || {
        content
            .and_then(|c| c.get(COMMENT))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    match result.action {
        ElicitationAction::Accept => {
            match content
                .and_then(|c| c.get(APPROVE))
                .and_then(Value::as_bool)
            {
                Some(true) => ApprovalAnswer::accept(request),
                Some(false) => ApprovalAnswer::Decline { message: comment() },
                None => ApprovalAnswer::Cancel,
            }
        }
        ElicitationAction::Decline => ApprovalAnswer::Decline { message: comment() },
        _ => ApprovalAnswer::Cancel,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use xcsh_core::PendingActionStore;

    fn request() -> ApprovalRequest {
        struct Edit;
        impl xcsh_core::PendingAction for Edit {
            fn label(&self) -> String {
                "Edit".into()
            }
            async fn apply(
                &mut self,
                _: &str,
            ) -> Result<xcsh_core::AgentToolResult, xcsh_core::ToolError> {
                Ok(().into())
            }
        }
        let store = PendingActionStore::new();
        store.push(Edit);
        ApprovalRequest {
            summary: store.peek().expect("pushed"),
            reason: "r".into(),
            effect_digest: "digest".into(),
            rule: None,
        }
    }

    fn result(action: ElicitationAction, content: Option<Value>) -> ElicitResult {
        let mut result = ElicitResult::new(action);
        result.content = content;
        result
    }

    #[test]
    fn only_a_clear_yes_accepts() {
        let r = request();
        let accept = |content| answer(&r, result(ElicitationAction::Accept, content));
        assert_eq!(
            accept(Some(json!({"approve": true}))),
            ApprovalAnswer::accept(&r)
        );
        assert_eq!(
            accept(Some(json!({"approve": false, "comment": "not now"}))),
            ApprovalAnswer::Decline {
                message: Some("not now".into())
            }
        );
        // Wrong shapes are no decision, never an apply.
        for wrong in [
            None,
            Some(json!({})),
            Some(json!({"approve": "yes"})),
            Some(json!({"approve": 1})),
            Some(json!([true])),
            Some(json!(true)),
        ] {
            assert_eq!(accept(wrong.clone()), ApprovalAnswer::Cancel, "{wrong:?}");
        }
        assert_eq!(
            answer(&r, result(ElicitationAction::Decline, None)),
            ApprovalAnswer::Decline { message: None }
        );
        assert_eq!(
            answer(&r, result(ElicitationAction::Cancel, None)),
            ApprovalAnswer::Cancel
        );
    }

    #[test]
    fn the_form_asks_one_required_yes_or_no() {
        let schema = serde_json::to_value(form()).expect("serialises");
        assert_eq!(schema["required"], json!(["approve"]));
        assert_eq!(schema["properties"]["approve"]["type"], "boolean");
        assert_eq!(schema["properties"]["comment"]["type"], "string");
    }
}
