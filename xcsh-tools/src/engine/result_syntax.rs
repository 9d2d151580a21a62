//! Whether a rewrite's result still parses, told by the plan's own parse tree: edited where
//! the replacements are and parsed again, incrementally (tree-sitter reuses every subtree
//! the edits leave alone), while the file is still in memory.
//!
//! The syntax guard ([`SyntaxReport`](crate::syntax::SyntaxReport)) would otherwise read each
//! changed file again, lex it and its result whole to find what changed, and parse that:
//! about as much work as the preview's own. For a rewrite that breaks nothing, this tells the
//! same thing for the cost of a reparse of the edited parts. Where the result has an error,
//! or the tree cannot tell cheaply, it says nothing and the guard judges the file as before
//! (it names the errors, and whether the original had them).
//!
//! A whole tree (a file the plan parsed whole: small, of another language, or kept by a
//! session's cache) that parses again without an error means the whole result parses. A
//! partial tree (a large Rust file parsed only around its matches, see `partial`) means the
//! parts the plan parsed, which hold every replacement, parse as they would in the file,
//! when the edited tree passes the checks of [`partial::edited_cut_holds`].

use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};

use tree_sitter::{InputEdit, Point};

use super::Lang;
use super::matching::{ErrorReport, REPORTED_ERRORS, Root, errors_under, parse_tree};
use super::partial::{self, SMALL_FILE};
use super::rewrite::{LineCounter, RawEdit};
use crate::changeset::hunks::spliced;

/// A plan's verdict on a file, with the [`splices_digest`] of the very splices it judged,
/// taken when it judged them: a caller that changes the plan's (public) replacements
/// afterwards gets no verdict for what it stages then.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PlannedVerdict {
    pub(crate) verdict: ResultSyntax,
    pub(crate) splices: u64,
}

/// How the results a plan judged have gone so far, across its threads. Once most have broken
/// (a rewrite that breaks every file it touches), the next are parsed fresh first: the fresh
/// parse that names a result's errors is then the only parse, where the incremental one would
/// only have found that there are some. The verdicts are the same in either order; only
/// their cost depends on which files came first.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    judged: AtomicUsize,
    broken: AtomicUsize,
}

impl Tally {
    /// Results judged before the tally is trusted.
    const SEEN: usize = 16;

    /// Whether the next result is parsed fresh first.
    fn fresh_first(&self) -> bool {
        #[cfg(test)]
        match *ORDER.lock().unwrap_or_else(|p| p.into_inner()) {
            Order::IncrementalFirst => return false,
            Order::FreshFirst => return true,
            Order::Tally => {}
        }
        self.mostly_broken()
    }

    fn mostly_broken(&self) -> bool {
        let judged = self.judged.load(Ordering::Relaxed);
        judged >= Self::SEEN && self.broken.load(Ordering::Relaxed) * 2 > judged
    }

    fn record(&self, broken: bool) {
        self.judged.fetch_add(1, Ordering::Relaxed);
        if broken {
            self.broken.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// Tests: the order in which every plan judges its results.
#[cfg(test)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Order {
    /// As its [`Tally`] says.
    Tally,
    IncrementalFirst,
    FreshFirst,
}

/// Tests: the order every plan judges in, whatever its tally.
#[cfg(test)]
pub(crate) static ORDER: std::sync::Mutex<Order> = std::sync::Mutex::new(Order::Tally);

/// A digest of a file's splices, ranges and texts: a verdict is taken only for the very
/// edits it judged.
pub(crate) fn splices_digest<'a>(
    splices: impl IntoIterator<Item = (&'a Range<usize>, &'a str)>,
) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::hash::DefaultHasher::new();
    for (range, text) in splices {
        range.hash(&mut hasher);
        text.hash(&mut hasher);
    }
    hasher.finish()
}

