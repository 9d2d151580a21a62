//! Parsing a Rust file only where a match can be.
//!
//! A cold run parses each candidate file once and throws the tree away, and on patterns whose
//! literals occur in large files (`impl Default for $T { … }` in windows-sys's 0.9 MB
//! modules) parsing is nearly all of its time. Yet a match of a pattern whose root is not the
//! whole file lies inside one top-level item, and covers an occurrence of the pattern's
//! anchor literal ([`Anchors`](super::prefilter::Anchors)). So the file is cut, lexically,
//! into runs of whole top-level items ([`items::item_boundaries`]), and tree-sitter parses only the
//! runs that hold an anchor (its *included ranges*, in the file's own byte and line
//! coordinates): every node a match could be, and everything below it, is what a whole-file
//! parse gives, while the other items are never lexed.
//!
//! That rests on Rust's top level being a plain sequence of items, each parsed the same
//! whatever items stand around it. It holds for valid Rust, and the cut is conservative: a
//! boundary is placed only after a `;` outside any bracket, or after a `}` that closes to
//! the top level and is followed by what can only start an item (`fn`, `pub`, `impl`, `#`, …);
//! anything else keeps neighbouring items together. Whatever the lexer cannot account for
//! (an unterminated string or comment, unbalanced brackets, a shebang line) means no cut.
//! A partial tree with a syntax error is thrown away and the whole file parsed, so a file
//! with an error is matched, and reported, as before. What is left: an error in an item that
//! was not parsed goes unreported, and cannot change how the parsed items recover. Files under
//! 4 KiB are always parsed whole.
//!
//! **Inside bodies.** An `impl`, `trait`, `mod` or `extern` block's body (a
//! `declaration_list`) holds the same items as a file, so the same cut applies inside it
//! ([`Lexed::nested_units`]): an anchor in one method needs only that method parsed (as if it stood
//! at the top level), not the whole `impl`, when the pattern cannot be one of the nodes
//! around an inner item (the body, the block, the file: [`NESTING_KINDS`]). One difference
//! between the two is known and kept out: at the top level `m!(x);` is an expression
//! statement, in a body a macro call, so no inner run starts with a macro call or has one
//! after a `}`, and a partial tree with an inner run read as a statement is thrown away.
//! tree-sitter-rust fails on some members rustc accepts (`default fn`, `pub macro`), and a
//! whole parse's recovery from one can take in the members around it: a body with a member
//! that is neither an item nor a macro call is not cut. A pattern that may be an `impl` or a
//! `trait` (`impl Default for $T { $$$B }`) can match around an anchor in a method, so for
//! it the cut stops at the items of `mod` and `extern` bodies: an `impl` in a module is parsed
//! whole, without the rest of the module.
//!
//! **Inside functions.** A function's body (a `block`) holds what a file holds, statements
//! (`repeat(_statement)` in tree-sitter-rust 0.24), and a tail expression: so the statements
//! around an anchor in a body are parsed alone too ([`Lexed::statements`]), when the pattern
//! cannot be the function, its block, or an expression statement ([`Depth::Statements`]).
//! A statement boundary is a `;`, or a `}` followed by a word that only starts a statement
//! (`let`, `if`, `for`, …) or an item. A tail is a unit only when it is one expression ending
//! with a block (`match x { … }`), which alone reads as an expression statement around the
//! same node. A partial tree with a top-level node that runs from one range into the next
//! (what the next range starts with continuing a statement that ended at a `}`) is thrown
//! away, though tree-sitter-rust, like rustc, ends such a statement at its `}`. As for
//! items, a syntax error in a statement that was not parsed goes unreported (a file's
//! "had syntax errors" note may name fewer files than a whole parse would).
//!
//! **The syntax guard** ([`changed_items_errors`]) cuts a changed file the same way: it
//! parses, in the result and where an error may be old in the original, only the statements,
//! members or items a change is in, when the text around them is cut as it was; and a change
//! that leaves a bracket open (a `}` swallowed by a `// comment`) is told by the lexer, not
//! by a parse whose recovery would run over the rest of the function.
//!
//! `runs_parse_alone_*` and `broad_patterns_find_through_the_cut_*` (tests) check the trees
//! and the matches against whole parses, on this repository and on a corpus.
//!
//! Only for a tree nobody keeps: a warm session's [`ParseCache`](super::ParseCache) keeps
//! whole trees, which serve every later pattern, and asks for one whenever it would keep it.

use std::ops::Range;
use std::sync::OnceLock;

use ast_grep_core::tree_sitter::{LanguageExt as _, StrDoc};
use ast_grep_core::{AstGrep, Matcher as _};
use ast_grep_language::SupportLang;
use tree_sitter::Point;

use super::Lang;
use super::matching::{Root, has_syntax_error, parse_tree};
use super::pattern::{LangOps, OpKind};
use super::prefilter::Anchors;
use super::rewrite::LineCounter;
use crate::changeset::Replaced;

/// Parsing only the anchored items pays when they are less than this share of the file.
const WORTH_IT: f64 = 0.8;

/// A cut planned in parts is parsed in at most this many (each parse copies the file's text).
pub(crate) const MAX_PARTS: usize = 16;

/// Files smaller than this are parsed whole: little is saved on them (half of the benchmark
/// corpus's files are this small, and hold 4% of its bytes), and a whole parse reports every
/// syntax error in them.
pub(crate) const SMALL_FILE: usize = 4 * 1024;

mod items;
mod lex;
#[cfg(test)]
mod tests;

#[cfg(test)]
use items::nested_units;
use items::{Lexed, Segment, item_boundaries};
pub(crate) use lex::{block_comment_end, quote_end, raw_string_end, string_end};

