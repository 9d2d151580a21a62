//! Unified diffs made from a file's replacements: only the lines around them are diffed.
//!
//! A plan already knows which bytes change. Diffing the whole old file against the whole new
//! one to rediscover that cost more than a second on a preview over large generated files
//! (thousands of lines and replacements each). Here the replacements say which lines they
//! touch; replacements close enough to share context are grouped, and within a group each
//! run of touched lines (a piece) is diffed on its own with `similar`, the untouched lines
//! between pieces kept equal: a diff of the whole group searched every line against every
//! other, quadratic in its changed lines when a rewrite re-indents many functions a blank
//! line apart. The hunks are shifted to the file's line numbers. Where lines are unambiguous
//! the text is what `similar`'s whole-file unified diff prints, hunk for hunk; where a line
//! repeats (a blank line, a `}`), a whole-file diff may align a changed line with an
//! unchanged one elsewhere: both are then correct diffs of the same change.

use std::fmt::Write as _;
use std::ops::Range;

use similar::{DiffOp, TextDiff, group_diff_ops, udiff::UnifiedHunkHeader};

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
    for group in groups(&lines, &splices, radius) {
        let bytes = lines.start(group.from)..lines.end(group.to);
        let old = &original[bytes.clone()];
        let new = splice(original, bytes, &splices[group.splices]);
        let offset = (
            group.from,
            group.from.checked_add_signed(delta).unwrap_or(0),
        );
        let region = Region::new(old, &new, offset);
        region.write(out, region.ops(&group.pieces), radius);
        delta += region.new_lines.line_count() as isize - region.old_lines.line_count() as isize;
    }
}

/// Splices close enough to share context, diffed as one region: lines `from..=to`.
struct Group {
    splices: Range<usize>,
    from: usize,
    to: usize,
    pieces: Vec<Piece>,
}

/// The groups of `splices` (sorted, disjoint): each takes every following splice whose
/// touched lines are within reach of the context of the previous one (a whole-file diff would
/// put them in one hunk).
fn groups<'s>(
    lines: &'s LineIndex,
    splices: &'s [(Range<usize>, &str)],
    radius: usize,
) -> impl Iterator<Item = Group> + 's {
    let mut at = 0;
    std::iter::from_fn(move || {
        let (first, mut last) = lines.touched(&splices.get(at)?.0);
        let from = first.saturating_sub(radius);
        let base = lines.start(from);
        let mut pieces: Vec<Piece> = Vec::new();
        let mut end = at;
        let mut grown: isize = 0;
        while let Some((range, text)) = splices.get(end) {
            let (next_first, next_last) = lines.touched(range);
            if end > at && next_first > last + 2 * radius + 1 {
                break;
            }
            let old = lines.start(next_first) - base..lines.end(next_last) - base;
            let added = text.len() as isize - range.len() as isize;
            match pieces.last_mut() {
                // Overlapping or adjoining lines: one piece, as a diff of both shows them.
                Some(piece) if next_first <= last + 1 => {
                    piece.old.end = piece.old.end.max(old.end);
                    piece.grown += added;
                }
                _ => pieces.push(Piece {
                    old,
                    grown_before: grown,
                    grown: added,
                }),
            }
            grown += added;
            last = last.max(next_last);
            end += 1;
        }
        let group = Group {
            splices: at..end,
            from,
            to: (last + radius).min(lines.line_count().saturating_sub(1)),
            pieces,
        };
        at = end;
        Some(group)
    })
}

/// Splices whose touched lines overlap or adjoin: `old` is their lines' bytes in the
/// group's region, which their edits grow by `grown` bytes, after `grown_before` bytes of
/// the group's earlier pieces.
struct Piece {
    old: Range<usize>,
    grown_before: isize,
    grown: isize,
}

/// A group's lines before and after its splices, whose first lines are `offset` (old, new)
/// in the files.
struct Region<'a> {
    old: &'a str,
    new: &'a str,
    old_lines: LineIndex,
    new_lines: LineIndex,
    offset: (usize, usize),
}

