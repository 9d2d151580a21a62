//! xcsh: the framework for the tools LLM coding agents call.
//!
//! Annotate a struct with [`custom_tool`](macro@custom_tool) and get its JSON parameter schema, argument
//! decoding and registration. Destructive tools compute a preview and push a
//! [`PendingAction`] (write one with [`pending`]); the hidden `resolve` tool applies or
//! discards it, and while anything is pending [`Session::tool_choice`] forces `resolve` in
//! each provider's own format. [`tools`] holds the built-in `ast_edit`/`ast_grep` and the
//! stale-safe [`tools::ChangeSet`].
//!
//! This crate re-exports `xcsh-core`, `xcsh-macros` and `xcsh-tools`; depend on it alone.

pub use xcsh_core::*;
pub use xcsh_macros::*;

/// Built-in tools and the stale-safe, all-or-nothing [`ChangeSet`](tools::ChangeSet).
pub mod tools {
    pub use xcsh_tools::*;
}

pub mod mcp;

/// serde_json, for building arguments and reading results without a direct dependency.
pub use serde_json;

// Keeps the README's example compiling: it runs as a doc test.
#[doc = include_str!("../README.md")]
#[cfg(doctest)]
pub struct ReadmeDoctests;

/// Paths the macros' generated code uses, so a user's crate needs only `xcsh` (under any
/// name) as a dependency. Not public API.
#[doc(hidden)]
pub mod __private {
    pub use inventory;
    pub use schemars;
    pub use serde;
    pub use serde_json;
    pub use xcsh_core;
}