/// The ranges of a cold parse of `text` for the ops in `may_match`, whose anchors are
/// `anchors` (same order): `None` (the whole file) unless each of them is a pattern that
/// cannot match the whole file and has anchors. Worth parsing instead of the whole file when
/// the anchored items are less than most of it ([`Cut::worth_it`]); if they are many, in
/// parts ([`Cut::chunks`]).
pub(crate) fn cut_for(
    text: &str,
    lang: Lang,
    ops: &LangOps,
    may_match: &[usize],
    anchors: &[Option<Anchors>],
) -> Option<Cut> {
    if lang != Lang::Rust || text.len() < SMALL_FILE {
        return None;
    }
    let mut depth = Depth::Statements;
    let mut occurrences = Vec::new();
    for (&i, anchors) in may_match.iter().zip(anchors) {
        let OpKind::Pattern { pattern, .. } = &ops.ops[i].kind else {
            return None;
        };
        let kinds = pattern.potential_kinds()?;
        let may_be = |of: &[u16]| of.iter().any(|&k| kinds.contains(usize::from(k)));
        let [source_file, modules @ .., impls, traits] = nesting_kinds();
        if kinds.contains(usize::from(*source_file)) {
            return None;
        }
        let deepest = if may_be(modules) {
            Depth::Items
        } else if may_be(&[*impls, *traits]) {
            Depth::Modules
        } else if may_be(statement_nesting_kinds()) {
            Depth::Members
        } else {
            Depth::Statements
        };
        depth = depth.min(deepest);
        occurrences.extend(anchors.as_ref()?.occurrences());
    }
    anchored_items(text, occurrences, depth)
}

/// How far into an item [`anchored_items`] cuts, shallowest first.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Depth {
    /// Whole top-level items.
    Items,
    /// Items inside the bodies of `mod` and `extern` blocks too ([`Lexed::module_units`]):
    /// an `impl` or a `trait` whole.
    Modules,
    /// Items inside the bodies of `impl` and `trait` blocks too.
    Members,
    /// And the statements of functions' bodies.
    Statements,
}

/// The kinds of [`STATEMENT_NESTING_KINDS`].
fn statement_nesting_kinds() -> &'static [u16; STATEMENT_NESTING_KINDS.len()] {
    static KINDS: OnceLock<[u16; STATEMENT_NESTING_KINDS.len()]> = OnceLock::new();
    KINDS.get_or_init(|| {
        let lang = SupportLang::Rust.get_ts_language();
        STATEMENT_NESTING_KINDS.map(|name| lang.id_for_node_kind(name, true))
    })
}

/// The nodes around a statement of a function's body, below its item: a pattern that may be
/// one of these can match around a statement, so the cut stops at items for it. A block's
/// tail parsed alone reads as an expression statement (around the same node), so a pattern
/// that may be one is kept out too.
const STATEMENT_NESTING_KINDS: [&str; 3] = ["function_item", "block", "expression_statement"];

/// The kinds of the nodes that hold a top-level item's inner items: `source_file` first,
/// then [`NESTING_KINDS`].
fn nesting_kinds() -> &'static [u16; 1 + NESTING_KINDS.len()] {
    static KINDS: OnceLock<[u16; 1 + NESTING_KINDS.len()]> = OnceLock::new();
    KINDS.get_or_init(|| {
        let lang = SupportLang::Rust.get_ts_language();
        let mut kinds = [0; 1 + NESTING_KINDS.len()];
        for (kind, name) in kinds
            .iter_mut()
            .zip(["source_file"].iter().chain(NESTING_KINDS))
        {
            *kind = lang.id_for_node_kind(name, true);
        }
        kinds
    })
}

/// The nodes around an item inside a body, below the file: a pattern that may be one of
/// these can match around an inner item, so the cut stops at top-level items for it; or,
/// when it may be only one of the last two, an `impl` or a `trait`, at the items of modules
/// ([`Depth::Modules`]), which no `impl` or `trait` is around.
const NESTING_KINDS: &[&str] = &[
    "declaration_list",
    "mod_item",
    "foreign_mod_item",
    "impl_item",
    "trait_item",
];

