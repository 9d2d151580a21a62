//! Provider dialects: how each LLM API wants tool definitions, schemas and tool choice.
//!
//! A tool's canonical parameter schema (schemars, draft 2020-12; see [`crate::schema`]) is
//! not accepted as is by every API. This module turns it into what each one takes:
//!
//! 1. [`lower_schema`] rewrites the schema for a [`Dialect`] (refs inlined, OpenAI strict
//!    mode's closed objects, Gemini's OpenAPI 3.0 subset, …), or says precisely why it
//!    cannot ([`LowerError`]).
//! 2. [`tool_definition`] wraps a lowered schema in the request shape of that API.
//! 3. `validate` (feature `testing`) checks a finished definition against each provider's published rules.
//! 4. [`Dialect::forced_tool_choice`] is the `tool_choice` value that forces one tool.
//! 5. [`restore_arguments`] undoes what strict mode makes a model send (explicit `null` for
//!    an omitted optional field) before the arguments are decoded with serde.
//!
//! ```
//! use xcsh_core::dialect::{Dialect, ToolMeta, lower_schema, tool_definition, validate};
//!
//! /// Renames files.
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Rename {
//!     /// Files to rename.
//!     files: Vec<String>,
//!     /// Dry run only.
//!     dry_run: Option<bool>,
//! }
//!
//! let canonical = xcsh_core::schema::schema_for::<Rename>();
//! for dialect in Dialect::ALL {
//!     let lowered = lower_schema(dialect, &canonical)?;
//!     let def = tool_definition(dialect, "rename", &ToolMeta::new("Renames files."), &lowered);
//!     assert_eq!(validate::tool_definition(dialect, &def), vec![]);
//! }
//! # Ok::<(), xcsh_core::dialect::LowerError>(())
//! ```

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

mod definition;
mod lower;
mod restore;
#[cfg(any(test, feature = "testing"))]
pub mod validate;

pub use definition::{ToolMeta, gemini_tools, tool_definition};
pub use lower::{FieldPath, LowerError, LowerErrorKind, PathSegment, lower_schema};
pub use restore::restore_arguments;

/// Keywords whose value is one subschema, so that the lowering's and the validator's walks
/// cannot disagree on what a subschema is.
pub(crate) const SINGLE_SUBSCHEMA_KEYWORDS: &[&str] = &[
    "additionalProperties",
    "unevaluatedProperties",
    "additionalItems",
    "unevaluatedItems",
    "contains",
    "propertyNames",
    "not",
    "if",
    "then",
    "else",
];

/// An LLM API (or protocol) whose tool-definition format xcsh can produce.
///
/// Names for configuration and the command line are kebab-case ([`Dialect::as_str`]).
///
/// ```
/// use xcsh_core::Dialect;
/// let d: Dialect = "openai-chat".parse()?;
/// assert_eq!(d, Dialect::OpenAiChat);
/// assert_eq!(d.to_string(), "openai-chat");
/// # Ok::<(), xcsh_core::dialect::ParseDialectError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Dialect {
    /// Anthropic Messages API.
    Anthropic,
    /// OpenAI Chat Completions API.
    // kebab-case alone would say `open-ai-chat`; the name is `openai-chat` everywhere.
    #[serde(rename = "openai-chat")]
    OpenAiChat,
    /// OpenAI Responses API.
    #[serde(rename = "openai-responses")]
    OpenAiResponses,
    /// Google Gemini `generateContent` API.
    Gemini,
    /// Amazon Bedrock Converse API.
    Bedrock,
    /// Model Context Protocol (`tools/list`).
    Mcp,
}

impl Dialect {
    /// Every dialect, in declaration order.
    ///
    /// ```
    /// assert_eq!(xcsh_core::Dialect::ALL.len(), 6);
    /// ```
    pub const ALL: [Dialect; 6] = [
        Dialect::Anthropic,
        Dialect::OpenAiChat,
        Dialect::OpenAiResponses,
        Dialect::Gemini,
        Dialect::Bedrock,
        Dialect::Mcp,
    ];

