//! `ast_grep`: structural search, the read-only twin of `ast_edit`.

use std::fmt::Write as _;
use std::sync::{Arc, LazyLock};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use xcsh_core::{
    AgentToolResult, BoxFuture, JsonObject, Tool, ToolAnnotations, ToolContext, ToolError,
    decode_arguments, schema::cached_schema_for,
};

use crate::engine::{self, SearchRequest, SearchResult, WalkOptions};
use crate::run::{
    READS_WORKSPACE, first_of, parse_lang, parse_limit, plural, run_engine, scope, workspace,
};

/// The tool's name.
pub const AST_GREP: &str = "ast_grep";

const DESCRIPTION: &str = "Structural code search over the workspace with an ast-grep pattern: \
code with metavariables (`$X` matches one node, `$$$ARGS` a list of nodes), matched against \
the syntax tree, not the text. Returns each match with its file, line, column, text and the \
metavariables' captured text. Read-only. Example: pat=\"$X.unwrap()\", lang=\"rust\".";

/// Matches returned when no `limit` is given: enough to act on, small enough for a context.
const DEFAULT_LIMIT: usize = 200;
/// Characters of a match's text shown per line of the result.
const MATCH_TEXT_CHARS: usize = 160;

/// The parameters of `ast_grep`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AstGrepParams {
    /// The code to find, as an ast-grep pattern: `$X` matches one node, `$$$ARGS` a list.
    pub pat: String,
    /// Language of the pattern: rust, python, typescript, tsx, javascript or go. Inferred
    /// from each file's extension when omitted.
    #[serde(default)]
    pub lang: Option<String>,
    /// A file, directory or glob under the workspace root; default the whole workspace.
    #[serde(default)]
    pub path: Option<String>,
    /// Only files whose root-relative path matches this glob, e.g. `src/**/*.rs`.
    #[serde(default)]
    pub glob: Option<String>,
    /// At most this many matches (the first ones in path order); at least 1, default 200.
    #[serde(default)]
    pub limit: Option<u64>,
}

/// The `ast_grep` tool.
///
/// ```
/// use xcsh_tools::AstGrep;
/// use xcsh_core::Session;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("a.py"), "print(1)\nprint(x, y)\n").unwrap();
/// let session = Session::builder().tool(AstGrep::default()).workspace_root(dir.path()).build().unwrap();
/// let found = session
///     .call("ast_grep", serde_json::json!({"pat": "print($$$ARGS)"}))
///     .await;
/// assert!(found.text_content().starts_with("2 matches in 1 file"));
/// assert!(found.text_content().contains("a.py:2:1: print(x, y)"));
/// # });
/// ```
#[derive(Debug, Clone, Default)]
pub struct AstGrep {
    walk: WalkOptions,
}

impl AstGrep {
    /// Sets the walk's limits (file size, file count, threads).
    #[must_use]
    pub fn with_walk_options(mut self, walk: WalkOptions) -> Self {
        self.walk = walk;
        self
    }
}

/// The text a model reads for a search result.
pub fn render_matches(result: &SearchResult) -> String {
    let totals = &result.totals;
    let mut out = String::new();
    if result.matches.is_empty() {
        let _ = write!(
            out,
            "No matches ({} scanned, {} parsed).",
            plural(totals.files_scanned, "file"),
            totals.files_parsed
        );
    } else {
        let _ = writeln!(
            out,
            "{} in {} ({} scanned, {} parsed):",
            match result.matches.len() {
                1 => "1 match".to_owned(),
                n => format!("{n} matches"),
            },
            plural(totals.files_matched, "file"),
            plural(totals.files_scanned, "file"),
            totals.files_parsed
        );
        for m in &result.matches {
            let first_line = m.text.lines().next().unwrap_or_default();
            let mut text: String = first_line.chars().take(MATCH_TEXT_CHARS).collect();
            if text.len() < m.text.len() {
                text.push('…');
            }
            let _ = write!(out, "\n{}:{}:{}: {text}", m.file, m.line, m.column);
            for capture in &m.captures {
                let value: String = capture.text.chars().take(MATCH_TEXT_CHARS).collect();
                let _ = write!(out, "\n    {} = {value}", capture.name);
            }
        }
    }
    if let Some(limit) = &result.limit {
        let _ = write!(
            out,
            "\n\nLimit reached: showing the first {} of {} matches; raise `limit` or narrow `path` for the rest.",
            limit.limit, limit.found
        );
    }
    if !result.parse_errors.is_empty() {
        let _ = write!(
            out,
            "\n\n{} had syntax errors; matches in their valid parts are included: {}.",
            plural(result.parse_errors.len(), "file"),
            first_of(&result.parse_errors)
        );
    }
    let skipped = result.skipped.total();
    if skipped > 0 {
        let _ = write!(
            out,
            "\n\nSkipped {} (binary, not UTF-8, too large or unreadable; see details).",
            plural(skipped, "file")
        );
    }
    for warning in &result.warnings {
        let _ = write!(out, "\n{warning}");
    }
    out
}

static PARAMETERS: LazyLock<Arc<JsonObject>> = LazyLock::new(cached_schema_for::<AstGrepParams>);

impl Tool for AstGrep {
    fn name(&self) -> &str {
        AST_GREP
    }
    fn label(&self) -> &str {
        "AST Grep"
    }
    fn description(&self) -> &str {
        DESCRIPTION
    }
    fn parameters(&self) -> &Arc<JsonObject> {
        &PARAMETERS
    }
    fn annotations(&self) -> ToolAnnotations {
        READS_WORKSPACE
    }
    fn execute<'a>(
        &'a self,
        ctx: &'a ToolContext,
        args: Value,
    ) -> BoxFuture<'a, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            let params: AstGrepParams = decode_arguments(AST_GREP, args)?;
            let request = SearchRequest {
                patterns: vec![params.pat],
                lang: parse_lang(params.lang.as_deref())?,
                limit: Some(parse_limit(params.limit)?.unwrap_or(DEFAULT_LIMIT)),
                walk: self.walk,
            };
            let ws = workspace(ctx)?;
            let (path, glob) = (params.path, params.glob);
            let result = run_engine(ctx, move |control| {
                let scope = scope(&ws, path.as_deref(), glob.as_deref());
                engine::search(&scope, &request, control)
            })
            .await?
            .map_err(ToolError::from_display)?;
            let details = json!({
                "matches": result.matches,
                "totals": result.totals,
                "limit": result.limit,
                "parseErrors": result.parse_errors,
                "skipped": result.skipped,
            });
            Ok(AgentToolResult::text(render_matches(&result)).with_details(details))
        })
    }
}
