//! Parsing a file and walking its matches.

use std::cell::RefCell;

use ast_grep_core::matcher::MatcherExt as _;
use ast_grep_core::tree_sitter::{LanguageExt as _, StrDoc};
use ast_grep_core::{AstGrep, Matcher as _, NodeMatch, Pattern};
use ast_grep_language::SupportLang;
use tree_sitter::Parser;

use super::Lang;
use super::prefilter::Anchors;

pub(crate) type Doc = StrDoc<SupportLang>;
pub(crate) type Root = AstGrep<Doc>;

/// Parses `text` as `lang`. `None` when tree-sitter gives up (it does not, short of a
/// cancellation or timeout, neither of which is set).
pub(crate) fn parse(text: &str, lang: Lang) -> Option<Root> {
    StrDoc::try_new(text, lang.support_lang())
        .ok()
        .map(AstGrep::doc)
}

thread_local! {
    /// One parser per worker thread, for parses of included ranges or against an old tree
    /// (ast-grep's own cached parsers parse whole files only), set to the language of the
    /// last text it parsed.
    static PARSER: RefCell<Option<(Lang, Parser)>> = const { RefCell::new(None) };
}

/// tree-sitter's parse of the `included` ranges of `text` (all of it when there are none),
/// reusing what it can of `old` (an edited tree of an earlier text), with this thread's
/// parser. `None` when the ranges are not sorted and disjoint, or tree-sitter gives up.
pub(crate) fn parse_tree(
    lang: Lang,
    text: &str,
    included: &[tree_sitter::Range],
    old: Option<&tree_sitter::Tree>,
) -> Option<tree_sitter::Tree> {
    PARSER.with(|cell| {
        let mut cell = cell.borrow_mut();
        let parser = match &mut *cell {
            Some((set, parser)) if *set == lang => parser,
            slot => {
                let mut parser = Parser::new();
                parser
                    .set_language(&lang.support_lang().get_ts_language())
                    .ok()?;
                &mut slot.insert((lang, parser)).1
            }
        };
        parser.set_included_ranges(included).ok()?;
        parser.parse(text, old)
    })
}

/// Whether the parse tree has a syntax error (an ERROR or MISSING node).
pub(crate) fn has_syntax_error(root: &Root) -> bool {
    root.root().get_inner_node().has_error()
}

/// One `ERROR` or `MISSING` node of a parse tree: what the syntax guard compares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxErrorNode {
    /// Whether tree-sitter inserted it (`MISSING`) rather than skipped text (`ERROR`).
    pub missing: bool,
    /// For `MISSING`, the kind of the expected node (`;`, `identifier`); for `ERROR`, the
    /// text it covers.
    pub text: String,
    /// Byte offset where it starts.
    pub byte: usize,
    /// Byte offset where it ends.
    pub end: usize,
    /// For `ERROR`, the byte ranges of the tokens (leaves) inside it, in order (at most
    /// [`MAX_ERROR_LEAVES`]): where in it a reader should look is one of them.
    pub leaves: Vec<std::ops::Range<usize>>,
}

/// Tokens of an `ERROR` node kept, at most.
pub const MAX_ERROR_LEAVES: usize = 10_000;

/// Errors the syntax guard names per file, at most (it counts the rest).
pub(crate) const REPORTED_ERRORS: usize = 3;
/// Characters of an `ERROR` node's text quoted in a report.
const QUOTED_CHARS: usize = 40;

/// How the syntax guard names one error node: where a reader should look, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ErrorReport {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// A `MISSING` node: `text` is the kind of token needed there. Else the text the parser
    /// could not place (shortened, whitespace collapsed; empty at the end of the input).
    pub missing: bool,
    pub text: String,
}

impl SyntaxErrorNode {
    /// Its report in `text` (the text parsed), which a change altered from byte
    /// `changed_from` on: a `MISSING` node at its place; an `ERROR` node, which may span a
    /// whole function, at its first token from the change on (the token the parser could not
    /// place) when the change starts inside it, else at its start.
    pub(crate) fn report(&self, text: &str, changed_from: usize) -> ErrorReport {
        let (at, quoted) = if self.missing {
            (self.byte, self.text.clone())
        } else {
            let token = self
                .leaves
                .iter()
                .find(|t| t.start >= changed_from)
                .filter(|_| changed_from >= self.byte && changed_from <= self.end);
            let (at, quoted) = match token {
                Some(t) => (t.start, &text[t.clone()]),
                None => (self.byte, self.text.as_str()),
            };
            let words = quoted.split_whitespace().collect::<Vec<_>>().join(" ");
            (at, super::pattern::shorten(&words, QUOTED_CHARS))
        };
        let (line, column) = line_column(text, at);
        ErrorReport {
            line,
            column,
            missing: self.missing,
            text: quoted,
        }
    }
}

/// 1-based line and character column of byte `at` of `text`.
pub(crate) fn line_column(text: &str, at: usize) -> (usize, usize) {
    let at = at.min(text.len());
    let before = &text[..at];
    let line = memchr::memchr_iter(b'\n', before.as_bytes()).count() + 1;
    let start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[start..].chars().count() + 1)
}

/// Every `ERROR` and `MISSING` node of `text` parsed as `lang`, in document order (the
/// outermost `ERROR` only: its inside is the same mistake). Empty when it parses cleanly.
///
/// ```
/// use xcsh_tools::engine::{Lang, syntax_errors};
/// assert!(syntax_errors("fn f() {}", Lang::Rust).is_empty());
/// let errors = syntax_errors("fn f() { let x = 1 }", Lang::Rust);
/// assert!(errors[0].missing && errors[0].text == ";");
/// ```
pub fn syntax_errors(text: &str, lang: Lang) -> Vec<SyntaxErrorNode> {
    let Some(root) = parse(text, lang) else {
        return Vec::new();
    };
    errors_under(root.root().get_inner_node(), text)
}

