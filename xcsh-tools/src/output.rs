//! The built-in tools' structured output (MCP `structuredContent`, declared as their
//! `outputSchema`): counts, per-file summaries, the effect digest and links, bounded so that
//! the widest preview stays far under [`MAX_OUTPUT_BYTES`]. Everything else (every
//! replacement, every file's new content) is a resource the output links to.

use serde::Serialize;
use xcsh_core::{Content, PendingId, Resource, ResourceBody, ToolContext, resource_part_uri};
use xcsh_macros::tool_param;

use crate::changeset::ChangeSet;
use crate::engine::shorten;

/// The most a structured output may take as JSON: lists are cut to stay under it.
pub const MAX_OUTPUT_BYTES: usize = 48 * 1024;

/// Files listed one by one, at most.
const MAX_FILES: usize = 200;
/// Notes, at most, and characters of each.
const MAX_NOTES: usize = 20;
const MAX_NOTE_CHARS: usize = 400;

/// What a change-making tool's call came to.
#[tool_param(serialize)]
#[serde(rename_all = "snake_case")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeStatus {
    /// A change is previewed and pending: `resolve` applies or discards it.
    Preview,
    /// There is nothing to change (nothing matched, nothing to undo); nothing is pending.
    Nothing,
}

/// One file of a previewed change.
#[tool_param(serialize)]
#[serde(rename_all = "camelCase")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileChange {
    /// Root-relative path.
    pub file: String,
    /// Replacements in it, when the tool counts them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replacements: Option<usize>,
    /// A resource holding the exact bytes `resolve` apply writes to it (read with MCP
    /// `resources/read`), while the change is pending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
}

/// The counts of a change.
#[tool_param(serialize)]
#[serde(rename_all = "camelCase")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ChangeTotals {
    /// Files the change touches.
    pub files_changed: usize,
    /// Replacements in all, when the tool counts them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replacements: Option<usize>,
    /// Replacements found before the limit, when the tool searched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replacements_found: Option<usize>,
    /// Matches whose rewrite equals the matched code (not counted as replacements).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identical: Option<usize>,
    /// Files looked at, when the tool searched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files_scanned: Option<usize>,
    /// Files parsed, when the tool searched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files_parsed: Option<usize>,
}

/// The structured output of `ast_edit` and `undo`.
#[tool_param(serialize)]
#[serde(rename_all = "camelCase")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeOutput {
    /// `preview` (pending) or `nothing`.
    pub status: ChangeStatus,
    /// One line: what the change does, or why there is none.
    pub summary: String,
    /// The pending action's id (`resolve`'s description lists it), when one was pushed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_id: Option<u64>,
    /// The counts.
    pub totals: ChangeTotals,
    /// The first files, in path order.
    pub files: Vec<FileChange>,
    /// Files changed but not listed in `files` (the preview resource has them all).
    pub files_omitted: usize,
    /// The digest of the exact effect, which an approval binds and the apply checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effect_digest: Option<String>,
    /// A resource holding the whole preview (the unified diff of every file), while the
    /// change is pending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub preview: Option<String>,
    /// What else a reader should know (limits reached, files skipped, syntax errors).
    pub notes: Vec<String>,
}

impl ChangeOutput {
    /// An output saying there is nothing to change.
    pub fn nothing(summary: impl Into<String>, notes: Vec<String>) -> Self {
        ChangeOutput {
            status: ChangeStatus::Nothing,
            summary: summary.into(),
            pending_id: None,
            totals: ChangeTotals::default(),
            files: Vec::new(),
            files_omitted: 0,
            effect_digest: None,
            preview: None,
            notes: bounded_notes(notes),
        }
    }

    /// The output of a pending change: its files (the first 200), each with a link
    /// to its new content under `preview` (the link [`preview_resource`] gave), and the rest.
    pub fn preview(
        summary: impl Into<String>,
        pending_id: PendingId,
        changes: &ChangeSet,
        replacements: Option<&[usize]>,
        preview: Option<&str>,
        notes: Vec<String>,
    ) -> Self {
        let written = changes.written_files();
        let files_changed = changes.len();
        let mut files: Vec<FileChange> = written
            .iter()
            .take(MAX_FILES)
            .enumerate()
            .map(|(index, file)| FileChange {
                after: preview.map(|uri| resource_part_uri(uri, &format!("after/{file}"))),
                replacements: replacements.and_then(|counts| counts.get(index).copied()),
                file: file.clone(),
            })
            .collect();
        let mut out = ChangeOutput {
            status: ChangeStatus::Preview,
            summary: summary.into(),
            pending_id: Some(pending_id.get()),
            totals: ChangeTotals {
                files_changed,
                replacements: replacements.map(|counts| counts.iter().sum()),
                ..ChangeTotals::default()
            },
            files: Vec::new(),
            files_omitted: 0,
            effect_digest: Some(changes.effect_digest()),
            preview: preview.map(str::to_owned),
            notes: bounded_notes(notes),
        };
        // Long paths could still overflow the budget: list fewer then.
        let base = json_len(&out);
        let mut used = base;
        let keep = files
            .iter()
            .take_while(|file| {
                used += json_len(file) + 1;
                used <= MAX_OUTPUT_BYTES
            })
            .count();
        files.truncate(keep);
        out.files_omitted = written.len() - files.len();
        out.files = files;
        out
    }

