//! Near misses: when a pattern matches nothing, the code closest to it, what differs, and a
//! pattern that does match that code.
//!
//! A model that writes `fn $F($$$A) { $$$B }` for functions that return something, `foo($A)`
//! for calls with two arguments, `print $A` (Python 2) or `function f() {}` for an arrow
//! function gets nothing back, and learns nothing from it. This pass finds, in one more walk
//! bounded in time, the nodes whose token sequence is a few edits away from the pattern's:
//!
//! * The pattern's leaves (tokens and metavariables) are aligned with a candidate node's
//!   leaves by a small dynamic program: equal tokens cost nothing; a different identifier or
//!   literal of the same kind (or a name where the code has an expression) costs 2, as it
//!   changes what is searched for; code the pattern lacks costs 1 per whole node skipped
//!   (`-> u8` is one node); a pattern token the code lacks costs 1; `$X` takes one node for
//!   free or several for 1 (it becomes `$$$X`); `$$$X` takes any run for free; and a node of
//!   another kind than the pattern's costs 1.
//! * Candidates are the few nearest ancestors of each occurrence of the pattern's literal
//!   text: first in the files holding all of it (those the search parsed, whose trees a
//!   cache still has), then, while time is left, in files holding any of it.
//! * From the alignment, the node's own text with the metavariables put back where they
//!   matched is proposed as the pattern that would match it, and it is only shown after it
//!   was compiled and seen to match that node.
//!
//! The walk stops at its deadline (the caller passes the time the plain search took), so the
//! answer costs at most about twice the search that found nothing.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use ast_grep_core::Pattern;
use ast_grep_core::matcher::MatcherExt as _;
use ast_grep_core::matcher::PatternNode;
use ast_grep_core::meta_var::MetaVariable;
use ast_grep_core::tree_sitter::LanguageExt as _;
use serde::Serialize;

use super::matching::{Doc, Root};
use super::pattern::{OpKind, compile_pattern, shorten};
use super::walk::{Candidate, WalkOptions, walk};
use super::{CancelFlag, CompiledOps, Control, EngineError, Lang, ParseCache, Scope};

/// How many near misses an answer shows at most.
pub const MAX_NEAR_MISSES: usize = 3;

/// Nodes with more leaves than this are not aligned (a file-sized node is no near miss).
const MAX_LEAVES: usize = 4000;
/// Ancestors of a literal's occurrence tried as candidates.
const ANCESTORS: usize = 6;
/// Occurrences of literals looked at per file.
const MAX_OCCURRENCES: usize = 200;

/// Where a near-miss pass looks, and with what: the failed search's own scope, language,
/// walk limits and cache.
#[derive(Clone, Copy, Debug)]
pub struct Within<'a> {
    /// The files searched.
    pub scope: &'a Scope<'a>,
    /// The language of the patterns; `None` infers it per file.
    pub lang: Option<Lang>,
    /// Limits of the walk.
    pub walk: &'a WalkOptions,
    /// Files kept from earlier calls (the search that found nothing has just read them).
    pub cache: Option<&'a ParseCache>,
}

/// Code close to a pattern that matched nothing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NearMiss {
    /// Index of the pattern (or op) it is close to.
    pub pattern: usize,
    /// Root-relative path with `/` separators.
    pub file: String,
    /// 1-based line of the code's start.
    pub line: usize,
    /// 1-based column (in characters) of its start.
    pub column: usize,
    /// The code's first line, shortened.
    pub text: String,
    /// What differs from the pattern, e.g. "it has `-> u8` where the pattern has nothing".
    pub differs: String,
    /// A pattern that matches this code (checked).
    pub suggestion: String,
    /// How far it is from the pattern (edits); lower is closer.
    pub distance: u32,
}

