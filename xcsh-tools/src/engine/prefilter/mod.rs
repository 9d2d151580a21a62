//! Skips files that cannot match before they are parsed.
//!
//! Parsing dominates the cost of a run, so a file is parsed only when its bytes contain every
//! literal that a match of some op needs. The literals come from the pattern's own leaf
//! tokens, read exactly as ast-grep's matcher (smart strictness) compares them:
//!
//! * A **named leaf** (identifier, number, string fragment, …) matches only a node with the
//!   same text, so that text must occur in the file.
//! * An **anonymous token** (keyword, punctuation) matches any node of the same kind — ast-grep
//!   does not compare its text. A keyword's kind is its text, so the keyword must occur; but
//!   punctuation is common and not worth checking on its own. Anonymous tokens right after a
//!   `$$$` list are skipped by the matcher, so they are not required.
//! * A metavariable needs nothing.
//! * The pattern's `fixed_string()` (its longest leaf text, punctuation included) must occur
//!   in the file: the CLI itself skips files without it (after parsing them), so this skips
//!   nothing the CLI would change, and it makes `$A + $B` or `$X?` selective. When the leaf is
//!   compared by its text, the line-comment rule below applies to it too; and in Rust an
//!   operator glued to a following `=` does not count, since that is a compound assignment
//!   (`+=`), nor does a `+` before `?` or a lifetime, which joins trait bounds
//!   ([`RustOperator`]).
//!
//! Within a file, the occurrences of the first literal also tell which subtrees can hold a
//! match at all ([`Anchors`]): a match covers one of them.
//!
//! A file kept by a [`ParseCache`](super::ParseCache) comes with its [`Words`]: a literal with
//! both word boundaries (below) that they lack rules the file out before any search.
//!
//! A word-like literal from an identifier or a keyword is also required to end at a word
//! boundary: tree-sitter lexes identifiers (and keywords, through the grammar's `word` token)
//! greedily, so such a token is never followed by `[A-Za-z0-9_]`. In Rust, Go, JavaScript and
//! TypeScript it must also start at one (no such token directly follows a letter or `_` in a
//! syntactically valid file); Python is exempt because `0xfor x` is valid Python, and so are
//! the other languages whose identifiers are lexed that way and whose grammars have a `word`
//! token (Java, Kotlin, C, C++, C#, Scala, Lua, Ruby), where nobody has checked every number
//! literal's suffixes. (Swift's grammar has no `word` token: `x isInt` is `x is Int`.) An HTML tag
//! name both starts and ends at one: the grammar's scanner reads it right after `<` or `</`,
//! for as long as letters and digits follow, so `tt` in `<tt>` is selective although `tt`
//! occurs inside words in nearly every page.
//!
//! In Rust, Go and Python an occurrence that is surely inside a line comment does not count:
//! the line holds a comment marker (`//`, `#`) before it, with no quote character anywhere
//! before the occurrence on that line and no `*/` after the marker. Outside string literals
//! and block comments such a marker always starts a comment in these languages, and a quote
//! or a `*/` is what it would take for the marker to be inside a literal or a comment that
//! closes before the occurrence; when in doubt the occurrence counts. (JavaScript and
//! TypeScript are left out: `//` can be part of a regular-expression literal.)
//!
//! Those rules rest on how the grammars named above lex. Every other language gets only what
//! holds in any grammar ([`Rules`]):
//! a named leaf's exact text, occurrences anywhere (no word boundaries, no comment rule), and
//! no keywords at all, since some grammars match keywords case-insensitively (PHP's
//! `FUNCTION`, CSS's `AND`, HTML's `<!DOCTYPE`) and a keyword's kind is then not its text.
//!
//! Syntax errors are where the filter may skip a file the matcher would change: ast-grep
//! matches a keyword that is not in the text through a zero-width MISSING token that
//! tree-sitter invents while recovering, and steps over an ERROR node (an extra) wherever it
//! stands, so `impl Default bogus for X {}` matches `impl Default for $T {}` although the two
//! words are not side by side ([`sequence`]).

use std::sync::Arc;

use ast_grep_core::Pattern;
use ast_grep_core::matcher::PatternNode;
use ast_grep_core::meta_var::MetaVariable;
use ast_grep_core::tree_sitter::{LanguageExt, TSLanguage};
use memchr::memmem;

use super::Lang;
use sequence::Then;

mod sequence;
mod shape;
mod words;

pub(crate) use shape::Shape;
pub(crate) use shape::lexer::Tokens;
/// Broad Rust patterns, for differential tests elsewhere in the engine.
#[cfg(test)]
pub(crate) use shape::tests::BROAD;

pub(crate) use words::Words;

/// Text that every match of a pattern contains.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Literal {
    pub text: String,
    /// The character before the text must not be `[A-Za-z_]`.
    pub word_start: bool,
    /// The character after the text must not be `[A-Za-z0-9_]`.
    pub word_end: bool,
    /// Occurrences inside comments count too (no line-comment rule applies).
    pub anywhere: bool,
    /// The literal every match holds right after this one, with only what the matcher
    /// skips in between ([`sequence`]): an occurrence counts only when that one follows.
    pub then: Option<Next>,
    /// The literal is a Rust operator: an occurrence counts only when what follows may
    /// begin its operand ([`RustOperator`]).
    pub operator: Option<RustOperator>,
}

