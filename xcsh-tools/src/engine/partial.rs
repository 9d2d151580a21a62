//! Parsing a Rust file only where a match can be.
//!
//! A cold run parses each candidate file once and throws the tree away, and on patterns whose
//! literals occur in large files (`impl Default for $T { … }` in windows-sys's 0.9 MB
//! modules) parsing is nearly all of its time. Yet a match of a pattern whose root is not the
//! whole file lies inside one top-level item, and covers an occurrence of the pattern's
//! anchor literal ([`Anchors`](super::prefilter::Anchors)). So the file is cut, lexically,
//! into runs of whole top-level items ([`item_boundaries`]), and tree-sitter parses only the
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
//! Only for a tree nobody keeps: a warm session's [`ParseCache`](super::ParseCache) keeps
//! whole trees, which serve every later pattern, and asks for one whenever it would keep it.

use std::cell::RefCell;
use std::ops::Range;
use std::sync::OnceLock;

use ast_grep_core::tree_sitter::{LanguageExt as _, StrDoc};
use ast_grep_core::{AstGrep, Matcher as _};
use ast_grep_language::SupportLang;
use tree_sitter::{Parser, Point};

use super::Lang;
use super::matching::{Root, has_syntax_error};
use super::pattern::{LangOps, OpKind};
use super::prefilter::Anchors;
use super::rewrite::LineCounter;

/// Parsing only the anchored items pays when they are less than this share of the file.
const WORTH_IT: f64 = 0.8;

/// Files smaller than this are parsed whole: little is saved on them (half of the benchmark
/// corpus's files are this small, and hold 4% of its bytes), and a whole parse reports every
/// syntax error in them.
const SMALL_FILE: usize = 4 * 1024;

/// Words that can only start a top-level item, never continue one after a `}`.
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