/// The byte ranges of Rust `text` to parse to find every match that covers one of
/// `anchors` (`start..end` of literal occurrences), or `None` when the whole file should be
/// parsed: no anchor, or no cut. Deeper than [`Depth::Items`], an anchor inside the body of
/// an `impl`, `trait`, `mod` or `extern` block needs only the inner items around it
/// ([`Lexed::nested_units`]; at [`Depth::Modules`], the items of a module's body, an `impl`
/// whole: [`Lexed::module_units`]), and at [`Depth::Statements`] an anchor in a function's
/// body only the statements around it.
fn anchored_items(text: &str, mut anchors: Vec<Range<usize>>, depth: Depth) -> Option<Cut> {
    if anchors.is_empty() {
        return None;
    }
    let src = text.as_bytes();
    let bounds = item_boundaries(src)?;
    anchors.sort_unstable_by_key(|a| a.start);
    let mut units: Vec<Range<usize>> = Vec::with_capacity(anchors.len());
    let mut member_units: Vec<Range<usize>> = Vec::new();
    // The last top-level run looked into (anchors come in order), lexed once for the cut to
    // read its bodies and functions, with its inner units; and the statements of the last
    // function looked into.
    let mut inner: Option<(usize, Lexed<'_>, Vec<Segment>)> = None;
    let mut function: Option<(Range<usize>, Vec<Range<usize>>)> = None;
    for anchor in anchors {
        // The runs the occurrence touches: usually one.
        let first = bounds.partition_point(|&b| b <= anchor.start) - 1;
        let last = bounds.partition_point(|&b| b < anchor.end.max(anchor.start + 1)) - 1;
        let run = bounds[first]..bounds[(last + 1).min(bounds.len() - 1)];
        if depth == Depth::Items || first != last {
            units.push(run);
            continue;
        }
        let (lx, segments) = match &inner {
            Some((at, lx, segments)) if *at == first => (lx, segments),
            _ => {
                // A run that does not lex alone cannot be cut further: it is parsed whole.
                let Some(lx) = Lexed::new(src, run.clone()) else {
                    units.push(run);
                    continue;
                };
                let segments = if depth == Depth::Modules {
                    lx.module_units(run.clone())
                } else {
                    lx.nested_units(run.clone())
                };
                let (_, lx, segments) = inner.insert((first, lx, segments));
                (&*lx, &*segments)
            }
        };
        let i = segments.partition_point(|(segment, _)| segment.end <= anchor.start);
        let member = match segments.get(i) {
            Some((segment, unit)) if segment.start <= anchor.start && anchor.end <= unit.end => {
                Some(unit.clone())
            }
            _ => None,
        };
        let unit = member.clone().unwrap_or(run);
        if depth == Depth::Statements {
            // The statements around it, when the unit is a function and it lies in them.
            let statements = match &function {
                Some((at, statements)) if *at == unit => statements,
                _ => {
                    let statements = lx.statements(unit.clone());
                    &function.insert((unit.clone(), statements)).1
                }
            };
            let j = statements.partition_point(|s| s.end <= anchor.start);
            if let Some(statement) = statements.get(j)
                && statement.start <= anchor.start
                && anchor.end <= statement.end
            {
                units.push(statement.clone());
                continue;
            }
        }
        if let Some(member) = member {
            member_units.push(member);
        }
        units.push(unit);
    }
    // Units nest (an inner item, and the `mod` around it): one range for each overlap.
    units.sort_unstable_by_key(|u| u.start);
    let mut ranges: Vec<Range<usize>> = Vec::new();
    for unit in units {
        match ranges.last_mut() {
            Some(prev) if unit.start <= prev.end => prev.end = prev.end.max(unit.end),
            _ => ranges.push(unit),
        }
    }
    member_units.sort_unstable_by_key(|u| u.start);
    member_units.dedup();
    Some(Cut {
        ranges,
        inner: member_units,
    })
}

/// What of a Rust file to parse: whole top-level items, and items inside bodies.
#[derive(Debug)]
pub(crate) struct Cut {
    /// Sorted, disjoint byte ranges.
    pub ranges: Vec<Range<usize>>,
    /// The runs of items of a body among them (parsed as if at the top level), sorted.
    pub inner: Vec<Range<usize>>,
}

impl Cut {
    /// The bytes to parse.
    pub fn len(&self) -> usize {
        self.ranges.iter().map(ExactSizeIterator::len).sum()
    }

    /// Whether parsing only the cut pays against parsing the whole `text`.
    pub(crate) fn worth_it(&self, text: &str) -> bool {
        (self.len() as f64) < WORTH_IT * text.len() as f64
    }

    /// The cut in at most [`MAX_PARTS`] [`chunks`](Self::chunks) of `smallest` bytes or more
    /// (a part of each sixteenth of the cut, rounded up: every part but the last holds that
    /// much, so sixteen of them hold it all).
    pub(crate) fn parts(self, smallest: usize) -> Vec<Cut> {
        let bytes = smallest.max(self.len().div_ceil(MAX_PARTS)).max(1);
        self.chunks(bytes)
    }

    /// The cut in consecutive parts of about `bytes` each (a range longer than that is a part
    /// alone), each with the runs of `inner` inside it: parsed and matched one after the
    /// other, they find what the whole cut finds (each item parses the same whatever items
    /// stand around it, see the module's notes), while only one part's tree is held at a
    /// time. A tree costs some eighty times its text: a 260 KB file of test functions,
    /// parsed whole for `fn $F() { $$$B }`, held 20 MB.
    pub(crate) fn chunks(self, bytes: usize) -> Vec<Cut> {
        let mut parts: Vec<Cut> = Vec::new();
        let mut size = bytes;
        for range in self.ranges {
            if size >= bytes {
                parts.push(Cut {
                    ranges: Vec::new(),
                    inner: Vec::new(),
                });
                size = 0;
            }
            size += range.len();
            if let Some(part) = parts.last_mut() {
                part.ranges.push(range);
            }
        }
        let mut inner = self.inner.into_iter().peekable();
        for part in &mut parts {
            let end = part.ranges.last().map_or(0, |r| r.end);
            while let Some(run) = inner.next_if(|run| run.end <= end) {
                part.inner.push(run);
            }
        }
        parts
    }
}

/// Parses only the `cut` of `text` (from [`cut_for`]); the whole file instead when that
/// parse has a syntax error, or reads an item of a body as an expression statement or a
/// shebang (which a body cannot hold: the lexical cut lets that happen only in rare cases,
/// `a::m!(x);` after a `}`, `#! [attr]`). `None` only when
/// tree-sitter gives up, as [`super::matching::parse`].
pub(crate) fn parse_ranges(text: &str, cut: &Cut) -> Option<Root> {
    parse_cut(text, cut).or_else(|| super::matching::parse(text, Lang::Rust))
}

/// The tree of only the `cut` of `text`, `None` where [`parse_ranges`] would parse the whole
/// file instead (a syntax error, a body's item read as a statement or a shebang, or
/// tree-sitter giving up).
pub(crate) fn parse_cut(text: &str, cut: &Cut) -> Option<Root> {
    let tree = parse_apart(text, &cut.ranges)?;
    let root = AstGrep::doc(StrDoc {
        src: text.to_owned(),
        lang: SupportLang::Rust,
        tree,
    });
    (!(has_syntax_error(&root) || reads_a_body_as_a_file(root.root().get_inner_node(), &cut.inner)))
        .then_some(root)
}

/// Whether a top-level node of `node` runs on from one of the (sorted) `ranges` into the
/// next: what the next range starts with continued what the range ended with, as it did not
/// in the file. In valid Rust nothing that starts a range continues a statement ending at a
/// block's `}` (tree-sitter-rust ends it there, as rustc does), nor an item; but tree-sitter
/// reads some text rustc rejects (`m! { a } (b);` as one call).
fn spans_two_ranges(node: tree_sitter::Node<'_>, ranges: &[Range<usize>]) -> bool {
    let mut cursor = node.walk();
    node.children(&mut cursor).any(|n| {
        let i = ranges.partition_point(|r| r.end <= n.start_byte());
        ranges.get(i).is_some_and(|r| n.end_byte() > r.end)
    })
}

/// Whether a top-level node of `root` that starts in one of the `inner` runs (of a body's
/// items) is an expression statement, or a shebang (which tree-sitter reads in `#! [attr]`,
/// an inner attribute, at the start of a parse): what a body cannot hold. (At the top level
/// of a file, `m!(x);` is one.)
fn reads_a_body_as_a_file(node: tree_sitter::Node<'_>, inner: &[Range<usize>]) -> bool {
    if inner.is_empty() {
        return false;
    }
    static KINDS: OnceLock<[u16; 2]> = OnceLock::new();
    let kinds = KINDS.get_or_init(|| {
        let lang = SupportLang::Rust.get_ts_language();
        ["expression_statement", "shebang"].map(|k| lang.id_for_node_kind(k, true))
    });
    let mut cursor = node.walk();
    node.children(&mut cursor).any(|n| {
        kinds.contains(&n.kind_id()) && {
            let i = inner.partition_point(|r| r.end <= n.start_byte());
            inner.get(i).is_some_and(|r| r.start <= n.start_byte())
        }
    })
}

/// For the syntax guard: the syntax errors of the top-level items of Rust `after` that are
/// not, text for text, items of `before` (each parsed alone), and when there are any, those of
/// the items of `before` that are not items of `after`. `None` when that cannot be told
/// cheaply: text the lexer cannot cut, or changed items that are most of the file; the caller
/// parses both whole. (The guard asks only of a file of [`SMALL_FILE`] or more, or of a
/// smaller one whose original is known to parse, where no error in what changed means none
/// in the file.)
///
/// Sound for the same reason as [`parse_ranges`]: each top-level item parses the same whatever
/// stands around it, so an item the change did not touch has the errors (or none) it had, and
/// a change introduces an error only in an item it touched: comparing the touched items'
/// errors, before and after, is comparing the files'.
///
/// `replaced` says where the change replaced text (in order). It matters when `after` cannot
/// be cut (a change that leaves a bracket open, as a replacement that ends in a `// comment`
/// before the `}` it keeps): see [`broken_groups_errors`]. `may_be_old` says whether any of
/// the errors found in `after` could have been in `before` too: when none could, `before` is
/// not parsed (its errors are left empty).
pub(crate) fn changed_items_errors(
    before: &str,
    after: &str,
    replaced: &[Replaced],
    may_be_old: &dyn Fn(&[super::SyntaxErrorNode]) -> bool,
) -> Option<ChangedItemsErrors> {
    let Some(lexed) = LexedFile::new(after) else {
        return broken_groups_errors(before, after, replaced, may_be_old);
    };
    // A change inside statements or methods: only the runs around it are parsed, in the
    // result and, for errors that may be old, in the original. A whole item in error recovery
    // can cost a hundred times its clean parse (a test function of 200 KB).
    if let Some(found) = changed_units_errors(before, &lexed, replaced, may_be_old) {
        return Some(found);
    }
    let after_items = lexed.items;
    let before_items = items(before).unwrap_or_default();
    let after_ranges = touched(&after_items, &before_items)?;
    if after_ranges.is_empty() {
        // Only items the file already had, reordered or removed: nothing new to parse.
        return Some(ChangedItemsErrors::default());
    }
    let errors = |text: &str, ranges: &[Range<usize>]| {
        parse_apart(text, ranges).map(|tree| super::matching::errors_under(tree.root_node(), text))
    };
    let after_errors = errors(after, &after_ranges)?;
    if after_errors.is_empty() {
        return Some(ChangedItemsErrors::default());
    }
    let before_errors = match touched(&before_items, &after_items) {
        _ if !may_be_old(&after_errors) => Vec::new(),
        Some(ranges) if ranges.is_empty() => Vec::new(),
        Some(ranges) => errors(before, &ranges)?,
        None if before.is_empty() => Vec::new(),
        // The original's changed items are most of it: all of it.
        None => super::matching::syntax_errors(before, Lang::Rust),
    };
    Some(ChangedItemsErrors {
        after: after_errors,
        before: before_errors,
    })
}

/// For a result the lexer cannot cut, whose original it can: the errors of each run of the
/// original's top-level items the change touched ([`touched_groups`]), its result parsed
/// alone, and of the original's run where the result's has any that `may_be_old`. `None`
/// when none of them
/// shows an error (the lexer saw what tree-sitter did not), or the original cannot be cut.
///
/// Where a result does not lex into items, a whole parse's error recovery can span the rest
/// of the file and cost ten times a clean parse (a `}` swallowed by a comment in a 200 KB
/// file of tests: 150 ms); alone, a run's recovery stays in it. Each run the lexer closes
/// parses alone as in the file (as [`parse_ranges`]); one it leaves open (the file's break
/// is in it: the original lexed whole) has its errors reported where its own text shows
/// them, at the change, rather than where a whole parse's recovery ends.
fn broken_groups_errors(
    before: &str,
    after: &str,
    replaced: &[Replaced],
    may_be_old: &dyn Fn(&[super::SyntaxErrorNode]) -> bool,
) -> Option<ChangedItemsErrors> {
    let bounds = item_boundaries(before.as_bytes())?;
    let (was, now): (Vec<_>, Vec<_>) = touched_groups(&bounds, replaced).into_iter().unzip();
    // Each run's points from one pass over each text (not one per run).
    let (was, now) = (with_points(before, &was), with_points(after, &now));
    let errors = |text: &str, range: tree_sitter::Range| {
        parse_in(text, &[range]).map(|tree| super::matching::errors_under(tree.root_node(), text))
    };
    let mut found = ChangedItemsErrors::default();
    // With several runs, brackets can move from one to another (a `}` deleted in one, added
    // in the next) and the file still balance, while each run alone does not: then the runs
    // alone say nothing of the file. Unless its brackets do not balance either.
    let unbalanced = lex::unbalanced(after.as_bytes(), 0..after.len()).is_some();
    if was.len() > 1 && !unbalanced {
        return None;
    }
    for (was, now) in was.into_iter().zip(now) {
        // Brackets the change left open (a `}` swallowed by a `// comment`) or closed twice,
        // in a run whose brackets balanced: the error, told without a parse, whose recovery
        // over the rest of a large function is what costs (200 ms for 200 KB).
        if unbalanced
            && let Some(error) = unbalanced_error(after, now.start_byte..now.end_byte)
            && lex::unbalanced(before.as_bytes(), was.start_byte..was.end_byte).is_none()
        {
            found.after.push(error);
            continue;
        }
        let after_errors = errors(after, now)?;
        if after_errors.is_empty() {
            continue;
        }
        if may_be_old(&after_errors) {
            found.before.extend(errors(before, was)?);
        }
        found.after.extend(after_errors);
    }
    (!found.after.is_empty()).then_some(found)
}

/// [`lex::unbalanced`] of `span` of Rust `text`, as the syntax error a parse reports: an
/// unexpected closer, or a missing one.
fn unbalanced_error(text: &str, span: Range<usize>) -> Option<super::SyntaxErrorNode> {
    Some(match lex::unbalanced(text.as_bytes(), span)? {
        lex::Unbalanced::Unexpected(token) => super::SyntaxErrorNode {
            missing: false,
            text: text[token.clone()].to_owned(),
            byte: token.start,
            end: token.end,
            leaves: vec![token],
        },
        lex::Unbalanced::Missing { at, closer } => super::SyntaxErrorNode {
            missing: true,
            text: closer.to_owned(),
            byte: at,
            end: at,
            leaves: Vec::new(),
        },
    })
}

/// The runs of items (between `bounds`, as [`item_boundaries`] gives them) that `replaced`
/// touches, each as its range in the original and in the result. A replacement joins the
/// items it overlaps into one run, an insertion the items on both sides of its place; runs
/// no replacement joins stay apart.
fn touched_groups(bounds: &[usize], replaced: &[Replaced]) -> Vec<(Range<usize>, Range<usize>)> {
    let Some(last) = bounds.len().checked_sub(2) else {
        return Vec::new();
    };
    // Item `k` is `bounds[k]..bounds[k + 1]`.
    let mut runs: Vec<(usize, usize)> = Vec::new();
    for r in replaced {
        let Range { start, end } = r.before;
        let (first, through) = if start == end {
            (
                bounds[1..].partition_point(|&b| b < start),
                bounds[..=last].partition_point(|&b| b <= start),
            )
        } else {
            (
                bounds[1..].partition_point(|&b| b <= start),
                bounds[..=last].partition_point(|&b| b < end),
            )
        };
        let (first, through) = (
            first.min(last),
            through.saturating_sub(1).min(last).max(first),
        );
        match runs.last_mut() {
            Some((_, j)) if *j >= first => *j = (*j).max(through),
            _ => runs.push((first, through)),
        }
    }
    // Where a place of the original is in the result: shifted by what the replacements
    // before it added or removed (a run never starts or ends inside one).
    let mut shift = 0isize;
    let mut next = 0usize;
    let mut moved = |at: usize, inclusive: bool| {
        while let Some(r) = replaced.get(next) {
            let before =
                r.before.end < at || (r.before.end == at && (!r.before.is_empty() || inclusive));
            if !before {
                break;
            }
            shift += r.after_len as isize - r.before.len() as isize;
            next += 1;
        }
        at.saturating_add_signed(shift)
    };
    runs.into_iter()
        .map(|(i, j)| {
            let was = bounds[i]..bounds[j + 1];
            let start = moved(was.start, false);
            let end = moved(was.end, true);
            (was, start..end)
        })
        .collect()
}

/// Each replacement's place in the result, `(start, end, shift)`: `shift` is what it and the
/// replacements before it added (or, negative, removed), so that a place of the result past
/// it is that much further than in the original. `None` when `replaced` do not fit.
fn placed(replaced: &[Replaced]) -> Option<Vec<(usize, usize, isize)>> {
    let mut shift = 0isize;
    replaced
        .iter()
        .map(|r| {
            let start = r.before.start.checked_add_signed(shift)?;
            shift += r.after_len as isize - r.before.len() as isize;
            Some((start, start.checked_add(r.after_len)?, shift))
        })
        .collect()
}

/// Whether `at` is strictly inside one of the sorted, disjoint `runs`.
fn strictly_inside(runs: &[Range<usize>], at: usize) -> bool {
    let i = runs.partition_point(|r| r.end <= at);
    runs.get(i).is_some_and(|r| r.start < at)
}

/// The smallest runs of `after` (of Rust that lexes into the top-level `items`) that hold
/// everything `replaced` put there: for a replacement inside the statements of a function's
/// body, those statements ([`Lexed::statements`]); else, inside a member of an `impl`,
/// `trait`, `mod` or `extern` body, the smallest member's unit that holds it
/// ([`holding_unit`], an inner run of the cut); else its whole top-level item (or items).
/// `None` when the replacements do not fit the text (not the result of `replaced`).
///
/// The text outside these runs is the original's, and each run parses alone as in the file
/// (the cut's premise, which `runs_parse_alone_*` check): so when the runs parse without an
/// error, the change introduces none, and when they parse with errors, those are the
/// file's errors at the change.
fn changed_units(after: &LexedFile<'_>, replaced: &[Replaced]) -> Option<ChangedUnits> {
    let (items, lx) = (&after.items, &after.lx);
    let mut runs: Vec<(Range<usize>, bool)> = Vec::new();
    let mut bodies: Vec<Range<usize>> = Vec::new();
    // The inner units of the last item looked into.
    let mut segments: Option<(usize, Vec<Segment>)> = None;
    let mut statements: Option<(Range<usize>, Vec<Range<usize>>)> = None;
    for (start, end, _) in placed(replaced)? {
        if end > after.text.len() {
            return None;
        }
        let first = items
            .partition_point(|(item, _)| item.end <= start)
            .min(items.len().checked_sub(1)?);
        let last = items.partition_point(|(item, _)| item.end < end).max(first);
        let item = items[first].0.clone();
        if last != first {
            runs.push((item.start..items.get(last)?.0.end, false));
            continue;
        }
        // What was deleted where two items now meet: both.
        if start == end && item.start == start && first > 0 {
            runs.push((items[first - 1].0.start..item.end, false));
            continue;
        }
        if segments.as_ref().is_none_or(|(k, _)| *k != first) {
            segments = Some((first, lx.nested_units(item.clone())));
        }
        let (_, of_item) = segments.as_ref()?;
        let unit = holding_unit(of_item, start, end).unwrap_or_else(|| item.clone());
        let inner = unit != item;
        // Inside the unit, when it is a function: the statements holding the replacement.
        if statements.as_ref().is_none_or(|(f, _)| *f != unit) {
            statements = Some((unit.clone(), lx.statements(unit.clone())));
        }
        let (_, of_unit) = statements.as_ref()?;
        if let Some(run) = contiguous(of_unit.iter().filter(|s| touches(s, start, end)))
            && run.start <= start
            && end <= run.end
        {
            runs.push((run, false));
            bodies.push(unit);
            continue;
        }
        runs.push((unit, inner));
    }
    // Outer runs first, then the runs inside them dropped.
    runs.sort_by(|(a, _), (b, _)| a.start.cmp(&b.start).then(b.end.cmp(&a.end)));
    let mut cut = Cut {
        ranges: Vec::new(),
        inner: Vec::new(),
    };
    for (run, inner) in runs {
        match cut.ranges.last_mut() {
            Some(kept) if run.end <= kept.end => continue,
            // Overlapping runs of whole items (a unit lies in one item): joined.
            Some(kept) if run.start < kept.end => {
                if cut.inner.last() == Some(&*kept) {
                    cut.inner.pop();
                }
                kept.end = run.end;
                continue;
            }
            _ => {}
        }
        if inner {
            cut.inner.push(run.clone());
        }
        cut.ranges.push(run);
    }
    bodies.sort_unstable_by_key(|b| b.start);
    bodies.dedup();
    Some(ChangedUnits { cut, bodies })
}

/// What [`changed_units`] gives: the runs to parse, and the functions in whose bodies some
/// of them are statements.
#[derive(Debug)]
struct ChangedUnits {
    cut: Cut,
    /// Sorted.
    bodies: Vec<Range<usize>>,
}

/// The smallest unit of an item's `segments` ([`Lexed::nested_units`]) that holds all of
/// `start..end` of the result, a replacement's text, and every unit whose segments that text
/// touches (an empty one, a deletion: both units it lies between). `None` when none does:
/// the text reaches into what no segment covers (the item's own header or braces, a macro
/// call among its members), or into two units no other holds.
///
/// A unit nests in the units around it (an `impl`'s method in the `impl`, inside a `mod`):
/// a replacement of a whole `impl` touches the segments of its methods too, and needs the
/// `impl`, not the item around it. Nor is one unit enough when the text reaches out of it:
/// what lies outside the runs is not parsed.
fn holding_unit(segments: &[Segment], start: usize, end: usize) -> Option<Range<usize>> {
    let within = |outer: &Range<usize>, inner: &Range<usize>| {
        outer.start <= inner.start && inner.end <= outer.end
    };
    let touched: Vec<&Range<usize>> = segments
        .iter()
        .filter(|(segment, _)| touches(segment, start, end))
        .map(|(_, unit)| unit)
        .collect();
    segments
        .iter()
        .map(|(_, unit)| unit)
        .filter(|unit| within(unit, &(start..end)) && touched.iter().all(|t| within(unit, t)))
        .min_by_key(|unit| unit.len())
        .cloned()
}

/// Whether `piece` holds the text a replacement put at `start..end` of the result, or, for
/// an empty one (a deletion), touches its place.
fn touches(piece: &Range<usize>, start: usize, end: usize) -> bool {
    if start == end {
        piece.start <= start && start <= piece.end
    } else {
        piece.start < end && start < piece.end
    }
}

/// The run from the first of `pieces` to the last, when each starts where the one before it
/// ends.
fn contiguous<'a>(mut pieces: impl Iterator<Item = &'a Range<usize>>) -> Option<Range<usize>> {
    let mut run = pieces.next()?.clone();
    for piece in pieces {
        if piece.start != run.end {
            return None;
        }
        run.end = piece.end;
    }
    Some(run)
}

