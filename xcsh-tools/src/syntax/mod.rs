//! The syntax guard: whether each file a [`ChangeSet`] writes, in a language xcsh parses,
//! still parses after the change, and where the change introduces a syntax error that was
//! not there before.
//!
//! Every built-in producer of file edits (`ast_edit`, `edit`, `write_file`) runs
//! [`SyntaxReport::check`] on the change set it previews, shows [`SyntaxReport::notes`] in
//! the preview, and, when the session's [`SyntaxGuard`] is [`Refuse`](SyntaxGuard::Refuse),
//! keeps [`SyntaxReport::refusal`] in its pending action so that `resolve` apply writes
//! nothing. Any other producer (a custom tool's `ChangeSet`) can do the same.
//!
//! Errors are tree-sitter's: an `ERROR` node (text the grammar could not place, reported as
//! `unexpected `…``) or a `MISSING` node (a token the parser inserted to recover, reported
//! as `` `;` expected ``). A file that had errors before keeps being judged by what the
//! change adds: an error is blamed on the change only when the result has more errors of its
//! kind, with the same text on the same line, than the original had.
//!
//! ```
//! use xcsh_tools::changeset::ChangeSet;
//! use xcsh_tools::syntax::SyntaxReport;
//! use xcsh_tools::workspace::Workspace;
//!
//! let dir = tempfile::tempdir()?;
//! std::fs::write(dir.path().join("lib.rs"), "fn f() {\n    let x = 1;\n}\n")?;
//! let mut cs = ChangeSet::new(Workspace::new(dir.path())?);
//! cs.modify("lib.rs", "fn f() {\n    let x = 1\n}\n")?;
//!
//! let report = SyntaxReport::check(&cs);
//! assert_eq!(
//!     report.introduced()[0].to_string(),
//!     "introduces a syntax error at lib.rs:2:14 (`;` expected)"
//! );
//! assert_eq!(report.notes(), ["Syntax: lib.rs introduces a syntax error at lib.rs:2:14 (`;` expected)."]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::cell::OnceCell;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};

use crate::changeset::{ChangeSet, Fingerprint, Replaced, WrittenFile};
use crate::engine::{
    ChangedItemsErrors, EditPlan, ErrorReport, Lang, REPORTED_ERRORS, ResultSyntax, SMALL_FILE,
    SyntaxErrorNode, changed_items_errors, splices_digest, syntax_errors,
};

/// Originals a producer parsed whole and found without a syntax error, by root-relative path,
/// with the fingerprint of the text it parsed (`ast_edit`'s plan knows this of the small Rust
/// files it changes). The guard trusts an entry only for a file whose original, as it reads
/// it, has that fingerprint.
pub(crate) type CleanOriginals = HashMap<String, Fingerprint>;

/// What a producer found out about the files it changes with its own parses, so that the
/// guard need not find it out again: originals it parsed whole without an error
/// ([`CleanOriginals`]), and results it judged with its own tree edited and parsed again
/// ([`EditRequest::check_syntax`](crate::engine::EditRequest::check_syntax)). The guard takes
/// a judged result's verdict, without reading the file, only for the change it was made of:
/// the same path and language, spliced into an original of the same fingerprint with the same
/// edits (a partial accept that keeps part of a file's edits is judged afresh).
#[derive(Debug, Default)]
pub(crate) struct SyntaxHints {
    pub(crate) clean: CleanOriginals,
    judged: HashMap<String, Judged>,
}

/// One result a producer judged.
#[derive(Debug)]
struct Judged {
    original: Fingerprint,
    lang: Lang,
    /// [`splices_digest`] of the splices the verdict is on, when it was given.
    edits: u64,
    verdict: SyntaxVerdict,
}

