//! Where a Rust file, or an item's body, can be cut into runs of whole items that parse
//! alone as they parse in place.

use std::ops::Range;

use super::lex::{self, Lexemes};

/// Words that can only start an item, never continue one after a `}`.
pub(super) const ITEM_STARTS: &[&[u8]] = &[
    b"async",
    b"const",
    b"enum",
    b"extern",
    b"fn",
    b"impl",
    b"macro_rules",
    b"mod",
    b"pub",
    b"static",
    b"struct",
    b"trait",
    b"type",
    b"union",
    b"unsafe",
    b"use",
];

/// Words that start a statement in a block, never continue one after a `}` (the keywords of
/// the block-like expressions, and `let`).
const STATEMENT_STARTS: &[&[u8]] = &[
    b"break",
    b"continue",
    b"for",
    b"if",
    b"let",
    b"loop",
    b"match",
    b"return",
    b"while",
];

/// Words that open an expression ending with a block (one that needs no `;` to be a
/// statement): a tail of a block that starts with one and ends with its `}` parses alone as
/// a statement.
const BLOCK_EXPRESSION_STARTS: &[&[u8]] = &[b"for", b"if", b"loop", b"match", b"unsafe", b"while"];

/// Part of an item's body, and the run (of inner items) to parse for an anchor in it.
pub(super) type Segment = (Range<usize>, Range<usize>);

/// What [`boundaries`] cuts.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    /// A file's top level.
    File,
    /// The body of an `impl`, `trait`, `mod` or `extern` block.
    Body,
    /// A function's body.
    Block,
}

/// How deep [`Lexed::nested_units`] looks into bodies (`mod a { mod b { impl C { … } } }`).
const MAX_NESTING: usize = 4;

/// The tokens of a span of Rust source, lexed once: each pass of the cut over a part of it
/// (a body, a function, a piece of a block) reads them from here rather than lexing again.
pub(super) struct Lexed<'a> {
    pub(super) src: &'a [u8],
    tokens: Vec<Range<usize>>,
}

impl<'a> Lexed<'a> {
    /// The tokens of `span` of `src`; `None` when it does not lex.
    pub(super) fn new(src: &'a [u8], span: Range<usize>) -> Option<Self> {
        // Sized for Rust's usual density (a token per 4–6 bytes), not grown by doubling.
        let mut tokens = Vec::with_capacity(span.len() / 4);
        for token in Lexemes::new(src, span) {
            tokens.push(token.ok()?);
        }
        Some(Lexed { src, tokens })
    }

    /// A whole file's tokens; `None` when it does not lex as Rust, or is not cut
    /// ([`item_boundaries`]).
    pub(super) fn file(src: &'a [u8]) -> Option<Self> {
        if !cuts(src) {
            return None;
        }
        Self::new(src, 0..src.len())
    }

    /// The tokens inside `span`, which starts and ends between tokens of the lexed span.
    fn tokens(&self, span: Range<usize>) -> impl Iterator<Item = Range<usize>> + '_ {
        let from = self.tokens.partition_point(|t| t.start < span.start);
        let to = self
            .tokens
            .partition_point(|t| t.start < span.end)
            .max(from);
        self.tokens[from..to].iter().cloned()
    }

    /// [`item_boundaries`] of the file this lexed ([`Lexed::file`]).
    pub(super) fn item_boundaries(&self) -> Option<Vec<usize>> {
        let all = 0..self.src.len();
        boundaries(self.src, self.tokens(all.clone()), all, Context::File)
    }
}

/// Whether a file is cut at all: not one that starts with a shebang line, which is not a
/// token (an inner attribute, `#![…]`, is), nor behind a byte order mark, where tree-sitter
/// reads one too.
fn cuts(src: &[u8]) -> bool {
    !(src.starts_with(b"\xEF\xBB\xBF") || (src.starts_with(b"#!") && !src.starts_with(b"#![")))
}

