//! `--approval model|human|rules=FILE` and `--audit FILE`, shared by `serve` and `session`.

use std::path::PathBuf;

use xcsh::approval::{ApprovalPolicy, Approver, AuditLog, RulePolicy};
use xcsh::session::SessionBuilder;

use super::Failure;

#[derive(Debug, Clone, clap::Args)]
pub(crate) struct ApprovalArgs {
    /// Who may let `resolve` apply: `model` (the model's apply applies), `human` (a person
    /// approves each apply), or `rules=FILE` (a TOML policy file allows, asks or denies on
    /// the effect). See docs/APPROVALS.md.
    #[arg(long, value_name = "POLICY", default_value = "model")]
    approval: String,
    /// Append one JSON line per push and per resolve (who decided, outcome, file hashes) to
    /// FILE.
    #[arg(long, value_name = "FILE")]
    audit: Option<PathBuf>,
    /// Also record file contents in the audit log: the whole text of every file an apply
    /// touches, before and after (off: only hashes, since code can be confidential).
    #[arg(long, requires = "audit")]
    audit_contents: bool,
}

impl ApprovalArgs {
    /// The policy, its rules file read and checked now: a bad file is refused at start.
    pub(crate) fn policy(&self) -> Result<ApprovalPolicy, Failure> {
        match self.approval.trim() {
            "model" => Ok(ApprovalPolicy::Model),
            "human" => Ok(ApprovalPolicy::Human),
            other => match other.strip_prefix("rules=") {
                Some(file) if !file.is_empty() => RulePolicy::load(file.as_ref())
                    .map(|rules| ApprovalPolicy::Rules(rules.into()))
                    .map_err(|e| Failure(format!("--approval {other}: {e}"))),
                _ => Err(Failure(format!(
                    "--approval `{other}`: expected `model`, `human` or `rules=FILE`"
                ))),
            },
        }
    }

    /// Sets the policy, the approver (when there is a person to ask) and the audit log.
    pub(crate) fn configure(
        &self,
        builder: SessionBuilder,
        approver: Option<Box<dyn FnOnce(SessionBuilder) -> SessionBuilder>>,
    ) -> Result<SessionBuilder, Failure> {
        let policy = self.policy()?;
        let mut builder = builder.approval(policy);
        if let Some(with_approver) = approver {
            builder = with_approver(builder);
        }
        if let Some(path) = &self.audit {
            let log = AuditLog::open(path).map_err(|e| {
                Failure(format!(
                    "--audit `{}`: cannot open it for appending: {e}",
                    path.display()
                ))
            })?;
            builder = builder.audit(log.with_contents(self.audit_contents));
        }
        Ok(builder)
    }

    /// The policy as given.
    pub(crate) fn policy_text(&self) -> &str {
        self.approval.trim()
    }

    /// Whether the policy may need a person.
    pub(crate) fn may_ask(&self) -> bool {
        self.approval.trim() != "model"
    }
}

/// Boxes an approver for [`ApprovalArgs::configure`].
pub(crate) fn with(approver: impl Approver) -> Box<dyn FnOnce(SessionBuilder) -> SessionBuilder> {
    Box::new(move |builder| builder.approver(approver))
}
