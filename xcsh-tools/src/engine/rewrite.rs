//! Planning a rewrite: every op's replacements in every file, merged, checked, and capped.
//!
//! Each file is parsed once; every op runs against that original tree (so one op never sees
//! another's output) with the non-reentrant traversal of the CLI's `--update-all` (nested
//! matches inside a rewritten match stay), each match's whole node is replaced as the CLI
//! does, and the edits are merged in source order. Edits of two ops that
//! overlap are refused here, at preview time. Files with syntax errors are rewritten like the
//! CLI rewrites them, and listed.
//!
//! Only what apply and the preview need is kept per changed file: the fingerprint of what was
//! read and the replacements (range, position, inserted text) — never the file's original or
//! new contents, which can be megabytes per file and hundreds of files per plan, nor the text
//! each replacement removes (a rewrite of whole function bodies would hold every body twice):
//! that is read from the original when shown ([`FileEdit::before`]).
//! The new contents are made again when needed, from the original read again and checked
//! against the fingerprint: one file at a time to show a diff, and by the `ChangeSet` at apply
//! time (see [`FileEdit::splices`]).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use ast_grep_config::CombinedScan;
use ast_grep_core::replacer::Replacer as _;
use serde::Serialize;

use super::matching::{Root, for_each_match, has_syntax_error, parse};
use super::partial;
use super::pattern::shorten;
use super::pattern::{LangOps, OpKind};
use super::pieces::{NewTexts, Slot};
use super::result_syntax::{self, PlannedVerdict, Tally, splices_digest};
use super::rule::Rule;
use super::walk::{Candidate, Skipped, WalkOptions, walk};
use super::{CompiledOps, Control, EngineError, Fingerprint, Lang, Op, ParseCache, Scope};
use crate::changeset::hunks::spliced;
use crate::changeset::{Splice, StaleFile, StaleReason};

/// What to rewrite: the ops, the language and the cap.
///
/// ```
/// use xcsh_tools::engine::{EditRequest, Op};
///
/// let request = EditRequest {
///     ops: vec![Op::new("$A == None", "$A is None")],
///     limit: Some(100),
///     ..EditRequest::default()
/// };
/// assert!(request.lang.is_none()); // inferred per file
/// ```
#[derive(Clone, Debug, Default)]
pub struct EditRequest {
    /// At least one op; patterns must be non-empty, valid and distinct. Empty when `rule`
    /// is given.
    pub ops: Vec<Op>,
    /// Instead of `ops`: ast-grep YAML rules with a `fix` (the grammar of `ast-grep scan
    /// --rule`; several as YAML documents), applied as `ast-grep scan --rule FILE
    /// --update-all` applies them. See [`CompiledOps::for_rules`].
    pub rule: Option<String>,
    /// The language of every pattern and file; `None` infers it from each file's extension.
    pub lang: Option<Lang>,
    /// Keep at most this many replacements (≥ 1): the first ones in path order.
    pub limit: Option<usize>,
    /// Limits of the walk.
    pub walk: WalkOptions,
    /// Files kept from earlier calls, reused when unchanged (see [`ParseCache`]); `None`
    /// reads and parses everything afresh.
    pub cache: Option<ParseCache>,
    /// Also tell, for each changed file, whether its new contents still parse where the plan
    /// parsed it, from the plan's own parse tree edited and parsed again while the file is
    /// in memory: [`SyntaxReport::check_planned`](crate::syntax::SyntaxReport::check_planned)
    /// then judges such a file without reading, lexing and parsing it again. Costs a reparse
    /// of the edited parts of each changed file; off by default.
    pub check_syntax: bool,
}

/// One replacement in a [`FileEdit`]. Its texts are read through the file:
/// [`FileEdit::before`] (from the original) and [`FileEdit::after`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Replacement {
    /// Index of the op that made it (`ops[op]`).
    pub op: usize,
    /// 1-based line of its start in the original.
    pub line: usize,
    /// 1-based column (in characters) of its start in the original.
    pub column: usize,
    /// Byte range replaced in the original.
    pub range: Range<usize>,
    /// Byte range of the replacement text in the new contents
    /// ([`FileEdit::new_contents`]).
    pub new_range: Range<usize>,
    /// Where its new text is kept in `FileEdit::texts`.
    text: Slot,
}