/// The literal that follows another in every match ([`Literal::then`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Next {
    pub text: String,
    /// In the gap before it, a `'` or `"` rules the occurrence out: in Rust, outside a token
    /// tree, it can only begin a lifetime, a label, a char or a string literal, named nodes
    /// the matcher never steps over. Set only when the pattern's own gap holds no quote
    /// (`impl<'a>` links `impl` to `a` across one) and neither word is in a token tree, where
    /// `'` is an unnamed token of its own (`m!(a 'static b)` matches `m!(a b)`).
    pub quote_rules_out: bool,
}

/// The shape of `pattern` in `lang` ([`shape`]), where a lexer for the language exists
/// (Rust) and the pattern has a token to stand on. `XCSH_NO_SHAPE_PREFILTER` set in the
/// environment turns shapes off (to measure what they save, or to rule them out).
pub(crate) fn shape_of(pattern: &Pattern, lang: Lang) -> Option<Shape> {
    static OFF: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    if lang != Lang::Rust
        || (!cfg!(test)
            && *OFF.get_or_init(|| std::env::var_os("XCSH_NO_SHAPE_PREFILTER").is_some()))
    {
        return None;
    }
    let ts = lang.support_lang().get_ts_language();
    Shape::of(&pattern.node, &ts, sequence::anonymous_words(&ts))
}

/// The literals a match of `pattern` in `lang` needs, rarest-looking (longest) first.
pub(crate) fn required_literals(pattern: &Pattern, lang: Lang) -> Vec<Literal> {
    let mut out = Collector::new(lang, true).run(&pattern.node);
    // The CLI skips every file whose text does not contain the pattern's `fixed_string()` (its
    // longest leaf text, punctuation included), so requiring it too can only skip files the
    // CLI skips; it makes punctuation-only patterns such as `$A + $B` selective.
    let fixed = pattern.fixed_string();
    if !fixed.is_empty() && !out.iter().any(|lit| lit.text == fixed) {
        let ts = lang.support_lang().get_ts_language();
        out.push(Literal {
            // A token the matcher compares by its text must stand in the code, so an
            // occurrence in a line comment does not count; one compared by a kind that is
            // not its text (a case-insensitive keyword) may match other text: anywhere.
            anywhere: !is_compared_by_text(&pattern.node, &fixed, &ts),
            operator: RustOperator::of(lang, &fixed),
            text: fixed.into_owned(),
            ..Literal::default()
        });
    }
    out.sort_by_key(|lit| std::cmp::Reverse(lit.text.len()));
    out.dedup();
    out
}

/// The literals a match of `pattern` needs from its own leaves only: what a `pattern` inside
/// a YAML rule needs, where the CLI's `fixed_string()` shortcut does not apply (`ast-grep
/// scan` parses every file of the rule's language).
pub(crate) fn leaf_literals(pattern: &Pattern, lang: Lang) -> Vec<Literal> {
    Collector::new(lang, false).run(&pattern.node)
}

/// Walks a pattern's leaves in source order, collecting their literals and, when `link`,
/// which word-like literal directly follows which ([`sequence`]).
struct Collector {
    lang: Lang,
    ts: TSLanguage,
    out: Vec<Literal>,
    link: bool,
    /// The last word-like literal, if nothing but punctuation has come since.
    last_word: Option<usize>,
    /// Whether that punctuation holds a quote.
    gap_quote: bool,
    /// How many token trees (a macro's arguments, an attribute's) the walk is inside.
    token_trees: usize,
}

impl Collector {
    fn new(lang: Lang, link: bool) -> Self {
        let rules = Rules::of(lang);
        Collector {
            lang,
            ts: lang.support_lang().get_ts_language(),
            out: Vec::new(),
            // Only where keywords are literals, words are lexed greedily, and every extra
            // (comment, preprocessor line, line continuation) starts with a character the gap
            // reader stops at. Ruby's heredoc bodies are extras too, words and all.
            link: link
                && matches!(rules, Rules::BothBoundaries | Rules::WordEnd)
                && lang != Lang::Ruby,
            last_word: None,
            gap_quote: false,
            token_trees: 0,
        }
    }

    fn run(mut self, node: &PatternNode) -> Vec<Literal> {
        self.visit(node);
        self.out
    }

    fn visit(&mut self, node: &PatternNode) {
        match node {
            PatternNode::MetaVar { .. } => self.last_word = None,
            PatternNode::Terminal {
                text,
                is_named,
                kind_id,
            } => {
                let kind = self.ts.node_kind_for_id(*kind_id).unwrap_or_default();
                match terminal_literal(text, *is_named, kind, self.lang) {
                    Some(lit) => self.push(lit),
                    // Punctuation is stepped over in the gap; anything else ends a sequence.
                    None if *is_named || (is_ascii_word(text) && kind != text.as_str()) => {
                        self.last_word = None;
                    }
                    None => self.gap_quote |= text.contains(['\'', '"']),
                }
            }
            PatternNode::Internal { children, kind_id } => {
                let token_tree = self
                    .ts
                    .node_kind_for_id(*kind_id)
                    .is_some_and(|kind| kind.starts_with("token_"));
                self.token_trees += usize::from(token_tree);
                // After `$$$`, ast-grep skips the anonymous tokens that follow before matching
                // the next significant node, so they are not required.
                let mut after_ellipsis = false;
                for child in children {
                    match child {
                        PatternNode::MetaVar {
                            meta_var: MetaVariable::Multiple | MetaVariable::MultiCapture(_),
                        } => {
                            after_ellipsis = true;
                            self.last_word = None;
                        }
                        PatternNode::Terminal {
                            is_named: false, ..
                        } if after_ellipsis => {}
                        _ => {
                            after_ellipsis = false;
                            self.visit(child);
                        }
                    }
                }
                // The matcher lets a node have more children after the pattern's last one,
                // named ones too (`Some(v) if ok =>` matches `Some(v) =>`): no sequence runs
                // past the end of a node.
                self.last_word = None;
                self.token_trees -= usize::from(token_tree);
            }
        }
    }

