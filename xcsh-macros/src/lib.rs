//! Procedural macros for xcsh.