/// The `ERROR` and `MISSING` nodes under `node`, of a tree parsed from `text`, in order.
pub(crate) fn errors_under(node: tree_sitter::Node<'_>, text: &str) -> Vec<SyntaxErrorNode> {
    let mut found = Vec::new();
    if !node.has_error() {
        return found;
    }
    let mut cursor = node.walk();
    loop {
        let node = cursor.node();
        let descend = if node.is_missing() {
            found.push(SyntaxErrorNode {
                missing: true,
                text: node.kind().to_owned(),
                byte: node.start_byte(),
                end: node.end_byte(),
                leaves: Vec::new(),
            });
            false
        } else if node.is_error() {
            found.push(SyntaxErrorNode {
                missing: false,
                text: text
                    .get(node.start_byte()..node.end_byte())
                    .unwrap_or_default()
                    .to_owned(),
                byte: node.start_byte(),
                end: node.end_byte(),
                leaves: leaves_of(node),
            });
            false
        } else {
            node.has_error()
        };
        if descend && cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return found;
            }
        }
    }
}

/// The tokens under `node`, in order, at most [`MAX_ERROR_LEAVES`].
fn leaves_of(node: tree_sitter::Node<'_>) -> Vec<std::ops::Range<usize>> {
    let mut leaves = Vec::new();
    let mut cursor = node.walk();
    loop {
        let n = cursor.node();
        if n.child_count() == 0 {
            if n.end_byte() > n.start_byte() {
                leaves.push(n.start_byte()..n.end_byte());
            }
            if leaves.len() == MAX_ERROR_LEAVES {
                return leaves;
            }
        } else if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.node() == node {
                return leaves;
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return leaves;
            }
        }
    }
}

/// Calls `f` with every match of `pattern` under `root`, in pre-order.
///
/// With `reentrant == false` the subtree of a match is not searched: this is the traversal
/// `replace_all` and the CLI's `--update-all` use (nested matches stay). With `true` nested
/// matches are reported too, as the CLI's search output does.
///
/// Only nodes of the kind the pattern's root can match are tried, which is exactly the set
/// ast-grep's matcher would accept (it compares the kind first), so the result is the same as
/// `Visitor::new(pattern).reentrant(..)` without calling the matcher on every node.
///
/// With `anchors`, subtrees that do not cover an occurrence of a literal every match contains
/// are skipped: no match can be inside them.
pub(crate) fn for_each_match<'r>(
    root: &'r Root,
    pattern: &Pattern,
    reentrant: bool,
    anchors: Option<&Anchors>,
    mut f: impl FnMut(NodeMatch<'r, Doc>),
) {
    let kinds = pattern.potential_kinds();
    let mut cursor = root.root().get_inner_node().walk();
    loop {
        let node = cursor.node();
        let relevant = anchors.is_none_or(|a| a.covered_by(node.start_byte(), node.end_byte()));
        let try_it = relevant
            && kinds
                .as_ref()
                .is_none_or(|k| k.contains(usize::from(node.kind_id())));
        let matched = try_it
            && match pattern.match_node(root.adopt(node)) {
                Some(m) => {
                    f(m);
                    true
                }
                None => false,
            };
        if relevant && (!matched || reentrant) && cursor.goto_first_child() {
            continue;
        }
        while !cursor.goto_next_sibling() {
            if !cursor.goto_parent() {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::prefilter::{Prefilter, required_literals};
    use ast_grep_core::tree_sitter::Visitor;

    /// The traversal must find exactly what ast-grep's own `Visitor` finds.
    #[test]
    fn same_matches_as_ast_grep_visitor() {
        let cases = [
            (
                Lang::Rust,
                "fn f() { foo(foo(1)); let x = foo(bar(foo(2))); /* foo(3) */ }",
                &["foo($A)", "$A", "foo", "let $X = $Y;", "$F($$$)"][..],
            ),
            (
                Lang::Python,
                "def f(a):\n    return g(g(a), [g(x) for x in a])\n",
                &["g($$$A)", "$A", "return $X", "[$E for $V in $L]"][..],
            ),
            (
                Lang::Tsx,
                "const a = <div><span>{f(1)}</span></div>; f(f(2));",
                &["f($A)", "<span>$$$C</span>", "$A"][..],
            ),
        ];
        for (lang, src, pats) in cases {
            let root = parse(src, lang).unwrap();
            for pat in pats {
                let pattern = Pattern::try_new(pat, lang.support_lang()).unwrap();
                let prefilter = Prefilter::new(lang, vec![required_literals(&pattern, lang)]);
                let anchors = prefilter.anchors(0, src.as_bytes());
                for reentrant in [false, true] {
                    let theirs: Vec<_> = Visitor::new(&pattern)
                        .reentrant(reentrant)
                        .visit(root.root())
                        .map(|m| m.range())
                        .collect();
                    for anchors in [None, anchors.as_ref()] {
                        let mut ours = Vec::new();
                        for_each_match(&root, &pattern, reentrant, anchors, |m| {
                            ours.push(m.range())
                        });
                        assert_eq!(
                            ours,
                            theirs,
                            "{lang} `{pat}` reentrant={reentrant} anchored={}",
                            anchors.is_some()
                        );
                    }
                }
            }
        }
    }
}
