//! One file's change, previewed and pending: what `edit` and `write_file` share (the preview
//! text with its diff and syntax verdict, the details an approval prompt shows, the bounded
//! structured output, and the apply with its syntax-guard refusal); the apply itself,
//! [`apply_guarded`], serves `ast_edit` and `apply_patch` too.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use xcsh_core::{AgentToolResult, PendingAction, ToolContext, ToolError};

use crate::changeset::{ApplyError, ChangeSet};
use crate::config::AstToolsConfig;
use crate::output::{ChangeOutput, ChangeTotals, preview_resource, published};
use crate::syntax::{SyntaxGuard, SyntaxHints, SyntaxReport, with_syntax};

/// Characters of before/after text per change in the details.
const DETAIL_TEXT_CHARS: usize = 200;

/// One changed place, as the details list it (and the approval prompt shows it:
/// `line: before → after`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Place {
    /// 1-based line in the file as it is.
    pub(crate) line: usize,
    pub(crate) before: String,
    pub(crate) after: String,
}

/// What a pending single-file change holds: durable (serialisable) and enough to apply,
/// narrow, describe and refuse it.
#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct Staged {
    pub(crate) changes: ChangeSet,
    /// `1 replacement in src/a.rs`, `new file src/a.rs`: the label after the tool's name.
    pub(crate) summary: String,
    /// `{"files": [{"file", "replacements": [{line, before, after}]}], "syntax": …}`.
    pub(crate) details: Value,
    /// Lines the change touches (the effect's changed lines).
    pub(crate) changed_lines: usize,
    /// The syntax guard's verdict.
    pub(crate) syntax: SyntaxReport,
    /// Whether the guard refuses a change that breaks a file.
    pub(crate) refuse: bool,
}

impl Staged {
    /// Stages `changes` on `file`, judging its syntax now.
    pub(crate) fn new(
        ctx: &ToolContext,
        changes: ChangeSet,
        file: &str,
        summary: String,
        places: &[Place],
        changed_lines: usize,
    ) -> Self {
        let config = AstToolsConfig::of(ctx);
        let syntax = SyntaxReport::check(&changes);
        let cut = |s: &str| crate::engine::shorten(s, DETAIL_TEXT_CHARS);
        let replacements: Vec<Value> = places
            .iter()
            .map(|p| serde_json::json!({"line": p.line, "before": cut(&p.before), "after": cut(&p.after)}))
            .collect();
        let details = serde_json::json!({
            "files": [{"file": file, "replacements": replacements}],
            "totals": {"filesChanged": changes.len(), "replacements": places.len()},
            "syntax": syntax,
        });
        Staged {
            changes,
            summary,
            details,
            changed_lines,
            syntax,
            refuse: config.syntax_guard() == SyntaxGuard::Refuse,
        }
    }

    /// The refusal apply returns, when the guard refuses this change.
    pub(crate) fn refusal(&self) -> Option<String> {
        self.syntax.refusal(guard_of(self.refuse))
    }

    /// The preview's text: headline, diff (cut at the configured size), notes, what to do.
    pub(crate) fn render(&self, title: &str, max_diff_chars: usize, notes: &[String]) -> String {
        let mut out = format!("{title} preview: {}.\n\n", self.summary);
        let diff = self.changes.diff();
        crate::output::push_diff(
            &mut out,
            &diff,
            max_diff_chars,
            "written too (the preview resource linked below holds all of it).",
        );
        out.truncate(out.trim_end().len());
        out.push('\n');
        for note in notes.iter().chain(&self.syntax.notes()) {
            let _ = write!(out, "\n{note}");
        }
        match self.refusal() {
            Some(refusal) => {
                let _ = write!(
                    out,
                    "\n\nThis change will be refused: {refusal}"
                );
            }
            None => out.push_str("\n\nNothing is written yet. Call `resolve` with action \"apply\" to write this change, or \"discard\" to drop it."),
        }
        out
    }

    /// The effect: the file with its changed lines.
    pub(crate) fn effect(&self) -> xcsh_core::Effect {
        let files: Vec<_> = self
            .changes
            .effect()
            .file_effects()
            .iter()
            .map(|f| f.clone().with_changed_lines(self.changed_lines.max(1)))
            .collect();
        xcsh_core::Effect::files(files)
    }

    /// Narrows to `files` (a partial apply): the change set, the syntax verdicts.
    pub(crate) fn only(&mut self, files: &[String]) -> Result<(), String> {
        let mut changes = self.changes.clone();
        changes.retain_files(files)?;
        self.changes = changes;
        self.syntax.retain_files(files);
        Ok(())
    }

    /// Writes the change (or refuses, writing nothing): `done` is the text on success.
    pub(crate) async fn apply(&self, done: String) -> Result<AgentToolResult, ToolError> {
        let written = apply_guarded(&self.changes, &self.syntax, self.refuse).await?;
        Ok(AgentToolResult::text(if written {
            done
        } else {
            format!(
                "Already applied: {} is already in the file (applied earlier, by a process that stopped before it could report it, or by an identical change); nothing was written now.",
                self.summary
            )
        }))
    }
}

