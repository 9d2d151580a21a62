//! Tool definitions in each API's request shape.

use serde_json::{Map, Value, json};

use super::Dialect;
use crate::schema::JsonObject;

/// What a tool definition says besides its name and schema.
///
/// Only the description reaches every API. `title` and `annotations` are MCP's (`Tool.title`
/// and `Tool.annotations`: `readOnlyHint`, `destructiveHint`, …); the other dialects have no
/// place for them and leave them out.
///
/// ```
/// use serde_json::json;
/// use xcsh_core::dialect::ToolMeta;
///
/// let meta = ToolMeta::new("Structural search and replace.")
///     .with_title("AST Edit")
///     .with_annotations(json!({"destructiveHint": true}));
/// assert_eq!(meta.title.as_deref(), Some("AST Edit"));
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ToolMeta {
    /// What the tool does; the model decides from it whether and how to call the tool.
    pub description: String,
    /// A human-readable name (MCP `title`).
    pub title: Option<String>,
    /// MCP tool annotations, as their JSON object.
    pub annotations: Option<Value>,
}

impl ToolMeta {
    /// Metadata with only a description.
    ///
    /// ```
    /// let meta = xcsh_core::dialect::ToolMeta::new("Lists files.");
    /// assert_eq!(meta.description, "Lists files.");
    /// ```
    pub fn new(description: impl Into<String>) -> Self {
        ToolMeta {
            description: description.into(),
            ..ToolMeta::default()
        }
    }

    /// Sets the human-readable title (MCP only).
    ///
    /// ```
    /// let meta = xcsh_core::dialect::ToolMeta::new("Lists files.").with_title("List");
    /// assert_eq!(meta.title.as_deref(), Some("List"));
    /// ```
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the MCP annotations object (MCP only).
    ///
    /// ```
    /// let meta = xcsh_core::dialect::ToolMeta::new("Reads.")
    ///     .with_annotations(serde_json::json!({"readOnlyHint": true}));
    /// assert!(meta.annotations.is_some());
    /// ```
    pub fn with_annotations(mut self, annotations: Value) -> Self {
        self.annotations = Some(annotations);
        self
    }
}

/// A tool definition in `dialect`'s request shape, around a schema already lowered for that
/// dialect by [`lower_schema`](super::lower_schema):
///
/// | dialect | shape |
/// |---|---|
/// | Anthropic | `{name, description, input_schema}` |
/// | OpenAI Chat | `{type: "function", function: {name, description, parameters, strict: true}}` |
/// | OpenAI Responses | `{type: "function", name, description, parameters, strict: true}` |
/// | Gemini | `{name, description, parameters}`: one `functionDeclarations` entry (see [`gemini_tools`]); `parameters` is left out when the tool has none, as Gemini refuses an object without properties |
/// | Bedrock | `{toolSpec: {name, description, inputSchema: {json}}}`; an empty description is left out (Bedrock's minimum length is 1) |
/// | MCP | `{name, title?, description, inputSchema, annotations?}` |
///
/// A root `description` equal to the tool's description is left out of the schema: it is
/// the same doc comment, and would be sent twice.
///
/// ```
/// use serde_json::json;
/// use xcsh_core::dialect::{Dialect, ToolMeta, tool_definition};
///
/// let schema = json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false});
/// let schema = schema.as_object().unwrap();
/// assert_eq!(
///     tool_definition(Dialect::OpenAiChat, "list", &ToolMeta::new("Lists files."), schema),
///     json!({"type": "function", "function": {
///         "name": "list", "description": "Lists files.", "parameters": schema, "strict": true
///     }})
/// );
/// ```
pub fn tool_definition(
    dialect: Dialect,
    name: &str,
    meta: &ToolMeta,
    lowered: &JsonObject,
) -> Value {
    let mut schema = lowered.clone();
    // The parameter type's doc comment is usually the tool's description too (the macro
    // takes it from there): sending it twice costs tokens on every request.
    if schema.get("description").and_then(Value::as_str) == Some(meta.description.as_str()) {
        schema.remove("description");
    }
    let schema = Value::Object(schema);
    let description = meta.description.as_str();
    match dialect {
        Dialect::Anthropic => json!({
            "name": name,
            "description": description,
            "input_schema": schema,
        }),
        Dialect::OpenAiChat => json!({
            "type": "function",
            "function": {
                "name": name,
                "description": description,
                "parameters": schema,
                "strict": true,
            },
        }),
        Dialect::OpenAiResponses => json!({
            "type": "function",
            "name": name,
            "description": description,
            "parameters": schema,
            "strict": true,
        }),
        Dialect::Gemini => {
            let mut decl = Map::new();
            decl.insert("name".into(), json!(name));
            decl.insert("description".into(), json!(description));
            let has_properties =
                matches!(lowered.get("properties"), Some(Value::Object(p)) if !p.is_empty());
            if has_properties {
                decl.insert("parameters".into(), schema);
            }
            Value::Object(decl)
        }
        Dialect::Bedrock => {
            let mut spec = Map::new();
            spec.insert("name".into(), json!(name));
            if !description.is_empty() {
                spec.insert("description".into(), json!(description));
            }
            spec.insert("inputSchema".into(), json!({ "json": schema }));
            json!({ "toolSpec": spec })
        }
        Dialect::Mcp => {
            let mut tool = Map::new();
            tool.insert("name".into(), json!(name));
            if let Some(title) = &meta.title {
                tool.insert("title".into(), json!(title));
            }
            tool.insert("description".into(), json!(description));
            tool.insert("inputSchema".into(), schema);
            if let Some(annotations) = &meta.annotations {
                tool.insert("annotations".into(), annotations.clone());
            }
            Value::Object(tool)
        }
    }
}

/// Wraps Gemini function declarations (from [`tool_definition`] with [`Dialect::Gemini`])
/// into the `Tool` object of a `generateContent` request's `tools` list.
///
/// ```
/// use serde_json::json;
/// let decl = json!({"name": "list", "description": "Lists files."});
/// assert_eq!(
///     xcsh_core::dialect::gemini_tools([decl.clone()]),
///     json!({"functionDeclarations": [decl]})
/// );
/// ```
pub fn gemini_tools(declarations: impl IntoIterator<Item = Value>) -> Value {
    json!({ "functionDeclarations": declarations.into_iter().collect::<Vec<_>>() })
}