/// Finds up to [`MAX_NEAR_MISSES`] near misses of `patterns` (those given by `unmatched`, as
/// indices) under `scope`, stopping at `deadline`. Invalid patterns and patterns without
/// literal text (`$A + $B`) have none. Cancelled through `ctl`, it returns what it found.
///
/// ```
/// use std::time::{Duration, Instant};
/// use xcsh_tools::engine::{self, Control, Lang, Scope, WalkOptions, Within};
/// use xcsh_tools::workspace::Workspace;
///
/// let dir = tempfile::tempdir()?;
/// std::fs::write(dir.path().join("lib.rs"), "fn size(x: u8) -> usize { x as usize }\n")?;
/// let ws = Workspace::new(dir.path())?;
/// let pats = ["fn $F($$$A) { $$$B }".to_owned()];
/// let deadline = Instant::now() + Duration::from_secs(5);
/// let scope = Scope::root(&ws);
/// let walk = WalkOptions::default();
/// let within = Within { scope: &scope, lang: Some(Lang::Rust), walk: &walk, cache: None };
/// let misses = engine::near_misses(&within, &pats, &[0], deadline, &Control::default());
/// assert_eq!(misses[0].suggestion, "fn $F($$$A) -> usize { $$$B }");
/// assert!(misses[0].differs.contains("`-> usize`"), "{}", misses[0].differs);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn near_misses(
    within: &Within<'_>,
    patterns: &[String],
    unmatched: &[usize],
    deadline: Instant,
    ctl: &Control<'_>,
) -> Vec<NearMiss> {
    let Within {
        scope,
        lang,
        walk: walk_opts,
        cache,
    } = *within;
    // First the files holding every literal of a pattern (those the search itself parsed,
    // so a cache has their trees), then, while time is left and fewer than enough were found,
    // the files holding any one of them.
    let (Ok(strict), Ok(relaxed)) = (
        CompiledOps::for_search(patterns, lang),
        CompiledOps::for_near_misses(patterns, lang),
    ) else {
        return Vec::new();
    };
    let stop = CancelFlag::default();
    let own = Control {
        cancel: Some(&stop),
        progress: None,
    };
    let found: Mutex<Vec<NearMiss>> = Mutex::new(Vec::new());
    let seen: Mutex<HashSet<PathBuf>> = Mutex::new(HashSet::new());
    let lock = |m: &Mutex<Vec<NearMiss>>| m.lock().map(|v| v.len()).unwrap_or(0);
    for (first_phase, ops) in [(true, &strict), (false, &relaxed)] {
        if !first_phase && lock(&found) >= MAX_NEAR_MISSES {
            break;
        }
        let visit = |c: Candidate<'_>| {
            if Instant::now() >= deadline || ctl.is_cancelled() {
                stop.cancel();
                return false;
            }
            let mut seen = seen.lock().unwrap_or_else(|p| p.into_inner());
            if !seen.insert(c.path.clone()) && !first_phase {
                return false;
            }
            drop(seen);
            let mut in_file = file_near_misses(&c, unmatched, deadline);
            if in_file.is_empty() {
                return false;
            }
            in_file.sort_by_key(|m| m.distance);
            in_file.truncate(MAX_NEAR_MISSES);
            found
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend(in_file);
            true
        };
        // Stopped at the deadline, the walk reports `Cancelled`: what was found stands.
        let _: Result<_, EngineError> = walk(scope, ops, walk_opts, cache, &own, &visit);
        if stop.is_cancelled() || ctl.is_cancelled() {
            break;
        }
    }
    if ctl.is_cancelled() {
        return Vec::new();
    }
    let mut found = found.into_inner().unwrap_or_else(|p| p.into_inner());
    found.sort_by(|a, b| {
        (a.distance, &a.file, a.line, a.column).cmp(&(b.distance, &b.file, b.line, b.column))
    });
    found.truncate(MAX_NEAR_MISSES);
    found
}

