//! What of a replacement really changes. A rewrite such as `fn $F() { $$$B }` →
//! `fn $F() -> () { $$$B }` puts back most of what it replaces: the body, line for line,
//! re-indented where the template puts it at another depth (as ast-grep re-indents a
//! metavariable's lines). A plan keeps the new text as pieces of the old one, so that a
//! rewrite of whole functions in a thousand files does not hold every body a second time:
//! new bytes where they differ, and for lines put back, only how each is re-indented.

use std::borrow::Cow;
use std::ops::Range;

/// The new texts of one file's replacements, kept as [`pieces`] of its original: each
/// replacement's are found through its [`Slot`].
#[derive(Clone, Debug, Default)]
pub(super) struct NewTexts {
    parts: Vec<Part>,
    cuts: Vec<LineCut>,
    /// The new bytes of the `New` parts and the indents of the `Lines` parts, in order.
    inserted: String,
}

/// A [`Piece`] as kept: ranges of the old text are the original's, of the new text
/// `NewTexts::inserted`'s.
#[derive(Clone, Debug)]
enum Part {
    New {
        old: Range<usize>,
        text: Range<usize>,
    },
    Kept {
        old: Range<usize>,
    },
    Lines {
        old: Range<usize>,
        indent: Range<usize>,
        /// In `NewTexts::cuts`, one per line.
        cuts: Range<usize>,
    },
}

/// A line re-indented: where it starts in the original, and how many bytes it loses.
#[derive(Clone, Copy, Debug)]
struct LineCut {
    at: u32,
    strip: u32,
}

/// Where one replacement's parts are in its file's [`NewTexts`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Slot {
    parts: Range<usize>,
    inserted_at: usize,
    cuts_at: usize,
}

impl NewTexts {
    /// Keeps `text`, which replaces the bytes `range` of `original`.
    pub(super) fn push(&mut self, original: &str, range: Range<usize>, text: &str) -> Slot {
        let slot_start = Slot {
            parts: self.parts.len()..self.parts.len(),
            inserted_at: self.inserted.len(),
            cuts_at: self.cuts.len(),
        };
        let at = range.start;
        let shift = |r: Range<usize>| at + r.start..at + r.end;
        // Line cuts hold offsets as `u32`: past 4 GiB (only with a raised file size limit) the
        // text is kept whole.
        let pieces = if u32::try_from(range.end).is_ok() {
            pieces(&original[range.clone()], text)
        } else {
            vec![Piece::New {
                old: 0..range.len(),
                new: 0..text.len(),
            }]
        };
        for piece in pieces {
            let part = match piece {
                Piece::New { old, new } => {
                    let start = self.inserted.len();
                    self.inserted.push_str(&text[new]);
                    Part::New {
                        old: shift(old),
                        text: start..self.inserted.len(),
                    }
                }
                Piece::Kept { old } => Part::Kept { old: shift(old) },
                Piece::Lines {
                    old,
                    indent,
                    strips,
                } => {
                    let start = self.inserted.len();
                    self.inserted.push_str(&text[indent]);
                    let first = self.cuts.len();
                    let mut line = at + old.start;
                    for (l, strip) in original[shift(old.clone())]
                        .split_inclusive('\n')
                        .zip(strips)
                    {
                        // Below 4 GiB (checked above).
                        let line_at = u32::try_from(line).unwrap_or(u32::MAX);
                        self.cuts.push(LineCut { at: line_at, strip });
                        line += l.len();
                    }
                    Part::Lines {
                        old: shift(old),
                        indent: start..self.inserted.len(),
                        cuts: first..self.cuts.len(),
                    }
                }
            };
            self.parts.push(part);
        }
        Slot {
            parts: slot_start.parts.start..self.parts.len(),
            ..slot_start
        }
    }

    /// The text of `slot` when it is kept whole (it keeps nothing of what it replaces).
    pub(super) fn whole(&self, slot: &Slot) -> Option<&str> {
        match &self.parts[slot.parts.clone()] {
            [Part::New { text, .. }] => Some(&self.inserted[text.clone()]),
            _ => None,
        }
    }

