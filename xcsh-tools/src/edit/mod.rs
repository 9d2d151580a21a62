//! `edit`: replaces an exact string in one file, previewed as a diff and written only through
//! `resolve`.
//!
//! Line endings: an `old` written with `\n` line breaks matches a file with CRLF (`\r\n`)
//! endings (and the reverse): when the exact text is not there, it is looked for with line
//! endings ignored, and `new` is then written with the file's endings, so a CRLF file stays
//! CRLF; the preview says so. When the lines matched mix CRLF and LF endings there is no
//! faithful way to write `new`, and the edit is refused, naming the lines.

mod locate;

use xcsh_core::{AgentToolResult, CustomTool, ToolContext, ToolError};
use xcsh_macros::{custom_tool, pending};

use crate::changeset::{ChangeSet, Fingerprint, Splice};
use crate::config::AstToolsConfig;
use crate::run::{plural, workspace};
use crate::staged::{self, Place, Staged};

/// The tool's name.
pub const EDIT: &str = <Edit as CustomTool>::NAME;

/// The `edit` tool; its fields are the parameters.
///
/// ```
/// use xcsh_core::Session;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("a.py"), "def f():\n    return 1\n").unwrap();
/// let session = Session::builder().suite(xcsh_tools::builtin_suite()).workspace_root(dir.path()).build().unwrap();
///
/// let preview = session
///     .call("edit", serde_json::json!({"path": "a.py", "old": "return 1", "new": "return 2"}))
///     .await;
/// assert!(preview.text_content().contains("-    return 1\n+    return 2"), "{}", preview.text_content());
/// assert_eq!(session.pending().peek().unwrap().label, "Edit: 1 replacement in a.py");
///
/// let applied = session.call("resolve", serde_json::json!({"action": "apply", "reason": "fix"})).await;
/// assert_eq!(applied.text_content(), "Applied 1 replacement in a.py.");
/// assert_eq!(std::fs::read_to_string(dir.path().join("a.py")).unwrap(), "def f():\n    return 2\n");
/// # });
/// ```
#[custom_tool(
    name = "edit",
    label = "Edit",
    description = "Replaces an exact string in one file. `old` must occur exactly once (or set \
`replace_all` to replace every occurrence); copy it from the file with its indentation. When \
`old` is not found, the answer names the nearest candidates with their line numbers and what \
differs (indentation, whitespace, a changed line); when it occurs several times, their lines. \
An `old` written with \\n line breaks matches a CRLF file, and the file keeps its CRLF endings. \
The call only previews: it returns a unified diff (and whether the file still parses) and \
nothing is written until you call `resolve` with action \"apply\" (or \"discard\").",
    read_only,
    destructive = false,
    idempotent,
    open_world = false,
    pending,
    output = crate::output::ChangeOutput,
    // Built in: added by `builtin_suite()` (or by hand), never by `registered()`.
    register = false
)]
#[schemars(description = "The parameters of `edit`.")]
#[derive(Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct Edit {
    /// The file, relative to the workspace root.
    pub path: String,
    /// The exact text to replace (not empty), as the file has it.
    pub old: String,
    /// The text to put in its place (different from `old`).
    pub new: String,
    /// Replace every occurrence of `old` instead of requiring exactly one.
    #[serde(default)]
    pub replace_all: bool,
}