/// The planned change to one file: where it is, the fingerprint of what was read, and the
/// replacements — not its contents. [`read_original`](Self::read_original) reads the original
/// again (checked against the fingerprint), [`new_contents`](Self::new_contents) splices the
/// replacements into it, and [`splices`](Self::splices) hands them to
/// [`ChangeSet::modify_splicing`](crate::changeset::ChangeSet::modify_splicing), which does
/// the same at apply time.
#[derive(Clone, Debug)]
pub struct FileEdit {
    /// Absolute path (inside the workspace root).
    pub path: PathBuf,
    /// Root-relative path with `/` separators, for messages and diffs.
    pub display: String,
    /// The language it was parsed as.
    pub lang: Lang,
    /// Fingerprint of the contents that were read (and that apply must still find).
    pub fingerprint: Fingerprint,
    /// The replacements, in source order.
    pub replacements: Vec<Replacement>,
    /// The new text of every replacement, as pieces of the original: of most rewrites that
    /// put back what they matched (`$$$B`), only what differs and how lines are re-indented.
    texts: NewTexts,
    /// What the plan's own tree says of the new contents, when asked
    /// ([`EditRequest::check_syntax`]) and it tells, and of which splices.
    pub(crate) syntax: Option<PlannedVerdict>,
}

impl FileEdit {
    /// The original text that `r` replaces, in `original`: the text the plan read (from
    /// [`read_original`](Self::read_original)). The plan does not keep it: a rewrite of whole
    /// function bodies in a thousand files would hold every body twice.
    ///
    /// ```
    /// # use xcsh_tools::engine::{self, Control, EditRequest, Op, Scope};
    /// # use xcsh_tools::workspace::Workspace;
    /// # let dir = tempfile::tempdir()?;
    /// std::fs::write(dir.path().join("a.py"), "print(1)\n")?;
    /// # let ws = Workspace::new(dir.path())?;
    /// # let request = EditRequest { ops: vec![Op::new("print($A)", "log($A)")], ..Default::default() };
    /// let plan = engine::plan_edits(&Scope::root(&ws), &request, &Control::default())?;
    /// let file = &plan.files[0];
    /// let original = file.read_original()?;
    /// let r = &file.replacements[0];
    /// assert_eq!((file.before(r, &original), &*file.after(r, &original)), ("print(1)", "log(1)"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Panics
    /// If `original` is shorter than the plan's text, or `r.range` does not fall on its
    /// character boundaries (`r` is not one of this file's replacements, or `original` not
    /// the text the plan read).
    pub fn before<'a>(&self, r: &Replacement, original: &'a str) -> &'a str {
        &original[r.range.clone()]
    }

    /// The text `r` puts in its place, made with `original`: the text the plan read (from
    /// [`read_original`](Self::read_original)). The plan keeps only what differs from the
    /// text replaced: a rewrite that puts whole function bodies back (`fn $F() { $$$B }`)
    /// would otherwise hold every body again.
    ///
    /// ```
    /// # use xcsh_tools::engine::{self, Control, EditRequest, Op, Scope};
    /// # use xcsh_tools::workspace::Workspace;
    /// # let dir = tempfile::tempdir()?;
    /// std::fs::write(dir.path().join("a.py"), "print(1)\n")?;
    /// # let ws = Workspace::new(dir.path())?;
    /// # let request = EditRequest { ops: vec![Op::new("print($A)", "log($A)")], ..Default::default() };
    /// let plan = engine::plan_edits(&Scope::root(&ws), &request, &Control::default())?;
    /// let file = &plan.files[0];
    /// let original = file.read_original()?;
    /// assert_eq!(file.after(&file.replacements[0], &original), "log(1)");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Panics
    /// If `r` is not one of this file's replacements, or `original` is not the text the plan
    /// read (too short, or split inside a character).
    pub fn after<'a>(&'a self, r: &Replacement, original: &'a str) -> Cow<'a, str> {
        self.texts.text(&r.text, original)
    }

    /// The text `r` puts in its place when the plan holds it whole (it keeps nothing of what
    /// it replaces, as most short replacements), without the original.
    pub(crate) fn whole_after(&self, r: &Replacement) -> Option<&str> {
        self.texts.whole(&r.text)
    }

    /// Reads the file again, as the plan read it: an error if it is no longer that (its
    /// fingerprint differs), was deleted, is no longer a regular file, or cannot be read.
    ///
    /// ```
    /// # use xcsh_tools::engine::{self, Control, EditRequest, Op, Scope};
    /// # use xcsh_tools::workspace::Workspace;
    /// # let dir = tempfile::tempdir()?;
    /// std::fs::write(dir.path().join("a.py"), "print(1)\n")?;
    /// # let ws = Workspace::new(dir.path())?;
    /// # let request = EditRequest { ops: vec![Op::new("print($A)", "log($A)")], ..Default::default() };
    /// let plan = engine::plan_edits(&Scope::root(&ws), &request, &Control::default())?;
    /// assert_eq!(plan.files[0].read_original()?, "print(1)\n");
    ///
    /// std::fs::write(dir.path().join("a.py"), "print(2)\n")?;
    /// let stale = plan.files[0].read_original().unwrap_err();
    /// assert_eq!(stale.to_string(), "`a.py` (modified since it was read)");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn read_original(&self) -> Result<String, StaleFile> {
        let stale = |reason| StaleFile {
            path: self.display.clone(),
            reason,
        };
        let (bytes, _) = self.fingerprint.read_unchanged(&self.path).map_err(stale)?;
        String::from_utf8(bytes).map_err(|_| stale(StaleReason::Modified))
    }

    /// The contents after every replacement, made from `original` — the text the plan read,
    /// e.g. from [`read_original`](Self::read_original). An error if `original` is not that
    /// text (its fingerprint differs).
    ///
    /// ```
    /// # use xcsh_tools::engine::{self, Control, EditRequest, Op, Scope};
    /// # use xcsh_tools::workspace::Workspace;
    /// # let dir = tempfile::tempdir()?;
    /// # std::fs::write(dir.path().join("a.py"), "print(1)\n")?;
    /// # let ws = Workspace::new(dir.path())?;
    /// # let request = EditRequest { ops: vec![Op::new("print($A)", "log($A)")], ..Default::default() };
    /// let plan = engine::plan_edits(&Scope::root(&ws), &request, &Control::default())?;
    /// let file = &plan.files[0];
    /// assert_eq!(file.new_contents(&file.read_original()?)?, "log(1)\n");
    /// assert!(file.new_contents("print(2)\n").is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn new_contents(&self, original: &str) -> Result<String, StaleFile> {
        if Fingerprint::of(original) != self.fingerprint {
            return Err(StaleFile {
                path: self.display.clone(),
                reason: StaleReason::Modified,
            });
        }
        Ok(self.splice_into(original))
    }

    /// The replacements as edits of the original, for
    /// [`ChangeSet::modify_splicing`](crate::changeset::ChangeSet::modify_splicing): staged
    /// with [`fingerprint`](Self::fingerprint), they make apply write exactly
    /// [`new_contents`](Self::new_contents) of the original, or refuse if it changed.
    ///
    /// ```
    /// # use xcsh_tools::engine::{self, Control, EditRequest, Op, Scope};
    /// # use xcsh_tools::workspace::Workspace;
    /// use xcsh_tools::changeset::ChangeSet;
    /// # let dir = tempfile::tempdir()?;
    /// # std::fs::write(dir.path().join("a.py"), "print(1)\n")?;
    /// # let ws = Workspace::new(dir.path())?;
    /// # let request = EditRequest { ops: vec![Op::new("print($A)", "log($A)")], ..Default::default() };
    /// let plan = engine::plan_edits(&Scope::root(&ws), &request, &Control::default())?;
    /// let mut changes = ChangeSet::new(ws);
    /// for file in plan.files {
    ///     changes.modify_splicing(&file.path, file.fingerprint, file.splices())?;
    /// }
    /// changes.apply()?;
    /// assert_eq!(std::fs::read_to_string(dir.path().join("a.py"))?, "log(1)\n");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// Only what changes is spliced: a replacement that puts back part of what it replaces
    /// gives the splices of the rest (a re-indented line, one of its indent), and the result
    /// is the same.
    pub fn splices(&self) -> impl ExactSizeIterator<Item = Splice> + '_ {
        self.edits()
            .into_iter()
            .map(|(range, text)| Splice::new(range, text))
    }

    /// The splices of `r` alone (see [`splices`](Self::splices)): for an apply that keeps
    /// only some of a file's replacements.
    ///
    /// # Panics
    /// If `r` is not one of this file's replacements.
    pub fn splices_of<'a>(
        &'a self,
        r: &'a Replacement,
    ) -> impl ExactSizeIterator<Item = Splice> + 'a {
        self.texts
            .edits([&r.text])
            .into_iter()
            .map(|(range, text)| Splice::new(range, text))
    }

    /// The edits [`splices`](Self::splices) makes, as `(range of the original, new text)`.
    pub(crate) fn edits(&self) -> Vec<(Range<usize>, &str)> {
        self.texts.edits(self.replacements.iter().map(|r| &r.text))
    }

    /// Splices the replacements into `original`, which is the text the plan read (checked by
    /// the caller).
    pub(super) fn splice_into(&self, original: &str) -> String {
        let removed: usize = self.replacements.iter().map(|r| r.range.len()).sum();
        let added: usize = self.replacements.iter().map(|r| r.new_range.len()).sum();
        let edits = self.edits();
        spliced(
            original,
            0..original.len(),
            edits.iter().map(|(range, text)| (range, *text)),
            original.len() + added - removed,
        )
    }

    /// Keeps only the first `n` replacements.
    fn truncate(&mut self, n: usize) {
        let Some(cut) = self.replacements.get(n) else {
            return;
        };
        self.texts.truncate(&cut.text);
        self.replacements.truncate(n);
        // It judged every replacement, not these.
        self.syntax = None;
        self.replacements.shrink_to_fit();
    }
}

