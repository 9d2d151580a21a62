//! `apply_patch`: a patch in Codex's format previewed as a diff, written only through
//! `resolve`, all or nothing.

use std::fmt::Write as _;

use serde_json::Value;
use xcsh_core::{AgentToolResult, CustomTool, ToolContext, ToolError};
use xcsh_macros::{custom_tool, pending};

use crate::changeset::ChangeSet;
use crate::config::AstToolsConfig;
use crate::output::{ChangeOutput, ChangeTotals, preview_resource, published};
use crate::patch::{FileAction, PatchPlan, PlannedFile, parse, plan};
use crate::run::{plural, workspace};
use crate::staged::{apply_guarded, judge_syntax};
use crate::syntax::{SyntaxHints, SyntaxReport};

/// The tool's name.
pub const APPLY_PATCH: &str = <ApplyPatch as CustomTool>::NAME;

/// Files the preview's text lists one by one; the resource has them all.
const LISTED_FILES: usize = 200;

/// The `apply_patch` tool: its one parameter is the patch text, in the format of Codex's
/// `apply_patch` (see [`crate::patch`]). The call previews; `resolve` writes the whole patch
/// or nothing.
///
/// ```
/// use xcsh_core::Session;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("hello.py"), "def greet():\n    print(\"Hi\")\n").unwrap();
/// let session = Session::builder().custom::<xcsh_tools::ApplyPatch>().workspace_root(dir.path()).build().unwrap();
///
/// let patch = "*** Begin Patch\n*** Update File: hello.py\n@@ def greet():\n-    print(\"Hi\")\n+    print(\"Hello\")\n*** Add File: notes.txt\n+done\n*** End Patch";
/// let preview = session.call("apply_patch", serde_json::json!({"patch": patch})).await;
/// assert!(preview.text_content().contains("+    print(\"Hello\")"), "{}", preview.text_content());
/// assert_eq!(session.pending().peek().unwrap().label, "Apply Patch: 1 file updated, 1 added");
///
/// let applied = session.call("resolve", serde_json::json!({"action": "apply", "reason": "ok"})).await;
/// assert_eq!(applied.text_content(), "Applied the patch: 1 file updated, 1 added.");
/// assert!(std::fs::read_to_string(dir.path().join("hello.py")).unwrap().contains("Hello"));
/// # });
/// ```
#[custom_tool(
    name = "apply_patch",
    label = "Apply Patch",
    description = "Edits files with a patch in the apply_patch format. The patch starts with \
`*** Begin Patch` and ends with `*** End Patch`; between them, file operations: `*** Add File: \
<path>` followed by the new file's lines, each starting with `+`; `*** Delete File: <path>`; \
`*** Update File: <path>`, optionally followed by `*** Move to: <new path>`, then hunks. A hunk \
starts with `@@` (optionally `@@ <a line above the change, such as a class or function>`; \
several `@@` lines narrow step by step), then lines starting with ` ` (context, about 3 lines \
before and after each change), `-` (removed) or `+` (added); `*** End of File` after a hunk \
whose lines end the file. Paths are relative to the workspace root. The call only previews: \
it returns a unified diff and nothing is written until you call `resolve` with action \
\"apply\" (or \"discard\"). The patch applies whole or not at all: a hunk that does not match \
is reported with the closest place in the file and what differs, and nothing is written.",
    // The call itself only reads and previews; writing happens through `resolve`.
    read_only,
    destructive = false,
    idempotent,
    open_world = false,
    pending,
    output = ChangeOutput,
    // Built in: added by `builtin_suite()` (or by hand), never by `registered()`.
    register = false
)]
#[schemars(description = "The parameters of `apply_patch`.")]
#[derive(Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct ApplyPatch {
    /// The whole patch, from `*** Begin Patch` to `*** End Patch`.
    pub patch: String,
}