/// Offsets that cut a Rust file into runs of whole top-level items: `0`, each place where
/// one item ends and the next begins (as far as a lexer can tell), and the file's length.
/// `None` when the text does not lex as Rust, or is not cut ([`cuts`]). The tokens are read
/// as they are lexed, not kept: a run looked into again is lexed alone ([`Lexed::new`]),
/// which reads it the same way (it starts between tokens).
pub(super) fn item_boundaries(src: &[u8]) -> Option<Vec<usize>> {
    if !cuts(src) {
        return None;
    }
    let mut unlexable = false;
    let tokens = Lexemes::new(src, 0..src.len()).map_while(|token| {
        unlexable |= token.is_err();
        token.ok()
    });
    let bounds = boundaries(src, tokens, 0..src.len(), Context::File);
    if unlexable { None } else { bounds }
}

/// The cut of [`item_boundaries`], of `span` of `src` (a file, or the inside of an item's
/// braces): its start, each place where one item ends and the next begins, and its end.
/// In a `body`, a macro call after a `}` is cut off too: at the top level `m!(x);` is an
/// expression statement, in a body a macro call and an empty statement, so it must not be
/// parsed with the item before it ([`Lexed::nested_units`] parses no run that starts with one). In a
/// function's `Block`, a statement's keyword after a `}` begins a statement too.
fn boundaries(
    src: &[u8],
    tokens: impl Iterator<Item = Range<usize>>,
    span: Range<usize>,
    context: Context,
) -> Option<Vec<usize>> {
    let mut bounds = vec![span.start];
    let mut depth = 0usize;
    // After a `}` that closed to the top level: where it ended, until the next token says
    // whether an item begins there.
    let mut after_brace: Option<usize> = None;
    let mut tokens = tokens.peekable();
    while let Some(token) = tokens.next() {
        let first = src[token.start];
        if let Some(end) = after_brace.take()
            && (first == b'#'
                || ITEM_STARTS.contains(&&src[token.clone()])
                || (context == Context::Block && STATEMENT_STARTS.contains(&&src[token.clone()]))
                || (context != Context::File
                    && lex::is_word_byte(first)
                    && matches!(tokens.peek(), Some(next) if src[next.clone()] == *b"!")))
        {
            bounds.push(end);
        }
        match first {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' => depth = depth.checked_sub(1)?,
            b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    after_brace = Some(token.end);
                }
            }
            b';' if depth == 0 => bounds.push(token.end),
            _ => {}
        }
    }
    if depth != 0 {
        return None;
    }
    if bounds.last() != Some(&span.end) {
        bounds.push(span.end);
    }
    Some(bounds)
}

/// [`Lexed::nested_units`], lexing `run` alone.
#[cfg(test)]
pub(super) fn nested_units(src: &[u8], run: Range<usize>) -> Vec<Segment> {
    Lexed::new(src, run.clone()).map_or_else(Vec::new, |lx| lx.nested_units(run))
}

impl Lexed<'_> {
    /// Where, inside the top-level item (or run of items) `run`, a smaller run can be parsed
    /// alone: `(segment, unit)` pairs, sorted and disjoint, each segment inside its unit. A
    /// position in no segment needs all of `run`.
    ///
    /// A unit is a run of whole items of the body of an `impl`, `trait`, `mod` or `extern`
    /// block that is all of `run` (its braces, the last token of `run`), and that starts with
    /// what only starts an item (`fn`, `pub`, `#[…] const`, …: not a macro call, which at the
    /// top level may read as an expression statement). Such items parse alone as they parse in
    /// the body: a body (`declaration_list`) holds the same items as a file. So every node
    /// inside a unit is what a whole parse gives, and the nodes a whole parse has around it are
    /// the body, its item, and the items and bodies that hold those: a pattern none of whose
    /// kinds is one of those ([`super::NESTING_KINDS`]) matches only inside.
    ///
    /// `run` lies in the lexed span.
    pub(super) fn nested_units(&self, run: Range<usize>) -> Vec<Segment> {
        let mut out = Vec::new();
        nested_units_into(self, run, Bodies::All, 0, &mut out);
        out
    }

    /// [`nested_units`](Self::nested_units), looking only into the bodies of `mod` and
    /// `extern` blocks: an `impl` or a `trait` is one unit, whole. For a pattern that may be an
    /// `impl` or a `trait` (which may hold an anchor in one of its members) but not a module
    /// or a body: the nodes around such a unit are modules and bodies.
    pub(super) fn module_units(&self, run: Range<usize>) -> Vec<Segment> {
        let mut out = Vec::new();
        nested_units_into(self, run, Bodies::Modules, 0, &mut out);
        out
    }
}