impl SyntaxHints {
    /// What `plan` knows: the changed Rust files it parsed whole (those under the size below
    /// which the engine always parses whole) without an error, and the results it judged.
    pub(crate) fn of_plan(plan: &EditPlan) -> SyntaxHints {
        let broken: HashSet<&str> = plan.parse_errors.iter().map(String::as_str).collect();
        let clean = plan
            .files
            .iter()
            .filter(|f| {
                f.lang == Lang::Rust
                    && f.fingerprint.len() < SMALL_FILE as u64
                    && !broken.contains(f.display.as_str())
            })
            .map(|f| (f.display.clone(), f.fingerprint))
            .collect();
        let judged = plan
            .files
            .iter()
            .filter_map(|f| {
                let planned = f.syntax.clone()?;
                let verdict = match planned.verdict {
                    ResultSyntax::Parses => SyntaxVerdict::Parses,
                    ResultSyntax::ChangesParse => SyntaxVerdict::ChangesParse,
                    ResultSyntax::Introduced { errors, more } => SyntaxVerdict::Introduced {
                        errors: errors
                            .into_iter()
                            .map(|e| SyntaxError::reported(&f.display, e))
                            .collect(),
                        more,
                    },
                };
                let judged = Judged {
                    original: f.fingerprint,
                    lang: f.lang,
                    edits: planned.splices,
                    verdict,
                };
                Some((f.display.clone(), judged))
            })
            .collect();
        SyntaxHints { clean, judged }
    }

    /// The verdict a producer gave on `file` (of `lang`), if it judged this very change.
    fn verdict(&self, file: &WrittenFile<'_>, lang: Lang) -> Option<SyntaxVerdict> {
        let judged = self.judged.get(&file.shown)?;
        let (original, edits) = file.spliced()?;
        (judged.original == original
            && judged.lang == lang
            && judged.edits == splices_digest(edits.iter().map(|s| (&s.range, s.text.as_str()))))
        .then(|| judged.verdict.clone())
    }
}

/// Files whose verdict the notes give one by one; beyond it they are counted.
const LISTED_FILES: usize = 20;
/// Introduced errors named per file, at most.
const ERRORS_PER_FILE: usize = REPORTED_ERRORS;

/// What to do with a change that introduces a syntax error: the session's
/// [`AstToolsConfig::with_syntax_guard`](crate::AstToolsConfig::with_syntax_guard).
///
/// ```
/// use xcsh_tools::syntax::SyntaxGuard;
/// assert_eq!("refuse".parse::<SyntaxGuard>()?, SyntaxGuard::Refuse);
/// assert_eq!(SyntaxGuard::default(), SyntaxGuard::Warn);
/// assert!("strict".parse::<SyntaxGuard>().unwrap_err().contains("`warn` or `refuse`"));
/// # Ok::<(), String>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
#[non_exhaustive]
pub enum SyntaxGuard {
    /// The preview names every introduced error; apply writes anyway (the default).
    #[default]
    Warn,
    /// The preview names every introduced error and says apply will refuse; `resolve` apply
    /// refuses, writing nothing, until the change no longer breaks the file.
    Refuse,
}

impl std::str::FromStr for SyntaxGuard {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "warn" => Ok(SyntaxGuard::Warn),
            "refuse" => Ok(SyntaxGuard::Refuse),
            other => Err(format!(
                "unknown syntax guard `{other}`: use `warn` or `refuse`"
            )),
        }
    }
}

impl fmt::Display for SyntaxGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SyntaxGuard::Warn => "warn",
            SyntaxGuard::Refuse => "refuse",
        })
    }
}

/// What tree-sitter reported at a place.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum SyntaxProblem {
    /// A `MISSING` node: the parser needed this token (`;`, `)`, an identifier…) there.
    Missing(String),
    /// An `ERROR` node: text the grammar could not place, shortened.
    Unexpected(String),
}

impl fmt::Display for SyntaxProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SyntaxProblem::Missing(kind) => write!(f, "`{kind}` expected"),
            SyntaxProblem::Unexpected(text) if text.is_empty() => {
                f.write_str("unexpected end of input")
            }
            SyntaxProblem::Unexpected(text) => write!(f, "unexpected `{text}`"),
        }
    }
}

/// One syntax error a change introduces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SyntaxError {
    /// Root-relative path.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// 1-based column, in characters.
    pub column: usize,
    /// What tree-sitter reported.
    pub problem: SyntaxProblem,
}

