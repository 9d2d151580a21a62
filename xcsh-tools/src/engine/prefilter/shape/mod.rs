//! The shape of a pattern, matched on a file's tokens before any parse.
//!
//! A pattern's literals say which *words* a match holds; its shape says how they stand.
//! `fn $F() { $$$B }` holds only `fn`, but a match reads `fn`, one node, `(`, `)` with nothing
//! but punctuation or keywords between them, and then `{`: most functions take parameters, so
//! most `fn` items cannot match. A [`Shape`] is compiled from the pattern's tree
//! ([`PatternNode`]) into a flat skeleton of [`El`]ements and the [`Gap`]s between them, and
//! matched on the tokens of a Rust lexer ([`lexer`]); the places where it may match are the
//! file's anchors ([`super::Anchors`]): a file without one is not parsed, and a partial parse
//! covers only the items that hold one.
//!
//! Everything here follows ast-grep 0.51.1's smart matching (`match_tree/match_node.rs`), read
//! so as to allow *more* than it does, never less:
//!
//! * A terminal of the pattern matches a token of the same kind (unnamed: keywords,
//!   punctuation) or of the same text (named: identifiers, literals). Before a terminal the
//!   matcher steps over unnamed nodes and comments of the candidate: a [`Gap::skip`] of
//!   punctuation, brackets and the grammar's anonymous words. Before a metavariable or an
//!   internal node it steps over comments only (the lexer drops those).
//! * After a node's last pattern child, the candidate may have more children (smart matching
//!   allows trailing ones, `Some(v) if ok =>` against `Some(v) =>`): a [`Gap::loose`], any
//!   balanced run, unless the node is closed by the partner of its opening bracket.
//! * A single metavariable `$X` is one node: a non-empty balanced run of tokens. A single
//!   node holds a `;` outside brackets only as its last token (statements and items end with
//!   one; everything that holds several is bracketed), and the keyword `for` outside brackets
//!   and not before `<` (a higher-ranked bound) only with a `{` after it (a `for` loop's
//!   block, an `impl … for …`'s body): so `impl $T { … }` does not reach over `Foo for Bar`.
//!   A braced group followed by a word that can only begin an item or a statement (`fn`,
//!   `impl`, `let`, `pub`, `#`, …) ends it too: two items or statements are never one node.
//!   (The same holds for the trailing children of a node.)
//! * `$$$X` is any balanced run; the unnamed terminals right after it are not required (the
//!   matcher skips them), except the partner of a bracket that opened the node.
//! * A string, char, lifetime or label node is one literal token.
//! * An opaque token (see [`lexer`]) where an element should be ends the attempt in favour of
//!   the file when the element's text is inside it (`.` in `0.len`, `fn` in a word glued to a
//!   non-ASCII space), and so does one with a non-ASCII character where a skipped token may
//!   be (an opaque number, raw identifier or lifetime begins with a named token, which no
//!   skip steps over). A text that does not lex is a "maybe" everywhere.
//!
//! A pattern of one token has no shape (it may match inside a comment, whose tokens the lexer
//! drops). Leading metavariables are dropped (the skeleton starts at its first token), but
//! the name of a struct expression (`$S { $$$F }`) is looked for backwards from its `{`: a
//! type path, not after `impl`, `->`, `if`, … ([`lead`]). An attempt that takes too many
//! steps is a "maybe". Syntax errors are where a match may still be
//! missed, as for the literals (see the module above): ast-grep may match a keyword through a
//! MISSING token, or step over an ERROR node.

use ast_grep_core::matcher::PatternNode;
use ast_grep_core::meta_var::MetaVariable;
use ast_grep_core::tree_sitter::TSLanguage;

mod lead;
pub(crate) mod lexer;

use lexer::{Kind, Tokens};

/// Steps one attempt may take before it is given up as a "maybe".
const BUDGET: u32 = 4_000;

/// One element of a skeleton.
#[derive(Clone, Debug, PartialEq, Eq)]
enum El {
    /// A token with this kind and text.
    Tok(Kind, Box<[u8]>),
    /// A string, char, lifetime or label: any one literal or lifetime token.
    AnyLit,
    /// One node (`$X`).
    One,
    /// Any balanced run (`$$$X`).
    Many,
}

