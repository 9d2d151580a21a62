//! The pattern a near miss proposes: the node's own text with the metavariables put back,
//! checked to match it.

use ast_grep_core::matcher::MatcherExt as _;

use super::super::Lang;
use super::super::matching::Root;
use super::super::pattern::compile_pattern;
use super::align::{Leaf, Shape, Step, TsNode};

/// The node's text with each metavariable put back over what it matched, in two spellings
/// (a metavariable over a bracketed list also as the list's brackets around `$$$X`), the
/// first that compiles and matches the node; else the node's own text, when short.
pub(super) fn suggest<'r>(
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
