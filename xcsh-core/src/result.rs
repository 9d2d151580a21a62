//! What a tool returns to the model: [`AgentToolResult`] and its [`Content`] blocks.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{ErrorKind, TOOL_KIND, ToolError};

/// One block of content in a tool result.
///
/// Serialises in the shape agents and MCP clients expect:
/// `{"type":"text","text":"…"}` or `{"type":"image","data":"…","mimeType":"…"}`.
///
/// ```
/// use xcsh_core::Content;
/// let text = Content::text("done");
/// assert_eq!(serde_json::to_value(&text).unwrap(), serde_json::json!({"type": "text", "text": "done"}));
/// assert_eq!(text.as_text(), Some("done"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Content {
    /// Plain text.
    Text {
        /// The text itself.
        text: String,
    },
    /// An image, base64-encoded.
    Image {
        /// Base64-encoded image bytes.
        data: String,
        /// The image's MIME type, e.g. `image/png`.
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text { text: text.into() }
    }

    /// An image block from base64 data and a MIME type.
    pub fn image(data: impl Into<String>, mime_type: impl Into<String>) -> Self {
        Content::Image {
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }

    /// The text of a text block, `None` for other blocks.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text { text } => Some(text),
            Content::Image { .. } => None,
        }
    }
}

/// The result of a tool call, as the model sees it.
///
/// `details` carries structured data for user interfaces (diffs, counts) that the model does
/// not need to read; `is_error` marks a failure the model should act on. It serialises as
/// `{"content":[…],"details":…}` with `"isError":true` added only for errors.
///
/// ```
/// use xcsh_core::AgentToolResult;
/// let ok = AgentToolResult::text("Prepared 3 renames.").with_details(serde_json::json!({"count": 3}));
/// assert_eq!(
///     serde_json::to_value(&ok).unwrap(),
///     serde_json::json!({"content": [{"type": "text", "text": "Prepared 3 renames."}], "details": {"count": 3}})
/// );
/// let failed = AgentToolResult::error("files[2]: invalid type: integer `2`, expected a string");
/// assert!(failed.is_error);
/// assert_eq!(failed.text_content(), "files[2]: invalid type: integer `2`, expected a string");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentToolResult {
    /// The blocks shown to the model, in order.
    pub content: Vec<Content>,
    /// Structured data for user interfaces; not meant for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// Whether this result reports a failure.
    #[serde(
        default,
        rename = "isError",
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub is_error: bool,
    /// What kind of failure, when the runtime or the tool said; see [`error_kind`](Self::error_kind).
    #[serde(skip)]
    kind: Option<ErrorKind>,
}

impl AgentToolResult {
    /// A successful result holding one text block.
    pub fn text(text: impl Into<String>) -> Self {
        AgentToolResult {
            content: vec![Content::text(text)],
            details: None,
            is_error: false,
            kind: None,
        }
    }

    /// An error result holding one text block: a message the model can act on.
    pub fn error(message: impl Into<String>) -> Self {
        AgentToolResult {
            is_error: true,
            ..AgentToolResult::text(message)
        }
    }

    /// An error result of a given kind.
    pub fn failure(kind: ErrorKind, message: impl Into<String>) -> Self {
        AgentToolResult::error(message).with_error_kind(kind)
    }

    /// Marks the result as an error of this kind.
    #[must_use]
    pub fn with_error_kind(mut self, kind: ErrorKind) -> Self {
        self.is_error = true;
        self.kind = Some(kind);
        self
    }

    /// What kind of failure this result reports: `None` for a success, the kind the runtime
    /// or the tool gave otherwise ([`ErrorKind::Tool`] when none was given). Branch on this,
    /// not on the text.
    ///
    /// ```
    /// use xcsh_core::{AgentToolResult, ErrorKind, ToolError};
    /// assert_eq!(AgentToolResult::text("ok").error_kind(), None);
    /// assert_eq!(AgentToolResult::error("no").error_kind(), Some(&ErrorKind::Tool));
    /// let failed = AgentToolResult::from(ToolError::with_kind(ErrorKind::NothingPending, "…"));
    /// assert_eq!(failed.error_kind(), Some(&ErrorKind::NothingPending));
    /// ```
    pub fn error_kind(&self) -> Option<&ErrorKind> {
        if !self.is_error {
            return None;
        }
        Some(self.kind.as_ref().unwrap_or(&TOOL_KIND))
    }