    fn push(&mut self, lit: Literal) {
        let word = self.link && lit.word_end && is_ascii_word(&lit.text);
        if word && let Some(last) = self.last_word {
            self.out[last].then = Some(Next {
                text: lit.text.clone(),
                // Inside a token tree a quote is a token of its own (`m!(a 'static b)`).
                quote_rules_out: self.lang == Lang::Rust
                    && !self.gap_quote
                    && self.token_trees == 0,
            });
        }
        self.last_word = word.then_some(self.out.len());
        self.gap_quote = false;
        self.out.push(lit);
    }
}

/// Which of the lexical rules above hold in a language.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Rules {
    /// Rust, Go, JavaScript, TypeScript, TSX: keywords, both word boundaries.
    BothBoundaries,
    /// Python and the languages lexed like it (case-sensitive keywords, greedy
    /// `[A-Za-z_][A-Za-z0-9_]*`-style identifiers): keywords, the word boundary at the end only.
    WordEnd,
    /// HTML: tag names start and end at a word boundary; other named leaves as below.
    Html,
    /// Everything else: only the exact text of named leaves, found anywhere.
    NamedTextOnly,
}

impl Rules {
    fn of(lang: Lang) -> Self {
        match lang {
            Lang::Rust | Lang::Go | Lang::JavaScript | Lang::TypeScript | Lang::Tsx => {
                Rules::BothBoundaries
            }
            Lang::Python
            | Lang::Java
            | Lang::Kotlin
            | Lang::C
            | Lang::Cpp
            | Lang::CSharp
            | Lang::Scala
            | Lang::Lua
            | Lang::Ruby => Rules::WordEnd,
            Lang::Html => Rules::Html,
            _ => Rules::NamedTextOnly,
        }
    }
}

fn terminal_literal(text: &str, is_named: bool, kind: &str, lang: Lang) -> Option<Literal> {
    if text.is_empty() {
        return None;
    }
    let rules = Rules::of(lang);
    if rules == Rules::Html && is_named && kind == "tag_name" && is_ascii_word(text) {
        return Some(Literal {
            text: text.to_owned(),
            word_start: true,
            word_end: true,
            anywhere: true,
            ..Literal::default()
        });
    }
    if matches!(rules, Rules::NamedTextOnly | Rules::Html) {
        // A named leaf matches only a node with the same text, in any grammar.
        return is_named.then(|| Literal {
            text: text.to_owned(),
            word_start: false,
            word_end: false,
            anywhere: true,
            ..Literal::default()
        });
    }
    let wordlike = is_ascii_word(text);
    // Python allows a number glued to a keyword (`0xfor x`, `1if c else 2`).
    let word_start_holds = rules == Rules::BothBoundaries;
    if is_named {
        let identifier = wordlike && kind.ends_with("identifier");
        return Some(Literal {
            text: text.to_owned(),
            word_start: identifier && word_start_holds,
            word_end: identifier,
            anywhere: false,
            ..Literal::default()
        });
    }
    // Anonymous: only keywords (whose kind is their own text) are worth and safe to require.
    (wordlike && text.len() >= 2 && kind == text).then(|| Literal {
        text: text.to_owned(),
        word_start: word_start_holds,
        word_end: true,
        anywhere: false,
        ..Literal::default()
    })
}

/// Whether every leaf of the pattern with this text matches only a token with the same text:
/// a named leaf (compared by text), or an anonymous one whose kind is its text.
fn is_compared_by_text(node: &PatternNode, text: &str, ts: &TSLanguage) -> bool {
    match node {
        PatternNode::MetaVar { .. } => true,
        PatternNode::Terminal {
            text: leaf,
            is_named,
            kind_id,
        } => leaf != text || *is_named || ts.node_kind_for_id(*kind_id) == Some(leaf.as_str()),
        PatternNode::Internal { children, .. } => children
            .iter()
            .all(|child| is_compared_by_text(child, text, ts)),
    }
}

/// A Rust operator token, whose operand cannot begin with some characters: an occurrence
/// followed by one of them is another token or another use of the same characters.
///
/// * Directly followed by `=`, it is a compound assignment (`+` in `+=`): no expression, type
///   or pattern begins with `=`. (`<`, `>`, `!` and `=` are not operators here: `Vec<u8>= v`
///   closes a generic list right before an `=`.)
/// * `+` followed by `?` or by a lifetime (`'a` that is neither a char literal `'a'` nor a
///   label `'a:`, which begins a labelled block or loop) joins trait bounds
///   (`T: Clone + ?Sized + 'a`): no expression begins with either.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct RustOperator {
    plus: bool,
}

impl RustOperator {
    fn of(lang: Lang, text: &str) -> Option<Self> {
        (lang == Lang::Rust && matches!(text, "+" | "-" | "*" | "/" | "%" | "^" | "&" | "|"))
            .then_some(RustOperator { plus: text == "+" })
    }

