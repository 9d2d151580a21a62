//! The little of Rust's lexical grammar the cut needs: where a token, a literal or a comment
//! ends, as tree-sitter-rust reads them (the shape prefilter's lexer shares these).

use std::ops::Range;

/// One token of Rust source, as the cut reads it: a word (with the literal it prefixes), a
/// string or char literal, the quote of a lifetime or label, or one byte of punctuation.
/// Whitespace and comments are stepped over. An `Err` where the text does not lex, and
/// nothing after it.
pub(super) struct Lexemes<'a> {
    src: &'a [u8],
    at: usize,
    end: usize,
}

/// Text the cut's lexer cannot account for: an unterminated literal or comment, or an escape
/// tree-sitter does not read.
#[derive(Debug)]
pub(super) struct Unlexable;

impl<'a> Lexemes<'a> {
    /// The tokens of `span` of `src` (offsets are `src`'s).
    pub(super) fn new(src: &'a [u8], span: Range<usize>) -> Self {
        Lexemes {
            src,
            at: span.start,
            end: span.end,
        }
    }
}

impl Iterator for Lexemes<'_> {
    type Item = Result<Range<usize>, Unlexable>;

    fn next(&mut self) -> Option<Self::Item> {
        let src = self.src;
        let mut i = self.at;
        loop {
            // Whitespace in a run, from a table (this loop reads every byte of a file).
            while i < self.end && CLASS[usize::from(src[i])] == SPACE {
                i += 1;
            }
            if i >= self.end {
                return None;
            }
            if src[i] != b'/' {
                break;
            }
            i = match src.get(i + 1) {
                Some(b'/') => memchr::memchr(b'\n', &src[i..]).map_or(src.len(), |n| i + n),
                Some(b'*') => match block_comment_end(src, i) {
                    Some(end) => end,
                    None => return self.fail(),
                },
                _ => break,
            };
        }
        let end = match src[i] {
            b'"' => string_end(src, i + 1),
            b'\'' => quote_end(src, i),
            b if is_word_byte(b) => word_end(src, i),
            _ => Some(i + 1),
        };
        match end {
            Some(end) => {
                self.at = end;
                Some(Ok(i..end))
            }
            None => self.fail(),
        }
    }
}

/// [`CLASS`] of the bytes a token never holds: ASCII whitespace, as tree-sitter-rust's
/// `extras` skip it.
const SPACE: u8 = 1;
/// [`CLASS`] of the bytes of a word ([`is_word_byte`]).
const WORD: u8 = 2;

/// Each byte's class: [`SPACE`], [`WORD`] or 0.
static CLASS: [u8; 256] = {
    let mut class = [0u8; 256];
    let mut b = 0;
    while b < 256 {
        let byte = b as u8;
        class[b] = if matches!(byte, b' ' | b'\t' | b'\n' | b'\r') {
            SPACE
        } else if byte.is_ascii_alphanumeric() || byte == b'_' || byte >= 0x80 {
            WORD
        } else {
            0
        };
        b += 1;
    }
    class
};

impl Lexemes<'_> {
    fn fail(&mut self) -> Option<Result<Range<usize>, Unlexable>> {
        self.at = self.end;
        Some(Err(Unlexable))
    }
}

