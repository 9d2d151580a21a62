//! Finding a hunk's lines in a file, with the patch format's leniency: exactly first, then
//! ignoring trailing whitespace, then ignoring surrounding whitespace, then also reading
//! common Unicode punctuation look-alikes (dashes, quotes, odd spaces) as their ASCII forms.
//!
//! Each level's key of every line is computed once per file, with an index from a key to the
//! lines holding it: a hunk is looked up by its first line, so a seek costs the candidates
//! found, not the length of the file times the hunk (what keeps a 20,000-line file fast).

use std::borrow::Cow;
use std::cell::OnceCell;
use std::ops::Range;

/// How leniently lines were compared when a hunk was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Leniency {
    /// Byte for byte.
    Exact,
    /// Trailing whitespace ignored.
    TrailingWhitespace,
    /// Leading and trailing whitespace ignored.
    SurroundingWhitespace,
    /// Surrounding whitespace ignored and Unicode dashes, quotes and spaces read as ASCII.
    Punctuation,
}

impl Leniency {
    pub(crate) const ALL: [Leniency; 4] = [
        Leniency::Exact,
        Leniency::TrailingWhitespace,
        Leniency::SurroundingWhitespace,
        Leniency::Punctuation,
    ];

    /// What was ignored, for notes: "trailing whitespace".
    pub fn describe(self) -> &'static str {
        match self {
            Leniency::Exact => "nothing",
            Leniency::TrailingWhitespace => "trailing whitespace",
            Leniency::SurroundingWhitespace => "leading and trailing whitespace (indentation)",
            Leniency::Punctuation => {
                "whitespace and Unicode punctuation look-alikes (dashes, quotes, non-breaking spaces)"
            }
        }
    }

    /// The key a line is compared by at this level.
    pub(crate) fn key(self, line: &str) -> Cow<'_, str> {
        match self {
            Leniency::Exact => Cow::Borrowed(line),
            Leniency::TrailingWhitespace => Cow::Borrowed(line.trim_end()),
            Leniency::SurroundingWhitespace => Cow::Borrowed(line.trim()),
            Leniency::Punctuation => {
                let t = line.trim();
                if t.chars().any(|c| ascii_look_alike(c).is_some()) {
                    Cow::Owned(
                        t.chars()
                            .map(|c| ascii_look_alike(c).unwrap_or(c))
                            .collect(),
                    )
                } else {
                    Cow::Borrowed(t)
                }
            }
        }
    }
}

/// The ASCII character a Unicode look-alike stands for.
pub(crate) fn ascii_look_alike(c: char) -> Option<char> {
    Some(match c {
        '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
        | '\u{2212}' => '-',
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
        '\u{00A0}' | '\u{2002}' | '\u{2003}' | '\u{2004}' | '\u{2005}' | '\u{2006}'
        | '\u{2007}' | '\u{2008}' | '\u{2009}' | '\u{200A}' | '\u{202F}' | '\u{205F}'
        | '\u{3000}' => ' ',
        _ => return None,
    })
}

/// One line of a file: its text without the ending, and the ending (`\n`, `\r\n`, or empty
/// for a last line without one), as byte ranges of the file.
#[derive(Debug, Clone)]
pub(crate) struct Line {
    pub(crate) text: Range<usize>,
    pub(crate) end: usize,
}

/// A file's text split into lines, with each leniency level's keys and index built on demand.
pub(crate) struct FileLines<'a> {
    pub(crate) src: &'a str,
    pub(crate) lines: Vec<Line>,
    levels: [OnceCell<Level<'a>>; 4],
}

struct Level<'a> {
    keys: Vec<Cow<'a, str>>,
    /// Each distinct key's group number. Hashed with foldhash, and the groups laid out in
    /// one flat list rather than a list per key: building the index touches every line of
    /// the file, and with SipHash and a `Vec` per key it was the largest part of a big
    /// file's preview.
    groups: foldhash::HashMap<Cow<'a, str>, u32>,
    /// Each group's first place in `lines`, and one past its last.
    spans: Vec<(u32, u32)>,
    /// Line numbers grouped by key, each group in file order.
    lines: Vec<u32>,
}