/// What may stand in the candidate before an element.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Gap {
    /// Any balanced run (the trailing children of nodes that ended).
    loose: bool,
    /// Then any run of skippable tokens (unnamed nodes before a terminal).
    skip: bool,
}

#[derive(Clone, Debug)]
struct Item {
    el: El,
    gap: Gap,
    /// For an opening bracket: the index of the closing one that is its partner in every
    /// match.
    partner: Option<usize>,
}

/// A compiled skeleton; see the module.
#[derive(Clone, Debug)]
pub(crate) struct Shape {
    items: Vec<Item>,
    skippable: super::sequence::Words,
    /// What the dropped leading metavariable must be, when the pattern says.
    lead: Lead,
}

/// What stands before a shape's first token, when a leading metavariable was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lead {
    /// Anything (or nothing).
    Any,
    /// The name of a struct expression (`$S { … }`): a type path ([`lead::struct_name_before`]).
    StructName,
}

impl Shape {
    /// The shape of a Rust pattern, or `None` when it has no token to stand on (`$A`).
    pub fn of(
        node: &PatternNode,
        ts: &TSLanguage,
        skippable: super::sequence::Words,
    ) -> Option<Self> {
        // A single token may be one inside a comment (`/` of a doc comment's marker), which
        // the lexer drops: the literals alone judge it.
        match node {
            PatternNode::Internal { kind_id, .. }
                if !ts.node_kind_for_id(*kind_id).is_some_and(is_comment) => {}
            _ => return None,
        }
        let mut b = Builder {
            ts,
            items: Vec::new(),
            pending: Gap::default(),
        };
        b.node(node);
        let first = b.items.iter().position(|it| matches!(it.el, El::Tok(..)))?;
        let lead = match node {
            PatternNode::Internal { kind_id, children }
                if first == 1
                    && b.items[0].el == El::One
                    && ts.node_kind_for_id(*kind_id) == Some("struct_expression")
                    && matches!(
                        children.first(),
                        Some(PatternNode::MetaVar {
                            meta_var: MetaVariable::Capture(..) | MetaVariable::Dropped(..)
                        })
                    ) =>
            {
                Lead::StructName
            }
            _ => Lead::Any,
        };
        let mut items: Vec<Item> = b.items.split_off(first);
        for it in &mut items {
            it.partner = it.partner.map(|p| p - first);
        }
        items[0].gap = Gap::default();
        Some(Shape {
            items,
            skippable,
            lead,
        })
    }

    /// The start offsets of the first token of every place in `tokens` where the shape may
    /// match, and that token's length; a match of the pattern covers one of them.
    pub fn anchors(&self, tokens: &Tokens<'_>) -> (Vec<usize>, usize) {
        let El::Tok(_, first) = &self.items[0].el else {
            unreachable!("a shape starts with a token (Shape::of)");
        };
        let mut starts = Vec::new();
        let mut m = Matcher::new(self, tokens);
        for i in 0..tokens.len() {
            if m.attempt(i) && self.lead_allows(tokens, i) {
                starts.push(tokens.list[i].start as usize);
            }
        }
        (starts, first.len())
    }
}

impl Shape {
    /// Whether the shape may match anywhere in `tokens`.
    pub fn may_match(&self, tokens: &Tokens<'_>) -> bool {
        let mut m = Matcher::new(self, tokens);
        (0..tokens.len()).any(|i| m.attempt(i) && self.lead_allows(tokens, i))
    }

    /// Whether what stands before token `i` may be the leading metavariable's node.
    fn lead_allows(&self, tokens: &Tokens<'_>, i: usize) -> bool {
        match self.lead {
            Lead::Any => true,
            Lead::StructName => {
                lead::fields_after(tokens, i) && lead::struct_name_before(tokens, i)
            }
        }
    }
}

struct Builder<'a> {
    ts: &'a TSLanguage,
    items: Vec<Item>,
    /// The gap before the next element.
    pending: Gap,
}