/// Where the runs of `changed` (in `after`, whose top-level `items` are given) are in
/// `before`, when `before` is cut outside them where `after` is: the same item boundaries
/// at the top level, in each item that holds a smaller run the same member boundaries
/// ([`Lexed::nested_units`]), and in each function that holds statements among the runs the same
/// statement boundaries ([`Lexed::statement_boundaries`]), once mapped back through
/// `replaced` (which all lie inside the runs); `None` when it is not. The text there is the
/// same; this makes sure it is read the same way too: a change that opens or closes a
/// comment, a string or an item's continuation (`Foo { a }` losing `.with(b);`) moves
/// boundaries outside the runs.
fn same_cut_outside(
    before: &str,
    after: &LexedFile<'_>,
    changed: &ChangedUnits,
    replaced: &[Replaced],
) -> Option<Vec<Range<usize>>> {
    let (items, lx) = (&after.items, &after.lx);
    let cut = &changed.cut;
    let moved = placed(replaced)?;
    // A place of `after` outside the runs (or at a run's start or end) in `before`: shifted
    // back by the replacements before it (those are sorted, so a binary search finds them).
    let back = |at: usize, starts_a_run: bool| {
        let before_it = moved.partition_point(|&(start, end, _)| {
            end < at || (end == at && (start < at || !starts_a_run))
        });
        let shift = before_it.checked_sub(1).map_or(0, |i| moved[i].2);
        at.checked_add_signed(-shift)
    };
    let outside = |bounds: &mut Vec<usize>, runs: &[Range<usize>]| {
        bounds.retain(|&b| !strictly_inside(runs, b));
    };
    // Both ends of a run that is all new text (an added statement) are one place of the
    // original: kept once.
    let mapped = |bounds: Vec<usize>| -> Option<Vec<usize>> {
        let mut mapped = bounds
            .into_iter()
            .map(|b| {
                let i = cut.ranges.partition_point(|r| r.end < b);
                let run = cut.ranges.get(i);
                let ends_a_run = run.is_some_and(|r| r.end == b);
                let starts_a_run = cut.ranges[i..].iter().take(2).any(|r| r.start == b);
                back(b, !ends_a_run && starts_a_run)
            })
            .collect::<Option<Vec<usize>>>()?;
        mapped.dedup();
        Some(mapped)
    };
    let originals: Vec<Range<usize>> = cut
        .ranges
        .iter()
        .map(|r| Some(back(r.start, true)?..back(r.end, false)?))
        .collect::<Option<_>>()?;
    let was = Lexed::file(before.as_bytes())?;
    let mut before_bounds = was.item_boundaries()?;
    let mut after_bounds: Vec<usize> = items.iter().map(|(r, _)| r.start).collect();
    after_bounds.push(after.text.len());
    outside(&mut before_bounds, &originals);
    outside(&mut after_bounds, &cut.ranges);
    if mapped(after_bounds)? != before_bounds {
        return None;
    }
    // The runs inside `span` of `after`, and where they are in `before`.
    let runs_in = |span: &Range<usize>| -> (Vec<Range<usize>>, Vec<Range<usize>>) {
        cut.ranges
            .iter()
            .zip(&originals)
            .filter(|(r, _)| span.start <= r.start && r.end <= span.end && *r != span)
            .map(|(r, o)| (r.clone(), o.clone()))
            .unzip()
    };
    // Inside each item that holds an inner run: its members' boundaries.
    let member_bounds = |lx: &Lexed<'_>, item: Range<usize>| {
        let mut bounds: Vec<usize> = lx
            .nested_units(item)
            .into_iter()
            .flat_map(|(segment, unit)| [segment.start, segment.end, unit.start, unit.end])
            .collect();
        bounds.sort_unstable();
        bounds.dedup();
        bounds
    };
    for (item, _) in items.iter() {
        let (inner, inner_originals) = runs_in(item);
        if inner.is_empty() {
            continue;
        }
        let span = back(item.start, false)?..back(item.end, false)?;
        let mut was_bounds = member_bounds(&was, span);
        let mut now = member_bounds(lx, item.clone());
        outside(&mut was_bounds, &inner_originals);
        outside(&mut now, &inner);
        if mapped(now)? != was_bounds {
            return None;
        }
    }
    // Inside each function that holds statements among the runs: its statements' boundaries.
    for body in &changed.bodies {
        let (inner, inner_originals) = runs_in(body);
        let span = back(body.start, false)?..back(body.end, false)?;
        let mut was_bounds = was.statement_boundaries(span.clone())?;
        // And each run was statements that parse alone in the original too (not, say, the
        // tail `d` a statement is now added after): else its errors alone are not the
        // original's.
        let pieces = was.statements(span);
        let alone = |o: &Range<usize>| {
            let holding = pieces.iter().filter(|p| o.start < p.end && p.start < o.end);
            o.is_empty() || contiguous(holding).as_ref() == Some(o)
        };
        if !inner_originals.iter().all(alone) {
            return None;
        }
        let mut now = lx.statement_boundaries(body.clone())?;
        outside(&mut was_bounds, &inner_originals);
        outside(&mut now, &inner);
        if mapped(now)? != was_bounds {
            return None;
        }
    }
    Some(originals)
}