/// The `#[pending]` hooks of an action that holds one `staged: Staged` (`edit`'s,
/// `write_file`'s), each handed to it: the details (every replaced place, the totals and the
/// syntax verdict), the effect, its digest and the narrowing to some files.
macro_rules! staged_hooks {
    ($action:ty) => {
        impl $action {
            fn shown_details(&self) -> serde_json::Value {
                self.staged.details.clone()
            }

            fn touched(&self) -> xcsh_core::Effect {
                self.staged.effect()
            }

            fn digest(&self) -> String {
                self.staged.changes.effect_digest()
            }

            fn only(&mut self, files: &[String]) -> Result<(), String> {
                self.staged.only(files)
            }
        }
    };
}
pub(crate) use staged_hooks;

/// The syntax guard on a change `ast_edit` or `apply_patch` previews: judged off the async
/// runtime (told which originals the producer knows parse), its notes (and the refusal, under
/// `refuse`) added to `notes` and to the preview's `text`. Returns the verdict and whether
/// the guard refuses a broken file.
pub(crate) async fn judge_syntax(
    changes: &ChangeSet,
    hints: SyntaxHints,
    config: &AstToolsConfig,
    notes: &mut Vec<String>,
    text: &mut String,
) -> Result<(SyntaxReport, bool), ToolError> {
    let checked = changes.clone();
    let syntax = tokio::task::spawn_blocking(move || SyntaxReport::check_knowing(&checked, &hints))
        .await
        .map_err(|join| ToolError::new(format!("the syntax check did not complete: {join}")))?;
    let refusal = syntax.refusal(config.syntax_guard());
    notes.extend(syntax.notes());
    if let Some(refusal) = &refusal {
        notes.push(format!("This change will be refused: {refusal}"));
    }
    with_syntax(text, &syntax, refusal.as_deref());
    Ok((syntax, config.syntax_guard() == SyntaxGuard::Refuse))
}

/// The guard a pending action keeps as `refuse`.
fn guard_of(refuse: bool) -> SyntaxGuard {
    if refuse {
        SyntaxGuard::Refuse
    } else {
        SyntaxGuard::Warn
    }
}

/// The apply every built-in producer shares: refused, writing nothing, when the syntax guard
/// (`refuse`) refuses what `syntax` judged; else `changes` written off the async runtime.
/// `Ok(false)`: nothing was written because the change is already in the files (a process
/// applied it and stopped before it could say so: a durable session's restart), not twice.
pub(crate) async fn apply_guarded(
    changes: &ChangeSet,
    syntax: &SyntaxReport,
    refuse: bool,
) -> Result<bool, ToolError> {
    if let Some(refusal) = syntax.refusal(guard_of(refuse)) {
        return Err(ToolError::new(refusal));
    }
    let changes = changes.clone();
    tokio::task::spawn_blocking(move || match changes.apply() {
        Err(ApplyError::Stale { .. }) if changes.already_applied() => Ok(false),
        other => other.map(|_| true),
    })
    .await
    .map_err(|join| ToolError::new(format!("the apply did not complete: {join}")))?
    .map_err(ApplyError::into_tool_error)
}

/// Pushes `action` (holding `staged`) and answers with the preview: text, details, the
/// bounded structured output and the preview resource's link.
pub(crate) fn preview<A: PendingAction + 'static>(
    ctx: &ToolContext,
    title: &str,
    staged: &Staged,
    notes: Vec<String>,
    action: A,
) -> Result<AgentToolResult, ToolError> {
    let config = AstToolsConfig::of(ctx);
    let text = staged.render(title, config.max_preview_chars(), &notes);
    let changes = staged.changes.clone();
    let replacements = staged
        .details
        .pointer("/totals/replacements")
        .and_then(Value::as_u64)
        .map(|n| n as usize);
    let id = ctx.push_pending_action(action)?;
    let mut result = AgentToolResult::text(text).with_details(staged.details.clone());
    let link = published(
        ctx,
        preview_resource(&format!("{title} preview"), changes.clone(), id),
    );
    let mut all_notes = notes;
    all_notes.extend(staged.syntax.notes());
    if let Some(refusal) = staged.refusal() {
        all_notes.push(format!("This change will be refused: {refusal}"));
    }
    let per_file = replacements.map(|n| vec![n]);
    let output = ChangeOutput::preview(
        format!("{title}: {}", staged.summary),
        id,
        &changes,
        per_file.as_deref(),
        link.as_ref().map(|(uri, _)| uri.as_str()),
        all_notes,
    )
    .with_totals(ChangeTotals {
        files_changed: changes.len(),
        replacements,
        ..ChangeTotals::default()
    });
    if let Some((_, link)) = link {
        result.content.push(link);
    }
    Ok(result.with_output(&output))
}
