//! Aligning a pattern's tokens with a candidate node's leaves: the edit-distance program
//! behind near misses, and the candidates it is tried on.

use std::collections::HashMap;

use ast_grep_core::Pattern;
use ast_grep_core::matcher::PatternNode;
use ast_grep_core::meta_var::MetaVariable;
use ast_grep_core::tree_sitter::LanguageExt as _;

use super::super::Lang;
use super::super::matching::{Doc, Root};
use super::super::pattern::shorten;
use super::NearMiss;
use super::suggest::suggest;

/// Nodes with more leaves than this are not aligned (a file-sized node is no near miss).
const MAX_LEAVES: usize = 4000;
/// Ancestors of a literal's occurrence tried as candidates.
const ANCESTORS: usize = 6;
/// Occurrences of literals looked at per file.
const MAX_OCCURRENCES: usize = 200;

/// A pattern as a sequence of tokens to align, with what it needs to be worth trying.
pub(super) struct Shape {
    pub(super) tokens: Vec<Token>,
    /// The kind of node the pattern matches.
    pub(super) kind: String,
    /// Texts of its literal leaves (identifiers, keywords, numbers…), to find candidates by.
    pub(super) literals: Vec<String>,
    /// Whether any literal is named (an identifier or a literal value, not a keyword).
    pub(super) named_literal: bool,
    /// Candidates with more leaves are not aligned: a few edits cannot bridge them (without
    /// a `$$$` to absorb a body).
    pub(super) max_leaves: usize,
}

#[derive(Clone, Debug)]
pub(super) enum Token {
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
    pub(super) fn shown(&self) -> &str {
        match self {
            Token::Lit { text, .. } => text,
            Token::One(v) | Token::Many(v) => v,
        }
    }
}

impl Shape {
    pub(super) fn of(pattern: &Pattern, lang: Lang) -> Option<Self> {
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

pub(super) type TsNode<'r> = <Doc as ast_grep_core::Doc>::Node<'r>;

/// The nearest ancestors of each occurrence of the pattern's literals in `text`.
pub(super) fn candidates<'r>(root: &'r Root, text: &str, shape: &Shape) -> Vec<TsNode<'r>> {
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
pub(super) struct Leaf {
    pub(super) start: usize,
    pub(super) end: usize,
    pub(super) kind: u16,
    pub(super) named: bool,
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
pub(super) enum Step {
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
pub(super) fn align_node<'r>(
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
