//! Approval policies: who may let `resolve` apply an action, an [`Approver`] to ask a person,
//! rules that decide on the effect, and an [`AuditLog`] of every decision.
//!
//! The policy is the session's ([`SessionBuilder::approval`](crate::SessionBuilder::approval));
//! it governs the `resolve` tool, which is what the model calls. The host's own
//! [`Session::resolve`](crate::Session::resolve) is a person's decision already and is not
//! asked again.
//!
//! | policy | a `resolve` apply from the model |
//! |---|---|
//! | [`ApprovalPolicy::Model`] (default) | applies, as without a policy |
//! | [`ApprovalPolicy::Human`] | asks the session's [`Approver`] first |
//! | [`ApprovalPolicy::Rules`] | the first matching [`Rule`] allows, asks or denies |
//!
//! ```
//! use xcsh_core::approval::{ApprovalPolicy, ChannelApprover};
//! use xcsh_core::{AgentToolResult, ErrorKind, PendingAction, Session, ToolError};
//!
//! struct Write;
//! impl PendingAction for Write {
//!     fn label(&self) -> String { "Write: 1 file".into() }
//!     async fn apply(&mut self, _reason: &str) -> Result<AgentToolResult, ToolError> { Ok(().into()) }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let (approver, mut prompts) = ChannelApprover::new(4);
//! let session = Session::builder()
//!     .approval(ApprovalPolicy::Human)
//!     .approver(approver)
//!     .build()
//!     .unwrap();
//! // The GUI side: shows the label and the reason, and the person declines.
//! tokio::spawn(async move {
//!     let prompt = prompts.recv().await.unwrap();
//!     assert_eq!(prompt.request().summary.label, "Write: 1 file");
//!     prompt.decline(Some("not on a Friday".into()));
//! });
//! session.pending().push(Write);
//! let result = session
//!     .call("resolve", serde_json::json!({"action": "apply", "reason": "done"}))
//!     .await;
//! assert_eq!(result.error_kind(), Some(&ErrorKind::Declined));
//! assert!(result.text_content().contains("not on a Friday"));
//! assert!(session.pending().is_empty());
//! # });
//! ```

mod audit;
pub(crate) mod gate;
mod rules;

use std::fmt;
use std::io::{BufRead, Write};
use std::sync::Arc;

use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::sync::{mpsc, oneshot};

use crate::action::PendingSummary;
use crate::future::BoxFuture;

pub use audit::AuditLog;
pub(crate) use audit::{AuditSink, FileState};
pub use rules::{Decision, EffectFacts, PolicyError, Rule, RuleMatch, RulePolicy};

/// Who may let `resolve` apply what the model asks it to apply.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub enum ApprovalPolicy {
    /// The model's `resolve` apply applies (the default; behaviour without a policy).
    #[default]
    Model,
    /// A person decides each apply through the session's [`Approver`].
    Human,
    /// Rules decide on the effect; a rule that says [`Decision::Ask`] asks the [`Approver`].
    Rules(Arc<RulePolicy>),
}

impl ApprovalPolicy {
    /// `model`, `human` or `rules`.
    pub fn name(&self) -> &'static str {
        match self {
            ApprovalPolicy::Model => "model",
            ApprovalPolicy::Human => "human",
            ApprovalPolicy::Rules(_) => "rules",
        }
    }
}

/// What a person is asked to approve: the action, the model's reason, and the digest of the
/// exact effect, which an accepting answer must carry back.
#[derive(Debug, Clone, PartialEq)]
pub struct ApprovalRequest {
    /// The action: id, label, source tool, details (for `ast_edit`: every file and
    /// replacement).
    pub summary: PendingSummary,
    /// Why the model wants it applied.
    pub reason: String,
    /// The digest of the effect ([`PendingAction::effect_digest`](crate::PendingAction::effect_digest)).
    pub effect_digest: String,
    /// The rule that said to ask, under [`ApprovalPolicy::Rules`].
    pub rule: Option<String>,
}

