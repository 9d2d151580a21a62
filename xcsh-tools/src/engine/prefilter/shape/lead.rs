//! What may stand before a shape whose leading metavariable names a struct expression.
//!
//! `$S { $$$F }` has no token before its `{`, and nearly every item holds a `{`; but the
//! pattern is a `struct_expression`, and in tree-sitter-rust 0.24 a struct expression's name
//! is a type path: `Foo`, `a::Foo`, `Self`, `Foo::<T>`, `<T as Tr>::Out`. So the `{` of a
//! match follows a word or the `>` of a turbofish, and the path does not follow a word or
//! token after which Rust reads a type or a pattern, never an expression: `struct`, `impl`,
//! `for`, `->`, … , or the condition keywords (`if x {`, `match x {`: tree-sitter reads no
//! struct expression there; a match arm's guard may hold one, `_ if S { a } == s =>`), or a
//! `.` (a field, `a.b {`; but `..S { a }` is a base or a range). Everything this cannot tell is a
//! "maybe". And the brace must open a field list ([`fields_after`]): `}`, `..`, `#`, or a
//! field's name and then `:`, `,` or `}`. As for the rest of the shape, syntax errors are
//! where a match may be missed: here that is any struct expression whose first field does
//! not parse (`S { a = 1 }`, `S { mut a }`), which tree-sitter still builds and ast-grep
//! matches.

use super::lexer::{Kind, Tokens};

/// Steps a look back may take before it gives up as a "maybe".
const LOOK_BACK: usize = 256;

/// Words that cannot be the last segment of a type path: before a `{`, they open a block.
const NOT_A_NAME: &[&[u8]] = &[
    b"async",
    b"const",
    b"else",
    b"loop",
    b"move",
    b"unsafe",
    b"try",
    b"in",
    b"where",
    b"mut",
    b"let",
    b"fn",
    b"impl",
    b"struct",
    b"enum",
    b"trait",
    b"mod",
    b"extern",
    b"as",
    b"if",
    b"while",
    b"match",
    b"for",
    b"return",
    b"break",
    b"continue",
    b"static",
    b"type",
    b"use",
    b"pub",
    b"ref",
];

/// Words after which a path is a type, a pattern or a condition, never a struct expression's
/// name.
const NO_STRUCT_AFTER: &[&[u8]] = &[
    b"struct", b"enum", b"union", b"impl", b"trait", b"mod", b"for", b"if", b"while", b"match",
    b"in", b"fn", b"dyn", b"as", b"let", b"type", b"where",
];

/// Whether the tokens before token `i` (a `{`) may end a struct expression's name.
pub(super) fn struct_name_before(t: &Tokens<'_>, i: usize) -> bool {
    let Some(mut j) = i.checked_sub(1) else {
        return false;
    };
    match last_segment(t, j) {
        Segment::Word => {}
        Segment::Maybe => return true,
        Segment::No => return false,
        Segment::Turbofish(at) => j = at,
    }
    // `j` is a word: the path's last segment. Walk back over `a::b::`.
    for _ in 0..LOOK_BACK {
        if j >= 2 && is_punct(t, j - 1, b':') && is_punct(t, j - 2, b':') && glued(t, j - 2) {
            match j.checked_sub(3) {
                Some(k) if t.list[k].kind == Kind::Word => {
                    j = k;
                    continue;
                }
                // `<T as Tr>::X`, `Foo<T>::X`, `::x`, or what the lexer is unsure of.
                _ => return true,
            }
        }
        return path_may_start_after(t, j);
    }
    true
}

/// Whether what follows token `i` (the `{` of a struct expression, if it is one) may be a
/// field list: in tree-sitter-rust 0.24 it is empty, or starts with `..` (a base), an
/// attribute, or a field's name (a word, or a tuple struct's index) followed by `:`, `,`
/// or `}`. A block (`where T: Debug { let … }`, `fn f() -> T { g(); }`) starts otherwise.
pub(super) fn fields_after(t: &Tokens<'_>, i: usize) -> bool {
    let Some(first) = t.list.get(i + 1) else {
        return true;
    };
    match first.kind {
        Kind::Close | Kind::Opaque => true,
        // A lone `,` is a field list too (`S { , }`: the grammar's optional trailing comma).
        Kind::Punct => {
            is_punct(t, i + 1, b'#')
                || is_punct(t, i + 1, b',')
                || (is_punct(t, i + 1, b'.') && is_punct(t, i + 2, b'.') && glued(t, i + 1))
        }
        Kind::Word | Kind::Lit => match t.list.get(i + 2).map(|n| n.kind) {
            Some(Kind::Close | Kind::Opaque) | None => true,
            Some(Kind::Punct) => {
                is_punct(t, i + 2, b',') || (is_punct(t, i + 2, b':') && !path_separator(t, i + 2))
            }
            _ => false,
        },
        Kind::Lifetime | Kind::Open => false,
    }
}

