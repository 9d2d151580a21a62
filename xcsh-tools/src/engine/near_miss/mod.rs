//! Near misses: when a pattern matches nothing, the code closest to it, what differs, and a
//! pattern that does match that code.
//!
//! A model that writes `fn $F($$$A) { $$$B }` for functions that return something, `foo($A)`
//! for calls with two arguments, `print $A` (Python 2) or `function f() {}` for an arrow
//! function gets nothing back, and learns nothing from it. This pass finds, in one more walk
//! bounded in time, the nodes whose token sequence is a few edits away from the pattern's:
//!
//! * The pattern's leaves (tokens and metavariables) are aligned with a candidate node's
//!   leaves by a small dynamic program: equal tokens cost nothing; a different identifier or
//!   literal of the same kind (or a name where the code has an expression) costs 2, as it
//!   changes what is searched for; code the pattern lacks costs 1 per whole node skipped
//!   (`-> u8` is one node); a pattern token the code lacks costs 1; `$X` takes one node for
//!   free or several for 1 (it becomes `$$$X`); `$$$X` takes any run for free; and a node of
//!   another kind than the pattern's costs 1.
//! * Candidates are the few nearest ancestors of each occurrence of the pattern's literal
//!   text: first in the files holding all of it (those the search parsed, whose trees a
//!   cache still has), then, while time is left, in files holding any of it.
//! * From the alignment, the node's own text with the metavariables put back where they
//!   matched is proposed as the pattern that would match it, and it is only shown after it
//!   was compiled and seen to match that node.
//!
//! The walk stops at its deadline (the caller passes the time the plain search took), so the
//! answer costs at most about twice the search that found nothing.

mod align;
mod suggest;

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::pattern::OpKind;
use super::walk::{Candidate, WalkOptions, walk};
use super::{CancelFlag, CompiledOps, Control, EngineError, Lang, ParseCache, Scope};
use align::{Shape, align_node, candidates};

/// How many near misses an answer shows at most.
pub const MAX_NEAR_MISSES: usize = 3;

/// Where a near-miss pass looks, and with what: the failed search's own scope, language,
/// walk limits and cache.
#[derive(Clone, Copy, Debug)]
pub struct Within<'a> {
    /// The files searched.
    pub scope: &'a Scope<'a>,
    /// The language of the patterns; `None` infers it per file.
    pub lang: Option<Lang>,
    /// Limits of the walk.
    pub walk: &'a WalkOptions,
    /// Files kept from earlier calls (the search that found nothing has just read them).
    pub cache: Option<&'a ParseCache>,
}

/// Code close to a pattern that matched nothing.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct NearMiss {
    /// Index of the pattern (or op) it is close to.
    pub pattern: usize,
    /// Root-relative path with `/` separators.
    pub file: String,
    /// 1-based line of the code's start.
    pub line: usize,
    /// 1-based column (in characters) of its start.
    pub column: usize,
    /// The code's first line, shortened.
    pub text: String,
    /// What differs from the pattern, e.g. "it has `-> u8` where the pattern has nothing".
    pub differs: String,
    /// A pattern that matches this code (checked).
    pub suggestion: String,
    /// How far it is from the pattern (edits); lower is closer.
    pub distance: u32,
}