/// What the plan's own parse tree says of a changed file's new contents, when it tells it
/// cheaply (else the syntax guard judges the file itself).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ResultSyntax {
    /// The whole result parses without an error (as the whole original did).
    Parses,
    /// The parts of the result the plan parsed, the items, members or statements around
    /// every replacement of a Rust file of 4 KiB or more, parse without an error as they
    /// would in the file, and the rest of it is the original's text, read as it was.
    ChangesParse,
    /// The result has syntax errors where the plan parsed it (the whole of a small Rust file
    /// or a file of another language; in a larger Rust file the parts around the
    /// replacements, their brackets balanced), and the original had none there: every one
    /// is the change's. The first few, as the guard reports them, and how many more.
    Introduced {
        errors: Vec<ErrorReport>,
        more: usize,
    },
}

/// The verdict on `original` (parsed as `root`, of `lang`) with `edits` made (sorted, not
/// overlapping): `None` when that cannot be told from the tree, cheaply or as the guard would
/// tell it. `inner`: the runs of a body's items among a partial tree's ranges
/// (`partial::Cut::inner`), empty for a whole tree.
pub(crate) fn judge(
    root: &Root,
    lang: Lang,
    original: &str,
    inner: &[Range<usize>],
    edits: &[RawEdit],
    tally: &Tally,
) -> Option<ResultSyntax> {
    let was = &root.root().get_doc().tree;
    if was.root_node().has_error() || edits.is_empty() {
        return None;
    }
    let included = was.included_ranges();
    let whole = matches!(included.as_slice(),
        [r] if r.start_byte == 0 && r.end_byte >= original.len());
    let ranges: Vec<Range<usize>> = if whole {
        Vec::new()
    } else {
        included.iter().map(|r| r.start_byte..r.end_byte).collect()
    };
    // Brackets a replacement leaves open (a `}` swallowed by a `// comment`) or closes twice
    // break the file, and tree-sitter's recovery from them can run over the rest of it (a
    // large generated test function parses at 1.5 MB/s so): the guard names them from the
    // lexer, without a parse. Each replacement replaces a whole node, whose brackets balance.
    if lang == Lang::Rust
        && !edits
            .iter()
            .all(|e| partial::lexes_balanced(&e.text, std::slice::from_ref(&(0..e.text.len()))))
    {
        return None;
    }
    // What each edit really changes: a rewrite replaces a whole match (a function, for
    // `fn $F() { $$$B }`), most of which it writes back as it was, re-indented. In Rust a
    // change of indentation changes no token (see `Edit::split`): the tree is edited, and
    // parsed again, only where tokens change, over the `view`, the result as far as its
    // tokens go; tree-sitter reuses what no edit covers.
    let mut pieces = Vec::with_capacity(edits.len());
    for e in edits {
        Edit::split(original, e, lang == Lang::Rust, &mut pieces);
    }
    // Every edit inside one of the ranges parsed (a match is a node of the tree; a rule's fix
    // may reach beyond it), not at the start of one (where tree-sitter moves an insertion
    // out of the range), and none across the edge of a body's run.
    if !whole && (!each_inside(&ranges, &pieces) || crosses(inner, &pieces)) {
        return None;
    }
    let view = spliced_bytes(original, &pieces)?;

    let mut tree = was.clone();
    let mut lines = LineCounter::new(original);
    let points: Vec<(Point, Point)> = pieces
        .iter()
        .map(|e| {
            (
                point(lines.point(e.range.start)),
                point(lines.point(e.range.end)),
            )
        })
        .collect();
    // Last to first: each edit's place in the original is still its place in the tree.
    for (e, &(start, old_end)) in pieces.iter().zip(&points).rev() {
        tree.edit(&InputEdit {
            start_byte: e.range.start,
            old_end_byte: e.range.end,
            new_end_byte: e.range.start + e.text.len(),
            start_position: start,
            old_end_position: old_end,
            new_end_position: advanced(start, e.text),
        });
    }
    // The edited tree's ranges are where the parsed ranges are in the view.
    let included_now = if whole {
        Vec::new()
    } else {
        tree.included_ranges()
    };
    // The result, and what would name its errors: made at most once, when needed.
    let naming_of = || {
        let removed: usize = edits.iter().map(|e| e.range.len()).sum();
        let added: usize = edits.iter().map(|e| e.text.len()).sum();
        let after = spliced(
            original,
            0..original.len(),
            edits.iter().map(|e| (&e.range, e.text.as_str())),
            original.len() + added - removed,
        );
        let naming = Naming::of(lang, &after, edits, &ranges, inner);
        (after, naming)
    };
    let mut made = None;
    // Once most of the plan's results have broken, the parse that would name this one's
    // errors comes first, when it parses what the incremental one would (every range holds an
    // edit; a range alone can read otherwise than before the next), in the result rather than
    // its view, which has the same tokens (see `Edit::split`). When it finds errors, it is the
    // only parse. A clean one says nothing yet: the result is then judged as below, so that
    // the verdict never depends on which files came first.
    if tally.fresh_first() {
        let (after, naming) = made.insert(naming_of());
        if let Some(naming) = naming
            && naming.parses_all(&ranges)
            && let Some(fresh) = parse_tree(lang, after, &naming.included, None)
            && fresh.root_node().has_error()
        {
            tally.record(true);
            return naming.verdict(original, after, was, &fresh);
        }
    }
    let now = parse_tree(lang, &view, &included_now, Some(&tree))?;
    if now.root_node().has_error() {
        tally.record(true);
        // Every error is new (the original parsed clean): named from a fresh parse, as the
        // guard names them (an incremental one may recover otherwise); see [`Naming`].
        let (after, naming) = made.unwrap_or_else(naming_of);
        let naming = naming?;
        let fresh = parse_tree(lang, &after, &naming.included, None)?;
        return naming.verdict(original, &after, was, &fresh);
    }
    tally.record(false);
    if whole {
        return Some(ResultSyntax::Parses);
    }
    let ranges_now: Vec<Range<usize>> = included_now
        .iter()
        .map(|r| r.start_byte..r.end_byte)
        .collect();
    let shifts = Shifts::new(&pieces);
    let inner_now: Vec<Range<usize>> = inner
        .iter()
        .map(|r| shifts.moved(r.start, true)..shifts.moved(r.end, false))
        .collect();
    partial::edited_cut_holds(original, &view, was, &now, &ranges, &ranges_now, &inner_now)
        .then_some(ResultSyntax::ChangesParse)
}