impl<'a> Region<'a> {
    fn new(old: &'a str, new: &'a str, offset: (usize, usize)) -> Self {
        Region {
            old,
            new,
            old_lines: LineIndex::new(old),
            new_lines: LineIndex::new(new),
            offset,
        }
    }

    /// The region's diff: [piecewise](Self::piecewise_ops) where it can be, else `similar`'s
    /// diff of the whole region.
    fn ops(&self, pieces: &[Piece]) -> Vec<DiffOp> {
        self.piecewise_ops(pieces)
            .unwrap_or_else(|| TextDiff::from_lines(self.old, self.new).ops().to_vec())
    }

    /// The diff of the region as each piece's own diff, with the lines between pieces
    /// (untouched by any splice) kept equal: a diff of the whole region would search for
    /// an alignment of every line with every other, quadratic in its changed lines when a
    /// rewrite re-indents many bodies close together (and thus in one group). Where the
    /// lines between pieces do not line up as the same lines in the new text (a splice
    /// that joins a lone `\r` to a `\n`), nothing: the caller diffs the whole region.
    fn piecewise_ops(&self, pieces: &[Piece]) -> Option<Vec<DiffOp>> {
        let (old_lines, new_lines) = (&self.old_lines, &self.new_lines);
        let mut ops: Vec<DiffOp> = Vec::with_capacity(2 * pieces.len() + 1);
        let (mut old_line, mut new_line) = (0, 0);
        for piece in pieces {
            let old = piece.old.clone();
            let new_start = old.start.checked_add_signed(piece.grown_before)?;
            let new = new_start
                ..old
                    .end
                    .checked_add_signed(piece.grown_before + piece.grown)?;
            let (old_at, new_at) = (
                old_lines.line_starting_at(old.start)?,
                new_lines.line_starting_at(new.start)?,
            );
            // The untouched lines before this piece: the same lines on both sides.
            let kept = old_at - old_line;
            if new_at.checked_sub(new_line)? != kept
                || self.old[old_lines.start_or_end(old_line)..old.start]
                    != self.new[new_lines.start_or_end(new_line)..new.start]
            {
                return None;
            }
            push_equal(&mut ops, old_line, new_line, kept);
            let (old_end, new_end) = (
                old_lines.line_starting_at(old.end)?,
                new_lines.line_starting_at(new.end)?,
            );
            let diff = TextDiff::from_lines(&self.old[old], &self.new[new]);
            for op in diff.ops() {
                match shift(*op, (old_at, new_at)) {
                    DiffOp::Equal {
                        old_index,
                        new_index,
                        len,
                    } => push_equal(&mut ops, old_index, new_index, len),
                    op => ops.push(op),
                }
            }
            (old_line, new_line) = (old_end, new_end);
        }
        let kept = old_lines.line_count() - old_line;
        if new_lines.line_count().checked_sub(new_line)? != kept
            || self.old[old_lines.start_or_end(old_line)..]
                != self.new[new_lines.start_or_end(new_line)..]
        {
            return None;
        }
        push_equal(&mut ops, old_line, new_line, kept);
        Some(ops)
    }

    /// Appends the hunks of `ops` (the region's diff), each with `radius` lines of context.
    fn write(&self, out: &mut String, ops: Vec<DiffOp>, radius: usize) {
        let old: Vec<&str> = self.old_lines.lines(self.old).collect();
        let new: Vec<&str> = self.new_lines.lines(self.new).collect();
        for group in group_diff_ops(ops, radius) {
            let (Some(first), Some(last)) = (group.first(), group.last()) else {
                continue;
            };
            let ends = [shift(*first, self.offset), shift(*last, self.offset)];
            let _ = writeln!(out, "{}", UnifiedHunkHeader::new(&ends));
            for op in &group {
                for change in op.iter_changes(&old[..], &new[..]) {
                    let _ = write!(out, "{}{}", change.tag(), change.value());
                    if change.missing_newline() {
                        out.push_str("\n\\ No newline at end of file\n");
                    }
                }
            }
        }
    }
}