/// The errors of the runs [`changed_units`] gives (each parsed alone), when the cut around
/// them is the original's ([`same_cut_outside`]), and where there are any that `may_be_old`,
/// those of the same runs of `before`. `None` when that cannot be told so: the caller
/// compares whole items.
fn changed_units_errors(
    before: &str,
    after: &LexedFile<'_>,
    replaced: &[Replaced],
    may_be_old: &dyn Fn(&[super::SyntaxErrorNode]) -> bool,
) -> Option<ChangedItemsErrors> {
    let changed = changed_units(after, replaced)?;
    let originals = same_cut_outside(before, after, &changed, replaced)?;
    let after_errors = runs_errors(after.text, &changed.cut)?;
    if after_errors.is_empty() || !may_be_old(&after_errors) {
        return Some(ChangedItemsErrors {
            after: after_errors,
            before: Vec::new(),
        });
    }
    let inner = changed
        .cut
        .ranges
        .iter()
        .zip(&originals)
        .filter(|(r, _)| changed.cut.inner.contains(r))
        .map(|(_, o)| o.clone())
        .collect();
    let before_errors = runs_errors(
        before,
        &Cut {
            ranges: originals,
            inner,
        },
    )?;
    Some(ChangedItemsErrors {
        after: after_errors,
        before: before_errors,
    })
}

