//! A Rust lexer that errs only towards "maybe".
//!
//! It reads just enough of Rust's lexical grammar to tell the shape matcher what stands where:
//! words (identifiers and keywords), literals, lifetimes, single punctuation characters and
//! brackets, each bracket paired with its partner. Comments and whitespace are dropped (the
//! matcher steps over comments too). Whatever it is not sure of becomes an
//! [`Kind::Opaque`] token, which the matcher treats as "anything may be here": a raw
//! identifier (`r#match`), a word with a non-ASCII character, a number glued to a `.` or
//! an exponent sign (`1.0`, `t.0.1`, `1e-3`), a lone `'`. An opaque token never hides a bracket.
//! A text it cannot lex at all (an unterminated string or comment, brackets that do not
//! pair, a shebang line or a byte order mark) gives `None`: the file may match anywhere.
//!
//! Strings, chars, escapes and nested block comments are read by the same functions that cut
//! files into items ([`partial`](crate::engine::partial)), as tree-sitter-rust reads them.

use crate::engine::partial::{block_comment_end, quote_end, raw_string_end, string_end};

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// An identifier or a keyword (`[A-Za-z_][A-Za-z0-9_]*`).
    Word,
    /// A string, char or number literal, byte and raw forms included.
    Lit,
    /// `'a`: a lifetime or a label.
    Lifetime,
    /// One ASCII punctuation character other than a bracket.
    Punct,
    /// `(`, `[` or `{`.
    Open,
    /// `)`, `]` or `}`.
    Close,
    /// Something the lexer is not sure of: it may stand for any tokens but brackets.
    Opaque,
}

/// One token: its kind and byte range; for a bracket, the index of its partner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Token {
    pub kind: Kind,
    pub start: u32,
    pub end: u32,
    /// For `Open` and `Close`: the index of the bracket that pairs with it.
    pub partner: u32,
}

/// The tokens of a text.
pub(crate) struct Tokens<'s> {
    pub src: &'s [u8],
    pub list: Vec<Token>,
}

impl<'s> Tokens<'s> {
    /// The tokens of Rust `src`, or `None` when it does not lex (see the module).
    pub fn lex(src: &'s [u8]) -> Option<Self> {
        if src.len() >= u32::MAX as usize
            || src.starts_with(b"\xEF\xBB\xBF")
            || (src.starts_with(b"#!") && !src.starts_with(b"#!["))
        {
            return None;
        }
        let mut list: Vec<Token> = Vec::with_capacity(src.len() / 4);
        let mut open: Vec<u32> = Vec::new();
        let mut i = 0;
        while i < src.len() {
            let b = src[i];
            let (kind, end) = match (b, src.get(i + 1)) {
                (b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c', _) => {
                    i += 1;
                    continue;
                }
                (b'/', Some(b'/')) => {
                    i = memchr::memchr(b'\n', &src[i..]).map_or(src.len(), |n| i + n);
                    continue;
                }
                (b'/', Some(b'*')) => {
                    i = block_comment_end(src, i)?;
                    continue;
                }
                (b'(' | b'[' | b'{', _) => (Kind::Open, i + 1),
                (b')' | b']' | b'}', _) => (Kind::Close, i + 1),
                (b'"', _) => (Kind::Lit, string_end(src, i + 1)?),
                (b'\'', _) => quote(src, i)?,
                (b'0'..=b'9', _) => number(src, i),
                _ if is_word_byte(b) => word(src, i)?,
                _ if b.is_ascii_graphic() => (Kind::Punct, i + 1),
                // Another control character: not Rust, not judged.
                _ => return None,
            };
            let index = u32::try_from(list.len()).ok()?;
            let mut partner = 0;
            match kind {
                Kind::Open => open.push(index),
                Kind::Close => {
                    let o = open.pop()?;
                    let opener = src[list[o as usize].start as usize];
                    if !matches!((opener, b), (b'(', b')') | (b'[', b']') | (b'{', b'}')) {
                        return None;
                    }
                    list[o as usize].partner = index;
                    partner = o;
                }
                _ => {}
            }
            list.push(Token {
                kind,
                start: i as u32,
                end: end as u32,
                partner,
            });
            i = end;
        }
        open.is_empty().then_some(Tokens { src, list })
    }

    /// The text of token `i`.
    pub fn text(&self, i: usize) -> &'s [u8] {
        let t = self.list[i];
        &self.src[t.start as usize..t.end as usize]
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }
}

/// A `'`: a char literal, or a lifetime or label with its name, or (alone) opaque.
fn quote(src: &[u8], i: usize) -> Option<(Kind, usize)> {
    let end = quote_end(src, i)?;
    if end > i + 1 {
        return Some((Kind::Lit, end));
    }
    let name = src[end..]
        .iter()
        .take_while(|&&b| b.is_ascii_alphanumeric() || b == b'_')
        .count();
    let after = src.get(end + name).copied();
    if name == 0 || after.is_some_and(|b| b >= 0x80 || b == b'#') {
        // `'r#a`, `'é`, or a `'` alone (in a macro's tokens): not judged.
        return Some((Kind::Opaque, end + name));
    }
    Some((Kind::Lifetime, end + name))
}