/// The near misses in one file, nested candidates reduced to the closest.
fn file_near_misses(c: &Candidate<'_>, unmatched: &[usize], deadline: Instant) -> Vec<NearMiss> {
    let Some(root) = c.root.clone() else {
        return Vec::new();
    };
    let mut out: Vec<(std::ops::Range<usize>, NearMiss)> = Vec::new();
    for &i in &c.may_match {
        let op = &c.ops.ops[i];
        if !unmatched.contains(&op.index) {
            continue;
        }
        let OpKind::Pattern { pattern, .. } = &op.kind else {
            continue;
        };
        let Some(shape) = Shape::of(pattern, c.lang) else {
            continue;
        };
        let mut seen = HashSet::new();
        for (tried, node) in candidates(&root, &c.text, &shape).into_iter().enumerate() {
            // A large file can hold hundreds of candidates: the deadline holds within it too.
            if tried % 16 == 15 && Instant::now() >= deadline {
                break;
            }
            if !seen.insert(node.id()) {
                continue;
            }
            if let Some((miss, range)) = align_node(&root, &c.text, node, &shape, c.lang) {
                let (line, column) =
                    super::rewrite::LineCounter::new(&c.text).position(range.start);
                let nested = out.iter().position(|(r, _)| {
                    r.start <= range.start && range.end <= r.end
                        || range.start <= r.start && r.end <= range.end
                });
                let entry = NearMiss {
                    pattern: op.index,
                    file: c.display.clone(),
                    line,
                    column,
                    ..miss
                };
                match nested {
                    Some(k) if out[k].1.distance <= entry.distance => {}
                    Some(k) => out[k] = (range, entry),
                    None => out.push((range, entry)),
                }
            }
        }
    }
    out.into_iter().map(|(_, m)| m).collect()
}

/// A pattern as a sequence of tokens to align, with what it needs to be worth trying.
struct Shape {
    tokens: Vec<Token>,
    /// The kind of node the pattern matches.
    kind: String,
    /// Texts of its literal leaves (identifiers, keywords, numbers…), to find candidates by.
    literals: Vec<String>,
    /// Whether any literal is named (an identifier or a literal value, not a keyword).
    named_literal: bool,
    /// Candidates with more leaves are not aligned: a few edits cannot bridge them (without
    /// a `$$$` to absorb a body).
    max_leaves: usize,
}

#[derive(Clone, Debug)]
enum Token {
    Lit {
        text: String,
        named: bool,
        kind: u16,
    },
    /// `$X` (`$_` unnamed).
    One(String),
    /// `$$$X` (`$$$` unnamed).
    Many(String),
}

impl Token {
    fn shown(&self) -> &str {
        match self {
            Token::Lit { text, .. } => text,
            Token::One(v) | Token::Many(v) => v,
        }
    }
}

impl Shape {
    fn of(pattern: &Pattern, lang: Lang) -> Option<Self> {
        let ts = lang.support_lang().get_ts_language();
        let kind_id = match &pattern.node {
            PatternNode::MetaVar { .. } => return None,
            PatternNode::Terminal { kind_id, .. } | PatternNode::Internal { kind_id, .. } => {
                *kind_id
            }
        };
        let mut tokens = Vec::new();
        flatten(&pattern.node, &mut tokens);
        let literals: Vec<String> = tokens
            .iter()
            .filter_map(|t| match t {
                Token::Lit { text, .. }
                    if text.chars().any(|c| c.is_alphanumeric()) && text.len() >= 2 =>
                {
                    Some(text.clone())
                }
                _ => None,
            })
            .collect();
        if literals.is_empty() {
            return None;
        }
        let named_literal = tokens
            .iter()
            .any(|t| matches!(t, Token::Lit { named: true, .. }));
        let max_leaves = if tokens.iter().any(|t| matches!(t, Token::Many(_))) {
            MAX_LEAVES
        } else {
            // `$X` may stand for a large node: generous, but far from a whole file.
            (tokens.len() * 4 + 32).min(MAX_LEAVES)
        };
        Some(Self {
            max_leaves,
            kind: ts.node_kind_for_id(kind_id).unwrap_or("node").to_owned(),
            tokens,
            literals,
            named_literal,
        })
    }
}

fn flatten(node: &PatternNode, out: &mut Vec<Token>) {
    match node {
        PatternNode::MetaVar { meta_var } => out.push(match meta_var {
            MetaVariable::Capture(name, _) => Token::One(format!("${name}")),
            MetaVariable::Dropped(_) => Token::One("$_".to_owned()),
            MetaVariable::MultiCapture(name) => Token::Many(format!("$$${name}")),
            MetaVariable::Multiple => Token::Many("$$$".to_owned()),
        }),
        PatternNode::Terminal {
            text,
            is_named,
            kind_id,
        } => out.push(Token::Lit {
            text: text.clone(),
            named: *is_named,
            kind: *kind_id,
        }),
        PatternNode::Internal { children, .. } => {
            for child in children {
                flatten(child, out);
            }
        }
    }
}