/// What the fresh parse that names a result's errors parses: the whole file, when the guard
/// parses it whole (a small Rust file, another language); else the ranges that hold an edit,
/// which the guard parses alone too, when those still start and end units and balance their
/// brackets (`x.unwrap() // checked` swallows the `);` after it, and the text after them
/// would not read as before).
struct Naming {
    /// The ranges parsed, in the result (none: the whole of it).
    included: Vec<tree_sitter::Range>,
    /// Of a partial tree: where those ranges were and are.
    cut: Option<EditedCut>,
}

/// Ranges of a partial tree, in the original and where the edits moved them in the result.
struct EditedCut {
    was: Vec<Range<usize>>,
    now: Vec<Range<usize>>,
    /// The runs of a body's items, in the result.
    inner_now: Vec<Range<usize>>,
}

impl Naming {
    /// For `after`, `original` with `edits` made, whose tree was parsed over `ranges` (whole
    /// when there are none): `None` when the guard would judge the result otherwise.
    fn of(
        lang: Lang,
        after: &str,
        edits: &[RawEdit],
        ranges: &[Range<usize>],
        inner: &[Range<usize>],
    ) -> Option<Naming> {
        if ranges.is_empty() {
            // The guard judges a larger Rust result by what changed.
            return (lang != Lang::Rust || after.len() < SMALL_FILE).then_some(Naming {
                included: Vec::new(),
                cut: None,
            });
        }
        let edits: Vec<Edit<'_>> = edits
            .iter()
            .map(|e| Edit {
                range: e.range.clone(),
                text: e.text.as_bytes(),
            })
            .collect();
        let shifts = Shifts::new(&edits);
        let (mut was_ranges, mut now_ranges) = (Vec::new(), Vec::new());
        for r in ranges {
            let now = shifts.moved(r.start, true)..shifts.moved(r.end, false);
            if edits
                .iter()
                .any(|e| r.start <= e.range.start && e.range.end <= r.end)
            {
                was_ranges.push(r.clone());
                now_ranges.push(now);
            }
        }
        // `judge` placed the edits' changed pieces; a whole edit may reach out of its range
        // (bytes it writes back as they were). Its range would be left out here, and with no
        // range at all the whole file would be parsed: tell nothing then.
        let inside = |e: &Edit<'_>| {
            was_ranges
                .iter()
                .any(|r| r.start <= e.range.start && e.range.end <= r.end)
        };
        if was_ranges.is_empty() || !edits.iter().all(inside) {
            return None;
        }
        if !partial::lexes_balanced(after, &now_ranges) {
            return None;
        }
        let inner_now = inner
            .iter()
            .map(|r| shifts.moved(r.start, true)..shifts.moved(r.end, false))
            .collect();
        Some(Naming {
            included: partial::with_points(after, &now_ranges),
            cut: Some(EditedCut {
                was: was_ranges,
                now: now_ranges,
                inner_now,
            }),
        })
    }

    /// Whether it parses every one of the `ranges` the tree was parsed over (or the whole).
    fn parses_all(&self, ranges: &[Range<usize>]) -> bool {
        self.cut
            .as_ref()
            .is_none_or(|cut| cut.was.len() == ranges.len())
    }

    /// The verdict, from `fresh`, `after` parsed over the ranges, when it has an error.
    fn verdict(
        &self,
        original: &str,
        after: &str,
        was: &tree_sitter::Tree,
        fresh: &tree_sitter::Tree,
    ) -> Option<ResultSyntax> {
        // The ranges' edges, and what reads across them, as for a clean result.
        if let Some(cut) = &self.cut
            && !partial::edited_cut_holds(
                original,
                after,
                was,
                fresh,
                &cut.was,
                &cut.now,
                &cut.inner_now,
            )
        {
            return None;
        }
        let errors = errors_under(fresh.root_node(), after);
        if errors.is_empty() {
            return None;
        }
        let changed_from = original
            .bytes()
            .zip(after.bytes())
            .take_while(|(a, b)| a == b)
            .count();
        Some(ResultSyntax::Introduced {
            more: errors.len().saturating_sub(REPORTED_ERRORS),
            errors: errors
                .iter()
                .take(REPORTED_ERRORS)
                .map(|e| e.report(after, changed_from))
                .collect(),
        })
    }
}