/// A number literal: a run of word characters from a digit. Glued to a `.` (a float, or a
/// tuple index read as one) or to an exponent's sign, it is opaque: tree-sitter's own cut of
/// it is not worth guessing.
fn number(src: &[u8], i: usize) -> (Kind, usize) {
    let mut end = i;
    while end < src.len() && is_word_byte(src[end]) {
        end += 1;
    }
    let mut kind = Kind::Lit;
    loop {
        match (src.get(end), src.get(end + 1)) {
            (Some(b'.'), next) if next != Some(&b'.') => {
                kind = Kind::Opaque;
                end += 1;
            }
            (Some(b'+' | b'-'), Some(d))
                if d.is_ascii_digit() && matches!(src[end - 1], b'e' | b'E') =>
            {
                kind = Kind::Opaque;
                end += 1;
            }
            _ => break,
        }
        while end < src.len() && is_word_byte(src[end]) {
            end += 1;
        }
    }
    if src[i..end].iter().any(|&b| b >= 0x80) {
        kind = Kind::Opaque;
    }
    (kind, end)
}

/// A word, or the literal it prefixes (`b"…"`, `br#"…"#`, `c"…"`, `b'x'`), or a raw
/// identifier (opaque).
fn word(src: &[u8], i: usize) -> Option<(Kind, usize)> {
    let mut end = i;
    while end < src.len() && is_word_byte(src[end]) {
        end += 1;
    }
    let word = &src[i..end];
    Some(match (word, src.get(end)) {
        (b"r" | b"br" | b"cr", Some(b'"' | b'#')) => {
            let after = raw_string_end(src, end)?;
            if after == end {
                // `r#ident`: a raw identifier.
                let mut e = end + 1;
                while e < src.len() && is_word_byte(src[e]) {
                    e += 1;
                }
                (Kind::Opaque, e)
            } else {
                (Kind::Lit, after)
            }
        }
        (b"b" | b"c", Some(b'"')) => (Kind::Lit, string_end(src, end + 1)?),
        (b"b", Some(b'\'')) => {
            let (kind, e) = quote(src, end)?;
            (
                if kind == Kind::Lit {
                    kind
                } else {
                    Kind::Opaque
                },
                e,
            )
        }
        _ if word.iter().any(|&b| b >= 0x80) => (Kind::Opaque, end),
        _ => (Kind::Word, end),
    })
}

/// Letters, digits, `_` and the bytes of non-ASCII characters.
fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<(Kind, &str)> {
        let t = Tokens::lex(src.as_bytes()).unwrap();
        (0..t.len())
            .map(|i| (t.list[i].kind, std::str::from_utf8(t.text(i)).unwrap()))
            .collect()
    }

    #[test]
    fn words_literals_lifetimes_and_punctuation() {
        use Kind::*;
        assert_eq!(
            kinds("fn f<'a>(x: &'a str) -> char { 'x' } // no\n/* a /* b */ c */"),
            [
                (Word, "fn"),
                (Word, "f"),
                (Punct, "<"),
                (Lifetime, "'a"),
                (Punct, ">"),
                (Open, "("),
                (Word, "x"),
                (Punct, ":"),
                (Punct, "&"),
                (Lifetime, "'a"),
                (Word, "str"),
                (Close, ")"),
                (Punct, "-"),
                (Punct, ">"),
                (Word, "char"),
                (Open, "{"),
                (Lit, "'x'"),
                (Close, "}"),
            ]
        );
        assert_eq!(
            kinds(r###"r#"a"# b"x" br##"y"## c"z" b'q' "e\"s" 0x1F 1u8"###)
                .iter()
                .map(|k| k.0)
                .collect::<Vec<_>>(),
            [Lit, Lit, Lit, Lit, Lit, Lit, Lit, Lit]
        );
    }

    #[test]
    fn what_it_is_not_sure_of_is_opaque() {
        use Kind::*;
        assert_eq!(
            kinds("r#match 1.0 t.0.1 1e-3 é 0..2"),
            [
                (Opaque, "r#match"),
                (Opaque, "1.0"),
                (Word, "t"),
                (Punct, "."),
                (Opaque, "0.1"),
                (Opaque, "1e-3"),
                (Opaque, "é"),
                (Lit, "0"),
                (Punct, "."),
                (Punct, "."),
                (Lit, "2"),
            ]
        );
    }

    #[test]
    fn brackets_pair_or_nothing_is_lexed() {
        let t = Tokens::lex(b"a(b[c]{d})").unwrap();
        assert_eq!(t.list[1].partner, 9);
        assert_eq!(t.list[9].partner, 1);
        assert_eq!(t.list[3].partner, 5);
        for bad in ["(", ")", "(]", "\"open", "/* open", "#!/bin/x\nfn f(){}"] {
            assert!(Tokens::lex(bad.as_bytes()).is_none(), "{bad}");
        }
        // Brackets inside strings, chars and comments do not count.
        assert!(Tokens::lex(b"f(\"(\", '(', '\\'', /* ( */ // (\n)").is_some());
    }
}