/// The syntax errors of the runs of `cut` of `text`, parsed apart; `None` when an inner run
/// reads as top-level statements, or a node runs from one run into the next (either could
/// hide an error the file has, or show one it has not).
fn runs_errors(text: &str, cut: &Cut) -> Option<Vec<super::SyntaxErrorNode>> {
    let tree = parse_apart(text, &cut.ranges)?;
    let root = tree.root_node();
    (!reads_a_body_as_a_file(root, &cut.inner)).then(|| super::matching::errors_under(root, text))
}

/// For the syntax guard, without lexing or parsing `after` again: whether a partial tree of
/// `before` (`was`, parsed over `ranges` and clean, as [`parse_ranges`] keeps it), edited where
/// `after` differs (inside the ranges) and parsed again over `ranges_now` (`now`, clean too;
/// `ranges_now[i]` is what `ranges[i]` became), reads as a whole parse of `after` reads those
/// ranges. Then the change introduces no syntax error in them, and the rest of the file, the
/// original's text, reads as it did.
///
/// It does when, as [`parse_ranges`] asks of `was`, each top-level node of `now` lies in one
/// range, none is a shebang inside the file and none in an `inner_now` run (of a body's items)
/// is an expression statement; and when each range still starts and ends a unit (an item, a
/// member, statements) as in `before`, the cut's premise being that such a run parses alone
/// as in place ([`item_boundaries`], [`Lexed::statements`]). A unit ends after its last token,
/// `;` or `}` (or, at the end of a body, what trails it): when that token and what trails it
/// are what they were, the text after the range, the original's, is cut and read as before.
/// A unit starts after a `;` or a `{`, whatever follows; after a `}`, only where an item (or
/// statement) starts: the range must start with the token it started with, or with a word
/// that starts an item.
pub(crate) fn edited_cut_holds(
    before: &str,
    after: &str,
    was: &tree_sitter::Tree,
    now: &tree_sitter::Tree,
    ranges: &[Range<usize>],
    ranges_now: &[Range<usize>],
    inner_now: &[Range<usize>],
) -> bool {
    let (root_was, root) = (was.root_node(), now.root_node());
    if ranges.len() != ranges_now.len()
        || spans_two_ranges(root, ranges_now)
        || reads_a_shebang_inside(root)
        || reads_a_body_as_a_file(root, inner_now)
    {
        return false;
    }
    fn text<'s>(src: &'s str, node: tree_sitter::Node<'_>) -> &'s [u8] {
        &src.as_bytes()[node.byte_range()]
    }
    ranges.iter().zip(ranges_now).all(|(w, n)| {
        let ends_as_before = w.end >= before.len()
            || match (last_leaf(root_was, w), last_leaf(root, n)) {
                (Some(a), Some(b)) => {
                    a.kind_id() == b.kind_id()
                        && before.as_bytes().get(a.start_byte()..w.end)
                            == after.as_bytes().get(b.start_byte()..n.end)
                }
                _ => false,
            };
        let starts_as_before = match w.start.checked_sub(1).map(|i| before.as_bytes()[i]) {
            None | Some(b';' | b'{') => true,
            Some(b'}') => match (first_token(root_was, w), first_token(root, n)) {
                (Some(a), Some(b)) => {
                    let now = text(after, b);
                    now == text(before, a) || now == b"#" || items::ITEM_STARTS.contains(&now)
                }
                _ => false,
            },
            Some(_) => false,
        };
        ends_as_before && starts_as_before
    })
}