    /// Whether an occurrence ending at `end` may be the operator.
    fn may_be_operator(self, haystack: &[u8], end: usize) -> bool {
        if haystack.get(end) == Some(&b'=') {
            return false;
        }
        if !self.plus {
            return true;
        }
        let rest = &haystack[end..];
        let rest = &rest[rest.iter().take_while(|b| b.is_ascii_whitespace()).count()..];
        match rest {
            [b'?', ..] => false,
            [b'\'', tail @ ..] => !is_bound_lifetime(tail),
            _ => true,
        }
    }
}

/// Whether the text after a `'` is a lifetime's name that neither closes a char literal nor
/// names a label. Anything unusual (a raw lifetime, a non-ASCII name, a comment or a vertical
/// tab before what comes next, where a label's `:` may hide) is not judged.
fn is_bound_lifetime(tail: &[u8]) -> bool {
    let name = tail
        .iter()
        .take_while(|b| b.is_ascii_alphanumeric() || **b == b'_')
        .count();
    if name == 0 || tail[0].is_ascii_digit() {
        return false;
    }
    let next = tail[name..].iter().find(|b| !b.is_ascii_whitespace());
    next.is_none_or(|&b| b.is_ascii_graphic() && !matches!(b, b'\'' | b'#' | b':' | b'/'))
}

fn is_ascii_word(text: &str) -> bool {
    let mut bytes = text.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

/// How to recognise an occurrence that is surely in a line comment.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LineComment {
    marker: &'static [u8],
    /// Characters that open a literal in which the marker would not start a comment.
    quotes: &'static [u8],
}

impl LineComment {
    /// The rule for `lang`, if it has one.
    pub fn of(lang: Lang) -> Option<Self> {
        match lang {
            Lang::Rust => Some(Self {
                marker: b"//",
                quotes: b"\"",
            }),
            Lang::Go => Some(Self {
                marker: b"//",
                quotes: b"\"`",
            }),
            Lang::Python => Some(Self {
                marker: b"#",
                quotes: b"\"'",
            }),
            // `//` may start a regular-expression literal; other languages: not judged.
            _ => None,
        }
    }

    /// Whether the text at `at` is surely inside a line comment.
    fn surely_covers(&self, haystack: &[u8], at: usize) -> bool {
        let line_start = memchr::memrchr(b'\n', &haystack[..at]).map_or(0, |nl| nl + 1);
        let line = &haystack[line_start..at];
        let Some(marker) = memmem::find(line, self.marker) else {
            return false;
        };
        !line.iter().any(|b| self.quotes.contains(b))
            && memmem::find(&line[marker..], b"*/").is_none()
    }
}

/// A grammar's anonymous words, read from it when a sequence first needs them.
struct AnonymousWords {
    lang: Lang,
    words: Option<sequence::Words>,
}

impl AnonymousWords {
    fn get(&mut self) -> sequence::Words {
        let lang = self.lang;
        Arc::clone(self.words.get_or_insert_with(|| {
            sequence::anonymous_words(&lang.support_lang().get_ts_language())
        }))
    }
}

struct Finder {
    finder: memmem::Finder<'static>,
    /// The literal's [`Words::hash`] when it is an identifier with both word boundaries: a
    /// text's [`Words`] then say whether it can occur at all.
    word: Option<u64>,
    word_start: bool,
    word_end: bool,
    operator: Option<RustOperator>,
    comment: Option<LineComment>,
    then: Option<Then>,
}

impl Finder {
    fn new(lit: &Literal, comment: Option<LineComment>, words: &mut AnonymousWords) -> Self {
        Self {
            finder: memmem::Finder::new(lit.text.as_bytes()).into_owned(),
            word: (lit.word_start && lit.word_end && is_ascii_word(&lit.text))
                .then(|| Words::hash(lit.text.as_bytes())),
            word_start: lit.word_start,
            word_end: lit.word_end,
            operator: lit.operator,
            comment: if lit.anywhere { None } else { comment },
            then: lit.then.as_ref().map(|next| Then::new(next, words.get())),
        }
    }

    /// Start offsets of the occurrences that respect the word boundaries, in order.
    fn occurrences<'h>(&'h self, haystack: &'h [u8]) -> impl Iterator<Item = usize> + 'h {
        let len = self.finder.needle().len();
        self.finder.find_iter(haystack).filter(move |&start| {
            let end = start + len;
            let start_ok = !self.word_start
                || start == 0
                || !(haystack[start - 1].is_ascii_alphabetic() || haystack[start - 1] == b'_');
            let end_ok = !self.word_end
                || haystack
                    .get(end)
                    .is_none_or(|b| !(b.is_ascii_alphanumeric() || *b == b'_'));
            start_ok
                && end_ok
                && self
                    .operator
                    .is_none_or(|op| op.may_be_operator(haystack, end))
                && !self
                    .comment
                    .is_some_and(|c| c.surely_covers(haystack, start))
                && self.then.as_ref().is_none_or(|t| t.follows(haystack, end))
        })
    }

    fn occurs_in(&self, haystack: &[u8]) -> bool {
        self.occurrences(haystack).next().is_some()
    }

    /// Whether the text whose words are `words` (when known) may hold an occurrence: `false`
    /// only when it surely holds none, found without searching it.
    fn may_occur_in(&self, words: Option<&Words>) -> bool {
        self.word
            .zip(words)
            .is_none_or(|(word, words)| words.may_hold(word))
    }
}

