//! What a durable pending stack keeps of an action ([`DurableState`]) and why a state file
//! cannot be used ([`StateError`]). A leaf: the store speaks of these through its keeper
//! (see `pending::Keeper`) without knowing the stack file that `durable` implements.

use std::io;
use std::path::PathBuf;

use serde_json::Value;

/// What a durable action keeps: its kind (the name its [`DurableKind`](crate::durable::DurableKind) is registered under)
/// and its state as JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct DurableState {
    /// The registered kind, e.g. `"xcsh_tools::ast_edit::AstEditAction"`.
    pub kind: &'static str,
    /// The action, serialised.
    pub state: Value,
}

/// Why a state file cannot be used. Nothing was written to the workspace.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StateError {
    /// The file is there but is not a usable pending stack.
    #[error(
        "the pending-stack file `{}` cannot be used: {problem}; nothing was changed. Move it away (its actions are then lost: preview them again), or point --state at another directory",
        path.display()
    )]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong with it.
        problem: String,
    },
    /// Another session (in this process or another) keeps this stack now.
    #[error(
        "the pending stack `{}` is in use by {holder}: one session at a time keeps a stack; stop that one, or point --state at another directory",
        path.display()
    )]
    Busy {
        /// The stack file.
        path: PathBuf,
        /// Who holds it (`pid N`), as its lock file says.
        holder: String,
    },
    /// The state directory or the file cannot be read or written.
    #[error("cannot {step} `{}`: {source}", path.display())]
    Io {
        /// What was being done.
        step: &'static str,
        /// The path.
        path: PathBuf,
        /// The system's error.
        source: io::Error,
    },
}