impl ApprovalRequest {
    /// A bounded summary for a person: the label, the reason, the files the declared effect
    /// touches (or that it declares none) with their first replacements (`line: before →
    /// after`, as `ast_edit`'s details list them), the changed lines, the rule that asked and
    /// the effect digest.
    ///
    /// ```
    /// use xcsh_core::approval::ApprovalRequest;
    /// use xcsh_core::{AgentToolResult, Effect, FileEffect, PendingAction, PendingActionStore, ToolError};
    ///
    /// struct Edit;
    /// impl PendingAction for Edit {
    ///     fn label(&self) -> String { "AST Edit: 1 replacement in 1 file".into() }
    ///     async fn apply(&mut self, _: &str) -> Result<AgentToolResult, ToolError> { Ok(().into()) }
    ///     fn details(&self) -> Option<serde_json::Value> {
    ///         Some(serde_json::json!({"files": [{"file": "src/a.rs",
    ///             "replacements": [{"line": 3, "before": "x.unwrap()", "after": "x?"}]}]}))
    ///     }
    ///     fn effect(&self) -> Effect { Effect::files([FileEffect::modify("src/a.rs")]) }
    /// }
    /// let store = PendingActionStore::new();
    /// store.push(Edit);
    /// let request = ApprovalRequest {
    ///     summary: store.peek().unwrap(),
    ///     reason: "cleanup".into(),
    ///     effect_digest: "sha256:…".into(),
    ///     rule: None,
    /// };
    /// let text = request.describe();
    /// assert!(text.contains("Reason: cleanup"));
    /// assert!(text.contains("src/a.rs\n    3: x.unwrap() → x?"));
    /// ```
    pub fn describe(&self) -> String {
        const MAX_FILES: usize = 20;
        const MAX_REPLACEMENTS: usize = 12;
        let effect = &self.summary.effect;
        let mut text = format!(
            "{} (from {})\nReason: {}",
            self.summary.label, self.summary.source_tool_name, self.reason
        );
        // The replacements the details list per file (as `ast_edit`'s do), shown under their
        // file: the files themselves come from the effect.
        let entries = self
            .summary
            .details
            .as_ref()
            .and_then(|d| d.get("files"))
            .and_then(Value::as_array);
        let replacements_of = |path: &str| {
            entries
                .into_iter()
                .flatten()
                .find(|e| e.get("file").and_then(Value::as_str) == Some(path))
                .and_then(|e| e.get("replacements"))
                .and_then(Value::as_array)
        };
        let files = effect.file_effects();
        if !effect.is_known() {
            text.push_str(
                "\nFiles: not declared (this action does not say which files it touches)",
            );
        } else if !files.is_empty() {
            text.push_str(&format!("\nFiles ({}):", files.len()));
            let mut shown = 0;
            for file in files.iter().take(MAX_FILES) {
                match &file.kind {
                    crate::effect::EffectKind::Modify => {
                        text.push_str(&format!("\n  {}", file.path))
                    }
                    crate::effect::EffectKind::Move { to } => {
                        text.push_str(&format!("\n  {} → {} (move)", file.path, to))
                    }
                    _ => text.push_str(&format!("\n  {} ({})", file.path, file.kind_name())),
                }
                for r in replacements_of(&file.path).into_iter().flatten() {
                    if shown == MAX_REPLACEMENTS {
                        break;
                    }
                    shown += 1;
                    let field = |key: &str| {
                        let t = r.get(key).and_then(Value::as_str).unwrap_or("");
                        let one_line: String = t.split_whitespace().collect::<Vec<_>>().join(" ");
                        if one_line.chars().count() > 60 {
                            format!("{}…", one_line.chars().take(60).collect::<String>())
                        } else {
                            one_line
                        }
                    };
                    let line = r
                        .get("line")
                        .and_then(Value::as_u64)
                        .map_or(String::new(), |l| format!("{l}: "));
                    text.push_str(&format!(
                        "\n    {line}{} → {}",
                        field("before"),
                        field("after")
                    ));
                }
            }
            if files.len() > MAX_FILES {
                text.push_str(&format!("\n  … and {} more", files.len() - MAX_FILES));
            }
        }
        if let Some(lines) = effect.changed_lines() {
            text.push_str(&format!("\nChanged lines: about {lines}"));
        }
        if let Some(rule) = &self.rule {
            text.push_str(&format!("\nAsked by rule `{rule}`"));
        }
        text.push_str(&format!("\nEffect: {}", self.effect_digest));
        text
    }
}

