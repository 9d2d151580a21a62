//! Built-in tools for xcsh: `ast_edit`, `ast_grep`, `apply_patch`, `edit`, `write_file`,
//! `undo`, and the stale-safe [`ChangeSet`].
//!
//! # Layers
//!
//! Each module names only modules below it (the facade's `tests/layers.rs` fails on a circle):
//!
//! ```text
//! ast_edit, ast_grep,        the tools, written with the framework's own macros
//!   apply_patch, edit,
//!   write_file, undo
//! staged                     one file's change previewed and pending (edit, write_file)
//! config, run                their settings; running the engine from an async call
//! syntax                     the syntax guard: does a change set's result still parse
//! engine, output, patch      parse, match, rewrite, preview; the tools' structured output;
//!                            Codex's patch format planned into a change set
//! changeset                  stale-safe, crash-atomic multi-file edits, recovery, undo
//! builtin                    the suite (path confinement, `workspace`, is xcsh-core's)
//! ```

mod apply_patch;
mod ast_edit;
mod ast_grep;
mod builtin;
pub mod changeset;
mod config;
mod edit;
pub mod engine;
mod output;
pub mod patch;
mod run;
mod staged;
pub mod syntax;
mod undo;
mod write_file;
/// Path confinement: what a workspace lets a tool touch (in `xcsh-core`, for tools built with
/// the macros alone too).
pub use xcsh_core::workspace;

pub use apply_patch::{APPLY_PATCH, ApplyPatch};
pub use ast_edit::{AST_EDIT, AstEdit, AstEditOp, preview_notes, render_preview, summary};
pub use ast_grep::{AST_GREP, AstGrep, render_matches, render_near_misses};
pub use builtin::builtin_suite;
pub use config::AstToolsConfig;
pub use edit::{EDIT, Edit};
pub use output::{
    CaptureSummary, ChangeOutput, ChangeStatus, ChangeTotals, FileChange, MAX_OUTPUT_BYTES,
    MatchSummary, SearchOutput, SearchTotals, preview_resource,
};
pub use undo::{UNDO, UndoLast};
pub use write_file::{WRITE_FILE, WriteFile};

pub use changeset::{ApplyError, ApplyReport, ChangeSet, ChangeSetError, Fingerprint};
pub use workspace::{PathError, Workspace, WorkspaceError, is_temp_artifact};
