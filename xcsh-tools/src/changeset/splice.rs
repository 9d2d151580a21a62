//! Edits spliced into a file at apply time: what lets a change set hold a large rewrite as
//! its edits (ranges and inserted text) instead of as every changed file's whole new content.

use std::fmt;
use std::ops::Range;

/// One edit of [`ChangeSet::modify_splicing`](super::ChangeSet::modify_splicing): the bytes
/// `range` of the file *as it was read* are replaced by `text`.
///
/// An empty range inserts; an empty `text` deletes.
///
/// ```
/// use xcsh_tools::changeset::Splice;
///
/// let rename = Splice::new(4..7, "bar");   // "fn foo()" -> "fn bar()"
/// let insert = Splice::new(9..9, " -> u8"); // at byte 9, nothing replaced
/// assert_eq!(rename.range, 4..7);
/// assert!(insert.range.is_empty());
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Splice {
    /// Byte range replaced, in the file as it was read. Both ends must fall on character
    /// boundaries of that (UTF-8) text.
    pub range: Range<usize>,
    /// The text put in its place.
    pub text: String,
}

impl Splice {
    /// Replace the bytes `range` with `text`.
    ///
    /// ```
    /// # use xcsh_tools::changeset::Splice;
    /// assert_eq!(Splice::new(0..3, "abc").text, "abc");
    /// ```
    pub fn new(range: Range<usize>, text: impl Into<String>) -> Self {
        Self {
            range,
            text: text.into(),
        }
    }
}

/// The edits of one file, checked against the length of the file as it was read: sorted, not
/// overlapping, inside it. Whether they fall on character boundaries can only be seen with the
/// content in hand, which [`Splices::apply`] checks.
#[derive(Debug)]
pub(crate) struct Splices {
    edits: Vec<Splice>,
    /// Length of the result.
    new_len: u64,
}

/// `edits[3] (bytes 10..12)`, for messages.
struct Named<'a>(usize, &'a Splice);

impl fmt::Display for Named<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Named(i, s) = self;
        write!(f, "edits[{i}] (bytes {}..{})", s.range.start, s.range.end)
    }
}

impl Splices {
    /// The edits, in order.
    pub(crate) fn edits(&self) -> &[Splice] {
        &self.edits
    }

    /// Checks `edits` against a file of `len` bytes; the error says which edit is wrong and
    /// how.
    pub(crate) fn new(edits: Vec<Splice>, len: u64) -> Result<Self, String> {
        let mut new_len = len;
        for (i, edit) in edits.iter().enumerate() {
            let Range { start, end } = edit.range;
            if start > end {
                return Err(format!("{} ends before it starts", Named(i, edit)));
            }
            if end as u64 > len {
                return Err(format!(
                    "{} reaches past the end of the file as it was read ({len} bytes)",
                    Named(i, edit)
                ));
            }
            if let Some(prev) = i.checked_sub(1).map(|p| &edits[p]) {
                if start < prev.range.start {
                    return Err(format!(
                        "{} comes before {}: the edits are not sorted by position",
                        Named(i, edit),
                        Named(i - 1, prev)
                    ));
                }
                if start < prev.range.end {
                    return Err(format!(
                        "{} overlaps {}",
                        Named(i, edit),
                        Named(i - 1, prev)
                    ));
                }
            }
            new_len = new_len - (end - start) as u64 + edit.text.len() as u64;
        }
        Ok(Self { edits, new_len })
    }

    /// The length of the content after the edits.
    pub(crate) fn new_len(&self) -> u64 {
        self.new_len
    }

    /// Splices the edits into `original`, the file as it was read (its length was checked by
    /// [`new`](Self::new) through the fingerprint). Refuses content that is not UTF-8 and
    /// ranges that split a character.
    pub(crate) fn apply(&self, original: &[u8]) -> Result<Vec<u8>, String> {
        let text = self.check(original)?;
        let mut out = Vec::with_capacity(usize::try_from(self.new_len).unwrap_or(0));
        let mut at = 0;
        for edit in &self.edits {
            let Range { start, end } = edit.range;
            out.extend_from_slice(&text.as_bytes()[at..start]);
            out.extend_from_slice(edit.text.as_bytes());
            at = end;
        }
        out.extend_from_slice(&text.as_bytes()[at..]);
        Ok(out)
    }