    /// A successful result with no content; callers such as `resolve` fill in a default.
    pub fn empty() -> Self {
        AgentToolResult::default()
    }

    /// Replaces the details.
    #[must_use]
    pub fn with_details(mut self, details: Value) -> Self {
        self.details = Some(details);
        self
    }

    /// All text blocks joined with newlines.
    pub fn text_content(&self) -> String {
        let mut texts = self.content.iter().filter_map(Content::as_text);
        let Some(first) = texts.next() else {
            return String::new();
        };
        texts.fold(first.to_owned(), |mut acc, t| {
            acc.push('\n');
            acc.push_str(t);
            acc
        })
    }

    /// Whether any block carries non-empty text.
    pub fn has_text(&self) -> bool {
        self.content
            .iter()
            .any(|c| c.as_text().is_some_and(|t| !t.is_empty()))
    }
}

impl From<String> for AgentToolResult {
    fn from(text: String) -> Self {
        AgentToolResult::text(text)
    }
}

impl From<&str> for AgentToolResult {
    fn from(text: &str) -> Self {
        AgentToolResult::text(text)
    }
}

impl From<Content> for AgentToolResult {
    fn from(content: Content) -> Self {
        AgentToolResult {
            content: vec![content],
            ..AgentToolResult::default()
        }
    }
}

impl From<Vec<Content>> for AgentToolResult {
    fn from(content: Vec<Content>) -> Self {
        AgentToolResult {
            content,
            ..AgentToolResult::default()
        }
    }
}

impl From<()> for AgentToolResult {
    fn from((): ()) -> Self {
        AgentToolResult::empty()
    }
}

impl From<ToolError> for AgentToolResult {
    fn from(error: ToolError) -> Self {
        let (kind, message) = error.into_parts();
        AgentToolResult::failure(kind, message)
    }
}

/// Anything a tool, an `apply` or a `reject` may return.
///
/// Implemented for [`AgentToolResult`], [`String`], `&str`, [`Content`], `()` (no text: callers
/// such as `resolve` fill in a default), and `Result<T, E>` of any of those with any
/// [`Display`](std::fmt::Display) error — [`ToolError`] (keeping its [`ErrorKind`]),
/// `anyhow::Error`, `std::io::Error`, a `String`…
///
/// ```
/// use xcsh_core::{IntoToolResult, ToolError};
/// let ok: Result<String, std::io::Error> = Ok("written".into());
/// assert_eq!(ok.into_tool_result().unwrap().text_content(), "written");
/// let failed: Result<&str, String> = Err("disk full".into());
/// assert_eq!(failed.into_tool_result().unwrap_err().to_string(), "disk full");
/// ```
pub trait IntoToolResult {
    /// Converts into a result or a failure.
    fn into_tool_result(self) -> Result<AgentToolResult, ToolError>;
}

macro_rules! into_tool_result_via_from {
    ($($ty:ty),*) => {$(
        impl IntoToolResult for $ty {
            fn into_tool_result(self) -> Result<AgentToolResult, ToolError> {
                Ok(AgentToolResult::from(self))
            }
        }
    )*};
}

into_tool_result_via_from!(AgentToolResult, String, &str, Content, Vec<Content>, ());

impl<T, E> IntoToolResult for Result<T, E>
where
    T: Into<AgentToolResult>,
    E: std::fmt::Display + 'static,
{
    fn into_tool_result(self) -> Result<AgentToolResult, ToolError> {
        match self {
            Ok(value) => Ok(value.into()),
            // A `ToolError` keeps its kind; any other error is the tool's own.
            Err(error) => Err(
                match (&error as &dyn std::any::Any).downcast_ref::<ToolError>() {
                    Some(tool_error) => tool_error.clone(),
                    None => ToolError::from_display(error),
                },
            ),
        }
    }
}