impl Edit {
    /// Finds `old`, stages the replacement and previews it; pushes the `EditAction`.
    async fn execute(self, ctx: &ToolContext) -> Result<AgentToolResult, ToolError> {
        if self.old.is_empty() {
            return Err(ToolError::new(
                "`old` is empty: give the exact text to replace (to create a file or replace all of it, use `write_file`).",
            ));
        }
        if self.old == self.new {
            return Err(ToolError::new(
                "`old` and `new` are the same text, so the edit would change nothing: give in `new` the text that should replace `old`.",
            ));
        }
        let ws = workspace(ctx)?;
        let config = AstToolsConfig::of(ctx);
        let edit = self.clone();
        let ctx_config = config;
        let staged_parts = tokio::task::spawn_blocking(move || plan(ws, &edit, ctx_config))
            .await
            .map_err(|join| ToolError::new(format!("the edit did not complete: {join}")))??;
        let (changes, shown, places, note) = staged_parts;
        let count = places.len();
        let summary = format!("{} in {shown}", plural(count, "replacement"));
        let changed_lines = places
            .iter()
            .map(|p| p.before.lines().count().max(p.after.lines().count()).max(1))
            .sum();
        let staged = Staged::new(ctx, changes, &shown, summary, &places, changed_lines);
        let action = EditAction {
            staged: staged.clone(),
        };
        staged::preview(ctx, "Edit", &staged, note.into_iter().collect(), action)
    }
}

/// The change set, the file's name, the places replaced and the line-ending note.
type Planned = (ChangeSet, String, Vec<Place>, Option<String>);

/// Reads the file, finds `old` and stages the replacement.
fn plan(
    ws: crate::workspace::Workspace,
    edit: &Edit,
    config: AstToolsConfig,
) -> Result<Planned, ToolError> {
    let entry = ws
        .resolve_entry(std::path::Path::new(&edit.path))
        .map_err(|e| ToolError::new(format!("path: {e}")))?;
    let shown = ws.display(&entry.named);
    if !entry.exists {
        return Err(ToolError::new(format!(
            "{shown} does not exist: `edit` changes an existing file; create it with `write_file`."
        )));
    }
    if entry.target.is_dir() {
        return Err(ToolError::new(format!(
            "{shown} is a directory: `edit` changes one file; give the path of a file."
        )));
    }
    let max = config.walk_options().max_file_bytes;
    let (bytes, _) = crate::workspace::read_no_follow(&entry.target, Some(max)).map_err(|e| {
        ToolError::new(format!(
            "{shown} cannot be read: {e} (files over {max} bytes are not edited)"
        ))
    })?;
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return Err(ToolError::new(format!(
            "{shown} is not UTF-8 text: `edit` replaces text; use `write_file` to replace the whole file."
        )));
    };
    let found = locate::locate(text, &shown, &edit.old, &edit.new, edit.replace_all)
        .map_err(ToolError::new)?;
    let mut line = 1;
    let mut seen = 0;
    let mut places = Vec::new();
    for range in &found.ranges {
        line += memchr::memchr_iter(b'\n', &bytes[seen..range.start]).count();
        seen = range.start;
        places.push(Place {
            line,
            before: text[range.clone()].to_owned(),
            after: found.new.clone(),
        });
    }
    let splices = found
        .ranges
        .iter()
        .map(|r| Splice::new(r.clone(), found.new.clone()));
    let mut changes = ChangeSet::new(ws).with_undo(config.undo_limits());
    changes
        .modify_splicing(&edit.path, Fingerprint::of(&bytes), splices)
        .map_err(|e| ToolError::new(format!("cannot stage the edit of {shown}: {e}")))?;
    Ok((changes, shown, places, found.note))
}

/// The pending action `edit` pushes: writes exactly the previewed replacement. Durable, with
/// the stale check at apply refusing a file changed meanwhile.
#[pending(
    durable,
    apply,
    label = "Edit: {}", self.staged.summary,
    source = Edit,
    details_fn = shown_details,
    effect_digest_fn = digest,
    effect_fn = touched,
    select_fn = only
)]
#[derive(serde::Serialize, serde::Deserialize)]
struct EditAction {
    staged: Staged,
}

crate::staged::staged_hooks!(EditAction);

impl EditAction {
    async fn apply(&mut self, _reason: &str) -> Result<AgentToolResult, ToolError> {
        let done = format!("Applied {}.", self.staged.summary);
        self.staged.apply(done).await
    }
}