    /// The kebab-case name, as accepted by [`FromStr`] and used in serde.
    ///
    /// ```
    /// assert_eq!(xcsh_core::Dialect::OpenAiResponses.as_str(), "openai-responses");
    /// ```
    pub const fn as_str(self) -> &'static str {
        match self {
            Dialect::Anthropic => "anthropic",
            Dialect::OpenAiChat => "openai-chat",
            Dialect::OpenAiResponses => "openai-responses",
            Dialect::Gemini => "gemini",
            Dialect::Bedrock => "bedrock",
            Dialect::Mcp => "mcp",
        }
    }

    /// Whether tool definitions for this dialect are sent in OpenAI strict mode
    /// (`strict: true`), which constrains decoding to the schema and therefore restricts
    /// the schema (see [`lower_schema`]).
    ///
    /// ```
    /// assert!(xcsh_core::Dialect::OpenAiChat.is_openai_strict());
    /// assert!(!xcsh_core::Dialect::Anthropic.is_openai_strict());
    /// ```
    pub const fn is_openai_strict(self) -> bool {
        matches!(self, Dialect::OpenAiChat | Dialect::OpenAiResponses)
    }

    /// The `tool_choice` value (Gemini: `tool_config`) that forces the model to call
    /// `tool_name`, or `None` when the protocol has no way to force a tool (MCP: the client
    /// owns the model request).
    ///
    /// ```
    /// use serde_json::json;
    /// use xcsh_core::Dialect;
    ///
    /// assert_eq!(
    ///     Dialect::Anthropic.forced_tool_choice("resolve"),
    ///     Some(json!({"type": "tool", "name": "resolve"}))
    /// );
    /// assert_eq!(
    ///     Dialect::OpenAiChat.forced_tool_choice("resolve"),
    ///     Some(json!({"type": "function", "function": {"name": "resolve"}}))
    /// );
    /// assert_eq!(
    ///     Dialect::OpenAiResponses.forced_tool_choice("resolve"),
    ///     Some(json!({"type": "function", "name": "resolve"}))
    /// );
    /// assert_eq!(
    ///     Dialect::Gemini.forced_tool_choice("resolve"),
    ///     Some(json!({"function_calling_config": {
    ///         "mode": "ANY", "allowed_function_names": ["resolve"]
    ///     }}))
    /// );
    /// assert_eq!(
    ///     Dialect::Bedrock.forced_tool_choice("resolve"),
    ///     Some(json!({"tool": {"name": "resolve"}}))
    /// );
    /// assert_eq!(Dialect::Mcp.forced_tool_choice("resolve"), None);
    /// ```
    pub fn forced_tool_choice(self, tool_name: &str) -> Option<Value> {
        // Shapes from each API reference: Anthropic `tool_choice` {type:"tool"}; OpenAI Chat
        // `tool_choice` named function; Responses `tool_choice` {type:"function", name};
        // Gemini `toolConfig.functionCallingConfig` mode ANY restricted to one name; Bedrock
        // Converse `toolConfig.toolChoice` {tool:{name}}.
        Some(match self {
            Dialect::Anthropic => json!({"type": "tool", "name": tool_name}),
            Dialect::OpenAiChat => json!({"type": "function", "function": {"name": tool_name}}),
            Dialect::OpenAiResponses => json!({"type": "function", "name": tool_name}),
            Dialect::Gemini => json!({"function_calling_config": {
                "mode": "ANY",
                "allowed_function_names": [tool_name],
            }}),
            Dialect::Bedrock => json!({"tool": {"name": tool_name}}),
            Dialect::Mcp => return None,
        })
    }
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A dialect name that [`Dialect::from_str`] does not know.
///
/// ```
/// let err = "claude".parse::<xcsh_core::Dialect>().unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "unknown dialect `claude`; expected one of: anthropic, openai-chat, openai-responses, gemini, bedrock, mcp"
/// );
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown dialect `{given}`; expected one of: anthropic, openai-chat, openai-responses, gemini, bedrock, mcp"
)]
pub struct ParseDialectError {
    given: String,
}

impl ParseDialectError {
    /// The name that was given.
    ///
    /// ```
    /// let err = "x".parse::<xcsh_core::Dialect>().unwrap_err();
    /// assert_eq!(err.given(), "x");
    /// ```
    pub fn given(&self) -> &str {
        &self.given
    }
}

impl FromStr for Dialect {
    type Err = ParseDialectError;

    /// Parses a kebab-case name ([`Dialect::as_str`]); ASCII case is ignored.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Dialect::ALL
            .into_iter()
            .find(|d| d.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| ParseDialectError {
                given: s.to_owned(),
            })
    }
}

/// A provider endpoint: the dialect it speaks and what the model behind it can do.
///
/// Some models speak a dialect that has a forced tool choice but refuse it (Anthropic's
/// extended-thinking mode accepts only `auto`/`none`; some OpenAI-compatible servers ignore
/// or reject a named function). For those, build the provider with
/// [`forced_choice`](Self::forced_choice) `false`: [`Provider::forced_tool_choice`] then
/// returns `None`, and the session falls back to the textual reminder.
///
/// ```
/// use xcsh_core::dialect::{Dialect, Provider};
///
/// let normal = Provider::from(Dialect::Anthropic);
/// assert!(normal.forced_tool_choice("resolve").is_some());
///
/// let thinking = Provider::new(Dialect::Anthropic).without_forced_choice();
/// assert_eq!(thinking.forced_tool_choice("resolve"), None);
///
/// // MCP cannot force a tool at all, whatever the flag says.
/// assert!(!Provider::from(Dialect::Mcp).forced_choice);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Provider {
    /// The API format.
    pub dialect: Dialect,
    /// Whether the model accepts a tool choice that names one tool.
    pub forced_choice: bool,
}

impl Provider {
    /// A provider that accepts a forced choice whenever its dialect has one.
    ///
    /// ```
    /// let p = xcsh_core::dialect::Provider::new(xcsh_core::Dialect::Gemini);
    /// assert!(p.forced_choice);
    /// ```
    pub const fn new(dialect: Dialect) -> Self {
        Provider {
            dialect,
            forced_choice: !matches!(dialect, Dialect::Mcp),
        }
    }

    /// The same provider, marked as refusing a forced tool choice.
    ///
    /// ```
    /// let p = xcsh_core::dialect::Provider::new(xcsh_core::Dialect::Bedrock).without_forced_choice();
    /// assert!(!p.forced_choice);
    /// ```
    pub const fn without_forced_choice(self) -> Self {
        Provider {
            forced_choice: false,
            ..self
        }
    }

    /// [`Dialect::forced_tool_choice`], or `None` when this provider refuses a forced choice.
    ///
    /// ```
    /// use xcsh_core::dialect::{Dialect, Provider};
    /// assert_eq!(
    ///     Provider::from(Dialect::Bedrock).forced_tool_choice("resolve"),
    ///     Some(serde_json::json!({"tool": {"name": "resolve"}}))
    /// );
    /// ```
    pub fn forced_tool_choice(self, tool_name: &str) -> Option<Value> {
        if self.forced_choice {
            self.dialect.forced_tool_choice(tool_name)
        } else {
            None
        }
    }
}

impl From<Dialect> for Provider {
    fn from(dialect: Dialect) -> Self {
        Provider::new(dialect)
    }
}