/// Whether the `:` at token `k` begins exactly a `::` (`a:::b` is a field `a` of value
/// `::b`).
fn path_separator(t: &Tokens<'_>, k: usize) -> bool {
    is_punct(t, k + 1, b':') && glued(t, k) && !(is_punct(t, k + 2, b':') && glued(t, k + 1))
}

/// What the last segment of a path ending at token `j` is.
enum Segment {
    Word,
    /// The `::<…>` of a turbofish, after the word at this index.
    Turbofish(usize),
    Maybe,
    No,
}

fn last_segment(t: &Tokens<'_>, j: usize) -> Segment {
    let tok = t.list[j];
    match tok.kind {
        Kind::Word if NOT_A_NAME.contains(&t.text(j)) => Segment::No,
        Kind::Word => Segment::Word,
        Kind::Opaque => Segment::Maybe,
        Kind::Punct if t.text(j) == b">" => {
            if j >= 1 && glued(t, j - 1) && (is_punct(t, j - 1, b'-') || is_punct(t, j - 1, b'=')) {
                // `->`, `=>`.
                return Segment::No;
            }
            match matching_angle(t, j) {
                // `Foo::<T> {`: only a turbofish's generics end a struct expression's name.
                Some(lt) if lt >= 3 && is_punct(t, lt - 1, b':') && is_punct(t, lt - 2, b':') => {
                    if t.list[lt - 3].kind == Kind::Word {
                        Segment::Turbofish(lt - 3)
                    } else {
                        Segment::Maybe
                    }
                }
                Some(_) => Segment::No,
                None => Segment::Maybe,
            }
        }
        _ => Segment::No,
    }
}

/// Whether a path whose first token is `j` may be a struct expression's name, by what stands
/// before it.
fn path_may_start_after(t: &Tokens<'_>, j: usize) -> bool {
    let Some(k) = j.checked_sub(1) else {
        return true;
    };
    match t.list[k].kind {
        // A match arm's guard may hold a struct expression (`_ if S { a } == s =>`).
        Kind::Word if t.text(k) == b"if" => !starts_an_if_expression(t, k),
        Kind::Word => !NO_STRUCT_AFTER.contains(&t.text(k)),
        // A field (`a.b {`), but not a range or a base (`..S { a }`).
        Kind::Punct if t.text(k) == b"." => k >= 1 && glued(t, k - 1) && is_punct(t, k - 1, b'.'),
        Kind::Punct if t.text(k) == b">" => {
            !(k >= 1 && glued(t, k - 1) && is_punct(t, k - 1, b'-'))
        }
        _ => true,
    }
}

/// Whether the `if` at `k` begins an `if` expression, not a match arm's guard, by the token
/// before it: `else`, an opening bracket, `;`, `=`, `,`, `|`, `&`, `!` or `=>` (after a `}`
/// it may be either: `S { a, .. } if ok =>`).
fn starts_an_if_expression(t: &Tokens<'_>, k: usize) -> bool {
    let Some(p) = k.checked_sub(1) else {
        return true;
    };
    match t.list[p].kind {
        Kind::Word => t.text(p) == b"else",
        Kind::Open => true,
        Kind::Punct => match t.text(p) {
            b";" | b"=" | b"," | b"|" | b"&" | b"!" => true,
            b">" => p >= 1 && glued(t, p - 1) && is_punct(t, p - 1, b'='),
            _ => false,
        },
        _ => false,
    }
}

/// The `<` that opens the generics the `>` at `j` closes, or `None` when the look back cannot
/// tell.
fn matching_angle(t: &Tokens<'_>, j: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut k = j;
    for _ in 0..LOOK_BACK {
        let tok = t.list[k];
        match tok.kind {
            Kind::Close => k = tok.partner as usize,
            Kind::Open | Kind::Opaque => return None,
            Kind::Punct => match t.text(k) {
                b">" if !(k >= 1 && glued(t, k - 1) && is_punct(t, k - 1, b'-')) => depth += 1,
                b"<" => {
                    depth -= 1;
                    if depth == 0 {
                        return Some(k);
                    }
                }
                b";" => return None,
                _ => {}
            },
            _ => {}
        }
        k = k.checked_sub(1)?;
    }
    None
}

fn is_punct(t: &Tokens<'_>, k: usize, c: u8) -> bool {
    t.list.get(k).is_some_and(|tok| tok.kind == Kind::Punct) && t.text(k) == [c]
}

/// Whether token `k` ends where token `k + 1` starts (`->` is two tokens, glued).
fn glued(t: &Tokens<'_>, k: usize) -> bool {
    t.list.get(k + 1).is_some_and(|n| n.start == t.list[k].end)
}