impl Builder<'_> {
    fn push(&mut self, el: El, skip: bool) -> usize {
        let gap = Gap {
            loose: self.pending.loose,
            skip: skip || self.pending.skip,
        };
        self.pending = Gap::default();
        self.items.push(Item {
            el,
            gap,
            partner: None,
        });
        self.items.len() - 1
    }

    fn node(&mut self, node: &PatternNode) {
        match node {
            PatternNode::MetaVar { meta_var } => match meta_var {
                MetaVariable::Multiple | MetaVariable::MultiCapture(_) => {
                    self.push(El::Many, false);
                }
                _ => {
                    self.push(El::One, false);
                }
            },
            PatternNode::Terminal {
                text,
                is_named,
                kind_id,
            } => self.terminal(text, *is_named, *kind_id),
            PatternNode::Internal { kind_id, children } => {
                let kind = self.ts.node_kind_for_id(*kind_id).unwrap_or_default();
                if is_comment(kind) {
                    // The lexer drops the candidate's comments.
                    return;
                }
                if matches!(
                    kind,
                    "string_literal" | "raw_string_literal" | "char_literal" | "lifetime" | "label"
                ) {
                    self.push(El::AnyLit, false);
                    return;
                }
                if kind == "ERROR" || kind.starts_with("token_") {
                    // A macro's or an attribute's tokens (lexed otherwise inside), or an error:
                    // its brackets and anything between.
                    self.bracketed_any(children);
                    return;
                }
                self.children(children);
            }
        }
    }

    /// A token tree: its own brackets, if it has them, around anything.
    fn bracketed_any(&mut self, children: &[PatternNode]) {
        let bracket = |c: Option<&PatternNode>| match c {
            Some(PatternNode::Terminal { text, .. }) if text.len() == 1 => Some(text.as_bytes()[0]),
            _ => None,
        };
        match (bracket(children.first()), bracket(children.last())) {
            (Some(o @ (b'(' | b'[' | b'{')), Some(c)) if children.len() >= 2 && closes(o, c) => {
                let open = self.push(El::Tok(Kind::Open, Box::new([o])), true);
                self.push(El::Many, false);
                let close = self.push(El::Tok(Kind::Close, Box::new([c])), true);
                self.items[open].partner = Some(close);
            }
            _ => {
                self.push(El::Many, false);
            }
        }
        self.pending.loose = true;
    }

    fn children(&mut self, children: &[PatternNode]) {
        // Brackets that are direct children pair with each other.
        let single_bracket = |c: &PatternNode| match c {
            PatternNode::Terminal {
                text,
                is_named: false,
                ..
            } if text.len() == 1 && b"()[]{}".contains(&text.as_bytes()[0]) => {
                Some(text.as_bytes()[0])
            }
            _ => None,
        };
        // Whether the node is closed by the partner of the bracket that opens it: then no
        // trailing child can follow.
        let first_item = self.items.len();
        let mut first_open = None;
        let mut last_close = None;
        // Open brackets among them: where their element is (`None`: skipped after a `$$$`).
        let mut stack: Vec<(u8, Option<usize>)> = Vec::new();
        let mut after_ellipsis = false;
        for child in children {
            let is_many = matches!(
                child,
                PatternNode::MetaVar {
                    meta_var: MetaVariable::Multiple | MetaVariable::MultiCapture(_)
                }
            );
            match single_bracket(child) {
                Some(b @ (b'(' | b'[' | b'{')) => {
                    let at = (!after_ellipsis)
                        .then(|| self.push(El::Tok(Kind::Open, Box::new([b])), true));
                    if std::ptr::eq(child, &children[0]) {
                        first_open = at.filter(|&at| at == first_item);
                    }
                    stack.push((b, at));
                }
                Some(c @ (b')' | b']' | b'}')) => {
                    // Kept after a `$$$` too when it closes a bracket of this node: the
                    // candidate holds that bracket's partner whatever the list took.
                    let opened = match stack.last() {
                        Some(&(o, at)) if closes(o, c) => {
                            stack.pop();
                            at
                        }
                        _ => None,
                    };
                    match opened {
                        Some(at) => {
                            if after_ellipsis {
                                self.pending.loose = true;
                            }
                            let close = self.push(El::Tok(Kind::Close, Box::new([c])), true);
                            self.items[at].partner = Some(close);
                            after_ellipsis = false;
                            if std::ptr::eq(child, children.last().unwrap_or(child)) {
                                last_close = Some((at, close));
                            }
                        }
                        None if after_ellipsis => {}
                        None => {
                            self.push(El::Tok(Kind::Close, Box::new([c])), true);
                        }
                    }
                }
                _ if after_ellipsis && child.is_trivial() => {}
                _ => {
                    if after_ellipsis {
                        // What the list took may end anywhere before the next goal.
                        self.pending.loose = true;
                    }
                    self.node(child);
                    after_ellipsis = is_many;
                }
            }
        }
        let closed_by_partner = matches!(
            (first_open, last_close),
            (Some(open), Some((at, close))) if open == at && close + 1 == self.items.len()
        );
        if !closed_by_partner {
            // Trailing children may follow the last pattern child.
            self.pending.loose = true;
        }
    }

    fn terminal(&mut self, text: &str, is_named: bool, kind_id: u16) {
        let kind = self.ts.node_kind_for_id(kind_id).unwrap_or_default();
        if is_comment(kind) {
            return;
        }
        if !is_named && kind != text {
            // Compared by a kind that is not its text: any one token.
            self.push(El::One, true);
            return;
        }
        let Some(tokens) = Tokens::lex(text.as_bytes()) else {
            // A lone bracket, or what the lexer cannot read alone: any run.
            match text.as_bytes() {
                [b @ (b'(' | b'[' | b'{')] => {
                    self.push(El::Tok(Kind::Open, Box::new([*b])), true);
                }
                [b @ (b')' | b']' | b'}')] => {
                    self.push(El::Tok(Kind::Close, Box::new([*b])), true);
                }
                _ => {
                    self.push(El::Many, true);
                }
            }
            return;
        };
        if tokens.list.iter().any(|t| t.kind == Kind::Opaque) {
            self.push(El::One, true);
            return;
        }
        // A comment: the lexer drops the candidate's too.
        for i in 0..tokens.len() {
            let el = El::Tok(tokens.list[i].kind, tokens.text(i).into());
            // The first token may have skipped nodes before it; the others are the same
            // leaf's, side by side.
            self.push(el, i == 0);
        }
    }
}

