//! Built-in tools for xcsh: `ast_edit`, `ast_grep`, and the stale-safe [`ChangeSet`].

pub mod changeset;
pub mod engine;
pub mod workspace;
