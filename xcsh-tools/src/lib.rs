//! Built-in tools for xcsh: `ast_edit`, `ast_grep`, and the stale-safe [`ChangeSet`].

pub mod changeset;
pub mod engine;
pub mod workspace;

pub use changeset::{ApplyError, ApplyReport, ChangeSet, ChangeSetError, Fingerprint};
pub use workspace::{PathError, Workspace, WorkspaceError, is_temp_artifact};
