//! Stale-safe, all-or-nothing multi-file edits.
