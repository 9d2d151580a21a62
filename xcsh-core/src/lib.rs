//! Core runtime of xcsh.

pub mod dialect;
pub mod schema;
