//! `ast_edit`: structural search-and-replace previewed as a diff, written only through
//! `resolve`.

use std::fmt::Write as _;

use serde_json::Value;
use xcsh_core::{AgentToolResult, CustomTool, ToolContext, ToolError};
use xcsh_macros::{custom_tool, pending, tool_param};

use crate::changeset::ChangeSet;
use crate::config::AstToolsConfig;
use crate::engine::{self, EditPlan, EditRequest, Op, Within, preview, search_then_near_misses};
use crate::output::{ChangeOutput, ChangeTotals, preview_resource, published};
use crate::run::{
    first_of, no_match_note, parse_lang, parse_limit, plural, run_engine, scope, workspace,
};
use crate::staged::{apply_guarded, judge_syntax};
use crate::syntax::{SyntaxHints, SyntaxReport};

/// The tool's name.
pub const AST_EDIT: &str = <AstEdit as CustomTool>::NAME;

/// Files the preview's text lists one by one; the resource has them all.
const LISTED_FILES: usize = 200;

/// Characters of before/after text per replacement in the details.
const DETAIL_TEXT_CHARS: usize = 200;

/// One rewrite: every match of `pat` becomes `out`.
#[tool_param]
#[derive(Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct AstEditOp {
    /// The code to match, as an ast-grep pattern: `$X` matches one node, `$$$ARGS` a list.
    pub pat: String,
    /// The replacement; may use the pattern's metavariables.
    pub out: String,
}

/// The `ast_edit` tool; its fields are the parameters. Its walk limits and preview size
/// come from the session's [`AstToolsConfig`].
///
/// ```
/// use xcsh_tools::AstEdit;
/// use xcsh_core::Session;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("lib.rs"), "fn f() { a.unwrap(); }\n").unwrap();
/// let session = Session::builder().custom::<AstEdit>().workspace_root(dir.path()).build().unwrap();
///
/// let preview = session
///     .call("ast_edit", serde_json::json!({"ops": [{"pat": "$X.unwrap()", "out": "$X?"}], "lang": "rust"}))
///     .await;
/// assert!(preview.text_content().contains("+fn f() { a?; }"));
/// assert_eq!(session.pending().peek().unwrap().label, "AST Edit: 1 replacement in 1 file");
///
/// let applied = session
///     .call("resolve", serde_json::json!({"action": "apply", "reason": "cleanup"}))
///     .await;
/// assert_eq!(applied.text_content(), "Applied 1 replacement in 1 file.");
/// assert_eq!(std::fs::read_to_string(dir.path().join("lib.rs")).unwrap(), "fn f() { a?; }\n");
/// # });
/// ```
#[custom_tool(
    name = "ast_edit",
    label = "AST Edit",
    description = "Structural search-and-replace over the workspace with ast-grep patterns. \
Each op rewrites every match of `pat` (code with metavariables: `$X` matches one node, `$$$ARGS` \
a list of nodes) into `out` (which may use the same metavariables). Files are parsed, so matches \
respect syntax, not text. The call only previews: it returns a unified diff and nothing is \
written until you call `resolve` with action \"apply\" (or \"discard\"). Example: \
ops=[{\"pat\": \"$X.unwrap()\", \"out\": \"$X?\"}], lang=\"rust\". Instead of `ops`, `rule` \
takes an ast-grep YAML rule with a `fix` (`pattern`, `kind`, `regex`, `inside`, `has`, \
`precedes`, `follows`, `all`, `any`, `not`, `matches`, `constraints`, `utils`, `transform`), \
applied as `ast-grep scan --update-all` applies it.",
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
#[schemars(description = "The parameters of `ast_edit`.")]
#[derive(Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct AstEdit {
    /// Rewrites applied together to each file (at least one; patterns must differ). Give
    /// either this or `rule`.
    #[serde(default)]
    pub ops: Vec<AstEditOp>,
    /// Instead of `ops`: an ast-grep rule with a `fix`, as YAML text, the grammar of
    /// `ast-grep scan --rule` (`language` may be left to `lang`; several rules as `---`
    /// documents).
    #[serde(default)]
    pub rule: Option<String>,
    /// Language of the patterns, one of [`Lang::ALL`](crate::engine::Lang::ALL) (the
    /// languages compiled in). Inferred from each file's extension when omitted.
    #[serde(default)]
    #[schemars(description = crate::run::lang_description("patterns"))]
    pub lang: Option<String>,
    /// A file, directory or glob under the workspace root; default the whole workspace.
    #[serde(default)]
    pub path: Option<String>,
    /// Only files whose root-relative path matches this glob, e.g. `src/**/*.rs`.
    #[serde(default)]
    pub glob: Option<String>,
    /// At most this many replacements (the first ones in path order); at least 1.
    #[serde(default)]
    pub limit: Option<u64>,
}