impl ApplyPatch {
    /// Plans the patch over the workspace and previews it; pushes the action that writes it.
    async fn execute(self, ctx: &ToolContext) -> Result<AgentToolResult, ToolError> {
        let config = AstToolsConfig::of(ctx);
        let ws = workspace(ctx)?;
        let text = self.patch;
        let planned = tokio::task::spawn_blocking(move || plan(&ws, &parse(&text)?))
            .await
            .map_err(|join| ToolError::new(format!("the patch could not be planned: {join}")))?
            .map_err(|e| ToolError::new(refusal(&e)))?;
        let planned = PatchPlan {
            changes: planned.changes.with_undo(config.undo_limits()),
            ..planned
        };
        let changes = planned.changes.clone();
        if changes.is_empty() {
            let text = "No changes: the patch leaves every file as it is.".to_owned();
            let output = ChangeOutput::nothing(text.clone(), planned.notes.clone());
            let mut text = text;
            for note in &planned.notes {
                let _ = write!(text, "\n{note}");
            }
            return Ok(AgentToolResult::text(text).with_output(&output));
        }
        // The syntax guard: does every changed file still parse?
        let mut notes = planned.notes.clone();
        let mut text = render_preview(&planned, config.max_preview_chars());
        let (syntax, refuse) = judge_syntax(
            &changes,
            SyntaxHints::default(),
            &config,
            &mut notes,
            &mut text,
        )
        .await?;
        let rows: Vec<Row> = planned.files.iter().map(Row::of).collect();
        let details =
            serde_json::json!({ "files": rows, "notes": planned.notes, "syntax": syntax });
        let what = summary(&rows);
        let action = ApplyPatchAction {
            rows,
            changes: changes.clone(),
            details: details.clone(),
            syntax,
            refuse,
        };
        let id = ctx.push_pending_action(action)?;
        let mut result = AgentToolResult::text(text).with_details(details);
        let link = published(
            ctx,
            preview_resource("Apply Patch preview", changes.clone(), id),
        );
        let output = ChangeOutput::preview(
            format!("Apply Patch: {what}"),
            id,
            &changes,
            None,
            link.as_ref().map(|(uri, _)| uri.as_str()),
            notes,
        )
        .with_totals(ChangeTotals {
            files_changed: changes.len(),
            ..ChangeTotals::default()
        });
        if let Some((_, link)) = link {
            result.content.push(link);
        }
        Ok(result.with_output(&output))
    }
}

/// The model's view of a patch that cannot be applied.
fn refusal(e: &crate::patch::PatchError) -> String {
    format!(
        "The patch was not applied: {e}\nNothing was written: a patch applies whole or not at all. Fix this and call apply_patch again with the whole patch."
    )
}

/// One file of the patch, as the action keeps it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
struct Row {
    file: String,
    /// `added`, `replaced`, `updated`, `deleted`, `moved`.
    action: String,
    /// A move's source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    from: Option<String>,
    hunks: usize,
    /// The change-set operations it is, by the names `ChangeSet::retain_files` knows (a
    /// rename by its source; a move that rewrites by its destination and its source).
    parts: Vec<String>,
}

impl Row {
    fn of(f: &PlannedFile) -> Self {
        let action = f.action.verb();
        let from = match &f.action {
            FileAction::Rename { from } | FileAction::MoveHere { from, .. } => Some(from.clone()),
            _ => None,
        };
        let parts = match &f.action {
            FileAction::Rename { from } => vec![from.clone()],
            FileAction::MoveHere { from, .. } => vec![f.file.clone(), from.clone()],
            _ => vec![f.file.clone()],
        };
        Row {
            file: f.file.clone(),
            action: action.to_owned(),
            from,
            hunks: f.hunks,
            parts,
        }
    }
}

/// `2 files updated, 1 added`, from the rows' actions.
fn summary(rows: &[Row]) -> String {
    crate::patch::summary(rows.iter().map(|r| r.action.as_str()))
}

