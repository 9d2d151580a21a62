//! Structural search (`ast_grep`): the matches of one or more patterns, with captures.
//!
//! Nested matches are all reported (`foo(foo(1))` matches `foo($A)` twice), as the CLI's
//! search output does.

use std::collections::{BTreeMap, HashSet};
use std::ops::Range;
use std::path::PathBuf;
use std::sync::Mutex;

use ast_grep_config::CombinedScan;
use ast_grep_core::NodeMatch;
use ast_grep_core::meta_var::MetaVariable;
use serde::Serialize;

use super::matching::{Doc, for_each_match, has_syntax_error};
use super::pattern::OpKind;
use super::rewrite::{LimitReport, drop_beyond_limit};
use super::rule::Rule;
use super::walk::{Candidate, Skipped, WalkOptions, walk};
use super::{CompiledOps, Control, EngineError, Lang, ParseCache, Scope};

/// What to search for.
///
/// ```
/// use xcsh_tools::engine::{Lang, SearchRequest};
///
/// let request = SearchRequest {
///     patterns: vec!["console.log($$$ARGS)".into()],
///     lang: Some(Lang::TypeScript),
///     limit: Some(50),
///     ..SearchRequest::default()
/// };
/// # let _ = request;
/// ```
#[derive(Clone, Debug, Default)]
pub struct SearchRequest {
    /// One or more distinct, valid patterns; empty when `rule` is given.
    pub patterns: Vec<String>,
    /// Instead of `patterns`: ast-grep YAML rules (the grammar of `ast-grep scan --rule`;
    /// several as YAML documents), matched as `ast-grep scan` matches them. See
    /// [`CompiledOps::for_rules`].
    pub rule: Option<String>,
    /// The language; `None` infers it from each file's extension.
    pub lang: Option<Lang>,
    /// Keep at most this many matches (≥ 1): the first ones in path order.
    pub limit: Option<usize>,
    /// Limits of the walk.
    pub walk: WalkOptions,
    /// Files kept from earlier calls, reused when unchanged (see [`ParseCache`]); `None`
    /// reads and parses everything afresh.
    pub cache: Option<ParseCache>,
}

/// A metavariable's value in a match.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Capture {
    /// `$NAME` for one node, `$$$NAME` for a list.
    pub name: String,
    /// The captured source text (for a list: from its first node to its last, separators
    /// included; empty for an empty list).
    pub text: String,
}

/// One match.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Match {
    /// Absolute path.
    #[serde(skip)]
    pub path: PathBuf,
    /// Root-relative path with `/` separators.
    pub file: String,
    /// Index of the pattern that matched.
    pub pattern: usize,
    /// 1-based line of the start.
    pub line: usize,
    /// 1-based column (in characters) of the start.
    pub column: usize,
    /// 1-based line of the end.
    pub end_line: usize,
    /// 1-based column (in characters) just past the end.
    pub end_column: usize,
    /// Byte range in the file.
    pub range: Range<usize>,
    /// The matched text.
    pub text: String,
    /// Metavariable captures, sorted by name.
    pub captures: Vec<Capture>,
}

/// Counts of a search.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SearchTotals {
    /// Source files looked at.
    pub files_scanned: usize,
    /// Of those, files parsed.
    pub files_parsed: usize,
    /// Of the files scanned, those holding every literal (word) of a pattern: a superset
    /// of the files parsed, the rest ruled out by the pattern's token shape. Without the
    /// shape prefilter these would all have been parsed.
    #[serde(skip)]
    pub files_with_literals: usize,
    /// Files with at least one match (before the limit).
    pub files_matched: usize,
    /// Matches kept.
    pub matches: usize,
    /// Matches found in all, before the limit.
    pub matches_found: usize,
}

/// The result of [`search`].
#[derive(Clone, Debug, Default)]
pub struct SearchResult {
    /// Matches sorted by path, then position.
    pub matches: Vec<Match>,
    /// Parsed files with syntax errors, sorted. A Rust file of 4 KiB or more whose tree no
    /// [`cache`](SearchRequest::cache) keeps can be parsed only in the top-level items where
    /// a match can be; an error in its other items is then not seen.
    pub parse_errors: Vec<String>,
    /// Files not searched, by reason.
    pub skipped: Skipped,
    /// Counts.
    pub totals: SearchTotals,
    /// `Some` when the limit cut matches.
    pub limit: Option<LimitReport>,
    /// Matches of each pattern found in all (before the limit), indexed like the patterns.
    pub matches_per_pattern: Vec<usize>,
    /// Things the caller should know.
    pub warnings: Vec<String>,
}

