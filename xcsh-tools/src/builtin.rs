//! The built-in suite.

use xcsh_core::ToolSuite;

use crate::{ApplyPatch, AstEdit, AstGrep, Edit, UndoLast, WriteFile};

/// `ast_grep`, `ast_edit`, `apply_patch`, `edit`, `write_file` and `undo`. `resolve` comes
/// with the session, since all but `ast_grep` push pending actions. Their limits are the session's
/// [`AstToolsConfig`](crate::AstToolsConfig) (the default when it registers none).
///
/// ```
/// let session = xcsh_core::Session::builder().suite(xcsh_tools::builtin_suite()).build().unwrap();
/// assert_eq!(
///     session.tool_names(),
///     ["ast_grep", "ast_edit", "apply_patch", "edit", "write_file", "undo", "resolve"]
/// );
/// ```
pub fn builtin_suite() -> ToolSuite {
    ToolSuite::new()
        .with::<AstGrep>()
        .with::<AstEdit>()
        .with::<ApplyPatch>()
        .with::<Edit>()
        .with::<WriteFile>()
        .with::<UndoLast>()
}