/// `original` with `pieces` (sorted, not overlapping) made; `None` when that is not UTF-8 (a
/// piece of a replacement cut inside a character, which a view of Rust never needs).
fn spliced_bytes(original: &str, pieces: &[Edit<'_>]) -> Option<String> {
    let mut out = Vec::with_capacity(original.len());
    let mut at = 0;
    for e in pieces {
        out.extend_from_slice(&original.as_bytes()[at..e.range.start]);
        out.extend_from_slice(e.text);
        at = e.range.end;
    }
    out.extend_from_slice(&original.as_bytes()[at..]);
    String::from_utf8(out).ok()
}

/// An edit of the original: its bytes `range` become `text`.
struct Edit<'a> {
    range: Range<usize>,
    text: &'a [u8],
}

impl<'a> Edit<'a> {
    /// `edit` of `original` as the edits that change bytes, in order: its text's ends kept
    /// as they were, and where only the whitespace between two kept bytes changed, that
    /// whitespace alone (a rewrite re-indents what a `$$$` list captured over lines); the
    /// bytes between the first and the last that are not kept so are one edit. Pieces less
    /// than [`JOINED_GAP`] bytes apart are one edit.
    ///
    /// With `tokens_only` (Rust), a run of whitespace holding a line break that becomes another
    /// with as many line breaks and carriage returns, not beside a `'`, is left as it was: it
    /// changes no token.
    /// Rust reads whitespace only as what separates tokens (a non-empty run stays a
    /// separator) and what ends a line comment (at the same line break); inside a string or
    /// a block comment it is text. So the tokens, and every syntax error, are the result's.
    fn split(original: &str, edit: &'a RawEdit, tokens_only: bool, out: &mut Vec<Edit<'a>>) {
        let (old, new) = (
            &original.as_bytes()[edit.range.clone()],
            edit.text.as_bytes(),
        );
        let mut pieces: Vec<(Range<usize>, Range<usize>)> = Vec::new();
        let at = edit.range.start;
        let src = original.as_bytes();
        let mut piece = |was: Range<usize>, now: Range<usize>| {
            let (a, b) = (&old[was.clone()], &new[now.clone()]);
            let breaks = |s: &[u8], c: u8| s.iter().filter(|&&b| b == c).count();
            // Beside a `'`, whitespace may be a char literal's one character (`' '`), which
            // more of would not lex; a run with a line break is never one.
            let quoted = (at + was.start)
                .checked_sub(1)
                .is_some_and(|i| src[i] == b'\'')
                || src.get(at + was.end) == Some(&b'\'');
            if tokens_only
                && !a.is_empty()
                && !b.is_empty()
                && !quoted
                && a.iter().chain(b).all(u8::is_ascii_whitespace)
                && breaks(a, b'\n') > 0
                && breaks(a, b'\n') == breaks(b, b'\n')
                && breaks(a, b'\r') == breaks(b, b'\r')
            {
                return;
            }
            match pieces.last_mut() {
                Some((w, n)) if was.start - w.end < JOINED_GAP => {
                    (w.end, n.end) = (was.end, now.end);
                }
                _ => pieces.push((was, now)),
            }
        };
        let blank = |b: &u8| b.is_ascii_whitespace();
        // From the start: equal bytes, and whitespace runs, equal or not.
        let (mut i, mut j) = (0, 0);
        loop {
            let wi = old[i..].iter().take_while(|b| blank(b)).count();
            let wj = new[j..].iter().take_while(|b| blank(b)).count();
            if old[i..i + wi] != new[j..j + wj] {
                piece(i..i + wi, j..j + wj);
            }
            (i, j) = (i + wi, j + wj);
            match (old.get(i), new.get(j)) {
                (Some(a), Some(b)) if a == b => (i, j) = (i + 1, j + 1),
                _ => break,
            }
        }
        // From the end, down to there.
        let (mut k, mut l) = (old.len(), new.len());
        let mut tail = Vec::new();
        loop {
            let wk = old[i..k].iter().rev().take_while(|b| blank(b)).count();
            let wl = new[j..l].iter().rev().take_while(|b| blank(b)).count();
            if old[k - wk..k] != new[l - wl..l] {
                tail.push((k - wk..k, l - wl..l));
            }
            (k, l) = (k - wk, l - wl);
            match (k.checked_sub(1), l.checked_sub(1)) {
                (Some(a), Some(b)) if a >= i && b >= j && old[a] == new[b] => (k, l) = (a, b),
                _ => break,
            }
        }
        if i < k || j < l {
            piece(i..k, j..l);
        }
        for (was, now) in tail.into_iter().rev() {
            piece(was, now);
        }
        // An insertion takes in a byte beside it, the same on both sides and in no other
        // piece: at the start of a range parsed, tree-sitter would leave it out of the range.
        for k in 0..pieces.len() {
            let (was, now) = pieces[k].clone();
            if !was.is_empty() {
                continue;
            }
            let next = pieces.get(k + 1).map_or(old.len(), |(w, _)| w.start);
            let prev = k.checked_sub(1).map_or(0, |p| pieces[p].0.end);
            if was.end < next && now.end < new.len() && old[was.end] == new[now.end] {
                pieces[k] = (was.start..was.end + 1, now.start..now.end + 1);
            } else if was.start > prev && now.start > 0 && old[was.start - 1] == new[now.start - 1]
            {
                pieces[k] = (was.start - 1..was.end, now.start - 1..now.end);
            }
        }
        out.extend(pieces.into_iter().map(|(was, now)| Edit {
            range: at + was.start..at + was.end,
            text: &new[now],
        }));
    }
}

