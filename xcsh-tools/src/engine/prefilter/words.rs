//! The words of a kept text, so that a warm call can rule a file out without searching it.
//!
//! A call over a warm cache still runs the prefilter on every kept file, and searching the
//! whole of every text for a literal was the largest share of a warm call that finds little
//! (a fifth of its CPU for `thread::sleep($D)` over 86 MB of kept Rust). Most literals are
//! identifiers or keywords that must stand at word boundaries ([`super::Literal`]'s
//! `word_start` and `word_end`), and whether a text holds one at all is a look-up in the set
//! of words it was seen to hold when it was kept.

use xxhash_rust::xxh3::xxh3_64;

/// The hashes of every place where a word-bounded identifier can occur in a text.
///
/// An occurrence that [`super::Prefilter`] counts for a literal with both word boundaries
/// ends where a run of `[A-Za-z0-9_]` ends, and starts where the run starts or right after a
/// digit (a digit may precede it: `word_start` rules out only `[A-Za-z_]`). So the set holds,
/// for each run, the hash of every such tail that starts with `[A-Za-z_]` (as a literal does).
/// A literal whose hash is missing cannot occur; a hash that is present says only "maybe"
/// (collisions, and the other rules, are left to the search itself).
pub(crate) struct Words(Box<[u64]>);

impl Words {
    /// The words of `text`.
    pub fn of(text: &[u8]) -> Self {
        let mut hashes = Vec::with_capacity(text.len() / 32);
        let mut i = 0;
        while i < text.len() {
            if !is_word_byte(text[i]) {
                i += 1;
                continue;
            }
            let start = i;
            while i < text.len() && is_word_byte(text[i]) {
                i += 1;
            }
            let run = &text[start..i];
            for (at, &b) in run.iter().enumerate() {
                let starts_word = b.is_ascii_alphabetic() || b == b'_';
                if starts_word && (at == 0 || run[at - 1].is_ascii_digit()) {
                    hashes.push(Self::hash(&run[at..]));
                }
            }
        }
        hashes.sort_unstable();
        hashes.dedup();
        Self(hashes.into_boxed_slice())
    }

    /// The hash that [`Words::may_hold`] looks up for `word`.
    pub fn hash(word: &[u8]) -> u64 {
        xxh3_64(word)
    }

    /// Whether the text may hold the word hashed as `word` at word boundaries.
    pub fn may_hold(&self, word: u64) -> bool {
        self.0.binary_search(&word).is_ok()
    }

    /// The memory it takes, in bytes.
    pub fn size(&self) -> usize {
        std::mem::size_of_val(&*self.0)
    }
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holds(text: &str, word: &str) -> bool {
        Words::of(text.as_bytes()).may_hold(Words::hash(word.as_bytes()))
    }

    #[test]
    fn whole_words_and_tails_after_a_digit_are_held_other_parts_are_not() {
        let text = "fn f() { thread::sleep(d); 0x1fu8; r#match; x_2y; é_z }";
        let held = [
            "fn", "f", "thread", "sleep", "d", "x1fu8", "fu8", "match", "r", "x_2y", "y", "_z",
        ];
        for word in held {
            assert!(holds(text, word), "{word}");
        }
        // Inside a word (not right after a digit), or the head of one: no word-bounded
        // occurrence, as the search itself would find none.
        for word in ["leep", "threa", "u8", "x_2", "atch", "hread", "z"] {
            assert!(!holds(text, word), "{word}");
        }
    }
}