/// A person's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ApprovalAnswer {
    /// Apply. Carries the digest of the effect the person saw; an apply whose effect has
    /// another digest is refused.
    Accept {
        /// [`ApprovalRequest::effect_digest`] of the request accepted.
        effect_digest: String,
    },
    /// Do not apply: the action is discarded and the model told, with these words if any.
    Decline {
        /// What the person said.
        message: Option<String>,
    },
    /// No decision (closed, timed out, cancelled): the action stays pending.
    Cancel,
    /// Nobody can be asked through this approver (an MCP client that did not declare the
    /// elicitation capability, say): the action stays pending, and the model is told why
    /// and how to proceed.
    Unavailable {
        /// Why, completing "there is no one to ask: …".
        why: String,
    },
    /// The question went out by another way and its answer will come with a later call
    /// (an MCP client's input-required round, where the client asks the person and retries
    /// `resolve` with the answer): nothing is written now and the action stays pending.
    Deferred,
}

impl ApprovalAnswer {
    /// Accepts exactly the effect `request` showed.
    pub fn accept(request: &ApprovalRequest) -> Self {
        ApprovalAnswer::Accept {
            effect_digest: request.effect_digest.clone(),
        }
    }
}

/// Asks a person whether to apply an action. The host supplies one
/// ([`SessionBuilder::approver`](crate::SessionBuilder::approver)); xcsh ships
/// [`ChannelApprover`] (for GUIs) and [`TerminalApprover`].
///
/// An approver that cannot reach anyone answers [`ApprovalAnswer::Unavailable`] (or
/// [`ApprovalAnswer::Cancel`]): the action stays pending, and nothing is written without an
/// explicit accept.
pub trait Approver: Send + Sync + 'static {
    /// Asks about one action.
    fn ask<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalAnswer>;
}

impl fmt::Debug for dyn Approver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Approver")
    }
}

/// The session's approval settings, shared by its registry's sessions.
#[derive(Debug, Clone, Default)]
pub(crate) struct ApprovalConfig {
    pub(crate) policy: ApprovalPolicy,
    pub(crate) approver: Option<Arc<dyn Approver>>,
}

/// An [`Approver`] for GUIs: each request arrives on a channel as an [`ApprovalPrompt`] to
/// answer. A prompt dropped unanswered, or a receiver gone, is [`ApprovalAnswer::Cancel`].
#[derive(Debug, Clone)]
pub struct ChannelApprover {
    prompts: mpsc::Sender<ApprovalPrompt>,
}

impl ChannelApprover {
    /// An approver and the receiver its prompts arrive on (`buffer` prompts may wait).
    pub fn new(buffer: usize) -> (Self, mpsc::Receiver<ApprovalPrompt>) {
        let (prompts, receiver) = mpsc::channel(buffer.max(1));
        (ChannelApprover { prompts }, receiver)
    }
}

impl Approver for ChannelApprover {
    fn ask<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalAnswer> {
        Box::pin(async move {
            let (reply, answer) = oneshot::channel();
            let prompt = ApprovalPrompt {
                request: request.clone(),
                reply,
            };
            if self.prompts.send(prompt).await.is_err() {
                return ApprovalAnswer::Cancel;
            }
            answer.await.unwrap_or(ApprovalAnswer::Cancel)
        })
    }
}

/// One question from a [`ChannelApprover`]: show [`request`](Self::request), then answer
/// once. Dropping it unanswered cancels.
#[derive(Debug)]
pub struct ApprovalPrompt {
    request: ApprovalRequest,
    reply: oneshot::Sender<ApprovalAnswer>,
}

impl ApprovalPrompt {
    /// What to show.
    pub fn request(&self) -> &ApprovalRequest {
        &self.request
    }

    /// Accepts the effect shown.
    pub fn accept(self) {
        let answer = ApprovalAnswer::accept(&self.request);
        self.answer(answer);
    }

    /// Declines, with the person's words if any.
    pub fn decline(self, message: Option<String>) {
        self.answer(ApprovalAnswer::Decline { message });
    }

    /// Leaves the action pending.
    pub fn cancel(self) {
        self.answer(ApprovalAnswer::Cancel);
    }

    /// Any answer.
    pub fn answer(self, answer: ApprovalAnswer) {
        // The asker gone means nobody waits for the answer any more.
        let _ = self.reply.send(answer);
    }
}

/// An [`Approver`] that asks at the terminal: it prints the request on stderr and reads one
/// line, from `/dev/tty` ([`new`](Self::new)) or from stdin ([`from_stdin`](Self::from_stdin),
/// for a program whose stdin is free, such as `xcsh session FILE`).
///
/// `y`/`yes` accepts; `n`/`no`, optionally followed by the person's words, declines; anything
/// else, an empty line, end of input or no terminal cancels (the action stays pending).
#[derive(Debug, Clone, Default)]
pub struct TerminalApprover {
    use_stdin: bool,
}