impl AstEdit {
    /// Plans the edit and previews it; with replacements, pushes the `AstEditAction` that
    /// writes them.
    async fn execute(self, ctx: &ToolContext) -> Result<AgentToolResult, ToolError> {
        let config = AstToolsConfig::of(ctx);
        let request = EditRequest {
            ops: self
                .ops
                .into_iter()
                .map(|op| Op::new(op.pat, op.out))
                .collect(),
            rule: self.rule,
            lang: parse_lang(self.lang.as_deref())?,
            limit: parse_limit(self.limit)?,
            walk: config.walk_options(),
            cache: Some(crate::run::parse_cache(ctx)),
            // The syntax guard below takes what the plan's own trees tell of the results.
            check_syntax: true,
        };
        let ws = workspace(ctx)?;
        let (path, glob) = (self.path, self.glob);
        let patterns: Vec<String> = request.ops.iter().map(|op| op.pat.clone()).collect();
        let lang = request.lang;
        let plan_ws = ws.clone();
        let near_pats = patterns.clone();
        let (plan, misses) = run_engine(ctx, move |control| {
            let scope = scope(&plan_ws, path.as_deref(), glob.as_deref());
            let within = Within {
                scope: &scope,
                lang,
                walk: &request.walk,
                cache: request.cache.as_ref(),
            };
            search_then_near_misses(
                &within,
                &near_pats,
                control,
                || engine::plan_edits(&scope, &request, control),
                |plan| plan.totals.replacements == 0,
                |plan| plan.totals.files_with_literals == 0,
            )
        })
        .await?
        .map_err(ToolError::from)?;

        let mut text = render_preview(&plan, config.max_preview_chars());
        let mut details = serde_json::to_value(preview::details(&plan, Some(DETAIL_TEXT_CHARS)))
            .unwrap_or(Value::Null);
        if plan.totals.replacements == 0 {
            let fields: Vec<String> = (0..patterns.len())
                .map(|i| format!("ops[{i}].pat"))
                .collect();
            let notes = [
                no_match_note(&patterns, lang),
                crate::render_near_misses(&misses, &fields),
            ];
            let notes: Vec<String> = notes.into_iter().flatten().collect();
            for note in &notes {
                text.push_str("\n\n");
                text.push_str(note);
            }
            if let Some(map) = details.as_object_mut() {
                map.insert(
                    "nearMisses".to_owned(),
                    serde_json::to_value(&misses).unwrap_or_default(),
                );
            }
            let mut all_notes = preview_notes(&plan);
            all_notes.extend(notes);
            let output = ChangeOutput::nothing("No replacements made: nothing matched.", all_notes)
                .with_totals(totals_of(&plan.totals));
            return Ok(AgentToolResult::text(text)
                .with_details(details)
                .with_output(&output));
        }

        let (replacements, files) = (plan.totals.replacements, plan.files.len());
        let totals = totals_of(&plan.totals);
        let notes = preview_notes(&plan);
        let per_file: Vec<usize> = plan.files.iter().map(|f| f.replacements.len()).collect();
        let hints = SyntaxHints::of_plan(&plan);
        // The change set takes each file's edits (not its contents): apply splices them into
        // the file as it reads it then, refusing it if it is no longer what was previewed.
        let mut changes = ChangeSet::new(ws).with_undo(config.undo_limits());
        for file in plan.files {
            changes
                .modify_splicing(&file.path, file.fingerprint, file.splices())
                .map_err(|e| {
                    ToolError::new(format!("cannot stage the edit of `{}`: {e}", file.display))
                })?;
        }
        // The syntax guard: does every changed file still parse?
        let mut notes = notes;
        let (syntax, refuse) =
            judge_syntax(&changes, hints, &config, &mut notes, &mut text).await?;
        if let Some(map) = details.as_object_mut() {
            map.insert(
                "syntax".to_owned(),
                serde_json::to_value(&syntax).unwrap_or_default(),
            );
        }
        let action = AstEditAction {
            replacements,
            files,
            changes: changes.clone(),
            details: details.clone(),
            syntax,
            refuse,
        };
        let id = ctx.push_pending_action(action)?;
        let what = summary(replacements, files);
        let mut result = AgentToolResult::text(text).with_details(details);
        let link = published(
            ctx,
            preview_resource("AST Edit preview", changes.clone(), id),
        );
        let output = ChangeOutput::preview(
            format!("AST Edit: {what}"),
            id,
            &changes,
            Some(&per_file),
            link.as_ref().map(|(uri, _)| uri.as_str()),
            notes,
        )
        .with_totals(totals);
        if let Some((_, link)) = link {
            result.content.push(link);
        }
        Ok(result.with_output(&output))
    }
}

