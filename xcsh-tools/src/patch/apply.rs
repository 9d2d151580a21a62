//! Applying an update's hunks to a file's text: each hunk found in order after the previous
//! one, its lines replaced, line endings kept.
//!
//! A context line keeps the file's own bytes (a leniently matched line is not rewritten to
//! the patch's spelling), and every line keeps its own ending; an added line takes the
//! ending of the file line next to it, so a CRLF file stays CRLF and a file with mixed
//! endings keeps each line's. As in Codex, a hunk without `-` or context lines and without
//! `@@` text appends at the end, and a changed last line gets an ending.

use super::diagnose;
use super::error::{PatchError, PatchErrorKind};
use super::parse::{Hunk, HunkLine};
use super::seek::{FileLines, Found, Leniency};
use crate::changeset::Splice;

/// The result of applying an update's hunks.
#[derive(Debug, Clone)]
pub(crate) struct Applied {
    /// The edits of the original text, in order, not overlapping.
    pub(crate) edits: Vec<Splice>,
    /// Hunks matched only leniently: (1-based hunk, its 1-based first line in the file,
    /// how).
    pub(crate) lenient: Vec<(usize, usize, Leniency)>,
}

/// Where a failure is reported: the operation's header and line.
pub(crate) struct Site<'a> {
    pub(crate) header: &'a str,
    pub(crate) op_line: usize,
    /// The file as the workspace names it, for FILE:LINE.
    pub(crate) display: &'a str,
}

impl Site<'_> {
    fn fail(&self, kind: PatchErrorKind, n: usize, hunk: &Hunk, message: String) -> PatchError {
        PatchError::hunk(
            kind,
            self.header.to_owned(),
            self.op_line,
            (n, hunk.line),
            message,
        )
    }
}

/// Applies `hunks` to `src`.
pub(crate) fn apply_hunks(
    src: &str,
    hunks: &[Hunk],
    site: &Site<'_>,
) -> Result<Applied, PatchError> {
    let file = FileLines::new(src);
    let usual = file.usual_ending();
    let mut cursor = 0usize;
    let mut edits: Vec<Splice> = Vec::new();
    let mut lenient = Vec::new();
    for (i, hunk) in hunks.iter().enumerate() {
        let n = i + 1;
        for context in &hunk.contexts {
            match file.seek(&[context.as_str()], cursor, false, true) {
                Found::One(at, _) => cursor = at + 1,
                Found::Several(places, _) => cursor = places[0] + 1,
                Found::Nowhere => {
                    return Err(site.fail(
                        PatchErrorKind::NoMatch,
                        n,
                        hunk,
                        diagnose::context_not_found(&file, context, cursor, site.display),
                    ));
                }
            }
        }
        let mut lines: &[HunkLine] = &hunk.lines;
        let old: Vec<&str> = hunk.old_lines();
        if old.is_empty() {
            // Only added lines: after the `@@` context, else at the end of the file.
            let at = if hunk.contexts.is_empty() {
                file.len()
            } else {
                cursor
            };
            edits.push(insertion(&file, at, lines, usual));
            continue;
        }
        let mut found = file.seek(&old, cursor, hunk.end_of_file, false);
        // A hunk ending in an empty context line may stand for the file's final newline.
        if found == Found::Nowhere && old.last() == Some(&"") {
            let trimmed = &lines[..lines.len() - 1];
            let old_trimmed = &old[..old.len() - 1];
            if !old_trimmed.is_empty() {
                let again = file.seek(old_trimmed, cursor, hunk.end_of_file, false);
                if again != Found::Nowhere {
                    lines = trimmed;
                    found = again;
                }
            }
        }
        let old_len = lines
            .iter()
            .filter(|l| !matches!(l, HunkLine::Insert(_)))
            .count();
        match found {
            Found::One(start, how) => {
                if how != Leniency::Exact {
                    lenient.push((n, start + 1, how));
                }
                edits.push(replacement(&file, start, lines, usual));
                cursor = start + old_len;
            }
            Found::Several(places, how) => {
                return Err(site.fail(
                    PatchErrorKind::Ambiguous,
                    n,
                    hunk,
                    diagnose::ambiguous(&file, &places, old_len, how, site.display),
                ));
            }
            Found::Nowhere => {
                return Err(site.fail(
                    PatchErrorKind::NoMatch,
                    n,
                    hunk,
                    diagnose::not_found(&file, hunk, cursor, site.display),
                ));
            }
        }
    }
    edits.sort_by_key(|e| (e.range.start, e.range.end));
    for pair in edits.windows(2) {
        if pair[1].range.start < pair[0].range.end {
            return Err(PatchError::file(
                site.header.to_owned(),
                site.op_line,
                "two hunks change the same lines; merge them into one hunk",
            ));
        }
    }
    Ok(Applied { edits, lenient })
}

/// The new text of `src` with `edits` spliced in.
pub(crate) fn splice(src: &str, edits: &[Splice]) -> String {
    let mut out = String::with_capacity(src.len());
    let mut at = 0;
    for e in edits {
        out.push_str(&src[at..e.range.start]);
        out.push_str(&e.text);
        at = e.range.end;
    }
    out.push_str(&src[at..]);
    out
}

/// `usual` when `ending` is empty (a last line without one that is no longer last).
fn or_usual<'a>(ending: &'a str, usual: &'a str) -> &'a str {
    if ending.is_empty() { usual } else { ending }
}

