//! [`ToolError`]: a failure a tool reports to the model.

use std::fmt;

/// A tool failure, turned into an error result (`is_error: true`) before it reaches the model.
///
/// Like `anyhow::Error`, it converts from any standard error with `?` — which is why it does
/// not itself implement [`std::error::Error`]. The message should say what was wrong and what
/// the model can do about it.
///
/// ```
/// use xcsh_core::ToolError;
/// fn read(path: &str) -> Result<String, ToolError> {
///     let text = std::fs::read_to_string(path)?; // io::Error converts, with its causes
///     Ok(text)
/// }
/// let err = read("/definitely/not/here").unwrap_err();
/// assert!(err.to_string().contains("No such file"));
/// assert_eq!(ToolError::new("pattern is empty").message(), "pattern is empty");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ToolError {
    message: String,
}

impl ToolError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        ToolError {
            message: message.into(),
        }
    }

    /// An error from anything printable.
    pub fn from_display(error: impl fmt::Display) -> Self {
        ToolError::new(error.to_string())
    }

    /// The error the runtime reports when arguments do not decode: `path` is the JSON path of
    /// the offending value (`files[2]`), empty for the whole argument object.
    pub fn invalid_arguments(tool: &str, path: &str, problem: impl fmt::Display) -> Self {
        let location = if path.is_empty() || path == "." {
            String::new()
        } else {
            format!("{path}: ")
        };
        ToolError::new(format!(
            "Invalid arguments for `{tool}`: {location}{problem}. Fix the arguments to match the tool's parameter schema and call it again."
        ))
    }

    /// The error reported for a call cancelled before it finished.
    pub fn cancelled() -> Self {
        ToolError::new("Cancelled: the call was cancelled before it finished.")
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The message, owned.
    pub fn into_message(self) -> String {
        self.message
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Debug for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("ToolError").field(&self.message).finish()
    }
}

impl<E> From<E> for ToolError
where
    E: std::error::Error + Send + Sync + 'static,
{
    /// Keeps the whole cause chain: `outer: inner: root`.
    fn from(error: E) -> Self {
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