/// Totals of a plan.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EditTotals {
    /// Source files looked at (of a supported language, under the scope).
    pub files_scanned: usize,
    /// Of those, files parsed (the others could not contain a match).
    pub files_parsed: usize,
    /// Of the files scanned, those holding every literal (word) of a pattern: a superset
    /// of the files parsed, the rest ruled out by the pattern's token shape. Without the
    /// shape prefilter these would all have been parsed.
    #[serde(skip)]
    pub files_with_literals: usize,
    /// Files in the plan.
    pub files_changed: usize,
    /// Replacements in the plan.
    pub replacements: usize,
    /// Replacements found in all, before the limit.
    pub replacements_found: usize,
    /// Matches whose rewrite equals the matched code: not counted as replacements.
    pub identical: usize,
}

/// Reported when the limit cut replacements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct LimitReport {
    /// The limit asked for.
    pub limit: usize,
    /// Replacements found in all.
    pub found: usize,
}

/// The result of [`plan_edits`]: what would change, file by file, sorted by path.
#[derive(Clone, Debug, Default)]
pub struct EditPlan {
    /// Changed files, sorted by path; each has at least one replacement.
    pub files: Vec<FileEdit>,
    /// Parsed files with syntax errors, sorted. They are rewritten all the same (the CLI
    /// does too), but a match inside broken code may be missing or odd: worth a look. A Rust
    /// file of 4 KiB or more whose tree no [`cache`](EditRequest::cache) keeps can be parsed
    /// only in the top-level items where a match can be; an error in its other items is then
    /// not seen.
    pub parse_errors: Vec<String>,
    /// Files not searched, by reason.
    pub skipped: Skipped,
    /// Counts.
    pub totals: EditTotals,
    /// `Some` when the limit cut replacements.
    pub limit: Option<LimitReport>,
    /// Matches of each op found in all (before the limit, identical rewrites included),
    /// indexed like the ops.
    pub matches_per_op: Vec<usize>,
    /// Things the caller should know (e.g. an op not valid in some inferred language, or a
    /// pattern shape that cannot match).
    pub warnings: Vec<String>,
}