/// The structured output's counts of a plan.
fn totals_of(totals: &engine::EditTotals) -> ChangeTotals {
    ChangeTotals {
        files_changed: totals.files_changed,
        replacements: Some(totals.replacements),
        replacements_found: Some(totals.replacements_found),
        identical: Some(totals.identical),
        files_scanned: Some(totals.files_scanned),
        files_parsed: Some(totals.files_parsed),
    }
}

/// `N replacement(s) in M file(s)`, singular and plural right.
pub fn summary(replacements: usize, files: usize) -> String {
    format!(
        "{} in {}",
        plural(replacements, "replacement"),
        plural(files, "file")
    )
}

/// The text a model (or person) reads for a plan.
pub fn render_preview(plan: &EditPlan, max_diff_chars: usize) -> String {
    let totals = &plan.totals;
    let mut out = String::new();
    if totals.replacements == 0 {
        let _ = write!(
            out,
            "No replacements made: nothing matched ({} scanned, {} parsed).",
            plural(totals.files_scanned, "file"),
            totals.files_parsed
        );
    } else {
        let _ = writeln!(
            out,
            "AST Edit preview: {} ({} scanned, {} parsed).\n",
            summary(totals.replacements, plan.files.len()),
            plural(totals.files_scanned, "file"),
            totals.files_parsed
        );
        for file in plan.files.iter().take(LISTED_FILES) {
            let _ = writeln!(
                out,
                "{}: {}",
                file.display,
                plural(file.replacements.len(), "replacement")
            );
        }
        if plan.files.len() > LISTED_FILES {
            let _ = writeln!(
                out,
                "… and {} more (the preview resource linked below lists every file).",
                plural(plan.files.len() - LISTED_FILES, "file")
            );
        }
        out.push('\n');
        let mut shown = 0;
        for (index, file) in plan.files.iter().enumerate() {
            let diff = preview::unified_diff(file);
            if shown + diff.len() > max_diff_chars && index > 0 {
                let _ = writeln!(
                    out,
                    "… diffs of {} more omitted to keep this preview short; they will be applied too (the preview resource linked below holds every diff).",
                    plural(plan.files.len() - index, "file")
                );
                break;
            }
            shown += diff.len();
            out.push_str(&diff);
        }
    }
    // Diffs end with a newline; every later section starts after exactly one blank line.
    out.truncate(out.trim_end().len());
    let notes = preview_notes(plan);
    if !notes.is_empty() {
        out.push('\n');
        for note in notes {
            let _ = write!(out, "\n{note}");
        }
    }
    if totals.replacements > 0 {
        out.push_str("\n\nNothing is written yet. Call `resolve` with action \"apply\" to write these changes, or \"discard\" to drop them.");
    }
    out
}

/// What a reader of a plan should know besides the diffs, one sentence each: the limit cut
/// replacements, files skipped (and why), files with syntax errors, warnings.
pub fn preview_notes(plan: &EditPlan) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(limit) = &plan.limit {
        notes.push(format!(
            "Limit reached: only the first {} of {} replacements (in path order) are included; raise `limit` or narrow `path` for the rest.",
            limit.limit, limit.found
        ));
    }
    let skipped = &plan.skipped;
    for (list, what) in [
        (&skipped.binary, "binary"),
        (&skipped.non_utf8, "not valid UTF-8"),
        (&skipped.too_large, "too large"),
        (&skipped.unreadable, "unreadable"),
        (&skipped.temp_artifacts, "leftovers of an interrupted apply"),
    ] {
        if !list.is_empty() {
            notes.push(format!(
                "Skipped {} ({what}): {}.",
                plural(list.len(), "file"),
                first_of(list)
            ));
        }
    }
    if !plan.parse_errors.is_empty() {
        notes.push(format!(
            "{} had syntax errors; matches in their valid parts are included: {}.",
            plural(plan.parse_errors.len(), "file"),
            first_of(&plan.parse_errors)
        ));
    }
    notes.extend(plan.warnings.iter().cloned());
    notes
}