type TsNode<'r> = <Doc as ast_grep_core::Doc>::Node<'r>;

/// The nearest ancestors of each occurrence of the pattern's literals in `text`.
fn candidates<'r>(root: &'r Root, text: &str, shape: &Shape) -> Vec<TsNode<'r>> {
    let tree = root.root().get_inner_node();
    let mut out = Vec::new();
    let mut occurrences = 0;
    for literal in &shape.literals {
        for (start, _) in text.match_indices(literal.as_str()) {
            occurrences += 1;
            if occurrences > MAX_OCCURRENCES {
                return out;
            }
            let Some(leaf) = tree.descendant_for_byte_range(start, start + literal.len()) else {
                continue;
            };
            let mut node = Some(leaf);
            for _ in 0..ANCESTORS {
                let Some(n) = node else { break };
                if n.is_named() && n.child_count() > 0 {
                    out.push(n);
                }
                node = n.parent();
            }
        }
    }
    out
}

/// One leaf of a candidate: its byte range, kind and whether it is named.
struct Leaf {
    start: usize,
    end: usize,
    kind: u16,
    named: bool,
}

/// The leaves under `node` (zero-width MISSING ones left out), and for each leaf index the
/// leaf indices where a node starting there ends (exclusive).
fn leaves_of(node: TsNode<'_>, max: usize) -> Option<(Vec<Leaf>, Vec<Vec<usize>>)> {
    fn walk(
        node: TsNode<'_>,
        max: usize,
        leaves: &mut Vec<Leaf>,
        spans: &mut Vec<(usize, usize)>,
    ) -> bool {
        if leaves.len() > max {
            return false;
        }
        let first = leaves.len();
        if node.child_count() == 0 {
            if node.start_byte() < node.end_byte() {
                leaves.push(Leaf {
                    start: node.start_byte(),
                    end: node.end_byte(),
                    kind: node.kind_id(),
                    named: node.is_named(),
                });
            }
        } else {
            let mut cursor = node.walk();
            for child in node.children(&mut cursor) {
                if !walk(child, max, leaves, spans) {
                    return false;
                }
            }
        }
        if leaves.len() > first {
            spans.push((first, leaves.len()));
        }
        true
    }
    let mut leaves = Vec::new();
    let mut spans = Vec::new();
    if !walk(node, max, &mut leaves, &mut spans) {
        return None;
    }
    let mut ends = vec![Vec::new(); leaves.len() + 1];
    for (start, end) in spans {
        if !ends[start].contains(&end) {
            ends[start].push(end);
        }
    }
    Some((leaves, ends))
}

/// A step of the alignment, read back from the table.
#[derive(Clone, Copy, Debug)]
enum Step {
    /// Code leaves `from..to` (whole nodes) that the pattern lacks.
    SkipCode { from: usize },
    /// A pattern token the code lacks.
    SkipPattern,
    /// A token equal to the leaf.
    Same,
    /// A token of the same kind with other text.
    Replace,
    /// A metavariable over leaves `from..`; `widened` when `$X` took several nodes.
    Var { from: usize, widened: bool },
}