impl fmt::Display for SyntaxError {
    /// `introduces a syntax error at src/lib.rs:41:5 (`;` expected)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "introduces a syntax error at {}:{}:{} ({})",
            self.file, self.line, self.column, self.problem
        )
    }
}

/// The verdict on one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum SyntaxVerdict {
    /// The result parses without an error.
    Parses,
    /// Every top-level item the change touches parses (or, for a change inside members of
    /// `impl`, `trait`, `mod` or `extern` bodies, every member it touches, and for a change
    /// inside the statements of a function's body, those statements), and the rest of the
    /// file is as it was and reads as it did, so the change introduces no error (whether the
    /// untouched parts parse was not checked). Rust files over 4 KiB, cut as the engine's
    /// partial parses cut them: the guard parses what changed, not the whole file.
    ChangesParse,
    /// The result has syntax errors, all of which the original had too.
    StillBroken {
        /// How many error nodes the result has (in a Rust file over 4 KiB judged by the
        /// items the change touches, as for [`ChangesParse`](Self::ChangesParse): in those).
        errors: usize,
    },
    /// The change introduces these errors (the first few; `more` counts the rest). In a Rust
    /// file over 4 KiB they are found in what the change touches (items, members or
    /// statements, as for [`ChangesParse`](Self::ChangesParse)), parsed alone; a bracket the
    /// change leaves open or closes twice is told without a parse (`` `}` expected ``).
    Introduced {
        /// The first introduced errors, in file order.
        errors: Vec<SyntaxError>,
        /// Introduced errors not listed.
        more: usize,
    },
    /// The result could not be judged (its bytes could not be made or are not UTF-8).
    Unchecked {
        /// Why, in words.
        why: String,
    },
}

/// One file the change writes, in a language xcsh parses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileSyntax {
    /// Root-relative path.
    pub file: String,
    /// The language it was parsed as (its name, e.g. `rust`).
    pub lang: String,
    /// Whether it parses.
    pub verdict: SyntaxVerdict,
}

/// The syntax guard's verdict on a change set, file by file (only files in a language xcsh
/// parses; others are not judged).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SyntaxReport {
    /// One entry per judged file, in the change set's order.
    pub files: Vec<FileSyntax>,
}

impl SyntaxReport {
    /// Parses every file `changes` writes (modified, created, renamed to) whose extension
    /// names a compiled language, before and after the change, and compares their error
    /// nodes. Reads the files as they are now.
    pub fn check(changes: &ChangeSet) -> SyntaxReport {
        Self::check_knowing(changes, &SyntaxHints::default())
    }

