//! [`ToolError`] and its [`ErrorKind`]: a failure a tool reports to the model.

use std::fmt;

use serde_json::Value;

use crate::action::PendingSummary;

/// What kind of failure a [`ToolError`] (or an error result) is: the part a program
/// branches on. The message is for the model and for people; the kind is for code.
///
/// New kinds may be added, so a `match` needs a `_` arm.
///
/// ```
/// use xcsh_core::{ErrorKind, ToolError};
/// let error = ToolError::invalid_arguments("rename", "files[2]", "invalid type: integer `2`, expected a string");
/// assert_eq!(error.kind(), &ErrorKind::InvalidArguments { path: "files[2]".into() });
/// assert_eq!(ToolError::new("disk full").kind(), &ErrorKind::Tool);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The arguments did not decode. `path` is the JSON path of the offending value
    /// (`files[2]`), empty when the whole argument object is wrong.
    InvalidArguments {
        /// Where in the arguments.
        path: String,
    },
    /// No tool of that name is offered.
    UnknownTool {
        /// The name that was called.
        name: String,
    },
    /// `resolve` was called with nothing pending.
    NothingPending,
    /// The runtime has no pending-action store (a context built without one).
    StoreUnavailable,
    /// An action's `apply` failed (returned an error, an error result, or panicked). The
    /// action is still pending.
    ApplyFailed,
    /// An apply was refused because files changed since the preview; nothing was written
    /// and the action is still pending.
    Stale {
        /// The changed files, as the preview named them.
        files: Vec<String>,
    },
    /// The call was cancelled before it finished.
    Cancelled,
    /// The call was refused by policy: the strict resolve gate while actions are pending.
    Refused,
    /// The tool panicked; the session keeps working.
    Panicked,
    /// A discarded action's `reject` hook failed. The action was discarded all the same.
    RejectFailed,
    /// The approval policy asked a person, who declined: the action was discarded and
    /// nothing was written.
    Declined,
    /// A rule of the approval policy denied the apply: the action was discarded and nothing
    /// was written.
    Denied,
    /// The apply needs an approval that was not given (no answer, cancelled, no one to ask,
    /// or an approval of a different effect): nothing was written and the action is still
    /// pending.
    ApprovalPending,
    /// `resolve` (or a tool that pushes) named a pending-action handle that names no stack
    /// here: forged, mistyped, expired, or given where stacks have no handles. Nothing was
    /// applied and no other stack was touched.
    UnknownHandle,
    /// The tool's own failure ([`ToolError::new`], a converted error, an error result).
    Tool,
}

/// A tool failure, turned into an error result (`is_error: true`) before it reaches the model.
///
/// It carries an [`ErrorKind`] for programs and a message for the model. Like
/// `anyhow::Error`, it converts from any standard error with `?` (as [`ErrorKind::Tool`]) —
/// which is why it does not itself implement [`std::error::Error`]. The message should say
/// what was wrong and what the model can do about it.
///
/// ```
/// use xcsh_core::{ErrorKind, ToolError};
/// fn read(path: &str) -> Result<String, ToolError> {
///     let text = std::fs::read_to_string(path)?; // io::Error converts, with its causes
///     Ok(text)
/// }
/// let err = read("/definitely/not/here").unwrap_err();
/// assert!(err.to_string().contains("No such file"));
/// assert_eq!(err.kind(), &ErrorKind::Tool);
/// assert_eq!(ToolError::new("pattern is empty").message(), "pattern is empty");
/// let stale = ToolError::with_kind(ErrorKind::Stale { files: vec!["a.rs".into()] }, "a.rs changed");
/// assert!(matches!(stale.kind(), ErrorKind::Stale { files } if files == &["a.rs"]));
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ToolError {
    kind: ErrorKind,
    message: String,
}

