//! Unified diffs made from a file's replacements: only the lines around them are diffed.
//!
//! A plan already knows which bytes change. Diffing the whole old file against the whole new
//! one to rediscover that cost more than a second on a preview over large generated files
//! (thousands of lines and replacements each). Here the replacements say which lines they
//! touch; replacements close enough to share context are grouped, each group's lines (with
//! the context around them) are diffed on their own with `similar`, and the hunks are shifted
//! to the file's line numbers. The text is what `similar`'s whole-file unified diff prints,
//! hunk for hunk, except where a whole-file diff could align an ambiguous insertion with a
//! line outside the group: both are then correct diffs of the same change.

use std::fmt::Write as _;
use std::ops::Range;

use similar::{DiffOp, TextDiff, udiff::UnifiedHunkHeader};

/// Appends the hunks of `original` → `original` with `splices` made (sorted, disjoint byte
/// ranges and their new text), with `radius` lines of context. Nothing when no line changes.
pub(crate) fn write_hunks<'a>(
    out: &mut String,
    original: &str,
    splices: impl IntoIterator<Item = (Range<usize>, &'a str)>,
    radius: usize,
) {
    let lines = LineIndex::new(original);
    let splices: Vec<(Range<usize>, &str)> = splices.into_iter().collect();
    // Lines shifted by the groups already written: new line = old line + delta.
    let mut delta: isize = 0;
    let mut at = 0;
    while at < splices.len() {
        // The group: every following splice whose touched lines are within reach of the
        // context of the previous one (a whole-file diff would put them in one hunk).
        let (first, mut last) = lines.touched(&splices[at].0);
        let mut end = at + 1;
        while let Some((next, _)) = splices.get(end) {
            let (next_first, next_last) = lines.touched(next);
            if next_first > last + 2 * radius + 1 {
                break;
            }
            last = last.max(next_last);
            end += 1;
        }
        let from = first.saturating_sub(radius);
        let to = (last + radius).min(lines.count().saturating_sub(1));
        let bytes = lines.start(from)..lines.end(to);
        let old = &original[bytes.clone()];
        let new = splice(original, bytes, &splices[at..end]);
        let new_from = from.checked_add_signed(delta).unwrap_or(0);
        write_region(out, old, &new, (from, new_from), radius);
        delta += count_lines(&new) as isize - count_lines(old) as isize;
        at = end;
    }
}

/// The hunks of one region whose first lines are `offset` (old, new) in the files.
fn write_region(out: &mut String, old: &str, new: &str, offset: (usize, usize), radius: usize) {
    let diff = TextDiff::from_lines(old, new);
    for group in diff.grouped_ops(radius) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let ends = [shift(*first, offset), shift(*last, offset)];
        let _ = writeln!(out, "{}", UnifiedHunkHeader::new(&ends));
        for op in &group {
            for change in diff.iter_changes(op) {
                let _ = write!(out, "{}{}", change.tag(), change.value());
                if change.missing_newline() {
                    out.push_str("\n\\ No newline at end of file\n");
                }
            }
        }
    }
}

/// `op` with its line numbers moved by `(old, new)`.
fn shift(op: DiffOp, (old, new): (usize, usize)) -> DiffOp {
    match op {
        DiffOp::Equal {
            old_index,
            new_index,
            len,
        } => DiffOp::Equal {
            old_index: old_index + old,
            new_index: new_index + new,
            len,
        },
        DiffOp::Delete {
            old_index,
            old_len,
            new_index,
        } => DiffOp::Delete {
            old_index: old_index + old,
            old_len,
            new_index: new_index + new,
        },
        DiffOp::Insert {
            old_index,
            new_index,
            new_len,
        } => DiffOp::Insert {
            old_index: old_index + old,
            new_index: new_index + new,
            new_len,
        },
        DiffOp::Replace {
            old_index,
            old_len,
            new_index,
            new_len,
        } => DiffOp::Replace {
            old_index: old_index + old,
            old_len,
            new_index: new_index + new,
            new_len,
        },
    }
}

/// `original[bytes]` with the `splices` (all inside `bytes`) made.
fn splice(original: &str, bytes: Range<usize>, splices: &[(Range<usize>, &str)]) -> String {
    let capacity = bytes.len();
    spliced(
        original,
        bytes,
        splices.iter().map(|(r, t)| (r, *t)),
        capacity,
    )
}

/// Where each line of `text` ends, as `similar` splits lines: after a `\n`, a `\r\n`, or a
/// `\r` on its own.
fn line_ends(text: &str) -> impl Iterator<Item = usize> + '_ {
    let bytes = text.as_bytes();
    memchr::memchr2_iter(b'\n', b'\r', bytes)
        .filter(move |&at| !(bytes[at] == b'\r' && bytes.get(at + 1) == Some(&b'\n')))
        .map(|at| at + 1)
}

/// Lines as `similar` splits them; a last one may have no line end.
fn count_lines(text: &str) -> usize {
    let ended = line_ends(text).count();
    ended + usize::from(!text.is_empty() && !text.ends_with(['\n', '\r']))
}

/// Where each line of a text starts (lines as [`line_ends`] ends them).
struct LineIndex {
    starts: Vec<usize>,
    len: usize,
}

impl LineIndex {
    fn new(text: &str) -> Self {
        // Sized up front (every line end is a `\n` or a `\r`): a large file has many lines.
        let ends = memchr::memchr2_iter(b'\n', b'\r', text.as_bytes()).count();
        let mut starts = Vec::with_capacity(ends + 1);
        starts.push(0);
        starts.extend(line_ends(text).filter(|&at| at < text.len()));
        LineIndex {
            starts,
            len: text.len(),
        }
    }

