//! Finding, reading and filtering the files a run looks at.
//!
//! The walker is the `ignore` crate's parallel walker set up as the ast-grep CLI 0.51.1 sets
//! up its own (`NoIgnore::walk` plus `.types(lang.file_types())` in `run.rs`), so both see the
//! same files:
//!
//! * .gitignore (inside a git repository only: `require_git`), .ignore, `.git/info/exclude`
//!   and the global git excludes are honoured, in the walked directory and its parents;
//! * hidden files and directories are skipped — except that with an explicit `lang`, a hidden
//!   *file* with that language's extension is walked (the `ignore` crate lets a file-type
//!   match override the hidden rule; hidden directories stay skipped);
//! * symbolic links are not followed (a link is neither walked nor read);
//! * extensions are case-sensitive (`x.RS` is not Rust).
//!
//! On top of that, each file is skipped with a note when it is a ChangeSet temp leftover,
//! larger than the configured maximum, binary (a NUL byte in its first 8 KiB) or not UTF-8.
//! Empty files are skipped silently, as the CLI does.

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use ignore::gitignore::{Gitignore, GitignoreBuilder};
use ignore::{WalkBuilder, WalkState};
use serde::Serialize;

use super::cache::{ParseCache, Stat};
use super::matching::{Root, parse};
use super::partial::Cut;
use super::pattern::{LangOps, OpKind};
use super::prefilter::{Anchors, Tokens, Words};
use super::{CompiledOps, Control, EngineError, Lang, Progress, partial};
use crate::workspace::{Workspace, is_apply_state, is_temp_artifact};

/// Where a run looks: a workspace, a path inside it, and an optional extra glob.
///
/// `path` is a file, a directory or a glob, relative to the workspace root (or absolute inside
/// it); `None`, `""` and `"."` mean the whole root. A path that does not exist but contains
/// glob characters (`*?[{`) is a gitignore-style glob matched against root-relative paths.
/// `glob` further restricts the files found under `path`; it is gitignore-style and relative
/// to `path` (`*.rs` matches at any depth, `src/**/*.ts` is anchored, `!*_test.go` excludes).
/// Unlike the CLI's `--globs`, neither glob re-includes files that .gitignore excludes.
///
/// ```
/// use xcsh_tools::engine::Scope;
/// use xcsh_tools::workspace::Workspace;
///
/// let dir = tempfile::tempdir()?;
/// let ws = Workspace::new(dir.path())?;
/// let scope = Scope::root(&ws).with_path("src").with_glob("*.rs");
/// assert_eq!(scope.path, Some("src"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Scope<'a> {
    /// The workspace: nothing outside its root is read.
    pub workspace: &'a Workspace,
    /// File, directory or glob under the root; `None` for the root.
    pub path: Option<&'a str>,
    /// Extra gitignore-style glob, relative to `path`.
    pub glob: Option<&'a str>,
}

impl<'a> Scope<'a> {
    /// The whole workspace.
    pub fn root(workspace: &'a Workspace) -> Self {
        Self {
            workspace,
            path: None,
            glob: None,
        }
    }

    /// Restricts the scope to `path` (file, directory or glob).
    pub fn with_path(self, path: &'a str) -> Self {
        Self {
            path: Some(path),
            ..self
        }
    }

    /// Adds a glob filter.
    pub fn with_glob(self, glob: &'a str) -> Self {
        Self {
            glob: Some(glob),
            ..self
        }
    }
}

/// Limits of a walk.
///
/// ```
/// use xcsh_tools::engine::WalkOptions;
///
/// let opts = WalkOptions { max_file_bytes: 1 << 20, ..WalkOptions::default() };
/// assert_eq!(opts.threads, 0); // all cores
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WalkOptions {
    /// Files larger than this are skipped with a note (default 4 MiB).
    pub max_file_bytes: u64,
    /// More source files than this under the scope is an error (default 200,000).
    pub max_files: usize,
    /// Worker threads; 0 means one per core, at most 12 (as the CLI does).
    pub threads: usize,
}

impl Default for WalkOptions {
    fn default() -> Self {
        Self {
            max_file_bytes: 4 * 1024 * 1024,
            max_files: 200_000,
            threads: 0,
        }
    }
}

