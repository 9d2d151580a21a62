//! Approval policies: rules that allow, ask and deny; a person through the channel approver;
//! the audit trail of it all.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use xcsh_core::approval::{
    ApprovalAnswer, ApprovalPolicy, ApprovalPrompt, ApprovalRequest, Approver, AuditLog,
    ChannelApprover, RulePolicy,
};
use xcsh_core::{
    AgentToolResult, BoxFuture, Effect, ErrorKind, FileEffect, PendingAction, Session, ToolError,
};

/// Writes files under a root on apply; its details list them as `ast_edit`'s do, and its
/// declared effect names them (what the rules read).
struct WriteFiles {
    root: PathBuf,
    tool: &'static str,
    files: Vec<(&'static str, &'static str)>,
}

impl PendingAction for WriteFiles {
    fn label(&self) -> String {
        format!("Write: {} file(s)", self.files.len())
    }
    async fn apply(&mut self, _reason: &str) -> Result<AgentToolResult, ToolError> {
        for (path, text) in &self.files {
            let path = self.root.join(path);
            std::fs::create_dir_all(path.parent().unwrap())?;
            std::fs::write(path, text)?;
        }
        Ok(().into())
    }
    fn details(&self) -> Option<Value> {
        Some(json!({
            "files": self.files.iter().map(|(path, text)| json!({
                "file": path,
                "replacements": [{"before": "old", "after": text}],
            })).collect::<Vec<_>>()
        }))
    }
    fn source_tool_name(&self) -> &str {
        self.tool
    }
    fn effect(&self) -> Effect {
        Effect::files(self.files.iter().map(|(path, text)| {
            FileEffect::modify(*path).with_changed_lines(text.lines().count().max(1))
        }))
    }
}

fn write(root: &Path, tool: &'static str, files: &[(&'static str, &'static str)]) -> WriteFiles {
    WriteFiles {
        root: root.to_path_buf(),
        tool,
        files: files.to_vec(),
    }
}

async fn apply(session: &Session) -> AgentToolResult {
    session
        .call(
            "resolve",
            json!({"action": "apply", "reason": "the user asked"}),
        )
        .await
}

const RULES: &str = r#"
default = "deny"

[[rule]]
name = "no-secrets"
decision = "deny"
paths = ["secrets/**"]

[[rule]]
name = "small-docs"
decision = "allow"
paths = ["docs/**"]
max_files = 2

[[rule]]
name = "ask-for-code"
decision = "ask"
tools = ["ast_edit"]
"#;