/// Finds up to [`MAX_NEAR_MISSES`] near misses of `patterns` (those given by `unmatched`, as
/// indices) under `scope`, stopping at `deadline`. Invalid patterns and patterns without
/// literal text (`$A + $B`) have none. Cancelled through `ctl`, it returns what it found.
///
/// ```
/// use std::time::{Duration, Instant};
/// use xcsh_tools::engine::{self, Control, Lang, Scope, WalkOptions, Within};
/// use xcsh_tools::workspace::Workspace;
///
/// let dir = tempfile::tempdir()?;
/// std::fs::write(dir.path().join("lib.rs"), "fn size(x: u8) -> usize { x as usize }\n")?;
/// let ws = Workspace::new(dir.path())?;
/// let pats = ["fn $F($$$A) { $$$B }".to_owned()];
/// let deadline = Instant::now() + Duration::from_secs(5);
/// let scope = Scope::root(&ws);
/// let walk = WalkOptions::default();
/// let within = Within { scope: &scope, lang: Some(Lang::Rust), walk: &walk, cache: None };
/// let misses = engine::near_misses(&within, &pats, &[0], deadline, &Control::default());
/// assert_eq!(misses[0].suggestion, "fn $F($$$A) -> usize { $$$B }");
/// assert!(misses[0].differs.contains("`-> usize`"), "{}", misses[0].differs);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn near_misses(
    within: &Within<'_>,
    patterns: &[String],
    unmatched: &[usize],
    deadline: Instant,
    ctl: &Control<'_>,
) -> Vec<NearMiss> {
    near_misses_in(within, patterns, unmatched, deadline, ctl, true)
}

/// [`near_misses`] after a search of exactly `patterns` over `within` that found no file
/// holding every literal of a pattern (its totals' `files_with_literals` is 0, so it parsed
/// none either): then the
/// pass looks only at the files holding any one of them, in one walk instead of two. This
/// is what the built-in tools and `xcsh ast-edit` do. Only for that case: after a search
/// that found such files, or over another scope, it can miss code that [`near_misses`]
/// finds.
///
/// ```
/// use std::time::{Duration, Instant};
/// use xcsh_tools::engine::{self, Control, Lang, Scope, SearchRequest, Within};
/// use xcsh_tools::workspace::Workspace;
///
/// let dir = tempfile::tempdir()?;
/// std::fs::write(dir.path().join("lib.rs"), "fn f() -> Arc<u8> { Arc::new(1) }\n")?;
/// let ws = Workspace::new(dir.path())?;
/// let scope = Scope::root(&ws);
/// let request = SearchRequest { patterns: vec!["Rc::new($A)".into()], lang: Some(Lang::Rust), ..Default::default() };
/// let found = engine::search(&scope, &request, &Control::default())?;
/// assert_eq!((found.matches.len(), found.totals.files_with_literals), (0, 0));
///
/// let within = Within { scope: &scope, lang: request.lang, walk: &request.walk, cache: None };
/// let deadline = Instant::now() + Duration::from_secs(5);
/// let misses = engine::near_misses_after_parsing_none(
///     &within, &request.patterns, &[0], deadline, &Control::default(),
/// );
/// assert_eq!(misses[0].suggestion, "Arc::new($A)");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn near_misses_after_parsing_none(
    within: &Within<'_>,
    patterns: &[String],
    unmatched: &[usize],
    deadline: Instant,
    ctl: &Control<'_>,
) -> Vec<NearMiss> {
    near_misses_in(within, patterns, unmatched, deadline, ctl, false)
}