/// Files that were not searched, by reason, as root-relative paths sorted by path.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Skipped {
    /// Files with a NUL byte in their first 8 KiB.
    pub binary: Vec<String>,
    /// Files that are not valid UTF-8.
    pub non_utf8: Vec<String>,
    /// Files larger than [`WalkOptions::max_file_bytes`].
    pub too_large: Vec<String>,
    /// Leftovers of an interrupted ChangeSet apply (`.name.xcsh-tmp.…`).
    pub temp_artifacts: Vec<String>,
    /// Files that could not be read, with the reason (`path: error`).
    pub unreadable: Vec<String>,
}

impl Skipped {
    /// How many files were skipped in all.
    pub fn total(&self) -> usize {
        self.binary.len()
            + self.non_utf8.len()
            + self.too_large.len()
            + self.temp_artifacts.len()
            + self.unreadable.len()
    }

    /// Whether nothing was skipped.
    pub fn is_empty(&self) -> bool {
        self.total() == 0
    }

    fn sort(&mut self) {
        for list in [
            &mut self.binary,
            &mut self.non_utf8,
            &mut self.too_large,
            &mut self.temp_artifacts,
            &mut self.unreadable,
        ] {
            list.sort_by(|a, b| Path::new(a).cmp(Path::new(b)));
        }
    }
}

/// A file worth parsing: read, valid UTF-8, and containing the literals of at least one op.
pub(crate) struct Candidate<'a> {
    pub path: PathBuf,
    pub display: String,
    /// The path relative to the root, for deterministic ordering.
    pub sort_key: PathBuf,
    pub lang: Lang,
    pub text: Arc<str>,
    /// The parse tree (kept from an earlier call, or parsed for this one); `None` when
    /// tree-sitter gave up on the file.
    pub root: Option<Arc<Root>>,
    pub ops: &'a LangOps,
    /// Positions in `ops.ops` of the ops whose literals all occur in the file.
    pub may_match: Vec<usize>,
    /// For each of those, in the same order, where a match of a pattern op must be
    /// ([`Prefilter::anchors`](super::prefilter::Prefilter::anchors); `None` for a rule).
    pub anchors: Vec<Option<Anchors>>,
    /// Where `root` is a partial tree: the runs of a body's items among its ranges
    /// (`partial::Cut::inner`); else empty.
    pub inner: Vec<Range<usize>>,
    /// With [`walk`]'s `chunk_above`, for a file whose anchored items are more than that:
    /// those items in parts, for the visitor to parse and match one after the other (see
    /// [`Cut::chunks`]), and `root` is `None`. Else empty.
    pub chunks: Vec<Cut>,
}

/// What a walk saw besides the candidates it handed over.
pub(crate) struct WalkReport {
    pub skipped: Skipped,
    pub files_scanned: usize,
    pub files_parsed: usize,
    /// Files holding every literal of some op: those parsed, and those a shape ruled out.
    pub files_with_literals: usize,
    pub warnings: Vec<String>,
}

/// A resolved scope.
enum Target {
    File(PathBuf),
    Dir(PathBuf),
}

struct Filters {
    /// `path` given as a glob, relative to the root.
    path_glob: Option<GlobFilter>,
    /// `glob`, relative to the walked directory.
    glob: Option<GlobFilter>,
}

impl Filters {
    fn keep(&self, path: &Path) -> bool {
        let keep = |g: &Option<GlobFilter>| g.as_ref().is_none_or(|g| g.keep(path));
        keep(&self.path_glob) && keep(&self.glob)
    }
}

/// One gitignore-style glob used as a filter: `G` keeps the files it matches (directly or
/// through a matched directory), `!G` keeps the others.
struct GlobFilter {
    matcher: Gitignore,
    negated: bool,
}

impl GlobFilter {
    fn keep(&self, path: &Path) -> bool {
        let hit = path.starts_with(self.matcher.path())
            && self
                .matcher
                .matched_path_or_any_parents(path, false)
                .is_ignore();
        hit != self.negated
    }
}

fn has_glob_chars(s: &str) -> bool {
    s.contains(['*', '?', '[', '{'])
}

fn build_glob(field: &'static str, base: &Path, glob: &str) -> Result<GlobFilter, EngineError> {
    let invalid = |detail: String| EngineError::InvalidGlob {
        field,
        glob: glob.to_owned(),
        detail,
    };
    let (negated, body) = match glob.strip_prefix('!') {
        Some(body) => (true, body),
        None => (false, glob),
    };
    if body.starts_with('/') || Path::new(body).components().any(|c| c.as_os_str() == "..") {
        return Err(invalid(format!(
            "globs are matched against paths relative to `{}`, so they cannot start with `/` or contain `..`",
            base.display()
        )));
    }
    let mut builder = GitignoreBuilder::new(base);
    builder.allow_unclosed_class(false);
    builder
        .add_line(None, body)
        .map_err(|e| invalid(e.to_string()))?;
    let matcher = builder.build().map_err(|e| invalid(e.to_string()))?;
    Ok(GlobFilter { matcher, negated })
}