fn read_audit(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[tokio::test]
async fn rules_allow_ask_and_deny_each_with_its_rule_and_the_audit_names_every_decision() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let audit = root.join("audit.jsonl");
    let (approver, mut prompts) = ChannelApprover::new(4);
    let session = Session::builder()
        .workspace_root(root)
        .approval(ApprovalPolicy::Rules(Arc::new(
            RulePolicy::parse(RULES, "rules.toml").unwrap(),
        )))
        .approver(approver)
        .audit(AuditLog::open(&audit).unwrap())
        .build()
        .unwrap();
    let person = tokio::spawn(async move {
        let prompt: ApprovalPrompt = prompts.recv().await.unwrap();
        assert_eq!(prompt.request().rule.as_deref(), Some("ask-for-code"));
        assert!(prompt.request().describe().contains("src/lib.rs"));
        prompt.accept();
    });

    // allow
    session
        .pending()
        .push(write(root, "ast_edit", &[("docs/a.md", "A")]));
    let allowed = apply(&session).await;
    assert!(!allowed.is_error(), "{}", allowed.text_content());
    assert!(
        allowed
            .text_content()
            .contains("Allowed by rule `small-docs`")
    );
    let details = allowed.details.as_ref().unwrap();
    assert_eq!(details["approval"]["rule"], "small-docs");
    assert_eq!(details["approval"]["decision"], "allow");
    assert_eq!(
        std::fs::read_to_string(root.join("docs/a.md")).unwrap(),
        "A"
    );

    // ask, and the person accepts
    session
        .pending()
        .push(write(root, "ast_edit", &[("src/lib.rs", "fn f() {}")]));
    let asked = apply(&session).await;
    person.await.unwrap();
    assert!(!asked.is_error(), "{}", asked.text_content());
    assert!(asked.text_content().contains("Approved by the person."));
    let details = asked.details.as_ref().unwrap();
    assert_eq!(details["approval"]["rule"], "ask-for-code");
    assert_eq!(details["approval"]["decision"], "ask");
    assert_eq!(details["approval"]["decidedBy"], "person");
    assert_eq!(
        std::fs::read_to_string(root.join("src/lib.rs")).unwrap(),
        "fn f() {}"
    );

    // deny
    session
        .pending()
        .push(write(root, "ast_edit", &[("secrets/key", "leak")]));
    let denied = apply(&session).await;
    assert_eq!(denied.error_kind(), Some(&ErrorKind::Denied));
    assert!(
        denied
            .text_content()
            .starts_with("Denied by rule `no-secrets`")
    );
    assert_eq!(
        denied.details.as_ref().unwrap()["approval"]["rule"],
        "no-secrets"
    );
    assert!(!root.join("secrets/key").exists());
    assert!(session.pending().is_empty());

    // The audit trail, read back.
    let lines = read_audit(&audit);
    let pushes: Vec<_> = lines.iter().filter(|l| l["event"] == "push").collect();
    let resolves: Vec<_> = lines.iter().filter(|l| l["event"] == "resolve").collect();
    assert_eq!(pushes.len(), 3);
    assert_eq!(resolves.len(), 3);
    for (push, resolve) in pushes.iter().zip(&resolves) {
        assert_eq!(push["id"], resolve["id"]);
        assert_eq!(push["effectDigest"], resolve["effectDigest"]);
        assert!(
            push["effectDigest"]
                .as_str()
                .unwrap()
                .starts_with("sha256:")
        );
        assert_eq!(resolve["session"], session.id());
    }
    let made: Vec<_> = resolves
        .iter()
        .map(|l| {
            (
                l["decidedBy"].as_str().unwrap(),
                l["rule"].as_str().unwrap(),
                l["outcome"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        made,
        [
            ("rule:small-docs", "small-docs", "applied"),
            ("person", "ask-for-code", "applied"),
            ("rule:no-secrets", "no-secrets", "denied"),
        ]
    );
    // The hashes of the applied files match the files on disk; no contents are recorded.
    // No contents: the replacement texts of the details are hashed too.
    let raw = std::fs::read_to_string(&audit).unwrap();
    assert!(!raw.contains("leak") && !raw.contains("fn f() {}"), "{raw}");
    assert_eq!(
        pushes[2]["details"]["files"][0]["replacements"][0]["after"],
        xcsh_core::approval::sha256_hex(b"leak")
    );
    assert_eq!(pushes[2]["details"]["files"][0]["file"], "secrets/key");
    for (resolve, path) in [(resolves[0], "docs/a.md"), (resolves[1], "src/lib.rs")] {
        let file = &resolve["files"][0];
        assert_eq!(file["path"], path);
        assert_eq!(file["before"], Value::Null);
        assert_eq!(
            file["after"],
            xcsh_core::approval::sha256_hex(&std::fs::read(root.join(path)).unwrap())
        );
    }
}

fn human(root: &Path) -> (Session, tokio::sync::mpsc::Receiver<ApprovalPrompt>) {
    let (approver, prompts) = ChannelApprover::new(1);
    let session = Session::builder()
        .workspace_root(root)
        .approval(ApprovalPolicy::Human)
        .approver(approver)
        .build()
        .unwrap();
    (session, prompts)
}

#[tokio::test]
async fn a_person_accepts_declines_or_cancels() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let (session, mut prompts) = human(root);

    // accept: written
    session
        .pending()
        .push(write(root, "custom_tool", &[("a.txt", "accepted")]));
    let person = tokio::spawn(async move {
        let prompt = prompts.recv().await.unwrap();
        assert_eq!(prompt.request().reason, "the user asked");
        assert_eq!(prompt.request().summary.label, "Write: 1 file(s)");
        prompt.accept();
        prompts
    });
    let accepted = apply(&session).await;
    let mut prompts = person.await.unwrap();
    assert!(!accepted.is_error(), "{}", accepted.text_content());
    assert_eq!(
        std::fs::read_to_string(root.join("a.txt")).unwrap(),
        "accepted"
    );

    // decline: nothing written, the model told, with the person's words
    session
        .pending()
        .push(write(root, "custom_tool", &[("b.txt", "declined")]));
    let person = tokio::spawn(async move {
        prompts
            .recv()
            .await
            .unwrap()
            .decline(Some("rename it first".into()));
        prompts
    });
    let declined = apply(&session).await;
    let mut prompts = person.await.unwrap();
    assert_eq!(declined.error_kind(), Some(&ErrorKind::Declined));
    assert!(
        declined
            .text_content()
            .starts_with("The person declined to apply `Write: 1 file(s)`"),
        "{}",
        declined.text_content()
    );
    assert!(declined.text_content().contains("rename it first"));
    assert!(!root.join("b.txt").exists());
    assert!(session.pending().is_empty());

    // cancel: the action stays on top, nothing written
    session
        .pending()
        .push(write(root, "custom_tool", &[("c.txt", "cancelled")]));
    let person = tokio::spawn(async move {
        prompts.recv().await.unwrap().cancel();
        prompts
    });
    let cancelled = apply(&session).await;
    let mut prompts = person.await.unwrap();
    assert_eq!(cancelled.error_kind(), Some(&ErrorKind::ApprovalPending));
    assert!(cancelled.text_content().contains("still pending"));
    assert!(!root.join("c.txt").exists());
    assert_eq!(session.pending().peek().unwrap().label, "Write: 1 file(s)");

    // a prompt dropped unanswered is a cancel too
    let person = tokio::spawn(async move {
        drop(prompts.recv().await.unwrap());
    });
    let dropped = apply(&session).await;
    person.await.unwrap();
    assert_eq!(dropped.error_kind(), Some(&ErrorKind::ApprovalPending));
    assert_eq!(session.pending().len(), 1);

    // the host's own resolve is a person's decision already: not asked again
    session
        .resolve(xcsh_core::ResolveAction::Apply, "approved in the UI")
        .await
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(root.join("c.txt")).unwrap(),
        "cancelled"
    );
}

/// Accepts a different effect than the one shown.
struct WrongDigest;

impl Approver for WrongDigest {
    fn ask<'a>(&'a self, _request: &'a ApprovalRequest) -> BoxFuture<'a, ApprovalAnswer> {
        Box::pin(async {
            ApprovalAnswer::Accept {
                effect_digest: "sha256:00".into(),
            }
        })
    }
}

#[tokio::test]
async fn an_approval_of_another_effect_writes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let session = Session::builder()
        .approval(ApprovalPolicy::Human)
        .approver(WrongDigest)
        .build()
        .unwrap();
    session
        .pending()
        .push(write(dir.path(), "custom_tool", &[("a.txt", "x")]));
    let result = apply(&session).await;
    assert_eq!(result.error_kind(), Some(&ErrorKind::ApprovalPending));
    assert!(result.text_content().contains("another effect"));
    assert!(!dir.path().join("a.txt").exists());
    assert_eq!(session.pending().len(), 1);
}

