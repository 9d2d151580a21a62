//! Literals that a match holds one right after the other.
//!
//! Two word-like literals of a pattern with nothing but punctuation between them
//! (`impl Default for`, `Self::new`) are as close in every match: between the two tokens the
//! source can only hold what ast-grep's matcher steps over (whitespace, comments, and the
//! grammar's anonymous tokens: punctuation and keywords; `impl !Default for` matches
//! `impl Default for`). A named node cannot stand between them, since smart matching skips
//! only unnamed ones (`impl<T> Default for` does not match) — except after a node's last
//! child, where it lets the source have more, so a sequence never runs past the end of a
//! pattern node. So a file in which no occurrence of the first is followed, across such a
//! gap, by the second holds no match, though it may hold both words: `Self` and `new` are in
//! 977 of the 3,633 files of the Rust benchmark corpus, `Self::new` in 85. (An ERROR node
//! from a syntax error right between the two is the exception: see the module above.)
//!
//! The gap is read conservatively: a character that may open a comment, a string or a line
//! continuation (`/ # - = \ " ' ``), or a byte outside ASCII, ends the check in favour of the
//! file, which is then parsed; only a word that is neither the next literal nor one of the
//! grammar's anonymous words rules the occurrence out. In Rust a quote does too, unless the
//! pattern's own gap holds one or the words are in a token tree: elsewhere, outside
//! comments, it begins a lifetime, a label, a char or a string literal, all named nodes.

use std::sync::Arc;

use ast_grep_core::tree_sitter::TSLanguage;

use super::Next;

/// Characters after which the gap is not read further: the file may match.
const UNSURE: &[u8] = b"/#-=\\\"'`";

/// A set of words, looked up by their bytes (foldhash: the shape's matcher asks it for many
/// tokens of a file).
pub(super) type Words = Arc<foldhash::HashSet<Box<[u8]>>>;

/// The grammar's anonymous words (`impl`, `for`, `unsafe`, …): what the matcher may skip
/// between two tokens of the pattern, besides punctuation.
pub(super) fn anonymous_words(ts: &TSLanguage) -> Words {
    let words = (0..ts.node_kind_count())
        .filter_map(|id| u16::try_from(id).ok())
        .filter(|&id| !ts.node_kind_is_named(id) && ts.node_kind_is_visible(id))
        .filter_map(|id| ts.node_kind_for_id(id))
        .filter(|kind| kind.bytes().all(is_word_byte) && !kind.is_empty())
        .map(|kind| Box::from(kind.as_bytes()))
        .collect();
    Arc::new(words)
}

/// The literal that must come next, and what may stand in between.
pub(super) struct Then {
    next: Box<[u8]>,
    skippable: Words,
    /// A quote in the gap begins a named node ([`Next::quote_rules_out`]).
    quote_rules_out: bool,
}

impl Then {
    pub(super) fn new(next: &Next, skippable: Words) -> Self {
        Then {
            next: next.text.as_bytes().into(),
            skippable,
            quote_rules_out: next.quote_rules_out,
        }
    }

    /// Whether the text from `at` on may be a gap that ends with the next literal.
    pub(super) fn follows(&self, haystack: &[u8], mut at: usize) -> bool {
        while let Some(&byte) = haystack.get(at) {
            if byte.is_ascii_whitespace() {
                at += 1;
            } else if is_word_byte(byte) {
                let start = at;
                while haystack.get(at).copied().is_some_and(is_word_byte) {
                    at += 1;
                }
                let word = &haystack[start..at];
                if *word == *self.next {
                    return true;
                }
                let skippable = self.skippable.contains(word);
                if !skippable {
                    return false;
                }
            } else if self.quote_rules_out && matches!(byte, b'\'' | b'"') {
                return false;
            } else if !byte.is_ascii() || UNSURE.contains(&byte) {
                return true;
            } else {
                at += 1;
            }
        }
        false
    }
}

fn is_word_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || byte == b'_'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn then(next: &str, skippable: &[&str]) -> Then {
        let next = Next {
            text: next.to_owned(),
            quote_rules_out: false,
        };
        Then::new(
            &next,
            Arc::new(skippable.iter().map(|&w| Box::from(w.as_bytes())).collect()),
        )
    }

    #[test]
    fn punctuation_whitespace_and_anonymous_words_may_stand_between() {
        let default = then("Default", &["unsafe", "for"]);
        assert!(default.follows(b" Default for X", 0));
        assert!(default.follows(b" !Default for X", 0));
        assert!(default.follows(b"\n    unsafe Default", 0));
        assert!(!default.follows(b"<T> Default for X<T>", 0));
        assert!(!default.follows(b" Display for X", 0));
        assert!(!default.follows(b" Defaults", 0));
        assert!(!default.follows(b"", 0));
    }

    #[test]
    fn comments_strings_and_other_scripts_count_in_favour_of_the_file() {
        let new = then("new", &[]);
        assert!(new.follows(b" :: /* x */ new(", 0));
        assert!(new.follows(b"::// x\nnew(", 0));
        assert!(new.follows(b" # comment\nnew", 0));
        assert!(new.follows(b"::\xc3\xa9", 0));
        assert!(!new.follows(b"::create(", 0));
    }

    #[test]
    fn where_quotes_begin_named_nodes_they_rule_an_occurrence_out() {
        let mut default = then("Default", &["for"]);
        assert!(default.follows(b"<'a> Default", 0));
        default.quote_rules_out = true;
        assert!(!default.follows(b"<'a> Default", 0));
        assert!(!default.follows(b"(\"x\", Default", 0));
        assert!(default.follows(b" /* 'a */ Default", 0));
    }
}