/// The preview a model (or person) reads: the files, the diff (cut at `max_diff_chars`),
/// the notes, what to do.
pub fn render_preview(planned: &PatchPlan, max_diff_chars: usize) -> String {
    let rows: Vec<Row> = planned.files.iter().map(Row::of).collect();
    let mut out = format!("Apply Patch preview: {}.\n\n", summary(&rows));
    for f in planned.files.iter().take(LISTED_FILES) {
        let _ = writeln!(out, "{}: {}", f.file, f.describe());
    }
    if planned.files.len() > LISTED_FILES {
        let _ = writeln!(
            out,
            "… and {} more (the preview resource linked below lists every file).",
            plural(planned.files.len() - LISTED_FILES, "file")
        );
    }
    out.push('\n');
    let diff = planned.changes.diff();
    crate::output::push_diff(
        &mut out,
        &diff,
        max_diff_chars,
        "applied too (the preview resource linked below holds all of it).",
    );
    out.truncate(out.trim_end().len());
    if !planned.notes.is_empty() {
        out.push('\n');
        for note in &planned.notes {
            let _ = write!(out, "\n{note}");
        }
    }
    out.push_str("\n\nNothing is written yet. Call `resolve` with action \"apply\" to write these changes, or \"discard\" to drop them.");
    out
}

/// The pending action `apply_patch` pushes: writes exactly the previewed change set. Durable,
/// like `ast_edit`'s: a durable session keeps it across restarts, and the stale check still
/// refuses any file changed meanwhile.
#[pending(
    durable,
    apply,
    label = "Apply Patch: {}", summary(&self.rows),
    source = ApplyPatch,
    details = details,
    effect_digest_fn = digest,
    effect_fn = touched,
    select_fn = only
)]
#[derive(serde::Serialize, serde::Deserialize)]
struct ApplyPatchAction {
    rows: Vec<Row>,
    changes: ChangeSet,
    details: Value,
    /// The syntax guard's verdict on the change.
    #[serde(default)]
    syntax: SyntaxReport,
    /// Whether the guard refuses a change that breaks a file (`syntax_guard = "refuse"`).
    #[serde(default)]
    refuse: bool,
}

impl ApplyPatchAction {
    /// Narrows the patch to `files` (a person's partial approval, by file): a move is taken
    /// whole, named by either of its paths.
    fn only(&mut self, files: &[String]) -> Result<(), String> {
        let chosen = |r: &Row| {
            files
                .iter()
                .any(|f| *f == r.file || Some(f) == r.from.as_ref())
        };
        let mut names: Vec<String> = Vec::new();
        for f in files {
            match self
                .rows
                .iter()
                .find(|r| *f == r.file || Some(f) == r.from.as_ref())
            {
                Some(row) => names.extend(row.parts.iter().cloned()),
                // Not in the patch: the change set refuses it, naming what it touches.
                None => names.push(f.clone()),
            }
        }
        names.dedup();
        let mut changes = self.changes.clone();
        changes.retain_files(&names)?;
        self.rows.retain(chosen);
        self.syntax.retain_files(&names);
        self.details = serde_json::json!({
            "files": self.rows,
            "notes": self.details.get("notes"),
            "syntax": self.syntax,
        });
        self.changes = changes;
        Ok(())
    }

    fn touched(&self) -> xcsh_core::Effect {
        self.changes.effect()
    }

    fn digest(&self) -> String {
        self.changes.effect_digest()
    }

    async fn apply(&mut self, _reason: &str) -> Result<AgentToolResult, ToolError> {
        let written = apply_guarded(&self.changes, &self.syntax, self.refuse).await?;
        let what = summary(&self.rows);
        Ok(AgentToolResult::text(if written {
            format!("Applied the patch: {what}.")
        } else {
            format!(
                "Already applied: the patch ({what}) is already in the files (applied earlier, by a process that stopped before it could report it); nothing was written now."
            )
        }))
    }
}
