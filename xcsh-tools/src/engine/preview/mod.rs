//! Showing a plan: unified diffs for people and models, a serialisable summary for interfaces.
//!
//! A plan keeps no file contents, so a diff reads its file's original again, checks it against
//! the plan's fingerprint and splices the replacements in, for the time it takes to diff it:
//! one file at a time, however large the plan. A file that changed on disk since it was
//! planned cannot be shown (its replacements fit only what was read); its part of the preview
//! says so instead, as apply will refuse it. Everything else comes from the plan alone, in
//! path order, so the same plan over the same files always renders the same way.

use std::fmt::Write as _;

use super::pattern::shorten;
use super::{EditPlan, EditTotals, FileEdit, LimitReport, Skipped};
use crate::changeset::StaleFile;
use serde::Serialize;

/// The unified diff of one file (`a/` and `b/` headers, 3 lines of context), from its
/// original read again now; if the file is no longer what the plan read, the headers and a
/// `# note:` line saying so, in place of the hunks (see [`try_unified_diff`]).
///
/// ```
/// # use xcsh_tools::engine::{self, Control, EditRequest, Lang, Op, Scope};
/// # use xcsh_tools::workspace::Workspace;
/// # let dir = tempfile::tempdir()?;
/// # std::fs::write(dir.path().join("a.js"), "console.log(x);\n")?;
/// # let ws = Workspace::new(dir.path())?;
/// # let request = EditRequest { ops: vec![Op::new("console.log($A)", "logger.info($A)")], ..Default::default() };
/// let plan = engine::plan_edits(&Scope::root(&ws), &request, &Control::default())?;
/// assert_eq!(
///     engine::preview::unified_diff(&plan.files[0]),
///     "--- a/a.js\n+++ b/a.js\n@@ -1 +1 @@\n-console.log(x);\n+logger.info(x);\n"
/// );
///
/// std::fs::write(dir.path().join("a.js"), "console.log(y);\n")?; // edited meanwhile
/// assert_eq!(
///     engine::preview::unified_diff(&plan.files[0]),
///     "--- a/a.js\n+++ b/a.js\n# note: `a.js` (modified since it was read) is no longer what \
///      this preview read, so its diff cannot be shown and apply will refuse it; preview again\n"
/// );
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn unified_diff(file: &FileEdit) -> String {
    try_unified_diff(file).unwrap_or_else(|stale| {
        let mut out = headers(file);
        let _ = writeln!(
            out,
            "# note: {stale} is no longer what this preview read, so its diff cannot be shown \
             and apply will refuse it; preview again"
        );
        out
    })
}

/// The unified diff of one file, from its original read again now, or why it cannot be made:
/// the file is no longer what the plan read (changed, deleted, unreadable).
///
/// ```
/// # use xcsh_tools::engine::{self, Control, EditRequest, Lang, Op, Scope};
/// # use xcsh_tools::workspace::Workspace;
/// # let dir = tempfile::tempdir()?;
/// # std::fs::write(dir.path().join("a.js"), "console.log(x);\n")?;
/// # let ws = Workspace::new(dir.path())?;
/// # let request = EditRequest { ops: vec![Op::new("console.log($A)", "logger.info($A)")], ..Default::default() };
/// let plan = engine::plan_edits(&Scope::root(&ws), &request, &Control::default())?;
/// assert!(engine::preview::try_unified_diff(&plan.files[0])?.ends_with("+logger.info(x);\n"));
/// std::fs::remove_file(dir.path().join("a.js"))?;
/// let stale = engine::preview::try_unified_diff(&plan.files[0]).unwrap_err();
/// assert_eq!(stale.to_string(), "`a.js` (deleted)");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn try_unified_diff(file: &FileEdit) -> Result<String, StaleFile> {
    let original = file.read_original()?;
    let mut hunks = String::new();
    crate::changeset::hunks::write_hunks(&mut hunks, &original, file.edits(), CONTEXT_LINES);
    if hunks.is_empty() {
        return Ok(hunks);
    }
    let mut out = headers(file);
    out.push_str(&hunks);
    Ok(out)
}

/// Lines of context around each change, as `diff -u` shows.
const CONTEXT_LINES: usize = 3;

/// The `---`/`+++` lines a diff of `file` starts with.
fn headers(file: &FileEdit) -> String {
    format!("--- a/{0}\n+++ b/{0}\n", file.display)
}

