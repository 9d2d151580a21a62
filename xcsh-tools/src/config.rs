//! [`AstToolsConfig`]: the limits `ast_grep` and `ast_edit` work within, shared through the
//! session.

use crate::changeset::UndoLimits;
use crate::engine::WalkOptions;
use crate::syntax::SyntaxGuard;

/// How many characters of diff text an `ast_edit` preview shows the model before
/// summarising the rest (the full per-replacement list is always in the result's details).
const DEFAULT_MAX_PREVIEW_CHARS: usize = 60_000;

/// The limits of the built-in tools. The tools are parameter types (one value per call), so
/// their configuration lives on the session: register it with
/// [`SessionBuilder::extension`](xcsh_core::SessionBuilder::extension); a session without
/// one uses [`AstToolsConfig::default`].
///
/// ```
/// use xcsh_core::Session;
/// use xcsh_tools::engine::WalkOptions;
/// use xcsh_tools::{AstToolsConfig, builtin_suite};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("a.py"), "print(1)\n").unwrap();
/// std::fs::write(dir.path().join("b.py"), "print(2)\n").unwrap();
/// let walk = WalkOptions { max_files: 1, ..WalkOptions::default() };
/// let session = Session::builder()
///     .suite(builtin_suite())
///     .extension(AstToolsConfig::default().with_walk_options(walk).with_max_preview_chars(10_000))
///     .workspace_root(dir.path())
///     .build()
///     .unwrap();
///
/// // Two files under the root, one allowed: the walk refuses.
/// let found = session.call("ast_grep", serde_json::json!({"pat": "print($X)"})).await;
/// assert!(found.is_error());
/// assert!(found.text_content().contains("more than 1 files to scan"), "{}", found.text_content());
/// // Without the extension the defaults apply.
/// let default = Session::builder().suite(builtin_suite()).workspace_root(dir.path()).build().unwrap();
/// let found = default.call("ast_grep", serde_json::json!({"pat": "print($X)"})).await;
/// assert!(found.text_content().starts_with("2 matches in 2 files"), "{}", found.text_content());
/// # });
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AstToolsConfig {
    walk: WalkOptions,
    max_preview_chars: usize,
    undo: UndoLimits,
    syntax_guard: SyntaxGuard,
}

impl Default for AstToolsConfig {
    fn default() -> Self {
        AstToolsConfig {
            walk: WalkOptions::default(),
            max_preview_chars: DEFAULT_MAX_PREVIEW_CHARS,
            undo: UndoLimits::default(),
            syntax_guard: SyntaxGuard::default(),
        }
    }
}

impl AstToolsConfig {
    /// Sets the walk's limits (file size, file count, threads) for both tools.
    #[must_use]
    pub fn with_walk_options(mut self, walk: WalkOptions) -> Self {
        self.walk = walk;
        self
    }

    /// Sets how much diff text an `ast_edit` preview shows before summarising (default
    /// 60,000 characters).
    #[must_use]
    pub fn with_max_preview_chars(mut self, chars: usize) -> Self {
        self.max_preview_chars = chars;
        self
    }

    /// Sets how many applies through `resolve` keep their inverse for the `undo` tool
    /// (default [`UndoLimits::default`]: the last 10, within 64 MiB of originals).
    #[must_use]
    pub fn with_undo_limits(mut self, limits: UndoLimits) -> Self {
        self.undo = limits;
        self
    }

    /// Sets what the file-editing tools (`ast_edit`, `edit`, `write_file`) do with a change
    /// that introduces a syntax error into a file in a language xcsh parses (default
    /// [`SyntaxGuard::Warn`]: the preview names it; [`SyntaxGuard::Refuse`]: the preview says
    /// apply will refuse, and `resolve` apply writes nothing). See [`crate::syntax`].
    ///
    /// ```
    /// use xcsh_core::Session;
    /// use xcsh_tools::syntax::SyntaxGuard;
    /// use xcsh_tools::{AstToolsConfig, builtin_suite};
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// let dir = tempfile::tempdir().unwrap();
    /// std::fs::write(dir.path().join("a.py"), "def f():\n    return 1\n").unwrap();
    /// let session = Session::builder()
    ///     .suite(builtin_suite())
    ///     .extension(AstToolsConfig::default().with_syntax_guard(SyntaxGuard::Refuse))
    ///     .workspace_root(dir.path())
    ///     .build()
    ///     .unwrap();
    /// let preview = session
    ///     .call("edit", serde_json::json!({"path": "a.py", "old": "def f():", "new": "def f(:"}))
    ///     .await;
    /// assert!(preview.text_content().contains("introduces a syntax error at a.py:1:"), "{}", preview.text_content());
    /// let applied = session.call("resolve", serde_json::json!({"action": "apply", "reason": "try"})).await;
    /// assert!(applied.is_error());
    /// assert!(applied.text_content().contains("the syntax guard refuses this change"));
    /// assert_eq!(std::fs::read_to_string(dir.path().join("a.py")).unwrap(), "def f():\n    return 1\n");
    /// # });
    /// ```
    #[must_use]
    pub fn with_syntax_guard(mut self, guard: SyntaxGuard) -> Self {
        self.syntax_guard = guard;
        self
    }

    /// What the file-editing tools do with a change that introduces a syntax error.
    pub fn syntax_guard(&self) -> SyntaxGuard {
        self.syntax_guard
    }

    /// How many applies keep their inverse.
    pub fn undo_limits(&self) -> UndoLimits {
        self.undo
    }

    /// The walk's limits.
    pub fn walk_options(&self) -> WalkOptions {
        self.walk
    }

    /// How much diff text an `ast_edit` preview shows before summarising.
    pub fn max_preview_chars(&self) -> usize {
        self.max_preview_chars
    }

    /// The session's configuration, or the default when it registered none.
    pub(crate) fn of(ctx: &xcsh_core::ToolContext) -> Self {
        ctx.extension::<AstToolsConfig>()
            .copied()
            .unwrap_or_default()
    }
}