    /// The text of `slot`, made with `original` (the text the plan read) where it keeps some.
    pub(super) fn text<'a>(&'a self, slot: &Slot, original: &'a str) -> Cow<'a, str> {
        if let Some(whole) = self.whole(slot) {
            return Cow::Borrowed(whole);
        }
        let mut out = String::new();
        for part in &self.parts[slot.parts.clone()] {
            match part {
                Part::New { text, .. } => out.push_str(&self.inserted[text.clone()]),
                Part::Kept { old } => out.push_str(&original[old.clone()]),
                Part::Lines { old, indent, cuts } => {
                    let cuts = &self.cuts[cuts.clone()];
                    for (i, cut) in cuts.iter().enumerate() {
                        let end = cuts.get(i + 1).map_or(old.end, |next| next.at as usize);
                        out.push_str(&self.inserted[indent.clone()]);
                        out.push_str(&original[(cut.at + cut.strip) as usize..end]);
                    }
                }
            }
        }
        Cow::Owned(out)
    }

    /// The edits of the original that make the new texts of `slots` (in order): sorted,
    /// disjoint byte ranges and the text each gets; what is kept is not among them, and a
    /// re-indented line is an edit of its indent.
    pub(super) fn edits<'a>(
        &'a self,
        slots: impl IntoIterator<Item = &'a Slot>,
    ) -> Vec<(Range<usize>, &'a str)> {
        let mut out = Vec::new();
        for slot in slots {
            for part in &self.parts[slot.parts.clone()] {
                match part {
                    Part::New { old, text } => {
                        out.push((old.clone(), &self.inserted[text.clone()]));
                    }
                    Part::Kept { .. } => {}
                    Part::Lines { indent, cuts, .. } => {
                        let indent = &self.inserted[indent.clone()];
                        for cut in &self.cuts[cuts.clone()] {
                            let at = cut.at as usize;
                            if cut.strip > 0 || !indent.is_empty() {
                                out.push((at..at + cut.strip as usize, indent));
                            }
                        }
                    }
                }
            }
        }
        out
    }

    /// Keeps only the texts before `slot` (and `slot` is the first one dropped).
    pub(super) fn truncate(&mut self, slot: &Slot) {
        self.parts.truncate(slot.parts.start);
        self.inserted.truncate(slot.inserted_at);
        self.cuts.truncate(slot.cuts_at);
        self.shrink_to_fit();
    }

    pub(super) fn shrink_to_fit(&mut self) {
        self.parts.shrink_to_fit();
        self.inserted.shrink_to_fit();
        self.cuts.shrink_to_fit();
    }
}

/// One piece of a replacement, in order: together they consume the replaced text from its
/// start to its end and make the new text. Ranges are relative to the start of each text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Piece {
    /// The old bytes `old` give way to the new bytes `new` (either may be empty).
    New {
        old: Range<usize>,
        new: Range<usize>,
    },
    /// The old bytes `old`, as they are.
    Kept { old: Range<usize> },
    /// The old text's lines in `old` (whole lines), each with its first `strips[i]` bytes
    /// (spaces or tabs) taken off and the new bytes `indent` put before it.
    Lines {
        old: Range<usize>,
        indent: Range<usize>,
        strips: Vec<u32>,
    },
}

/// Below this many bytes (both texts together) a replacement is one piece, whole: what it
/// shares with the text it replaces is not worth the bookkeeping, and the new text stays in
/// hand without the original (a stale file's preview still shows it).
const PIECES_FROM: usize = 256;
/// How many lines ahead of the last line put back a new line is looked for in the old text.
/// Greedy and bounded, so linear: a rewrite puts back a metavariable's lines in order.
const LOOK_AHEAD: usize = 8;