/// Where the brackets of a span of Rust stop balancing ([`unbalanced`]).
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Unbalanced {
    /// A `)`, `]` or `}` with no bracket open.
    Unexpected(Range<usize>),
    /// The closer of the bracket opened last is needed `at` the end of a token: before a
    /// closer of another kind, or at the end of the span.
    Missing { at: usize, closer: &'static str },
}

/// Where the brackets of `span` of Rust `src`, outside literals and comments, stop
/// balancing; `None` when they balance or the span does not lex. Every bracket of Rust
/// closes, in a macro call's tokens too: a span of a file that does not balance is a syntax
/// error, whatever a parser's recovery makes of it.
pub(super) fn unbalanced(src: &[u8], span: Range<usize>) -> Option<Unbalanced> {
    let closer_of = |opener: u8| match opener {
        b'(' => ")",
        b'[' => "]",
        _ => "}",
    };
    let mut open: Vec<u8> = Vec::new();
    let mut last_end = span.start;
    for token in Lexemes::new(src, span) {
        let token = token.ok()?;
        match src[token.start] {
            b @ (b'(' | b'[' | b'{') => open.push(b),
            b @ (b')' | b']' | b'}') => match open.pop() {
                Some(opener) if closer_of(opener).as_bytes() == [b] => {}
                Some(opener) => {
                    return Some(Unbalanced::Missing {
                        at: last_end,
                        closer: closer_of(opener),
                    });
                }
                None => return Some(Unbalanced::Unexpected(token)),
            },
            _ => {}
        }
        last_end = token.end;
    }
    Some(Unbalanced::Missing {
        at: last_end,
        closer: closer_of(*open.last()?),
    })
}

/// Letters, digits, `_` and any byte of a non-ASCII character: the bytes of identifiers,
/// keywords and number literals (a non-ASCII whitespace character read as a word only
/// keeps items together).
pub(super) fn is_word_byte(b: u8) -> bool {
    CLASS[usize::from(b)] == WORD
}

fn word_at(src: &[u8], i: usize) -> &[u8] {
    let len = src[i..].iter().position(|&b| !is_word_byte(b));
    &src[i..len.map_or(src.len(), |len| i + len)]
}

/// Past the word at `i`, and past the literal it prefixes (`r"…"`, `br#"…"#`, `b'x'`, `c"…"`).
fn word_end(src: &[u8], i: usize) -> Option<usize> {
    let word = word_at(src, i);
    let end = i + word.len();
    match (word, src.get(end)) {
        (b"r" | b"br" | b"cr", Some(b'"' | b'#')) => raw_string_end(src, end),
        (b"b" | b"c", Some(b'"')) => string_end(src, end + 1),
        (b"b", Some(b'\'')) => quote_end(src, end),
        _ => Some(end),
    }
}

/// Past the string whose contents start at `i` (after its `"`).
pub(crate) fn string_end(src: &[u8], mut i: usize) -> Option<usize> {
    loop {
        match src.get(i)? {
            b'\\' => i = escape_end(src, i)?,
            b'"' => return Some(i + 1),
            _ => i += 1,
        }
    }
}

/// Past the escape sequence whose `\` is at `i`, as tree-sitter-rust lexes one: `\u` takes
/// four hex digits or `{` hex digits `}`, `\x` two, any other escape one character. `None`
/// for what it does not lex, though rustc may (`\u{1_F600}`): its parse would have an error
/// there, which can spread past the item.
fn escape_end(src: &[u8], i: usize) -> Option<usize> {
    let hex = |from: usize| {
        src[from.min(src.len())..]
            .iter()
            .take_while(|b| b.is_ascii_hexdigit())
            .count()
    };
    match *src.get(i + 1)? {
        b'x' => (hex(i + 2) >= 2).then_some(i + 4),
        b'u' if src.get(i + 2) == Some(&b'{') => {
            let digits = hex(i + 3);
            (digits > 0 && src.get(i + 3 + digits) == Some(&b'}')).then_some(i + 4 + digits)
        }
        b'u' => (hex(i + 2) >= 4).then_some(i + 6),
        first => Some(i + 1 + utf8_width(first)),
    }
}

/// The length of the UTF-8 character whose first byte is `first`.
fn utf8_width(first: u8) -> usize {
    match first {
        0xC0..0xE0 => 2,
        0xE0..0xF0 => 3,
        0xF0.. => 4,
        _ => 1,
    }
}

/// Past the raw string whose hashes (or quote) start at `i`; `r#ident` (a raw identifier)
/// is not one, and ends at `i`.
pub(crate) fn raw_string_end(src: &[u8], i: usize) -> Option<usize> {
    let hashes = src[i..].iter().take_while(|&&b| b == b'#').count();
    if src.get(i + hashes) != Some(&b'"') {
        return if hashes > 0 { Some(i) } else { None };
    }
    let mut at = i + hashes + 1;
    loop {
        at += memchr::memchr(b'"', &src[at..])? + 1;
        if src[at..]
            .iter()
            .take(hashes)
            .take_while(|&&b| b == b'#')
            .count()
            == hashes
        {
            return Some(at + hashes);
        }
    }
}

/// Past a char literal at `i` (`'x'`, `'\n'`, `'\u{1F600}'`, and `''`, which tree-sitter
/// reads as one), or past the `'` of a lifetime or a label.
pub(crate) fn quote_end(src: &[u8], i: usize) -> Option<usize> {
    match *src.get(i + 1)? {
        b'\'' => Some(i + 2),
        b'\\' => {
            let end = escape_end(src, i + 1)?;
            (src.get(end) == Some(&b'\'')).then_some(end + 1)
        }
        first => {
            let width = utf8_width(first);
            Some(if src.get(i + 1 + width) == Some(&b'\'') {
                i + 2 + width
            } else {
                i + 1
            })
        }
    }
}

/// Past the (nested) block comment that starts at `i`, as tree-sitter-rust's scanner reads
/// it, which the CLI's parse follows: `/*` nests and `*/` closes, but a `/` that ends a `//`
/// does not begin a `/*` (`/* //* */` is one whole comment there, not the start of a nested
/// one as for rustc).
pub(crate) fn block_comment_end(src: &[u8], i: usize) -> Option<usize> {
    #[derive(Clone, Copy)]
    enum After {
        Slash,
        Star,
        Other,
    }
    let mut depth = 1usize;
    let mut after = After::Other;
    let mut at = i + 2;
    while depth > 0 {
        after = match (after, *src.get(at)?) {
            (After::Slash, b'*') => {
                depth += 1;
                After::Other
            }
            (After::Star, b'/') => {
                depth -= 1;
                After::Other
            }
            (After::Star, b'*') | (After::Other, b'*') => After::Star,
            (After::Other, b'/') => After::Slash,
            _ => After::Other,
        };
        at += 1;
    }
    Some(at)
}
