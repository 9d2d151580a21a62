//! Checks a finished tool definition against each provider's published rules.
//!
//! These validators are written from the providers' documentation, independently of
//! [`lower_schema`](super::lower_schema), so that a test can hold the lowering to the rules
//! rather than to itself. Each check cites where its rule comes from:
//!
//! - **Anthropic** (<https://docs.anthropic.com/en/api/messages>, `tools[]`): `name` matches
//!   `^[a-zA-Z0-9_-]{1,64}$`; `input_schema` is required and is a JSON Schema object with
//!   `type: "object"`; the API answers "input_schema does not support oneOf, allOf, or anyOf
//!   at the top level".
//! - **OpenAI** (<https://platform.openai.com/docs/guides/function-calling>, Chat Completions
//!   `tools[].function` and Responses `tools[]`): `name` is a-z, A-Z, 0-9, `_` and `-`, at
//!   most 64 characters. With `strict: true`, the Structured Outputs subset
//!   (<https://platform.openai.com/docs/guides/structured-outputs#supported-schemas>): the
//!   root is an object and not `anyOf`; every object has `additionalProperties: false` and
//!   lists every property in `required`; only the supported keywords and string formats;
//!   `$ref` only to `#` or `#/$defs/…` and alone; at most 10 levels of object nesting, 5000
//!   properties, 1000 enum values (and 15,000 characters for one enum of more than 250
//!   strings), 120,000 characters of property names, definition names, enum and const values.
//! - **Gemini** (<https://ai.google.dev/api/caching#FunctionDeclaration> and `#Schema`):
//!   `name` starts with a letter or `_`, then letters, digits, `_`, `.`, `:`, `-`, at most 64
//!   characters; `parameters` is a `Schema`: only its fields (no `$ref`, `$defs`,
//!   `additionalProperties`, `const`, `oneOf`, …), `type` one name (no arrays), `enum` only of
//!   strings on a string, formats `float`/`double` (number), `int32`/`int64` (integer),
//!   `enum`/`date-time` (string), an array has `items`, and an object has non-empty
//!   `properties` ("properties: should be non-empty for OBJECT type").
//! - **Bedrock Converse** (<https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_ToolSpecification.html>):
//!   `name` matches `[a-zA-Z0-9_-]+`, 1–64 characters; `description`, when present, is not
//!   empty; `inputSchema.json` is a JSON Schema object; its root is `type: "object"` without
//!   top-level combinators (Claude models behind Bedrock apply Anthropic's rule).
//! - **MCP** (specification 2025-11-25, "Tools"): `name` should be 1–128 characters of
//!   A-Z, a-z, 0-9, `_`, `-`, `.`; `inputSchema` is a JSON Schema object with
//!   `type: "object"`; `$ref`s must resolve within the schema.
//!
//! ```
//! use serde_json::json;
//! use xcsh_core::Dialect;
//! use xcsh_core::dialect::validate;
//!
//! let def = json!({"name": "bad name", "input_schema": {"type": "object", "anyOf": []}});
//! let problems = validate::tool_definition(Dialect::Anthropic, &def);
//! let pointers: Vec<&str> = problems.iter().map(|v| v.pointer.as_str()).collect();
//! assert_eq!(pointers, ["/name", "/input_schema/anyOf"]);
//! ```

use std::fmt;

use serde_json::Value;

use super::Dialect;

mod gemini;
mod name;
mod openai;
mod refs;
mod walk;

/// One rule a definition breaks, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// JSON Pointer (RFC 6901) to the offending value inside the checked document; `""` is
    /// the document itself.
    pub pointer: String,
    /// What is wrong and what the provider requires instead.
    pub message: String,
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        };
        write!(f, "{at}: {}", self.message)
    }
}