/// A comment, or a part of one (`doc_comment`, the markers of `//!` and `/**`).
fn is_comment(kind: &str) -> bool {
    kind.contains("comment")
}

fn closes(open: u8, close: u8) -> bool {
    matches!((open, close), (b'(', b')') | (b'[', b']') | (b'{', b'}'))
}

/// What a balanced run stands for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Run {
    /// One node (`$X`): a `;` only last, a `for` only with a `{` after it.
    One,
    /// The trailing children of a node: a `;` only last.
    Trailing,
    /// A list of nodes (`$$$X`): anything balanced.
    List,
}

/// Attempts to match a shape, one from each token.
struct Matcher<'a, 's> {
    shape: &'a Shape,
    t: &'a Tokens<'s>,
    /// The steps of the current attempt.
    steps: u32,
    /// Emptied lists of positions, reused: an attempt takes a few at each step, and a file
    /// of 100,000 `pub const` items makes as many attempts.
    pool: Vec<Vec<usize>>,
    /// Per word token, whether it is skippable, once looked up: 0 not yet, 1 yes, 2 no (the
    /// gaps of one attempt and of the next step over the same words again).
    skippable_words: Vec<u8>,
}

impl<'a, 's> Matcher<'a, 's> {
    fn new(shape: &'a Shape, t: &'a Tokens<'s>) -> Self {
        Self {
            shape,
            t,
            steps: 0,
            pool: Vec::new(),
            skippable_words: Vec::new(),
        }
    }

    /// An empty list of positions, from the pool.
    fn list(&mut self) -> Vec<usize> {
        self.pool.pop().unwrap_or_default()
    }

    /// Gives a list back to the pool.
    fn give_back(&mut self, mut list: Vec<usize>) {
        list.clear();
        self.pool.push(list);
    }

    /// Whether the shape may match with its first element on token `start`.
    fn attempt(&mut self, start: usize) -> bool {
        self.steps = 0;
        let items = &self.shape.items;
        match self.element_at(0, start) {
            None => true,
            Some(false) => false,
            Some(true) => self.after_token(0, start, items.len(), self.t.len()),
        }
    }