/// The pieces that make `new` from `old`; one [`Piece::New`] of the whole when they would not
/// save anything (small texts, little shared).
pub(super) fn pieces(old: &str, new: &str) -> Vec<Piece> {
    let whole = || {
        vec![Piece::New {
            old: 0..old.len(),
            new: 0..new.len(),
        }]
    };
    if old.len() + new.len() < PIECES_FROM {
        return whole();
    }
    let pieces = aligned(old, new);
    // What is kept must make the new text exactly: checked, so that a slip in the alignment
    // can cost memory but never a byte.
    let found = pieces.len() > 1 && held(&pieces) < new.len() && rebuild(old, new, &pieces) == new;
    if found { pieces } else { whole() }
}

/// About what the pieces cost to keep, in bytes: their new bytes, and their bookkeeping (a
/// part, and a line cut per re-indented line).
fn held(pieces: &[Piece]) -> usize {
    pieces
        .iter()
        .map(|p| {
            48 + match p {
                Piece::New { new, .. } => new.len(),
                Piece::Kept { .. } => 0,
                Piece::Lines { indent, strips, .. } => indent.len() + 8 * strips.len(),
            }
        })
        .sum()
}

/// The pieces: a common prefix and suffix kept, and the lines between aligned greedily.
fn aligned(old: &str, new: &str) -> Vec<Piece> {
    let prefix = common_prefix(old, new);
    let suffix = common_suffix(&old[prefix..], &new[prefix..]);
    let old_mid = prefix..old.len() - suffix;
    let new_mid = prefix..new.len() - suffix;
    let mut out = Vec::new();
    if prefix > 0 {
        out.push(Piece::Kept { old: 0..prefix });
    }
    let old_lines = lines(&old[old_mid.clone()], old_mid.start);
    let new_lines = lines(&new[new_mid.clone()], new_mid.start);
    // The first bytes of each text not yet in a piece, and the old line to look from.
    let (mut old_at, mut new_at, mut next_old) = (old_mid.start, new_mid.start, 0);
    let mut run: Option<Run> = None;
    for line in &new_lines {
        let n = &new[line.clone()];
        if let Some(r) = &mut run
            && let Some(o) = old_lines.get(next_old)
            && let Some(strip) = r.takes(&old[o.clone()], n, new)
        {
            r.extend(o, strip, old[o.clone()] == *n);
            (old_at, new_at, next_old) = (o.end, line.end, next_old + 1);
            continue;
        }
        let window = next_old..old_lines.len().min(next_old + LOOK_AHEAD);
        // Not a line put back: it ends the run (the next one cannot go on from it).
        let Some((k, started)) = window.into_iter().find_map(|k| {
            Run::start(
                &old[old_lines[k].clone()],
                n,
                old_lines[k].start,
                line.start,
            )
            .map(|r| (k, r))
        }) else {
            out.extend(run.take().map(Run::piece));
            continue;
        };
        out.extend(run.take().map(Run::piece));
        if old_at < old_lines[k].start || new_at < line.start {
            out.push(Piece::New {
                old: old_at..old_lines[k].start,
                new: new_at..line.start,
            });
        }
        run = Some(started);
        (old_at, new_at, next_old) = (old_lines[k].end, line.end, k + 1);
    }
    out.extend(run.take().map(Run::piece));
    if old_at < old_mid.end || new_at < new_mid.end {
        out.push(Piece::New {
            old: old_at..old_mid.end,
            new: new_at..new_mid.end,
        });
    }
    if suffix > 0 {
        out.push(Piece::Kept {
            old: old.len() - suffix..old.len(),
        });
    }
    out
}

/// Consecutive old lines put back, re-indented alike.
struct Run {
    old: Range<usize>,
    /// Where the indent of the run's first new line is, in the new text.
    indent: Range<usize>,
    /// How many leading bytes the run's lines lose: at most this many of their spaces and
    /// tabs (a blank line has none to lose).
    strip: usize,
    strips: Vec<u32>,
    unchanged: bool,
}