/// Where one literal that every match of an op contains occurs in a file: a match can only
/// be a node whose byte range covers one of these, so the rest of the tree need not be
/// visited.
pub(crate) struct Anchors {
    starts: Vec<usize>,
    len: usize,
}

impl Anchors {
    /// Each occurrence's byte range, in order.
    pub fn occurrences(&self) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        self.starts.iter().map(|&p| p..p + self.len)
    }

    /// Whether there is no occurrence at all.
    pub fn is_empty(&self) -> bool {
        self.starts.is_empty()
    }

    /// Whether `start..end` covers a whole occurrence.
    pub fn covered_by(&self, start: usize, end: usize) -> bool {
        let i = self.starts.partition_point(|&p| p < start);
        self.starts.get(i).is_some_and(|&p| p + self.len <= end)
    }
}

/// Decides, from a file's bytes alone, which ops may match it.
///
/// One alternative per op: the op may match only if every one of its literals occurs. An op
/// without literals may match any file.
pub(crate) struct Prefilter {
    alternatives: Vec<Vec<Finder>>,
    /// Each op's shapes ([`Prefilter::with_shapes`]): a pattern's own, or the shapes of a
    /// rule's patterns.
    shapes: Vec<Vec<Shape>>,
    /// An op may match when any one of its literals occurs (not all): the near-miss search.
    any: bool,
}

impl Prefilter {
    /// `literals[i]` are the literals of the i-th op of `lang`.
    pub fn new(lang: Lang, literals: Vec<Vec<Literal>>) -> Self {
        let comment = LineComment::of(lang);
        let mut words = AnonymousWords { lang, words: None };
        Self {
            alternatives: literals
                .iter()
                .map(|lits| {
                    lits.iter()
                        .map(|l| Finder::new(l, comment, &mut words))
                        .collect()
                })
                .collect(),
            shapes: Vec::new(),
            any: false,
        }
    }

    /// The same prefilter, with `shapes[i]` the shapes of the i-th op: for a pattern its own
    /// (its anchors are then where the shape may match, [`Prefilter::shape_anchors`]), for a
    /// rule those of the patterns a match needs ([`Prefilter::shapes_may_match`]).
    pub fn with_shapes(self, shapes: Vec<Vec<Shape>>) -> Self {
        Self { shapes, ..self }
    }

    /// Forgets every op's shapes: files are then ruled in or out by literals alone.
    pub fn clear_shapes(&mut self) {
        self.shapes.clear();
    }

    /// Whether op `i` has a shape.
    pub fn has_shape(&self, i: usize) -> bool {
        self.shapes.get(i).is_some_and(|s| !s.is_empty())
    }

    /// Where op `i`'s (first) shape may match in `tokens` (the file's): `None` when it has
    /// none. An empty list means that no match can be in the file.
    pub fn shape_anchors(&self, i: usize, tokens: &Tokens<'_>) -> Option<Anchors> {
        let shape = self.shapes.get(i)?.first()?;
        let (starts, len) = shape.anchors(tokens);
        Some(Anchors { starts, len })
    }

    /// Whether every shape of op `i` may match somewhere in `tokens`.
    pub fn shapes_may_match(&self, i: usize, tokens: &Tokens<'_>) -> bool {
        self.shapes
            .get(i)
            .is_none_or(|shapes| shapes.iter().all(|s| s.may_match(tokens)))
    }

    /// A prefilter letting through the files that hold any one literal of an op (all when
    /// the op has none).
    pub fn any_of(lang: Lang, literals: Vec<Vec<Literal>>) -> Self {
        Self {
            any: true,
            ..Self::new(lang, literals)
        }
    }

    /// Whether op `i` (in this language's order) may match a file with these bytes, whose
    /// [`Words`] are `words` when they were kept with it (they rule literals out unsearched).
    pub fn op_may_match(&self, i: usize, haystack: &[u8], words: Option<&Words>) -> bool {
        self.alternatives.get(i).is_none_or(|finders| {
            if self.any && !finders.is_empty() {
                finders
                    .iter()
                    .any(|f| f.may_occur_in(words) && f.occurs_in(haystack))
            } else {
                finders.iter().all(|f| f.may_occur_in(words))
                    && finders.iter().all(|f| f.occurs_in(haystack))
            }
        })
    }

    /// The occurrences of op `i`'s first (longest) literal, or `None` when it has none (or
    /// when any one literal lets a file through, and a match need not cover the first).
    pub fn anchors(&self, i: usize, haystack: &[u8]) -> Option<Anchors> {
        if self.any {
            return None;
        }
        let finder = self.alternatives.get(i)?.first()?;
        Some(Anchors {
            starts: finder.occurrences(haystack).collect(),
            len: finder.finder.needle().len(),
        })
    }