thread_local! {
    /// One Rust parser per worker thread, for parses with included ranges (ast-grep's own
    /// cached parsers always parse whole files).
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// The ranges of a cold parse of `text` for the ops in `may_match`, whose anchors are
/// `anchors` (same order): `None` (the whole file) unless each of them is a pattern that
/// cannot match the whole file and has anchors.
pub(crate) fn ranges_for(
    text: &str,
    lang: Lang,
    ops: &LangOps,
    may_match: &[usize],
    anchors: &[Option<Anchors>],
) -> Option<Vec<Range<usize>>> {
    if lang != Lang::Rust || text.len() < SMALL_FILE {
        return None;
    }
    static SOURCE_FILE: OnceLock<u16> = OnceLock::new();
    let source_file = *SOURCE_FILE.get_or_init(|| {
        SupportLang::Rust
            .get_ts_language()
            .id_for_node_kind("source_file", true)
    });
    let mut occurrences = Vec::new();
    for (&i, anchors) in may_match.iter().zip(anchors) {
        let OpKind::Pattern { pattern, .. } = &ops.ops[i].kind else {
            return None;
        };
        let kinds = pattern.potential_kinds()?;
        if kinds.contains(usize::from(source_file)) {
            return None;
        }
        occurrences.extend(anchors.as_ref()?.occurrences());
    }
    anchored_items(text, occurrences)
}

/// The byte ranges of Rust `text` worth parsing to find every match that covers one of
/// `anchors` (`start..end` of literal occurrences), or `None` when the whole file should be
/// parsed: no anchor, no cut, or the anchored items are most of the file anyway.
fn anchored_items(text: &str, mut anchors: Vec<Range<usize>>) -> Option<Vec<Range<usize>>> {
    if anchors.is_empty() {
        return None;
    }
    let bounds = item_boundaries(text.as_bytes())?;
    anchors.sort_unstable_by_key(|a| a.start);
    let mut ranges: Vec<Range<usize>> = Vec::new();
    for anchor in anchors {
        // The runs the occurrence touches: usually one.
        let first = bounds.partition_point(|&b| b <= anchor.start) - 1;
        let last = bounds.partition_point(|&b| b < anchor.end.max(anchor.start + 1)) - 1;
        let run = bounds[first]..bounds[(last + 1).min(bounds.len() - 1)];
        match ranges.last_mut() {
            Some(prev) if run.start <= prev.end => prev.end = prev.end.max(run.end),
            _ => ranges.push(run),
        }
    }
    let covered: usize = ranges.iter().map(|r| r.len()).sum();
    ((covered as f64) < WORTH_IT * text.len() as f64).then_some(ranges)
}

/// Parses only `ranges` of `text` (from [`anchored_items`]); the whole file instead when that
/// parse has a syntax error. `None` only when tree-sitter gives up, as [`super::matching::parse`].
pub(crate) fn parse_ranges(text: &str, ranges: &[Range<usize>]) -> Option<Root> {
    let root = parse_included(text, ranges).map(|tree| {
        AstGrep::doc(StrDoc {
            src: text.to_owned(),
            lang: SupportLang::Rust,
            tree,
        })
    });
    match root {
        Some(root) if !has_syntax_error(&root) => Some(root),
        _ => super::matching::parse(text, Lang::Rust),
    }
}

/// For the syntax guard: the syntax errors of the top-level items of Rust `after` that are
/// not, text for text, items of `before` (each parsed alone), and when there are any, those of
/// the items of `before` that are not items of `after`. `None` when that cannot be told
/// cheaply: a small file, text the lexer cannot cut, or changed items that are most of the
/// file; the caller parses both whole.
///
/// Sound for the same reason as [`parse_ranges`]: each top-level item parses the same whatever
/// stands around it, so an item the change did not touch has the errors (or none) it had, and
/// a change introduces an error only in an item it touched: comparing the touched items'
/// errors, before and after, is comparing the files'.
pub(crate) fn changed_items_errors(before: &str, after: &str) -> Option<ChangedItemsErrors> {
    if after.len() < SMALL_FILE {
        return None;
    }
    let after_items = items(after)?;
    let before_items = items(before).unwrap_or_default();
    let after_ranges = touched(&after_items, &before_items)?;
    if after_ranges.is_empty() {
        // Only items the file already had, reordered or removed: nothing new to parse.
        return Some(ChangedItemsErrors::default());
    }
    let errors = |text: &str, ranges: &[Range<usize>]| {
        parse_included(text, ranges)
            .map(|tree| super::matching::errors_under(tree.root_node(), text))
    };
    let after_errors = errors(after, &after_ranges)?;
    if after_errors.is_empty() {
        return Some(ChangedItemsErrors::default());
    }
    let before_errors = match touched(&before_items, &after_items) {
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

/// What [`changed_items_errors`] found: the errors of the changed items after the change and,
/// when there are any, before it.
#[derive(Debug, Default)]
pub(crate) struct ChangedItemsErrors {
    pub after: Vec<super::SyntaxErrorNode>,
    pub before: Vec<super::SyntaxErrorNode>,
}

/// The top-level items of Rust `text`, as (byte range, text).
fn items(text: &str) -> Option<Vec<(Range<usize>, &str)>> {
    let bounds = item_boundaries(text.as_bytes())?;
    Some(
        bounds
            .windows(2)
            .map(|w| (w[0]..w[1], &text[w[0]..w[1]]))
            .collect(),
    )
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

/// tree-sitter's parse of only `ranges` of Rust `text`, with this thread's parser.
fn parse_included(text: &str, ranges: &[Range<usize>]) -> Option<tree_sitter::Tree> {
    let included = with_points(text, ranges);
    PARSER.with(|cell| {
        let mut cell = cell.borrow_mut();
        let parser = match &mut *cell {
            Some(parser) => parser,
            slot => {
                let mut parser = Parser::new();
                parser
                    .set_language(&SupportLang::Rust.get_ts_language())
                    .ok()?;
                slot.insert(parser)
            }
        };
        parser.set_included_ranges(&included).ok()?;
        parser.parse(text, None)
    })
}

/// tree-sitter's ranges carry line and column (in bytes) besides byte offsets.
fn with_points(src: &str, ranges: &[Range<usize>]) -> Vec<tree_sitter::Range> {
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

/// Offsets that cut a Rust file into runs of whole top-level items: `0`, each place where
/// one item ends and the next begins (as far as a lexer can tell), and the file's length.
/// `None` when the text does not lex as Rust.
fn item_boundaries(src: &[u8]) -> Option<Vec<usize>> {
    // A shebang line is not a token (an inner attribute, `#![…]`, is); tree-sitter reads one
    // behind a byte order mark too.
    if src.starts_with(b"\xEF\xBB\xBF") || (src.starts_with(b"#!") && !src.starts_with(b"#![")) {
        return None;
    }
    let mut bounds = vec![0];
    let mut depth = 0usize;
    // After a `}` that closed to the top level: where it ended, until the next token says
    // whether an item begins there.
    let mut after_brace: Option<usize> = None;
    let mut i = 0;
    while i < src.len() {
        let b = src[i];
        match (b, src.get(i + 1)) {
            (b' ' | b'\t' | b'\n' | b'\r', _) => {
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
            _ => {}
        }
        if let Some(end) = after_brace.take()
            && (b == b'#' || ITEM_STARTS.contains(&word_at(src, i)))
        {
            bounds.push(end);
        }
        i = match b {
            b'(' | b'[' | b'{' => {
                depth += 1;
                i + 1
            }
            b')' | b']' => {
                depth = depth.checked_sub(1)?;
                i + 1
            }
            b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    after_brace = Some(i + 1);
                }
                i + 1
            }
            b';' => {
                if depth == 0 {
                    bounds.push(i + 1);
                }
                i + 1
            }
            b'"' => string_end(src, i + 1)?,
            b'\'' => quote_end(src, i)?,
            _ if is_word_byte(b) => word_end(src, i)?,
            _ => i + 1,
        };
    }
    if depth != 0 {
        return None;
    }
    if bounds.last() != Some(&src.len()) {
        bounds.push(src.len());
    }
    Some(bounds)
}

/// Letters, digits, `_` and any byte of a non-ASCII character: the bytes of identifiers,
/// keywords and number literals (a non-ASCII whitespace character read as a word only
/// keeps items together).
fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

fn word_at(src: &[u8], i: usize) -> &[u8] {
    let len = src[i..].iter().take_while(|&&b| is_word_byte(b)).count();
    &src[i..i + len]
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The runs of `src`, as text.
    fn runs(src: &str) -> Option<Vec<&str>> {
        let b = item_boundaries(src.as_bytes())?;
        Some(b.windows(2).map(|w| &src[w[0]..w[1]]).collect())
    }

    #[test]
    fn items_are_cut_after_a_semicolon_or_a_closing_brace_before_an_item() {
        let src = "use a::b;\nfn f() { g(); }\n#[derive(Default)]\nstruct S { x: u8 }\nimpl S {}";
        assert_eq!(
            runs(src).unwrap(),
            [
                "use a::b;",
                "\nfn f() { g(); }",
                "\n#[derive(Default)]\nstruct S { x: u8 }",
                "\nimpl S {}"
            ]
        );
    }

    #[test]
    fn a_brace_followed_by_what_continues_an_item_is_no_cut() {
        for src in [
            "const X: u8 = if C { 1 } else { 2 };",
            "const X: S = S { a: 1 }.with(2);",
            "struct A<const N: usize = { 1 }> { a: [u8; N] }",
            "m! { a } n! { b }",
        ] {
            assert_eq!(runs(src).unwrap(), [src], "{src}");
        }
    }

    #[test]
    fn brackets_inside_literals_and_comments_do_not_count() {
        let src = concat!(
            "const A: &str = \"}; fn\\\" {\";\n",
            "const B: &str = r#\"\"}\"; {\"#;\n",
            "const C: char = '}';\nconst D: u8 = b'{';\nconst E: char = '\\'';\n",
            "fn f<'a>(x: &'a str) -> &'a str { 'l: loop { break 'l x; } }\n",
            "/* { /* nested } */ ( */ // }\n",
            "fn r#type() { let r#fn = br\"{\"; let c = c\"}\"; let u = '\\u{7D}'; let e = 'é'; }\n",
        );
        let runs = runs(src).unwrap();
        assert_eq!(runs.len(), 7, "{runs:#?}");
        assert!(runs[6].starts_with("\n/* { /* nested } */ ( */ // }\nfn r#type()"));
    }

    #[test]
    fn block_comments_nest_as_tree_sitter_reads_them() {
        // `//*` opens nothing for tree-sitter-rust (rustc nests there): the comment ends at
        // the first `*/`, and the `;` inside the string is no cut.
        assert_eq!(
            runs("/* //* */ const S: &str = \" */ ; \"; fn f() {}").unwrap(),
            ["/* //* */ const S: &str = \" */ ; \";", " fn f() {}"]
        );
        assert_eq!(
            runs("/* /* */ ; */ fn f() {} /***/ const X: u8 = 1;").unwrap(),
            ["/* /* */ ; */ fn f() {}", " /***/ const X: u8 = 1;"]
        );
        assert_eq!(
            runs("const C: [char; 2] = ['\\u{7D}', ''];").unwrap().len(),
            1
        );
    }

    #[test]
    fn what_does_not_lex_is_not_cut() {
        for src in [
            "fn f() { \"open }",
            "fn f() { /* open }",
            "fn f() { ( }",
            "fn f() } {",
            "#!/usr/bin/env run-cargo-script\nfn main() {}",
            "\u{feff}fn main() {}",
            "const S: &str = \"\\u{1_F600}\"; fn f() {}",
            "const C: char = '\\x4'; fn f() {}",
        ] {
            assert_eq!(item_boundaries(src.as_bytes()), None, "{src}");
        }
        assert!(item_boundaries(b"#![allow(x)]\nfn main() {}").is_some());
    }

    /// Parsing one run alone gives its items the trees a whole-file parse gives them.
    fn check_runs_parse_alone(path: &str, src: &str) -> usize {
        let whole = super::super::matching::parse(src, Lang::Rust).unwrap();
        let whole_root = whole.root();
        let whole_node = whole_root.get_inner_node();
        if whole_node.has_error() {
            return 0;
        }
        let Some(bounds) = item_boundaries(src.as_bytes()) else {
            panic!("{path}: no cut in a file without syntax errors");
        };
        let mut checked = 0;
        let mut cursor = whole_node.walk();
        let top: Vec<_> = whole_node.children(&mut cursor).collect();
        for w in bounds.windows(2) {
            let run = w[0]..w[1];
            let part = parse_ranges(src, std::slice::from_ref(&run)).unwrap();
            let part_node = part.root().get_inner_node();
            let mut c = part_node.walk();
            let ours: Vec<_> = part_node
                .children(&mut c)
                .map(|n| (n.byte_range(), n.start_position(), n.to_sexp()))
                .collect();
            let theirs: Vec<_> = top
                .iter()
                .filter(|n| run.start <= n.start_byte() && n.end_byte() <= run.end)
                .map(|n| (n.byte_range(), n.start_position(), n.to_sexp()))
                .collect();
            assert_eq!(ours, theirs, "{path}: run {run:?}");
            checked += 1;
        }
        checked
    }

    #[test]
    fn runs_parse_alone_as_in_the_whole_file() {
        let src = concat!(
            "//! Doc.\n#![allow(dead_code)]\nuse std::fmt;\n",
            "/// S.\n#[derive(Debug, Default)]\npub struct S<'a> { x: &'a str }\n",
            "impl<'a> Default for Wrapper<'a> { fn default() -> Self { Self(\"}\") } }\n",
            "macro_rules! m { ($x:expr) => { $x + 1 }; }\nm!(1);\n",
            "const X: u8 = if true { 1 } else { 2 };\n",
            "unsafe extern \"C\" { fn g(); }\npub(crate) mod inner { fn h() {} }\n",
        );
        assert!(
            !super::super::matching::parse(src, Lang::Rust)
                .unwrap()
                .root()
                .get_inner_node()
                .has_error()
        );
        assert_eq!(check_runs_parse_alone("inline", src), 7);
    }

    /// The same over xcsh's own sources.
    #[test]
    fn runs_parse_alone_in_this_repository() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
        let (files, runs) = check_tree(root);
        assert!(
            files > 100 && runs > 10 * files,
            "{files} files, {runs} runs"
        );
    }

    /// The same over a tree of real sources: `XCSH_PARTIAL_CORPUS=dir cargo test --release
    /// -p xcsh-tools runs_parse_alone_on_a_corpus -- --ignored`.
    #[test]
    #[ignore = "minutes; needs XCSH_PARTIAL_CORPUS"]
    fn runs_parse_alone_on_a_corpus() {
        let dir = std::env::var("XCSH_PARTIAL_CORPUS").expect("XCSH_PARTIAL_CORPUS");
        let (files, runs) = check_tree(&dir);
        eprintln!("{files} files, {runs} runs parsed alone as in the whole file");
        assert!(runs > files);
    }

    /// [`check_runs_parse_alone`] on every `.rs` file under `dir` (ignore rules apply):
    /// `(files, runs)`.
    fn check_tree(dir: &str) -> (usize, usize) {
        let (mut files, mut runs) = (0, 0);
        for entry in ignore::WalkBuilder::new(dir).build() {
            let entry = entry.unwrap();
            let path = entry.path();
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let Ok(src) = std::fs::read_to_string(path) else {
                continue;
            };
            runs += check_runs_parse_alone(&path.display().to_string(), &src);
            files += 1;
        }
        (files, runs)
    }
}