impl TerminalApprover {
    /// Reads answers from `/dev/tty`.
    pub fn new() -> Self {
        TerminalApprover { use_stdin: false }
    }

    /// Reads answers from stdin.
    pub fn from_stdin() -> Self {
        TerminalApprover { use_stdin: true }
    }

    /// The answer a typed line means (see the type's documentation).
    ///
    /// ```
    /// use xcsh_core::approval::{ApprovalAnswer, TerminalApprover};
    /// assert_eq!(TerminalApprover::parse_answer("y", "d"), ApprovalAnswer::Accept { effect_digest: "d".into() });
    /// assert_eq!(TerminalApprover::parse_answer("n too big", "d"), ApprovalAnswer::Decline { message: Some("too big".into()) });
    /// assert_eq!(TerminalApprover::parse_answer("", "d"), ApprovalAnswer::Cancel);
    /// ```
    pub fn parse_answer(line: &str, effect_digest: &str) -> ApprovalAnswer {
        let line = line.trim();
        let (word, rest) = line
            .split_once(char::is_whitespace)
            .map_or((line, ""), |(w, r)| (w, r.trim()));
        match word.to_ascii_lowercase().as_str() {
            "y" | "yes" if rest.is_empty() => ApprovalAnswer::Accept {
                effect_digest: effect_digest.to_owned(),
            },
            "n" | "no" => ApprovalAnswer::Decline {
                message: (!rest.is_empty()).then(|| rest.to_owned()),
            },
            _ => ApprovalAnswer::Cancel,
        }
    }
}

impl Approver for TerminalApprover {
    fn ask<'a>(&'a self, request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalAnswer> {
        let use_stdin = self.use_stdin;
        let request = request.clone();
        Box::pin(async move {
            let digest = request.effect_digest.clone();
            let line = tokio::task::spawn_blocking(move || {
                let mut err = std::io::stderr().lock();
                let _ = writeln!(err, "\nApprove this change?\n{}", request.describe());
                let _ = write!(
                    err,
                    "Apply? [y]es / [n]o [why] / anything else leaves it pending: "
                );
                let _ = err.flush();
                let mut line = String::new();
                if use_stdin {
                    std::io::stdin().lock().read_line(&mut line).ok()?;
                } else {
                    let tty = std::fs::File::open("/dev/tty").ok()?;
                    std::io::BufReader::new(tty).read_line(&mut line).ok()?;
                }
                Some(line)
            })
            .await
            .ok()
            .flatten();
            match line {
                Some(line) => TerminalApprover::parse_answer(&line, &digest),
                None => ApprovalAnswer::Cancel,
            }
        })
    }
}

/// `sha256:<hex>` of some bytes: the spelling of effect digests and audit hashes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut text = String::with_capacity(7 + 64);
    text.push_str("sha256:");
    for byte in digest.iter() {
        text.push_str(&format!("{byte:02x}"));
    }
    text
}

/// The default effect digest: SHA-256 over the source tool, the label, the details (as
/// JSON) and the declared effect, so an action whose details and effect describe what it does
/// (as `ast_edit`'s do) is bound to it. (Without a declared effect, the digest is what it was
/// before effects were declared.)
///
/// ```
/// use xcsh_core::{Effect, FileEffect};
/// use xcsh_core::approval::default_effect_digest;
/// let a = default_effect_digest("t", "Edit", None, &Effect::files([FileEffect::modify("a.rs")]));
/// let b = default_effect_digest("t", "Edit", None, &Effect::files([FileEffect::modify("b.rs")]));
/// assert_ne!(a, b);
/// assert!(a.starts_with("sha256:"));
/// ```
pub fn default_effect_digest(
    source_tool_name: &str,
    label: &str,
    details: Option<&Value>,
    effect: &crate::effect::Effect,
) -> String {
    let mut canonical = serde_json::json!({
        "tool": source_tool_name,
        "label": label,
        "details": details,
    });
    if effect.is_known() {
        canonical["effect"] = serde_json::to_value(effect).unwrap_or_default();
    }
    sha256_hex(canonical.to_string().as_bytes())
}