/// One file of a rendered preview.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FilePreview {
    /// Root-relative path.
    pub file: String,
    /// Replacements in this file.
    pub replacements: usize,
    /// Its unified diff.
    pub diff: String,
}

/// The diff of every file of the plan, in path order. All of them are held at once: to show
/// a large plan, render [`unified_diff`] file by file instead.
pub fn file_previews(plan: &EditPlan) -> Vec<FilePreview> {
    plan.files
        .iter()
        .map(|file| FilePreview {
            file: file.display.clone(),
            replacements: file.replacements.len(),
            diff: unified_diff(file),
        })
        .collect()
}

/// One replacement, for interfaces.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ReplacementDetail {
    /// Index of the op that made it.
    pub op: usize,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// The replaced text (shortened to the requested length, with `…`), read from the
    /// file; empty when the file changed since the plan read it (a warning says so).
    pub before: String,
    /// The new text (shortened likewise).
    pub after: String,
}

/// One file's replacements, for interfaces.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FileDetails {
    /// Root-relative path.
    pub file: String,
    /// Its replacements in source order.
    pub replacements: Vec<ReplacementDetail>,
}

/// A plan as data: what a user interface shows next to (or instead of) the diffs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Details {
    /// Changed files in path order.
    pub files: Vec<FileDetails>,
    /// Counts.
    pub totals: EditTotals,
    /// Set when the limit cut replacements.
    pub limit: Option<LimitReport>,
    /// Matches of each op found in all.
    pub matches_per_op: Vec<usize>,
    /// Parsed files with syntax errors.
    pub parse_errors: Vec<String>,
    /// Files not searched, by reason.
    pub skipped: Skipped,
    /// Warnings.
    pub warnings: Vec<String>,
}

/// The plan as serialisable details; `before`/`after` texts are cut to `max_text_chars`
/// characters each (`None` keeps them whole). Each changed file is read again for its
/// `before` texts.
///
/// ```
/// # use xcsh_tools::engine::{self, Control, EditRequest, Op, Scope};
/// # use xcsh_tools::workspace::Workspace;
/// # let dir = tempfile::tempdir()?;
/// # std::fs::write(dir.path().join("a.py"), "print(1)\n")?;
/// # let ws = Workspace::new(dir.path())?;
/// # let request = EditRequest { ops: vec![Op::new("print($A)", "log($A)")], ..Default::default() };
/// let plan = engine::plan_edits(&Scope::root(&ws), &request, &Control::default())?;
/// let json = serde_json::to_value(engine::preview::details(&plan, Some(200)))?;
/// assert_eq!(json["files"][0]["replacements"][0]["before"], "print(1)");
/// assert_eq!(json["files"][0]["replacements"][0]["after"], "log(1)");
/// assert_eq!(json["totals"]["replacements"], 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn details(plan: &EditPlan, max_text_chars: Option<usize>) -> Details {
    let cut = |s: &str| match max_text_chars {
        Some(max) => shorten(s, max),
        None => s.to_owned(),
    };
    let mut warnings = plan.warnings.clone();
    let files = plan
        .files
        .iter()
        .map(|file| {
            // The replaced texts are read from the file, one file at a time (the plan keeps
            // only the new ones).
            let original = file.read_original();
            if let Err(stale) = &original {
                warnings.push(format!(
                    "{stale}: the text its replacements replace is not shown, nor the new text of those that keep part of it; apply will refuse it: preview again"
                ));
            }
            let original = original.as_deref().ok();
            FileDetails {
                file: file.display.clone(),
                replacements: file
                    .replacements
                    .iter()
                    .map(|r| ReplacementDetail {
                        op: r.op,
                        line: r.line,
                        column: r.column,
                        before: original.map_or_else(String::new, |o| cut(file.before(r, o))),
                        after: match original {
                            Some(o) => cut(&file.after(r, o)),
                            None => file.whole_after(r).map_or_else(String::new, cut),
                        },
                    })
                    .collect(),
            }
        })
        .collect();
    Details {
        files,
        totals: plan.totals,
        limit: plan.limit,
        matches_per_op: plan.matches_per_op.clone(),
        parse_errors: plan.parse_errors.clone(),
        skipped: plan.skipped.clone(),
        warnings,
    }
}
