//! Asking the person behind an MCP client whether to apply: an elicitation form.
//!
//! Under an approval policy that asks (`human`, or a rule that says `ask`), `resolve apply`
//! sends the client a form with the label, the reason and a bounded summary of the effect
//! ([`ApprovalRequest::describe`]), and one optional field for the person's words. On the
//! `initialize` lifecycle the form goes as an `elicitation/create` request
//! ([`ElicitationApprover`]); on protocol 2026-07-28, which has no server-to-client requests,
//! inside an input-required result (see `input_required`). Either way the elicitation's own
//! `action` is the person's decision, as MCP defines it:
//!
//! * `accept`: yes. Apply exactly the effect shown (its digest is checked again before
//!   writing), whatever the form's content;
//! * `decline`: no. Discard, telling the model the person declined (with their `comment`);
//! * `cancel`, an error, or no answer within 15 minutes: no decision; the action stays
//!   pending (never an apply);
//! * a client that did not declare the capability: nobody to ask, the action stays pending
//!   and the model is told how to proceed.

use std::sync::{Arc, OnceLock};

use rmcp::model::{ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema};
use rmcp::service::ElicitationMode;
use rmcp::{Peer, RoleServer};
use serde_json::Value;
use xcsh_core::BoxFuture;
use xcsh_core::approval::{ApprovalAnswer, ApprovalRequest, Approver};

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
            let params = form_params(request);
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

pub(crate) fn unavailable() -> ApprovalAnswer {
    ApprovalAnswer::Unavailable {
        why: "the MCP client did not declare the elicitation capability (form mode), so the person using it cannot be asked".to_owned(),
    }
}

/// The form for `request`: the message a person reads, and one optional comment.
pub(crate) fn form_params(request: &ApprovalRequest) -> ElicitRequestParams {
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: format!(
            "The model asks to apply this change. Nothing is written unless you accept.\n\n{}\n\nAccept applies exactly this change; Decline discards it; Cancel leaves it pending.",
            request.describe()
        ),
        requested_schema: form(),
    }
}

/// One optional comment: the decision is the elicitation's action, not a field.
fn form() -> ElicitationSchema {
    ElicitationSchema::builder()
        .optional_string_with(COMMENT, |s| {
            s.title("Comment")
                .description("Optional: words for the model, e.g. why you declined.")
        })
        .description("Accept to apply the change the model asked for, Decline to discard it.")
        .build_unchecked()
}

/// The answer a form result gives: `accept` is yes, `decline` no, anything else no decision.
pub(crate) fn answer(request: &ApprovalRequest, result: ElicitResult) -> ApprovalAnswer {
    let comment = result
        .content
        .as_ref()
        .and_then(|c| c.get(COMMENT))
        .and_then(Value::as_str)
        .map(str::to_owned);
    match result.action {
        ElicitationAction::Accept => ApprovalAnswer::accept(request),
        ElicitationAction::Decline => ApprovalAnswer::Decline { message: comment },
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
    fn the_action_is_the_decision() {
        let r = request();
        let accept = |content| answer(&r, result(ElicitationAction::Accept, content));
        // Accept is yes, whatever the form holds: an empty form, an unticked box, a comment.
        for content in [
            None,
            Some(json!({})),
            Some(json!({"comment": "ok"})),
            Some(json!({"approve": false})),
            Some(json!([true])),
        ] {
            assert_eq!(
                accept(content.clone()),
                ApprovalAnswer::accept(&r),
                "{content:?}"
            );
        }
        assert_eq!(
            answer(
                &r,
                result(
                    ElicitationAction::Decline,
                    Some(json!({"comment": "not now"}))
                )
            ),
            ApprovalAnswer::Decline {
                message: Some("not now".into())
            }
        );
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
    fn the_form_asks_only_an_optional_comment() {
        let schema = serde_json::to_value(form()).expect("serialises");
        assert!(
            schema.get("required").is_none_or(|r| r == &json!([])),
            "{schema}"
        );
        assert_eq!(schema["properties"]["comment"]["type"], "string");
        assert_eq!(schema["properties"].as_object().map(|p| p.len()), Some(1));
    }
}