impl Run {
    /// A run starting with old line `o` (at `o_at`) put back as new line `n` (at `n_at`):
    /// the same text after their indents, and not blank.
    fn start(o: &str, n: &str, o_at: usize, n_at: usize) -> Option<Run> {
        let (wo, wn) = (indent_len(o), indent_len(n));
        let rest = &o[wo..];
        (rest == &n[wn..] && !rest.trim().is_empty()).then(|| Run {
            old: o_at..o_at + o.len(),
            indent: n_at..n_at + wn,
            strip: wo,
            strips: vec![wo as u32],
            unchanged: o == n,
        })
    }

    /// How many bytes old line `o` loses if new line `n` is it re-indented as this run's
    /// lines are (in `new`, the whole new text).
    fn takes(&self, o: &str, n: &str, new: &str) -> Option<usize> {
        let indent = &new[self.indent.clone()];
        let strip = indent_len(o).min(self.strip);
        (n.len() == indent.len() + o.len() - strip
            && n.starts_with(indent)
            && n[indent.len()..] == o[strip..])
            .then_some(strip)
    }

    fn extend(&mut self, o: &Range<usize>, strip: usize, unchanged: bool) {
        self.old.end = o.end;
        self.strips.push(strip as u32);
        self.unchanged &= unchanged;
    }

    fn piece(self) -> Piece {
        if self.unchanged {
            Piece::Kept { old: self.old }
        } else {
            Piece::Lines {
                old: self.old,
                indent: self.indent,
                strips: self.strips,
            }
        }
    }
}

/// The new text the `pieces` make of `old` (`new` holding their new bytes).
pub(super) fn rebuild(old: &str, new: &str, pieces: &[Piece]) -> String {
    let mut out = String::with_capacity(new.len());
    for piece in pieces {
        match piece {
            Piece::New { new: bytes, .. } => out.push_str(&new[bytes.clone()]),
            Piece::Kept { old: bytes } => out.push_str(&old[bytes.clone()]),
            Piece::Lines {
                old: bytes,
                indent,
                strips,
            } => {
                for (line, strip) in old[bytes.clone()].split_inclusive('\n').zip(strips) {
                    out.push_str(&new[indent.clone()]);
                    out.push_str(&line[*strip as usize..]);
                }
            }
        }
    }
    out
}

/// The byte length of `line`'s leading spaces and tabs.
fn indent_len(line: &str) -> usize {
    line.bytes()
        .take_while(|b| *b == b' ' || *b == b'\t')
        .count()
}

/// The byte ranges of `text`'s lines (each with its line break), offset by `at`.
fn lines(text: &str, at: usize) -> Vec<Range<usize>> {
    let mut start = at;
    text.split_inclusive('\n')
        .map(|line| {
            let range = start..start + line.len();
            start = range.end;
            range
        })
        .collect()
}

/// The length of the longest common prefix of `a` and `b` that ends on a character boundary
/// of both.
fn common_prefix(a: &str, b: &str) -> usize {
    let mut n = a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count();
    while !(a.is_char_boundary(n) && b.is_char_boundary(n)) {
        n -= 1;
    }
    n
}