/// The metavariables a rule's match bound, as single or list captures (a rule does not say
/// which a name is: its match does).
fn rule_captures(m: &NodeMatch<'_, Doc>, names: &HashSet<&str>) -> Vec<MetaVariable> {
    let env = m.get_env();
    names
        .iter()
        .filter_map(|&name| {
            if env.get_match(name).is_some() {
                Some(MetaVariable::Capture(name.to_owned(), false))
            } else if !env.get_multiple_matches(name).is_empty() {
                Some(MetaVariable::MultiCapture(name.to_owned()))
            } else {
                None
            }
        })
        .collect()
}

fn capture_list(m: &NodeMatch<'_, Doc>, names: &[MetaVariable]) -> Vec<Capture> {
    let env = m.get_env();
    let src = m.get_doc().src.as_str();
    let mut out: Vec<Capture> = names
        .iter()
        .filter_map(|mv| match mv {
            MetaVariable::Capture(name, _) => env.get_match(name).map(|node| Capture {
                name: format!("${name}"),
                text: node.text().into_owned(),
            }),
            MetaVariable::MultiCapture(name) => {
                let nodes = env.get_multiple_matches(name);
                let text = match (nodes.first(), nodes.last()) {
                    (Some(first), Some(last)) => src
                        .get(first.range().start..last.range().end)
                        .unwrap_or_default()
                        .to_owned(),
                    _ => String::new(),
                };
                Some(Capture {
                    name: format!("$$${name}"),
                    text,
                })
            }
            MetaVariable::Dropped(_) | MetaVariable::Multiple => None,
        })
        .collect();
    out.sort_by(|a, b| {
        a.name
            .trim_start_matches('$')
            .cmp(b.name.trim_start_matches('$'))
    });
    out
}

fn search_file(c: Candidate<'_>) -> (PathBuf, String, bool, Vec<Match>) {
    let Some(root) = c.root.clone() else {
        return (c.sort_key, c.display, true, Vec::new());
    };
    let has_error = has_syntax_error(&root);
    let mut found = Vec::new();
    let to_match = |m: &NodeMatch<'_, Doc>, op: usize, captures: &[MetaVariable]| {
        let start = m.start_pos();
        let end = m.end_pos();
        Match {
            path: c.path.clone(),
            file: c.display.clone(),
            pattern: op,
            line: start.line() + 1,
            column: start.column(m) + 1,
            end_line: end.line() + 1,
            end_column: end.column(m) + 1,
            range: m.range(),
            text: m.text().into_owned(),
            captures: capture_list(m, captures),
        }
    };
    let rules: Vec<(usize, &Rule)> = c
        .may_match
        .iter()
        .filter_map(|&i| c.ops.ops[i].rule().map(|r| (c.ops.ops[i].index, r)))
        .collect();
    if !rules.is_empty() {
        // As `ast-grep scan --rule` reports them: every match, `ast-grep-ignore` honoured.
        let combined = CombinedScan::new(rules.iter().map(|(_, r)| *r).collect());
        for (rule, matches) in combined.scan(&root, false).matches {
            let Some(&(op, _)) = rules.iter().find(|(_, r)| std::ptr::eq(*r, rule)) else {
                continue;
            };
            let names = rule.matcher.defined_vars();
            for m in matches {
                let captures = rule_captures(&m, &names);
                found.push(to_match(&m, op, &captures));
            }
        }
    }
    for (&i, anchors) in c.may_match.iter().zip(&c.anchors) {
        let op = &c.ops.ops[i];
        let OpKind::Pattern {
            pattern, captures, ..
        } = &op.kind
        else {
            continue;
        };
        for_each_match(&root, pattern, true, anchors.as_ref(), |m| {
            found.push(to_match(&m, op.index, captures));
        });
    }
    found.sort_by_key(|m| (m.range.start, std::cmp::Reverse(m.range.end), m.pattern));
    (c.sort_key, c.display, has_error, found)
}