/// Aligns `shape` with `node`; a near miss (without its location) when it is close enough
/// and a pattern that matches the node could be made from it.
fn align_node<'r>(
    root: &'r Root,
    text: &str,
    node: TsNode<'r>,
    shape: &Shape,
    lang: Lang,
) -> Option<(NearMiss, std::ops::Range<usize>)> {
    let (leaves, ends) = leaves_of(node, shape.max_leaves)?;
    let (p, n) = (shape.tokens.len(), leaves.len());
    let width = n + 1;
    const INF: u32 = u32::MAX / 2;
    let mut cost = vec![INF; (p + 1) * width];
    let mut back: Vec<(usize, usize, Step)> = vec![(0, 0, Step::Same); (p + 1) * width];
    cost[0] = 0;
    let leaf_text = |l: &Leaf| &text[l.start..l.end];
    // `level[k]`: the innermost bracket still open before leaf `k` (`usize::MAX` for none).
    let mut level = Vec::with_capacity(n + 1);
    let mut open: Vec<usize> = Vec::new();
    level.push(usize::MAX);
    for (k, leaf) in leaves.iter().enumerate() {
        if !leaf.named {
            match leaf_text(leaf) {
                "(" | "[" | "{" => open.push(k),
                ")" | "]" | "}" => {
                    open.pop();
                }
                _ => {}
            }
        }
        level.push(open.last().copied().unwrap_or(usize::MAX));
    }
    for i in 0..=p {
        // Within a row: code the pattern lacks, a whole node at a time.
        for j in 0..n {
            let here = cost[i * width + j];
            if here >= INF {
                continue;
            }
            for &end in &ends[j] {
                let at = i * width + end;
                if here + 1 < cost[at] {
                    cost[at] = here + 1;
                    back[at] = (i, j, Step::SkipCode { from: j });
                }
            }
        }
        if i == p {
            break;
        }
        let next = (i + 1) * width;
        // Per bracket level, the cheapest earlier position: a metavariable's run must be
        // balanced (`$$$A` may not swallow `) -> T {` to reach a later `)`).
        let mut best: HashMap<usize, (u32, usize)> = HashMap::new();
        for j in 0..=n {
            let here = cost[i * width + j];
            let best_before = best.get(&level[j]).copied();
            // `$$$X` over j'..j, and `$X` widened over j'..j (j' < j), from the best j'.
            match &shape.tokens[i] {
                Token::Many(_) => {
                    let from = match best_before {
                        Some((c, k)) if c < here => Some((c, k)),
                        _ if here < INF => Some((here, j)),
                        _ => best_before,
                    };
                    if let Some((c, k)) = from
                        && c < cost[next + j]
                    {
                        cost[next + j] = c;
                        back[next + j] = (
                            i,
                            k,
                            Step::Var {
                                from: k,
                                widened: false,
                            },
                        );
                    }
                }
                Token::One(_) => {
                    if let Some((c, k)) = best_before
                        && c + 1 < cost[next + j]
                    {
                        cost[next + j] = c + 1;
                        back[next + j] = (
                            i,
                            k,
                            Step::Var {
                                from: k,
                                widened: true,
                            },
                        );
                    }
                }
                Token::Lit { .. } => {}
            }
            if here < INF && best_before.is_none_or(|(c, _)| here < c) {
                best.insert(level[j], (here, j));
            }
            if here >= INF {
                continue;
            }
            // Dropping a bracket changes the structure: it counts double.
            let drop = match &shape.tokens[i] {
                Token::Lit {
                    text, named: false, ..
                } if matches!(text.as_str(), "(" | ")" | "[" | "]" | "{" | "}") => 2,
                _ => 1,
            };
            if here + drop < cost[next + j] {
                cost[next + j] = here + drop;
                back[next + j] = (i, j, Step::SkipPattern);
            }
            if j == n {
                continue;
            }
            match &shape.tokens[i] {
                Token::Lit {
                    text: want,
                    named,
                    kind,
                } => {
                    let leaf = &leaves[j];
                    let step = if leaf_text(leaf) == want {
                        Some((0, Step::Same))
                    } else if *named && leaf.named && leaf.kind == *kind {
                        // Other text changes what is searched for: it weighs more than a
                        // metavariable taking several nodes.
                        Some((2, Step::Replace))
                    } else {
                        None
                    };
                    if let Some((c, step)) = step
                        && here + c < cost[next + j + 1]
                    {
                        cost[next + j + 1] = here + c;
                        back[next + j + 1] = (i, j, step);
                    }
                    // A name where the code has a whole expression.
                    if *named {
                        for &end in ends[j].iter().filter(|&&end| end > j + 1) {
                            if here + 2 < cost[next + end] {
                                cost[next + end] = here + 2;
                                back[next + end] = (i, j, Step::Replace);
                            }
                        }
                    }
                }
                Token::One(_) => {
                    for &end in &ends[j] {
                        if here < cost[next + end] {
                            cost[next + end] = here;
                            back[next + end] = (
                                i,
                                j,
                                Step::Var {
                                    from: j,
                                    widened: false,
                                },
                            );
                        }
                    }
                }
                Token::Many(_) => {}
            }
        }
    }
    let kind_differs = node.kind() != shape.kind;
    let total = cost[p * width + n] + u32::from(kind_differs);
    let allowed = (p as u32).div_ceil(2).max(2);
    if total == 0 || total > allowed {
        return None;
    }

    // Read the alignment back, first step first.
    let mut steps = Vec::new();
    let (mut i, mut j) = (p, n);
    while i > 0 || j > 0 {
        let (pi, pj, step) = back[i * width + j];
        steps.push((i, j, pj, step));
        (i, j) = (pi, pj);
    }
    steps.reverse();
    let mut differs = Vec::new();
    let mut exact_named = false;
    let mut exact_any = false;
    let mut pending_code: Option<(usize, usize)> = None;
    let mut pending_pattern: Vec<&str> = Vec::new();
    let flush =
        |differs: &mut Vec<String>, code: &mut Option<(usize, usize)>, pat: &mut Vec<&str>| {
            if let Some((from, to)) = code.take() {
                let shown = shorten(text[leaves[from].start..leaves[to - 1].end].trim(), 40);
                differs.push(format!("it has `{shown}` where the pattern has nothing"));
            }
            if !pat.is_empty() {
                differs.push(format!(
                    "it lacks the pattern's `{}`",
                    shorten(&pat.join(" "), 40)
                ));
                pat.clear();
            }
        };
    for &(to_i, to_j, from_j, step) in &steps {
        match step {
            Step::SkipCode { from } => {
                pending_code = Some(match pending_code {
                    Some((f, _)) => (f, to_j),
                    None => (from, to_j),
                });
                continue;
            }
            Step::SkipPattern => {
                pending_pattern.push(shape.tokens[to_i - 1].shown());
                continue;
            }
            _ => {}
        }
        flush(&mut differs, &mut pending_code, &mut pending_pattern);
        match step {
            Step::Same => {
                exact_any = true;
                if let Token::Lit { named: true, .. } = shape.tokens[to_i - 1] {
                    exact_named = true;
                }
            }
            Step::Replace => differs.push(format!(
                "it has `{}` where the pattern has `{}`",
                shorten(text[leaves[from_j].start..leaves[to_j - 1].end].trim(), 40),
                shorten(shape.tokens[to_i - 1].shown(), 40)
            )),
            Step::Var { widened: true, .. } => differs.push(format!(
                "{} stands for several nodes here, which takes `$$${}`",
                shape.tokens[to_i - 1].shown(),
                shape.tokens[to_i - 1].shown().trim_start_matches('$')
            )),
            _ => {}
        }
    }
    flush(&mut differs, &mut pending_code, &mut pending_pattern);
    // Close only by its metavariables is no near miss: some of its text must be there.
    if !exact_any || (shape.named_literal && !exact_named) {
        return None;
    }
    if kind_differs {
        differs.insert(
            0,
            format!(
                "it is a {} where the pattern is a {}",
                node.kind(),
                shape.kind
            ),
        );
    }

    let (suggestion, at) = suggest(root, text, node, &leaves, &steps, shape, lang)?;
    let first_line = text[at.start_byte()..at.end_byte()]
        .lines()
        .next()
        .unwrap_or_default()
        .trim_end();
    Some((
        NearMiss {
            pattern: 0,
            file: String::new(),
            line: 0,
            column: 0,
            text: shorten(first_line, 80),
            differs: differs.into_iter().take(4).collect::<Vec<_>>().join("; "),
            suggestion,
            distance: total,
        },
        at.start_byte()..at.end_byte(),
    ))
}

