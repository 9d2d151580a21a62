//! Tool names every provider accepts: the rule lives in `xcsh-names`, shared with the macros
//! so that a name is judged alike at compile time and at registration.

pub use xcsh_names::validate_tool_name;

/// The closest of `candidates` to `name`, if any is close enough to be a likely typo.
pub(crate) use xcsh_names::closest;