struct Collector {
    limit: Option<usize>,
    files: BTreeMap<PathBuf, Vec<Match>>,
    kept: usize,
    found: usize,
    files_matched: usize,
    per_pattern: Vec<usize>,
    parse_errors: Vec<(PathBuf, String)>,
}

/// Searches `scope` for `request.patterns`.
///
/// ```
/// use xcsh_tools::engine::{self, Control, Scope, SearchRequest};
/// use xcsh_tools::workspace::Workspace;
///
/// let dir = tempfile::tempdir()?;
/// std::fs::write(dir.path().join("a.js"), "function f() {\n  console.log(1, x);\n}\n")?;
/// let ws = Workspace::new(dir.path())?;
///
/// let request = SearchRequest {
///     patterns: vec!["console.log($$$ARGS)".into()],
///     ..SearchRequest::default()
/// };
/// let found = engine::search(&Scope::root(&ws), &request, &Control::default())?;
/// let m = &found.matches[0];
/// assert_eq!((m.file.as_str(), m.line, m.column), ("a.js", 2, 3));
/// assert_eq!(m.captures[0].name, "$$$ARGS");
/// assert_eq!(m.captures[0].text, "1, x");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn search(
    scope: &Scope<'_>,
    request: &SearchRequest,
    ctl: &Control<'_>,
) -> Result<SearchResult, EngineError> {
    if let Some(0) = request.limit {
        return Err(EngineError::InvalidLimit { given: 0 });
    }
    let ops = match &request.rule {
        Some(_) if !request.patterns.is_empty() => {
            return Err(EngineError::RuleWithPatterns { patterns: "pat" });
        }
        Some(rule) => CompiledOps::for_rules(rule, request.lang, false)?,
        None => CompiledOps::for_search(&request.patterns, request.lang)?,
    };
    let collector = Mutex::new(Collector {
        limit: request.limit,
        files: BTreeMap::new(),
        kept: 0,
        found: 0,
        files_matched: 0,
        per_pattern: vec![0; ops.len()],
        parse_errors: Vec::new(),
    });
    let visit = |c: Candidate<'_>| {
        let (key, display, has_error, matches) = search_file(c);
        let matched = !matches.is_empty();
        let mut col = collector.lock().unwrap_or_else(|p| p.into_inner());
        if has_error {
            col.parse_errors.push((key.clone(), display));
        }
        for m in &matches {
            if let Some(count) = col.per_pattern.get_mut(m.pattern) {
                *count += 1;
            }
        }
        if matched {
            col.files_matched += 1;
            col.found += matches.len();
            col.kept += matches.len();
            col.files.insert(key, matches);
            if let Some(limit) = col.limit {
                let col = &mut *col;
                drop_beyond_limit(&mut col.files, &mut col.kept, limit, Vec::len);
            }
        }
        matched
    };
    let report = walk(
        scope,
        &ops,
        &request.walk,
        request.cache.as_ref(),
        None,
        ctl,
        &visit,
    )?;
    let mut col = collector.into_inner().unwrap_or_else(|p| p.into_inner());
    col.parse_errors.sort();
    let mut matches: Vec<Match> = col.files.into_values().flatten().collect();
    let mut limit = None;
    if let Some(max) = request.limit
        && col.found > max
    {
        matches.truncate(max);
        limit = Some(LimitReport {
            limit: max,
            found: col.found,
        });
    }
    Ok(SearchResult {
        totals: SearchTotals {
            files_scanned: report.files_scanned,
            files_parsed: report.files_parsed,
            files_with_literals: report.files_with_literals,
            files_matched: col.files_matched,
            matches: matches.len(),
            matches_found: col.found,
        },
        matches,
        parse_errors: col.parse_errors.into_iter().map(|(_, d)| d).collect(),
        skipped: report.skipped,
        limit,
        warnings: report
            .warnings
            .into_iter()
            .chain(ops.hints_for_unmatched(&col.per_pattern))
            .collect(),
        matches_per_pattern: col.per_pattern,
    })
}
