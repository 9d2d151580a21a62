//! `undo`: previews reverting the most recent apply in the workspace, written only through
//! `resolve`.

use std::fmt::Write as _;

use xcsh_core::{AgentToolResult, CustomTool, ErrorKind, ToolContext, ToolError};
use xcsh_macros::{custom_tool, pending};

use crate::output::{ChangeOutput, preview_resource};

use crate::changeset::{ApplyError, Undo, UndoError};
use crate::config::AstToolsConfig;
use crate::run::workspace;

/// The tool's name.
pub const UNDO: &str = <UndoLast as CustomTool>::NAME;

/// The `undo` tool: it takes no parameters. It reverts the newest apply kept in the workspace
/// (see [`Undo`](crate::changeset::Undo)), as a preview first; how many applies are kept is
/// the session's [`AstToolsConfig::with_undo_limits`].
///
/// ```
/// use xcsh_core::Session;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("lib.rs"), "fn f() { a.unwrap(); }\n").unwrap();
/// let session = Session::builder()
///     .suite(xcsh_tools::builtin_suite())
///     .workspace_root(dir.path())
///     .build()
///     .unwrap();
/// let resolve = serde_json::json!({"action": "apply", "reason": "test"});
///
/// session
///     .call("ast_edit", serde_json::json!({"ops": [{"pat": "$X.unwrap()", "out": "$X?"}], "lang": "rust"}))
///     .await;
/// session.call("resolve", resolve.clone()).await;
/// assert_eq!(std::fs::read_to_string(dir.path().join("lib.rs")).unwrap(), "fn f() { a?; }\n");
///
/// let preview = session.call("undo", serde_json::json!({})).await;
/// assert!(preview.text_content().contains("-fn f() { a?; }\n+fn f() { a.unwrap(); }"));
/// let reverted = session.call("resolve", resolve).await;
/// assert!(reverted.text_content().starts_with("Reverted apply #1"), "{}", reverted.text_content());
/// assert_eq!(std::fs::read_to_string(dir.path().join("lib.rs")).unwrap(), "fn f() { a.unwrap(); }\n");
/// # });
/// ```
#[custom_tool(
    name = "undo",
    label = "Undo",
    description = "Previews reverting the most recent change applied in the workspace (an \
`ast_edit` or an earlier `undo` applied through `resolve`, or a change a person applied with \
xcsh) as a unified diff. Nothing is written until you call `resolve` with action \"apply\" \
(or \"discard\"). Refused, naming the files, if they changed since that change was applied. \
Call it again after applying to revert the change before. Takes no parameters.",
    read_only,
    destructive = false,
    idempotent,
    open_world = false,
    pending,
    output = crate::output::ChangeOutput,
    // Built in: added by `builtin_suite()` (or by hand), never by `registered()`.
    register = false
)]
#[schemars(description = "The parameters of `undo`: none.")]
#[derive(Debug, Clone, Default)]
#[serde(deny_unknown_fields)]
pub struct UndoLast {}

impl UndoLast {
    /// Builds the revert and previews it; pushes the `UndoAction` that applies it.
    async fn execute(self, ctx: &ToolContext) -> Result<AgentToolResult, ToolError> {
        let config = AstToolsConfig::of(ctx);
        let ws = workspace(ctx)?;
        let limits = config.undo_limits();
        let keep = limits.keep();
        let undo = tokio::task::spawn_blocking(move || {
            Undo::last(&ws).map(|u| u.map(|u| u.with_undo(limits)))
        })
        .await
        .map_err(|join| ToolError::new(format!("the undo did not complete: {join}")))?
        .map_err(undo_error)?;
        let Some(undo) = undo else {
            let text = format!(
                "Nothing to undo: no applied change is kept in this workspace (the last {keep} applied changes are kept; an undo removes the one it reverts)."
            );
            let output = ChangeOutput::nothing(text.clone(), Vec::new());
            return Ok(AgentToolResult::text(text).with_output(&output));
        };
        let text = render(&undo, config.max_preview_chars());
        let changes = undo.change_set().clone();
        let what = format!("Undo: revert {}", undo.entry());
        let id = ctx.push_pending_action(UndoAction { undo })?;
        let mut result = AgentToolResult::text(text);
        let link =
            crate::output::published(ctx, preview_resource("Undo preview", changes.clone(), id));
        let output = ChangeOutput::preview(
            what,
            id,
            &changes,
            None,
            link.as_ref().map(|(uri, _)| uri.as_str()),
            Vec::new(),
        );
        if let Some((_, link)) = link {
            result.content.push(link);
        }
        Ok(result.with_output(&output))
    }
}

/// The model's view of why the undo cannot be previewed.
fn undo_error(e: UndoError) -> ToolError {
    let kind = match &e {
        UndoError::Changed { files, .. } => ErrorKind::Stale {
            files: files.iter().map(|(path, _)| path.clone()).collect(),
        },
        _ => ErrorKind::Tool,
    };
    ToolError::with_kind(kind, e.to_string())
}

/// The preview text: which apply, the diff (cut at `max_diff_chars`), what to do.
fn render(undo: &Undo, max_diff_chars: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "Undo preview: revert {}.\n", undo.entry());
    let diff = undo.diff();
    crate::output::push_diff(&mut out, &diff, max_diff_chars, "reverted too.");
    out.truncate(out.trim_end().len());
    out.push_str("\n\nNothing is written yet. Call `resolve` with action \"apply\" to revert this change, or \"discard\" to keep it.");
    out
}

/// The pending action `undo` pushes: applies exactly the previewed revert.
#[pending(
    apply,
    label = "Undo: revert {}", self.undo.entry(),
    source = UndoLast,
    effect_digest_fn = digest,
    effect_fn = touched
)]
struct UndoAction {
    undo: Undo,
}

impl UndoAction {
    /// The files the revert writes.
    fn touched(&self) -> xcsh_core::Effect {
        self.undo.change_set().effect()
    }

    /// What the revert writes, exactly.
    fn digest(&self) -> String {
        self.undo.change_set().effect_digest()
    }

    async fn apply(&mut self, _reason: &str) -> Result<AgentToolResult, ToolError> {
        let undo = self.undo.clone();
        let report = tokio::task::spawn_blocking(move || undo.apply())
            .await
            .map_err(|join| ToolError::new(format!("the undo did not complete: {join}")))?
            .map_err(ApplyError::into_tool_error)?;
        Ok(AgentToolResult::text(format!(
            "Reverted apply #{}: {report}.",
            self.undo.entry().id
        )))
    }
}