/// Which bodies [`nested_units_into`] looks into.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Bodies {
    /// Those of `impl`, `trait`, `mod` and `extern` blocks.
    All,
    /// Those of `mod` and `extern` blocks.
    Modules,
}

fn nested_units_into(
    lx: &Lexed<'_>,
    run: Range<usize>,
    bodies: Bodies,
    depth: usize,
    out: &mut Vec<Segment>,
) {
    if depth == MAX_NESTING {
        return;
    }
    let Some(body) = body_of(lx, run, bodies) else {
        return;
    };
    let Some(bounds) = boundaries(lx.src, lx.tokens(body.clone()), body, Context::Body) else {
        return;
    };
    let members = || bounds.windows(2).map(|w| w[0]..w[1]);
    // A member that is neither an item nor a macro call (`default fn`, `pub macro`, …) is
    // what tree-sitter-rust 0.24 may fail on, and its recovery in a whole parse can take in
    // the members around it: then the body is parsed whole, and the error seen.
    if members().any(|m| {
        let blank = lx.tokens(m.clone()).next().is_none();
        !blank && !starts_an_item(lx, m.clone()) && !is_a_macro_call(lx, m)
    }) {
        return;
    }
    for member in members() {
        if !starts_an_item(lx, member.clone()) {
            continue;
        }
        // Its own members where it has a body, and the rest of it as one unit.
        let mut at = member.start;
        let mut inner = Vec::new();
        nested_units_into(lx, member.clone(), bodies, depth + 1, &mut inner);
        for (segment, unit) in inner {
            if at < segment.start {
                out.push((at..segment.start, member.clone()));
            }
            at = segment.end;
            out.push((segment, unit));
        }
        if at < member.end {
            out.push((at..member.end, member));
        }
    }
}

/// [`Lexed::statements`], lexing `run` alone.
#[cfg(test)]
pub(super) fn statements(src: &[u8], run: Range<usize>) -> Vec<Range<usize>> {
    Lexed::new(src, run.clone()).map_or_else(Vec::new, |lx| lx.statements(run))
}

impl Lexed<'_> {
    /// The runs of statements of the body of the function `run` (a top-level item, or a member
    /// of a body: a unit of [`Lexed::nested_units`]) that parse alone as they parse in place, sorted;
    /// none when `run` is no function with a body.
    ///
    /// A block holds what a file holds (`repeat(_statement)` in tree-sitter-rust 0.24), and one
    /// tail expression: so a run of whole statements parses alone as it parses in place, and a
    /// tail does too when it is an expression ending with a block (`if`, `match`, …, to its
    /// `}`), which at the top level reads as an expression statement around the same node
    /// (patterns that may be one are kept out: [`super::STATEMENT_NESTING_KINDS`]). Other tails
    /// (`Ok(x)`) would not parse alone, nor would an inner attribute (`#![…]`) at the start of
    /// a parse.
    pub(super) fn statements(&self, run: Range<usize>) -> Vec<Range<usize>> {
        let Some(bounds) = self.statement_boundaries(run) else {
            return Vec::new();
        };
        let end = bounds.last().copied().unwrap_or_default();
        bounds
            .windows(2)
            .map(|w| w[0]..w[1])
            .filter(|piece| parses_as_statements(self, piece.clone(), piece.end == end))
            .collect()
    }

    /// Where the body of the function `run` is cut into pieces, the runs of
    /// [`statements`](Self::statements) before some are left out: the body's start, each
    /// boundary between statements, and its end. `None` when `run` is no function with a
    /// body, or its body does not cut. Two texts whose pieces outside a run are the same are
    /// read the same way there (the syntax guard compares them).
    pub(super) fn statement_boundaries(&self, run: Range<usize>) -> Option<Vec<usize>> {
        let body = fn_body_of(self, run)?;
        boundaries(self.src, self.tokens(body.clone()), body, Context::Block)
    }
}