/// Whether each of `spans` of Rust `text` lexes alone (from a token's start), with its
/// brackets (outside literals and comments) balanced: a replacement of a whole node whose
/// text does leaves the brackets around it as they were, however else it breaks the file.
pub(crate) fn lexes_balanced(text: &str, spans: &[Range<usize>]) -> bool {
    let src = text.as_bytes();
    let mut open: Vec<u8> = Vec::new();
    spans.iter().all(|span| {
        open.clear();
        lex::Lexemes::new(src, span.clone()).all(|token| {
            let Ok(token) = token else { return false };
            match src[token.start] {
                b @ (b'(' | b'[' | b'{') => open.push(b),
                b')' => return open.pop() == Some(b'('),
                b']' => return open.pop() == Some(b'['),
                b'}' => return open.pop() == Some(b'{'),
                _ => {}
            }
            true
        }) && open.is_empty()
    })
}

/// The first token of the top-level nodes of `root` in `range` (comments skipped).
fn first_token<'t>(
    root: tree_sitter::Node<'t>,
    range: &Range<usize>,
) -> Option<tree_sitter::Node<'t>> {
    let mut node = root.first_child_for_byte(range.start)?;
    while node.is_extra() {
        node = node.next_sibling()?;
    }
    if node.start_byte() >= range.end {
        return None;
    }
    while node.child_count() > 0 {
        let mut cursor = node.walk();
        node = node.children(&mut cursor).find(|c| !c.is_extra())?;
    }
    Some(node)
}