/// [`near_misses`], looking first in the files holding every literal of a pattern only when
/// `strict`: a search over the same patterns that found no such file has shown there are
/// none.
fn near_misses_in(
    within: &Within<'_>,
    patterns: &[String],
    unmatched: &[usize],
    deadline: Instant,
    ctl: &Control<'_>,
    strict: bool,
) -> Vec<NearMiss> {
    let Within {
        scope,
        lang,
        walk: walk_opts,
        cache,
    } = *within;
    // First the files holding every literal of a pattern (those the search itself parsed,
    // so a cache has their trees), then, while time is left and fewer than enough were found,
    // the files holding any one of them (unless those are the same files).
    // The first phase walks without shapes: a shape rules out exactly the near misses (the
    // function with a `-> usize` the pattern lacks).
    let (Ok(all_of), Ok(any_of)) = (
        CompiledOps::for_search(patterns, lang).map(CompiledOps::without_shapes),
        CompiledOps::for_near_misses(patterns, lang),
    ) else {
        return Vec::new();
    };
    let phases = [(true, strict.then_some(&all_of)), (false, any_of.as_ref())];
    if phases.iter().all(|(_, ops)| ops.is_none()) {
        return Vec::new();
    }
    let stop = CancelFlag::default();
    let own = Control {
        cancel: Some(&stop),
        progress: None,
    };
    let found: Mutex<Vec<NearMiss>> = Mutex::new(Vec::new());
    let seen: Mutex<HashSet<PathBuf>> = Mutex::new(HashSet::new());
    let lock = |m: &Mutex<Vec<NearMiss>>| m.lock().map(|v| v.len()).unwrap_or(0);
    std::thread::scope(|threads| {
        // The walk parses a file before `visit` can look at the clock: a timer stops it taking
        // new files at the deadline, so the pass overruns it by the parses in flight only.
        let (finished, done) = mpsc::channel::<()>();
        let timer_stop = &stop;
        threads.spawn(move || {
            let left = deadline.saturating_duration_since(Instant::now());
            if let Err(RecvTimeoutError::Timeout) = done.recv_timeout(left) {
                timer_stop.cancel();
            }
        });
        for (first_phase, ops) in phases {
            let Some(ops) = ops else {
                continue;
            };
            if !first_phase && lock(&found) >= MAX_NEAR_MISSES {
                break;
            }
            let visit = |c: Candidate<'_>| {
                if Instant::now() >= deadline || ctl.is_cancelled() {
                    stop.cancel();
                    return false;
                }
                let mut seen = seen.lock().unwrap_or_else(|p| p.into_inner());
                if !seen.insert(c.path.clone()) && !first_phase {
                    return false;
                }
                drop(seen);
                let mut in_file = file_near_misses(&c, unmatched, deadline);
                if in_file.is_empty() {
                    return false;
                }
                in_file.sort_by_key(|m| m.distance);
                in_file.truncate(MAX_NEAR_MISSES);
                found
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .extend(in_file);
                true
            };
            // Stopped at the deadline, the walk reports `Cancelled`: what was found stands.
            let _: Result<_, EngineError> = walk(scope, ops, walk_opts, cache, None, &own, &visit);
            if stop.is_cancelled() || ctl.is_cancelled() {
                break;
            }
        }
        drop(finished);
    });
    if ctl.is_cancelled() {
        return Vec::new();
    }
    let mut found = found.into_inner().unwrap_or_else(|p| p.into_inner());
    found.sort_by(|a, b| {
        (a.distance, &a.file, a.line, a.column).cmp(&(b.distance, &b.file, b.line, b.column))
    });
    found.truncate(MAX_NEAR_MISSES);
    found
}

/// The near misses in one file, nested candidates reduced to the closest.
fn file_near_misses(c: &Candidate<'_>, unmatched: &[usize], deadline: Instant) -> Vec<NearMiss> {
    let Some(root) = c.root.clone() else {
        return Vec::new();
    };
    let mut out: Vec<(std::ops::Range<usize>, NearMiss)> = Vec::new();
    for &i in &c.may_match {
        let op = &c.ops.ops[i];
        if !unmatched.contains(&op.index) {
            continue;
        }
        let OpKind::Pattern { pattern, .. } = &op.kind else {
            continue;
        };
        let Some(shape) = Shape::of(pattern, c.lang) else {
            continue;
        };
        let mut seen = HashSet::new();
        for (tried, node) in candidates(&root, &c.text, &shape).into_iter().enumerate() {
            // A large file can hold hundreds of candidates: the deadline holds within it too.
            if tried % 16 == 15 && Instant::now() >= deadline {
                break;
            }
            if !seen.insert(node.id()) {
                continue;
            }
            if let Some((miss, range)) = align_node(&root, &c.text, node, &shape, c.lang) {
                let (line, column) =
                    super::rewrite::LineCounter::new(&c.text).position(range.start);
                let nested = out.iter().position(|(r, _)| {
                    r.start <= range.start && range.end <= r.end
                        || range.start <= r.start && r.end <= range.end
                });
                let entry = NearMiss {
                    pattern: op.index,
                    file: c.display.clone(),
                    line,
                    column,
                    ..miss
                };
                match nested {
                    Some(k) if out[k].1.distance <= entry.distance => {}
                    Some(k) => out[k] = (range, entry),
                    None => out.push((range, entry)),
                }
            }
        }
    }
    out.into_iter().map(|(_, m)| m).collect()
}