/// Whether `piece` of a block (one of [`boundaries`]'s runs) parses alone as in place: it
/// has a token, does not start with an inner attribute, and unless it is not the block's
/// `last` piece (the others end where a statement does) or ends with a `;`, is one
/// expression ending with a block: it starts with `if`, `match`, …, or `{`, and each `}`
/// that closes to its level is its last token or, in an `if`, followed by `else`.
fn parses_as_statements(lx: &Lexed<'_>, piece: Range<usize>, last: bool) -> bool {
    let src = lx.src;
    let mut tokens = lx.tokens(piece).peekable();
    let Some(first) = tokens.next() else {
        return false;
    };
    let text = |t: &Range<usize>| &src[t.clone()];
    if text(&first) == b"#" && tokens.peek().is_some_and(|t| text(t) == b"!") {
        return false;
    }
    if !last {
        return true;
    }
    let mut depth = usize::from(text(&first) == b"{");
    let chain = text(&first) == b"if";
    if depth == 0 && !BLOCK_EXPRESSION_STARTS.contains(&text(&first)) {
        // A tail that is no block-like expression, unless it is `… ;` after all.
        return tokens.last().is_some_and(|t| text(&t) == b";");
    }
    while let Some(token) = tokens.next() {
        match src[token.start] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' => depth = depth.saturating_sub(1),
            b'}' => {
                depth = depth.saturating_sub(1);
                // Only an `if` goes on past its block, with `else`.
                if depth == 0
                    && tokens
                        .peek()
                        .is_some_and(|t| !(chain && text(t) == b"else"))
                {
                    return false;
                }
            }
            _ => {}
        }
    }
    true
}

/// The inside of the braces of the function `run` is (outer attributes, visibility and
/// qualifiers before it), when those braces end `run`; `None` for anything else.
fn fn_body_of(lx: &Lexed<'_>, run: Range<usize>) -> Option<Range<usize>> {
    let src = lx.src;
    let mut tokens = lx.tokens(run);
    let text = |t: &Range<usize>| &src[t.clone()];
    let mut token = after_attributes(src, &mut tokens)?;
    if text(&token) == b"pub" {
        token = tokens.next()?;
        if text(&token) == b"(" {
            closing(src, &mut tokens)?;
            token = tokens.next()?;
        }
    }
    loop {
        match text(&token) {
            b"const" | b"async" | b"unsafe" | b"safe" => token = tokens.next()?,
            b"extern" => {
                token = tokens.next()?;
                if src[token.start] == b'"' {
                    token = tokens.next()?;
                }
            }
            b"fn" => break,
            _ => return None,
        }
    }
    // The first brace outside brackets (a `where` clause's bounds have none).
    let open = loop {
        let token = tokens.next()?;
        match text(&token) {
            b"{" => break token,
            b"(" | b"[" => {
                closing(src, &mut tokens)?;
            }
            b";" => return None,
            _ => {}
        }
    };
    let close = closing(src, &mut tokens)?;
    tokens.next().is_none().then_some(open.end..close.start)
}