#[tokio::test]
async fn human_without_an_approver_refuses_and_says_how_to_proceed() {
    let dir = tempfile::tempdir().unwrap();
    let session = Session::builder()
        .approval(ApprovalPolicy::Human)
        .build()
        .unwrap();
    session
        .pending()
        .push(write(dir.path(), "custom_tool", &[("a.txt", "x")]));
    let result = apply(&session).await;
    assert_eq!(result.error_kind(), Some(&ErrorKind::ApprovalPending));
    let text = result.text_content();
    assert!(text.contains("no one to ask"), "{text}");
    assert!(text.contains("\"discard\""), "{text}");
    assert!(!dir.path().join("a.txt").exists());
    // discarding still works
    let discarded = session
        .call("resolve", json!({"action": "discard", "reason": "no"}))
        .await;
    assert!(!discarded.is_error());
    assert!(session.pending().is_empty());
}

#[test]
fn a_malformed_policy_file_is_refused_with_its_line() {
    let bad_decision = "[[rule]]\nname = \"x\"\ndecision = \"perhaps\"\n";
    let err = RulePolicy::parse(bad_decision, "p.toml").unwrap_err();
    assert_eq!(err.line(), Some(3), "{err}");
    assert!(
        err.to_string().starts_with("policy file p.toml, line 3"),
        "{err}"
    );

    let typo = "[[rule]]\nname = \"x\"\ndecision = \"allow\"\nmax_file = 2\n";
    let err = RulePolicy::parse(typo, "p.toml").unwrap_err();
    assert_eq!(err.line(), Some(4), "{err}");
    assert!(err.message().contains("max_file"), "{err}");

    let bad_glob = "[[rule]]\nname = \"x\"\ndecision = \"deny\"\npaths = [\"a/**\", \"b/[\"]\n";
    let err = RulePolicy::parse(bad_glob, "p.toml").unwrap_err();
    assert_eq!(err.line(), Some(4), "{err}");
    assert!(err.message().contains("bad glob `b/[`"), "{err}");

    let not_toml = "[[rule]\n";
    assert_eq!(
        RulePolicy::parse(not_toml, "p.toml").unwrap_err().line(),
        Some(1)
    );
}

#[tokio::test]
async fn the_default_policy_is_unchanged() {
    let dir = tempfile::tempdir().unwrap();
    let session = Session::builder().build().unwrap();
    session
        .pending()
        .push(write(dir.path(), "custom_tool", &[("a.txt", "x")]));
    let result = apply(&session).await;
    assert_eq!(result.text_content(), "Applied: Write: 1 file(s).");
    assert!(result.details.as_ref().unwrap().get("approval").is_none());
}

