//! What names and describes a pending action, and what is done to it: [`PendingId`],
//! [`PendingSummary`] and [`ResolveAction`]. A leaf: the store, the approval gate, `resolve`
//! and the durable stack all speak of these, and they speak of none of those.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::effect::Effect;

/// Identifies a pending action within its store; never reused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(transparent)]
pub struct PendingId(u64);

impl PendingId {
    /// Marks, in a kept stack, an action that could not be restored and is kept only until
    /// the notice that it was lost has been delivered (real ids start at 1).
    pub(crate) const LOST: PendingId = PendingId(0);

    /// The id numbered `n` (stores number from 1).
    pub(crate) const fn new(n: u64) -> Self {
        PendingId(n)
    }

    /// The numeric value.
    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for PendingId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// What the store knows about an action without running it: taken once at push time.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingSummary {
    /// The action's id.
    pub id: PendingId,
    /// Its label.
    pub label: String,
    /// The tool that produced it.
    pub source_tool_name: String,
    /// Its details, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// What it will do ([`PendingAction::effect`](crate::PendingAction::effect)).
    pub effect: Effect,
}

/// What to do with the top pending action.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResolveAction {
    /// Perform the previewed change.
    Apply,
    /// Drop it.
    Discard,
}

impl ResolveAction {
    /// `"apply"` or `"discard"`.
    pub fn as_str(self) -> &'static str {
        match self {
            ResolveAction::Apply => "apply",
            ResolveAction::Discard => "discard",
        }
    }
}

impl fmt::Display for ResolveAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