/// Inserting a hunk's added lines before line `at` (the end of the file when `at == len`).
fn insertion(file: &FileLines<'_>, at: usize, lines: &[HunkLine], usual: &str) -> Splice {
    let ending = if at > 0 {
        or_usual(file.ending(at - 1), usual)
    } else if file.len() > 0 {
        or_usual(file.ending(0), usual)
    } else {
        usual
    };
    let mut text = String::new();
    // The old last line had no ending: it gets one before the new lines.
    if at == file.len() && at > 0 && file.ending(at - 1).is_empty() {
        text.push_str(ending);
    }
    for line in lines {
        if let HunkLine::Insert(t) = line {
            text.push_str(t);
            text.push_str(ending);
        }
    }
    let offset = file.start_of(at);
    Splice::new(offset..offset, text)
}

/// Replacing the lines from `start` that a hunk's context and removed lines matched.
fn replacement(file: &FileLines<'_>, start: usize, lines: &[HunkLine], usual: &str) -> Splice {
    let old_len = lines
        .iter()
        .filter(|l| !matches!(l, HunkLine::Insert(_)))
        .count();
    // (text, ending) pieces of the new region.
    let mut pieces: Vec<(&str, &str)> = Vec::new();
    let mut at = start;
    // The ending an added line takes: that of the file line before it in the hunk, else the
    // first line the hunk matched.
    let mut ending = or_usual(file.ending(start), usual);
    for line in lines {
        match line {
            HunkLine::Context(_) => {
                pieces.push((file.text(at), file.ending(at)));
                ending = or_usual(file.ending(at), usual);
                at += 1;
            }
            HunkLine::Delete(_) => {
                ending = or_usual(file.ending(at), usual);
                at += 1;
            }
            HunkLine::Insert(t) => pieces.push((t.as_str(), ending)),
        }
    }
    let end_line = start + old_len;
    let is_last = end_line == file.len();
    let mut text = String::new();
    let count = pieces.len();
    for (i, (t, e)) in pieces.into_iter().enumerate() {
        text.push_str(t);
        // A line without an ending keeps none only where it still ends the file.
        if e.is_empty() && !(i + 1 == count && is_last) {
            text.push_str(usual);
        } else {
            text.push_str(e);
        }
    }
    let range = file.start_of(start)..file.lines[end_line - 1].end;
    Splice::new(range, text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::parse;

    fn run(src: &str, body: &str) -> Result<String, String> {
        let patch = parse(&format!(
            "*** Begin Patch\n*** Update File: f\n{body}\n*** End Patch"
        ))
        .unwrap();
        let crate::patch::FileOp::Update { hunks, .. } = &patch.ops[0] else {
            panic!()
        };
        let site = Site {
            header: "*** Update File: f",
            op_line: 2,
            display: "f",
        };
        apply_hunks(src, hunks, &site)
            .map(|a| splice(src, &a.edits))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn endings_are_kept_per_line() {
        assert_eq!(
            run("a\r\nb\r\nc\r\n", "@@\n a\n-b\n+B\n+B2").unwrap(),
            "a\r\nB\r\nB2\r\nc\r\n"
        );
        assert_eq!(
            run("a\nb\r\nc\n", "@@\n a\n-b\n+B\n c").unwrap(),
            "a\nB\r\nc\n"
        );
        assert_eq!(run("a\r\nb\n", "@@\n-a\n+x\n+y").unwrap(), "x\r\ny\r\nb\n");
    }

    #[test]
    fn last_line_without_newline() {
        // Codex's 014: a replaced last line ends with a newline.
        assert_eq!(
            run(
                "no newline at end",
                "@@\n-no newline at end\n+first line\n+second line"
            )
            .unwrap(),
            "first line\nsecond line\n"
        );
        // Untouched, it keeps none; appended to, it gets one.
        assert_eq!(run("a\nb", "@@\n-a\n+A").unwrap(), "A\nb");
        assert_eq!(run("a\nb", "@@\n+c").unwrap(), "a\nb\nc\n");
        assert_eq!(run("a\nb", "@@\n b\n+c").unwrap(), "a\nb\nc\n");
    }

    #[test]
    fn context_lines_keep_the_files_spelling() {
        assert_eq!(
            run("  x = 1  \ny\n", "@@\n x = 1\n-y\n+z").unwrap(),
            "  x = 1  \nz\n"
        );
    }

    #[test]
    fn headers_narrow_and_pure_additions_go_after_them() {
        let src = "class A:\n    def m(self):\n        return 1\nclass B:\n    def m(self):\n        return 1\n";
        assert_eq!(
            run(
                src,
                "@@ class B:\n@@     def m(self):\n-        return 1\n+        return 2"
            )
            .unwrap(),
            "class A:\n    def m(self):\n        return 1\nclass B:\n    def m(self):\n        return 2\n"
        );
        assert_eq!(run("a\nb\n", "@@ a\n+x").unwrap(), "a\nx\nb\n");
        assert_eq!(run("a\nb\n", "@@\n+x").unwrap(), "a\nb\nx\n");
    }

    #[test]
    fn end_of_file_and_the_final_empty_line() {
        assert_eq!(
            run("x\ny\nx\n", "@@\n-x\n+z\n*** End of File").unwrap(),
            "x\ny\nz\n"
        );
        assert_eq!(run("a\nb\n", "@@\n-b\n+c\n ").unwrap(), "a\nc\n");
    }
}