/// The inside of the braces of the `impl`, `trait`, `mod` or `extern` block that `run` is
/// (outer attributes, visibility and `unsafe` before it), when those braces end `run`;
/// `None` for anything else, and for an `impl` or a `trait` when only [`Bodies::Modules`]
/// are looked into.
fn body_of(lx: &Lexed<'_>, run: Range<usize>, bodies: Bodies) -> Option<Range<usize>> {
    let src = lx.src;
    let mut tokens = lx.tokens(run);
    let text = |t: &Range<usize>| &src[t.clone()];
    let mut token = after_attributes(src, &mut tokens)?;
    if text(&token) == b"pub" {
        token = tokens.next()?;
        if text(&token) == b"(" {
            closing(src, &mut tokens)?;
            token = tokens.next()?;
        }
    }
    if text(&token) == b"unsafe" {
        token = tokens.next()?;
    }
    let open = match text(&token) {
        b"mod" => {
            tokens.next()?;
            tokens.next()?
        }
        b"extern" => match tokens.next()? {
            abi if src[abi.start] == b'"' => tokens.next()?,
            other => other,
        },
        // The first brace outside brackets: a const generic argument's block is one, and
        // then the braces do not end the run.
        b"impl" | b"trait" if bodies == Bodies::Modules => return None,
        b"impl" | b"trait" => loop {
            let token = tokens.next()?;
            match text(&token) {
                b"{" => break token,
                b"(" | b"[" => {
                    closing(src, &mut tokens)?;
                }
                b";" => return None,
                _ => {}
            }
        },
        _ => return None,
    };
    if text(&open) != b"{" {
        return None;
    }
    let close = closing(src, &mut tokens)?;
    tokens.next().is_none().then_some(open.end..close.start)
}

/// Whether `run` starts (after outer and inner attributes) with a word that only starts an
/// item: not `pub macro` (declarative macros 2.0, which tree-sitter-rust 0.24 does not read).
fn starts_an_item(lx: &Lexed<'_>, run: Range<usize>) -> bool {
    let src = lx.src;
    let mut tokens = lx.tokens(run);
    let Some(first) = after_attributes(src, &mut tokens) else {
        return false;
    };
    if src[first.clone()] == *b"pub" {
        let next = match tokens.next() {
            Some(open) if src[open.clone()] == *b"(" => {
                closing(src, &mut tokens).and_then(|_| tokens.next())
            }
            next => next,
        };
        return next.is_some_and(|t| src[t] != *b"macro");
    }
    ITEM_STARTS.contains(&&src[first])
}

/// Whether `run` is a macro call (after attributes): a word (or a path's last one), then `!`.
fn is_a_macro_call(lx: &Lexed<'_>, run: Range<usize>) -> bool {
    let src = lx.src;
    let mut tokens = lx.tokens(run);
    let Some(mut token) = after_attributes(src, &mut tokens) else {
        return false;
    };
    loop {
        if !lex::is_word_byte(src[token.start]) {
            return false;
        }
        let Some(next) = tokens.next() else {
            return false;
        };
        match &src[next] {
            b"!" => return true,
            b":" => {
                // `::`, then the next segment.
                if tokens.next().is_none_or(|t| src[t] != *b":") {
                    return false;
                }
                let Some(segment) = tokens.next() else {
                    return false;
                };
                token = segment;
            }
            _ => return false,
        }
    }
}

/// The first token after the attributes (`#[…]`, `#![…]`) that `tokens` start with.
fn after_attributes(
    src: &[u8],
    tokens: &mut impl Iterator<Item = Range<usize>>,
) -> Option<Range<usize>> {
    loop {
        let token = tokens.next()?;
        if src[token.clone()] != *b"#" {
            return Some(token);
        }
        let mut open = tokens.next()?;
        if src[open.clone()] == *b"!" {
            open = tokens.next()?;
        }
        if src[open] != *b"[" {
            return None;
        }
        closing(src, tokens)?;
    }
}

/// Consumes `tokens` up to the bracket that closes one just consumed, and returns it.
fn closing(src: &[u8], tokens: &mut impl Iterator<Item = Range<usize>>) -> Option<Range<usize>> {
    let mut depth = 1usize;
    for token in tokens {
        match src[token.start] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(token);
                }
            }
            _ => {}
        }
    }
    None
}