fn resolve(scope: &Scope<'_>) -> Result<(Target, Filters), EngineError> {
    let ws = scope.workspace;
    let mut path_glob = None;
    let target_path = match scope.path.map(str::trim).filter(|p| !p.is_empty()) {
        None => ws.root().to_path_buf(),
        Some(p) => match ws.resolve_existing(p) {
            Ok(abs) => abs,
            Err(e)
                if has_glob_chars(p) && !matches!(e, crate::workspace::PathError::Empty { .. }) =>
            {
                path_glob = Some(build_glob("path", ws.root(), p)?);
                ws.root().to_path_buf()
            }
            Err(e) => return Err(e.into()),
        },
    };
    let meta = std::fs::metadata(&target_path).map_err(|source| EngineError::Unreadable {
        path: ws.display(&target_path),
        source,
    })?;
    let (target, base) = if meta.is_dir() {
        (Target::Dir(target_path.clone()), target_path)
    } else {
        let parent = target_path
            .parent()
            .map_or_else(|| ws.root().to_path_buf(), Path::to_path_buf);
        (Target::File(target_path), parent)
    };
    let glob = match scope.glob.map(str::trim).filter(|g| !g.is_empty()) {
        Some(g) => Some(build_glob("glob", &base, g)?),
        None => None,
    };
    Ok((target, Filters { path_glob, glob }))
}

fn thread_count(opts: &WalkOptions) -> usize {
    if opts.threads > 0 {
        return opts.threads;
    }
    std::thread::available_parallelism().map_or(1, |n| n.get().min(12))
}

/// State shared by the walker's threads.
struct Shared<'a> {
    ws: &'a Workspace,
    ops: &'a CompiledOps,
    opts: &'a WalkOptions,
    cache: Option<&'a ParseCache>,
    chunk_above: Option<usize>,
    ctl: &'a Control<'a>,
    visit: &'a (dyn Fn(Candidate<'_>) -> bool + Sync),
    skipped: Mutex<Skipped>,
    scanned: AtomicUsize,
    parsed: AtomicUsize,
    with_literals: AtomicUsize,
    matched: AtomicUsize,
    too_many: AtomicBool,
    cancelled: AtomicBool,
    /// Languages of scanned files, to warn about ops not valid in one of them.
    langs_seen: [AtomicBool; Lang::COUNT],
}

enum SkipReason {
    Binary,
    NonUtf8,
    TooLarge,
    TempArtifact,
    Unreadable(String),
}

