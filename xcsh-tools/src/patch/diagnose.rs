//! What to tell the author of a hunk that does not apply: the closest place in the file
//! (FILE:LINE and the lines there), what differs line by line (indentation, whitespace,
//! punctuation, a changed line), and, when the difference is only in context lines or in
//! spacing, the hunk rewritten to match; for a hunk that matches in several places, each
//! place.

use std::collections::HashMap;
use std::fmt::Write as _;

use super::parse::{Hunk, HunkLine};
use super::seek::{FileLines, Found, Leniency};

/// Lines of the file shown around the closest place, at most.
const SHOWN_LINES: usize = 12;
/// A line found more often than this does not vote for a place (`}`, blank lines).
const MAX_VOTES_PER_LINE: usize = 64;

/// How a hunk line differs from the file line at the closest place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Difference {
    Same,
    TrailingWhitespace,
    Indentation,
    Punctuation,
    InnerWhitespace,
    Changed,
    PastEnd,
}

impl Difference {
    fn of(file: Option<&str>, hunk: &str) -> Self {
        let Some(file) = file else {
            return Difference::PastEnd;
        };
        if file == hunk {
            Difference::Same
        } else if file.trim_end() == hunk.trim_end() {
            Difference::TrailingWhitespace
        } else if file.trim() == hunk.trim() {
            Difference::Indentation
        } else if Leniency::Punctuation.key(file) == Leniency::Punctuation.key(hunk) {
            Difference::Punctuation
        } else if squeeze(&Leniency::Punctuation.key(file))
            == squeeze(&Leniency::Punctuation.key(hunk))
        {
            Difference::InnerWhitespace
        } else {
            Difference::Changed
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Difference::Same => "same",
            Difference::TrailingWhitespace => "trailing whitespace differs",
            Difference::Indentation => "indentation differs",
            Difference::Punctuation => "Unicode punctuation differs",
            Difference::InnerWhitespace => "whitespace inside the line differs",
            Difference::Changed => "a changed line",
            Difference::PastEnd => "past the end of the file",
        }
    }

    /// Whether the lenient match would have accepted this line.
    fn lenient(self) -> bool {
        matches!(
            self,
            Difference::Same
                | Difference::TrailingWhitespace
                | Difference::Indentation
                | Difference::Punctuation
        )
    }
}

/// The first place a seek found.
fn first_place(found: Found) -> Option<usize> {
    match found {
        Found::One(at, _) => Some(at),
        Found::Several(places, _) => places.first().copied(),
        Found::Nowhere => None,
    }
}