impl ToolError {
    /// The tool's own failure ([`ErrorKind::Tool`]) with this message.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError::with_kind(ErrorKind::Tool, message)
    }

    /// An error of a given kind.
    pub fn with_kind(kind: ErrorKind, message: impl Into<String>) -> Self {
        ToolError {
            kind,
            message: message.into(),
        }
    }

    /// An error from anything printable ([`ErrorKind::Tool`]).
    pub fn from_display(error: impl fmt::Display) -> Self {
        ToolError::new(error.to_string())
    }

    /// The error the runtime reports when arguments do not decode: `path` is the JSON path of
    /// the offending value (`files[2]`), empty for the whole argument object.
    pub fn invalid_arguments(tool: &str, path: &str, problem: impl fmt::Display) -> Self {
        let path = if path == "." { "" } else { path };
        let location = if path.is_empty() {
            String::new()
        } else {
            format!("{path}: ")
        };
        ToolError::with_kind(
            ErrorKind::InvalidArguments {
                path: path.to_owned(),
            },
            format!(
                "Invalid arguments for `{tool}`: {location}{problem}. Fix the arguments to match the tool's parameter schema and call it again."
            ),
        )
    }

    /// The error reported for a call cancelled before it finished.
    pub fn cancelled() -> Self {
        ToolError::with_kind(
            ErrorKind::Cancelled,
            "Cancelled: the call was cancelled before it finished.",
        )
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> &ErrorKind {
        &self.kind
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The message, owned.
    pub fn into_message(self) -> String {
        self.message
    }

    /// The kind and the message.
    pub fn into_parts(self) -> (ErrorKind, String) {
        (self.kind, self.message)
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Debug for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolError")
            .field("kind", &self.kind)
            .field("message", &self.message)
            .finish()
    }
}

impl<E> From<E> for ToolError
where
    E: std::error::Error + Send + Sync + 'static,
{
    /// Keeps the whole cause chain: `outer: inner: root`. A
    /// [`ResolveError`] keeps its kind; any other error is
    /// [`ErrorKind::Tool`].
    fn from(error: E) -> Self {
        if let Some(resolve) = (&error as &dyn std::any::Any).downcast_ref::<ResolveError>() {
            return ToolError::with_kind(resolve.kind(), resolve.to_string());
        }
        let mut message = error.to_string();
        let mut source = error.source();
        while let Some(cause) = source {
            let text = cause.to_string();
            if !message.contains(&text) {
                message.push_str(": ");
                message.push_str(&text);
            }
            source = cause.source();
        }
        ToolError::new(message)
    }
}

/// Extracts a readable message from a caught panic payload.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-string payload".to_owned()
    }
}

/// The exact error when nothing is pending.
pub const NOTHING_PENDING: &str = "No pending action to resolve. Nothing to apply or discard.";

/// Every failed apply's message starts with this.
pub const APPLY_FAILED_PREFIX: &str = "Apply failed: ";

/// Why a resolve did not happen.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ResolveError {
    /// The stack was empty.
    NothingPending,
    /// The approval policy did not let the apply happen yet (no answer, cancelled, nobody to
    /// ask, an approval of another effect); nothing was written and the action is back where
    /// it was.
    NotApproved {
        /// The action, still pending (boxed: it is large, and errors are passed by value).
        summary: Box<PendingSummary>,
        /// The reason given.
        reason: String,
        /// Why, and how to proceed.
        message: String,
        /// The approval record (`details.approval` of the result).
        approval: Box<Value>,
    },
    /// `apply` failed or panicked; the action is back on top of the stack.
    ApplyFailed {
        /// The action, still pending (boxed: it is large, and errors are passed by value).
        summary: Box<PendingSummary>,
        /// The reason given.
        reason: String,
        /// What went wrong.
        cause: ToolError,
    },
}

impl fmt::Display for ResolveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ResolveError::NothingPending => f.write_str(NOTHING_PENDING),
            ResolveError::NotApproved {
                summary, message, ..
            } => write!(
                f,
                "Not approved: {message}\nThe action `{}` is still pending.",
                summary.label
            ),
            ResolveError::ApplyFailed { summary, cause, .. } => write!(
                f,
                "{APPLY_FAILED_PREFIX}{cause}\nThe action `{}` is still pending: fix the cause and call `resolve` with action \"apply\" again, or \"discard\" it.",
                summary.label
            ),
        }
    }
}

impl ResolveError {
    /// [`ErrorKind::NothingPending`], or for a failed apply [`ErrorKind::Stale`] when the
    /// cause was stale files and [`ErrorKind::ApplyFailed`] otherwise.
    pub fn kind(&self) -> ErrorKind {
        match self {
            ResolveError::NothingPending => ErrorKind::NothingPending,
            ResolveError::NotApproved { .. } => ErrorKind::ApprovalPending,
            ResolveError::ApplyFailed { cause, .. } => match cause.kind() {
                stale @ ErrorKind::Stale { .. } => stale.clone(),
                _ => ErrorKind::ApplyFailed,
            },
        }
    }
}

impl std::error::Error for ResolveError {}