    /// `original` as text, when the edits can be spliced into it: it is UTF-8 and every
    /// range lies inside it on character boundaries (what [`apply`](Self::apply) refuses
    /// otherwise, in the same words). Lets a diff show the edits without building the file.
    pub(crate) fn check<'a>(&self, original: &'a [u8]) -> Result<&'a str, String> {
        let text = std::str::from_utf8(original).map_err(|e| {
            format!(
                "the file is not UTF-8 text (invalid byte at offset {}), and splices edit text",
                e.valid_up_to()
            )
        })?;
        for (i, edit) in self.edits.iter().enumerate() {
            let Range { start, end } = edit.range;
            if end > text.len() {
                return Err(format!(
                    "{} reaches past the end of the file ({} bytes)",
                    Named(i, edit),
                    text.len()
                ));
            }
            if !text.is_char_boundary(start) || !text.is_char_boundary(end) {
                return Err(format!(
                    "{} splits a UTF-8 character: ranges must start and end on character boundaries",
                    Named(i, edit)
                ));
            }
        }
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(edits: &[(Range<usize>, &str)], len: u64) -> Result<Splices, String> {
        let edits = edits
            .iter()
            .map(|(r, t)| Splice::new(r.clone(), *t))
            .collect();
        Splices::new(edits, len)
    }

    #[test]
    fn valid_edits_splice_in_order() {
        let src = "fn foo() {}\n";
        let s = check(
            &[
                (0..0, "pub "),
                (3..6, "bar"),
                (8..8, " -> u8"),
                (11..12, ""),
            ],
            12,
        )
        .expect("valid");
        let out = s.apply(src.as_bytes()).expect("applies");
        assert_eq!(String::from_utf8(out).unwrap(), "pub fn bar() -> u8 {}");
        assert_eq!(s.new_len(), "pub fn bar() -> u8 {}".len() as u64);
        // Insertions at the same place, and right after a replacement, are kept in order.
        let s = check(&[(2..2, "a"), (2..2, "b"), (2..3, "c"), (3..3, "d")], 4).expect("valid");
        assert_eq!(s.apply(b"xyzw").unwrap(), b"xyabcdw");
    }

    #[test]
    fn invalid_edits_are_refused_with_the_edit_named() {
        let err = |edits: &[(Range<usize>, &str)]| check(edits, 10).expect_err("refused");
        #[allow(clippy::reversed_empty_ranges)]
        let backwards = err(&[(5..3, "x")]);
        assert_eq!(backwards, "edits[0] (bytes 5..3) ends before it starts");
        assert_eq!(
            err(&[(2..4, "x"), (3..5, "y")]),
            "edits[1] (bytes 3..5) overlaps edits[0] (bytes 2..4)"
        );
        assert_eq!(
            err(&[(4..5, "x"), (1..2, "y")]),
            "edits[1] (bytes 1..2) comes before edits[0] (bytes 4..5): the edits are not sorted by position"
        );
        assert_eq!(
            err(&[(2..4, "x"), (3..3, "y")]),
            "edits[1] (bytes 3..3) overlaps edits[0] (bytes 2..4)"
        );
        assert_eq!(
            err(&[(8..11, "x")]),
            "edits[0] (bytes 8..11) reaches past the end of the file as it was read (10 bytes)"
        );
    }

    #[test]
    fn content_is_checked_when_spliced() {
        let s = check(&[(1..2, "x")], 3).expect("valid by length");
        assert_eq!(
            s.apply("é!".as_bytes()).unwrap_err(),
            "edits[0] (bytes 1..2) splits a UTF-8 character: ranges must start and end on character boundaries"
        );
        assert!(
            s.apply(b"a\xffb")
                .unwrap_err()
                .starts_with("the file is not UTF-8 text (invalid byte at offset 1)")
        );
    }
}
