//! Why a patch cannot be applied: a kind to branch on, and a sentence naming the place.

use std::fmt;

/// What kind of problem a [`PatchError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PatchErrorKind {
    /// The patch text does not follow the format.
    Syntax,
    /// A file operation cannot be done: the file is missing, outside the workspace, not
    /// text, already there for a move's source, …
    File,
    /// A hunk's lines (or a `@@` context) are found nowhere in the file.
    NoMatch,
    /// A hunk's lines are found in several places and nothing says which.
    Ambiguous,
}

/// Why a patch cannot be applied. Nothing is written when a patch has one: its message says
/// which file operation and which hunk failed (with their lines in the patch) and why.
///
/// ```
/// use xcsh_tools::patch::{PatchErrorKind, parse};
///
/// let err = parse("*** Begin Patch\n*** Update File: a.rs\n*** End Patch").unwrap_err();
/// assert_eq!(err.kind(), PatchErrorKind::Syntax);
/// assert_eq!(err.patch_line(), Some(2));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchError {
    kind: PatchErrorKind,
    /// The operation's header and its line, when the problem is in one.
    op: Option<(String, usize)>,
    /// The hunk's 1-based number in its operation and its line, when the problem is in one.
    hunk: Option<(usize, usize)>,
    /// A line of the patch, for syntax errors.
    line: Option<usize>,
    message: String,
}

impl PatchError {
    pub(crate) fn syntax(line: usize, message: impl Into<String>) -> Self {
        Self {
            kind: PatchErrorKind::Syntax,
            op: None,
            hunk: None,
            line: Some(line),
            message: message.into(),
        }
    }

    pub(crate) fn file(header: String, line: usize, message: impl Into<String>) -> Self {
        Self {
            kind: PatchErrorKind::File,
            op: Some((header, line)),
            hunk: None,
            line: None,
            message: message.into(),
        }
    }

    pub(crate) fn hunk(
        kind: PatchErrorKind,
        header: String,
        op_line: usize,
        hunk: (usize, usize),
        message: impl Into<String>,
    ) -> Self {
        Self {
            kind,
            op: Some((header, op_line)),
            hunk: Some(hunk),
            line: None,
            message: message.into(),
        }
    }

    /// The kind of problem.
    pub fn kind(&self) -> PatchErrorKind {
        self.kind
    }

    /// The 1-based line of the patch where the problem is: the hunk's, else the operation's,
    /// else the line a syntax error names.
    pub fn patch_line(&self) -> Option<usize> {
        self.hunk
            .map(|h| h.1)
            .or(self.op.as_ref().map(|o| o.1))
            .or(self.line)
    }

    /// The 1-based number of the failing hunk within its file operation.
    pub fn hunk_number(&self) -> Option<usize> {
        self.hunk.map(|h| h.0)
    }

    /// The explanation alone, without the place.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for PatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.op, self.hunk, self.line) {
            (Some((header, op_line)), Some((n, line)), _) => write!(
                f,
                "`{header}` (patch line {op_line}), hunk {n} (patch line {line}): {}",
                self.message
            ),
            (Some((header, op_line)), None, _) => {
                write!(f, "`{header}` (patch line {op_line}): {}", self.message)
            }
            (None, _, Some(line)) => write!(f, "patch line {line}: {}", self.message),
            (None, _, None) => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for PatchError {}