/// Checks a whole tool definition, in the shape [`tool_definition`](super::tool_definition)
/// produces for `dialect`, and returns every violation (empty when it is acceptable).
///
/// ```
/// use serde_json::json;
/// use xcsh_core::Dialect;
/// use xcsh_core::dialect::validate;
///
/// let def = json!({"type": "function", "function": {
///     "name": "grep", "description": "Greps.", "strict": true,
///     "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
/// }});
/// let v = validate::tool_definition(Dialect::OpenAiChat, &def);
/// assert_eq!(v.len(), 2);
/// assert_eq!(v[0].pointer, "/function/parameters");
/// assert!(v[0].message.contains("additionalProperties: false"));
/// assert!(v[1].message.contains("`required` must list every property"));
/// ```
pub fn tool_definition(dialect: Dialect, definition: &Value) -> Vec<Violation> {
    let mut out = Checker::default();
    let Value::Object(def) = definition else {
        out.push("", "a tool definition must be a JSON object");
        return out.violations;
    };
    match dialect {
        Dialect::Anthropic => {
            out.name_at(dialect, def.get("name"), "/name");
            out.optional_string(def.get("description"), "/description");
            out.schema_at(dialect, def.get("input_schema"), "/input_schema", false);
        }
        Dialect::OpenAiChat => {
            if def.get("type") != Some(&Value::String("function".into())) {
                out.push("/type", "must be \"function\"");
            }
            match def.get("function") {
                Some(Value::Object(function)) => {
                    out.name_at(dialect, function.get("name"), "/function/name");
                    out.optional_string(function.get("description"), "/function/description");
                    let strict = out.strict_flag(function.get("strict"), "/function/strict");
                    out.openai_parameters(
                        function.get("parameters"),
                        "/function/parameters",
                        strict,
                    );
                }
                _ => out.push(
                    "/function",
                    "is required: {name, description, parameters, strict}",
                ),
            }
        }
        Dialect::OpenAiResponses => {
            if def.get("type") != Some(&Value::String("function".into())) {
                out.push("/type", "must be \"function\"");
            }
            out.name_at(dialect, def.get("name"), "/name");
            out.optional_string(def.get("description"), "/description");
            let strict = out.strict_flag(def.get("strict"), "/strict");
            out.openai_parameters(def.get("parameters"), "/parameters", strict);
        }
        Dialect::Gemini => {
            out.name_at(dialect, def.get("name"), "/name");
            out.optional_string(def.get("description"), "/description");
            if let Some(parameters) = def.get("parameters") {
                out.schema_at(dialect, Some(parameters), "/parameters", false);
            }
        }
        Dialect::Bedrock => match def.get("toolSpec") {
            Some(Value::Object(spec)) => {
                out.name_at(dialect, spec.get("name"), "/toolSpec/name");
                match spec.get("description") {
                    None => {}
                    Some(Value::String(d)) if !d.is_empty() => {}
                    Some(Value::String(_)) => out.push(
                        "/toolSpec/description",
                        "must not be empty (minimum length 1); leave it out instead",
                    ),
                    Some(_) => out.push("/toolSpec/description", "must be a string"),
                }
                match spec.get("inputSchema") {
                    Some(Value::Object(input)) => {
                        out.schema_at(
                            dialect,
                            input.get("json"),
                            "/toolSpec/inputSchema/json",
                            false,
                        );
                    }
                    _ => out.push(
                        "/toolSpec/inputSchema",
                        "is required: {\"json\": <JSON Schema>}",
                    ),
                }
            }
            _ => out.push("/toolSpec", "is required: {name, description, inputSchema}"),
        },
        Dialect::Mcp => {
            out.name_at(dialect, def.get("name"), "/name");
            out.optional_string(def.get("title"), "/title");
            out.optional_string(def.get("description"), "/description");
            if let Some(a) = def.get("annotations")
                && !a.is_object()
            {
                out.push("/annotations", "must be an object");
            }
            out.schema_at(dialect, def.get("inputSchema"), "/inputSchema", false);
        }
    }
    out.violations
}