    /// Whether token element `e` is token `i`: `None` (maybe) when `i` is opaque and may
    /// hide it (the tokens an opaque one stands for lie within its text).
    fn element_at(&self, e: usize, i: usize) -> Option<bool> {
        let tok = self.t.list.get(i)?;
        if tok.kind == Kind::Opaque {
            return match &self.shape.items[e].el {
                El::Tok(_, text) => memchr::memmem::find(self.t.text(i), text)
                    .is_none()
                    .then_some(false),
                El::AnyLit => None,
                El::One | El::Many => Some(false),
            };
        }
        Some(match &self.shape.items[e].el {
            El::Tok(kind, text) => tok.kind == *kind && self.t.text(i) == &**text,
            El::AnyLit => matches!(tok.kind, Kind::Lit | Kind::Lifetime),
            El::One | El::Many => false,
        })
    }

    /// Whether token `i` can only begin an item or a statement, never continue a node after
    /// a `}`: `fn`, `impl`, `struct`, `let`, `pub`, `#`, …
    fn starts_an_item(&self, i: usize) -> bool {
        const STARTS: &[&[u8]] = &[
            b"enum",
            b"extern",
            b"fn",
            b"impl",
            b"let",
            b"macro_rules",
            b"mod",
            b"pub",
            b"static",
            b"struct",
            b"trait",
            b"use",
        ];
        let tok = self.t.list[i];
        match tok.kind {
            Kind::Word => STARTS.contains(&self.t.text(i)),
            Kind::Punct => self.t.text(i) == b"#",
            _ => false,
        }
    }

    fn skippable(&mut self, i: usize) -> bool {
        let tok = self.t.list[i];
        match tok.kind {
            Kind::Punct | Kind::Open | Kind::Close | Kind::Opaque => true,
            Kind::Word => {
                if self.skippable_words.is_empty() {
                    self.skippable_words = vec![0; self.t.len()];
                }
                match self.skippable_words[i] {
                    1 => true,
                    2 => false,
                    _ => {
                        let yes = self.shape.skippable.contains(self.t.text(i));
                        self.skippable_words[i] = if yes { 1 } else { 2 };
                        yes
                    }
                }
            }
            Kind::Lit | Kind::Lifetime => false,
        }
    }

    /// Token element `e` matched token `i`: whether the rest (`e + 1 .. end`) matches from
    /// there, inside `..limit`.
    fn after_token(&mut self, e: usize, i: usize, end: usize, limit: usize) -> bool {
        match self.shape.items[e].partner {
            Some(close) if close < end => {
                let partner = self.t.list[i].partner as usize;
                partner < limit
                    && self.seq(e + 1, close, i + 1, partner)
                    && self.seq(close + 1, end, partner + 1, limit)
            }
            _ => self.seq(e + 1, end, i + 1, limit),
        }
    }

    /// Whether elements `e..end` match from token `t` on, within `..limit`. When `end` is a
    /// closing bracket (not the shape's end), the run must reach exactly `limit`, its partner.
    fn seq(&mut self, e: usize, end: usize, t: usize, limit: usize) -> bool {
        self.steps += 1;
        if self.steps > BUDGET {
            return true;
        }
        let items = &self.shape.items;
        if e == end {
            if end == items.len() {
                return true;
            }
            return self.gap_reaches(items[end].gap, t, limit);
        }
        let gap = items[e].gap;
        if gap == Gap::default() {
            return self.element_from(e, end, t, limit);
        }
        // Every start the gap allows.
        let mut starts = self.list();
        let found = self.gap_starts(gap, t, limit, &mut starts)
            || (0..starts.len()).any(|k| self.element_from(e, end, starts[k], limit));
        self.give_back(starts);
        found
    }

    /// Pushes the positions where the element after `gap` may start; `true` when an opaque
    /// token makes it a maybe.
    fn gap_starts(&mut self, gap: Gap, t: usize, limit: usize, out: &mut Vec<usize>) -> bool {
        if !gap.loose {
            // One base: the starts come out in order.
            return self.skip_from(gap, t, limit, out);
        }
        let mut bases = self.list();
        bases.push(t);
        self.balanced_ends(t, limit, Run::Trailing, &mut bases);
        // The bases rise, and a skip from a base inside the last one's run ends where that
        // run did: each is pushed once, in order.
        let maybe = bases.iter().any(|&base| {
            out.last().is_none_or(|&covered| base > covered)
                && self.skip_from(gap, base, limit, out)
        });
        self.give_back(bases);
        maybe
    }

