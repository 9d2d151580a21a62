//! `ast_grep`: structural search, the read-only twin of `ast_edit`.

use std::fmt::Write as _;

use serde_json::json;
use xcsh_core::{AgentToolResult, CustomTool, ToolContext, ToolError};
use xcsh_macros::custom_tool;

use crate::config::AstToolsConfig;
use crate::engine::{
    self, NearMiss, SearchRequest, SearchResult, Within, search_then_near_misses, shorten,
};
use crate::output::{CaptureSummary, MatchSummary, SearchOutput, SearchTotals, bounded_notes};
use crate::run::{
    first_of, no_match_note, parse_lang, parse_limit, plural, run_engine, scope, workspace,
};

/// The tool's name.
pub const AST_GREP: &str = <AstGrep as CustomTool>::NAME;

/// Matches returned when no `limit` is given: enough to act on, small enough for a context.
const DEFAULT_LIMIT: usize = 200;
/// Characters of a match's text shown per line of the result.
const MATCH_TEXT_CHARS: usize = 160;

/// The `ast_grep` tool; its fields are the parameters. Its walk limits come from the
/// session's [`AstToolsConfig`].
///
/// ```
/// use xcsh_tools::AstGrep;
/// use xcsh_core::Session;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("a.py"), "print(1)\nprint(x, y)\n").unwrap();
/// let session = Session::builder().custom::<AstGrep>().workspace_root(dir.path()).build().unwrap();
/// let found = session
///     .call("ast_grep", serde_json::json!({"pat": "print($$$ARGS)"}))
///     .await;
/// assert!(found.text_content().starts_with("2 matches in 1 file"));
/// assert!(found.text_content().contains("a.py:2:1: print(x, y)"));
/// # });
/// ```
#[custom_tool(
    name = "ast_grep",
    label = "AST Grep",
    description = "Structural code search over the workspace with an ast-grep pattern: \
code with metavariables (`$X` matches one node, `$$$ARGS` a list of nodes), matched against \
the syntax tree, not the text. Returns each match with its file, line, column, text and the \
metavariables' captured text. Read-only. Example: pat=\"$X.unwrap()\", lang=\"rust\". \
Instead of `pat`, `rule` takes an ast-grep YAML rule (`pattern`, `kind`, `regex`, `inside`, \
`has`, `precedes`, `follows`, `all`, `any`, `not`, `matches`, with `constraints` and `utils`), \
e.g. rule=\"rule:\\n  pattern: $X.unwrap()\\n  inside:\\n    kind: closure_expression\\n    stopBy: end\", lang=\"rust\".",
    // It reads the workspace and changes nothing.
    read_only,
    destructive = false,
    idempotent,
    open_world = false,
    output = SearchOutput,
    // Built in: added by `builtin_suite()` (or by hand), never by `registered()`.
    register = false
)]
#[schemars(description = "The parameters of `ast_grep`.")]
#[derive(Debug, Clone)]
#[serde(deny_unknown_fields)]
pub struct AstGrep {
    /// The code to find, as an ast-grep pattern: `$X` matches one node, `$$$ARGS` a list.
    /// Give either this or `rule`.
    #[serde(default)]
    pub pat: Option<String>,
    /// Instead of `pat`: an ast-grep rule as YAML text, the grammar of `ast-grep scan
    /// --rule` (`language` may be left to `lang`; several rules as `---` documents).
    #[serde(default)]
    pub rule: Option<String>,
    /// Language of the pattern, one of [`Lang::ALL`](crate::engine::Lang::ALL) (the
    /// languages compiled in). Inferred from each file's extension when omitted.
    #[serde(default)]
    #[schemars(description = crate::run::lang_description("pattern"))]
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

impl AstGrep {
    async fn execute(self, ctx: &ToolContext) -> Result<AgentToolResult, ToolError> {
        if self.pat.is_none() && self.rule.is_none() {
            return Err(ToolError::new(
                "pat: give the code to find as a pattern (e.g. `$X.unwrap()`), or an ast-grep YAML rule in `rule`",
            ));
        }
        let request = SearchRequest {
            patterns: self.pat.into_iter().collect(),
            rule: self.rule,
            lang: parse_lang(self.lang.as_deref())?,
            limit: Some(parse_limit(self.limit)?.unwrap_or(DEFAULT_LIMIT)),
            walk: AstToolsConfig::of(ctx).walk_options(),
            cache: Some(crate::run::parse_cache(ctx)),
        };
        let ws = workspace(ctx)?;
        let (path, glob) = (self.path, self.glob);
        let (patterns, lang) = (request.patterns.clone(), request.lang);
        let near_pats = patterns.clone();
        let (result, misses) = run_engine(ctx, move |control| {
            let scope = scope(&ws, path.as_deref(), glob.as_deref());
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
                || engine::search(&scope, &request, control),
                |result| result.matches.is_empty(),
                |result| result.totals.files_with_literals == 0,
            )
        })
        .await?
        .map_err(ToolError::from_display)?;
        let shown: Vec<MatchSummary> = result
            .matches
            .iter()
            .map(|m| MatchSummary {
                file: m.file.clone(),
                line: m.line,
                column: m.column,
                end_line: m.end_line,
                end_column: m.end_column,
                text: shorten(m.text.lines().next().unwrap_or_default(), MATCH_TEXT_CHARS),
                captures: m
                    .captures
                    .iter()
                    .take(8)
                    .map(|c| CaptureSummary {
                        name: c.name.clone(),
                        text: shorten(&c.text, MATCH_TEXT_CHARS / 2),
                    })
                    .collect(),
            })
            .collect();
        let details = json!({
            "matches": result.matches,
            "totals": result.totals,
            "limit": result.limit,
            "parseErrors": result.parse_errors,
            "skipped": result.skipped,
            "nearMisses": misses,
        });
        let mut text = render_matches(&result);
        let mut notes = result.warnings.clone();
        if !result.parse_errors.is_empty() {
            notes.push(format!(
                "{} had syntax errors; matches in their valid parts are included: {}.",
                plural(result.parse_errors.len(), "file"),
                first_of(&result.parse_errors)
            ));
        }
        if result.matches.is_empty() {
            let more = [
                no_match_note(&patterns, lang),
                render_near_misses(&misses, &["pat".to_owned()]),
            ];
            for note in more.into_iter().flatten() {
                text.push_str("\n\n");
                text.push_str(&note);
                notes.push(note);
            }
        }
        let totals = result.totals;
        let output = SearchOutput {
            totals: SearchTotals {
                files_scanned: totals.files_scanned,
                files_parsed: totals.files_parsed,
                files_matched: totals.files_matched,
                matches: totals.matches,
                matches_found: totals.matches_found,
            },
            limit_reached: result.limit.is_some(),
            matches: Vec::new(),
            matches_omitted: 0,
            all: None,
            notes: bounded_notes(notes),
        }
        .fit(shown);
        let mut result = AgentToolResult::text(text);
        let output = if output.matches_omitted > 0 {
            // The whole list, with captures, for a client that wants it.
            let all = serde_json::to_string(&details["matches"]).unwrap_or_default();
            let resource = xcsh_core::Resource::text("ast_grep matches", "application/json", all)
                .with_description(
                    "Every match of this search, with its range and captures, as JSON.",
                );
            match crate::output::published(ctx, resource) {
                Some((uri, link)) => {
                    result.content.push(link);
                    SearchOutput {
                        all: Some(uri),
                        ..output
                    }
                }
                None => output,
            }
        } else {
            output
        };
        Ok(result.with_details(details).with_output(&output))
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

/// Near misses as the text a model (or person) reads: where, what differs, and the pattern
/// that matches the code; `None` for none. `fields` name the patterns (`pat`, `ops[1].pat`),
/// shown when there are several.
///
/// ```
/// use xcsh_tools::engine::NearMiss;
///
/// let miss = NearMiss {
///     pattern: 0,
///     file: "a.py".into(),
///     line: 1,
///     column: 1,
///     text: "print(\"done\", n)".into(),
///     differs: "it is a call where the pattern is a print_statement".into(),
///     suggestion: "print($$$X)".into(),
///     distance: 1,
/// };
/// let text = xcsh_tools::render_near_misses(&[miss], &["pat".to_owned()]).unwrap();
/// assert!(text.ends_with("- a.py:1:1 `print(\"done\", n)`: it is a call where the pattern is a print_statement. This pattern matches it: `print($$$X)`"));
/// ```
pub fn render_near_misses(misses: &[NearMiss], fields: &[String]) -> Option<String> {
    if misses.is_empty() {
        return None;
    }
    let mut out = String::from("Near misses (code close to the pattern that it does not match):");
    for m in misses {
        let which = if fields.len() > 1 {
            format!(
                " (for {})",
                fields.get(m.pattern).map_or("?", String::as_str)
            )
        } else {
            String::new()
        };
        let _ = write!(
            out,
            "\n- {}:{}:{}{which} `{}`: {}. This pattern matches it:",
            m.file, m.line, m.column, m.text, m.differs
        );
        if m.suggestion.contains('\n') {
            for line in m.suggestion.lines() {
                let _ = write!(out, "\n      {line}");
            }
        } else {
            let _ = write!(out, " `{}`", m.suggestion);
        }
    }
    Some(out)
}
