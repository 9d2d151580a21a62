//! Where a Rust file, or an item's body, can be cut into runs of whole items that parse
//! alone as they parse in place.

use std::ops::Range;

use super::lex::{self, Lexemes};

/// Words that can only start an item, never continue one after a `}`.
const ITEM_STARTS: &[&[u8]] = &[
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

/// Part of an item's body, and the run (of inner items) to parse for an anchor in it.
pub(super) type Segment = (Range<usize>, Range<usize>);

/// How deep [`nested_units`] looks into bodies (`mod a { mod b { impl C { … } } }`).
const MAX_NESTING: usize = 4;

/// Offsets that cut a Rust file into runs of whole top-level items: `0`, each place where
/// one item ends and the next begins (as far as a lexer can tell), and the file's length.
/// `None` when the text does not lex as Rust.
pub(super) fn item_boundaries(src: &[u8]) -> Option<Vec<usize>> {
    // A shebang line is not a token (an inner attribute, `#![…]`, is); tree-sitter reads one
    // behind a byte order mark too.
    if src.starts_with(b"\xEF\xBB\xBF") || (src.starts_with(b"#!") && !src.starts_with(b"#![")) {
        return None;
    }
    boundaries(src, 0..src.len(), false)
}

/// The cut of [`item_boundaries`], of `span` of `src` (a file, or the inside of an item's
/// braces): its start, each place where one item ends and the next begins, and its end.
/// In a `body`, a macro call after a `}` is cut off too: at the top level `m!(x);` is an
/// expression statement, in a body a macro call and an empty statement, so it must not be
/// parsed with the item before it ([`nested_units`] parses no run that starts with one).
fn boundaries(src: &[u8], span: Range<usize>, body: bool) -> Option<Vec<usize>> {
    let mut bounds = vec![span.start];
    let mut depth = 0usize;
    // After a `}` that closed to the top level: where it ended, until the next token says
    // whether an item begins there.
    let mut after_brace: Option<usize> = None;
    let mut tokens = Lexemes::new(src, span.clone()).peekable();
    while let Some(token) = tokens.next() {
        let token = token.ok()?;
        let first = src[token.start];
        if let Some(end) = after_brace.take()
            && (first == b'#'
                || ITEM_STARTS.contains(&&src[token.clone()])
                || (body
                    && lex::is_word_byte(first)
                    && matches!(tokens.peek(), Some(Ok(next)) if src[next.clone()] == *b"!")))
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
pub(super) fn nested_units(src: &[u8], run: Range<usize>) -> Vec<Segment> {
    let mut out = Vec::new();
    nested_units_into(src, run, 0, &mut out);
    out
}

fn nested_units_into(src: &[u8], run: Range<usize>, depth: usize, out: &mut Vec<Segment>) {
    if depth == MAX_NESTING {
        return;
    }
    let Some(body) = body_of(src, run) else {
        return;
    };
    let Some(bounds) = boundaries(src, body, true) else {
        return;
    };
    let members = || bounds.windows(2).map(|w| w[0]..w[1]);
    // A member that is neither an item nor a macro call (`default fn`, `pub macro`, …) is
    // what tree-sitter-rust 0.24 may fail on, and its recovery in a whole parse can take in
    // the members around it: then the body is parsed whole, and the error seen.
    if members().any(|m| {
        let blank = Lexemes::new(src, m.clone()).next().is_none();
        !blank && !starts_an_item(src, m.clone()) && !is_a_macro_call(src, m)
    }) {
        return;
    }
    for member in members() {
        if !starts_an_item(src, member.clone()) {
            continue;
        }
        // Its own members where it has a body, and the rest of it as one unit.
        let mut at = member.start;
        let mut inner = Vec::new();
        nested_units_into(src, member.clone(), depth + 1, &mut inner);
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

/// The inside of the braces of the `impl`, `trait`, `mod` or `extern` block that `run` is
/// (outer attributes, visibility and `unsafe` before it), when those braces end `run`;
/// `None` for anything else.
fn body_of(src: &[u8], run: Range<usize>) -> Option<Range<usize>> {
    let mut tokens = Lexemes::new(src, run).map_while(Result::ok);
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
fn starts_an_item(src: &[u8], run: Range<usize>) -> bool {
    let mut tokens = Lexemes::new(src, run).map_while(Result::ok);
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
fn is_a_macro_call(src: &[u8], run: Range<usize>) -> bool {
    let mut tokens = Lexemes::new(src, run).map_while(Result::ok);
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