impl Shared<'_> {
    fn note(&self, reason: SkipReason, display: String) {
        let mut skipped = self.skipped.lock().unwrap_or_else(|p| p.into_inner());
        match reason {
            SkipReason::Binary => skipped.binary.push(display),
            SkipReason::NonUtf8 => skipped.non_utf8.push(display),
            SkipReason::TooLarge => skipped.too_large.push(display),
            SkipReason::TempArtifact => skipped.temp_artifacts.push(display),
            SkipReason::Unreadable(why) => skipped.unreadable.push(format!("{display}: {why}")),
        }
    }

    /// Handles one file of language `lang`; `false` stops the walk.
    fn file(&self, path: &Path, lang: Lang) -> bool {
        if self.ctl.is_cancelled() {
            self.cancelled.store(true, Ordering::Relaxed);
            return false;
        }
        let scanned = self.scanned.fetch_add(1, Ordering::Relaxed) + 1;
        if scanned > self.opts.max_files {
            self.too_many.store(true, Ordering::Relaxed);
            return false;
        }
        self.langs_seen[lang as usize].store(true, Ordering::Relaxed);
        let matched = self.search_file(path, lang);
        let files_matched = if matched {
            self.matched.fetch_add(1, Ordering::Relaxed) + 1
        } else {
            self.matched.load(Ordering::Relaxed)
        };
        if let Some(progress) = self.ctl.progress {
            progress(Progress {
                files_scanned: scanned,
                files_matched,
            });
        }
        true
    }

    fn search_file(&self, path: &Path, lang: Lang) -> bool {
        let Some(lang_ops) = self.ops.for_lang(lang) else {
            return false;
        };
        let display = || self.ws.display(path);
        // With a cache, the file's metadata says whether its kept copy can be used unread.
        // Without one the file is not looked at before it is opened: the open file's own
        // metadata tells its size (one path lookup per file, not two).
        let stat = self
            .cache
            .and_then(|_| std::fs::symlink_metadata(path).ok())
            .filter(std::fs::Metadata::is_file)
            .map(|meta| Stat::of(&meta));
        if stat.is_some_and(|stat| stat.len() > self.opts.max_file_bytes) {
            self.note(SkipReason::TooLarge, display());
            return false;
        }
        let kept = match (self.cache, &stat) {
            (Some(cache), Some(stat)) => cache.fresh(path, lang, stat),
            _ => None,
        };
        // `read`: when the file was read now, when (to keep it).
        let (text, mut root, read, words) = match kept {
            Some(hit) => {
                let words = match (hit.words, self.cache) {
                    (None, Some(cache)) if hit.wants_words => {
                        let words = Arc::new(Words::of(hit.text.as_bytes()));
                        cache.add_words(path, &hit.text, Arc::clone(&words));
                        Some(words)
                    }
                    (words, _) => words,
                };
                (hit.text, hit.root, None, words)
            }
            None => {
                let read_at = SystemTime::now();
                let Some(text) = self.read_text(path, &display) else {
                    return false;
                };
                match (self.cache, &stat) {
                    (Some(cache), Some(stat)) => {
                        let root = cache.same_content(path, lang, stat, &text, read_at);
                        (text, root, Some(read_at), None)
                    }
                    _ => (text, None, None, None),
                }
            }
        };
        let mut may_match: Vec<usize> = (0..lang_ops.ops.len())
            .filter(|&i| {
                lang_ops
                    .prefilter
                    .op_may_match(i, text.as_bytes(), words.as_deref())
            })
            .collect();
        if !may_match.is_empty() {
            self.with_literals.fetch_add(1, Ordering::Relaxed);
        }
        // `parsed`: whether this call parsed the file (whole, or around where a match can be).
        let keep = |root: Option<Arc<Root>>, parsed: bool| {
            if let (Some(cache), Some(stat), Some(at)) = (self.cache, stat, read) {
                cache.keep(path, lang, stat, at, text.clone(), root, parsed);
            }
        };
        // Found once: they choose what to parse here and where to look for matches later.
        // Where an op has a shape, its anchors are where the shape may match in the file's
        // tokens (lexed once, only then): none rules the op out.
        let prefilter = &lang_ops.prefilter;
        let tokens = may_match
            .iter()
            .any(|&i| prefilter.has_shape(i))
            .then(|| Tokens::lex(text.as_bytes()))
            .flatten();
        let mut anchors: Vec<Option<Anchors>> = Vec::with_capacity(may_match.len());
        may_match.retain(|&i| {
            // A rule's shapes only rule the file in or out.
            let (found, keep) = match lang_ops.ops[i].kind {
                OpKind::Pattern { .. } => {
                    let found = tokens
                        .as_ref()
                        .and_then(|tokens| prefilter.shape_anchors(i, tokens))
                        .or_else(|| prefilter.anchors(i, text.as_bytes()));
                    let keep = found.as_ref().is_none_or(|a| !a.is_empty());
                    (found, keep)
                }
                OpKind::Rule(_) => (
                    None,
                    tokens
                        .as_ref()
                        .is_none_or(|tokens| prefilter.shapes_may_match(i, tokens)),
                ),
            };
            if keep {
                anchors.push(found);
            }
            keep
        });
        if may_match.is_empty() {
            if root.is_none() {
                keep(None, false);
            }
            return false;
        }
        self.parsed.fetch_add(1, Ordering::Relaxed);
        let mut inner = Vec::new();
        let mut chunks = Vec::new();
        if root.is_none() {
            // Parse just the items a match can be in (see `partial`). A kept tree is whole,
            // for every later pattern: with a cache that would keep it, a file a call has
            // read before (its text is kept) is parsed whole when those items are half of it
            // or more (it costs at most twice the items'). A file read now is parsed as
            // without a cache, and only its text kept: a one-shot call (`xcsh session` over
            // one change) does not pay for trees no later call reuses, and the second call
            // that parses the file keeps its tree.
            let cut = partial::cut_for(&text, lang, lang_ops, &may_match, &anchors);
            match cut {
                // Many anchored items, and no tree to keep: the visitor parses them in parts,
                // at most 16 (each parse copies the file's text).
                Some(cut)
                    if self.cache.is_none()
                        && self.chunk_above.is_some_and(|bytes| cut.len() > bytes) =>
                {
                    let bytes = self.chunk_above.unwrap_or_default();
                    chunks = cut.parts(bytes / 2);
                }
                cut => {
                    let ranges = cut.filter(|cut| {
                        cut.worth_it(&text)
                            && self.cache.is_none_or(|cache| {
                                read.is_some()
                                    || cut.len() * 2 < text.len()
                                    || !cache.would_keep_tree(text.len())
                            })
                    });
                    let whole = ranges.is_none();
                    let parsed = match ranges {
                        Some(cut) => (partial::parse_ranges(&text, &cut), cut.inner),
                        None => (parse(&text, lang), Vec::new()),
                    };
                    root = parsed.0.map(Arc::new);
                    inner = parsed.1;
                    match (self.cache, &root, read) {
                        (Some(_), Some(parsed), Some(_)) => {
                            keep(whole.then(|| parsed.clone()), true);
                        }
                        (Some(cache), Some(parsed), None) if whole => {
                            cache.add_root(path, lang, &text, parsed.clone());
                        }
                        _ => {}
                    }
                }
            }
        }
        let sort_key = path
            .strip_prefix(self.ws.root())
            .map_or_else(|_| path.to_path_buf(), Path::to_path_buf);
        (self.visit)(Candidate {
            path: path.to_path_buf(),
            display: display(),
            sort_key,
            lang,
            text,
            root,
            ops: lang_ops,
            may_match,
            anchors,
            inner,
            chunks,
        })
    }

    /// Reads a file as text: `None` (noted) when it cannot be read, is empty (silently), is
    /// binary, grew past the limit or is not UTF-8.
    fn read_text(&self, path: &Path, display: &dyn Fn() -> String) -> Option<Arc<str>> {
        let bytes = match read_file_no_follow(path, self.opts.max_file_bytes) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => {
                self.note(SkipReason::TooLarge, display());
                return None;
            }
            Err(e) => {
                self.note(SkipReason::Unreadable(e.to_string()), display());
                return None;
            }
        };
        if bytes.is_empty() {
            return None;
        }
        // The same test as git and ripgrep: a NUL early on means binary.
        if memchr::memchr(0, &bytes[..bytes.len().min(8 * 1024)]).is_some() {
            self.note(SkipReason::Binary, display());
            return None;
        }
        // A file that grew while it was read.
        if bytes.len() as u64 > self.opts.max_file_bytes {
            self.note(SkipReason::TooLarge, display());
            return None;
        }
        match String::from_utf8(bytes) {
            Ok(text) => Some(Arc::from(text)),
            Err(_) => {
                self.note(SkipReason::NonUtf8, display());
                None
            }
        }
    }

    fn entry(&self, entry: Result<ignore::DirEntry, ignore::Error>, filters: &Filters) -> bool {
        let entry = match entry {
            Ok(entry) => entry,
            Err(err) => {
                // A directory that vanished or cannot be listed: note it and go on, like the CLI.
                let path = err_path(&err);
                let display = path.map_or_else(|| "?".to_owned(), |p| self.ws.display(p));
                self.note(SkipReason::Unreadable(err.to_string()), display);
                return true;
            }
        };
        // Symbolic links are neither followed nor read, as in the CLI.
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            return true;
        }
        let path = entry.path();
        if is_temp_artifact(entry.file_name()) || is_apply_state(self.ws, path) {
            self.note(SkipReason::TempArtifact, self.ws.display(path));
            return true;
        }
        let lang = match self.ops.lang() {
            Some(lang) => lang,
            None => match Lang::from_path(path) {
                Some(lang) => lang,
                None => return true,
            },
        };
        if !filters.keep(path) {
            return true;
        }
        self.file(path, lang)
    }
}