    /// Pushes `base`, and with `gap.skip` each position after a run of skippable tokens from
    /// it; `true` when an opaque token makes it a maybe.
    fn skip_from(&mut self, gap: Gap, base: usize, limit: usize, out: &mut Vec<usize>) -> bool {
        out.push(base);
        if !gap.skip {
            return false;
        }
        let mut k = base;
        while k < limit && self.skippable(k) {
            if self.t.list[k].kind == Kind::Opaque {
                // Only a word with a non-ASCII character may hide a skippable token (a
                // keyword beside a no-break space); a number, a raw identifier or an odd
                // lifetime begins with a named one.
                return self.t.text(k).iter().any(|&b| b >= 0x80);
            }
            k += 1;
            out.push(k);
        }
        false
    }

    /// Whether the gap can take exactly `t..limit`.
    fn gap_reaches(&mut self, gap: Gap, t: usize, limit: usize) -> bool {
        let mut out = self.list();
        let reaches = self.gap_starts(gap, t, limit, &mut out) || out.contains(&limit);
        self.give_back(out);
        reaches
    }

    /// Pushes every end `r` (exclusive, `t < r <= limit`) of a balanced run from `t` that
    /// may be a `run` (see the module).
    fn balanced_ends(&self, t: usize, limit: usize, run: Run, out: &mut Vec<usize>) {
        let one = run == Run::One;
        let ends_at_semicolon = run != Run::List;
        let mut k = t;
        let mut pending_for = false;
        while k < limit {
            let tok = self.t.list[k];
            match tok.kind {
                Kind::Close => return,
                Kind::Open => {
                    let brace = self.t.src[tok.start as usize] == b'{';
                    pending_for &= !brace;
                    k = tok.partner as usize + 1;
                    // A braced group followed by what can only begin an item or a statement
                    // ends any single node: two items are never one.
                    if brace && run != Run::List && k < limit && self.starts_an_item(k) {
                        if !(one && pending_for) {
                            out.push(k);
                        }
                        return;
                    }
                }
                Kind::Word if self.t.text(k) == b"for" => {
                    let hrtb = self
                        .t
                        .list
                        .get(k + 1)
                        .is_some_and(|n| n.kind == Kind::Punct && self.t.text(k + 1) == b"<");
                    pending_for |= !hrtb;
                    k += 1;
                }
                Kind::Punct if self.t.text(k) == b";" => {
                    k += 1;
                    // A `;` ends any single node that holds it.
                    if !(one && pending_for) {
                        out.push(k);
                    }
                    if ends_at_semicolon {
                        return;
                    }
                    continue;
                }
                _ => k += 1,
            }
            if !(one && pending_for) {
                out.push(k);
            }
        }
    }

    /// Whether element `e` (then the rest up to `end`) matches from token `s`.
    fn element_from(&mut self, e: usize, end: usize, s: usize, limit: usize) -> bool {
        match self.shape.items[e].el {
            El::One | El::Many => {
                let mut ends = self.list();
                if self.shape.items[e].el == El::Many {
                    ends.push(s);
                }
                let run = if self.shape.items[e].el == El::One {
                    Run::One
                } else {
                    Run::List
                };
                self.balanced_ends(s, limit, run, &mut ends);
                // Any order gives the same verdict. A list is tried longest first: most often
                // it runs to the partner of the bracket it is in (`{ $$$B }`), where the rest
                // matches at once; from the shortest, every position inside is tried before.
                // A node is tried shortest first (`$X` is most often one word).
                let found = if run == Run::List {
                    (0..ends.len())
                        .rev()
                        .any(|k| self.seq(e + 1, end, ends[k], limit))
                } else {
                    (0..ends.len()).any(|k| self.seq(e + 1, end, ends[k], limit))
                };
                self.give_back(ends);
                found
            }
            El::Tok(..) | El::AnyLit => {
                if s >= limit {
                    return false;
                }
                match self.element_at(e, s) {
                    None => true,
                    Some(false) => false,
                    Some(true) => self.after_token(e, s, end, limit),
                }
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