/// An edit before it is spliced in.
pub(super) struct RawEdit {
    op: usize,
    pub(super) range: Range<usize>,
    pub(super) text: String,
}

struct Built {
    replacements: Vec<Replacement>,
    texts: NewTexts,
}

/// Records sorted, non-overlapping `edits` of `src`: where each one is and lands, and what of
/// its text differs from what it replaces.
fn build(src: &str, edits: Vec<RawEdit>) -> Built {
    let mut texts = NewTexts::default();
    let mut replacements = Vec::with_capacity(edits.len());
    let mut lines = LineCounter::new(src);
    // Where the original's offsets land in the new contents: shifted by what came before.
    let mut shift: isize = 0;
    for edit in edits {
        let (line, column) = lines.position(edit.range.start);
        let text = texts.push(src, edit.range.clone(), &edit.text);
        let start = edit.range.start.saturating_add_signed(shift);
        replacements.push(Replacement {
            op: edit.op,
            line,
            column,
            range: edit.range.clone(),
            new_range: start..start + edit.text.len(),
            text,
        });
        shift += edit.text.len() as isize - edit.range.len() as isize;
    }
    texts.shrink_to_fit();
    Built {
        replacements,
        texts,
    }
}

/// 1-based line and character column of byte offsets visited in increasing order.
pub(crate) struct LineCounter<'a> {
    src: &'a str,
    at: usize,
    line: usize,
    line_start: usize,
}

impl<'a> LineCounter<'a> {
    pub(crate) fn new(src: &'a str) -> Self {
        Self {
            src,
            at: 0,
            line: 1,
            line_start: 0,
        }
    }

    /// 1-based line and column (in characters) of `offset`.
    pub(crate) fn position(&mut self, offset: usize) -> (usize, usize) {
        let line_start = self.advance(offset);
        let column = self.src[line_start..offset].chars().count() + 1;
        (self.line, column)
    }

    /// 0-based row and column in bytes of `offset`: tree-sitter's `Point`.
    pub(crate) fn point(&mut self, offset: usize) -> (usize, usize) {
        let line_start = self.advance(offset);
        (self.line - 1, offset - line_start)
    }