    /// Whether any op may match.
    #[cfg(test)]
    fn may_match(&self, haystack: &[u8]) -> bool {
        (0..self.alternatives.len()).any(|i| self.op_may_match(i, haystack, None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lits(pat: &str, lang: Lang) -> Vec<(String, bool, bool)> {
        let pattern = Pattern::try_new(pat, lang.support_lang()).unwrap();
        required_literals(&pattern, lang)
            .into_iter()
            .map(|l| (l.text, l.word_start, l.word_end))
            .collect()
    }

    fn texts(pat: &str, lang: Lang) -> Vec<String> {
        lits(pat, lang).into_iter().map(|l| l.0).collect()
    }

    #[test]
    fn identifiers_and_keywords_are_required_punctuation_is_not() {
        assert_eq!(texts("$X.unwrap()", Lang::Rust), ["unwrap"]);
        assert_eq!(texts("Arc::new($A)", Lang::Rust), ["Arc", "new"]);
        assert_eq!(texts("match $E { $$$ARMS }", Lang::Rust), ["match"]);
        assert_eq!(
            texts("zzqq_nonexistent($A)", Lang::Rust),
            ["zzqq_nonexistent"]
        );
        assert_eq!(texts("$A", Lang::Rust), Vec::<String>::new());
        // Punctuation counts only through the CLI's own fixed string.
        assert_eq!(texts("$A + $B", Lang::Rust), ["+"]);
        assert_eq!(texts("$X?", Lang::Rust), ["?"]);
        assert_eq!(
            texts("console.log($$$A)", Lang::JavaScript),
            ["console", "log"]
        );
        assert_eq!(texts("def $F($$$A): $$$B", Lang::Python), ["def"]);
        assert_eq!(
            texts("if err != nil { return $$$R }", Lang::Go),
            ["return", "err", "nil", "if"]
        );
    }

    #[test]
    fn string_contents_are_required_without_word_boundaries() {
        let found = lits("foo(\"a b\")", Lang::Rust);
        assert!(
            found.contains(&("a b".to_owned(), false, false)),
            "{found:?}"
        );
        assert!(found.contains(&("foo".to_owned(), true, true)), "{found:?}");
    }

    #[test]
    fn python_identifiers_need_no_word_start() {
        assert_eq!(
            lits("print($A)", Lang::Python),
            [("print".to_owned(), false, true)]
        );
    }

    fn filter(pat: &str, lang: Lang) -> Prefilter {
        let pattern = Pattern::try_new(pat, lang.support_lang()).unwrap();
        Prefilter::new(lang, vec![required_literals(&pattern, lang)])
    }

    proptest::proptest! {
        /// A kept text's [`Words`] only spare the search: the verdict is the search's own,
        /// on texts built from words, digits glued before them, non-ASCII neighbours,
        /// comments and quotes, in the languages whose literals have both word boundaries
        /// and in one whose literals do not.
        #[test]
        fn a_verdict_with_a_texts_words_is_the_verdict_without(
            pieces in proptest::collection::vec(
                proptest::sample::select(vec![
                    "unwrap", "thread", "sleep", "Arc", "new", "match", "Self", "self",
                    "NTSTATUS", "print", "x", "_", "1", "0x", "u8", "é", " ", "\n", "::",
                    ".", "(", ")", "{", "}", "//", "#", "\"", "'", "+", "=", "?", ";",
                ]),
                0..40,
            )
        ) {
            let text = pieces.concat();
            for (pat, lang) in [
                ("$X.unwrap()", Lang::Rust),
                ("thread::sleep($D)", Lang::Rust),
                ("Arc::new($A)", Lang::Rust),
                ("match $E { $$$ARMS }", Lang::Rust),
                ("Self::new($$$A)", Lang::Rust),
                ("pub const $N: NTSTATUS = $V;", Lang::Rust),
                ("$A + $B", Lang::Rust),
                ("$X.unwrap()", Lang::Go),
                ("$X.unwrap()", Lang::JavaScript),
                ("print($A)", Lang::Python),
            ] {
                let pattern = Pattern::try_new(pat, lang.support_lang()).unwrap();
                let literals = vec![required_literals(&pattern, lang)];
                let words = Words::of(text.as_bytes());
                for f in [
                    Prefilter::new(lang, literals.clone()),
                    Prefilter::any_of(lang, literals),
                ] {
                    proptest::prop_assert_eq!(
                        f.op_may_match(0, text.as_bytes(), Some(&words)),
                        f.op_may_match(0, text.as_bytes(), None),
                        "`{}` ({:?}) in {:?}", pat, lang, text
                    );
                }
            }
        }
    }

    #[test]
    fn word_boundaries_are_checked_on_every_occurrence() {
        let f = filter("$X.unwrap()", Lang::Rust);
        assert!(!f.may_match(b"x.unwrap_or(1); try_unwrap(y)"));
        assert!(f.may_match(b"x.unwrap_or(1); y.unwrap()"));
        assert!(f.may_match(b"unwrap"));
        assert!(f.may_match(b"x.\n  unwrap ()"));
        // A digit before is allowed: only letters and `_` are glued into identifiers.
        assert!(f.may_match(b"1unwrap"));
        // Non-ASCII neighbours are not judged.
        assert!(f.may_match("é unwrapé".as_bytes()));
        assert!(!f.may_match(b""));
    }

    #[test]
    fn occurrences_surely_in_line_comments_do_not_count() {
        let f = filter("$X.unwrap()", Lang::Rust);
        assert!(!f.may_match(b"// x.unwrap()\n/// y.unwrap()\nfn f() {} // z.unwrap()\n"));
        assert!(f.may_match(b"// note\nx.unwrap();\n"));
        // A quote before or after the marker, or a `*/` after it: not sure, so it counts.
        assert!(f.may_match(b"let s = \"a\"; // x.unwrap()\n"));
        assert!(f.may_match(b"let s = \"http://a\"; x.unwrap();\n"));
        assert!(f.may_match(b"  end of a string // here\"; x.unwrap();\n"));
        assert!(f.may_match(b"/* a // b */ x.unwrap();\n"));
        assert!(f.may_match(b"  a // b */ x.unwrap();\n"));
        let py = filter("print($A)", Lang::Python);
        assert!(!py.may_match(b"# print(1)\nx = 1  # print(2)\n"));
        assert!(py.may_match(b"s = '#'; print(1)\n"));
        // JavaScript: `//` may be inside a regular expression, so nothing is assumed.
        let js = filter("foo($A)", Lang::JavaScript);
        assert!(js.may_match(b"const r = /[//]/; foo(1);\n"));
        assert!(js.may_match(b"// foo(1)\n"));
    }

    #[test]
    fn punctuation_found_only_in_line_comments_does_not_count() {
        let plus = filter("$A + $B", Lang::Rust);
        assert!(!plus.may_match(b"// a + b\nfn f() {} // c + d\n"));
        assert!(plus.may_match(b"// note\nlet x = a + b;\n"));
        assert!(plus.may_match(b"let s = \"//\"; let x = a + b;\n"));
        // Python's `#` comments too.
        let py = filter("$A ** $B", Lang::Python);
        assert!(!py.may_match(b"# a ** b\n"));
        assert!(py.may_match(b"x = a ** b  # squared\n"));
        // Without a line-comment rule (JavaScript) an occurrence anywhere counts.
        let js = filter("$A + $B", Lang::JavaScript);
        assert!(js.may_match(b"// a + b\n"));
    }

    #[test]
    fn a_rust_operator_glued_to_an_equals_sign_is_a_compound_assignment() {
        let plus = filter("$A + $B", Lang::Rust);
        assert!(!plus.may_match(b"x += 1; y +=2;\n"));
        assert!(plus.may_match(b"x += 1; y = x +1;\n"));
        assert!(plus.may_match(b"x + = 1"));
        let and = filter("$A & $B", Lang::Rust);
        assert!(!and.may_match(b"flags &= MASK;\n"));
        // `>` may close a generic list right before an `=`: not judged.
        let gt = filter("$A > $B", Lang::Rust);
        assert!(gt.may_match(b"let v: Vec<u8>= Vec::new();\n"));
        // Other languages: not judged.
        let go = filter("$A + $B", Lang::Go);
        assert!(go.may_match(b"x += 1\n"));
    }

    #[test]
    fn a_rust_plus_before_a_question_mark_or_a_lifetime_joins_bounds() {
        let plus = filter("$A + $B", Lang::Rust);
        assert!(!plus.may_match(b"fn f<T: Clone + ?Sized + 'a>(x: Box<dyn A +'static>) {}\n"));
        assert!(!plus.may_match(b"where T: Send +\n    'a,\n"));
        // A char literal and a labelled block are expressions; a raw lifetime is not judged.
        assert!(plus.may_match(b"let c = b + 'a';\n"));
        assert!(plus.may_match(b"let x = 1 + 'a: { break 'a 2 };\n"));
        assert!(plus.may_match(b"let x = 1 + 'a : { break 'a 2 };\n"));
        assert!(plus.may_match(b"T: A + 'r#a"));
        assert!(plus.may_match("x + 'é'".as_bytes()));
        assert!(plus.may_match("x + 'aé".as_bytes()));
        assert!(plus.may_match(b"x + '\\n'"));
        // A comment or a vertical tab may stand before a label's colon.
        assert!(plus.may_match(b"1 + 'a /* c */ : loop { break 'a 2 }"));
        assert!(plus.may_match(b"1 + 'a // c\n : loop { break 'a 2 }"));
        assert!(plus.may_match(b"1 + 'a\x0b: loop { break 'a 2 }"));
        assert!(!plus.may_match(b"T: A + 'a\n{"));
        assert!(plus.may_match(b"T: A + Send"));
        // Only `+` joins bounds.
        let minus = filter("$A - $B", Lang::Rust);
        assert!(minus.may_match(b"x - 'a'"));
    }

    #[cfg(feature = "lang-php")]
    #[test]
    fn php_needs_only_named_text_found_anywhere() {
        // `$` belongs to the variable; its name is the literal, with no word boundary.
        assert_eq!(
            lits("$total = count($X)", Lang::Php),
            [
                ("total".to_owned(), false, false),
                ("count".to_owned(), false, false)
            ]
        );
        let f = filter("$total = count($X)", Lang::Php);
        assert!(f.may_match(b"<?php $total = count($items);"));
        assert!(f.may_match(b"<?php $total=count($items); // x"));
        // Keywords are case-insensitive in PHP: none is required beyond the CLI's own
        // fixed string (which the CLI requires too).
        assert_eq!(texts("function $F() { $$$B }", Lang::Php), ["function"]);
    }

    #[cfg(feature = "lang-css")]
    #[test]
    fn css_literals_have_no_word_boundaries() {
        assert_eq!(
            lits("color: $C;", Lang::Css),
            [("color".to_owned(), false, false)]
        );
        let f = filter("color: $C;", Lang::Css);
        assert!(f.may_match(b"a{color:red}"));
        assert!(f.may_match(b"/* x */ a { color: red }"));
    }

    #[cfg(all(feature = "lang-java", feature = "lang-ruby", feature = "lang-cpp"))]
    #[test]
    fn identifiers_and_keywords_end_at_a_word_boundary_in_languages_lexed_like_python() {
        assert_eq!(
            lits("System.out.println($A)", Lang::Java),
            [
                ("println".to_owned(), false, true),
                ("System".to_owned(), false, true),
                ("out".to_owned(), false, true),
            ]
        );
        let f = filter("fetch($A)", Lang::Ruby);
        assert!(f.may_match(b"x = fetch(:a)"));
        assert!(f.may_match(b"x = prefetch(1) + fetch(2)"));
        assert!(!f.may_match(b"x = fetched(:a) + fetcher(:b)"));
        let f = filter("return $A;", Lang::Cpp);
        assert!(f.may_match(b"int f() { return 1; }"));
        assert!(!f.may_match(b"int f() { returns = 1; }"));
    }

    #[cfg(feature = "lang-html")]
    #[test]
    fn html_tag_names_are_whole_words() {
        let f = filter("<tt>$$$C</tt>", Lang::Html);
        assert!(f.may_match(b"<p>a <tt>b</tt></p>"));
        assert!(!f.may_match(b"<a href=\"https://x\">attr</a>"));
        // Attribute values and text are named leaves too, found anywhere, as before.
        let f = filter("<a href=\"x\">$$$C</a>", Lang::Html);
        assert!(f.may_match(b"<a href=\"x\">y</a>"));
    }

    #[cfg(feature = "lang-bash")]
    #[test]
    fn bash_words_are_found_anywhere() {
        let f = filter("echo $A", Lang::Bash);
        assert!(f.may_match(b"x=1;echo $x"));
        assert!(f.may_match(b"# comment\necho \"$x\"\n"));
        assert!(!f.may_match(b"printf '%s' x"));
    }

    #[test]
    fn adjacent_words_must_occur_together() {
        let f = filter("impl Default for $T { $$$BODY }", Lang::Rust);
        assert!(f.may_match(b"impl !Default for Y {}"));
        assert!(f.may_match(b"unsafe impl Default for W {}"));
        assert!(f.may_match(b"impl /* c */ Default for Z {}"));
        // Both words, never together (a named node in between cannot be skipped).
        assert!(!f.may_match(b"impl<T> Default for X<T> {}\nimpl Display for Y {}"));
        let f = filter("Self::new($$$A)", Lang::Rust);
        assert!(f.may_match(b"fn f() -> Self { Self :: new(1) }"));
        assert!(!f.may_match(b"fn new() -> Self { Self { x: 1 } }"));
        // A metavariable between two words: no sequence.
        let f = filter("let $X = Vec::new()", Lang::Rust);
        assert!(f.may_match(b"let v: Vec<u8> = Vec::new();"));
        assert!(f.may_match(b"let v = Vec::new();"));
    }

    #[test]
    fn in_rust_a_quote_between_linked_words_rules_the_occurrence_out() {
        let f = filter("impl Default for $T { $$$B }", Lang::Rust);
        assert!(!f.may_match(b"impl<'a> Default for X<'a> {}"));
        assert!(!f.may_match(b"fn f() { Default::default(); g('x'); for x in y {} }"));
        assert!(f.may_match(b"impl Default for X {}"));
        // Unless the pattern's own gap holds one.
        let f = filter("impl<'a> Tr<'a> for $T { $$$B }", Lang::Rust);
        assert!(f.may_match(b"impl<'a> Tr<'a> for X {}"));
        let f = filter("foo(\"bar\")", Lang::Rust);
        assert!(f.may_match(b"foo(\"bar\");"));
        // In a token tree `'` is a token of its own: `m!(a 'static b)` matches `m!(a b)`.
        let f = filter("m!(a b)", Lang::Rust);
        assert!(f.may_match(b"fn f() { m!(a 'static b); }"));
        let f = filter("#[foo(a b)]", Lang::Rust);
        assert!(f.may_match(b"#[foo(a '_ b)]\nfn f() {}"));
        // Other languages: a quote may open a string that holds anything.
        let f = filter("if $A: return $B", Lang::Python);
        assert!(f.may_match(b"if x: 'a'; return 1"));
    }

    #[test]
    fn no_sequence_runs_past_the_end_of_a_node() {
        // The match arm's pattern may be followed by a guard the pattern does not have.
        let f = filter("match x { Some(v) => v, None => 0 }", Lang::Rust);
        assert!(f.may_match(b"match x { Some(v) if ok => v, None => 0 }"));
    }

    #[cfg(all(feature = "lang-ruby", feature = "lang-swift"))]
    #[test]
    fn no_word_rules_where_the_grammar_breaks_them() {
        // A heredoc body is an extra the matcher steps over.
        let f = filter("foo.bar", Lang::Ruby);
        assert!(f.may_match(b"x(<<~EOS, foo.\n  some words\nEOS\n  bar)"));
        // Swift has no `word` token: `isInt` lexes as `is Int`.
        let f = filter("$X is Int", Lang::Swift);
        assert!(f.may_match(b"let z = x isInt"));
    }

    #[cfg(feature = "lang-php")]
    #[test]
    fn no_sequences_where_keywords_are_not_literals() {
        let pattern = Pattern::try_new("Foo::bar($A)", Lang::Php.support_lang()).unwrap();
        assert!(
            required_literals(&pattern, Lang::Php)
                .iter()
                .all(|l| l.then.is_none())
        );
    }

    #[test]
    fn a_pattern_without_literals_lets_everything_through() {
        let f = filter("$A", Lang::Rust);
        assert!(f.may_match(b""));
        assert!(f.may_match(b"anything"));
    }
}