/// Rotates a key: its details are a bare array of paths (no `files`, nothing a guess could
/// read), and its declared effect touches `secrets/key`.
struct RotateKey {
    root: PathBuf,
}

impl PendingAction for RotateKey {
    fn label(&self) -> String {
        "Rotate: the signing key".into()
    }
    async fn apply(&mut self, _reason: &str) -> Result<AgentToolResult, ToolError> {
        let path = self.root.join("secrets/key");
        std::fs::create_dir_all(path.parent().unwrap())?;
        std::fs::write(path, "new key")?;
        Ok(().into())
    }
    fn details(&self) -> Option<Value> {
        Some(json!(["secrets/key"]))
    }
    fn effect(&self) -> Effect {
        Effect::files([FileEffect::modify("secrets/key")])
    }
}

const ALLOW_BUT_SECRETS: &str = r#"
default = "allow"

[[rule]]
name = "no-secrets"
decision = "deny"
paths = ["secrets/**"]
"#;

#[tokio::test]
async fn a_deny_rule_reads_the_declared_effect_whatever_the_details_are_called() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let audit = root.join("audit.jsonl");
    let session = Session::builder()
        .workspace_root(root)
        .approval(ApprovalPolicy::Rules(Arc::new(
            RulePolicy::parse(ALLOW_BUT_SECRETS, "rules.toml").unwrap(),
        )))
        .audit(AuditLog::open(&audit).unwrap())
        .build()
        .unwrap();
    session.pending().push(RotateKey {
        root: root.to_path_buf(),
    });
    // The prompt a person would see names the file.
    let request = ApprovalRequest {
        summary: session.pending().peek().unwrap(),
        reason: "rotate".into(),
        effect_digest: "d".into(),
        rule: None,
    };
    assert!(
        request.describe().contains("Files (1):\n  secrets/key"),
        "{}",
        request.describe()
    );

    let denied = apply(&session).await;
    assert_eq!(
        denied.error_kind(),
        Some(&ErrorKind::Denied),
        "{}",
        denied.text_content()
    );
    assert!(
        denied
            .text_content()
            .starts_with("Denied by rule `no-secrets`")
    );
    assert!(
        !root.join("secrets/key").exists(),
        "the deny rule was dodged"
    );
    // The audit record names the file, in the push and in the effect.
    let lines = read_audit(&audit);
    let push = lines.iter().find(|l| l["event"] == "push").unwrap();
    assert_eq!(push["effect"]["files"][0]["path"], "secrets/key", "{push}");
    let resolve = lines.iter().find(|l| l["event"] == "resolve").unwrap();
    assert_eq!(resolve["outcome"], "denied");
    assert_eq!(resolve["rule"], "no-secrets");
}

/// Writes a file it does not declare.
struct Undeclared {
    root: PathBuf,
}

impl PendingAction for Undeclared {
    fn label(&self) -> String {
        "Write: somewhere".into()
    }
    async fn apply(&mut self, _reason: &str) -> Result<AgentToolResult, ToolError> {
        std::fs::write(self.root.join("written"), "x")?;
        Ok(().into())
    }
}

#[tokio::test]
async fn an_action_of_unknown_effect_is_never_allowed_unseen_under_rules() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let policy = || {
        ApprovalPolicy::Rules(Arc::new(
            RulePolicy::parse(ALLOW_BUT_SECRETS, "rules.toml").unwrap(),
        ))
    };
    // Nobody to ask: denied, not allowed by the absence of a path rule.
    let session = Session::builder()
        .workspace_root(root)
        .approval(policy())
        .build()
        .unwrap();
    session.pending().push(Undeclared {
        root: root.to_path_buf(),
    });
    let denied = apply(&session).await;
    assert_eq!(
        denied.error_kind(),
        Some(&ErrorKind::Denied),
        "{}",
        denied.text_content()
    );
    assert!(
        denied
            .text_content()
            .contains("does not say which files it touches"),
        "{}",
        denied.text_content()
    );
    assert!(!root.join("written").exists());

    // Someone to ask: asked, told the files are not declared.
    let (approver, mut prompts) = ChannelApprover::new(1);
    let session = Session::builder()
        .workspace_root(root)
        .approval(policy())
        .approver(approver)
        .build()
        .unwrap();
    let person = tokio::spawn(async move {
        let prompt = prompts.recv().await.unwrap();
        let text = prompt.request().describe();
        assert!(text.contains("Files: not declared"), "{text}");
        prompt.decline(None);
    });
    session.pending().push(Undeclared {
        root: root.to_path_buf(),
    });
    let declined = apply(&session).await;
    person.await.unwrap();
    assert_eq!(declined.error_kind(), Some(&ErrorKind::Declined));
    assert!(!root.join("written").exists());
}
