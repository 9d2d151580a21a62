//! Everything that can make a search or an edit plan fail.
//!
//! Each message names the offending field or file (`ops[1].pat: …`, `src/a.rs:12: …`), says
//! what was wrong, and what to do next: it is read by a model that must fix its call.

use std::path::PathBuf;

use super::Lang;
use crate::workspace::PathError;

/// Why the engine refused a request or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EngineError {
    /// No ops were given.
    #[error(
        "ops: at least one op is required; pass ops: [{{\"pat\": \"<code to match>\", \"out\": \"<replacement>\"}}] (or an ast-grep YAML rule with a `fix` in `rule`)"
    )]
    NoOps,

    /// A pattern was empty (or only whitespace).
    #[error("{field}: the pattern is empty; give the code to match, e.g. `$X.unwrap()`")]
    EmptyPattern {
        /// The field, e.g. `ops[1].pat`.
        field: String,
    },

    /// A pattern does not parse as one syntactically valid node.
    #[error(
        "{field}: `{pattern}` is not a valid {langs} pattern: {detail}; write it as one complete expression, statement or item in that language, with $NAME for one node and $$$NAME for a list of nodes"
    )]
    InvalidPattern {
        /// The field, e.g. `ops[1].pat`.
        field: String,
        /// The pattern as given.
        pattern: String,
        /// The language(s) it was parsed as.
        langs: String,
        /// What the parser said.
        detail: String,
    },

    /// Two ops have the same pattern.
    #[error(
        "{field}: the same pattern as {first}; give each op a distinct pattern (merge their rewrites into one op)"
    )]
    DuplicatePattern {
        /// The later field, e.g. `ops[2].pat`.
        field: String,
        /// The earlier one, e.g. `ops[0].pat`.
        first: String,
    },

    /// An ast-grep YAML rule (`rule`) cannot be used: its YAML, a key, its language, a
    /// pattern in it, or (for an edit) its `fix`.
    #[error("{field}: {detail}")]
    InvalidRule {
        /// `rule`, or `rule (document 2)` for the second of several.
        field: String,
        /// What is wrong (with the YAML line where known) and what to do.
        detail: String,
    },

    /// Both `ops` (or patterns) and a `rule` were given.
    #[error(
        "rule: give either a rule or {patterns}, not both; put every pattern into the rule (`any:` lists several) or make one call per kind"
    )]
    RuleWithPatterns {
        /// What the patterns were called (`ops`, `pat`).
        patterns: &'static str,
    },

    /// A rewrite template cannot be used with its pattern.
    #[error("{field}: {detail}")]
    InvalidRewrite {
        /// The field, e.g. `ops[0].out`.
        field: String,
        /// What is wrong and what to do.
        detail: String,
    },

    /// The language name is not one ast-grep knows.
    #[error(
        "lang: `{given}` is not a supported language; use one of: {list} (or omit lang to infer it from each file's extension)",
        list = Lang::supported_list()
    )]
    UnsupportedLang {
        /// The name as given.
        given: String,
    },

    /// The language is one ast-grep knows, but its grammar is not compiled into this build.
    #[error(
        "lang: `{given}` ({lang}) is not compiled into this build: enable the cargo feature `{feature}` of xcsh-tools (or `all-languages`); use one of: {list} (or omit lang to infer it from each file's extension)",
        feature = lang.feature(),
        list = Lang::supported_list()
    )]
    LangNotCompiled {
        /// The name as given.
        given: String,
        /// The language it names.
        lang: Lang,
    },

    /// `limit` was 0.
    #[error("limit: must be at least 1 (got {given}); omit it to keep every replacement")]
    InvalidLimit {
        /// The limit as given.
        given: usize,
    },

    /// `path` was refused by the workspace (outside the root, missing, …).
    #[error("path: {0}")]
    Path(#[from] PathError),

    /// `path` or `glob` is not a valid glob.
    #[error(
        "{field}: `{glob}` is not a valid glob ({detail}); use gitignore-style globs such as `src/**/*.rs` or `*.py`"
    )]
    InvalidGlob {
        /// `path` or `glob`.
        field: &'static str,
        /// The glob as given.
        glob: String,
        /// What the glob parser said.
        detail: String,
    },

    /// A file named explicitly has an extension no supported language uses, and no `lang`.
    #[error(
        "path: cannot tell the language of `{path}` from its extension; pass lang (one of: {list})",
        list = Lang::supported_list()
    )]
    UnknownLanguage {
        /// The file, root-relative.
        path: String,
    },

    /// A file named explicitly could not be read.
    #[error("path: cannot read `{path}`: {source}; check that it is a readable file")]
    Unreadable {
        /// The file, root-relative.
        path: String,
        /// The underlying error.
        source: std::io::Error,
    },

    /// Two ops rewrite overlapping code in one file.
    #[error(
        "{file}:{line}: ops[{first}] and ops[{second}] both match overlapping code (`{snippet}`); make their patterns match disjoint code, or run them in separate calls"
    )]
    Overlap {
        /// The file, root-relative.
        file: String,
        /// 1-based line of the later of the two matches.
        line: usize,
        /// The op whose match starts first.
        first: usize,
        /// The other op.
        second: usize,
        /// The start of the code both want to rewrite, shortened.
        snippet: String,
    },

    /// More candidate files than the configured maximum.
    #[error(
        "more than {max} files to scan under `{path}`; narrow path or glob (or raise the maximum file count)"
    )]
    TooManyFiles {
        /// The configured maximum.
        max: usize,
        /// The scanned path, root-relative.
        path: String,
    },

    /// The walk could not start (the scanned directory vanished, …).
    #[error("cannot walk `{}`: {detail}", path.display())]
    Walk {
        /// The directory.
        path: PathBuf,
        /// What went wrong.
        detail: String,
    },

    /// The caller cancelled the run.
    #[error("cancelled before the scan finished; nothing was changed")]
    Cancelled,
}