/// The last leaf of the top-level nodes of `root` in `range` (a comment included).
fn last_leaf<'t>(
    root: tree_sitter::Node<'t>,
    range: &Range<usize>,
) -> Option<tree_sitter::Node<'t>> {
    let mut node = match root.first_child_for_byte(range.end) {
        Some(after) => after.prev_sibling()?,
        None => root.child(root.child_count().checked_sub(1)?)?,
    };
    if node.start_byte() < range.start || node.end_byte() > range.end {
        return None;
    }
    while let Some(last) = node.child_count().checked_sub(1) {
        node = node.child(last)?;
    }
    Some(node)
}

/// What [`changed_items_errors`] found: the errors of the changed items after the change and,
/// when there are any, before it.
#[derive(Debug, Default)]
pub(crate) struct ChangedItemsErrors {
    pub after: Vec<super::SyntaxErrorNode>,
    pub before: Vec<super::SyntaxErrorNode>,
}

/// The top-level items of Rust `text`, as (byte range, text).
fn items(text: &str) -> Option<Vec<(Range<usize>, &str)>> {
    Some(items_between(text, &item_boundaries(text.as_bytes())?))
}

/// The items between `bounds` of `text`, as (byte range, text).
fn items_between<'a>(text: &'a str, bounds: &[usize]) -> Vec<(Range<usize>, &'a str)> {
    bounds
        .windows(2)
        .map(|w| (w[0]..w[1], &text[w[0]..w[1]]))
        .collect()
}

/// A changed Rust file as the syntax guard reads it: lexed once, and cut into its top-level
/// items; each later pass over a part of it (an item's members, a function's statements)
/// reads the same tokens.
struct LexedFile<'a> {
    text: &'a str,
    lx: Lexed<'a>,
    items: Vec<(Range<usize>, &'a str)>,
}

impl<'a> LexedFile<'a> {
    /// `None` when `text` does not lex into items.
    fn new(text: &'a str) -> Option<Self> {
        let lx = Lexed::file(text.as_bytes())?;
        let items = items_between(text, &lx.item_boundaries()?);
        Some(LexedFile { text, lx, items })
    }
}

/// The ranges (adjacent ones joined) of the items of `of` that are not, text for text, items
/// of `other`; `None` when they are most of the file, so that parsing them would not pay.
fn touched(
    of: &[(Range<usize>, &str)],
    other: &[(Range<usize>, &str)],
) -> Option<Vec<Range<usize>>> {
    let kept: std::collections::HashSet<&str> = other.iter().map(|(_, t)| *t).collect();
    let mut ranges: Vec<Range<usize>> = Vec::new();
    for (range, text) in of {
        if kept.contains(text) {
            continue;
        }
        match ranges.last_mut() {
            Some(prev) if prev.end == range.start => prev.end = range.end,
            _ => ranges.push(range.clone()),
        }
    }
    let len = of.last().map_or(0, |(r, _)| r.end);
    let covered: usize = ranges.iter().map(ExactSizeIterator::len).sum();
    ((covered as f64) < WORTH_IT * len as f64).then_some(ranges)
}

/// [`parse_included`], or `None` when a node of it runs from one of the ranges into the next
/// ([`spans_two_ranges`]) or a range reads as a shebang ([`reads_a_shebang_inside`]): such a
/// tree is not what the file's parse has there, and can hide an error the file has. Every
/// use of a tree of several ranges goes through here.
fn parse_apart(text: &str, ranges: &[Range<usize>]) -> Option<tree_sitter::Tree> {
    parse_included(text, ranges).filter(|tree| {
        let root = tree.root_node();
        !spans_two_ranges(root, ranges) && !reads_a_shebang_inside(root)
    })
}

/// Whether a top-level node of `root` is a shebang that does not start the file: what
/// tree-sitter reads in a range that starts with `#!` (`#! x` after an item's `}`), where a
/// whole parse has an error.
fn reads_a_shebang_inside(root: tree_sitter::Node<'_>) -> bool {
    static SHEBANG: OnceLock<u16> = OnceLock::new();
    let shebang = *SHEBANG.get_or_init(|| {
        SupportLang::Rust
            .get_ts_language()
            .id_for_node_kind("shebang", true)
    });
    let mut cursor = root.walk();
    root.children(&mut cursor)
        .any(|n| n.kind_id() == shebang && n.start_byte() > 0)
}

/// tree-sitter's parse of only `ranges` of Rust `text`, with this thread's parser.
fn parse_included(text: &str, ranges: &[Range<usize>]) -> Option<tree_sitter::Tree> {
    parse_in(text, &with_points(text, ranges))
}

/// tree-sitter's parse of only the `included` ranges of Rust `text`, with this thread's parser.
fn parse_in(text: &str, included: &[tree_sitter::Range]) -> Option<tree_sitter::Tree> {
    parse_tree(Lang::Rust, text, included, None)
}

/// tree-sitter's ranges carry line and column (in bytes) besides byte offsets.
pub(crate) fn with_points(src: &str, ranges: &[Range<usize>]) -> Vec<tree_sitter::Range> {
    let mut lines = LineCounter::new(src);
    let mut point = |offset: usize| {
        let (row, column) = lines.point(offset);
        Point::new(row, column)
    };
    ranges
        .iter()
        .map(|r| tree_sitter::Range {
            start_byte: r.start,
            start_point: point(r.start),
            end_byte: r.end,
            end_point: point(r.end),
        })
        .collect()
}