/// The length of the longest common suffix of `a` and `b` that starts on a character
/// boundary of both.
fn common_suffix(a: &str, b: &str) -> usize {
    let mut n = a
        .bytes()
        .rev()
        .zip(b.bytes().rev())
        .take_while(|(x, y)| x == y)
        .count();
    while !(a.is_char_boundary(a.len() - n) && b.is_char_boundary(b.len() - n)) {
        n -= 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The pieces of `old` → `new`, checked to make `new`, in order, each consuming the old
    /// text where the last one stopped.
    fn check(old: &str, new: &str) -> Vec<Piece> {
        let pieces = pieces(old, new);
        assert_eq!(rebuild(old, new, &pieces), new, "{old:?} -> {new:?}");
        let mut at = 0;
        for piece in &pieces {
            let (Piece::New { old: o, .. } | Piece::Kept { old: o } | Piece::Lines { old: o, .. }) =
                piece;
            assert_eq!(o.start, at, "{pieces:?}");
            at = o.end;
        }
        assert_eq!(at, old.len(), "{pieces:?}");
        pieces
    }

    #[test]
    fn a_small_replacement_is_one_piece_whole() {
        assert_eq!(
            check("x.unwrap()", "x.expect(\"x\")"),
            [Piece::New {
                old: 0..10,
                new: 0..13
            }]
        );
        check("ab", "");
        check("", "ab");
    }

    #[test]
    fn a_large_one_keeps_what_both_sides_share_never_splitting_a_character() {
        let long = "x".repeat(PIECES_FROM);
        // `é` and `è` share their first byte.
        assert_eq!(
            check(&format!("{long}é{long}"), &format!("{long}è{long}")),
            [
                Piece::Kept {
                    old: 0..PIECES_FROM
                },
                Piece::New {
                    old: PIECES_FROM..PIECES_FROM + 2,
                    new: PIECES_FROM..PIECES_FROM + 2
                },
                Piece::Kept {
                    old: PIECES_FROM + 2..2 * PIECES_FROM + 2
                },
            ]
        );
        check(&format!("{long}é"), &format!("{long}éé"));
        check(&format!("é{long}"), &format!("éé{long}"));
        check(&long, "");
    }

    /// What ast-grep makes of `fn $F() { $$$B }` → `fn $F() -> () { $$$B }` on a method: the
    /// body's first line after `{ `, the others four spaces less deep, blank lines indented,
    /// the `}` after the last.
    #[test]
    fn a_body_put_back_re_indented_holds_only_its_indents() {
        let body: Vec<String> = (0..40)
            .map(|i| format!("let x{i} = compute(&input[{i}], options);"))
            .collect();
        let old = format!(
            "fn f() {{\n{}\n\n        done();\n    }}",
            body.iter()
                .map(|l| format!("        {l}"))
                .collect::<Vec<_>>()
                .join("\n")
        );
        let new = format!(
            "fn f() -> () {{ {}\n    \n    done(); }}",
            body.iter()
                .enumerate()
                .map(|(i, l)| if i == 0 {
                    l.clone()
                } else {
                    format!("    {l}")
                })
                .collect::<Vec<_>>()
                .join("\n")
        );
        let pieces = check(&old, &new);
        assert!(
            pieces.iter().any(|p| matches!(p, Piece::Lines { .. })),
            "{pieces:?}"
        );
        assert!(
            held(&pieces) * 2 < new.len(),
            "{} of {}",
            held(&pieces),
            new.len()
        );
        // A line that is not one put back ends the run: the lines after it are put back too.
        let inserted = new.replacen("    let x20", "        log();\n    let x20", 1);
        let pieces = check(&old, &inserted);
        assert!(held(&pieces) * 2 < inserted.len(), "{pieces:?}");
    }

    #[test]
    fn lines_put_back_as_they_were_are_kept() {
        let body: String = (0..40).map(|i| format!("    let x{i} = {i};\n")).collect();
        let pieces = check(
            &format!("fn f() {{\n{body}}}"),
            &format!("fn g() {{\n{body}}} // g"),
        );
        assert!(
            !pieces.iter().any(|p| matches!(p, Piece::Lines { .. })),
            "{pieces:?}"
        );
        assert!(held(&pieces) < 16 + 48 * pieces.len(), "{pieces:?}");
    }

    #[test]
    fn odd_texts_still_make_the_new_text() {
        let body: String = (0..30).map(|i| format!("    a{i};\n")).collect();
        let deeper: String = body.lines().map(|l| format!("\t{l}\n")).collect();
        check(&format!("{{\n{body}}}"), &format!("{{\n{deeper}}}"));
        let repeated = "}\n".repeat(200);
        check(&repeated, &format!("x\n{repeated}y\n"));
        check(&format!("{repeated}é\n"), &format!("è\n{repeated}"));
        let shuffled: String = (0..30).rev().map(|i| format!("    a{i};\n")).collect();
        check(&body, &shuffled);
        // Lines with less indent than the run strips lose only what they have.
        let mixed = "        a();\n    b();\nc();\n        d();\n".repeat(10);
        let out: String = mixed
            .lines()
            .map(|l| format!("{}\n", l.trim_start()))
            .collect();
        check(&mixed, &out);
    }
}