/// Bytes between two pieces of one replacement below which they are one edit: each edit
/// costs tree-sitter a walk down the tree past every node before it (in a large file,
/// thousands of items), and what lies between two edits so close is quickly parsed again.
const JOINED_GAP: usize = 64;

/// Whether each of the sorted `edits` lies inside one of the sorted, disjoint `ranges`, an
/// insertion not at its start.
fn each_inside(ranges: &[Range<usize>], edits: &[Edit<'_>]) -> bool {
    edits.iter().all(|e| {
        let i = ranges.partition_point(|r| r.end < e.range.end);
        ranges.get(i).is_some_and(|r| {
            r.start <= e.range.start
                && e.range.end <= r.end
                && !(e.range.is_empty() && e.range.start == r.start)
        })
    })
}

/// Whether an edit starts or ends strictly inside one of the `runs` and reaches out of it.
fn crosses(runs: &[Range<usize>], edits: &[Edit<'_>]) -> bool {
    let mut edges: Vec<usize> = runs.iter().flat_map(|r| [r.start, r.end]).collect();
    edges.sort_unstable();
    edits.iter().any(|e| {
        let i = edges.partition_point(|&b| b <= e.range.start);
        edges.get(i).is_some_and(|&b| b < e.range.end)
    })
}

/// Where places of the original are in the result: moved by what the edits before them
/// added or removed.
struct Shifts<'a> {
    edits: &'a [Edit<'a>],
    /// `after[i]`: what edits `0..=i` added (or, negative, removed).
    after: Vec<isize>,
}