    /// Counts the lines up to `offset`; returns where its line starts.
    fn advance(&mut self, offset: usize) -> usize {
        if offset < self.at {
            // Not increasing (nested search matches): start over.
            *self = Self::new(self.src);
        }
        let bytes = &self.src.as_bytes()[self.at..offset];
        for nl in memchr::memchr_iter(b'\n', bytes) {
            self.line += 1;
            self.line_start = self.at + nl + 1;
        }
        self.at = offset;
        self.line_start
    }
}

enum Outcome {
    NoChange,
    Changed(Box<FileEdit>),
}

struct FileResult {
    sort_key: PathBuf,
    display: String,
    has_error: bool,
    outcome: Result<Outcome, EngineError>,
    identical: usize,
    /// `(op index, matches)` for the ops that matched.
    per_op: Vec<(usize, usize)>,
}

/// `judged`: the plan's tally of the results it judged, when it judges them (see
/// [`EditRequest::check_syntax`]).
fn rewrite_file(c: Candidate<'_>, judged: Option<&Tally>) -> FileResult {
    let mut result = FileResult {
        sort_key: c.sort_key.clone(),
        display: c.display.clone(),
        has_error: false,
        outcome: Ok(Outcome::NoChange),
        identical: 0,
        per_op: Vec::new(),
    };
    let mut edits = Vec::new();
    let is_rule = c.ops.ops.first().is_some_and(|op| op.rule().is_some());
    // A file in parts is matched a part at a time; when a part cannot stand for its items
    // (see `partial::parse_cut`), the whole file is parsed, as a cut's parse would.
    let in_parts = !c.chunks.is_empty() && edits_in_parts(&c, &mut result, &mut edits);
    let mut root = None;
    if !in_parts {
        let parsed = match &c.root {
            Some(root) => Some(root.clone()),
            None if !c.chunks.is_empty() => parse(&c.text, c.lang).map(Arc::new),
            None => None,
        };
        let Some(parsed) = parsed else {
            result.has_error = true;
            return result;
        };
        result.has_error = has_syntax_error(&parsed);
        if is_rule {
            rule_edits(
                &parsed,
                &c.text,
                c.ops,
                &c.may_match,
                &mut result,
                &mut edits,
            );
        }
        pattern_edits(&parsed, &c, &mut result, &mut edits);
        root = Some(parsed);
    }
    if edits.is_empty() {
        return result;
    }
    // A rule's edits are already in the CLI's order, overlaps dropped as it drops them.
    if !is_rule {
        edits.sort_by_key(|e| (e.range.start, e.range.end, e.op));
        if let Some(err) = find_overlap(&c.text, &c.display, &edits) {
            result.outcome = Err(err);
            return result;
        }
    }
    // Files in parts are planned only when nothing judges the result (see `plan_compiled`).
    let syntax = match (&root, judged) {
        (Some(root), Some(tally)) => {
            result_syntax::judge(root, c.lang, &c.text, &c.inner, &edits, tally)
        }
        _ => None,
    };
    drop(root);
    let fingerprint = Fingerprint::of(c.text.as_bytes());
    let built = build(&c.text, edits);
    let mut file = FileEdit {
        path: c.path,
        display: c.display,
        lang: c.lang,
        fingerprint,
        replacements: built.replacements,
        texts: built.texts,
        syntax: None,
    };
    file.syntax = syntax.map(|verdict| PlannedVerdict {
        verdict,
        splices: splices_digest(file.edits().iter().map(|(range, text)| (range, *text))),
    });
    result.outcome = Ok(Outcome::Changed(Box::new(file)));
    result
}

/// The edits of `c`'s patterns found in each of its [`chunks`](Candidate::chunks) in turn,
/// each part's tree dropped before the next is parsed; `false`, with nothing found kept, when
/// a part cannot stand for its items.
fn edits_in_parts(c: &Candidate<'_>, result: &mut FileResult, edits: &mut Vec<RawEdit>) -> bool {
    for part in &c.chunks {
        let Some(root) = partial::parse_cut(&c.text, part) else {
            edits.clear();
            result.identical = 0;
            result.per_op.clear();
            return false;
        };
        pattern_edits(&root, c, result, edits);
    }
    true
}

/// The edits of `c`'s pattern ops with a rewrite, matched in `root`: each match's whole node
/// replaced, in the order found; matches that rewrite to themselves are counted as identical.
fn pattern_edits(
    root: &Root,
    c: &Candidate<'_>,
    result: &mut FileResult,
    edits: &mut Vec<RawEdit>,
) {
    for (&i, anchors) in c.may_match.iter().zip(&c.anchors) {
        let op = &c.ops.ops[i];
        let OpKind::Pattern {
            pattern,
            fix: Some(fix),
            ..
        } = &op.kind
        else {
            continue;
        };
        let mut matches = 0;
        for_each_match(root, pattern, false, anchors.as_ref(), |m| {
            matches += 1;
            // The whole matched node is replaced, trailing `;` included, as the CLI does
            // (`var $A = $B` -> `let $A = $B` turns `var a = 1;` into `let a = 1`). ast-grep's
            // `replace_all` stops before such trailing tokens instead; the CLI is the oracle.
            let range = m.range();
            let text = String::from_utf8(fix.generate_replacement(&m))
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
            if c.text.get(range.clone()) == Some(text.as_str()) {
                result.identical += 1;
            } else {
                edits.push(RawEdit {
                    op: op.index,
                    range,
                    text,
                });
            }
        });
        if matches > 0 {
            result.per_op.push((op.index, matches));
        }
    }
}

