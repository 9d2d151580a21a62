//! The structural search/rewrite engine on ast-grep: pure, no tool glue.