/// The node's text with each metavariable put back over what it matched, in two spellings
/// (a metavariable over a bracketed list also as the list's brackets around `$$$X`), the
/// first that compiles and matches the node; else the node's own text, when short.
fn suggest<'r>(
    root: &'r Root,
    text: &str,
    node: TsNode<'r>,
    leaves: &[Leaf],
    steps: &[(usize, usize, usize, Step)],
    shape: &Shape,
    lang: Lang,
) -> Option<(String, TsNode<'r>)> {
    let spell = |bracketed: bool| {
        let mut out = String::new();
        let mut at = node.start_byte();
        for &(to_i, to_j, _, step) in steps {
            let Step::Var { from, widened } = step else {
                continue;
            };
            let token = shape.tokens[to_i - 1].shown();
            let name = token.trim_start_matches('$');
            let (start, end) = if from < to_j {
                (leaves[from].start, leaves[to_j - 1].end)
            } else {
                let pos = leaves.get(from).map_or(node.end_byte(), |l| l.start);
                (pos, pos)
            };
            out.push_str(&text[at..start]);
            let open = text[start..end].chars().next();
            let close = text[start..end].chars().last();
            let pair = matches!(
                (open, close),
                (Some('('), Some(')')) | (Some('['), Some(']')) | (Some('{'), Some('}'))
            );
            if bracketed && pair && to_j - from >= 2 {
                let (o, c) = (open.unwrap_or('('), close.unwrap_or(')'));
                let inner = if name.is_empty() {
                    String::new()
                } else {
                    name.to_owned()
                };
                out.push_str(&format!("{o}$$${inner}{c}"));
            } else if widened {
                out.push_str(&format!("$$${name}"));
            } else {
                out.push_str(token);
            }
            at = end;
        }
        out.push_str(&text[at..node.end_byte()]);
        out
    };
    let own = &text[node.start_byte()..node.end_byte()];
    let spellings: Vec<String> = [spell(false), spell(true)]
        .into_iter()
        .chain((own.len() <= 200).then(|| own.to_owned()))
        .collect();
    // A spelling of the node may parse as something else on its own (`f = () => {}` is an
    // assignment, not a declarator): then the same inside its parent's text, up to two
    // levels, matched against the parent.
    let mut target = Some(node);
    for _ in 0..3 {
        let at = target?;
        let (before, after) = (
            &text[at.start_byte()..node.start_byte()],
            &text[node.end_byte()..at.end_byte()],
        );
        if before.len() + after.len() > 200 {
            return None;
        }
        for spelling in &spellings {
            let candidate = format!("{before}{spelling}{after}");
            let matched = compile_pattern(&candidate, lang)
                .ok()
                .is_some_and(|p| p.match_node(root.adopt(at)).is_some());
            if matched {
                return Some((candidate, at));
            }
        }
        target = at.parent();
    }
    None
}