/// Where a seek found the lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Found {
    /// At one place (0-based line), compared at this level.
    One(usize, Leniency),
    /// At several places (the first ones, 0-based), at the same level: nothing says which.
    Several(Vec<usize>, Leniency),
    /// Nowhere at any level.
    Nowhere,
}

/// Places listed, at most, for an ambiguous hunk.
const MAX_PLACES: usize = 10;

impl<'a> FileLines<'a> {
    pub(crate) fn new(src: &'a str) -> Self {
        let bytes = src.as_bytes();
        // Sized up front: growing it line by line was a visible part of a big file's preview.
        let mut lines = Vec::with_capacity(memchr::memchr_iter(b'\n', bytes).count() + 1);
        let mut start = 0;
        while start < bytes.len() {
            let (text_end, end) = match memchr::memchr(b'\n', &bytes[start..]) {
                Some(i) => {
                    let nl = start + i;
                    let text_end = if nl > start && bytes[nl - 1] == b'\r' {
                        nl - 1
                    } else {
                        nl
                    };
                    (text_end, nl + 1)
                }
                None => (bytes.len(), bytes.len()),
            };
            lines.push(Line {
                text: start..text_end,
                end,
            });
            start = end;
        }
        Self {
            src,
            lines,
            levels: Default::default(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.lines.len()
    }

    /// The text of line `i` (0-based), without its ending.
    pub(crate) fn text(&self, i: usize) -> &'a str {
        &self.src[self.lines[i].text.clone()]
    }

    /// The ending of line `i`: `"\n"`, `"\r\n"` or `""`.
    pub(crate) fn ending(&self, i: usize) -> &'a str {
        &self.src[self.lines[i].text.end..self.lines[i].end]
    }

    /// Byte offset where line `i` starts (the file's length for `i == len`).
    pub(crate) fn start_of(&self, i: usize) -> usize {
        self.lines.get(i).map_or(self.src.len(), |l| l.text.start)
    }

