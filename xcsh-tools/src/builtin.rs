//! The built-in suite.

use xcsh_core::ToolSuite;

use crate::{AstEdit, AstGrep};

/// `ast_grep` and `ast_edit` with default limits. `resolve` comes with the session, since
/// `ast_edit` pushes pending actions.
///
/// ```
/// let session = xcsh_core::Session::builder().suite(xcsh_tools::builtin_suite()).build().unwrap();
/// assert_eq!(session.tool_names(), ["ast_grep", "ast_edit", "resolve"]);
/// ```
pub fn builtin_suite() -> ToolSuite {
    ToolSuite::new()
        .with_tool(AstGrep::default())
        .with_tool(AstEdit::default())
}