    /// [`check`](Self::check) of `changes` staged from `plan` (each file's
    /// [`splices`](crate::engine::FileEdit::splices) and fingerprint), taking what the plan
    /// found out with its own parses. With
    /// [`EditRequest::check_syntax`](crate::engine::EditRequest::check_syntax), a file whose
    /// result the plan's tree, edited and parsed again, found without an error is judged
    /// without being read again: [`Parses`](SyntaxVerdict::Parses) (a file the plan parsed
    /// whole) or [`ChangesParse`](SyntaxVerdict::ChangesParse) (a Rust file of 4 KiB or more,
    /// parsed around its matches). Every other file is judged as [`check`](Self::check)
    /// judges it.
    ///
    /// ```
    /// use xcsh_tools::changeset::ChangeSet;
    /// use xcsh_tools::engine::{self, Control, EditRequest, Op, Scope};
    /// use xcsh_tools::syntax::{SyntaxReport, SyntaxVerdict};
    /// use xcsh_tools::workspace::Workspace;
    ///
    /// let dir = tempfile::tempdir()?;
    /// std::fs::write(dir.path().join("lib.rs"), "fn f() -> u8 { g().unwrap() }\n")?;
    /// let ws = Workspace::new(dir.path())?;
    /// let request = EditRequest {
    ///     ops: vec![Op::new("$X.unwrap()", "$X?")],
    ///     check_syntax: true,
    ///     ..EditRequest::default()
    /// };
    /// let plan = engine::plan_edits(&Scope::root(&ws), &request, &Control::default())?;
    /// let mut changes = ChangeSet::new(ws);
    /// for file in &plan.files {
    ///     changes.modify_splicing(&file.path, file.fingerprint, file.splices())?;
    /// }
    /// let report = SyntaxReport::check_planned(&changes, &plan);
    /// assert_eq!(report.files[0].verdict, SyntaxVerdict::Parses);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn check_planned(changes: &ChangeSet, plan: &EditPlan) -> SyntaxReport {
        Self::check_knowing(changes, &SyntaxHints::of_plan(plan))
    }

    /// [`check`](Self::check), told what the producer knows (see [`SyntaxHints`]). A judged
    /// result keeps its verdict. A small Rust file whose original parses is judged by what
    /// the change touched, as a large one is, and when that parses, so does the whole result
    /// (its other parts are the original's); any error sends it to a whole parse, as without
    /// the hint: the verdicts are the same.
    pub(crate) fn check_knowing(changes: &ChangeSet, hints: &SyntaxHints) -> SyntaxReport {
        let clean = &hints.clean;
        let files = changes.written_contents();
        let judge = |file: &WrittenFile<'_>| -> Option<FileSyntax> {
            let lang = Lang::from_path(Path::new(&file.shown))?;
            if let Some(verdict) = hints.verdict(file, lang) {
                return Some(FileSyntax {
                    file: file.shown.clone(),
                    lang: lang.name().to_owned(),
                    verdict,
                });
            }
            Some(FileSyntax {
                file: file.shown.clone(),
                lang: lang.name().to_owned(),
                verdict: match file.contents() {
                    Ok((before, after)) => {
                        let before = before.unwrap_or_default();
                        let replaced = file.replaced(&before, &after);
                        let parses = !before.is_empty()
                            && clean
                                .get(&file.shown)
                                .is_some_and(|f| *f == Fingerprint::of(&before));
                        judge(&file.shown, before, after, lang, &replaced, parses)
                    }
                    Err(why) => SyntaxVerdict::Unchecked { why },
                },
            })
        };
        // Files are independent: spread them over the cores when there are many to read and
        // parse, each thread taking the next file when done with one (their costs differ a
        // hundredfold, and neighbours in path order alike: a crate's large test files).
        let threads = std::thread::available_parallelism().map_or(1, usize::from);
        let unjudged = files
            .iter()
            .filter(|f| {
                Lang::from_path(Path::new(&f.shown))
                    .is_some_and(|lang| hints.verdict(f, lang).is_none())
            })
            .count();
        if unjudged < 8 || threads == 1 {
            return SyntaxReport {
                files: files.iter().filter_map(judge).collect(),
            };
        }
        let next = AtomicUsize::new(0);
        let mut judged: Vec<(usize, FileSyntax)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..threads.min(files.len()))
                .map(|_| {
                    s.spawn(|| {
                        let mut mine = Vec::new();
                        loop {
                            let i = next.fetch_add(1, Ordering::Relaxed);
                            let Some(file) = files.get(i) else { break mine };
                            mine.extend(judge(file).map(|f| (i, f)));
                        }
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().unwrap_or_default())
                .collect()
        });
        judged.sort_unstable_by_key(|(i, _)| *i);
        SyntaxReport {
            files: judged.into_iter().map(|(_, f)| f).collect(),
        }
    }

    /// Every introduced error listed, in file order.
    pub fn introduced(&self) -> Vec<&SyntaxError> {
        self.files
            .iter()
            .flat_map(|f| match &f.verdict {
                SyntaxVerdict::Introduced { errors, .. } => errors.iter().collect(),
                _ => Vec::new(),
            })
            .collect()
    }

    /// The files the change breaks.
    pub fn broken_files(&self) -> Vec<&str> {
        self.files
            .iter()
            .filter(|f| matches!(f.verdict, SyntaxVerdict::Introduced { .. }))
            .map(|f| f.file.as_str())
            .collect()
    }

    /// Keeps only the verdicts on `files` (a partial apply).
    pub fn retain_files(&mut self, files: &[String]) {
        self.files.retain(|f| files.contains(&f.file));
    }

    /// The preview's lines: per file (the first 20, then counts) whether it parses, and
    /// every file the change breaks with its first errors. Empty when no file was judged.
    pub fn notes(&self) -> Vec<String> {
        if self.files.is_empty() {
            return Vec::new();
        }
        let line = |f: &FileSyntax| match &f.verdict {
            SyntaxVerdict::Parses => format!("Syntax: {} parses after the change.", f.file),
            SyntaxVerdict::ChangesParse => format!(
                "Syntax: {}: the items the change touches parse; it introduces no syntax error.",
                f.file
            ),
            SyntaxVerdict::StillBroken { errors } => format!(
                "Syntax: {} still has syntax errors ({}), as before; the change introduces none.",
                f.file,
                plural(*errors, "error node")
            ),
            SyntaxVerdict::Introduced { errors, more } => {
                let list: Vec<String> = errors.iter().map(ToString::to_string).collect();
                let more = if *more > 0 {
                    format!(" (and {} more)", plural(*more, "error"))
                } else {
                    String::new()
                };
                format!("Syntax: {} {}{more}.", f.file, list.join("; "))
            }
            SyntaxVerdict::Unchecked { why } => {
                format!("Syntax: {} was not checked: {why}.", f.file)
            }
        };
        if self.files.len() <= LISTED_FILES {
            return self.files.iter().map(line).collect();
        }
        let count =
            |p: fn(&SyntaxVerdict) -> bool| self.files.iter().filter(|f| p(&f.verdict)).count();
        let parses = count(|v| matches!(v, SyntaxVerdict::Parses | SyntaxVerdict::ChangesParse));
        let still = count(|v| matches!(v, SyntaxVerdict::StillBroken { .. }));
        let mut notes = vec![format!(
            "Syntax: of {} checked, {} parse after the change, {} still have the syntax errors they had.",
            plural(self.files.len(), "file"),
            parses,
            still
        )];
        notes.extend(
            self.files
                .iter()
                .filter(|f| {
                    matches!(
                        f.verdict,
                        SyntaxVerdict::Introduced { .. } | SyntaxVerdict::Unchecked { .. }
                    )
                })
                .take(LISTED_FILES)
                .map(line),
        );
        notes
    }

    /// Under [`SyntaxGuard::Refuse`], when the change breaks a file: the error `resolve` apply
    /// returns (and the preview announces), naming each broken file's first error.
    pub fn refusal(&self, guard: SyntaxGuard) -> Option<String> {
        if guard != SyntaxGuard::Refuse {
            return None;
        }
        let broken: Vec<String> = self
            .files
            .iter()
            .filter_map(|f| match &f.verdict {
                SyntaxVerdict::Introduced { errors, .. } => errors.first().map(ToString::to_string),
                _ => None,
            })
            .collect();
        if broken.is_empty() {
            return None;
        }
        Some(format!(
            "the syntax guard refuses this change (syntax_guard = \"refuse\"): it {}. Nothing was written. Discard it and preview a change that keeps the file parsing.",
            broken.join("; it ")
        ))
    }
}