/// Reads a file the walk found or the scope named, refusing a symbolic link (or anything but
/// a regular file) in its place: between the walker's look and this read, the file may have
/// been swapped for a link leading out of the workspace root, whose target must not be read.
/// `Ok(None)` when the file opened is larger than `max` bytes: it is not read. (One that grows
/// past `max` while being read comes back with `max + 1` bytes.)
fn read_file_no_follow(path: &Path, max: u64) -> std::io::Result<Option<Vec<u8>>> {
    let (file, meta) = crate::workspace::open_no_follow(path)?;
    if meta.len() > max {
        return Ok(None);
    }
    crate::workspace::read_at_most(&file, meta.len(), Some(max)).map(Some)
}

fn err_path(err: &ignore::Error) -> Option<&Path> {
    match err {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            err_path(err)
        }
        ignore::Error::Loop { child, .. } => Some(child),
        _ => None,
    }
}

/// Walks `scope` and hands every candidate file to `visit`, in parallel; `visit` returns
/// whether the file matched (for progress).
///
/// With `chunk_above`, a Rust file with more than that many bytes of anchored items, whose
/// tree no cache keeps, is not parsed here: its [`Candidate::chunks`] are.
pub(crate) fn walk(
    scope: &Scope<'_>,
    ops: &CompiledOps,
    opts: &WalkOptions,
    cache: Option<&ParseCache>,
    chunk_above: Option<usize>,
    ctl: &Control<'_>,
    visit: &(dyn Fn(Candidate<'_>) -> bool + Sync),
) -> Result<WalkReport, EngineError> {
    let ws = scope.workspace;
    let (target, filters) = resolve(scope)?;
    // A cache that keeps nothing is no cache: no `stat` or hash per file for it.
    let cache = cache.filter(|c| c.budget() > 0);
    if let Some(cache) = cache {
        cache.begin_call();
    }
    let shared = Shared {
        ws,
        ops,
        opts,
        cache,
        chunk_above,
        ctl,
        visit,
        skipped: Mutex::new(Skipped::default()),
        scanned: AtomicUsize::new(0),
        parsed: AtomicUsize::new(0),
        with_literals: AtomicUsize::new(0),
        matched: AtomicUsize::new(0),
        too_many: AtomicBool::new(false),
        cancelled: AtomicBool::new(false),
        langs_seen: Default::default(),
    };

    let walked = match target {
        Target::File(path) => {
            // A file named explicitly is searched whatever the ignore rules say, and with an
            // explicit language whatever its extension (as the CLI does).
            if is_temp_artifact(path.file_name().unwrap_or_default()) || is_apply_state(ws, &path) {
                shared.note(SkipReason::TempArtifact, ws.display(&path));
            } else if filters.keep(&path) {
                let lang = match ops.lang().or_else(|| Lang::from_path(&path)) {
                    Some(lang) => lang,
                    None => {
                        return Err(EngineError::UnknownLanguage {
                            path: ws.display(&path),
                        });
                    }
                };
                shared.file(&path, lang);
            }
            ws.display(&path)
        }
        Target::Dir(dir) => {
            let mut builder = WalkBuilder::new(&dir);
            builder
                .hidden(true)
                .parents(true)
                .ignore(true)
                .git_global(true)
                .git_ignore(true)
                .git_exclude(true)
                .require_git(true)
                .follow_links(false)
                .threads(thread_count(opts));
            if let Some(lang) = ops.lang() {
                builder.types(lang.file_types());
            }
            builder.build_parallel().run(|| {
                let shared = &shared;
                let filters = &filters;
                Box::new(move |entry| {
                    if shared.entry(entry, filters) {
                        WalkState::Continue
                    } else {
                        WalkState::Quit
                    }
                })
            });
            ws.display(&dir)
        }
    };

    if shared.cancelled.load(Ordering::Relaxed) || ctl.is_cancelled() {
        return Err(EngineError::Cancelled);
    }
    if shared.too_many.load(Ordering::Relaxed) {
        return Err(EngineError::TooManyFiles {
            max: opts.max_files,
            path: walked,
        });
    }
    let mut skipped = shared
        .skipped
        .into_inner()
        .unwrap_or_else(|p| p.into_inner());
    skipped.sort();
    let mut warnings = Vec::new();
    for &lang in Lang::ALL {
        if !shared.langs_seen[lang as usize].load(Ordering::Relaxed) {
            continue;
        }
        let ops_missing: Vec<String> = ops
            .inapplicable_in(lang)
            .map(|i| ops.pat_field(i).to_owned())
            .collect();
        if !ops_missing.is_empty() {
            warnings.push(format!(
                "{} is not valid {lang} code, so {lang} files were not searched for it (pass lang to see the parse error)",
                ops_missing.join(", ")
            ));
        }
    }
    Ok(WalkReport {
        skipped,
        files_scanned: shared.scanned.load(Ordering::Relaxed).min(opts.max_files),
        files_parsed: shared.parsed.load(Ordering::Relaxed),
        files_with_literals: shared.with_literals.load(Ordering::Relaxed),
        warnings,
    })
}