fn squeeze(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// `text`, shortened for a message.
fn short(text: &str) -> String {
    crate::engine::shorten(text, 120)
}

/// The message for a hunk whose lines are found nowhere after line `from`.
pub(crate) fn not_found(file: &FileLines<'_>, hunk: &Hunk, from: usize, display: &str) -> String {
    let old = hunk.old_lines();
    let m = old.len();
    let mut out = format!(
        "its {} (context and `-` lines) {} not in `{display}`{}.",
        super::plural(m, "line"),
        if m == 1 { "is" } else { "are" },
        if from > 0 {
            format!(" after line {from} (where the previous hunk or `@@` line matched)")
        } else {
            String::new()
        }
    );
    // The lines exist, but not where the hunk may go.
    match first_place(file.seek(&old, 0, false, true)) {
        Some(at) if at < from => {
            let _ = write!(
                out,
                " They are at {display}:{}, before that: the hunks of one file must come in file order, each after the previous one.",
                at + 1
            );
            return out;
        }
        Some(at) if hunk.end_of_file => {
            let _ = write!(
                out,
                " They are at {display}:{}, but the hunk is marked `*** End of File` and they do not end the file (it has {}); remove the marker or give the file's last lines.",
                at + 1,
                super::plural(file.len(), "line")
            );
            return out;
        }
        _ => {}
    }
    let Some(start) = closest(file, &old, from) else {
        let _ = write!(
            out,
            " None of them is in the file, even ignoring whitespace: check the path, or read the file again and write the hunk from what it holds."
        );
        return out;
    };
    let diffs: Vec<Difference> = (0..m)
        .map(|j| {
            Difference::of(
                (start + j < file.len()).then(|| file.text(start + j)),
                old[j],
            )
        })
        .collect();
    let agree = diffs.iter().filter(|d| d.lenient()).count();
    let _ = write!(
        out,
        "\nThe closest place is {display}:{}, where {agree} of {m} lines agree. What differs:",
        start + 1
    );
    // Hunk lines that are context lines, by old-line index.
    let kinds: Vec<bool> = hunk
        .lines
        .iter()
        .filter_map(|l| match l {
            HunkLine::Context(_) => Some(true),
            HunkLine::Delete(_) => Some(false),
            HunkLine::Insert(_) => None,
        })
        .collect();
    for (j, d) in diffs.iter().enumerate() {
        if d.lenient() && *d != Difference::Indentation && *d != Difference::Punctuation {
            continue;
        }
        if *d == Difference::PastEnd {
            let _ = write!(
                out,
                "\n  {display}:{}: past the end of the file (it has {}); the hunk expects `{}`",
                start + j + 1,
                super::plural(file.len(), "line"),
                short(old[j])
            );
            continue;
        }
        let what = if kinds[j] { "context" } else { "removed" };
        let _ = write!(
            out,
            "\n  {display}:{}: {}: the file has `{}`, the hunk's {what} line `{}`",
            start + j + 1,
            d.describe(),
            short(file.text(start + j)),
            short(old[j])
        );
    }
    let first = start.saturating_sub(1);
    let last = (start + m + 1).min(file.len()).min(first + SHOWN_LINES);
    let _ = write!(out, "\nThe lines there:");
    for i in first..last {
        let _ = write!(out, "\n  {:>5} | {}", i + 1, short(file.text(i)));
    }
    // Rewritten to match: only where nothing removed is in doubt.
    let fits = start + m <= file.len();
    let safe = diffs
        .iter()
        .zip(&kinds)
        .all(|(d, context)| *d != Difference::PastEnd && (*context || *d != Difference::Changed));
    if fits && safe && agree * 2 >= m {
        let _ = write!(
            out,
            "\nIf that is the place, this hunk matches it (the file's lines in place of the hunk's context and `-` lines):\n"
        );
        let mut at = start;
        for context in &hunk.contexts {
            let _ = writeln!(out, "@@ {context}");
        }
        if hunk.contexts.is_empty() {
            out.push_str("@@\n");
        }
        for line in &hunk.lines {
            match line {
                HunkLine::Context(_) => {
                    let _ = writeln!(out, " {}", file.text(at));
                    at += 1;
                }
                HunkLine::Delete(_) => {
                    let _ = writeln!(out, "-{}", file.text(at));
                    at += 1;
                }
                HunkLine::Insert(t) => {
                    let _ = writeln!(out, "+{t}");
                }
            }
        }
        if hunk.end_of_file {
            out.push_str("*** End of File\n");
        }
        out.truncate(out.trim_end().len());
    } else if diffs
        .iter()
        .zip(&kinds)
        .any(|(d, context)| !*context && *d == Difference::Changed)
    {
        let _ = write!(
            out,
            "\nA line the hunk removes is different in the file: read the file again and write the hunk from what it holds now."
        );
    }
    out
}

/// The 0-based line where most of `old`'s lines line up with the file (ignoring whitespace
/// and punctuation look-alikes), preferring places at or after `from`, then the nearest.
fn closest(file: &FileLines<'_>, old: &[&str], from: usize) -> Option<usize> {
    let mut votes: HashMap<usize, usize> = HashMap::new();
    for (j, line) in old.iter().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let places = file.lines_like(line, Leniency::Punctuation, 0);
        if places.len() > MAX_VOTES_PER_LINE {
            continue;
        }
        for &p in places {
            if let Some(start) = (p as usize).checked_sub(j) {
                *votes.entry(start).or_default() += 1;
            }
        }
    }
    if let Some((&start, _)) = votes
        .iter()
        .max_by_key(|&(&start, &n)| (n, start >= from, std::cmp::Reverse(start.abs_diff(from))))
    {
        return Some(start);
    }
    // No line agrees even leniently: the line most like the hunk's first non-blank one.
    let (j, first) = old.iter().enumerate().find(|(_, l)| !l.trim().is_empty())?;
    let want = first.trim();
    let (best, score) = (0..file.len())
        .map(|i| {
            let ratio = similar::TextDiff::from_chars(file.text(i).trim(), want).ratio();
            (i, ratio)
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    (score >= 0.6).then(|| best.saturating_sub(j))
}

/// The message for a `@@ context` line found nowhere after line `from`.
pub(crate) fn context_not_found(
    file: &FileLines<'_>,
    context: &str,
    from: usize,
    display: &str,
) -> String {
    let mut out = format!("its `@@ {context}` line is not in `{display}`");
    if from > 0 {
        let _ = write!(out, " after line {from}");
    }
    out.push('.');
    if let Some(at) = first_place(file.seek(&[context], 0, false, true)) {
        let _ = write!(
            out,
            " It is at {display}:{}, before that: `@@` lines and hunks must come in file order.",
            at + 1
        );
        return out;
    }
    let want = context.trim();
    let best = (0..file.len())
        .map(|i| {
            (
                i,
                similar::TextDiff::from_chars(file.text(i).trim(), want).ratio(),
            )
        })
        .filter(|(_, r)| *r >= 0.6)
        .max_by(|a, b| a.1.total_cmp(&b.1));
    match best {
        Some((i, _)) => {
            let _ = write!(
                out,
                " The closest line is {display}:{}: `{}` ({}); write `@@ {}` to use it.",
                i + 1,
                short(file.text(i)),
                Difference::of(Some(file.text(i)), context).describe(),
                file.text(i).trim()
            );
        }
        None => out.push_str(
            " No line is like it: a `@@` line names a line of the file (a class or function) above the change.",
        ),
    }
    out
}

/// The message for a hunk whose lines match at each of `places` (0-based), `len` lines long.
pub(crate) fn ambiguous(
    file: &FileLines<'_>,
    places: &[usize],
    len: usize,
    how: Leniency,
    display: &str,
) -> String {
    let more = if places.len() > 10 { " or more" } else { "" };
    let mut out = format!(
        "its lines match {}{more} places in `{display}`{}, and nothing says which:",
        places.len().min(10),
        if how == Leniency::Exact {
            String::new()
        } else {
            format!(" (ignoring {})", how.describe())
        }
    );
    for &p in places.iter().take(10) {
        let range = if len == 1 {
            format!("{display}:{}", p + 1)
        } else {
            format!("{display}:{}-{}", p + 1, p + len)
        };
        let _ = write!(out, "\n  {range}");
        if let Some(owner) = enclosing(file, p) {
            let _ = write!(
                out,
                " (under {display}:{}: `{}`)",
                owner + 1,
                short(file.text(owner).trim())
            );
        }
    }
    out.push_str(
        "\nAdd a `@@` line naming the class or function above the one you mean (e.g. `@@ def name():`), or more context lines, so that one place matches.",
    );
    out
}

/// The nearest line above `at` that is less indented than it (and not blank): the block it
/// is in.
fn enclosing(file: &FileLines<'_>, at: usize) -> Option<usize> {
    let indent = |s: &str| s.len() - s.trim_start().len();
    let own = indent(file.text(at));
    (0..at)
        .rev()
        .take(2000)
        .find(|&i| !file.text(i).trim().is_empty() && indent(file.text(i)) < own)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::parse;

    fn hunk(body: &str) -> Hunk {
        let p = parse(&format!(
            "*** Begin Patch\n*** Update File: f\n{body}\n*** End Patch"
        ))
        .unwrap();
        let crate::patch::FileOp::Update { hunks, .. } = &p.ops[0] else {
            panic!()
        };
        hunks[0].clone()
    }

    #[test]
    fn a_changed_context_line_is_named_and_the_hunk_rewritten() {
        let src = "fn a() {}\nfn f() {\n    let x = 1;\n    let y = 2;\n    x + y\n}\n";
        let file = FileLines::new(src);
        let h = hunk("@@\n fn f() {\n     let x = 10;\n-    let y = 2;\n+    let y = 3;");
        let msg = not_found(&file, &h, 0, "src/f.rs");
        assert!(
            msg.contains("The closest place is src/f.rs:2, where 2 of 3 lines agree"),
            "{msg}"
        );
        assert!(msg.contains("src/f.rs:3: a changed line: the file has `    let x = 1;`, the hunk's context line `    let x = 10;`"), "{msg}");
        assert!(
            msg.contains("\n@@\n fn f() {\n     let x = 1;\n-    let y = 2;\n+    let y = 3;"),
            "{msg}"
        );
    }

    #[test]
    fn a_changed_removed_line_is_not_rewritten() {
        let file = FileLines::new("a\nb\nc\n");
        let msg = not_found(&file, &hunk("@@\n a\n-B2\n c"), 0, "f");
        assert!(
            msg.contains("f:2: a changed line: the file has `b`, the hunk's removed line `B2`"),
            "{msg}"
        );
        assert!(
            msg.contains("A line the hunk removes is different in the file"),
            "{msg}"
        );
        assert!(!msg.contains("this hunk matches it"), "{msg}");
    }

    #[test]
    fn inner_whitespace_and_nothing_alike() {
        let file = FileLines::new("x = foo(a,  b)\ny\n");
        let msg = not_found(&file, &hunk("@@\n-x = foo(a, b)\n+x = 1\n y"), 0, "f");
        assert!(msg.contains("whitespace inside the line differs"), "{msg}");
        assert!(msg.contains("\n@@\n-x = foo(a,  b)\n+x = 1\n y"), "{msg}");
        let msg = not_found(&file, &hunk("@@\n-completely different\n+z"), 0, "f");
        assert!(msg.contains("None of them is in the file"), "{msg}");
    }

    #[test]
    fn ambiguous_lists_each_place_with_its_block() {
        let src = "def a():\n    return 1\ndef b():\n    return 1\n";
        let file = FileLines::new(src);
        let msg = ambiguous(&file, &[1, 3], 1, Leniency::Exact, "m.py");
        assert!(msg.contains("match 2 places in `m.py`"), "{msg}");
        assert!(
            msg.contains("m.py:2 (under m.py:1: `def a():`)\n  m.py:4 (under m.py:3: `def b():`)"),
            "{msg}"
        );
    }

    #[test]
    fn out_of_order_and_end_of_file() {
        let file = FileLines::new("a\nb\nc\n");
        let msg = not_found(&file, &hunk("@@\n-a\n+x"), 2, "f");
        assert!(msg.contains("They are at f:1, before that"), "{msg}");
        let msg = not_found(&file, &hunk("@@\n-a\n+x\n*** End of File"), 0, "f");
        assert!(msg.contains("marked `*** End of File`"), "{msg}");
        let msg = context_not_found(&file, "bb", 0, "f");
        assert!(msg.contains("The closest line is f:2: `b`"), "{msg}");
    }
}