/// Appends `len` equal lines to `ops`, joined to an equal run they follow.
fn push_equal(ops: &mut Vec<DiffOp>, old_index: usize, new_index: usize, len: usize) {
    if len == 0 {
        return;
    }
    if let Some(DiffOp::Equal { len: before, .. }) = ops.last_mut() {
        *before += len;
        return;
    }
    ops.push(DiffOp::Equal {
        old_index,
        new_index,
        len,
    });
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

    /// Lines in the text, none for an empty one.
    fn line_count(&self) -> usize {
        if self.len == 0 { 0 } else { self.starts.len() }
    }

    /// The lines of `text`, the text this index was made of, each with its line end.
    fn lines<'t>(&self, text: &'t str) -> impl Iterator<Item = &'t str> + use<'t, '_> {
        (0..self.line_count()).map(move |line| &text[self.starts[line]..self.end(line)])
    }

    /// The line that starts at byte `at`, or [`line_count`](Self::line_count) for the
    /// end of the text; nothing inside a line.
    fn line_starting_at(&self, at: usize) -> Option<usize> {
        if at == self.len {
            return Some(self.line_count());
        }
        self.starts.binary_search(&at).ok()
    }

    /// Where `line` starts, or the end of the text for the line after the last.
    fn start_or_end(&self, line: usize) -> usize {
        self.starts.get(line).copied().unwrap_or(self.len)
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
    use similar::ChangeTag;

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

    /// Each group's region of `original` with `splices` made, and its pieces.
    fn regions(original: &str, splices: &[(Range<usize>, &str)]) -> Vec<(String, String, Group)> {
        let lines = LineIndex::new(original);
        groups(&lines, splices, 3)
            .map(|group| {
                let bytes = lines.start(group.from)..lines.end(group.to);
                let new = splice(original, bytes.clone(), &splices[group.splices.clone()]);
                (original[bytes].to_owned(), new, group)
            })
            .collect()
    }

    /// The piecewise diff of a region's `old` → `new`, made of `pieces`.
    fn piecewise(old: &str, new: &str, pieces: &[Piece]) -> Option<Vec<DiffOp>> {
        Region::new(old, new, (0, 0)).piecewise_ops(pieces)
    }

    /// Of `original` with `splices` made, which must be one region: whether it is diffed
    /// piece by piece, and in how many pieces.
    fn one_region(original: &str, splices: &[(Range<usize>, &str)]) -> (bool, usize) {
        let regions = regions(original, splices);
        let [(old, new, group)] = &regions[..] else {
            panic!("one region: {}", regions.len());
        };
        let pieces = &group.pieces;
        (piecewise(old, new, pieces).is_some(), pieces.len())
    }

    /// Splices made from `(line, lines spanned, lines added, from mid-line)` edits of a text
    /// whose lines start at `starts` (and end at its last), added lines named by `line`.
    fn splices_of(
        starts: &[usize],
        edits: &[(usize, usize, usize, bool)],
        line: impl Fn(usize, usize) -> String,
    ) -> Vec<(Range<usize>, String)> {
        let lines = starts.len() - 1;
        let mut splices: Vec<(Range<usize>, String)> = Vec::new();
        let mut taken = 0;
        let mut sorted = edits.to_vec();
        sorted.sort();
        for (n, (at, span, added, mid)) in sorted.into_iter().enumerate() {
            let at = at.min(lines);
            let start = if mid && at < lines {
                starts[at] + 1
            } else {
                starts[at]
            };
            let end = starts[(at + span).min(lines)].max(start);
            if start < taken {
                continue;
            }
            splices.push((start..end, (0..added).map(|k| line(n, k)).collect()));
            taken = end.max(start + 1);
        }
        splices
    }

    #[test]
    fn changes_close_together_are_diffed_piece_by_piece() {
        // Re-indented bodies one blank line apart: one region, two pieces, each diffed alone.
        let original = "fn a() {\n    x;\n}\n\nfn b() {\n    y;\n}\n";
        let b = original.find("fn b").unwrap();
        let splices = [
            (0..b - 2, "fn a() -> () { x;\n}"),
            (b..original.len() - 1, "fn b() -> () { y;\n}"),
        ];
        assert_eq!(one_region(original, &splices), (true, 2));
        assert_eq!(
            by_region(original, &splices),
            whole_file(original, &splices)
        );
    }

    #[test]
    fn a_splice_that_joins_a_lone_carriage_return_to_a_newline_is_diffed_whole() {
        let original = "a\rb\nc\n";
        let splices = [(2..3, "\nB")];
        assert_eq!(one_region(original, &splices), (false, 1));
        assert_eq!(
            by_region(original, &splices),
            whole_file(original, &splices)
        );
    }

    proptest! {
        /// Unambiguous lines (each distinct): each region is diffed piece by piece, and that
        /// is `similar`'s diff of the whole region exactly.
        #[test]
        fn piecewise_is_the_whole_region_diff(
            lines in 0usize..60,
            edits in proptest::collection::vec((0usize..60, 0usize..3, 0usize..3, any::<bool>()), 0..8),
        ) {
            let original: String = (0..lines).map(|n| format!("line {n}\n")).collect();
            let starts: Vec<usize> = std::iter::once(0)
                .chain(original.match_indices('\n').map(|(at, _)| at + 1))
                .collect();
            let splices = splices_of(&starts, &edits, |n, k| format!("new {n}.{k}\n"));
            let splices: Vec<(Range<usize>, &str)> =
                splices.iter().map(|(r, t)| (r.clone(), t.as_str())).collect();
            for (old, new, group) in regions(&original, &splices) {
                prop_assert_eq!(
                    piecewise(&old, &new, &group.pieces),
                    Some(TextDiff::from_lines(&old, &new).ops().to_vec())
                );
            }
        }

        /// Lines that repeat (blank ones, braces): the diff may align them otherwise than a
        /// whole-region diff would, but it is a diff of the change: its lines make the old
        /// region and the new one.
        #[test]
        fn piecewise_is_a_diff_of_the_change(
            words in proptest::collection::vec(0usize..4, 0..40),
            edits in proptest::collection::vec((0usize..40, 0usize..4, 0usize..4, any::<bool>()), 0..8),
        ) {
            const LINES: [&str; 4] = ["\n", "}\n", "    x;\n", "x;\n"];
            let original: String = words.iter().map(|&w| LINES[w]).collect();
            let starts: Vec<usize> = std::iter::once(0)
                .chain(original.match_indices('\n').map(|(at, _)| at + 1))
                .collect();
            let splices = splices_of(&starts, &edits, |n, k| LINES[(n + k) % 4].to_owned());
            let splices: Vec<(Range<usize>, &str)> =
                splices.iter().map(|(r, t)| (r.clone(), t.as_str())).collect();
            for (old, new, group) in regions(&original, &splices) {
                let ops = piecewise(&old, &new, &group.pieces);
                prop_assert!(ops.is_some(), "no lone carriage return, so piece by piece");
                let (old_lines, new_lines): (Vec<&str>, Vec<&str>) =
                    (LineIndex::new(&old).lines(&old).collect(), LineIndex::new(&new).lines(&new).collect());
                let (mut made_old, mut made_new) = (String::new(), String::new());
                for op in ops.unwrap() {
                    for change in op.iter_changes(&old_lines[..], &new_lines[..]) {
                        match change.tag() {
                            ChangeTag::Equal => {
                                made_old.push_str(change.value());
                                made_new.push_str(change.value());
                            }
                            ChangeTag::Delete => made_old.push_str(change.value()),
                            ChangeTag::Insert => made_new.push_str(change.value()),
                        }
                    }
                }
                prop_assert_eq!(made_old, old);
                prop_assert_eq!(made_new, new);
            }
        }

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
            let splices = splices_of(&starts, &edits, |n, k| format!("new {n}.{k}\n"));
            let splices: Vec<(Range<usize>, &str)> =
                splices.iter().map(|(r, t)| (r.clone(), t.as_str())).collect();
            prop_assert_eq!(by_region(&original, &splices), whole_file(&original, &splices));
        }
    }
}