    /// Lines in the text (an empty text has none, but line 0 is its empty end).
    fn count(&self) -> usize {
        if self.len == 0 { 1 } else { self.starts.len() }
    }

    /// The line holding byte `at` (the last line for the end of the text).
    fn line_of(&self, at: usize) -> usize {
        self.starts.partition_point(|&start| start <= at) - 1
    }

    fn start(&self, line: usize) -> usize {
        self.starts[line]
    }

    /// Where `line` ends, after its line end.
    fn end(&self, line: usize) -> usize {
        self.starts.get(line + 1).copied().unwrap_or(self.len)
    }

    /// The first and last lines a splice of `range` can change: the line it starts in, and
    /// the line of the first byte it keeps (a removed `\n` joins that line to this one).
    fn touched(&self, range: &Range<usize>) -> (usize, usize) {
        (self.line_of(range.start), self.line_of(range.end))
    }
}

/// `original[bytes]` with `edits` (sorted, disjoint, all inside `bytes`) made, in a string
/// of `capacity` bytes: the new contents of a file, or of a few of its lines for a diff.
pub(crate) fn spliced<'a>(
    original: &str,
    bytes: Range<usize>,
    edits: impl IntoIterator<Item = (&'a Range<usize>, &'a str)>,
    capacity: usize,
) -> String {
    let mut out = String::with_capacity(capacity);
    let mut at = bytes.start;
    for (range, text) in edits {
        out.push_str(&original[at..range.start]);
        out.push_str(text);
        at = range.end;
    }
    out.push_str(&original[at..bytes.end]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn whole_file(original: &str, splices: &[(Range<usize>, &str)]) -> String {
        let new = splice(original, 0..original.len(), splices);
        TextDiff::from_lines(original, new.as_str())
            .unified_diff()
            .context_radius(3)
            .to_string()
    }

    fn by_region(original: &str, splices: &[(Range<usize>, &str)]) -> String {
        let mut out = String::new();
        write_hunks(&mut out, original, splices.iter().cloned(), 3);
        out
    }

    #[test]
    fn far_apart_changes_are_separate_hunks_with_file_line_numbers() {
        let original: String = (1..=40).map(|n| format!("line {n}\n")).collect();
        let at = |n: usize| original.find(&format!("line {n}\n")).unwrap();
        let splices = [
            (at(2)..at(3), "two\nand a half\n"),
            (at(20)..at(21), ""),
            (at(40)..original.len(), "forty"),
        ];
        let text = by_region(&original, &splices);
        assert_eq!(text, whole_file(&original, &splices));
        assert!(text.contains("@@ -1,5 +1,6 @@"), "{text}");
        assert!(text.contains("\\ No newline at end of file"), "{text}");
    }

    #[test]
    fn a_removed_newline_joins_the_next_line() {
        let original = "a\nb\nc\n";
        let splices = [(0..2, "x")];
        assert_eq!(
            by_region(original, &splices),
            whole_file(original, &splices)
        );
    }

    #[test]
    fn a_lone_carriage_return_ends_a_line_as_for_similar() {
        let original = "a\rb\n1\n2\r\n3\n4\n";
        let at = original.find('4').unwrap();
        let splices = [(at..at + 1, "X")];
        assert_eq!(
            by_region(original, &splices),
            whole_file(original, &splices)
        );
    }

    #[test]
    fn edits_of_empty_and_unterminated_files() {
        for (original, splices) in [
            ("", vec![(0..0, "new\n")]),
            ("only", vec![(0..4, "changed")]),
            ("a\nb", vec![(3..3, "\n")]),
            ("same\n", vec![(0..4, "same")]),
        ] {
            assert_eq!(
                by_region(original, &splices),
                whole_file(original, &splices)
            );
        }
    }

    proptest! {
        /// Unambiguous lines (each distinct): the region diff is the whole-file diff exactly.
        #[test]
        fn matches_the_whole_file_diff(
            ends in proptest::collection::vec(prop_oneof![Just("\n"), Just("\r\n"), Just("\r")], 0..60),
            edits in proptest::collection::vec((0usize..60, 0usize..3, 0usize..3, any::<bool>()), 0..8),
        ) {
            let lines = ends.len();
            let original: String =
                ends.iter().enumerate().map(|(n, end)| format!("line {n}{end}")).collect();
            // `line 1` is a prefix of `line 10`: find each line with the end it was given.
            let starts: Vec<usize> = (0..=lines)
                .map(|n| ends.get(n).map_or(original.len(), |end| {
                    original.find(&format!("line {n}{end}")).unwrap()
                }))
                .collect();
            let mut splices: Vec<(Range<usize>, String)> = Vec::new();
            let mut taken = 0;
            let mut sorted = edits.clone();
            sorted.sort();
            for (n, (line, span, added, mid)) in sorted.into_iter().enumerate() {
                let line = line.min(lines);
                let start = if mid && line < lines { starts[line] + 2 } else { starts[line] };
                let end = starts[(line + span).min(lines)].max(start);
                if start < taken {
                    continue;
                }
                let text: String = (0..added).map(|k| format!("new {n}.{k}\n")).collect();
                splices.push((start..end, text));
                taken = end.max(start + 1);
            }
            let splices: Vec<(Range<usize>, &str)> =
                splices.iter().map(|(r, t)| (r.clone(), t.as_str())).collect();
            prop_assert_eq!(by_region(&original, &splices), whole_file(&original, &splices));
        }
    }
}