    /// With these counts.
    #[must_use]
    pub fn with_totals(mut self, totals: ChangeTotals) -> Self {
        self.totals = totals;
        self
    }
}

fn json_len<T: Serialize>(value: &T) -> usize {
    serde_json::to_vec(value).map_or(0, |bytes| bytes.len())
}

/// At most [`MAX_NOTES`] notes of at most [`MAX_NOTE_CHARS`] characters each.
pub(crate) fn bounded_notes(notes: Vec<String>) -> Vec<String> {
    let total = notes.len();
    let mut kept: Vec<String> = notes
        .into_iter()
        .take(MAX_NOTES)
        .map(|note| shorten(&note, MAX_NOTE_CHARS))
        .collect();
    if total > MAX_NOTES {
        kept.push(format!("… and {} more notes.", total - MAX_NOTES));
    }
    kept
}

/// Appends `diff` to `out`, cut at the last whole line within `max_chars` bytes and then
/// followed by `… the rest of the diff is omitted to keep this preview short; it will be
/// {then}` when longer: the preview text of every producer.
pub(crate) fn push_diff(out: &mut String, diff: &str, max_chars: usize, then: &str) {
    if diff.len() <= max_chars {
        out.push_str(diff);
        return;
    }
    let mut cut = max_chars;
    while !diff.is_char_boundary(cut) {
        cut -= 1;
    }
    let end = diff[..cut].rfind('\n').map_or(0, |i| i + 1);
    out.push_str(&diff[..end]);
    out.push_str("… the rest of the diff is omitted to keep this preview short; it will be ");
    out.push_str(then);
    out.push('\n');
}

/// The resource of a pending change: the whole unified diff (read now, from the files as they
/// are), and at `after/<file>` the exact bytes apply writes to that file. It goes when the
/// action is resolved.
pub fn preview_resource(name: &str, changes: ChangeSet, pending: PendingId) -> Resource {
    Resource::new(name, "text/x-diff", move |part| {
        if part.is_empty() {
            return Ok(ResourceBody::Text(changes.diff()));
        }
        let Some(file) = part.strip_prefix("after/") else {
            return Err(format!(
                "this preview has no part `{part}`: read the preview itself, or `after/<file>` for a file's new content"
            ));
        };
        match changes.contents_after(file)? {
            Some(bytes) => Ok(ResourceBody::from_bytes(bytes)),
            None => Err(format!("this change writes nothing to `{file}`")),
        }
    })
    .with_description(
        "The whole preview: every file's unified diff. Each file's new content, exactly as `resolve` apply writes it, is at `<this uri>/after/<file>`.",
    )
    .while_pending(pending)
}

/// A metavariable's capture, shortened.
#[tool_param(serialize)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaptureSummary {
    /// The metavariable, e.g. `$X`.
    pub name: String,
    /// What it captured, shortened.
    pub text: String,
}

/// One match of a search, shortened.
#[tool_param(serialize)]
#[serde(rename_all = "camelCase")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchSummary {
    /// Root-relative path.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// 1-based line of the end.
    pub end_line: usize,
    /// 1-based column just past the end.
    pub end_column: usize,
    /// The first line of the matched text, shortened.
    pub text: String,
    /// The metavariables' captures, shortened.
    pub captures: Vec<CaptureSummary>,
}

/// The counts of a search.
#[tool_param(serialize)]
#[serde(rename_all = "camelCase")]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SearchTotals {
    /// Files looked at.
    pub files_scanned: usize,
    /// Files parsed.
    pub files_parsed: usize,
    /// Files with a match.
    pub files_matched: usize,
    /// Matches kept (up to the limit).
    pub matches: usize,
    /// Matches found before the limit.
    pub matches_found: usize,
}

/// The structured output of `ast_grep`.
#[tool_param(serialize)]
#[serde(rename_all = "camelCase")]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchOutput {
    /// The counts.
    pub totals: SearchTotals,
    /// Whether the limit cut the matches.
    pub limit_reached: bool,
    /// The first matches, in path order.
    pub matches: Vec<MatchSummary>,
    /// Matches not in `matches` (the text content and `all` have them).
    pub matches_omitted: usize,
    /// A resource holding every match with its captures as JSON, when `shown` is cut.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all: Option<String>,
    /// What else a reader should know.
    pub notes: Vec<String>,
}

impl SearchOutput {
    /// Keeps as many of `shown` as fit the budget; `matches_omitted` counts the rest.
    pub(crate) fn fit(mut self, mut shown: Vec<MatchSummary>) -> Self {
        self.matches = Vec::new();
        let mut used = json_len(&self) + 128;
        let total = shown.len();
        let keep = shown
            .iter()
            .take_while(|m| {
                used += json_len(m) + 1;
                used <= MAX_OUTPUT_BYTES
            })
            .count();
        shown.truncate(keep);
        self.matches_omitted = total - keep;
        self.matches = shown;
        self
    }
}

/// Publishes `resource` on the session; `None` (logged) where the runtime serves none.
pub(crate) fn published(ctx: &ToolContext, resource: Resource) -> Option<(String, Content)> {
    match ctx.publish_resource(resource) {
        Ok(link) => {
            let Content::ResourceLink { uri, .. } = &link else {
                return None;
            };
            Some((uri.clone(), link))
        }
        Err(e) => {
            tracing::debug!(error = %e.message(), "no resource for the preview");
            None
        }
    }
}