/// Runs `search` and, when `found_nothing` says it found nothing, the near-miss pass for
/// every one of `patterns` over the same scope, given three quarters of the time the search
/// took (at least [`NEAR_MISS_FLOOR`]): an answer that found nothing costs at most about
/// twice the search. With the search's cache, the pass reuses the trees it just parsed. This
/// is what `ast_grep` and `ast_edit` do.
///
/// ```
/// use xcsh_tools::engine::{self, Control, Lang, Scope, SearchRequest, Within, with_near_misses};
/// use xcsh_tools::workspace::Workspace;
///
/// let dir = tempfile::tempdir()?;
/// std::fs::write(dir.path().join("a.py"), "print(\"done\", n)\n")?;
/// let ws = Workspace::new(dir.path())?;
/// let scope = Scope::root(&ws);
/// let request = SearchRequest { patterns: vec!["print $X".into()], lang: Some(Lang::Python), ..Default::default() };
/// let within = Within { scope: &scope, lang: request.lang, walk: &request.walk, cache: None };
/// let (found, misses) = with_near_misses(
///     &within, &request.patterns, &Control::default(),
///     || engine::search(&scope, &request, &Control::default()),
///     |found| found.matches.is_empty(),
/// )?;
/// assert!(found.matches.is_empty());
/// assert_eq!(misses[0].suggestion, "print($$$X)");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn with_near_misses<T>(
    within: &Within<'_>,
    patterns: &[String],
    control: &Control<'_>,
    search: impl FnOnce() -> Result<T, EngineError>,
    found_nothing: impl Fn(&T) -> bool,
) -> Result<(T, Vec<NearMiss>), EngineError> {
    let started = Instant::now();
    let result = search()?;
    if patterns.is_empty() || !found_nothing(&result) {
        return Ok((result, Vec::new()));
    }
    // Three quarters of the search's time: the files in hand when it runs out still finish.
    let deadline = Instant::now() + (started.elapsed() * 3 / 4).max(NEAR_MISS_FLOOR);
    let unmatched: Vec<usize> = (0..patterns.len()).collect();
    let misses = near_misses(within, patterns, &unmatched, deadline, control);
    Ok((result, misses))
}

/// The least time the near-miss pass gets, however fast the search was.
pub const NEAR_MISS_FLOOR: Duration = Duration::from_millis(50);