impl<'a> Shifts<'a> {
    fn new(edits: &'a [Edit<'a>]) -> Self {
        let mut shift = 0isize;
        let after = edits
            .iter()
            .map(|e| {
                shift += e.text.len() as isize - e.range.len() as isize;
                shift
            })
            .collect();
        Shifts { edits, after }
    }

    /// Where `at` is in the result. At a place where an edit ends, or an insertion stands,
    /// the start of a range (`starts`) stays before the edit's text and an end goes after it.
    fn moved(&self, at: usize, starts: bool) -> usize {
        let before = self.edits.partition_point(|e| {
            e.range.end < at || (e.range.end == at && (!starts || !e.range.is_empty()))
        });
        let shift = before.checked_sub(1).map_or(0, |i| self.after[i]);
        at.saturating_add_signed(shift)
    }
}

fn point((row, column): (usize, usize)) -> Point {
    Point::new(row, column)
}

/// Where `text` ends when it starts at `start`.
fn advanced(start: Point, text: &[u8]) -> Point {
    match memchr::memrchr(b'\n', text) {
        Some(last) => Point::new(
            start.row + memchr::memchr_iter(b'\n', text).count(),
            text.len() - last - 1,
        ),
        None => Point::new(start.row, start.column + text.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fresh first only once at least `SEEN` results were judged and more than half broke.
    #[test]
    fn a_tally_turns_to_fresh_first_when_most_results_broke() {
        let tally = Tally::default();
        for _ in 1..Tally::SEEN {
            tally.record(true);
        }
        assert!(!tally.mostly_broken(), "too few judged");
        tally.record(true);
        assert!(tally.mostly_broken());
        for _ in 0..Tally::SEEN {
            tally.record(false);
        }
        assert!(!tally.mostly_broken(), "half broken is not most");
        tally.record(true);
        assert!(tally.mostly_broken());
    }
}
