//! What a tool returns to the model: [`AgentToolResult`] and its [`Content`] blocks.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{ErrorKind, ToolError};

/// One block of content in a tool result.
///
/// Serialises in the shape agents and MCP clients expect:
/// `{"type":"text","text":"…"}`, `{"type":"image","data":"…","mimeType":"…"}`, or
/// `{"type":"resource_link","uri":"…","name":"…"}` (a link to something too large to inline,
/// which an MCP client reads with `resources/read`; see [`Resource`](crate::Resource)).
/// New kinds of block may be added: match with a wildcard arm.
///
/// ```
/// use xcsh_core::Content;
/// let text = Content::text("done");
/// assert_eq!(serde_json::to_value(&text).unwrap(), serde_json::json!({"type": "text", "text": "done"}));
/// assert_eq!(text.as_text(), Some("done"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
#[non_exhaustive]
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
    /// A link to a resource the session serves (MCP `resource_link`): content too large to
    /// put in the result, such as a whole preview. [`Session::read_resource`](crate::Session::read_resource)
    /// (or MCP `resources/read`) reads it.
    #[serde(rename = "resource_link")]
    ResourceLink {
        /// Where it is: `xcsh://…`.
        uri: String,
        /// A short name.
        name: String,
        /// Its MIME type, when known.
        #[serde(rename = "mimeType", default, skip_serializing_if = "Option::is_none")]
        mime_type: Option<String>,
        /// What it holds, for a person or the model.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
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
            _ => None,
        }
    }
}

/// The result of a tool call, as the model sees it.
///
/// `details` carries structured data for user interfaces (diffs, counts) that the model does
/// not need to read; `structured` is the tool's declared output (MCP `structuredContent`,
/// valid against [`Tool::output_schema`](crate::Tool::output_schema)), small and bounded;
/// [`is_error`](Self::is_error) says whether it reports a failure the model should act on, and
/// [`error_kind`](Self::error_kind) which: one source of truth. It serialises as
/// `{"content":[…],"details":…}`, with `"structured":…` when set and `"isError":true` added
/// only for errors.
///
/// ```
/// use xcsh_core::AgentToolResult;
/// let ok = AgentToolResult::text("Prepared 3 renames.").with_details(serde_json::json!({"count": 3}));
/// assert_eq!(
///     serde_json::to_value(&ok).unwrap(),
///     serde_json::json!({"content": [{"type": "text", "text": "Prepared 3 renames."}], "details": {"count": 3}})
/// );
/// let failed = AgentToolResult::error("files[2]: invalid type: integer `2`, expected a string");
/// assert!(failed.is_error());
/// assert_eq!(failed.text_content(), "files[2]: invalid type: integer `2`, expected a string");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentToolResult {
    /// The blocks shown to the model, in order.
    pub content: Vec<Content>,
    /// Structured data for user interfaces; not meant for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// The tool's declared output, when it declares one ([`with_output`](Self::with_output)):
    /// what an MCP client receives as `structuredContent`. Keep it small: counts, summaries,
    /// links; publish anything large as a [`Resource`](crate::Resource).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured: Option<Value>,
    /// The failure this result reports, if any: on the wire `"isError": true` (the kind is
    /// for programs in process; one read back is [`ErrorKind::Tool`]).
    #[serde(
        default,
        rename = "isError",
        skip_serializing_if = "Option::is_none",
        with = "error_flag"
    )]
    error: Option<ErrorKind>,
}

/// `isError` on the wire: `true` for a failure, absent (or `false`) otherwise.
mod error_flag {
    use serde::{Deserialize, Deserializer, Serializer};

    use crate::error::ErrorKind;

    pub(super) fn serialize<S: Serializer>(
        error: &Option<ErrorKind>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        serializer.serialize_bool(error.is_some())
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<ErrorKind>, D::Error> {
        Ok(bool::deserialize(deserializer)?.then_some(ErrorKind::Tool))
    }
}

impl AgentToolResult {
    /// A successful result holding one text block.
    pub fn text(text: impl Into<String>) -> Self {
        AgentToolResult {
            content: vec![Content::text(text)],
            details: None,
            structured: None,
            error: None,
        }
    }

    /// An error result holding one text block: a message the model can act on.
    pub fn error(message: impl Into<String>) -> Self {
        AgentToolResult {
            error: Some(ErrorKind::Tool),
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
        self.error = Some(kind);
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
        self.error.as_ref()
    }

    /// Whether this result reports a failure.
    ///
    /// ```
    /// use xcsh_core::AgentToolResult;
    /// assert!(AgentToolResult::error("no").is_error());
    /// assert!(!AgentToolResult::text("yes").is_error());
    /// ```
    pub fn is_error(&self) -> bool {
        self.error.is_some()
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

    /// Sets the structured output ([`structured`](Self::structured)) to `output`, serialised.
    /// A tool that declares an output type (`#[custom_tool(output = T)]`) sets it on every
    /// successful result.
    ///
    /// ```
    /// use xcsh_core::AgentToolResult;
    /// #[derive(serde::Serialize)]
    /// struct Count { files: usize }
    /// let result = AgentToolResult::text("3 files").with_output(&Count { files: 3 });
    /// assert_eq!(result.structured, Some(serde_json::json!({"files": 3})));
    /// ```
    #[must_use]
    pub fn with_output<T: Serialize + ?Sized>(mut self, output: &T) -> Self {
        match serde_json::to_value(output) {
            Ok(value) => self.structured = Some(value),
            Err(e) => {
                tracing::warn!(error = %e, "a tool's structured output could not be serialised; it is left out");
            }
        }
        self
    }

    /// Sets the structured output to a JSON value.
    #[must_use]
    pub fn with_structured(mut self, output: Value) -> Self {
        self.structured = Some(output);
        self
    }

    /// The resource links among the content blocks: `(uri, name)`.
    pub fn resource_links(&self) -> impl Iterator<Item = (&str, &str)> {
        self.content.iter().filter_map(|block| match block {
            Content::ResourceLink { uri, name, .. } => Some((uri.as_str(), name.as_str())),
            _ => None,
        })
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