    /// The ending most lines have (`\n` when none has one).
    pub(crate) fn usual_ending(&self) -> &'static str {
        let crlf = self
            .lines
            .iter()
            .filter(|l| l.end - l.text.end == 2)
            .count();
        let lf = self
            .lines
            .iter()
            .filter(|l| l.end - l.text.end == 1)
            .count();
        if crlf > lf { "\r\n" } else { "\n" }
    }

    fn level(&self, leniency: Leniency) -> &Level<'a> {
        self.levels[leniency as usize].get_or_init(|| {
            let src = self.src;
            let keys: Vec<Cow<'a, str>> = self
                .lines
                .iter()
                .map(|l| leniency.key(&src[l.text.clone()]))
                .collect();
            // Each line's group, numbered as first seen, and each group's size; then the
            // groups laid out one after another (a counting sort, so each stays in order).
            let mut ids: foldhash::HashMap<Cow<'a, str>, u32> =
                foldhash::HashMap::with_capacity_and_hasher(keys.len(), Default::default());
            let mut sizes: Vec<u32> = Vec::new();
            let group_of: Vec<u32> = keys
                .iter()
                .map(|key| {
                    let next = sizes.len() as u32;
                    let id = *ids.entry(key.clone()).or_insert(next);
                    if id == next {
                        sizes.push(0);
                    }
                    sizes[id as usize] += 1;
                    id
                })
                .collect();
            let mut starts = Vec::with_capacity(sizes.len());
            let mut total = 0u32;
            for &size in &sizes {
                starts.push(total);
                total += size;
            }
            let mut lines = vec![0u32; keys.len()];
            let mut fill = starts.clone();
            for (line, &id) in group_of.iter().enumerate() {
                let at = &mut fill[id as usize];
                lines[*at as usize] = line as u32;
                *at += 1;
            }
            let spans = starts
                .iter()
                .zip(&sizes)
                .map(|(&s, &n)| (s, s + n))
                .collect();
            Level {
                keys,
                groups: ids,
                spans,
                lines,
            }
        })
    }

    /// The 0-based lines at or after `from` whose key at `leniency` is `line`'s.
    pub(crate) fn lines_like(&self, line: &str, leniency: Leniency, from: usize) -> &[u32] {
        let level = self.level(leniency);
        let Some(&id) = level.groups.get(leniency.key(line).as_ref()) else {
            return &[];
        };
        let (start, end) = level.spans[id as usize];
        let list = &level.lines[start as usize..end as usize];
        let at = list.partition_point(|&i| (i as usize) < from);
        &list[at..]
    }

    /// Whether `pattern` matches the lines starting at `start` at `leniency`.
    fn matches_at(&self, pattern: &[Cow<'_, str>], start: usize, leniency: Leniency) -> bool {
        let keys = &self.level(leniency).keys;
        start + pattern.len() <= keys.len()
            && pattern
                .iter()
                .zip(&keys[start..start + pattern.len()])
                .all(|(p, k)| p == k)
    }

    /// Finds `pattern` (non-empty) at or after line `from`: at the first level where it
    /// matches anywhere, every place it matches (up to [`MAX_PLACES`]), or only the first
    /// when `first_only`. With `at_end`, only a match ending the file counts.
    pub(crate) fn seek(
        &self,
        pattern: &[&str],
        from: usize,
        at_end: bool,
        first_only: bool,
    ) -> Found {
        debug_assert!(!pattern.is_empty());
        if pattern.len() > self.len() {
            return Found::Nowhere;
        }
        for leniency in Leniency::ALL {
            let keys: Vec<Cow<'_, str>> = pattern.iter().map(|p| leniency.key(p)).collect();
            let mut places = Vec::new();
            if at_end {
                let start = self.len() - pattern.len();
                if start >= from && self.matches_at(&keys, start, leniency) {
                    places.push(start);
                }
            } else {
                for &start in self.lines_like(pattern[0], leniency, from) {
                    let start = start as usize;
                    if self.matches_at(&keys, start, leniency) {
                        places.push(start);
                        if first_only || places.len() > MAX_PLACES {
                            break;
                        }
                    }
                }
            }
            match places.len() {
                0 => continue,
                1 => return Found::One(places[0], leniency),
                _ => return Found::Several(places, leniency),
            }
        }
        Found::Nowhere
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_in_order_and_ambiguity_at_the_first_level_that_matches() {
        let f = FileLines::new("foo   \n  bar\t\nbar\nx \u{2014} \u{201C}y\u{201D}\n");
        assert_eq!(
            f.seek(&["bar"], 0, false, false),
            Found::One(2, Leniency::Exact)
        );
        assert_eq!(
            f.seek(&["foo", "bar"], 0, false, false),
            Found::One(0, Leniency::SurroundingWhitespace)
        );
        assert_eq!(
            f.seek(&["foo"], 0, false, false),
            Found::One(0, Leniency::TrailingWhitespace)
        );
        assert_eq!(
            f.seek(&["x - \"y\""], 0, false, false),
            Found::One(3, Leniency::Punctuation)
        );
        assert_eq!(
            f.seek(&["  bar"], 0, false, false),
            Found::One(1, Leniency::TrailingWhitespace)
        );
        let g = FileLines::new("a\nb\na\nb\n");
        assert_eq!(
            g.seek(&["a", "b"], 0, false, false),
            Found::Several(vec![0, 2], Leniency::Exact)
        );
        assert_eq!(
            g.seek(&["a", "b"], 1, false, false),
            Found::One(2, Leniency::Exact)
        );
        assert_eq!(
            g.seek(&["a", "b"], 0, false, true),
            Found::One(0, Leniency::Exact)
        );
        assert_eq!(g.seek(&["a"], 0, true, false), Found::Nowhere);
        assert_eq!(
            g.seek(&["b"], 0, true, false),
            Found::One(3, Leniency::Exact)
        );
        assert_eq!(
            g.seek(&["a", "b", "a", "b", "a"], 0, false, false),
            Found::Nowhere
        );
    }

    #[test]
    fn lines_keep_their_endings() {
        let f = FileLines::new("a\r\nb\nc");
        assert_eq!((f.text(0), f.ending(0)), ("a", "\r\n"));
        assert_eq!((f.text(1), f.ending(1)), ("b", "\n"));
        assert_eq!((f.text(2), f.ending(2)), ("c", ""));
        assert_eq!(f.usual_ending(), "\n");
        assert_eq!(FileLines::new("a\r\nb\r\n").usual_ending(), "\r\n");
        assert_eq!(FileLines::new("").len(), 0);
    }
}