/// The edits of the rules in `c` (those the prefilter left), made as `ast-grep scan --rule
/// --update-all` makes them: every match in pre-order through ast-grep-config's
/// `CombinedScan` (which honours `ast-grep-ignore` comments), each replaced through its rule's
/// first fix over the range that fix covers (`expandStart`/`expandEnd` included), and a match
/// whose range starts before the end of the last one kept is dropped, as the CLI drops it.
fn rule_edits(
    root: &Root,
    text: &str,
    ops: &LangOps,
    may_match: &[usize],
    result: &mut FileResult,
    edits: &mut Vec<RawEdit>,
) {
    let rules: Vec<(usize, &Rule)> = may_match
        .iter()
        .filter_map(|&i| ops.ops[i].rule().map(|r| (ops.ops[i].index, r)))
        .collect();
    let combined = CombinedScan::new(rules.iter().map(|(_, r)| *r).collect());
    let scanned = combined.scan(root, true);
    let mut per_op: BTreeMap<usize, usize> = BTreeMap::new();
    let mut end = 0;
    for (rule, m) in scanned.diffs {
        let Some(&(op, _)) = rules.iter().find(|(_, r)| std::ptr::eq(*r, rule)) else {
            continue;
        };
        let Some(fixer) = rule.fixer.first() else {
            continue;
        };
        let edit = m.make_edit(&rule.matcher, fixer);
        let range = edit.position..edit.position + edit.deleted_length;
        if range.start < end {
            continue;
        }
        end = range.end;
        *per_op.entry(op).or_default() += 1;
        let new = String::from_utf8(edit.inserted_text)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
        if text.get(range.clone()) == Some(new.as_str()) {
            result.identical += 1;
        } else {
            edits.push(RawEdit {
                op,
                range,
                text: new,
            });
        }
    }
    result.per_op.extend(per_op);
}

/// The first pair of edits (sorted by start) from two ops that overlap, as an error.
fn find_overlap(src: &str, display: &str, edits: &[RawEdit]) -> Option<EngineError> {
    let mut reach: Option<(usize, usize, usize)> = None; // (start, end, op) reaching furthest
    for edit in edits {
        if let Some((start, end, op)) = reach
            && (edit.range.start < end || edit.range.start == start)
        {
            let (line, _) = LineCounter::new(src).position(edit.range.start);
            let snippet = src
                .get(edit.range.start..)
                .and_then(|rest| rest.lines().next())
                .unwrap_or_default();
            let (first, second) = if op <= edit.op {
                (op, edit.op)
            } else {
                (edit.op, op)
            };
            return Some(EngineError::Overlap {
                file: display.to_owned(),
                line,
                first,
                second,
                snippet: shorten(snippet.trim_end(), 40),
            });
        }
        if reach.is_none_or(|(_, end, _)| edit.range.end > end) {
            reach = Some((edit.range.start, edit.range.end, edit.op));
        }
    }
    None
}

/// Results gathered from the walker's threads, capped by the limit as they arrive so that a
/// small limit over a large tree does not hold every file.
struct Collector {
    limit: Option<usize>,
    files: BTreeMap<PathBuf, FileEdit>,
    kept: usize,
    found: usize,
    identical: usize,
    per_op: Vec<usize>,
    parse_errors: Vec<(PathBuf, String)>,
    overlaps: Vec<(PathBuf, EngineError)>,
}

impl Collector {
    fn add(&mut self, result: FileResult) {
        self.identical += result.identical;
        for (op, n) in result.per_op {
            if let Some(count) = self.per_op.get_mut(op) {
                *count += n;
            }
        }
        if result.has_error {
            self.parse_errors
                .push((result.sort_key.clone(), result.display.clone()));
        }
        let file = match result.outcome {
            Err(err) => {
                self.overlaps.push((result.sort_key, err));
                return;
            }
            Ok(Outcome::NoChange) => return,
            Ok(Outcome::Changed(file)) => *file,
        };
        let n = file.replacements.len();
        self.found += n;
        self.kept += n;
        self.files.insert(result.sort_key, file);
        if let Some(limit) = self.limit {
            drop_beyond_limit(&mut self.files, &mut self.kept, limit, |f| {
                f.replacements.len()
            });
        }
    }
}

