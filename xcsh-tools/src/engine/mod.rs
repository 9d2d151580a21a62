//! The structural search/rewrite engine on ast-grep: pure, no tool glue.
//!
//! The `ast_edit` and `ast_grep` tools are thin layers over two calls:
//!
//! * [`plan_edits`] walks the scope, rewrites every match of every [`Op`] and returns an
//!   [`EditPlan`]: per changed file the [`Fingerprint`] of what was read and the list of
//!   [`Replacement`]s (not the file's contents) — what a `ChangeSet` needs to apply it
//!   ([`FileEdit::splices`]), and what [`preview`] needs to show it, reading each file again.
//! * [`search`] returns the matches of one or more patterns with their metavariable captures.
//!
//! Both read files only (nothing here writes), print nothing and keep no global state. Work is
//! spread over all cores by the `ignore` crate's parallel walker, configured like the ast-grep
//! CLI's (same .gitignore, .ignore and hidden-file rules), and a file is parsed only when its
//! bytes contain the literal text a match needs (see `prefilter`) and, in Rust, when its
//! tokens can take the pattern's shape (`prefilter::shape`: `fn $F() { … }` needs `(` and
//! `)` side by side). A Rust file (of 4 KiB or more) whose tree no [`ParseCache`] will keep is
//! parsed only in the items where the shape (or that text) can be (see `partial`): top-level
//! items, or for most patterns the items inside an `impl`, `trait`, `mod` or `extern` body:
//! the matches are the same, and the rest of the file costs a lexer's pass.
//!
//! ```
//! use xcsh_tools::engine::{self, Control, EditRequest, Lang, Op, Scope};
//! use xcsh_tools::workspace::Workspace;
//!
//! let dir = tempfile::tempdir()?;
//! std::fs::write(dir.path().join("main.rs"), "fn main() { let v = f().unwrap(); }\n")?;
//! let ws = Workspace::new(dir.path())?;
//!
//! let request = EditRequest {
//!     ops: vec![Op::new("$X.unwrap()", "$X?")],
//!     lang: Some(Lang::Rust),
//!     ..EditRequest::default()
//! };
//! let plan = engine::plan_edits(&Scope::root(&ws), &request, &Control::default())?;
//! assert_eq!(plan.totals.replacements, 1);
//! let file = &plan.files[0];
//! assert_eq!(file.new_contents(&file.read_original()?)?, "fn main() { let v = f()?; }\n");
//! assert!(engine::preview::unified_diff(&plan.files[0]).contains("+fn main() { let v = f()?; }"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod cache;
mod error;
mod lang;
mod matching;
mod near_miss;
mod partial;
mod pattern;
mod pieces;
mod prefilter;
pub mod preview;
mod result_syntax;
mod rewrite;
mod rule;
mod search;
mod walk;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

pub use crate::changeset::Fingerprint;
pub use cache::{CacheStats, DEFAULT_CACHE_BYTES, ParseCache};
// Calibration the tests and benchmarks check, not API.
#[cfg(feature = "testing")]
pub use cache::{RACY_WINDOW, TREE_BYTES_PER_NODE};
pub use error::EngineError;
pub use lang::Lang;
pub(crate) use matching::{ErrorReport, REPORTED_ERRORS};
#[cfg(feature = "testing")]
pub use near_miss::NEAR_MISS_FLOOR;
pub(crate) use near_miss::search_then_near_misses;
pub(crate) use partial::{ChangedItemsErrors, SMALL_FILE, changed_items_errors};
pub(crate) use pattern::shorten;
#[cfg(test)]
pub(crate) use result_syntax::{ORDER, Order};
pub(crate) use result_syntax::{ResultSyntax, splices_digest};
// The binary's one-walk answer after a search that parsed nothing: plumbing, not API.
pub use matching::{MAX_ERROR_LEAVES, SyntaxErrorNode, syntax_errors};
#[doc(hidden)]
pub use near_miss::near_misses_after_parsing_none;
pub use near_miss::{
    MAX_NEAR_MISSES, NearMiss, Within, near_miss_deadline, near_misses, with_near_misses,
};
pub use pattern::{CompiledOps, Op, pattern_shape};
pub use rewrite::{
    EditPlan, EditRequest, EditTotals, FileEdit, LimitReport, Replacement, plan_edits,
};
pub use search::{Capture, Match, SearchRequest, SearchResult, SearchTotals, search};
pub use walk::{Scope, Skipped, WalkOptions};

/// A cooperative cancellation flag: cheap to clone, checked before each file.
///
/// ```
/// use xcsh_tools::engine::CancelFlag;
///
/// let flag = CancelFlag::default();
/// let for_other_task = flag.clone();
/// for_other_task.cancel();
/// assert!(flag.is_cancelled());
/// ```
#[derive(Clone, Debug, Default)]
pub struct CancelFlag(Arc<AtomicBool>);

impl CancelFlag {
    /// Asks every run watching this flag to stop at its next file.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether [`cancel`](Self::cancel) was called.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Progress of a run, reported after each scanned file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Files of a supported language looked at so far.
    pub files_scanned: usize,
    /// Of those, files with at least one match.
    pub files_matched: usize,
}

/// How a caller watches and steers a run: cancellation and progress.
///
/// The progress callback is called from the walker's worker threads, once per scanned file;
/// keep it cheap (store the numbers, throttle anything slower).
///
/// ```
/// use std::sync::atomic::{AtomicUsize, Ordering};
/// use xcsh_tools::engine::{CancelFlag, Control, Progress};
///
/// let seen = AtomicUsize::new(0);
/// let report = |p: Progress| seen.store(p.files_scanned, Ordering::Relaxed);
/// let cancel = CancelFlag::default();
/// let control = Control { cancel: Some(&cancel), progress: Some(&report) };
/// # let _ = control;
/// ```
#[derive(Clone, Copy, Default)]
pub struct Control<'a> {
    /// Checked before each file; when set, the run stops with [`EngineError::Cancelled`].
    pub cancel: Option<&'a CancelFlag>,
    /// Called after each scanned file.
    pub progress: Option<&'a (dyn Fn(Progress) + Sync)>,
}

impl Control<'_> {
    pub(crate) fn is_cancelled(&self) -> bool {
        self.cancel.is_some_and(CancelFlag::is_cancelled)
    }
}