/// The verdict on a file of `lang` whose contents go from `before` (empty for a new file)
/// to `after`; `file` names it in the errors. `original_parses`: `before` is known to parse
/// without an error (see [`CleanOriginals`]).
fn judge(
    file: &str,
    before: Vec<u8>,
    after: Vec<u8>,
    lang: Lang,
    replaced: &[Replaced],
    original_parses: bool,
) -> SyntaxVerdict {
    let Ok(after) = String::from_utf8(after) else {
        return SyntaxVerdict::Unchecked {
            why: "the result is not UTF-8 text".to_owned(),
        };
    };
    let before = String::from_utf8(before).unwrap_or_default();
    // An error the original had is on a line the original has (see `key` below): when no
    // error of the result is, the original need not be parsed to tell that all are new.
    let before_lines: OnceCell<HashSet<&str>> = OnceCell::new();
    let may_be_old = |errors: &[SyntaxErrorNode]| {
        let mut lines = errors.iter().map(|e| line_text(&after, e.byte).trim());
        // A few lines are searched for; for many, the original's lines are hashed once.
        if errors.len() <= SEARCHED_LINES {
            return lines.any(|line| has_line(&before, line));
        }
        // `lines` leaves out the empty line after a last newline, where a `MISSING` node
        // at the end of the file is.
        let kept = before_lines.get_or_init(|| {
            let mut kept: HashSet<&str> = before.lines().map(str::trim).collect();
            kept.insert("");
            kept
        });
        lines.any(|line| kept.contains(line))
    };
    // A large Rust file: only the items the change touched are parsed, before and after. A
    // small one only when its original parses: when what the change touched parses alone and
    // the rest reads as it did, the rest has the original's errors, none, so the whole result
    // parses; an error found there is left to the whole parse, which reports it as always.
    let small = after.len() < SMALL_FILE;
    let items = (lang == Lang::Rust && (!small || original_parses))
        .then(|| changed_items_errors(&before, &after, replaced, &|e| !small && may_be_old(e)))
        .flatten();
    let (after_errors, before_errors) = match items {
        Some(ChangedItemsErrors { after, .. }) if after.is_empty() => {
            return if small {
                SyntaxVerdict::Parses
            } else {
                SyntaxVerdict::ChangesParse
            };
        }
        Some(ChangedItemsErrors { after, before }) if !small => (after, Some(before)),
        _ => (syntax_errors(&after, lang), None),
    };
    if after_errors.is_empty() {
        return SyntaxVerdict::Parses;
    }
    // An error the original had (same kind, same text, same line text) is not the change's.
    let key = |text: &str, e: &SyntaxErrorNode| {
        let line = line_text(text, e.byte);
        (e.missing, e.text.clone(), line.trim().to_owned())
    };
    let before_errors = before_errors.unwrap_or_else(|| {
        if before.is_empty() || !may_be_old(&after_errors) {
            Vec::new()
        } else {
            syntax_errors(&before, lang)
        }
    });
    let mut before_counts: HashMap<(bool, String, String), usize> = HashMap::new();
    for e in before_errors {
        *before_counts.entry(key(&before, &e)).or_default() += 1;
    }
    let mut introduced = Vec::new();
    for e in &after_errors {
        match before_counts.get_mut(&key(&after, e)) {
            Some(n) if *n > 0 => *n -= 1,
            _ => introduced.push(e),
        }
    }
    if introduced.is_empty() {
        return SyntaxVerdict::StillBroken {
            errors: after_errors.len(),
        };
    }
    // Where the change starts in the result: an `ERROR` node is reported at its first token
    // from there on.
    let changed_from = before
        .bytes()
        .zip(after.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    let more = introduced.len().saturating_sub(ERRORS_PER_FILE);
    let errors = introduced
        .into_iter()
        .take(ERRORS_PER_FILE)
        .map(|e| SyntaxError::reported(file, e.report(&after, changed_from)))
        .collect();
    SyntaxVerdict::Introduced { errors, more }
}

impl SyntaxError {
    fn reported(file: &str, report: ErrorReport) -> SyntaxError {
        SyntaxError {
            file: file.to_owned(),
            line: report.line,
            column: report.column,
            problem: if report.missing {
                SyntaxProblem::Missing(report.text)
            } else {
                SyntaxProblem::Unexpected(report.text)
            },
        }
    }
}

/// Errors up to which [`judge`] searches the original for their lines rather than hashing
/// all of its lines.
const SEARCHED_LINES: usize = 8;

/// Whether a line of `text`, trimmed, is `line` (already trimmed), as a look-up in the set
/// of `text.lines().map(str::trim)` and `""` would say.
fn has_line(text: &str, line: &str) -> bool {
    if line.is_empty() {
        return true;
    }
    memchr::memmem::find_iter(text.as_bytes(), line.as_bytes()).any(|at| {
        let start = text[..at].rfind('\n').map_or(0, |n| n + 1);
        let end = text[at..].find('\n').map_or(text.len(), |n| at + n);
        text[start..end].trim() == line
    })
}

/// The line holding byte `at`.
fn line_text(text: &str, at: usize) -> &str {
    let at = at.min(text.len());
    let start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    &text[start..end]
}

/// `1 error`, `2 errors`.
fn plural(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// Puts the syntax guard's lines before the preview's closing sentence, which becomes the
/// refusal when the guard refuses.
pub(crate) fn with_syntax(text: &mut String, syntax: &SyntaxReport, refusal: Option<&str>) {
    const CLOSING: &str = "\n\nNothing is written yet.";
    let at = text.rfind(CLOSING).unwrap_or(text.len());
    let mut lines = String::new();
    for note in syntax.notes() {
        lines.push('\n');
        lines.push_str(&note);
    }
    if !lines.is_empty() {
        text.insert_str(at, &format!("\n{lines}"));
    }
    if let Some(refusal) = refusal {
        let at = text.rfind(CLOSING).unwrap_or(text.len());
        text.truncate(at);
        text.push_str(&format!("\n\nThis change will be refused: {refusal}"));
    }
}

#[cfg(test)]
mod planned_tests;

#[cfg(test)]
mod tests {
    use super::*;

    /// The search says what the set of trimmed lines says, for every line of each text
    /// and for parts, joins and padding of them.
    #[test]
    fn a_searched_line_is_found_as_the_set_of_lines_finds_it() {
        let texts = [
            "fn a() {\n    let x = 1;\r\n  x\n}\n",
            "  a\n\ta b \nab\n\n",
            "x",
            "",
            "let x = 1; let x = 1;\nlet x = 1;x\n",
        ];
        for text in texts {
            let mut kept: HashSet<&str> = text.lines().map(str::trim).collect();
            kept.insert("");
            let mut probes: Vec<String> = text.lines().map(|l| l.trim().to_owned()).collect();
            probes.extend(
                ["a", "b", "a b", "ab", "x", "let x = 1;", "1;", "}", "", " "].map(String::from),
            );
            for probe in probes {
                let probe = probe.trim();
                assert_eq!(
                    has_line(text, probe),
                    kept.contains(probe),
                    "{text:?} {probe:?}"
                );
            }
        }
    }

    /// Told that a small original parses, the guard gives the verdicts it gives without being
    /// told; told so of another text (the file is not what the producer parsed), it ignores
    /// the hint: an error the original had outside the change is still seen.
    #[test]
    fn a_hint_that_the_original_parses_changes_no_verdict() {
        use crate::workspace::Workspace;
        let dir = tempfile::tempdir().unwrap();
        let clean = "use a::b;\n\nfn f() {\n    let x = 1;\n}\n";
        let broken = "use a::b;\n\nfn f() {\n    let x = ;\n}\n";
        let cases = [
            (clean, "use a::b;", "pub(crate) use a::b;"),
            (clean, "let x = 1;", "let x = ;"),
            (clean, "use a::b;", "use a::b"),
        ];
        for (src, from, to) in cases {
            std::fs::write(dir.path().join("lib.rs"), src).unwrap();
            let mut cs = ChangeSet::new(Workspace::new(dir.path()).unwrap());
            cs.modify("lib.rs", src.replacen(from, to, 1)).unwrap();
            let hint = SyntaxHints {
                clean: CleanOriginals::from([("lib.rs".to_owned(), Fingerprint::of(src))]),
                ..SyntaxHints::default()
            };
            assert_eq!(
                SyntaxReport::check_knowing(&cs, &hint),
                SyntaxReport::check(&cs),
                "{from} -> {to}"
            );
        }
        // The hint names a text the file does not hold: the original's own error is seen.
        std::fs::write(dir.path().join("lib.rs"), broken).unwrap();
        let mut cs = ChangeSet::new(Workspace::new(dir.path()).unwrap());
        cs.modify("lib.rs", broken.replacen("use a::b;", "pub use a::b;", 1))
            .unwrap();
        let hint = SyntaxHints {
            clean: CleanOriginals::from([("lib.rs".to_owned(), Fingerprint::of(clean))]),
            ..SyntaxHints::default()
        };
        let report = SyntaxReport::check_knowing(&cs, &hint);
        assert_eq!(report, SyntaxReport::check(&cs));
        assert!(
            matches!(report.files[0].verdict, SyntaxVerdict::StillBroken { .. }),
            "{report:?}"
        );
    }
}