/// The pending action `ast_edit` pushes: writes exactly the previewed change set. Durable:
/// a durable session keeps it (the change set's paths, fingerprints and edits) across
/// restarts, and the apply's stale check still refuses any file changed meanwhile.
#[pending(
    durable,
    apply,
    label = "AST Edit: {}", summary(self.replacements, self.files),
    source = AstEdit,
    details = details,
    // The details show each replacement shortened; the approval binds the exact bytes.
    effect_digest_fn = digest,
    effect_fn = touched,
    select_fn = only
)]
#[derive(serde::Serialize, serde::Deserialize)]
struct AstEditAction {
    replacements: usize,
    files: usize,
    changes: ChangeSet,
    /// What the preview's result carried: every replacement, totals, notes.
    details: Value,
    /// The syntax guard's verdict on the change.
    #[serde(default)]
    syntax: SyntaxReport,
    /// Whether the guard refuses a change that breaks a file (`syntax_guard = "refuse"`).
    #[serde(default)]
    refuse: bool,
}

impl AstEditAction {
    /// Narrows the edit to `files` (a person's partial approval): the change set, the counts
    /// and the details' file list.
    fn only(&mut self, files: &[String]) -> Result<(), String> {
        let mut changes = self.changes.clone();
        changes.retain_files(files)?;
        let mut details = self.details.clone();
        let mut replacements = 0;
        if let Some(list) = details.get_mut("files").and_then(Value::as_array_mut) {
            list.retain(|f| {
                f["file"]
                    .as_str()
                    .is_some_and(|f| files.iter().any(|g| g == f))
            });
            replacements = list
                .iter()
                .map(|f| f["replacements"].as_array().map_or(0, Vec::len))
                .sum();
        }
        if let Some(totals) = details.get_mut("totals").and_then(Value::as_object_mut) {
            totals.insert("replacements".into(), replacements.into());
            totals.insert("filesChanged".into(), changes.len().into());
        }
        self.files = changes.len();
        self.replacements = replacements;
        self.changes = changes;
        self.details = details;
        self.syntax.retain_files(files);
        Ok(())
    }

    /// The files the change set writes, each with its changed lines: per replacement the
    /// larger line count of its old and new text, as the details list them.
    fn touched(&self) -> xcsh_core::Effect {
        // Looked up once per file of the change set: a map, not a scan of the list each time
        // (2,700 files made that 7 million string comparisons).
        let mut lines: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
        let entries = self.details.get("files").and_then(Value::as_array);
        for entry in entries.into_iter().flatten() {
            let Some(file) = entry.get("file").and_then(Value::as_str) else {
                continue;
            };
            let Some(replacements) = entry.get("replacements").and_then(Value::as_array) else {
                continue;
            };
            let count = replacements
                .iter()
                .map(|r| {
                    let count = |key: &str| {
                        r.get(key)
                            .and_then(Value::as_str)
                            .map_or(0, |t| t.lines().count())
                    };
                    count("before").max(count("after")).max(1)
                })
                .sum();
            // The first entry naming a file counts, as a scan from the front found it.
            lines.entry(file).or_insert(count);
        }
        let files = self
            .changes
            .effect()
            .file_effects()
            .iter()
            .map(|file| match lines.get(file.path.as_str()) {
                Some(&n) => file.clone().with_changed_lines(n),
                None => file.clone(),
            })
            .collect::<Vec<_>>();
        xcsh_core::Effect::files(files)
    }

    /// Paths, the fingerprints of what was previewed, and every edit: what is written.
    fn digest(&self) -> String {
        self.changes.effect_digest()
    }

    async fn apply(&mut self, _reason: &str) -> Result<AgentToolResult, ToolError> {
        let written = apply_guarded(&self.changes, &self.syntax, self.refuse).await?;
        let what = summary(self.replacements, self.files);
        Ok(AgentToolResult::text(if written {
            format!("Applied {what}.")
        } else {
            format!(
                "Already applied: {what} is already in the files (applied earlier, by a process that stopped before it could report it or by an identical change); nothing was written now."
            )
        }))
    }
}