/// Drops files from the end of the path order while the others still hold `limit` items
/// (`kept` counts the items held, `len` one file's), so that a small limit over a large tree
/// does not hold every file.
pub(super) fn drop_beyond_limit<V>(
    files: &mut BTreeMap<PathBuf, V>,
    kept: &mut usize,
    limit: usize,
    len: impl Fn(&V) -> usize,
) {
    while let Some(last) = files.last_key_value().map(|(_, v)| len(v)) {
        if *kept - last < limit {
            break;
        }
        files.pop_last();
        *kept -= last;
    }
}

/// Plans the rewrite of `request.ops` over `scope`: reads and parses files, changes nothing.
///
/// Errors: invalid ops or language (named by field), a path outside the workspace, overlapping
/// replacements of two ops (the first file in path order is named), too many files,
/// cancellation.
///
/// ```
/// use xcsh_tools::engine::{self, Control, EditRequest, Lang, Op, Scope};
/// use xcsh_tools::workspace::Workspace;
///
/// let dir = tempfile::tempdir()?;
/// std::fs::write(dir.path().join("a.py"), "if x == None:\n    pass\n")?;
/// std::fs::write(dir.path().join("b.py"), "y = z == None\n")?;
/// let ws = Workspace::new(dir.path())?;
///
/// let request = EditRequest {
///     ops: vec![Op::new("$A == None", "$A is None")],
///     limit: Some(1),
///     ..EditRequest::default()
/// };
/// let plan = engine::plan_edits(&Scope::root(&ws), &request, &Control::default())?;
/// assert_eq!(plan.files.len(), 1);
/// assert_eq!(plan.files[0].display, "a.py");
/// let r = &plan.files[0].replacements[0];
/// assert_eq!((r.line, r.column), (1, 4));
/// assert_eq!(plan.files[0].before(r, "if x == None:\n    pass\n"), "x == None");
/// let original = "if x == None:\n    pass\n";
/// assert_eq!(plan.files[0].after(r, original), "x is None");
/// assert_eq!(plan.limit.map(|l| l.found), Some(2));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn plan_edits(
    scope: &Scope<'_>,
    request: &EditRequest,
    ctl: &Control<'_>,
) -> Result<EditPlan, EngineError> {
    if let Some(0) = request.limit {
        return Err(EngineError::InvalidLimit { given: 0 });
    }
    let ops = match &request.rule {
        Some(_) if !request.ops.is_empty() => {
            return Err(EngineError::RuleWithPatterns { patterns: "ops" });
        }
        Some(rule) => CompiledOps::for_rules(rule, request.lang, true)?,
        None => CompiledOps::for_edit(&request.ops, request.lang)?,
    };
    plan_compiled(
        scope,
        &ops,
        request.limit,
        &request.walk,
        request.cache.as_ref(),
        request.check_syntax,
        ctl,
    )
}

/// A Rust file with more than this many bytes of items a match can be in, whose tree no
/// cache keeps, is parsed in parts (see `partial::Cut::chunks`): a tree costs some eighty
/// times its text, and two threads each holding a 260 KB file's whole tree made a broad
/// pattern's peak memory.
const PARTS_ABOVE: usize = 128 * 1024;

