//! Showing a plan: unified diffs for people and models, a serialisable summary for interfaces.
//!
//! Everything here is computed from an [`EditPlan`] alone, in path order, so the same plan
//! always renders the same way. A file's original is rebuilt from its new contents and the
//! replaced text for the time it takes to diff it.

use serde::Serialize;
use similar::TextDiff;

use super::pattern::shorten;
use super::{EditPlan, EditTotals, FileEdit, LimitReport, Skipped};

/// The unified diff of one file (`a/` and `b/` headers, 3 lines of context).
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
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn unified_diff(file: &FileEdit) -> String {
    let original = file.original();
    let diff = TextDiff::from_lines(original.as_str(), file.new_contents.as_str());
    diff.unified_diff()
        .context_radius(3)
        .header(
            &format!("a/{}", file.display),
            &format!("b/{}", file.display),
        )
        .to_string()
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

/// The diff of every file of the plan, in path order.
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
    /// The replaced text (shortened to the requested length, with `…`).
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
/// characters each (`None` keeps them whole).
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
/// assert_eq!(json["files"][0]["replacements"][0]["after"], "log(1)");
/// assert_eq!(json["totals"]["replacements"], 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn details(plan: &EditPlan, max_text_chars: Option<usize>) -> Details {
    let cut = |s: &str| match max_text_chars {
        Some(max) => shorten(s, max),
        None => s.to_owned(),
    };
    Details {
        files: plan
            .files
            .iter()
            .map(|file| FileDetails {
                file: file.display.clone(),
                replacements: file
                    .replacements
                    .iter()
                    .map(|r| ReplacementDetail {
                        op: r.op,
                        line: r.line,
                        column: r.column,
                        before: cut(file.before(r)),
                        after: cut(file.after(r)),
                    })
                    .collect(),
            })
            .collect(),
        totals: plan.totals,
        limit: plan.limit,
        matches_per_op: plan.matches_per_op.clone(),
        parse_errors: plan.parse_errors.clone(),
        skipped: plan.skipped.clone(),
        warnings: plan.warnings.clone(),
    }
}
