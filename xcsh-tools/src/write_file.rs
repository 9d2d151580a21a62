//! `write_file`: creates or overwrites a whole file, previewed as a diff against what is
//! there (or as a new file) and written only through `resolve`.

use xcsh_core::{AgentToolResult, CustomTool, ToolContext, ToolError};
use xcsh_macros::{custom_tool, pending};

use crate::changeset::{ChangeSet, Fingerprint};
use crate::config::AstToolsConfig;
use crate::output::ChangeOutput;
use crate::run::{plural, workspace};
use crate::staged::{self, Place, Staged};

/// The tool's name.
pub const WRITE_FILE: &str = <WriteFile as CustomTool>::NAME;

/// The `write_file` tool; its fields are the parameters.
///
/// ```
/// use xcsh_core::Session;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let dir = tempfile::tempdir().unwrap();
/// let session = Session::builder().suite(xcsh_tools::builtin_suite()).workspace_root(dir.path()).build().unwrap();
///
/// let preview = session
///     .call("write_file", serde_json::json!({"path": "src/new.rs", "content": "fn main() {}\n"}))
///     .await;
/// assert!(preview.text_content().contains("+fn main() {}"), "{}", preview.text_content());
/// assert_eq!(session.pending().peek().unwrap().label, "Write File: new file src/new.rs (1 line)");
///
/// let applied = session.call("resolve", serde_json::json!({"action": "apply", "reason": "scaffold"})).await;
/// assert_eq!(applied.text_content(), "Wrote new file src/new.rs (1 line).");
/// assert_eq!(std::fs::read_to_string(dir.path().join("src/new.rs")).unwrap(), "fn main() {}\n");
/// # });
/// ```
#[custom_tool(
    name = "write_file",
    label = "Write File",
    description = "Creates a file, or overwrites an existing one, with `content` (the whole \
file). Missing directories are created. For a change to part of a file prefer `edit`. The \
call only previews: it returns a unified diff against what is there (or the new file) and \
whether the result parses, and nothing is written until you call `resolve` with action \
\"apply\" (or \"discard\").",
    read_only,
    destructive = false,
    idempotent,
    open_world = false,
    pending,
    output = crate::output::ChangeOutput,
    // Built in: added by `builtin_suite()` (or by hand), never by `registered()`.
    register = false
)]
#[schemars(description = "The parameters of `write_file`.")]
#[derive(Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct WriteFile {
    /// The file, relative to the workspace root.
    pub path: String,
    /// The file's whole new content.
    pub content: String,
}

impl WriteFile {
    /// Stages the write and previews it; pushes the `WriteFileAction`.
    async fn execute(self, ctx: &ToolContext) -> Result<AgentToolResult, ToolError> {
        let ws = workspace(ctx)?;
        let config = AstToolsConfig::of(ctx);
        let planned = tokio::task::spawn_blocking(move || plan(ws, self, config))
            .await
            .map_err(|join| ToolError::new(format!("the write did not complete: {join}")))??;
        let (changes, shown, summary, places, changed_lines) = match planned {
            Ok(planned) => planned,
            Err(nothing) => {
                let output = ChangeOutput::nothing(nothing.clone(), Vec::new());
                return Ok(AgentToolResult::text(nothing).with_output(&output));
            }
        };
        let staged = Staged::new(ctx, changes, &shown, summary, &places, changed_lines);
        let action = WriteFileAction {
            staged: staged.clone(),
        };
        staged::preview(ctx, "Write File", &staged, Vec::new(), action)
    }
}

/// The change set, the file's name, the summary, the changed places and lines.
type Planned = (ChangeSet, String, String, Vec<Place>, usize);

/// Reads what is there (if anything) and stages the write; `Ok(Err(text))` when the file
/// already holds the content (nothing to do).
fn plan(
    ws: crate::workspace::Workspace,
    write: WriteFile,
    config: AstToolsConfig,
) -> Result<Result<Planned, String>, ToolError> {
    let entry = ws
        .resolve_entry(std::path::Path::new(&write.path))
        .map_err(|e| ToolError::new(format!("path: {e}")))?;
    let shown = ws.display(&entry.named);
    let mut changes = ChangeSet::new(ws).with_undo(config.undo_limits());
    let stage = |e: crate::changeset::ChangeSetError| {
        ToolError::new(format!("cannot stage the write of {shown}: {e}"))
    };
    let lines = write.content.lines().count();
    if !entry.exists {
        changes
            .create(&write.path, write.content.as_bytes())
            .map_err(stage)?;
        let summary = format!("new file {shown} ({})", plural(lines, "line"));
        let places = vec![Place {
            line: 1,
            before: String::new(),
            after: write.content.clone(),
        }];
        return Ok(Ok((changes, shown, summary, places, lines)));
    }
    if entry.target.is_dir() {
        return Err(ToolError::new(format!(
            "{shown} is a directory: `write_file` writes one file; give the path of a file (a directory cannot be overwritten)."
        )));
    }
    let (old, _) = crate::workspace::read_no_follow(&entry.target, None)
        .map_err(|e| ToolError::new(format!("{shown} cannot be read: {e}")))?;
    if old == write.content.as_bytes() {
        return Ok(Err(format!(
            "Nothing to write: {shown} already holds exactly this content."
        )));
    }
    let places = hunks(&old, &write.content);
    let changed: usize = places
        .iter()
        .map(|p| p.before.lines().count().max(p.after.lines().count()).max(1))
        .sum();
    changes
        .modify_expecting(&write.path, Fingerprint::of(&old), write.content.as_bytes())
        .map_err(stage)?;
    let summary = format!(
        "overwrite {shown} ({} changed of {})",
        plural(changed, "line"),
        lines
    );
    Ok(Ok((changes, shown, summary, places, changed)))
}

/// The changed places of `old` → `new`, one per diff hunk of changed lines.
fn hunks(old: &[u8], new: &str) -> Vec<Place> {
    let old = String::from_utf8_lossy(old);
    let diff = similar::TextDiff::configure()
        .timeout(std::time::Duration::from_secs(2))
        .diff_lines(old.as_ref(), new);
    diff.grouped_ops(0)
        .iter()
        .flatten()
        .filter(|op| !matches!(op, similar::DiffOp::Equal { .. }))
        .map(|op| {
            let old_range = op.old_range();
            let new_range = op.new_range();
            Place {
                line: old_range.start + 1,
                before: old_range.filter_map(|i| diff.old_slice(i)).collect(),
                after: new_range.filter_map(|i| diff.new_slice(i)).collect(),
            }
        })
        .collect()
}

/// The pending action `write_file` pushes: writes exactly the previewed content. Durable,
/// with the stale check at apply refusing a file changed (or created) meanwhile.
#[pending(
    durable,
    apply,
    label = "Write File: {}", self.staged.summary,
    source = WriteFile,
    details_fn = shown_details,
    effect_digest_fn = digest,
    effect_fn = touched,
    select_fn = only
)]
#[derive(serde::Serialize, serde::Deserialize)]
struct WriteFileAction {
    staged: Staged,
}

crate::staged::staged_hooks!(WriteFileAction);

impl WriteFileAction {
    async fn apply(&mut self, _reason: &str) -> Result<AgentToolResult, ToolError> {
        let done = format!("Wrote {}.", self.staged.summary);
        self.staged.apply(done).await
    }
}