/// [`plan_edits`] with ops compiled beforehand.
pub(crate) fn plan_compiled(
    scope: &Scope<'_>,
    ops: &CompiledOps,
    limit: Option<usize>,
    walk_opts: &WalkOptions,
    cache: Option<&ParseCache>,
    check_syntax: bool,
    ctl: &Control<'_>,
) -> Result<EditPlan, EngineError> {
    let collector = Mutex::new(Collector {
        limit,
        files: BTreeMap::new(),
        kept: 0,
        found: 0,
        identical: 0,
        per_op: vec![0; ops.len()],
        parse_errors: Vec::new(),
        overlaps: Vec::new(),
    });
    let tally = Tally::default();
    let judged = check_syntax.then_some(&tally);
    let visit = |c: Candidate<'_>| {
        let result = rewrite_file(c, judged);
        let changed = matches!(result.outcome, Ok(Outcome::Changed(_)));
        collector
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .add(result);
        changed
    };
    // Without a judge of the results, which reads a file's one tree, a large file's many
    // matched items are parsed and matched in parts: a plan holds one part's tree at a time.
    let chunk_above = (!check_syntax).then_some(PARTS_ABOVE);
    let report = walk(scope, ops, walk_opts, cache, chunk_above, ctl, &visit)?;
    let mut collected = collector.into_inner().unwrap_or_else(|p| p.into_inner());

    collected.overlaps.sort_by(|a, b| a.0.cmp(&b.0));
    if let Some((_, err)) = collected.overlaps.into_iter().next() {
        return Err(err);
    }
    collected.parse_errors.sort();

    let mut files: Vec<FileEdit> = collected.files.into_values().collect();
    let mut limit_report = None;
    if let Some(limit) = limit
        && collected.found > limit
    {
        let mut left = limit;
        files.retain_mut(|file| {
            if left == 0 {
                return false;
            }
            file.truncate(left);
            left -= file.replacements.len();
            true
        });
        limit_report = Some(LimitReport {
            limit,
            found: collected.found,
        });
    }
    let replacements = files.iter().map(|f| f.replacements.len()).sum();
    Ok(EditPlan {
        totals: EditTotals {
            files_scanned: report.files_scanned,
            files_parsed: report.files_parsed,
            files_with_literals: report.files_with_literals,
            files_changed: files.len(),
            replacements,
            replacements_found: collected.found,
            identical: collected.identical,
        },
        files,
        parse_errors: collected.parse_errors.into_iter().map(|(_, d)| d).collect(),
        skipped: report.skipped,
        limit: limit_report,
        warnings: report
            .warnings
            .into_iter()
            .chain(ops.hints_for_unmatched(&collected.per_op))
            .collect(),
        matches_per_op: collected.per_op,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edit(op: usize, range: Range<usize>, text: &str) -> RawEdit {
        RawEdit {
            op,
            range,
            text: text.to_owned(),
        }
    }

    #[test]
    fn build_records_positions_and_texts_and_splices_them_back() {
        let src = "ab\r\ncdé fg\nhi";
        let edits = vec![
            edit(0, 0..2, "X"),
            edit(1, 9..11, "YYY"),
            edit(0, 12..14, ""),
        ];
        let built = build(src, edits);
        let file = FileEdit {
            path: PathBuf::new(),
            display: "a.rs".to_owned(),
            lang: Lang::Rust,
            fingerprint: Fingerprint::of(src),
            replacements: built.replacements,
            texts: built.texts,
            syntax: None,
        };
        let positions: Vec<_> = file
            .replacements
            .iter()
            .map(|r| (r.line, r.column))
            .collect();
        assert_eq!(positions, [(1, 1), (2, 5), (3, 1)]);
        let texts: Vec<_> = file
            .replacements
            .iter()
            .map(|r| (file.before(r, src), file.after(r, src).into_owned()))
            .collect();
        assert_eq!(
            texts,
            [
                ("ab", "X".to_owned()),
                ("fg", "YYY".to_owned()),
                ("hi", String::new())
            ]
        );
        let new = file.new_contents(src).expect("the original");
        assert_eq!(new, "X\r\ncdé YYY\n");
        // `new_range` locates each new text in the new contents.
        for r in &file.replacements {
            assert_eq!(&new[r.new_range.clone()], file.after(r, src));
        }
        let splices: Vec<_> = file.splices().map(|s| (s.range, s.text)).collect();
        assert_eq!(
            splices,
            [
                (0..2, "X".to_owned()),
                (9..11, "YYY".to_owned()),
                (12..14, String::new())
            ]
        );
        let err = file.new_contents("ab\r\ncdé fg\nhj").unwrap_err();
        assert_eq!(err.to_string(), "`a.rs` (modified since it was read)");

        let mut cut = file.clone();
        cut.truncate(2);
        assert_eq!(cut.new_contents(src).unwrap(), "X\r\ncdé YYY\nhi");
        assert_eq!(cut.replacements.len(), 2);
        assert_eq!(cut.after(&cut.replacements[1], src), "YYY");
        assert_eq!(cut.before(&cut.replacements[1], src), "fg");
    }

    #[test]
    fn overlaps_between_ops_are_found() {
        let src = "foo(bar(1))\n";
        let disjoint = [edit(0, 0..3, "x"), edit(1, 4..10, "y")];
        assert!(find_overlap(src, "a.rs", &disjoint).is_none());
        let nested = [edit(0, 0..11, "x"), edit(1, 4..10, "y")];
        let err = find_overlap(src, "a.rs", &nested).unwrap().to_string();
        assert!(
            err.starts_with("a.rs:1: ops[0] and ops[1] both match overlapping code (`bar(1))`)"),
            "{err}"
        );
        let same_start = [edit(1, 0..3, "x"), edit(0, 0..11, "y")];
        assert!(find_overlap(src, "a.rs", &same_start).is_some());
        // Adjacent is fine.
        let adjacent = [edit(0, 0..4, "x"), edit(1, 4..11, "y")];
        assert!(find_overlap(src, "a.rs", &adjacent).is_none());
    }
}