/// Checks a tool name against `dialect`'s rule; violations point at `""` (the name).
///
/// ```
/// use xcsh_core::Dialect;
/// use xcsh_core::dialect::validate;
///
/// assert!(validate::tool_name(Dialect::Gemini, "fs.read").is_empty());
/// assert_eq!(validate::tool_name(Dialect::Anthropic, "fs.read").len(), 1);
/// assert!(validate::tool_name(Dialect::Mcp, &"x".repeat(100)).is_empty());
/// assert_eq!(validate::tool_name(Dialect::OpenAiChat, &"x".repeat(100)).len(), 1);
/// ```
pub fn tool_name(dialect: Dialect, name: &str) -> Vec<Violation> {
    let mut out = Checker::default();
    out.name(dialect, name, "");
    out.violations
}

/// Checks a parameter schema (already lowered) against `dialect`'s rules: for OpenAI, those
/// of strict mode. Pointers are relative to the schema.
///
/// ```
/// use serde_json::json;
/// use xcsh_core::Dialect;
/// use xcsh_core::dialect::validate;
///
/// let schema = json!({"type": "object", "properties": {
///     "n": {"type": ["integer", "null"], "format": "uint8"}
/// }});
/// let v = validate::schema(Dialect::Gemini, &schema);
/// let pointers: Vec<&str> = v.iter().map(|v| v.pointer.as_str()).collect();
/// assert_eq!(pointers, ["/properties/n/type"]);
/// ```
pub fn schema(dialect: Dialect, schema: &Value) -> Vec<Violation> {
    let mut out = Checker::default();
    out.schema_at(dialect, Some(schema), "", dialect.is_openai_strict());
    out.violations
}

/// Collects the violations of one definition. Its rules are in one `impl` per file: tool
/// names (`name`), `$ref`s (`refs`), OpenAI strict mode (`openai`), Gemini (`gemini`).
#[derive(Default)]
struct Checker {
    violations: Vec<Violation>,
    // OpenAI strict-mode totals over one schema.
    properties: usize,
    enum_values: usize,
    string_budget: usize,
    deepest: usize,
}

impl Checker {
    fn push(&mut self, pointer: &str, message: impl Into<String>) {
        self.violations.push(Violation {
            pointer: pointer.to_owned(),
            message: message.into(),
        });
    }

    fn optional_string(&mut self, value: Option<&Value>, pointer: &str) {
        if let Some(v) = value
            && !v.is_string()
        {
            self.push(pointer, "must be a string");
        }
    }

    /// Root rules shared by every dialect, then the dialect's own walk.
    fn schema_at(&mut self, dialect: Dialect, value: Option<&Value>, pointer: &str, strict: bool) {
        let Some(value) = value else {
            self.push(pointer, "the parameter schema is required");
            return;
        };
        let Value::Object(root) = value else {
            self.push(pointer, "the parameter schema must be a JSON object");
            return;
        };
        match root.get("type") {
            Some(Value::String(t)) if t.eq_ignore_ascii_case("object") => {}
            _ => self.push(
                &format!("{pointer}/type"),
                "the parameter schema's root must have `type: \"object\"` (tool arguments are one JSON object)",
            ),
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            if root.contains_key(key) {
                self.push(
                    &format!("{pointer}/{key}"),
                    format!("`{key}` at the root of the parameter schema is refused (Anthropic: \"input_schema does not support oneOf, allOf, or anyOf at the top level\"; OpenAI: the root must not be anyOf); put the union in a property"),
                );
            }
        }
        match dialect {
            Dialect::Gemini => self.gemini(value, pointer, true),
            Dialect::OpenAiChat | Dialect::OpenAiResponses if strict => {
                self.openai(value, value, pointer, 0, true);
                self.openai_totals(pointer);
            }
            _ => self.refs(value, value, pointer),
        }
    }
}