/// Runs `search` and, when `found_nothing` says it found nothing, the near-miss pass for
/// every one of `patterns` over the same scope, given three quarters of the time the search
/// took (at least `NEAR_MISS_FLOOR`): an answer that found nothing costs at most about
/// twice the search. With the search's cache, the pass reuses the trees it just parsed. This
/// is what `ast_grep` and `ast_edit` do; as their search also says whether it parsed any
/// file, they skip the pass's look at the files holding every literal when there are none.
///
/// ```
/// use xcsh_tools::engine::{self, Control, Lang, Scope, SearchRequest, Within, with_near_misses};
/// use xcsh_tools::workspace::Workspace;
///
/// let dir = tempfile::tempdir()?;
/// std::fs::write(dir.path().join("a.py"), "print(\"done\", n)\n")?;
/// let ws = Workspace::new(dir.path())?;
/// let scope = Scope::root(&ws);
/// let request = SearchRequest { patterns: vec!["print $X".into()], lang: Some(Lang::Python), ..Default::default() };
/// let within = Within { scope: &scope, lang: request.lang, walk: &request.walk, cache: None };
/// let (found, misses) = with_near_misses(
///     &within, &request.patterns, &Control::default(),
///     || engine::search(&scope, &request, &Control::default()),
///     |found| found.matches.is_empty(),
/// )?;
/// assert!(found.matches.is_empty());
/// assert_eq!(misses[0].suggestion, "print($$$X)");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn with_near_misses<T>(
    within: &Within<'_>,
    patterns: &[String],
    control: &Control<'_>,
    search: impl FnOnce() -> Result<T, EngineError>,
    found_nothing: impl Fn(&T) -> bool,
) -> Result<(T, Vec<NearMiss>), EngineError> {
    search_then_near_misses(within, patterns, control, search, found_nothing, |_| false)
}

/// [`with_near_misses`] for a search of exactly `patterns` over `within` (the built-in
/// tools' own), which says whether it found no file holding every literal of a pattern:
/// then the pass does not walk again to find none.
pub(crate) fn search_then_near_misses<T>(
    within: &Within<'_>,
    patterns: &[String],
    control: &Control<'_>,
    search: impl FnOnce() -> Result<T, EngineError>,
    found_nothing: impl Fn(&T) -> bool,
    none_with_literals: impl Fn(&T) -> bool,
) -> Result<(T, Vec<NearMiss>), EngineError> {
    let started = Instant::now();
    let result = search()?;
    if patterns.is_empty() || !found_nothing(&result) {
        return Ok((result, Vec::new()));
    }
    let deadline = near_miss_deadline(started.elapsed());
    let unmatched: Vec<usize> = (0..patterns.len()).collect();
    let strict = !none_with_literals(&result);
    let misses = near_misses_in(within, patterns, &unmatched, deadline, control, strict);
    Ok((result, misses))
}

/// When a near-miss pass that starts now should stop, after a search that took
/// `search_took`: three quarters of that (the files in hand when it runs out still finish),
/// at least `NEAR_MISS_FLOOR`, so the answer costs at most about twice the search.
pub fn near_miss_deadline(search_took: Duration) -> Instant {
    Instant::now() + (search_took * 3 / 4).max(NEAR_MISS_FLOOR)
}

/// The least time the near-miss pass gets, however fast the search was.
pub const NEAR_MISS_FLOOR: Duration = Duration::from_millis(50);
