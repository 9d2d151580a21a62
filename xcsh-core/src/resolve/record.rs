//! The last stage of a resolve: its line in the session's audit log.

use serde_json::json;

use crate::action::{PendingSummary, ResolveAction};
use crate::approval::gate::{Note, Outcome};
use crate::approval::{Decision, FileState};
use crate::pending::PendingActionStore;

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
        outcome: Outcome,
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
            "decidedBy": note.decided_by.spelt(),
            "policy": note.policy,
            "rule": note.rule,
            "decision": note.decision.map(Decision::as_str),
            "answer": note.answer,
            "outcome": outcome.as_str(),
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
